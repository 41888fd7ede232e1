/* What every method shares: the start of a solve (u0, F(u0), the tolerance), the stopping
 * tests after each step, and the end (status, reason, description). The stopping rule is the
 * one of nonlinear.h: converged iff ‖F(u)‖₂ ≤ max(rtol·‖F(u0)‖₂, atol) for the returned u. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nonlinear/nl_internal.h"

/* reason not decided yet */
#define REASON_UNSET SLA_NONLINEAR_REASON_COUNT

/* progress that counts against stagnation: a new smallest ‖F‖ by this factor */
#define NL_STAGNATION_FACTOR (1 - 1e-3)

double nl_fnorm(const sla_nonlinear *nl) { return nl->info->residual_norm; }

void nl_count_linear(sla_nonlinear *nl, const sla_solve_info *li)
{
    nl->info->linear = *li;
    nl->info->linear_solves++;
    nl->info->linear_iterations += li->iterations;
}

sla_status nl_begin(sla_nonlinear *nl, const void *u0)
{
    sla_nonlinear_info *info = nl->info;
    info->reason = REASON_UNSET;
    info->history = nl->history;
    info->linear.reason = SLA_REASON_CONVERGED;
    info->linear.residual_norm = info->linear.relative_residual = NAN;
    info->linear.rcond = info->linear.normal_residual = NAN;
    nl->iter = 0;
    int64_t bad;
    if (!sla_all_finite(nl->P.dtype, u0, nl->n, &bad))
        return SLA_FAIL_AS(NL_SOLVE, SLA_ENONFINITE, "u0[%lld] is not finite", (long long)bad);
    nl_get(nl->P.dtype, u0, nl->u, nl->n);
    nl->have_solution = 1;
    nl->lin_at_solution = 0;
    SLA_TRY(nl_residual(nl, nl->u, nl->F, "evaluating F(u0)"));
    for (int64_t i = 0; i < nl->n; i++)
        if (!isfinite(nl->F[i]))
            return SLA_FAIL_AS(NL_SOLVE, SLA_ENONFINITE, "F(u0)[%lld] = %g is not finite: the "
                               "residual cannot be evaluated at the initial guess",
                               (long long)i, nl->F[i]);
    double f0 = nl_norm2(nl->F, nl->n);
    if (!isfinite(f0))       /* finite entries whose norm overflows */
        return SLA_FAIL_AS(NL_SOLVE, SLA_ENONFINITE, "‖F(u0)‖₂ overflows");
    info->initial_residual_norm = info->residual_norm = f0;
    info->tolerance = fmax(nl->opt.rtol * f0, nl->opt.atol);
    nl->history[0] = f0;
    return SLA_OK;
}

static int stagnated(const sla_nonlinear *nl)
{
    int64_t k = nl->info->iterations, win = nl->opt.stagnation_window;
    if (win <= 0 || k < win) return 0;
    double before = INFINITY, since = INFINITY;
    for (int64_t j = 0; j <= k - win; j++) before = fmin(before, nl->history[j]);
    for (int64_t j = k - win + 1; j <= k; j++) since = fmin(since, nl->history[j]);
    return !(since < NL_STAGNATION_FACTOR * before);
}

/* ‖F‖ grew at every step of the last window, to more than twice its value at its start: a
 * diverging iteration rather than a stagnating one */
static int growing(const sla_nonlinear *nl)
{
    int64_t k = nl->info->iterations, win = nl->opt.stagnation_window;
    for (int64_t j = k - win + 1; j <= k; j++)
        if (!(nl->history[j] > nl->history[j - 1])) return 0;
    return nl->history[k] > 2 * nl->history[k - win];
}

