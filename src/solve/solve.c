/* The solve: argument checks, the backend's solve with per-solve parameters, method auto's
 * fallback, the true residual for backends that do not measure it; and the block helpers the
 * solve and VJP files share (sizes, finiteness, scaling, norms: through the block space). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/kernels.h"
#include "solve/backend.h"

/* info as a failed call leaves it: converged = 0, reason error, residuals NaN unless measured;
 * the rest is what the backend had filled in (or the defaults of info_init) */
void sla_solver_info_failed(sla_solve_info *info)
{
    if (!info) return;
    info->converged = 0;
    info->reason = SLA_REASON_ERROR;
    if (!(info->residual_norm >= 0)) info->residual_norm = NAN;
    if (!(info->relative_residual >= 0)) info->relative_residual = NAN;
}

void sla_solver_info_init(const sla_solver *s, sla_solve_info *info)
{
    memset(info, 0, sizeof *info);
    info->method = s->opt.method;
    info->precond = sla_method_is_iterative(s->opt.method) ? s->opt.precond : SLA_PRECOND_NONE;
    info->converged = 1;
    info->reason = SLA_REASON_CONVERGED;
    /* −1 = not measured by the backend (which takes maxima over its systems, so a start below
     * every norm): the generic layer then computes it (direct methods) */
    info->residual_norm = -1;
    info->relative_residual = -1;
    info->rcond = s->rcond;
    info->normal_residual = s->opt.method == SLA_METHOD_LSQR ? 0 : NAN;
    snprintf(info->description, sizeof info->description, "%s", s->description);
}

/* The first thing a solve or VJP does with a caller's info: an argument error returns with
 * converged = 0 and reason error, never with a previous call's "converged". */
void sla_solver_info_enter(const sla_solver *s, sla_solve_info *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    if (s) info->method = s->opt.method;
    info->residual_norm = NAN;
    info->relative_residual = NAN;
    info->rcond = NAN;
    info->normal_residual = NAN;
    sla_solver_info_failed(info);
}

/* Rows of B (rhs = 1) or of X (rhs = 0) for op: op(A)'s row or column count */
int64_t sla_solver_block_rows(const sla_solver *s, sla_op op, int rhs)
{
    return (op == SLA_OP_N) == (rhs != 0) ? s->m : s->n;
}

/* Elements of the dense block `name` [batch][rows][nrhs] in *total; SLA_EINVAL naming it when
 * NULL while not empty, or when its elements or bytes overflow int64. */
sla_status sla_solver_block_size(const char *func, const sla_solver *s, const char *name,
                             const void *ptr, int64_t rows, int64_t nrhs, int64_t *total)
{
    SLA_TRY(sla_check_block(func, name, ptr, s->batch, rows, nrhs, total));
    if (*total > INT64_MAX / (int64_t)sla_dtype_size(s->dtype))
        return sla_error_set(SLA_EINVAL, func, "%s: [%lld][%lld][%lld] elements overflow int64 "
                             "bytes", name, (long long)s->batch, (long long)rows, (long long)nrhs);
    return SLA_OK;
}

size_t sla_solver_values_bytes(const sla_solver *s)
{
    if (!s->pattern || !s->A.values) return 0;
    return (size_t)(s->batch * sla_pattern_nnz(s->pattern)) * sla_dtype_size(s->dtype);
}

sla_status sla_solver_block_space(const sla_solver *s, int64_t count, sla_space *V,
                                  sla_host_space *host)
{
    if (s->backend && s->backend->block_space) return s->backend->block_space(s, count, V, host);
    /* a complex block is, for finiteness, amax (of the parts), power-of-two scaling and the
     * 2-norm, the real block of its 2·count parts */
    int parts = sla_dtype_is_complex(s->dtype) ? 2 : 1;
    sla_host_space_init(V, host, parts * count, sla_dtype_real(s->dtype), 1, NULL);
    return SLA_OK;
}

/* SLA_ENONFINITE naming name[b][i][j] of a [batch][rows][nrhs] block, unless all entries are
 * finite */
sla_status sla_solver_block_finite(const char *func, const sla_solver *s, const char *name,
                                   const void *x, int64_t rows, int64_t nrhs, int64_t total)
{
    sla_space V;
    sla_host_space h;
    int64_t bad;
    SLA_TRY(sla_solver_block_space(s, total, &V, &h));
    sla_status st = V.find_nonfinite(&V, x, &bad);
    if (st != SLA_ENONFINITE) return st;
    if (bad >= 0 && sla_dtype_is_complex(s->dtype) && !(s->backend && s->backend->block_space))
        bad /= 2;                                  /* the part's entry (host block space) */
    if (bad < 0) return sla_error_set(SLA_ENONFINITE, func, "%s is not finite on another process", name);
    return sla_error_set(SLA_ENONFINITE, func, "%s[%lld][%lld][%lld] is not finite", name,
                         (long long)(bad / (rows * nrhs)), (long long)(bad / nrhs % rows),
                         (long long)(bad % nrhs));
}

