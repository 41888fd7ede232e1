/* BiCGStab (van der Vorst 1992), right preconditioned, against the operator table.
 * Solves op(A) M⁻¹ y = b with x = M⁻¹ y, so the recurrence residual r is the residual of the
 * original system and the stopping rule needs no extra work. With op = T both A and M are
 * applied transposed (Aᵀ M⁻ᵀ), as the adjoint of a right-preconditioned solve requires.
 *
 * Breakdown. The method divides by ρ = r̂ᵀr (through β), by r̂ᵀv (α) and by ω = tᵀs / tᵀt
 * (β again). Each is an inner product, so it is tested against the norms of its two vectors:
 * |xᵀy| ≤ 16 ε ‖x‖‖y‖ (ε of the vectors' dtype) means the cosine is at rounding level and the
 * quotient would be noise. A fixed threshold on the scalars themselves cannot tell that from a
 * small residual: with r̂ = r₀ = e_k and an ILU(0) exact in row k, r̂ᵀr is ‖r‖·O(ε) from the
 * first step on while ‖r‖ is still 1e-5. On a breakdown the solve restarts from the true
 * residual with a new shadow residual r̂ = r (so the next ρ = ‖r‖² > 0), as Eigen's
 * BiCGSTAB does (Eigen/src/IterativeLinearSolvers/BiCGSTAB.h); a second breakdown before that
 * restart's residual has been halved ends the solve with reason breakdown. Converged systems therefore never report
 * breakdown, and a genuine one (e.g. r̂ᵀA M⁻¹r = 0 for r̂ = r) still does. In exact arithmetic
 * the restarted method is BiCGStab started again from the current x.
 * Complex spaces: ρ = r̂ᴴr, r̂ᴴv, ω = tᴴs / tᴴt are complex (the complex BiCGStab); in a real
 * space their imaginary parts are 0 and the arithmetic is the real one, bit for bit. */
#include <float.h>
#include <math.h>

#include "krylov/krylov.h"

/* |xy| at rounding level relative to ‖x‖‖y‖ (also xy = 0 for a zero vector) */
static int negligible(double complex xy, double xnorm, double ynorm, double eps)
{
    return !(cabs(xy) > 16 * eps * xnorm * ynorm);
}

