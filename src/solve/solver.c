/* Solver objects: argument checks, dispatch to backends, the generic solve VJP. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/kernels.h"
#include "solve/backend.h"

void sla_solver_options_init(sla_solver_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->method = SLA_METHOD_AUTO;
    opt->precond = SLA_PRECOND_AUTO;
    opt->ordering = SLA_ORDERING_AUTO;
    opt->rtol = SLA_TOL_DEFAULT;     /* no tolerance given: see sla_solver_options (solver.h) */
    opt->atol = SLA_TOL_DEFAULT;
    opt->maxiter = SLA_MAXITER_DEFAULT;   /* resolved to 10·n + 100 at create */
    opt->restart = 50;
    opt->monitor_every = 1;
}

/* SLA_CHECK_ARG on behalf of the public function `func` (a variable in scope): checks done in
 * helpers still name the function the caller called */
#define ARG_CHECK(cond, ...) \
    do { if (!(cond)) return sla_error_set(SLA_EINVAL, func, __VA_ARGS__); } while (0)

static sla_status check_options(const char *func, const sla_solver_options *o)
{
    ARG_CHECK((unsigned)o->method < SLA_METHOD_COUNT, "options.method = %d is invalid", (int)o->method);
    ARG_CHECK((unsigned)o->precond < SLA_PRECOND_COUNT, "options.precond = %d is invalid", (int)o->precond);
    ARG_CHECK((unsigned)o->ordering < SLA_ORDERING_COUNT, "options.ordering = %d is invalid", (int)o->ordering);
    ARG_CHECK((o->rtol >= 0 || o->rtol == SLA_TOL_DEFAULT) &&
              (o->atol >= 0 || o->atol == SLA_TOL_DEFAULT) && isfinite(o->rtol) && isfinite(o->atol),
              "options.rtol = %g and options.atol = %g must be finite and ≥ 0 (or "
              "SLA_TOL_DEFAULT)", o->rtol, o->atol);
    ARG_CHECK(o->maxiter >= 1 || o->maxiter == SLA_MAXITER_DEFAULT,
              "options.maxiter = %lld must be ≥ 1 (or SLA_MAXITER_DEFAULT = -1)", (long long)o->maxiter);
    ARG_CHECK(o->monitor_every >= 1, "options.monitor_every = %lld must be ≥ 1",
              (long long)o->monitor_every);
    ARG_CHECK(!o->backend || *o->backend, "options.backend is \"\": NULL or \"auto\" for any "
              "backend, else a name that sla_backend_get() lists");
    ARG_CHECK(o->restart >= 1, "options.restart = %lld < 1", (long long)o->restart);
    ARG_CHECK(o->damp >= 0 && isfinite(o->damp), "options.damp = %g must be finite and ≥ 0",
              o->damp);
    ARG_CHECK(o->damp == 0 || o->method == SLA_METHOD_LSQR || o->method == SLA_METHOD_AUTO,
              "options.damp = %g is for method lsqr only (method %s)", o->damp,
              sla_method_name(o->method));
    ARG_CHECK(o->precond != SLA_PRECOND_USER || o->user_precond,
                  "options.precond = user but options.user_precond is NULL");
    return SLA_OK;
}

static sla_status solver_alloc(const char *func, int64_t m, int64_t n, sla_dtype dtype,
                               int64_t batch, const sla_solver_options *opt, sla_solver **out)
{
    sla_solver *s = sla_calloc(1, sizeof *s, "solver");
    if (!s) return sla_error_attribute(SLA_ENOMEM, func);
    if (opt) s->opt = *opt; else sla_solver_options_init(&s->opt);
    sla_status st = check_options(func, &s->opt);
    if (st != SLA_OK) { sla_free(s); return st; }
    if (s->opt.maxiter == SLA_MAXITER_DEFAULT) s->opt.maxiter = 10 * (m > n ? m : n) + 100;
    /* no tolerance given: the classic defaults, and method auto's accuracy target (auto.c) */
    s->default_tol = s->opt.rtol == SLA_TOL_DEFAULT && s->opt.atol == SLA_TOL_DEFAULT;
    if (s->opt.rtol == SLA_TOL_DEFAULT) s->opt.rtol = 1e-10;
    if (s->opt.atol == SLA_TOL_DEFAULT) s->opt.atol = 0;
    s->m = m;
    s->n = n;
    s->dtype = dtype;
    s->batch = batch;
    s->rcond = NAN;
    *out = s;
    return SLA_OK;
}

