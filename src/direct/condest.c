/* The numerical-singularity rule of every direct backend (solver.h, docs/direct.md): the
 * reciprocal condition number of the row-equilibrated matrix RA, estimated from the backend's
 * factors, against SLA_RCOND_SINGULAR.
 *
 *   rcond = 1 / (‖RA‖₁ · est ‖(RA)⁻¹‖₁),   R = diag(1 / max_j |a_ij|),
 *
 * est by Higham's 1-norm estimator (N. J. Higham, "FORTRAN codes for estimating the one-norm of
 * a real or complex matrix, with applications to condition estimation", ACM TOMS 14(4), 1988,
 * Algorithm 4.1: LAPACK's dlacn2, the estimator of dgecon): a few solves with (RA)⁻¹ and
 * (RA)⁻ᵀ on the factors (3 solve calls in the common case, the first with two columns; at most
 * 10). Every vector it tries is a real column of (RA)⁻¹
 * applied to a unit vector, so est ≤ ‖(RA)⁻¹‖₁ and the estimate rcond is never below the true
 * one: a matrix refused as singular is singular to working precision (up to the rounding of
 * the solves). Row equilibration makes the test independent of the scaling of the equations
 * (diag(1, 1e-300) is regular), and is within a factor n of the best row scaling for the ∞-norm
 * condition number (van der Sluis 1969). */
#include <math.h>
#include <string.h>

#include "direct/direct.h"

#define SLA_TEMPLATE "direct/t_condest.h"
#include "core/instantiate.h"

/* Higham's iteration limit (dlacn2's ITMAX) */
#define CONDEST_ITMAX 5

typedef struct {
    const sla_solver *s;
    int64_t b;
    sla_factor_solve_fn fn;
    void *ctx;
    const double *w;      /* [n] row scale R */
} scaled_op;

/* y = (RA)⁻¹ y = A⁻¹ (R⁻¹ y) (trans = 0) or (RA)⁻ᵀ y = R⁻¹ (A⁻ᵀ y) (trans = 1), in place, for
 * the k columns of the column-major n × k block y */
static sla_status apply(const scaled_op *o, int trans, int64_t k, double *y)
{
    int64_t n = o->s->n;
    if (!trans)
        for (int64_t j = 0; j < k; j++)
            for (int64_t i = 0; i < n; i++) y[j * n + i] /= o->w[i];
    SLA_TRY(o->fn(o->ctx, o->b, trans ? SLA_OP_T : SLA_OP_N, k, y));
    if (trans)
        for (int64_t i = 0; i < n; i++) y[i] /= o->w[i];      /* k = 1 */
    return SLA_OK;
}

static double norm1(const double *y, int64_t n)
{
    double t = 0;
    for (int64_t i = 0; i < n; i++) t += fabs(y[i]);
    return t;
}

/* index of max |y_i| (NaN counts as the largest) */
static int64_t argmax_abs(const double *y, int64_t n)
{
    int64_t j = 0;
    for (int64_t i = 0; i < n; i++)
        if (isnan(y[i]) || fabs(y[i]) > fabs(y[j])) { j = i; if (isnan(y[i])) break; }
    return j;
}

/* ξ = sign(y) (sign 0 = +1) into xi; returns 1 if it equals the previous sign vector */
static int sign_repeats(const double *y, double *xi, int64_t n)
{
    int same = 1;
    for (int64_t i = 0; i < n; i++) {
        double g = y[i] >= 0 ? 1 : -1;
        same &= g == xi[i];
        xi[i] = g;
    }
    return same;
}

/* est ≤ ‖(RA)⁻¹‖₁ by Higham's Algorithm 4.1 (dlacn2's steps, real case), with its closing
 * test vector (alternating signs, against the estimator's known worst cases) solved together
 * with the first one: the same estimate in one solve call fewer (3 in the common case: the
 * first with two columns). A hint *j ≥ 0 (the column that gave the estimate of the previous
 * factorization, e.g. before a refactor) is solved in that first call too, as a third start
 * vector: when it still gives the largest column, the iteration confirms it with one transposed
 * solve (2 calls). *j receives the column of the estimate. y [3n], xi [n]. */