sla_status sla_krylov_bicgstab(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                               const void *b, void *x, sla_krylov_result *res)
{
    enum { R, RHAT, PV, V_, T, PHAT, SHAT, NV };
    const sla_space *V = A->domain;
    void *v[NV] = {0};
    int nv = A->precond ? NV : PHAT;
    SLA_TRY(sla_kvecs_create(V, nv, v));
    void *r = v[R], *rhat = v[RHAT], *p = v[PV], *vv = v[V_], *t = v[T];
    void *phat = A->precond ? v[PHAT] : p, *shat = A->precond ? v[SHAT] : r;  /* s lives in r */
    const double eps = sla_dtype_real(V->dtype) == SLA_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    sla_kstate S = {0};
    double rnorm = 0, breakdown_rnorm = INFINITY;   /* true residual at the last breakdown */
    int done, action;
    int64_t it = 0;
    sla_reason stop;
    sla_status st;
    SLA_KCALL(sla_kstart(&S, A, op, P, b, x, r, res, &rnorm, &done));
    if (done) goto out;
restart:;
    double complex rho = 1, alpha = 1, omega = 1;
    double rhatnorm = rnorm;
    SLA_KCALL(V->axpby(V, 1.0, r, 0.0, rhat));           /* shadow residual r̂ = r */
    stop = SLA_REASON_CONVERGED;
    for (int first = 1; stop == SLA_REASON_CONVERGED; first = 0) {
        if (it >= P->maxiter) { stop = SLA_REASON_MAXITER; break; }
        double complex rho1, rv, ts;
        double vnorm, snorm, tt;
        SLA_KCALL(sla_kzdot(V, 1, rhat, r, &rho1));
        if (!isfinite(creal(rho1)) || !isfinite(cimag(rho1))) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(rho1, rhatnorm, rnorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        if (first) {
            SLA_KCALL(V->axpby(V, 1.0, r, 0.0, p));
        } else {
            double complex beta = sla_kzdiv(rho1, rho) * sla_kzdiv(alpha, omega);
            SLA_KCALL(sla_kzaxpby(V, -omega, vv, 1.0, p));  /* p = r + β (p − ω v) */
            SLA_KCALL(sla_kzaxpby(V, 1.0, r, beta, p));
        }
        rho = rho1;
        if (A->precond) SLA_KCALL(A->precond(A, op, p, phat));
        SLA_KCALL(A->apply(A, op, phat, vv));
        SLA_KCALL(sla_kzdot(V, 1, rhat, vv, &rv));
        SLA_KCALL(V->norm(V, vv, &vnorm));
        res->iterations = ++it;
        if (!isfinite(creal(rv)) || !isfinite(cimag(rv)) || !isfinite(vnorm)) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(rv, rhatnorm, vnorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        alpha = sla_kzdiv(rho, rv);
        SLA_KCALL(sla_kzaxpby(V, -alpha, vv, 1.0, r));   /* s = r − α v */
        SLA_KCALL(V->norm(V, r, &snorm));
        if (!isfinite(snorm)) { stop = SLA_REASON_NONFINITE; break; }
        SLA_KCALL(sla_kzaxpby(V, alpha, phat, 1.0, x));  /* x at the half step */
        SLA_KCALL(sla_kcheckpoint(&S, snorm, x));
        rnorm = snorm;
        if (snorm <= S.tol) {
            SLA_KCALL(sla_kmonitor(&S, it, snorm));
            SLA_KCALL(sla_kverify(&S, x, r, &action));
            if (action != 1) goto out;
            rnorm = res->residual;
            goto restart;
        }
        if (A->precond) SLA_KCALL(A->precond(A, op, r, shat));
        SLA_KCALL(A->apply(A, op, shat, t));
        SLA_KCALL(V->dot(V, t, t, &tt));
        SLA_KCALL(sla_kzdot(V, 1, t, r, &ts));
        if (!isfinite(tt) || !isfinite(creal(ts)) || !isfinite(cimag(ts))) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(ts, sqrt(tt), snorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        omega = sla_kzdiv(ts, tt);
        SLA_KCALL(sla_kzaxpby(V, omega, shat, 1.0, x));
        SLA_KCALL(sla_kzaxpby(V, -omega, t, 1.0, r));    /* r = s − ω t */
        SLA_KCALL(V->norm(V, r, &rnorm));
        if (!isfinite(rnorm)) { stop = SLA_REASON_NONFINITE; break; }
        SLA_KCALL(sla_kcheckpoint(&S, rnorm, x));
        SLA_KCALL(sla_kmonitor(&S, it, rnorm));
        if (rnorm <= S.tol) {
            SLA_KCALL(sla_kverify(&S, x, r, &action));
            if (action != 1) goto out;
            rnorm = res->residual;
            goto restart;
        }
    }
    if (stop == SLA_REASON_BREAKDOWN && rnorm < 0.5 * breakdown_rnorm) {
        /* restart from the true residual with r̂ = r (see the top of the file) */
        SLA_KCALL(sla_ktrue_residual(&S, x, r));
        rnorm = breakdown_rnorm = res->residual;
        if (!isfinite(rnorm)) { stop = SLA_REASON_NONFINITE; goto finish; }
        if (rnorm <= S.tol) { res->reason = SLA_REASON_CONVERGED; goto out; }
        goto restart;
    }
finish:
    st = sla_kfinish(&S, stop, x, t);
out:
    sla_kend(&S);
    sla_kvecs_free(V, nv, v);
    return st;
}