sla_status sla_solver_create_with(sla_solver *s, sla_method method)
{
    const sla_backend *b = sla_backend_find(method, s->dtype, s->opt.backend);
    if (!b) return SLA_EUNSUPPORTED;
    s->opt.method = method;
    s->backend = b;
    s->description[0] = '\0';
    sla_status st = b->create(s);
    if (st < 0) {
        if (b->destroy) b->destroy(s);
        s->impl = NULL;
        s->backend = NULL;
    }
    return st;
}

sla_status sla_solver_create(const sla_matrix *A, const sla_solver_options *opt, sla_solver **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, 1));
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    sla_method method = opt ? opt->method : SLA_METHOD_AUTO;
    if (m != n && method != SLA_METHOD_AUTO && method != SLA_METHOD_LSQR)
        return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld; method %s needs a square matrix (least "
                        "squares: method lsqr or auto)", (long long)m, (long long)n,
                        sla_method_name(method));
    sla_solver *s = NULL;
    SLA_TRY(solver_alloc(__func__, m, n, A->dtype, A->batch, opt, &s));
    s->pattern = sla_pattern_retain((sla_pattern *)A->pattern);
    s->A = *A;
    sla_status st = s->opt.method == SLA_METHOD_AUTO ? sla_auto_create(s)
                                                     : sla_solver_create_with(s, s->opt.method);
    if (st < 0) { sla_solver_free(&s); return sla_error_attribute(st, __func__); }
    *out = s;
    return SLA_OK;
}

sla_status sla_solver_create_operator(int64_t n, sla_dtype dtype, int64_t batch, sla_apply_fn apply,
                                      void *apply_ctx, const sla_solver_options *opt,
                                      sla_solver **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(n >= 0, "n = %lld < 0", (long long)n);
    SLA_CHECK_ARG(batch >= 1, "batch = %lld < 1", (long long)batch);
    SLA_CHECK_ARG(apply, "apply is NULL");
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64 or float32", (int)dtype);
    sla_method m = opt ? opt->method : SLA_METHOD_AUTO;
    if (m == SLA_METHOD_AUTO)
        return SLA_FAIL(SLA_EINVAL, "a matrix-free operator needs an explicit iterative method "
                        "(cg, bicgstab, gmres, minres, lsqr)");
    if (!sla_method_is_iterative(m))
        return SLA_FAIL(SLA_EINVAL, "method %s needs the matrix; a matrix-free operator supports "
                        "cg, bicgstab, gmres, minres, lsqr", sla_method_name(m));
    sla_precond pc = opt->precond;
    if (pc != SLA_PRECOND_AUTO && pc != SLA_PRECOND_NONE && pc != SLA_PRECOND_USER)
        return SLA_FAIL(SLA_EINVAL, "preconditioner %s needs the matrix; a matrix-free operator "
                        "supports none and user", sla_precond_name(pc));
    sla_solver *s = NULL;
    SLA_TRY(solver_alloc(__func__, n, n, dtype, batch, opt, &s));
    if (s->opt.precond == SLA_PRECOND_AUTO) s->opt.precond = SLA_PRECOND_NONE;
    s->apply = apply;
    s->apply_ctx = apply_ctx;
    sla_status st = sla_solver_create_with(s, m);
    if (st < 0) { sla_solver_free(&s); return sla_error_attribute(st, __func__); }
    *out = s;
    return SLA_OK;
}

