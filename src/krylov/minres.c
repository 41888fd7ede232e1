/* MINRES (Paige & Saunders 1975) against the operator table, for symmetric (possibly
 * indefinite) A with an SPD preconditioner M; the recurrences follow Choi, Paige & Saunders'
 * minres.m (preconditioned Lanczos on M⁻¹A in the M-inner product, QR of the tridiagonal by
 * Givens rotations, three-term update of the search directions w).
 *
 * MINRES's own estimate φ̄ is ‖r‖ in the M⁻¹-norm. The stopping rule is in the 2-norm, so the
 * true residual is carried by a second recurrence: with A w_k obtained from the same three-term
 * formula as w_k (from A v_k, which the Lanczos step computes anyway), r_k = r_{k−1} − φ_k A w_k.
 * When that recurrence stops moving while φ̄ keeps falling (its updates are below the rounding
 * of r: attainable accuracy, typically float32), the true residual is checked as on convergence.
 * A negative or zero rᵀM⁻¹r for r ≠ 0 shows an indefinite preconditioner (reason indefinite). */
#include <float.h>
#include <math.h>

#include "krylov/krylov.h"

/* The w and A w recurrences of MINRES, w_k = (a − e·w_{k−2} − d·w_{k−1})/γ, on three rotating
 * buffers: W[1] = w_{k−2}, W[2] = w_{k−1} on entry; the new w_k is written over the oldest
 * buffer W[0] and rotated to W[2]. */
static sla_status three_term(const sla_space *V, const void *a, double e, double d, double gamma,
                             void **W)
{
    void *w = W[0];
    SLA_TRY(V->axpby(V, 1.0 / gamma, a, 0.0, w));
    SLA_TRY(V->axpby(V, -e / gamma, W[1], 1.0, w));
    SLA_TRY(V->axpby(V, -d / gamma, W[2], 1.0, w));
    W[0] = W[1];
    W[1] = W[2];
    W[2] = w;
    return SLA_OK;
}

/* y = M⁻¹ r (y = r without a preconditioner) */
static sla_status precondition(const sla_operator *A, sla_op op, const void *r, void *y)
{
    if (A->precond) return A->precond(A, op, r, y);
    return A->domain->axpby(A->domain, 1.0, r, 0.0, y);
}

