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
static void three_term(const sla_kop *K, const void *a, double e, double d, double gamma,
                       void **W)
{
    void *w = W[0];
    K->axpby(K, 1.0 / gamma, a, 0.0, w);
    K->axpby(K, -e / gamma, W[1], 1.0, w);
    K->axpby(K, -d / gamma, W[2], 1.0, w);
    W[0] = W[1];
    W[1] = W[2];
    W[2] = w;
}

sla_status sla_krylov_minres(const sla_kop *K, sla_op op, const sla_kparams *P, const void *b,
                             void *x, sla_kresult *res)
{
    enum { R1, R2, Y, VV, AV, RES, W0, W1, W2, AW0, AW1, AW2, NV };
    void *v[NV] = {0};
    SLA_TRY(sla_kvecs_create(K, NV, v));
    void *r1 = v[R1], *r2 = v[R2], *y = v[Y], *vk = v[VV], *av = v[AV], *rres = v[RES];
    void *W[3] = {v[W0], v[W1], v[W2]}, *AW[3] = {v[AW0], v[AW1], v[AW2]};
    sla_kstate S;
    double rnorm = 0;
    int done, action;
    int64_t it = 0;
    sla_reason stop = SLA_REASON_CONVERGED;
    sla_status st = sla_kstart(&S, K, op, P, b, x, rres, res, &rnorm, &done);
    if (st < 0 || done) goto out;
restart:
    K->axpby(K, 1.0, rres, 0.0, r1);
    if (K->precond) {
        if ((st = K->precond(K, op, r1, y)) < 0) goto out;
    } else {
        K->axpby(K, 1.0, r1, 0.0, y);
    }
    double beta = K->dot(K, r1, y);
    if (!isfinite(beta)) { stop = SLA_REASON_NONFINITE; goto finish; }
    if (beta <= 0) { stop = SLA_REASON_INDEFINITE; goto finish; }
    beta = sqrt(beta);
    double oldb = 0, dbar = 0, epsln = 0, phibar = beta, cs = -1, sn = 0;
    double best = rnorm, phibar_at_best = phibar;
    K->axpby(K, 1.0, r1, 0.0, r2);
    for (int i = 0; i < 3; i++) {
        K->axpby(K, 0.0, r1, 0.0, W[i]);
        K->axpby(K, 0.0, r1, 0.0, AW[i]);
    }
    for (int64_t k = 0;; k++) {
        if (it >= P->maxiter) { stop = SLA_REASON_MAXITER; break; }
        K->axpby(K, 1.0 / beta, y, 0.0, vk);                  /* v = y / β */
        if ((st = K->apply(K, op, vk, av)) < 0) goto out;      /* A v */
        K->axpby(K, 1.0, av, 0.0, y);
        if (k > 0) K->axpby(K, -beta / oldb, r1, 1.0, y);
        double alfa = K->dot(K, vk, y);
        K->axpby(K, -alfa / beta, r2, 1.0, y);
        void *tmp = r1;                                        /* r1 ← r2, r2 ← y */
        r1 = r2;
        r2 = y;
        y = tmp;
        if (K->precond) {
            if ((st = K->precond(K, op, r2, y)) < 0) goto out;
        } else {
            K->axpby(K, 1.0, r2, 0.0, y);
        }
        oldb = beta;
        double beta2 = K->dot(K, r2, y);
        res->iterations = ++it;
        if (!isfinite(beta2) || !isfinite(alfa)) { stop = SLA_REASON_NONFINITE; break; }
        if (beta2 < 0 || (beta2 == 0 && K->precond && K->dot(K, r2, r2) > 0)) {
            stop = SLA_REASON_INDEFINITE;
            break;
        }
        beta = sqrt(beta2);
        /* apply the previous rotation, make the next one */
        double oldeps = epsln;
        double delta = cs * dbar + sn * alfa;
        double gbar = sn * dbar - cs * alfa;
        epsln = sn * beta;
        dbar = -cs * beta;
        double gamma = hypot(gbar, beta);
        if (gamma == 0) gamma = DBL_EPSILON;                   /* singular T_k: as minres.m */
        cs = gbar / gamma;
        sn = beta / gamma;
        double phi = cs * phibar;
        phibar = sn * phibar;
        three_term(K, vk, oldeps, delta, gamma, W);            /* w_k */
        three_term(K, av, oldeps, delta, gamma, AW);           /* A w_k */
        K->axpby(K, phi, W[2], 1.0, x);
        K->axpby(K, -phi, AW[2], 1.0, rres);
        rnorm = sqrt(K->dot(K, rres, rres));
        if (!isfinite(rnorm)) { stop = SLA_REASON_NONFINITE; break; }
        if ((st = sla_kmonitor(&S, it, rnorm)) < 0) goto out;
        /* The residual recurrence is stuck (its updates fall below the rounding of r, as in
         * float32 near attainable accuracy) while φ̄ went on falling: check the true one. */
        int stuck = 0;
        if (rnorm < best * (1 - 1e-6)) {
            best = rnorm;
            phibar_at_best = phibar;
        } else if (phibar < 1e-2 * phibar_at_best) {
            stuck = 1;
        }
        if (rnorm <= S.tol || beta == 0 || stuck) {           /* β = 0: invariant subspace */
            if ((st = sla_kverify(&S, x, rres, &action)) < 0 || action != 1) goto out;
            goto restart;
        }
    }
finish:
    st = sla_kfinish(&S, stop, x, rres);
out:
    sla_kvecs_free(K, NV, v);
    return st;
}