sla_status sla_solver_refactor(sla_solver *s, const void *values)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(s->pattern, "a matrix-free solver has no values to refactor");
    int64_t nnz = sla_pattern_nnz(s->pattern), bad;
    SLA_CHECK_ARG(values || nnz == 0, "values is NULL (expected [%lld][%lld] values)",
                  (long long)s->batch, (long long)nnz);
    if (!sla_all_finite(s->dtype, values, s->batch * nnz, &bad)) {
        int64_t q = bad % nnz;
        const int64_t *ri = sla_pattern_rowind(s->pattern);
        return SLA_FAIL(SLA_ENONFINITE, "values: value at batch %lld, slot %lld (row %lld, col %d) "
                        "is not finite",
                        (long long)(bad / nnz), (long long)q, (long long)(ri ? ri[q] : -1),
                        sla_pattern_colind(s->pattern)[q]);
    }
    const void *old = s->A.values;
    s->A.values = values;
    sla_status st = s->is_auto ? sla_auto_refactor(s) : s->backend->refactor(s);
    if (st < 0) s->A.values = old;
    return sla_error_attribute(st, __func__);
}

/* info as a failed call leaves it: converged = 0, reason error, residuals NaN unless measured;
 * the rest is what the backend had filled in (or the defaults of info_init) */
static void info_failed(sla_solve_info *info)
{
    if (!info) return;
    info->converged = 0;
    info->reason = SLA_REASON_ERROR;
    if (!(info->residual_norm >= 0)) info->residual_norm = NAN;
    if (!(info->relative_residual >= 0)) info->relative_residual = NAN;
}

