/* The numerical-singularity rule of libsla's direct backends (src/direct/condest.c, solver.h:
 * rcond < SLA_RCOND_SINGULAR) for a distributed factorization:
 *
 *   rcond = 1 / (‖RA‖₁ · est ‖(RA)⁻¹‖₁),   R = diag(1 / max_j |a_ij|),
 *
 * est by Higham's 1-norm estimator (N. J. Higham, ACM TOMS 14(4), 1988, Algorithm 4.1; LAPACK's
 * dlacn2), the same steps as the serial estimator with its closing alternating-sign test vector,
 * on distributed vectors: ‖y‖₁ by the deterministic sum over the ranks, the largest |y_j| by an
 * all-gather of each rank's candidate (ties: the smallest global index), e_j set by its owner.
 * Start and test vectors are defined on the global indices, so the estimate does not depend on
 * the partition except through the rounding of the solves. ‖RA‖₁ is the largest column sum of
 * |RA|: one transposed distributed SpMV of the ones vector. */
#include <math.h>
#include <string.h>

#include "mpi/lu.h"

typedef struct {
    MPI_Comm comm;
    const sla_dist_layout *L;
    int64_t n, N;
    const int64_t *global;
    const double *w;            /* [n] row scale R of the owned rows */
    dist_lu_apply_fn fn;
    void *ctx;
    int64_t b;
} est_ctx;

static sla_status norm1(const est_ctx *e, const double *y, double *out)
{
    double t = 0;
    for (int64_t i = 0; i < e->n; i++) t += fabs(y[i]);
    return sla_dist_allsum(e->comm, 1, &t, out);
}

/* the global index j of the largest |y_j| (NaN counts as the largest), its |y_j| in *val */
static sla_status argmax_abs(const est_ctx *e, const double *y, int64_t *j, double *val)
{
    struct { double v; int64_t g; } mine = {-1, INT64_MAX}, *all = NULL;
    for (int64_t i = 0; i < e->n; i++) {
        double a = isnan(y[i]) ? INFINITY : fabs(y[i]);
        if (a > mine.v) { mine.v = a; mine.g = e->global[i]; }
    }
    int size;
    MPI_Comm_size(e->comm, &size);
    all = sla_malloc((size_t)size, sizeof *all, "argmax candidates");
    sla_status st = dist_agree(e->comm, "sla_dist_lu", all ? SLA_OK : SLA_ENOMEM);
    if (st < 0) { sla_free(all); return st; }
    int rc = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                           e->comm);
    if (rc != MPI_SUCCESS) { sla_free(all); return dist_mpi_error("sla_dist_lu", "MPI_Allgather", rc); }
    *j = 0;
    *val = -1;
    for (int r = 0; r < size; r++)
        if (all[r].v > *val || (all[r].v == *val && all[r].g < *j)) { *val = all[r].v; *j = all[r].g; }
    sla_free(all);
    return SLA_OK;
}

/* |y_g| of global index g, from its owner */
static sla_status abs_at(const est_ctx *e, const double *y, int64_t g, double *out)
{
    int64_t i = sla_dist_layout_local_index(e->L, g);
    double t = i >= 0 ? fabs(y[i]) : 0;
    return sla_dist_allsum(e->comm, 1, &t, out);
}

static void unit(const est_ctx *e, double *y, int64_t g)
{
    memset(y, 0, (size_t)e->n * sizeof *y);
    int64_t i = sla_dist_layout_local_index(e->L, g);
    if (i >= 0) y[i] = 1;
}

/* y = (RA)⁻¹ y = A⁻¹ (R⁻¹ y), or (RA)⁻ᵀ y = R⁻¹ (A⁻ᵀ y) */
static sla_status apply(const est_ctx *e, int trans, double *y)
{
    if (!trans)
        for (int64_t i = 0; i < e->n; i++) y[i] /= e->w[i];
    SLA_TRY(e->fn(e->ctx, e->b, trans ? SLA_OP_T : SLA_OP_N, y));
    if (trans)
        for (int64_t i = 0; i < e->n; i++) y[i] /= e->w[i];
    return SLA_OK;
}

