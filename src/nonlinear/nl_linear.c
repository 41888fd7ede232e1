/* The linear solver of newton, picard and the adjoint: an sla solver object on matrices of the
 * problem's pattern, created once (method auto decides then) and refactored afterwards, so
 * that every later Newton step and every later solve reuses its symbolic analysis (ordering,
 * symbolic factorization, AMG hierarchy structure). Two value buffers: the one the solver
 * borrows stays unchanged while the next values are written into the other. */
#include <stdio.h>
#include <string.h>

#include "nonlinear/nl_internal.h"

sla_status nl_linear_alloc(sla_nonlinear *nl, nl_linear *lin)
{
    for (int b = 0; b < 2; b++)
        if (!lin->vals[b] && !(lin->vals[b] = sla_calloc((size_t)nl->nnz, nl->es, "matrix values")))
            return SLA_ENOMEM;
    return SLA_OK;
}

sla_status nl_linear_set(sla_nonlinear *nl, nl_linear *lin, int which, const char *func)
{
    sla_matrix A = sla_matrix_view(nl->pattern, nl->P.dtype, 1, lin->vals[which]);
    sla_status st;
    if (lin->s) {
        st = sla_solver_refactor(lin->s, lin->vals[which]);
        if (st >= 0) {
            lin->cur = which;
            lin->refactors++;
            return SLA_OK;
        }
        if (nl->opt.linear.method != SLA_METHOD_AUTO)
            return sla_error_wrap(st, func, "iteration %lld: refactoring the linear solver",
                                  (long long)nl->iter);
        /* auto chose for earlier values (e.g. Cholesky, and these are indefinite): choose again */
        sla_solver_free(&lin->s);
    }
    st = sla_solver_create(&A, &nl->opt.linear, &lin->s);
    if (st < 0) {
        lin->s = NULL;
        return sla_error_wrap(st, func, "iteration %lld: creating the linear solver",
                              (long long)nl->iter);
    }
    lin->cur = which;
    lin->creates++;
    return SLA_OK;
}

sla_status nl_linear_solve(sla_nonlinear *nl, nl_linear *lin, sla_op op, const double *b,
                           double *x, sla_solve_info *li)
{
    nl_put(nl->P.dtype, b, nl->tb, nl->n);
    sla_status st = sla_solver_solve(lin->s, op, 1, nl->tb, nl->tsol, li);
    if (st >= 0) nl_get(nl->P.dtype, nl->tsol, x, nl->n);
    return st;
}

void nl_linear_free(nl_linear *lin)
{
    sla_solver_free(&lin->s);
    sla_free(lin->vals[0]);
    sla_free(lin->vals[1]);
    memset(lin, 0, sizeof *lin);
}