static void info_init(const sla_solver *s, sla_solve_info *info)
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
static void info_enter(const sla_solver *s, sla_solve_info *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    if (s) info->method = s->opt.method;
    info->residual_norm = NAN;
    info->relative_residual = NAN;
    info->rcond = NAN;
    info->normal_residual = NAN;
    info_failed(info);
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

/* bytes of the solver's matrix values (0 for a matrix-free operator) */
static size_t values_bytes(const sla_solver *s)
{
    if (!s->pattern || !s->A.values) return 0;
    return (size_t)(s->batch * sla_pattern_nnz(s->pattern)) * sla_dtype_size(s->dtype);
}

/* SLA_ENONFINITE naming name[b][i][j] of a [batch][rows][nrhs] block, unless all entries are
 * finite */
sla_status sla_solver_block_finite(const char *func, const sla_solver *s, const char *name,
                                     const void *x, int64_t rows, int64_t nrhs, int64_t total)
{
    int64_t bad;
    if (sla_all_finite(s->dtype, x, total, &bad)) return SLA_OK;
    return sla_error_set(SLA_ENONFINITE, func, "%s[%lld][%lld][%lld] is not finite", name,
                         (long long)(bad / (rows * nrhs)), (long long)(bad / nrhs % rows),
                         (long long)(bad % nrhs));
}

/* entry i of x as double */
static double get(sla_dtype dtype, const void *x, int64_t i)
{
    return dtype == SLA_FLOAT64 ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

/* ‖column j‖₂ of batch element b of a [batch][n][k] block for every j into norms[k]: one
 * sweep over the rows (contiguous) summing squares; a column whose sum overflowed or lost its
 * smallest entries to underflow is summed again scaled by its largest entry. */
static void column_norms(sla_dtype dtype, const void *x, int64_t n, int64_t k, int64_t b,
                         double *norms, double *maxes)
{
    for (int64_t j = 0; j < k; j++) norms[j] = maxes[j] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) {
            double t = get(dtype, x, (b * n + i) * k + j);
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
        for (int64_t i = 0; i < n; i++) {
            double t = get(dtype, x, (b * n + i) * k + j) / m;
            ss += t * t;
        }
        norms[j] = m * sqrt(ss);
    }
}

/* info->residual_norm = max ‖B − op(A) X‖₂ and relative_residual = max of that over ‖B‖₂, over
 * the batch and the columns: one SpMV with nrhs columns. For backends (the direct ones) that do
 * not measure their residual; NaN is left if it cannot be computed (no memory). */
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
                            int64_t total, sla_solve_info *info, int want_residual)
{
    info_init(s, info);
    sla_status st = s->backend->solve(s, op, nrhs, B, X, info);
    if (st < 0) return st;
    /* auto with no tolerance: the backward-error target decides, before any fallback */
    if (s->is_auto && s->default_tol) SLA_TRY(sla_auto_accuracy(s, op, nrhs, B, X, total, info));
    int fb = sla_auto_fallback(s, info);
    if (fb < 0) return fb;
    if (fb > 0) {
        /* auto switched method: solve again from the caller's guess (or zero) */
        if (!s->opt.initial_guess_nonzero)      /* auto never falls back from lsqr: X is B's size */
            memset(X, 0, (size_t)total * sla_dtype_size(s->dtype));
        info_init(s, info);
        st = s->backend->solve(s, op, nrhs, B, X, info);
        if (st < 0) return st;
        if (s->is_auto && s->default_tol)
            SLA_TRY(sla_auto_accuracy(s, op, nrhs, B, X, total, info));
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
    ARG_CHECK(op == SLA_OP_N || op == SLA_OP_T, "op = %d is not N or T", (int)op);
    ARG_CHECK(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    int64_t total, xtotal, brows = sla_solver_block_rows(s, op, 1);
    SLA_TRY(sla_solver_block_size(func, s, "B", B, brows, nrhs, &total));
    SLA_TRY(sla_solver_block_size(func, s, "X", X, sla_solver_block_rows(s, op, 0), nrhs, &xtotal));
    size_t bytes = (size_t)total * sla_dtype_size(s->dtype);
    size_t xbytes = (size_t)xtotal * sla_dtype_size(s->dtype);
    SLA_TRY(sla_check_overlap(func, "X", X, xbytes, "B", B, bytes));
    SLA_TRY(sla_check_overlap(func, "X", X, xbytes, "the matrix values", s->A.values,
                              values_bytes(s)));
    SLA_TRY(sla_solver_block_finite(func, s, "B", B, brows, nrhs, total));
    if (total == 0) {
        if (xtotal > 0) memset(X, 0, xbytes);   /* op(A) without rows: x = 0 */
        info_init(s, info);
        info->residual_norm = info->relative_residual = 0;
        return SLA_OK;
    }
    return sla_error_attribute(sla_solver_run(s, op, nrhs, B, X, total, info, want_residual), func);
}

sla_status sla_solver_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                            sla_solve_info *info)
{
    sla_solve_info local;
    int want_residual = info != NULL;
    if (!info) info = &local;
    info_enter(s, info);
    sla_status st = solve_checked(s, op, nrhs, B, X, info, want_residual);
    if (st < 0) info_failed(info);
    return st;
}

/* max |x| over n entries, as double */
double sla_max_abs(sla_dtype dtype, const void *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(get(dtype, x, i)));
    return m;
}

/* y = x · 2^e entrywise (exact unless the result leaves the dtype's range); y may be x */
void sla_ldexp_into(sla_dtype dtype, const void *x, int e, int64_t n, void *y)
{
    if (dtype == SLA_FLOAT64)
        for (int64_t i = 0; i < n; i++) ((double *)y)[i] = ldexp(((const double *)x)[i], e);
    else
        for (int64_t i = 0; i < n; i++)
            ((float *)y)[i] = (float)ldexp((double)((const float *)x)[i], e);
}

/* Checks of sla_solver_solve_vjp, all before anything is written: sizes, NULLs, finite G (and X
 * when dvalues is wanted), and no output overlapping an input or the other output. */