/* ξ = sign(y) into xi; *same = 1 on every rank if it equals the previous sign vector */
static sla_status sign_repeats(const est_ctx *e, const double *y, double *xi, int *same)
{
    double diff = 0, total;
    for (int64_t i = 0; i < e->n; i++) {
        double g = y[i] >= 0 ? 1 : -1;
        diff += g != xi[i];
        xi[i] = g;
    }
    SLA_TRY(sla_dist_allsum(e->comm, 1, &diff, &total));
    *same = total == 0;
    return SLA_OK;
}

/* est ≤ ‖(RA)⁻¹‖₁: the serial estimator's steps (condest.c, without its refactor hint).
 * y, alt, xi [n]. */
static sla_status estimate(const est_ctx *e, double *y, double *alt, double *xi, double *est)
{
    int64_t N = e->N;
    for (int64_t i = 0; i < e->n; i++) {
        int64_t g = e->global[i];
        y[i] = 1.0 / (double)N;
        alt[i] = (g % 2 ? -1.0 : 1.0) * (1.0 + (double)g / (double)(N > 1 ? N - 1 : 1));
    }
    SLA_TRY(apply(e, 0, y));
    SLA_TRY(norm1(e, y, est));
    if (N == 1 || !isfinite(*est)) return SLA_OK;
    double altn;
    SLA_TRY(apply(e, 0, alt));
    SLA_TRY(norm1(e, alt, &altn));
    altn = 2 * altn / (3.0 * (double)N);
    int same;
    for (int64_t i = 0; i < e->n; i++) xi[i] = 0;
    SLA_TRY(sign_repeats(e, y, xi, &same));
    memcpy(y, xi, (size_t)e->n * sizeof *y);
    SLA_TRY(apply(e, 1, y));
    int64_t j, best = -1;
    double vj;
    SLA_TRY(argmax_abs(e, y, &j, &vj));
    for (int iter = 2; iter <= SLA_CONDEST_ITMAX && j != best; iter++) {
        unit(e, y, j);
        SLA_TRY(apply(e, 0, y));
        double old = *est, now;
        SLA_TRY(norm1(e, y, &now));
        if (!isfinite(now)) { *est = now; return SLA_OK; }
        if (now > old) { *est = now; best = j; }
        SLA_TRY(sign_repeats(e, y, xi, &same));
        if (same || !(now > old * SLA_CONDEST_MIN_GROWTH))
            break;                          /* converged, or too little progress (internal.h) */
        memcpy(y, xi, (size_t)e->n * sizeof *y);
        SLA_TRY(apply(e, 1, y));
        int64_t last = j;
        double vlast;
        SLA_TRY(argmax_abs(e, y, &j, &vj));
        SLA_TRY(abs_at(e, y, last, &vlast));
        if (!isfinite(vj) || isnan(vlast)) {  /* argmax_abs reports NaN as inf */
            *est = NAN;                         /* as a NaN solve of e_j */
            return SLA_OK;
        }
        if (!(vj > vlast * SLA_CONDEST_MIN_GROWTH))
            break;                          /* e_last is a local maximum, to 1 % (internal.h) */
    }
    if (!(altn <= *est)) *est = altn;
    return SLA_OK;
}

/* R = 1 / (row max |a|) into w (0 if some owned row is zero: *zero_row = 1 on every rank) and
 * ‖RA‖₁ = max column sum of |RA|, by one transposed SpMV of ones */
