/* Preconditioned conjugate gradients (Hestenes & Stiefel 1952) against the operator table.
 *
 * Per iteration three passes over the vectors: q = A p with pᵀq (one fused SpMV), then
 * x += αp, r −= αq with ‖r‖² (and rᵀD⁻¹r for Jacobi) in one pass, then p = z + βp. A general
 * preconditioner adds z = M⁻¹r and rᵀz. On a distributed space: two reductions per iteration
 * (three with a general preconditioner). */
#include <math.h>

#include "krylov/krylov.h"

/* z = M⁻¹ r and rz = rᵀz; for no preconditioner z is r itself and rz = rr. */
static sla_status precondition(const sla_operator *A, sla_op op, const void *r, double rr,
                               void *z, double *rz)
{
    if (!A->precond) {
        *rz = rr;
        return SLA_OK;
    }
    SLA_TRY(A->precond(A, op, r, z));
    return A->domain->dot(A->domain, r, z, rz);
}

/* q = op(A) p and pq = pᵀq, fused when the operator can */
static sla_status apply_dot(const sla_operator *A, sla_op op, const void *p, void *q, double *pq)
{
    if (A->apply_dot) return A->apply_dot(A, op, p, q, pq);
    SLA_TRY(A->apply(A, op, p, q));
    return A->domain->dot(A->domain, p, q, pq);
}

sla_status sla_krylov_cg(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                         const void *b, void *x, sla_krylov_result *res)
{
    const sla_space *V = A->domain;
    void *v[3] = {0};
    int nv = 3;
    SLA_TRY(sla_kvecs_create(V, nv, v));
    void *r = v[0], *p = v[1], *q = v[2];
    /* z = M⁻¹r lives in q's storage: q = A p is dead once x and r are updated, z once p = z + βp
     * is formed, before the next q (one vector less: 8 bytes per unknown in float64). Jacobi
     * and no preconditioner never store z. */
    void *z = A->precond && !A->inv_diag ? q : r;
    sla_kstate S = {0};
    double rnorm = 0, rr, rz, pq;
    int done, action;
    int64_t it = 0;
    sla_status st;
    SLA_KCALL(sla_kstart(&S, A, op, P, b, x, r, res, &rnorm, &done));
    if (done) goto out;
restart:
    rr = rnorm * rnorm;
    /* first direction p = z = M⁻¹r */
    if (A->precond) {
        SLA_KCALL(precondition(A, op, r, rr, p, &rz));
    } else {
        SLA_KCALL(V->axpby(V, 1.0, r, 0.0, p));
        rz = rr;
    }
    if (!isfinite(rz) || rz <= 0) {
        st = sla_kfinish(&S, isfinite(rz) ? SLA_REASON_INDEFINITE : SLA_REASON_NONFINITE, x, q);
        goto out;
    }
    for (;;) {
        if (it >= P->maxiter) { st = sla_kfinish(&S, SLA_REASON_MAXITER, x, q); break; }
        SLA_KCALL(apply_dot(A, op, p, q, &pq));
        it++;
        res->iterations = it;
        if (!isfinite(pq)) { st = sla_kfinish(&S, SLA_REASON_NONFINITE, x, q); break; }
        if (pq <= 0) { st = sla_kfinish(&S, SLA_REASON_INDEFINITE, x, q); break; }
        double alpha = rz / pq, rz_new;
        SLA_KCALL(V->cg_update(V, alpha, p, q, x, r, A->inv_diag, &rr, &rz_new));
        rnorm = sqrt(rr);
        if (!isfinite(rnorm)) { st = sla_kfinish(&S, SLA_REASON_NONFINITE, x, q); break; }
        SLA_KCALL(sla_kcheckpoint(&S, rnorm, x));
        SLA_KCALL(sla_kmonitor(&S, it, rnorm));
        if (rnorm <= S.tol) {
            SLA_KCALL(sla_kverify(&S, x, q, &action));
            if (action != 1) break;
            SLA_KCALL(V->axpby(V, 1.0, q, 0.0, r));      /* residual replacement */
            rnorm = res->residual;
            goto restart;
        }
        if (A->precond && !A->inv_diag) SLA_KCALL(precondition(A, op, r, rr, z, &rz_new));
        if (!isfinite(rz_new)) { st = sla_kfinish(&S, SLA_REASON_NONFINITE, x, q); break; }
        if (rz_new <= 0) { st = sla_kfinish(&S, SLA_REASON_INDEFINITE, x, q); break; }
        double beta = rz_new / rz;
        rz = rz_new;
        SLA_KCALL(V->cg_direction(V, beta, A->inv_diag ? r : z, A->inv_diag, p));
    }
out:
    sla_kend(&S);
    sla_kvecs_free(V, nv, v);
    return st;
}
