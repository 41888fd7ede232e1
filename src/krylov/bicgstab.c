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
 * the restarted method is BiCGStab started again from the current x. */
#include <float.h>
#include <math.h>

#include "krylov/krylov.h"

/* |xy| at rounding level relative to ‖x‖‖y‖ (also xy = 0 for a zero vector) */
static int negligible(double xy, double xnorm, double ynorm, double eps)
{
    return !(fabs(xy) > 16 * eps * xnorm * ynorm);
}

sla_status sla_krylov_bicgstab(const sla_kop *K, sla_op op, const sla_kparams *P, const void *b,
                               void *x, sla_kresult *res)
{
    enum { R, RHAT, PV, V, T, PHAT, SHAT, NV };
    void *v[NV] = {0};
    int nv = K->precond ? NV : PHAT;
    SLA_TRY(sla_kvecs_create(K, nv, v));
    void *r = v[R], *rhat = v[RHAT], *p = v[PV], *vv = v[V], *t = v[T];
    void *phat = K->precond ? v[PHAT] : p, *shat = K->precond ? v[SHAT] : r;  /* s lives in r */
    const double eps = K->dtype == SLA_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    sla_kstate S;
    double rnorm = 0, breakdown_rnorm = INFINITY;   /* true residual at the last breakdown */
    int done, action;
    int64_t it = 0;
    sla_reason stop;
    sla_status st = sla_kstart(&S, K, op, P, b, x, r, res, &rnorm, &done);
    if (st < 0 || done) goto out;
restart:;
    double rho = 1, alpha = 1, omega = 1, rhatnorm = rnorm;
    K->axpby(K, 1.0, r, 0.0, rhat);            /* shadow residual r̂ = r */
    stop = SLA_REASON_CONVERGED;
    for (int first = 1; stop == SLA_REASON_CONVERGED; first = 0) {
        if (it >= P->maxiter) { stop = SLA_REASON_MAXITER; break; }
        double rho1 = K->dot(K, rhat, r);
        if (!isfinite(rho1)) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(rho1, rhatnorm, rnorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        if (first) {
            K->axpby(K, 1.0, r, 0.0, p);
        } else {
            double beta = (rho1 / rho) * (alpha / omega);
            K->axpby(K, -omega, vv, 1.0, p);    /* p = r + β (p − ω v) */
            K->axpby(K, 1.0, r, beta, p);
        }
        rho = rho1;
        if (K->precond && (st = K->precond(K, op, p, phat)) < 0) goto out;
        if ((st = K->apply(K, op, phat, vv)) < 0) goto out;
        double rv = K->dot(K, rhat, vv), vnorm = sqrt(K->dot(K, vv, vv));
        res->iterations = ++it;
        if (!isfinite(rv) || !isfinite(vnorm)) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(rv, rhatnorm, vnorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        alpha = rho / rv;
        K->axpby(K, -alpha, vv, 1.0, r);        /* s = r − α v */
        double snorm = sqrt(K->dot(K, r, r));
        if (!isfinite(snorm)) { stop = SLA_REASON_NONFINITE; break; }
        K->axpby(K, alpha, phat, 1.0, x);       /* x at the half step */
        rnorm = snorm;
        if (snorm <= S.tol) {
            if ((st = sla_kmonitor(&S, it, snorm)) < 0) goto out;
            if ((st = sla_kverify(&S, x, r, &action)) < 0 || action != 1) goto out;
            rnorm = res->residual;
            goto restart;
        }
        if (K->precond && (st = K->precond(K, op, r, shat)) < 0) goto out;
        if ((st = K->apply(K, op, shat, t)) < 0) goto out;
        double tt = K->dot(K, t, t), ts = K->dot(K, t, r);
        if (!isfinite(tt) || !isfinite(ts)) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(ts, sqrt(tt), snorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        omega = ts / tt;
        K->axpby(K, omega, shat, 1.0, x);
        K->axpby(K, -omega, t, 1.0, r);         /* r = s − ω t */
        rnorm = sqrt(K->dot(K, r, r));
        if (!isfinite(rnorm)) { stop = SLA_REASON_NONFINITE; break; }
        if ((st = sla_kmonitor(&S, it, rnorm)) < 0) goto out;
        if (rnorm <= S.tol) {
            if ((st = sla_kverify(&S, x, r, &action)) < 0 || action != 1) goto out;
            rnorm = res->residual;
            goto restart;
        }
    }
    if (stop == SLA_REASON_BREAKDOWN && rnorm < 0.5 * breakdown_rnorm) {
        /* restart from the true residual with r̂ = r (see the top of the file) */
        if ((st = sla_ktrue_residual(&S, x, r)) < 0) goto out;
        rnorm = breakdown_rnorm = res->residual;
        if (!isfinite(rnorm)) { stop = SLA_REASON_NONFINITE; goto finish; }
        if (rnorm <= S.tol) { res->reason = SLA_REASON_CONVERGED; goto out; }
        goto restart;
    }
finish:
    st = sla_kfinish(&S, stop, x, t);
out:
    sla_kvecs_free(K, nv, v);
    return st;
}