sla_status sla_solver_block_amax(const sla_solver *s, const void *x, int64_t total, double *m)
{
    sla_space V;
    sla_host_space h;
    SLA_TRY(sla_solver_block_space(s, total, &V, &h));
    return V.amax(&V, x, m);
}

sla_status sla_solver_block_scale(const sla_solver *s, int e, const void *x, int64_t total,
                                  void *y)
{
    sla_space V;
    sla_host_space h;
    SLA_TRY(sla_solver_block_space(s, total, &V, &h));
    return V.scale_pow2(&V, e, x, y);
}

sla_status sla_solver_block_zero(const sla_solver *s, void *x, int64_t total)
{
    sla_space V;
    sla_host_space h;
    SLA_TRY(sla_solver_block_space(s, total, &V, &h));
    return V.axpby(&V, 0.0, x, 0.0, x);
}

sla_status sla_solver_block_copy(const sla_solver *s, const void *x, int64_t total, void *y)
{
    sla_space V;
    sla_host_space h;
    SLA_TRY(sla_solver_block_space(s, total, &V, &h));
    return V.axpby(&V, 1.0, x, 0.0, y);
}

sla_status sla_solver_block_alloc(const sla_solver *s, int64_t total, void **x)
{
    sla_space V;
    sla_host_space h;
    *x = NULL;
    SLA_TRY(sla_solver_block_space(s, total, &V, &h));
    return V.vec_create(&V, x);
}

void sla_solver_block_free(const sla_solver *s, int64_t total, void *x)
{
    sla_space V;
    sla_host_space h;
    if (x && sla_solver_block_space(s, total, &V, &h) >= 0) V.vec_free(&V, x);
}

sla_status sla_solver_block_norm(const sla_solver *s, const void *x, int64_t total, double *nrm)
{
    sla_space V;
    sla_host_space h;
    SLA_TRY(sla_solver_block_space(s, total, &V, &h));
    return V.norm(&V, x, nrm);
}

/* part p (0: real, 1: imaginary, 0 only for a real dtype) of entry i of x as double */
static double get(sla_dtype dtype, const void *x, int64_t i, int p)
{
    int parts = sla_dtype_is_complex(dtype) ? 2 : 1;
    return sla_dtype_real(dtype) == SLA_FLOAT64 ? ((const double *)x)[parts * i + p]
                                                : (double)((const float *)x)[parts * i + p];
}

/* ‖column j‖₂ of batch element b of a [batch][n][k] block for every j into norms[k]: one
 * sweep over the rows (contiguous) summing squares; a column whose sum overflowed or lost its
 * smallest entries to underflow is summed again scaled by its largest entry. */
static void column_norms(sla_dtype dtype, const void *x, int64_t n, int64_t k, int64_t b,
                         double *norms, double *maxes)
{
    int parts = sla_dtype_is_complex(dtype) ? 2 : 1;    /* |z|² = re² + im² */
    for (int64_t j = 0; j < k; j++) norms[j] = maxes[j] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++)
            for (int p = 0; p < parts; p++) {
                double t = get(dtype, x, (b * n + i) * k + j, p);
                norms[j] += t * t;
                maxes[j] = fmax(maxes[j], fabs(t));
            }
    for (int64_t j = 0; j < k; j++) {
        double m = maxes[j];
        if (isnan(norms[j]) || !isfinite(m)) { norms[j] = isnan(norms[j]) ? NAN : m; continue; }
        if (m == 0 || (isfinite(norms[j]) && norms[j] >= DBL_MIN / DBL_EPSILON)) {
            norms[j] = sqrt(norms[j]);
            continue;
        }
        double ss = 0;
        for (int64_t i = 0; i < n; i++)
            for (int p = 0; p < parts; p++) {
                double t = get(dtype, x, (b * n + i) * k + j, p) / m;
                ss += t * t;
            }
        norms[j] = m * sqrt(ss);
    }
}

/* info->residual_norm = max ‖B − op(A) X‖₂ and relative_residual = max of that over ‖B‖₂, over
 * the batch and the columns: one SpMV with nrhs columns. For backends (the direct ones) that do
 * not measure their residual; NaN is left if it cannot be computed (no memory). Host memory: a
 * backend whose blocks live elsewhere measures its own (sla_backend.solve). */