static sla_status vjp_check(const char *func, sla_solver *s, sla_op op, int64_t nrhs,
                            const void *X, const void *G, void *dB, void *dvalues, int64_t *total)
{
    ARG_CHECK(s && s->backend, "solver is NULL");
    ARG_CHECK(op == SLA_OP_N || op == SLA_OP_T, "op = %d is not N or T", (int)op);
    ARG_CHECK(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    ARG_CHECK(!dvalues || s->pattern, "dvalues requested from a matrix-free solver");
    if (s->m != s->n)
        return sla_error_set(SLA_EUNSUPPORTED, func, "A is %lld × %lld: the backward of a "
                             "least-squares solve needs B (the residual); use "
                             "sla_solver_lstsq_vjp", (long long)s->m, (long long)s->n);
    if (s->opt.damp != 0)
        return sla_error_set(SLA_EUNSUPPORTED, func, "options.damp = %g: x is not A⁻¹b; use "
                             "sla_solver_lstsq_vjp (damp = 0)", s->opt.damp);
    SLA_TRY(sla_solver_block_size(func, s, "G", G, s->n, nrhs, total));
    if (dvalues) SLA_TRY(sla_solver_block_size(func, s, "X (needed for dvalues)", X, s->n, nrhs, total));
    size_t es = sla_dtype_size(s->dtype), bytes = (size_t)*total * es;
    size_t vbytes = s->pattern ? (size_t)(s->batch * sla_pattern_nnz(s->pattern)) * es : 0;
    const sla_buf out[] = {{"dvalues", dvalues, vbytes}, {"dB", dB, bytes}};
    const sla_buf in[] = {{"X", X, bytes}, {"G", G, bytes},
                          {"the matrix values", s->A.values, values_bytes(s)}};
    SLA_TRY(sla_check_aliasing(func, out, 2, in, 3));
    SLA_TRY(sla_solver_block_finite(func, s, "G", G, s->n, nrhs, *total));
    if (dvalues) SLA_TRY(sla_solver_block_finite(func, s, "X", X, s->n, nrhs, *total));
    return SLA_OK;
}

/* λ = op(A)⁻ᵀ G into lam (total entries), solved on G·2^−e with 2^e ≥ ‖G‖∞ > 2^(e−1): the
 * scaled right-hand side is exact and of unit size, so that tiny cotangents (float32, or
 * subnormal ones whose reciprocal norm overflows) neither underflow inside the solver nor
 * make it overflow; atol is scaled alike so the stopping rule is unchanged. lam is scaled back. */
static sla_status adjoint_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *G,
                                int64_t total, void *lam, sla_solve_info *info, int want_residual)
{
    double gmax = sla_max_abs(s->dtype, G, total);
    if (gmax == 0) {
        info_init(s, info);
        info->residual_norm = info->relative_residual = 0;
        memset(lam, 0, (size_t)total * sla_dtype_size(s->dtype));
        return SLA_OK;
    }
    int e;
    frexp(gmax, &e);
    void *rhs = sla_malloc((size_t)total, sla_dtype_size(s->dtype), "scaled cotangent");
    if (!rhs) return SLA_ENOMEM;
    sla_ldexp_into(s->dtype, G, -e, total, rhs);
    double atol = s->opt.atol;
    int guess = s->opt.initial_guess_nonzero;
    s->opt.atol = ldexp(atol, -e);
    s->opt.initial_guess_nonzero = 0;
    sla_status st = sla_solver_run(s, op == SLA_OP_N ? SLA_OP_T : SLA_OP_N, nrhs, rhs, lam, total, info,
                              want_residual);
    s->opt.atol = atol;
    s->opt.initial_guess_nonzero = guess;
    sla_free(rhs);
    if (st >= 0) {
        sla_ldexp_into(s->dtype, lam, e, total, lam);
        info->residual_norm = ldexp(info->residual_norm, e);
    }
    return st;
}

