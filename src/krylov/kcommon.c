/* Start, monitor, checkpoints, residual replacement and finish shared by the Krylov methods. */
#include <math.h>

#include "krylov/krylov.h"

sla_kmethod sla_krylov_method(sla_method m)
{
    switch (m) {
    case SLA_METHOD_CG: return sla_krylov_cg;
    case SLA_METHOD_BICGSTAB: return sla_krylov_bicgstab;
    case SLA_METHOD_GMRES: return sla_krylov_gmres;
    case SLA_METHOD_MINRES: return sla_krylov_minres;
    case SLA_METHOD_LSQR: return sla_krylov_lsqr;
    case SLA_METHOD_COCG: return sla_krylov_cocg;
    default: return NULL;
    }
}

sla_status sla_kvecs_create(const sla_space *V, int count, void **v)
{
    for (int i = 0; i < count; i++) v[i] = NULL;
    for (int i = 0; i < count; i++) {
        sla_status st = V->vec_create(V, &v[i]);
        if (st < 0 || !v[i]) {
            v[i] = NULL;
            sla_kvecs_free(V, i, v);
            return st < 0 ? st : SLA_ENOMEM;
        }
    }
    return SLA_OK;
}

void sla_kvecs_free(const sla_space *V, int count, void **v)
{
    for (int i = 0; i < count; i++) {
        if (v[i]) V->vec_free(V, v[i]);
        v[i] = NULL;
    }
}

sla_status sla_kmonitor(const sla_kstate *S, int64_t it, double rnorm)
{
    const sla_krylov_params *P = S->P;
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
    const sla_space *V = S->V;
    SLA_TRY(S->A->apply(S->A, S->op, x, r));
    SLA_TRY(V->axpby(V, 1.0, S->b, -1.0, r));
    return V->norm(V, r, &S->res->residual);
}

sla_status sla_kcheckpoint(sla_kstate *S, double rnorm, const void *x)
{
    S->best_current = 0;
    if (!S->xbest || !(rnorm < 0.5 * S->best_rec)) return SLA_OK;
    SLA_TRY(S->V->axpby(S->V, 1.0, x, 0.0, S->xbest));
    S->best_current = 1;
    S->best_rec = rnorm;
    S->best_it = S->res->iterations;
    return SLA_OK;
}

/* x = x₀ (0 when no x₀ was given) */
sla_status sla_kreturn_x0(const sla_kstate *S, void *x)
{
    if (S->x0) return S->V->axpby(S->V, 1.0, S->x0, 0.0, x);
    return S->V->axpby(S->V, 0.0, x, 0.0, x);
}

/* The checkpoint rule of a solve that did not converge: of x₀, the last checkpoint and x, the
 * one with the smallest true residual (ties to the earlier) becomes x. w is workspace. */
static sla_status keep_best(sla_kstate *S, void *x, void *w)
{
    sla_krylov_result *res = S->res;
    if (!S->xbest || res->reason == SLA_REASON_CONVERGED) return SLA_OK;
    if (S->best_it == 0 && S->best_current) return SLA_OK;       /* x never moved from x₀ */
    const sla_space *V = S->V;
    double last = res->residual, best = isnan(last) ? INFINITY : last, tb = NAN;
    int64_t choice = -1;
    if (S->best_it > 0 && !S->best_current) {
        SLA_TRY(S->A->apply(S->A, S->op, S->xbest, w));
        SLA_TRY(V->axpby(V, 1.0, S->b, -1.0, w));
        SLA_TRY(V->norm(V, w, &tb));
        if (tb <= best) { best = tb; choice = S->best_it; }
    }
    if (S->r0 <= best) { best = S->r0; choice = 0; }
    if (choice < 0) return SLA_OK;
    if (choice == 0) SLA_TRY(sla_kreturn_x0(S, x));
    else SLA_TRY(V->axpby(V, 1.0, S->xbest, 0.0, x));
    res->kept_iteration = choice;
    res->last_residual = last;
    res->residual = best;
    return SLA_OK;
}