static void true_residual(sla_solver *s, sla_op op, int64_t nrhs, const void *B, const void *X,
                          int64_t total, sla_solve_info *info)
{
    int64_t rows = sla_solver_block_rows(s, op, 1);        /* B is [batch][rows][nrhs], total entries */
    info->residual_norm = info->relative_residual = NAN;
    if (!s->pattern) return;
    size_t es = sla_dtype_size(s->dtype);
    void *R = sla_malloc((size_t)total, es, "residual");
    if (!R) return;
    memcpy(R, B, (size_t)total * es);
    sla_matrix A = s->A;
    A.pattern = s->pattern;
    double *work = sla_malloc((size_t)nrhs, 4 * sizeof(double), "residual norms");
    if (work && sla_spmv(op, -1.0, &A, X, 1, nrhs, 1.0, R) == SLA_OK) {
        double rmax = 0, relmax = 0, *rn = work, *bn = work + nrhs, *m = work + 2 * nrhs;
        for (int64_t b = 0; b < s->batch; b++) {
            column_norms(s->dtype, R, rows, nrhs, b, rn, m);
            column_norms(s->dtype, B, rows, nrhs, b, bn, m);
            for (int64_t j = 0; j < nrhs; j++) {
                rmax = isnan(rn[j]) || rn[j] > rmax ? rn[j] : rmax;
                double rel = bn[j] > 0 ? rn[j] / bn[j] : (rn[j] > 0 ? INFINITY : 0);
                relmax = isnan(rel) || rel > relmax ? rel : relmax;
            }
        }
        info->residual_norm = rmax;
        info->relative_residual = relmax;
    }
    sla_free(work);
    sla_free(R);
}

/* The solve proper, arguments already checked (B finite, X and B not overlapping, total > 0
 * entries of B):
 * the backend's solve, the fallback of method auto, and the true residual when the backend did
 * not measure it and the caller asked for an info (internal callers such as eigsh's
 * shift-invert pass NULL and do not pay for it). */
sla_status sla_solver_run(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                          int64_t total, const sla_solve_params *p, sla_solve_info *info,
                          int want_residual)
{
    sla_solver_info_init(s, info);
    sla_status st = s->backend->solve(s, op, nrhs, B, X, p, info);
    if (st < 0) return st;
    /* auto with no tolerance: the backward-error target decides, before any fallback */
    if (s->is_auto && s->default_tol)
        SLA_TRY(sla_auto_accuracy(s, op, nrhs, B, X, total, p, info));
    int fb = sla_auto_fallback(s, info);
    if (fb < 0) return fb;
    if (fb > 0) {
        /* auto switched method: solve again from the caller's guess (or zero) */
        if (!p->x0_nonzero)      /* auto never falls back from lsqr: X is B's size */
            memset(X, 0, (size_t)total * sla_dtype_size(s->dtype));
        sla_solver_info_init(s, info);
        st = s->backend->solve(s, op, nrhs, B, X, p, info);
        if (st < 0) return st;
        if (s->is_auto && s->default_tol)
            SLA_TRY(sla_auto_accuracy(s, op, nrhs, B, X, total, p, info));
    }
    if (info->residual_norm < 0) {
        if (want_residual) true_residual(s, op, nrhs, B, X, total, info);
        else info->residual_norm = info->relative_residual = NAN;
    }
    return info->converged ? SLA_OK : SLA_NOT_CONVERGED;
}

static sla_status solve_checked(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                                sla_solve_info *info, int want_residual)
{
    const char *func = "sla_solver_solve";
    ARG_CHECK(s && s->backend, "solver is NULL");
    ARG_CHECK(op == SLA_OP_N || op == SLA_OP_T || op == SLA_OP_C, "op = %d is not N, T or C",
              (int)op);
    if (op == SLA_OP_C && !sla_dtype_is_complex(s->dtype)) op = SLA_OP_T;   /* Aᴴ = Aᵀ */
    ARG_CHECK(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    int64_t total, xtotal, brows = sla_solver_block_rows(s, op, 1);
    SLA_TRY(sla_solver_block_size(func, s, "B", B, brows, nrhs, &total));
    SLA_TRY(sla_solver_block_size(func, s, "X", X, sla_solver_block_rows(s, op, 0), nrhs, &xtotal));
    size_t bytes = (size_t)total * sla_dtype_size(s->dtype);
    size_t xbytes = (size_t)xtotal * sla_dtype_size(s->dtype);
    SLA_TRY(sla_check_overlap(func, "X", X, xbytes, "B", B, bytes));
    SLA_TRY(sla_check_overlap(func, "X", X, xbytes, "the matrix values", s->A.values,
                              sla_solver_values_bytes(s)));
    SLA_TRY(sla_solver_block_finite(func, s, "B", B, brows, nrhs, total));
    if (total == 0) {
        if (xtotal > 0) SLA_TRY(sla_solver_block_zero(s, X, xtotal));   /* op(A) without rows: x = 0 */
        sla_solver_info_init(s, info);
        info->residual_norm = info->relative_residual = 0;
        return SLA_OK;
    }
    sla_solve_params p = sla_solve_params_of(s);
    return sla_error_attribute(sla_solver_run(s, op, nrhs, B, X, total, &p, info, want_residual),
                               func);
}

sla_status sla_solver_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                            sla_solve_info *info)
{
    sla_solve_info local;
    int want_residual = info != NULL;
    if (!info) info = &local;
    sla_solver_info_enter(s, info);
    sla_status st = solve_checked(s, op, nrhs, B, X, info, want_residual);
    if (st < 0) sla_solver_info_failed(info);
    return st;
}
