/* Picard iteration (fixed point with a user linearization):
 *   A(u_k) d_k = −F(u_k),   u_{k+1} = u_k + ω d_k,
 * which for F(u) = A(u) u − b(u) is the classical A(u_k) u_{k+1} = b(u_k) (ω = 1), e.g. the
 * frozen-coefficient iteration of −∇·(κ(u)∇u) = f. Without a linearization, d_k = −F(u_k):
 * the fixed point u = G(u) of F(u) = u − G(u) (torch-sla's picard). A(u) goes through one
 * solver object on the pattern, refactored every step. Linear convergence, at the rate of
 * the contraction of G; Kelley 1995, ch. 4. */
#include "nonlinear/nl_internal.h"

sla_status nl_picard_direction(sla_nonlinear *nl, const double *u, const double *F, double *d)
{
    for (int64_t i = 0; i < nl->n; i++) d[i] = -F[i];
    if (!nl->P.linearization) return SLA_OK;
    nl_linear *lin = &nl->lin;
    int next = lin->s ? 1 - lin->cur : 0;
    SLA_TRY(nl_matrix(nl, NL_SOLVE, nl->P.linearization, "linearization", u, lin->vals[next]));
    sla_status st = nl_linear_set(nl, lin, next, NL_SOLVE);
    if (st < 0) return nl_linear_failed(nl, st, NULL);
    nl->lin_at_solution = 1;
    for (int64_t i = 0; i < nl->n; i++) nl->w[i] = d[i];
    sla_solve_info li;
    st = nl_linear_solve(nl, lin, SLA_OP_N, nl->w, d, &li);
    nl_count_linear(nl, &li);
    if (st < 0) return nl_linear_failed(nl, st, "solving A(u) d = −F(u)");
    if (!nl_finite(d, nl->n)) return nl_linear_failed(nl, SLA_OK, NULL);
    return SLA_OK;
}

/* Takes the trial point ut (its F into Ft): SLA_OK and the step length, or SLA_NOT_CONVERGED
 * with reason non-finite (u stays the last finite iterate) */
sla_status nl_take_step(sla_nonlinear *nl, double *step)
{
    if (nl_finite(nl->ut, nl->n)) {
        SLA_TRY(nl_residual(nl, nl->ut, nl->Ft, "evaluating F at the new iterate"));
        if (nl_finite(nl->Ft, nl->n)) {
            for (int64_t i = 0; i < nl->n; i++) nl->w[i] = nl->ut[i] - nl->u[i];
            *step = nl_norm2(nl->w, nl->n);
            nl_accept(nl, 0);
            return SLA_OK;
        }
    }
    nl->info->reason = SLA_NONLINEAR_NONFINITE;
    return SLA_NOT_CONVERGED;
}

sla_status nl_picard(sla_nonlinear *nl)
{
    for (;;) {
        nl->iter = nl->info->iterations + 1;
        sla_status st = nl_picard_direction(nl, nl->u, nl->F, nl->d);
        if (st != SLA_OK) return st;
        nl_waxpy(nl->u, nl->opt.damping, nl->d, nl->ut, nl->n);
        double step;
        st = nl_take_step(nl, &step);
        if (st != SLA_OK) return st;
        nl->lin_at_solution = 0;
        if (nl_after_step(nl, step)) return SLA_OK;
    }
}
