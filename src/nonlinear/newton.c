/* Newton's method with a backtracking (Armijo) line search:
 *   J(u_k) d_k = −F(u_k),   u_{k+1} = u_k + α_k d_k,
 * J from problem.jacobian on a fixed pattern; each step refactors one solver object (its
 * symbolic analysis or preconditioner structure is kept), so that a direct method costs one
 * numeric factorization per step and an iterative one one preconditioner update.
 * Dennis & Schnabel, "Numerical Methods for Unconstrained Optimization and Nonlinear
 * Equations", SIAM 1996, §6.3 (Algorithm A6.3.1); Kelley 1995, §8.2. */
#include <math.h>

#include "nonlinear/nl_internal.h"

sla_status nl_linear_failed(sla_nonlinear *nl, sla_status st, const char *what)
{
    nl->info->reason = SLA_NONLINEAR_LINEAR_SOLVER;
    if (st < 0 && what)
        return sla_error_wrap(st, NL_SOLVE, "iteration %lld: %s", (long long)nl->iter, what);
    return st < 0 ? st : SLA_NOT_CONVERGED;
}

sla_status nl_newton(sla_nonlinear *nl)
{
    nl_linear *lin = &nl->lin;
    for (;;) {
        nl->iter = nl->info->iterations + 1;
        int next = lin->s ? 1 - lin->cur : 0;
        SLA_TRY(nl_matrix(nl, NL_SOLVE, nl->P.jacobian, "jacobian", nl->u, lin->vals[next]));
        sla_status st = nl_linear_set(nl, lin, next, NL_SOLVE);
        if (st < 0) return nl_linear_failed(nl, st, NULL);
        nl->lin_at_solution = 1;
        for (int64_t i = 0; i < nl->n; i++) nl->w[i] = -nl->F[i];
        sla_solve_info li;
        st = nl_linear_solve(nl, lin, SLA_OP_N, nl->w, nl->d, &li);
        nl_count_linear(nl, &li);
        if (st < 0) return nl_linear_failed(nl, st, "solving J d = −F");
        if (!nl_finite(nl->d, nl->n)) return nl_linear_failed(nl, SLA_OK, NULL);
        double alpha;
        st = nl_line_search(nl, nl_fnorm(nl), &alpha);
        if (st != SLA_OK) return st;
        double step = nl_accept(nl, alpha);
        nl->lin_at_solution = 0;
        if (nl_after_step(nl, step)) return SLA_OK;
    }
}