int nl_after_step(sla_nonlinear *nl, double step)
{
    sla_nonlinear_info *info = nl->info;
    double f = nl_norm2(nl->F, nl->n);
    int64_t k = ++info->iterations;
    nl->history[k] = f;
    info->residual_norm = f;
    info->step_norm = step;
    sla_nonlinear_reason r = REASON_UNSET;
    if (f <= info->tolerance) r = SLA_NONLINEAR_CONVERGED;
    else if (!isfinite(f)) r = SLA_NONLINEAR_NONFINITE;
    else if (nl->opt.dtol > 0 && f > nl->opt.dtol * info->initial_residual_norm)
        r = SLA_NONLINEAR_DIVERGED;
    else if (nl->opt.stol > 0 && step <= nl->opt.stol * nl_norm2(nl->u, nl->n))
        r = SLA_NONLINEAR_STAGNATION;
    else if (stagnated(nl)) r = growing(nl) ? SLA_NONLINEAR_DIVERGED : SLA_NONLINEAR_STAGNATION;
    else if (k >= nl->opt.max_iter) r = SLA_NONLINEAR_MAXITER;
    if (r == REASON_UNSET) return 0;
    info->reason = r;
    return 1;
}

static void describe(sla_nonlinear *nl, sla_status st)
{
    sla_nonlinear_info *info = nl->info;
    char lin[400] = "";
    if (nl->lin.s) snprintf(lin, sizeof lin, "; linear: %s", sla_solver_describe(nl->lin.s));
    else if (nl->opt.method == SLA_NONLINEAR_NEWTON_KRYLOV)
        snprintf(lin, sizeof lin, "; Krylov %s, preconditioner %s%s%s%s%s",
                 sla_method_name(nl->opt.linear.method == SLA_METHOD_AUTO ?
                                 SLA_METHOD_GMRES : nl->opt.linear.method),
                 nl->pc ? sla_preconditioner_describe(nl->pc) : "none",
                 nl->pc_note[0] ? " (" : "", nl->pc_note, nl->pc_note[0] ? ")" : "",
                 nl->P.jacobian_apply ? "" : ", J·v by finite differences");
    char what[300];
    if (st < 0)
        snprintf(what, sizeof what, "stopped at iteration %lld: %s (%s)",
                 (long long)info->iterations, sla_nonlinear_reason_name(info->reason),
                 sla_status_string(st));
    else if (info->converged)
        snprintf(what, sizeof what, "converged in %lld iterations: ‖F‖ = %.3g ≤ %.3g = max(rtol "
                 "%g · ‖F(u0)‖ %.3g, atol %g)", (long long)info->iterations, info->residual_norm,
                 info->tolerance, nl->opt.rtol, info->initial_residual_norm, nl->opt.atol);
    else
        snprintf(what, sizeof what, "not converged (%s) after %lld iterations: ‖F‖ = %.3g > "
                 "%.3g", sla_nonlinear_reason_name(info->reason), (long long)info->iterations,
                 info->residual_norm, info->tolerance);
    snprintf(info->description, sizeof info->description, "%s: %s%s",
             sla_nonlinear_method_name(nl->opt.method), what, lin);
}

sla_status nl_finish(sla_nonlinear *nl, sla_status st, sla_nonlinear_reason reason, void *u)
{
    sla_nonlinear_info *info = nl->info;
    if (info->reason == REASON_UNSET) info->reason = reason;
    if (st < 0 && info->reason == SLA_NONLINEAR_CONVERGED) info->reason = SLA_NONLINEAR_ERROR;
    /* converged only if the returned iterate passes the test (an invariant, checked here once
     * for every method) */
    info->converged = st >= 0 && info->reason == SLA_NONLINEAR_CONVERGED &&
                      info->residual_norm <= info->tolerance;
    if (st >= 0 && info->reason == SLA_NONLINEAR_CONVERGED && !info->converged)
        info->reason = SLA_NONLINEAR_ERROR;
    nl->converged = info->converged;
    if (st >= 0) {
        nl_put(nl->P.dtype, nl->u, u, nl->n);
        st = info->converged ? SLA_OK : SLA_NOT_CONVERGED;
    }
    describe(nl, st);
    nl->info = NULL;
    return st;
}
