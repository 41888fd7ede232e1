/* Preconditioned conjugate gradients (Hestenes & Stiefel 1952) against the operator table.
 *
 * Per iteration three passes over the vectors: q = A p with pᵀq (one fused SpMV), then
 * x += αp, r −= αq with ‖r‖² (and rᵀD⁻¹r for Jacobi) in one pass, then p = z + βp. A general
 * preconditioner adds z = M⁻¹r and rᵀz. */
#include <math.h>

#include "krylov/krylov.h"

/* z = M⁻¹ r and rz = rᵀz; for no preconditioner z is r itself and rz = rr. */
static sla_status precondition(const sla_kop *K, sla_op op, const void *r, double rr, void *z,
                               double *rz)
{
    if (!K->precond) {
        *rz = rr;
        return SLA_OK;
    }
    SLA_TRY(K->precond(K, op, r, z));
    *rz = K->dot(K, r, z);
    return SLA_OK;
}

sla_status sla_krylov_cg(const sla_kop *K, sla_op op, const sla_kparams *P, const void *b,
                         void *x, sla_kresult *res)
{
    void *v[4] = {0};
    int nv = K->precond && !K->inv_diag ? 4 : 3;
    SLA_TRY(sla_kvecs_create(K, nv, v));
    void *r = v[0], *p = v[1], *q = v[2];
    void *z = nv == 4 ? v[3] : r;            /* Jacobi and no preconditioner never store z */
    sla_kstate S;
    double rnorm = 0, rr, rz, pq;
    int done, action;
    int64_t it = 0;
    sla_status st = sla_kstart(&S, K, op, P, b, x, r, res, &rnorm, &done);
    if (st < 0 || done) goto out;
restart:
    rr = rnorm * rnorm;
    /* first direction p = z = M⁻¹r */
    if (K->precond) {
        st = precondition(K, op, r, rr, p, &rz);
        if (st < 0) goto out;
    } else {
        K->axpby(K, 1.0, r, 0.0, p);
        rz = rr;
    }
    if (!isfinite(rz) || rz <= 0) {
        st = sla_kfinish(&S, isfinite(rz) ? SLA_REASON_INDEFINITE : SLA_REASON_NONFINITE, x, q);
        goto out;
    }
    for (;;) {
        if (it >= P->maxiter) { st = sla_kfinish(&S, SLA_REASON_MAXITER, x, q); break; }
        if ((st = K->apply_dot(K, op, p, q, &pq)) < 0) break;
        it++;
        res->iterations = it;
        if (!isfinite(pq)) { st = sla_kfinish(&S, SLA_REASON_NONFINITE, x, q); break; }
        if (pq <= 0) { st = sla_kfinish(&S, SLA_REASON_INDEFINITE, x, q); break; }
        double alpha = rz / pq, rz_new;
        K->cg_update(K, alpha, p, q, x, r, K->inv_diag, &rr, &rz_new);
        rnorm = sqrt(rr);
        if (!isfinite(rnorm)) { st = sla_kfinish(&S, SLA_REASON_NONFINITE, x, q); break; }
        if ((st = sla_kmonitor(&S, it, rnorm)) < 0) break;
        if (rnorm <= S.tol) {
            if ((st = sla_kverify(&S, x, q, &action)) < 0 || action != 1) break;
            K->axpby(K, 1.0, q, 0.0, r);      /* residual replacement */
            rnorm = res->residual;
            goto restart;
        }
        if (K->precond && !K->inv_diag && (st = precondition(K, op, r, rr, z, &rz_new)) < 0) break;
        if (!isfinite(rz_new)) { st = sla_kfinish(&S, SLA_REASON_NONFINITE, x, q); break; }
        if (rz_new <= 0) { st = sla_kfinish(&S, SLA_REASON_INDEFINITE, x, q); break; }
        double beta = rz_new / rz;
        rz = rz_new;
        K->cg_direction(K, beta, K->inv_diag ? r : z, K->inv_diag, p);
    }
out:
    sla_kvecs_free(K, nv, v);
    return st;
}
