/* Start, monitor, residual replacement and finish shared by the Krylov methods. */
#include <math.h>

#include "krylov/krylov.h"

sla_kmethod sla_krylov_method(sla_method m)
{
    switch (m) {
    case SLA_METHOD_CG: return sla_krylov_cg;
    case SLA_METHOD_BICGSTAB: return sla_krylov_bicgstab;
    case SLA_METHOD_GMRES: return sla_krylov_gmres;
    case SLA_METHOD_MINRES: return sla_krylov_minres;
    default: return NULL;
    }
}

sla_status sla_kvecs_create(const sla_kop *K, int count, void **v)
{
    for (int i = 0; i < count; i++) {
        v[i] = K->vec_create(K);
        if (!v[i]) {
            sla_kvecs_free(K, i, v);
            return SLA_ENOMEM;
        }
    }
    return SLA_OK;
}

void sla_kvecs_free(const sla_kop *K, int count, void **v)
{
    for (int i = 0; i < count; i++) {
        if (v[i]) K->vec_free(K, v[i]);
        v[i] = NULL;
    }
}

sla_status sla_kmonitor(const sla_kstate *S, int64_t it, double rnorm)
{
    const sla_kparams *P = S->P;
    if (!P->monitor || it % P->monitor_every != 0) return SLA_OK;
    int rc = P->monitor(P->monitor_ctx, P->batch_index, P->rhs_index, it, rnorm);
    if (rc != 0)
        return SLA_FAIL(SLA_ECALLBACK, "the monitor returned %d at iteration %lld (batch element "
                        "%lld, right-hand side %lld)", rc, (long long)it,
                        (long long)P->batch_index, (long long)P->rhs_index);
    return SLA_OK;
}

sla_status sla_ktrue_residual(const sla_kstate *S, const void *x, void *r)
{
    const sla_kop *K = S->K;
    SLA_TRY(K->apply(K, S->op, x, r));
    K->axpby(K, 1.0, S->b, -1.0, r);
    S->res->residual = sqrt(K->dot(K, r, r));
    return SLA_OK;
}

sla_status sla_kstart(sla_kstate *S, const sla_kop *K, sla_op op, const sla_kparams *P,
                      const void *b, void *x, void *r, sla_kresult *res, double *rnorm,
                      int *done)
{
    *S = (sla_kstate){.K = K, .op = op, .P = P, .b = b, .res = res, .last_replaced = INFINITY};
    *res = (sla_kresult){.reason = SLA_REASON_CONVERGED};
    *done = 1;
    res->bnorm = sqrt(K->dot(K, b, b));
    if (!isfinite(res->bnorm)) {
        res->reason = SLA_REASON_NONFINITE;
        res->residual = res->bnorm;
        return SLA_OK;
    }
    S->tol = fmax(P->rtol * res->bnorm, P->atol);
    if (res->bnorm == 0) {
        K->axpby(K, 0.0, b, 0.0, x);           /* b = 0 has the solution x = 0 */
        res->residual = 0;
        return sla_kmonitor(S, 0, 0.0);
    }
    if (P->x0_nonzero) {
        SLA_TRY(sla_ktrue_residual(S, x, r));
    } else {
        K->axpby(K, 0.0, b, 0.0, x);
        K->axpby(K, 1.0, b, 0.0, r);
        res->residual = res->bnorm;
    }
    *rnorm = res->residual;
    SLA_TRY(sla_kmonitor(S, 0, *rnorm));
    if (!isfinite(*rnorm)) {
        res->reason = SLA_REASON_NONFINITE;
        return SLA_OK;
    }
    if (*rnorm <= S->tol) return SLA_OK;
    *done = 0;
    return SLA_OK;
}

sla_status sla_kverify(sla_kstate *S, const void *x, void *r, int *action)
{
    SLA_TRY(sla_ktrue_residual(S, x, r));
    double t = S->res->residual;
    if (t <= S->tol) {
        S->res->reason = SLA_REASON_CONVERGED;
        *action = 0;
        return SLA_OK;
    }
    if (!isfinite(t)) {
        S->res->reason = SLA_REASON_NONFINITE;
        *action = 2;
        return SLA_OK;
    }
    /* The recurrence drifted from the true residual: restart from the true one, unless the
     * previous restart did not buy at least a halving (attainable accuracy reached). */
    if (!(t < 0.5 * S->last_replaced)) {
        S->res->reason = SLA_REASON_STAGNATION;
        *action = 2;
        return SLA_OK;
    }
    S->last_replaced = t;
    *action = 1;
    return SLA_OK;
}

sla_status sla_kfinish(sla_kstate *S, sla_reason reason, const void *x, void *w)
{
    S->res->reason = reason;
    return sla_ktrue_residual(S, x, w);
}