static sla_status scaled_norm1(const sla_dist_pattern *P, sla_dtype dtype, const void *values,
                               double *w, double *anorm, int *zero_row)
{
    const char *func = "sla_dist_lu";
    const sla_pattern *blk[2] = {sla_dist_pattern_diag(P), sla_dist_pattern_offd(P)};
    int64_t n = sla_pattern_nrows(blk[0]), nnz = sla_dist_pattern_nnz(P);
    int64_t nd = sla_pattern_nnz(blk[0]);
    double *abs = sla_malloc((size_t)nnz, sizeof *abs, "|RA|");
    double *ones = sla_malloc((size_t)n, sizeof *ones, "ones");
    double *col = sla_malloc((size_t)n, sizeof *col, "column sums");
    sla_status st = dist_agree(P->comm, func, abs && ones && col ? SLA_OK : SLA_ENOMEM);
    double zero = 0;
    if (st == SLA_OK) {
        for (int64_t i = 0; i < n; i++) w[i] = 0;
        for (int k = 0; k < 2; k++) {
            const int64_t *rp = sla_pattern_rowptr(blk[k]);
            int64_t base = k ? nd : 0;
            for (int64_t i = 0; i < n; i++)
                for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                    double a = dtype == SLA_FLOAT32 ? fabs((double)((const float *)values)[base + s])
                                                    : fabs(((const double *)values)[base + s]);
                    abs[base + s] = a;
                    w[i] = a > w[i] ? a : w[i];
                }
        }
        for (int64_t i = 0; i < n; i++) {
            if (!(w[i] > 0)) zero = 1; else w[i] = 1 / w[i];
            ones[i] = 1;
        }
        for (int k = 0; k < 2; k++) {
            const int64_t *rp = sla_pattern_rowptr(blk[k]);
            int64_t base = k ? nd : 0;
            for (int64_t i = 0; i < n; i++)
                for (int64_t s = rp[i]; s < rp[i + 1]; s++) abs[base + s] *= w[i] > 0 ? w[i] : 0;
        }
        double z;
        st = sla_dist_allsum(P->comm, 1, &zero, &z);
        *zero_row = z > 0;
    }
    if (st == SLA_OK && !*zero_row) {
        sla_dist_matrix M = sla_dist_matrix_view(P, SLA_FLOAT64, 1, abs);
        st = sla_dist_spmv(SLA_OP_T, 1, &M, ones, 0, 1, 0, col);
        double m = 0;
        for (int64_t i = 0; st == SLA_OK && i < n; i++) m = col[i] > m ? col[i] : m;
        int rc = st == SLA_OK ? MPI_Allreduce(&m, anorm, 1, MPI_DOUBLE, MPI_MAX, P->comm) : MPI_SUCCESS;
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Allreduce", rc);
    }
    sla_free(abs);
    sla_free(ones);
    sla_free(col);
    return st;
}

sla_status dist_lu_rcond(const sla_dist_pattern *P, sla_dtype dtype, const void *values,
                         int64_t b, dist_lu_apply_fn fn, void *ctx, double *rcond)
{
    const sla_dist_layout *L = sla_dist_pattern_rows(P);
    int64_t n = sla_dist_layout_local_size(L), N = sla_dist_layout_size(L);
    *rcond = 1;
    if (N == 0) return SLA_OK;
    double *work = sla_malloc((size_t)(4 * n + 1), sizeof *work, "condition estimate");
    SLA_TRY(dist_agree(P->comm, "sla_dist_lu", work ? SLA_OK : SLA_ENOMEM));
    double *w = work, *y = work + n, *alt = work + 2 * n, *xi = work + 3 * n;
    double anorm = 0, est = 0;
    int zero_row = 0;
    sla_status st = scaled_norm1(P, dtype, values, w, &anorm, &zero_row);
    if (st == SLA_OK && (zero_row || !(anorm > 0))) { *rcond = 0; sla_free(work); return SLA_OK; }
    est_ctx e = {.comm = P->comm, .L = L, .n = n, .N = N, .global = sla_dist_layout_global(L),
                 .w = w, .fn = fn, .ctx = ctx, .b = b};
    if (st == SLA_OK) st = estimate(&e, y, alt, xi, &est);
    sla_free(work);
    SLA_TRY(st);
    *rcond = isfinite(est) && est > 0 ? 1 / (anorm * est) : 0;
    if (!(*rcond >= 0)) *rcond = 0;
    return SLA_OK;
}