sla_status sla_kstart(sla_kstate *S, const sla_operator *A, sla_op op, const sla_krylov_params *P,
                      const void *b, void *x, void *r, sla_krylov_result *res, double *rnorm,
                      int *done)
{
    const sla_space *V = A->domain;
    *S = (sla_kstate){.A = A, .V = V, .op = op, .P = P, .b = b, .res = res,
                      .last_replaced = INFINITY};
    *res = (sla_krylov_result){.reason = SLA_REASON_CONVERGED, .kept_iteration = -1,
                               .last_residual = NAN, .normal_residual = NAN};
    *done = 1;
    SLA_TRY(V->norm(V, b, &res->bnorm));
    if (!isfinite(res->bnorm)) {
        res->reason = SLA_REASON_NONFINITE;
        res->residual = res->bnorm;
        return SLA_OK;
    }
    S->tol = fmax(P->rtol * res->bnorm, P->atol);
    if (res->bnorm == 0) {
        SLA_TRY(V->axpby(V, 0.0, b, 0.0, x));   /* b = 0 has the solution x = 0 */
        res->residual = 0;
        return sla_kmonitor(S, 0, 0.0);
    }
    if (P->x0_nonzero) {
        SLA_TRY(sla_ktrue_residual(S, x, r));
    } else {
        SLA_TRY(V->axpby(V, 0.0, b, 0.0, x));
        SLA_TRY(V->axpby(V, 1.0, b, 0.0, r));
        res->residual = res->bnorm;
    }
    *rnorm = res->residual;
    SLA_TRY(sla_kmonitor(S, 0, *rnorm));
    if (!isfinite(*rnorm)) {
        res->reason = SLA_REASON_NONFINITE;
        return SLA_OK;
    }
    if (*rnorm <= S->tol) return SLA_OK;
    /* the first checkpoint is x₀ (x = 0 needs no copy) */
    SLA_TRY(V->vec_create(V, &S->xbest));
    if (P->x0_nonzero) {
        SLA_TRY(V->vec_create(V, &S->x0));
        SLA_TRY(V->axpby(V, 1.0, x, 0.0, S->x0));
    }
    S->r0 = S->best_rec = *rnorm;
    S->best_current = 1;                       /* x is x₀ */
    *done = 0;
    return SLA_OK;
}

void sla_kend(sla_kstate *S)
{
    if (S->xbest) S->V->vec_free(S->V, S->xbest);
    if (S->x0) S->V->vec_free(S->V, S->x0);
    S->xbest = S->x0 = NULL;
}

sla_status sla_kverify(sla_kstate *S, void *x, void *r, int *action)
{
    SLA_TRY(sla_ktrue_residual(S, x, r));
    double t = S->res->residual;
    SLA_TRY(sla_kcheckpoint(S, t, x));
    if (t <= S->tol) {
        S->res->reason = SLA_REASON_CONVERGED;
        *action = 0;
        return SLA_OK;
    }
    *action = 2;
    if (!isfinite(t)) {
        S->res->reason = SLA_REASON_NONFINITE;
        return keep_best(S, x, r);
    }
    /* The recurrence drifted from the true residual: restart from the true one, unless the
     * previous restart did not buy at least a halving (attainable accuracy reached). A true
     * residual that grew, even past ‖b‖, may still recover after the restart (measured: MINRES
     * on bcsstk13 with Jacobi does): the checkpoints, not a stop, guard against x growing
     * worse than x₀. */
    if (!(t < 0.5 * S->last_replaced)) {
        S->res->reason = SLA_REASON_STAGNATION;
        return keep_best(S, x, r);
    }
    S->last_replaced = t;
    *action = 1;
    return SLA_OK;
}

sla_status sla_kfinish(sla_kstate *S, sla_reason reason, void *x, void *w)
{
    S->res->reason = reason;
    SLA_TRY(sla_ktrue_residual(S, x, w));
    return keep_best(S, x, w);
}