sla_status sla_krylov_minres(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                             const void *b, void *x, sla_krylov_result *res)
{
    enum { R1, R2, Y, VV, AV, RES, W0, W1, W2, AW0, AW1, AW2, NV };
    const sla_space *V = A->domain;
    void *v[NV] = {0};
    SLA_TRY(sla_kvecs_create(V, NV, v));
    void *r1 = v[R1], *r2 = v[R2], *y = v[Y], *vk = v[VV], *av = v[AV], *rres = v[RES];
    void *W[3] = {v[W0], v[W1], v[W2]}, *AW[3] = {v[AW0], v[AW1], v[AW2]};
    sla_kstate S = {0};
    double rnorm = 0;
    int done, action;
    int64_t it = 0;
    sla_reason stop = SLA_REASON_CONVERGED;
    sla_status st;
    SLA_KCALL(sla_kstart(&S, A, op, P, b, x, rres, res, &rnorm, &done));
    if (done) goto out;
restart:
    SLA_KCALL(V->axpby(V, 1.0, rres, 0.0, r1));
    SLA_KCALL(precondition(A, op, r1, y));
    double beta;
    SLA_KCALL(V->dot(V, r1, y, &beta));
    if (!isfinite(beta)) { stop = SLA_REASON_NONFINITE; goto finish; }
    if (beta <= 0) { stop = SLA_REASON_INDEFINITE; goto finish; }
    beta = sqrt(beta);
    double oldb = 0, dbar = 0, epsln = 0, phibar = beta, cs = -1, sn = 0;
    double best = rnorm, phibar_at_best = phibar;
    SLA_KCALL(V->axpby(V, 1.0, r1, 0.0, r2));
    for (int i = 0; i < 3; i++) {
        SLA_KCALL(V->axpby(V, 0.0, r1, 0.0, W[i]));
        SLA_KCALL(V->axpby(V, 0.0, r1, 0.0, AW[i]));
    }
    for (int64_t k = 0;; k++) {
        if (it >= P->maxiter) { stop = SLA_REASON_MAXITER; break; }
        double alfa, beta2;
        SLA_KCALL(V->axpby(V, 1.0 / beta, y, 0.0, vk));      /* v = y / β */
        SLA_KCALL(A->apply(A, op, vk, av));                  /* A v */
        SLA_KCALL(V->axpby(V, 1.0, av, 0.0, y));
        if (k > 0) SLA_KCALL(V->axpby(V, -beta / oldb, r1, 1.0, y));
        SLA_KCALL(V->dot(V, vk, y, &alfa));
        SLA_KCALL(V->axpby(V, -alfa / beta, r2, 1.0, y));
        void *tmp = r1;                                      /* r1 ← r2, r2 ← y */
        r1 = r2;
        r2 = y;
        y = tmp;
        SLA_KCALL(precondition(A, op, r2, y));
        oldb = beta;
        SLA_KCALL(V->dot(V, r2, y, &beta2));
        res->iterations = ++it;
        if (!isfinite(beta2) || !isfinite(alfa)) { stop = SLA_REASON_NONFINITE; break; }
        if (beta2 == 0 && A->precond) {
            double r2r2;
            SLA_KCALL(V->dot(V, r2, r2, &r2r2));
            if (r2r2 > 0) { stop = SLA_REASON_INDEFINITE; break; }
        }
        if (beta2 < 0) { stop = SLA_REASON_INDEFINITE; break; }
        beta = sqrt(beta2);
        /* apply the previous rotation, make the next one */
        double oldeps = epsln;
        double delta = cs * dbar + sn * alfa;
        double gbar = sn * dbar - cs * alfa;
        epsln = sn * beta;
        dbar = -cs * beta;
        double gamma = hypot(gbar, beta);
        if (gamma == 0) gamma = DBL_EPSILON;                 /* singular T_k: as minres.m */
        cs = gbar / gamma;
        sn = beta / gamma;
        double phi = cs * phibar;
        phibar = sn * phibar;
        SLA_KCALL(three_term(V, vk, oldeps, delta, gamma, W));    /* w_k */
        SLA_KCALL(three_term(V, av, oldeps, delta, gamma, AW));   /* A w_k */
        SLA_KCALL(V->axpby(V, phi, W[2], 1.0, x));
        SLA_KCALL(V->axpby(V, -phi, AW[2], 1.0, rres));
        SLA_KCALL(V->norm(V, rres, &rnorm));
        if (!isfinite(rnorm)) { stop = SLA_REASON_NONFINITE; break; }
        SLA_KCALL(sla_kcheckpoint(&S, rnorm, x));
        SLA_KCALL(sla_kmonitor(&S, it, rnorm));
        /* The residual recurrence is stuck (its updates fall below the rounding of r, as in
         * float32 near attainable accuracy) while φ̄ went on falling: check the true one. */
        int stuck = 0;
        if (rnorm < best * (1 - 1e-6)) {
            best = rnorm;
            phibar_at_best = phibar;
        } else if (phibar < 1e-2 * phibar_at_best) {
            stuck = 1;
        }
        if (rnorm <= S.tol || beta == 0 || stuck) {         /* β = 0: invariant subspace */
            SLA_KCALL(sla_kverify(&S, x, rres, &action));
            if (action != 1) goto out;
            goto restart;
        }
    }
finish:
    st = sla_kfinish(&S, stop, x, rres);
out:
    sla_kend(&S);
    sla_kvecs_free(V, NV, v);
    return st;
}
