/* The user's callbacks, counted, with the failure message nonlinear.h documents: which
 * callback, what it returned, where (iteration, what was being evaluated), then the message
 * the callback left in sla_last_error(), if any. */
#include <stdio.h>
#include <string.h>

#include "nonlinear/nl_internal.h"

static sla_status callback_failed(sla_nonlinear *nl, const char *func, const char *what,
                                  int rc, const char *where)
{
    char inner[768];
    snprintf(inner, sizeof inner, "%s", sla_last_error());
    if (nl->info) nl->info->reason = SLA_NONLINEAR_CALLBACK;
    char at[64] = "the adjoint";
    if (nl->iter >= 0) snprintf(at, sizeof at, "iteration %lld", (long long)nl->iter);
    return SLA_FAIL_AS(func, SLA_ECALLBACK, "the %s callback returned %d (%s, %s)%s%s", what, rc,
                       at, where, inner[0] ? ": " : "", inner);
}

sla_status nl_residual(sla_nonlinear *nl, const double *u, double *F, const char *where)
{
    nl_put(nl->P.dtype, u, nl->tx, nl->n);
    sla_clear_error();
    int rc = nl->P.residual(nl->P.ctx, nl->tx, nl->ty);
    if (nl->info) nl->info->residual_evaluations++;
    if (rc != 0) return callback_failed(nl, NL_SOLVE, "residual", rc, where);
    nl_get(nl->P.dtype, nl->ty, F, nl->n);
    return SLA_OK;
}

sla_status nl_matrix(sla_nonlinear *nl, const char *func, sla_jacobian_fn fn, const char *what,
                     const double *u, void *values)
{
    nl_put(nl->P.dtype, u, nl->tx, nl->n);
    sla_clear_error();
    int rc = fn(nl->P.ctx, nl->tx, values);
    if (nl->info) nl->info->jacobian_evaluations++;
    if (rc != 0) return callback_failed(nl, func, what, rc, "evaluating the matrix");
    int64_t bad;
    if (!sla_all_finite(nl->P.dtype, values, nl->nnz, &bad)) {
        const int64_t *rp = sla_pattern_rowptr(nl->pattern);
        int64_t row = 0;
        while (rp[row + 1] <= bad) row++;
        return SLA_FAIL_AS(func, SLA_ENONFINITE, "the %s at iteration %lld has a non-finite "
                           "value at slot %lld (row %lld, col %d)", what, (long long)nl->iter,
                           (long long)bad, (long long)row, sla_pattern_colind(nl->pattern)[bad]);
    }
    return SLA_OK;
}

sla_status nl_jacobian_apply(sla_nonlinear *nl, const char *func, sla_op op, const void *u,
                             const void *v, void *y)
{
    sla_clear_error();
    int rc = nl->P.jacobian_apply(nl->P.ctx, op, u, v, y);
    if (nl->info) nl->info->jacobian_products++;
    if (rc != 0)
        return callback_failed(nl, func, "jacobian_apply", rc,
                               op == SLA_OP_N ? "J·v" : "Jᵀ·v");
    return SLA_OK;
}
