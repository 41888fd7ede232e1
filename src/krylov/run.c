/* sla_krylov_run (sla/backend.h): one system by one method, on any operator table. The checks
 * here are what an external backend can get wrong; the methods then trust the table. */
#include <math.h>

#include "krylov/krylov.h"

/* SLA_EINVAL naming the first NULL slot of a space */
static sla_status check_space(const char *what, const sla_space *V)
{
    if (!V) return SLA_FAIL_AS("sla_krylov_run", SLA_EINVAL, "%s is NULL", what);
    const struct { const void *slot; const char *name; } slots[] = {
        {(const void *)V->vec_create, "vec_create"}, {(const void *)V->vec_free, "vec_free"},
        {(const void *)V->dot, "dot"}, {(const void *)V->norm, "norm"},
        {(const void *)V->axpby, "axpby"}, {(const void *)V->cg_update, "cg_update"},
        {(const void *)V->cg_direction, "cg_direction"}};
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
        if (!slots[i].slot)
            return SLA_FAIL_AS("sla_krylov_run", SLA_EINVAL, "%s->%s is NULL", what, slots[i].name);
    if (V->dtype != SLA_FLOAT64 && V->dtype != SLA_FLOAT32 && !sla_dtype_is_complex(V->dtype))
        return SLA_FAIL_AS("sla_krylov_run", SLA_EDTYPE, "%s->dtype = %d is not float64, "
                           "float32, complex128 or complex64", what, (int)V->dtype);
    if (sla_dtype_is_complex(V->dtype) && (!V->zdot || !V->zaxpby))
        return SLA_FAIL_AS("sla_krylov_run", SLA_EINVAL, "%s is %s but its zdot or zaxpby slot "
                           "is NULL", what, sla_dtype_name(V->dtype));
    if (V->n < 0)
        return SLA_FAIL_AS("sla_krylov_run", SLA_EINVAL, "%s->n = %lld < 0", what, (long long)V->n);
    return SLA_OK;
}

static sla_status check(sla_method method, const sla_operator *A, sla_op op,
                        const sla_krylov_params *P, const void *b, void *x, sla_krylov_result *res)
{
    const char *func = "sla_krylov_run";
    SLA_CHECK_ARG_AS(func, sla_krylov_method(method), "method %s is not iterative",
                     sla_method_name(method));
    SLA_CHECK_ARG_AS(func, A && P && res, "A, P or res is NULL");
    SLA_CHECK_ARG_AS(func, A->apply, "A->apply is NULL");
    SLA_CHECK_ARG_AS(func, op == SLA_OP_N || op == SLA_OP_T ||
                     (op == SLA_OP_C && A->domain && sla_dtype_is_complex(A->domain->dtype)),
                     "op = %d is not N or T (or C, for a complex operator)", (int)op);
    SLA_TRY(check_space("A->domain", A->domain));
    SLA_TRY(check_space("A->range", A->range));
    SLA_CHECK_ARG_AS(func, A->domain->dtype == A->range->dtype, "A->domain is %s but A->range %s",
                     sla_dtype_name(A->domain->dtype), sla_dtype_name(A->range->dtype));
    SLA_CHECK_ARG_AS(func, method != SLA_METHOD_LSQR || op != SLA_OP_T ||
                     !sla_dtype_is_complex(A->domain->dtype),
                     "method lsqr on %s vectors takes op N or C, not T (min ‖b − Aᵀx‖ is "
                     "conj of the op C solution for conj(b))", sla_dtype_name(A->domain->dtype));
    SLA_CHECK_ARG_AS(func, method == SLA_METHOD_LSQR || A->domain->n == A->range->n,
                     "method %s needs a square operator (domain %lld, range %lld entries)",
                     sla_method_name(method), (long long)A->domain->n, (long long)A->range->n);
    SLA_CHECK_ARG_AS(func, !A->precond || method != SLA_METHOD_LSQR,
                     "method lsqr takes no preconditioner");
    SLA_CHECK_ARG_AS(func, !A->inv_diag || A->precond, "A->inv_diag is set without A->precond");
    SLA_CHECK_ARG_AS(func, P->rtol >= 0 && P->atol >= 0 && isfinite(P->rtol) && isfinite(P->atol),
                     "P->rtol = %g and P->atol = %g must be finite and ≥ 0", P->rtol, P->atol);
    SLA_CHECK_ARG_AS(func, P->maxiter >= 0, "P->maxiter = %lld < 0", (long long)P->maxiter);
    SLA_CHECK_ARG_AS(func, P->monitor_every >= 1, "P->monitor_every = %lld < 1",
                     (long long)P->monitor_every);
    SLA_CHECK_ARG_AS(func, method != SLA_METHOD_GMRES || P->restart >= 1,
                     "P->restart = %lld < 1", (long long)P->restart);
    SLA_CHECK_ARG_AS(func, P->damp >= 0 && isfinite(P->damp), "P->damp = %g", P->damp);
    int64_t nb = op == SLA_OP_N ? A->range->n : A->domain->n;
    int64_t nx = op == SLA_OP_N ? A->domain->n : A->range->n;
    SLA_CHECK_ARG_AS(func, (b || nb == 0) && (x || nx == 0), "b or x is NULL");
    return SLA_OK;
}

sla_status sla_krylov_run(sla_method method, const sla_operator *A, sla_op op,
                          const sla_krylov_params *P, const void *b, void *x,
                          sla_krylov_result *res)
{
    SLA_TRY(check(method, A, op, P, b, x, res));
    sla_status st = sla_krylov_method(method)(A, op, P, b, x, res);
    if (method != SLA_METHOD_LSQR) res->normal_residual = NAN;
    if (st >= 0 && P->monitor && res->iterations % P->monitor_every != 0) {
        int rc = P->monitor(P->monitor_ctx, P->batch_index, P->rhs_index, res->iterations,
                            res->residual);
        if (rc != 0)
            st = SLA_FAIL(SLA_ECALLBACK, "the monitor returned %d at the end (iteration %lld, "
                          "batch element %lld, right-hand side %lld)", rc,
                          (long long)res->iterations, (long long)P->batch_index,
                          (long long)P->rhs_index);
    }
    return st;
}