static sla_status estimate_inverse_norm(const scaled_op *o, double *y, double *xi, double *est,
                                        int64_t *hint)
{
    int64_t n = o->s->n, j0 = *hint >= 0 && *hint < n ? *hint : -1;
    int64_t k = n == 1 ? 1 : j0 >= 0 ? 3 : 2;
    if (j0 >= 0) memset(y + 2 * n, 0, (size_t)n * sizeof *y);
    for (int64_t i = 0; i < n; i++) {
        y[i] = 1.0 / (double)n;
        y[n + i] = (i % 2 ? -1.0 : 1.0) * (1.0 + (double)i / (double)(n > 1 ? n - 1 : 1));
    }
    if (j0 >= 0) y[2 * n + j0] = 1;
    SLA_TRY(apply(o, 0, k, y));
    *est = norm1(y, n);
    *hint = 0;
    if (n == 1 || !isfinite(*est)) return SLA_OK;
    double alt = 2 * norm1(y + n, n) / (3.0 * (double)n), at_hint = j0 >= 0 ? norm1(y + 2 * n, n) : 0;
    int64_t best = -1;                      /* the column of *est, once one is solved */
    if (j0 >= 0 && !(at_hint < *est)) {     /* the hint leads: iterate from e_j0 */
        *est = at_hint;
        best = j0;
        memcpy(y, y + 2 * n, (size_t)n * sizeof *y);
    }
    for (int64_t i = 0; i < n; i++) xi[i] = 0;
    sign_repeats(y, xi, n);
    memcpy(y, xi, (size_t)n * sizeof *y);
    SLA_TRY(apply(o, 1, 1, y));
    int64_t j = argmax_abs(y, n);
    for (int iter = 2; iter <= CONDEST_ITMAX && j != best; iter++) {
        memset(y, 0, (size_t)n * sizeof *y);
        y[j] = 1;
        SLA_TRY(apply(o, 0, 1, y));
        double old = *est, now = norm1(y, n);
        if (!isfinite(now)) { *est = now; return SLA_OK; }
        if (now > old) { *est = now; best = j; }
        if (sign_repeats(y, xi, n) || now <= old) break;    /* converged, or no progress */
        memcpy(y, xi, (size_t)n * sizeof *y);
        SLA_TRY(apply(o, 1, 1, y));
        int64_t last = j;
        j = argmax_abs(y, n);
        if (fabs(y[last]) == fabs(y[j])) break;            /* the same column again */
    }
    *hint = best >= 0 ? best : j;
    if (!(alt <= *est)) *est = alt;
    return SLA_OK;
}

sla_status sla_direct_rcond(const sla_solver *s, int64_t b, sla_factor_solve_fn fn, void *ctx,
                            double *work, int64_t *hint, double *rcond)
{
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    if (n == 0) { *rcond = 1; return SLA_OK; }
    double *w = work, *colsum = work + n, *xi = work + 2 * n, *y = work + 3 * n;
    const void *v = (const char *)s->A.values + (size_t)(b * nnz) * sla_dtype_size(s->dtype);
    double anorm = SLA_DISPATCH(s->dtype, row_scaled_norm1, (s->pattern, v, w, colsum));
    if (!(anorm > 0)) { *rcond = 0; return SLA_OK; }      /* a zero row: singular */
    scaled_op o = {.s = s, .b = b, .fn = fn, .ctx = ctx, .w = w};
    double est = 0;
    SLA_TRY(estimate_inverse_norm(&o, y, xi, &est, hint));
    *rcond = isfinite(est) && est > 0 ? 1 / (anorm * est) : 0;
    if (!(*rcond >= 0)) *rcond = 0;
    return SLA_OK;
}