static sla_status vjp_checked(sla_solver *s, sla_op op, int64_t nrhs, const void *X,
                              const void *G, void *dB, void *dvalues, sla_solve_info *info,
                              int want_residual)
{
    const char *func = "sla_solver_solve_vjp";
    int64_t total = 0;
    SLA_TRY(vjp_check(func, s, op, nrhs, X, G, dB, dvalues, &total));
    size_t es = sla_dtype_size(s->dtype);
    /* λ goes to a work array, so that dB and dvalues are written only once the solve succeeded */
    void *lam = sla_malloc((size_t)total, es, "adjoint solution");
    if (!lam) return sla_error_attribute(SLA_ENOMEM, func);
    sla_status st = total > 0 ? adjoint_solve(s, op, nrhs, G, total, lam, info, want_residual)
                              : SLA_OK;
    if (total == 0) {
        info_init(s, info);
        info->residual_norm = info->relative_residual = 0;
    }
    if (st >= 0 && dvalues) {
        /* op = N: ∂a_rc = −λ_r x_c;  op = T (Aᵀx = b): ∂a_rc = −x_r λ_c */
        const void *u = op == SLA_OP_N ? lam : X, *v = op == SLA_OP_N ? X : lam;
        sla_pattern_outer_run(s->pattern, s->dtype, s->batch, -1.0, u, 1, v, 1, nrhs, 1, dvalues);
    }
    if (st >= 0 && dB) memcpy(dB, lam, (size_t)total * es);
    sla_free(lam);
    return sla_error_attribute(st, func);
}

sla_status sla_solver_solve_vjp(sla_solver *s, sla_op op, int64_t nrhs, const void *X,
                                const void *G, void *dB, void *dvalues, sla_solve_info *info)
{
    sla_solve_info local;
    int want_residual = info != NULL;
    if (!info) info = &local;
    info_enter(s, info);
    sla_status st = vjp_checked(s, op, nrhs, X, G, dB, dvalues, info, want_residual);
    if (st < 0) info_failed(info);
    return st;
}

sla_status sla_solver_lstsq_vjp(sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                                const void *X, const void *G, void *dB, void *dvalues,
                                sla_solve_info *info)
{
    sla_solve_info local;
    int want_residual = info != NULL;
    if (!info) info = &local;
    info_enter(s, info);
    sla_status st = sla_lstsq_vjp_checked(s, op, nrhs, B, X, G, dB, dvalues, info, want_residual);
    if (st < 0) info_failed(info);
    return st;
}

sla_status sla_solver_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(sign && logabsdet, "sign or logabsdet is NULL");
    if (!s->backend->logdet)
        return SLA_FAIL(SLA_EUNSUPPORTED, "method %s (%s) does not give determinants; use a "
                        "direct method (cholesky, ldlt, lu, klu)", sla_method_name(s->opt.method),
                        s->backend->info.name);
    return sla_error_attribute(s->backend->logdet(s, sign, logabsdet), __func__);
}

sla_status sla_solver_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(dvalues || sla_pattern_nnz(s->pattern) == 0, "dvalues is NULL");
    size_t vbytes = values_bytes(s);
    SLA_TRY(sla_check_overlap(__func__, "dvalues", dvalues, vbytes, "the matrix values",
                              s->A.values, vbytes));
    SLA_TRY(sla_check_overlap(__func__, "dvalues", dvalues, vbytes, "g", g,
                              (size_t)s->batch * sizeof(double)));
    if (!s->backend->logdet_grad)
        return SLA_FAIL(SLA_EUNSUPPORTED, "method %s (%s) does not give log-determinant "
                        "gradients; use a direct method", sla_method_name(s->opt.method),
                        s->backend->info.name);
    double *ones = NULL;
    if (!g) {
        ones = sla_malloc((size_t)s->batch, sizeof(double), "ones");
        if (!ones) return SLA_ENOMEM;
        for (int64_t b = 0; b < s->batch; b++) ones[b] = 1;
        g = ones;
    }
    sla_status st = s->backend->logdet_grad(s, g, dvalues);
    sla_free(ones);
    return sla_error_attribute(st, __func__);
}

const char *sla_solver_describe(const sla_solver *s)
{
    return s ? s->description : "";
}

sla_method sla_solver_method(const sla_solver *s)
{
    return s ? s->opt.method : SLA_METHOD_AUTO;
}

void sla_solver_free(sla_solver **ps)
{
    if (!ps || !*ps) return;
    sla_solver *s = *ps;
    *ps = NULL;
    if (s->backend && s->backend->destroy) s->backend->destroy(s);
    sla_auto_free(s);
    sla_pattern_free(&s->pattern);
    sla_free(s);
}
