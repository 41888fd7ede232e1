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
 * 10; an iteration that raises the estimate by under 1 % ends it: SLA_CONDEST_MIN_GROWTH, core/internal.h). Complex matrices take the complex form of the same algorithm (Higham 1988, Algorithm
 * 4.1 with complex sign vectors ξ_i = y_i/|y_i|, LAPACK's zlacn2): the transposed solves are
 * with (RA)⁻ᴴ and there is no sign-repetition test (it is for ±1 vectors only). Every vector
 * it tries is a column of (RA)⁻¹
 * applied to a unit vector, so est ≤ ‖(RA)⁻¹‖₁ and the estimate rcond is never below the true
 * one: a matrix refused as singular is singular to working precision (up to the rounding of
 * the solves). Row equilibration makes the test independent of the scaling of the equations
 * (diag(1, 1e-300) is regular), and is within a factor n of the best row scaling for the ∞-norm
 * condition number (van der Sluis 1969). */
#include <math.h>
#include <string.h>

#include "direct/direct.h"

typedef struct {
    const sla_solver *s;
    int64_t b;
    sla_factor_solve_fn fn;
    void *ctx;
    const double *w;      /* [n] row scale R */
} scaled_op;

#define SLA_TEMPLATE "direct/t_condest.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

sla_status sla_direct_rcond(const sla_solver *s, int64_t b, sla_factor_solve_fn fn, void *ctx,
                            double *work, int64_t *hint, double *rcond)
{
    return sla_direct_rcond_first(s, b, fn, ctx, work, hint, rcond, 0, NULL, NULL);
}

sla_status sla_direct_rcond_first(const sla_solver *s, int64_t b, sla_factor_solve_fn fn,
                                  void *ctx, double *work, int64_t *hint, double *rcond,
                                  int64_t kx, double *x, int *x_solved)
{
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    if (x_solved) *x_solved = 0;
    if (n == 0) { *rcond = 1; return SLA_OK; }
    int cplx = sla_dtype_is_complex(s->dtype);
    /* xi [n] and y [3n] of double or double complex */
    double *w = work, *colsum = work + n, *xi = work + 2 * n, *y = work + (cplx ? 4 : 3) * n;
    const void *v = (const char *)s->A.values + (size_t)(b * nnz) * sla_dtype_size(s->dtype);
    double anorm = SLA_DISPATCH_ALL(s->dtype, row_scaled_norm1, (s->pattern, v, w, colsum));
    if (!(anorm > 0)) { *rcond = 0; return SLA_OK; }      /* a zero row: singular */
    scaled_op o = {.s = s, .b = b, .fn = fn, .ctx = ctx, .w = w};
    double est = 0;
    SLA_TRY(cplx ? estimate_inverse_norm_c128(&o, (void *)y, (void *)xi, &est, hint, kx, (void *)x)
                 : estimate_inverse_norm_f64(&o, y, xi, &est, hint, kx, x));
    if (x_solved) *x_solved = kx > 0;
    *rcond = isfinite(est) && est > 0 ? 1 / (anorm * est) : 0;
    if (!(*rcond >= 0)) *rcond = 0;
    return SLA_OK;
}
