/* Backtracking line search on ‖F‖ with the Armijo condition
 *   ‖F(u + α d)‖₂ ≤ (1 − c·α)·‖F(u)‖₂,
 * the sufficient decrease of inexact Newton methods (Eisenstat & Walker 1994; Kelley,
 * "Iterative Methods for Linear and Nonlinear Equations", SIAM 1995, §8.1). Step lengths are
 * reduced by the minimizer of the parabola through φ(0) = ‖F‖², φ'(0) = −2‖F‖² and φ(α),
 * safeguarded to [0.1α, 0.5α] (Kelley's three-point rule with σ₀ = 0.1, σ₁ = 0.5); a trial
 * whose F is not finite (outside the residual's domain) counts as a failure and α shrinks by
 * 10. Without line search (options.line_search = 0) the full step is taken. */
#include <math.h>

#include "nonlinear/nl_internal.h"

static double next_alpha(double alpha, double f0, double ft)
{
    if (!isfinite(ft)) return 0.1 * alpha;
    double p0 = f0 * f0, pt = ft * ft, dp0 = -2 * p0;
    double curv = pt - p0 - dp0 * alpha;            /* > 0 when the trial failed Armijo */
    double a = curv > 0 ? -dp0 * alpha * alpha / (2 * curv) : 0.5 * alpha;
    if (!(a >= 0.1 * alpha)) a = 0.1 * alpha;
    if (a > 0.5 * alpha) a = 0.5 * alpha;
    return a;
}

/* trial point ut = u + α d, Ft = F(ut); *ft = ‖Ft‖ (NaN when not finite) */
static sla_status trial(sla_nonlinear *nl, double alpha, double *ft)
{
    nl_waxpy(nl->u, alpha, nl->d, nl->ut, nl->n);
    if (!nl_finite(nl->ut, nl->n)) {
        *ft = NAN;
        return SLA_OK;
    }
    SLA_TRY(nl_residual(nl, nl->ut, nl->Ft, "evaluating F at a trial point of the step"));
    *ft = nl_norm2(nl->Ft, nl->n);
    if (!isfinite(*ft)) *ft = NAN;
    return SLA_OK;
}

sla_status nl_line_search(sla_nonlinear *nl, double fnorm, double *alpha)
{
    double a = 1, ft;
    int any_finite = 0;
    for (int64_t j = 0;; j++) {
        SLA_TRY(trial(nl, a, &ft));
        any_finite |= !isnan(ft);
        if (!nl->opt.line_search) {
            *alpha = 1;
            if (!isnan(ft)) return SLA_OK;
            nl->info->reason = SLA_NONLINEAR_NONFINITE;
            return SLA_NOT_CONVERGED;
        }
        if (!isnan(ft) && ft <= (1 - nl->opt.armijo_c * a) * fnorm) {
            *alpha = a;
            return SLA_OK;
        }
        if (j >= nl->opt.max_backtracks) break;
        nl->info->backtracks++;
        a = next_alpha(a, fnorm, ft);
    }
    nl->info->reason = any_finite ? SLA_NONLINEAR_LINE_SEARCH : SLA_NONLINEAR_NONFINITE;
    return SLA_NOT_CONVERGED;
}

double nl_accept(sla_nonlinear *nl, double alpha)
{
    double *t = nl->u;
    nl->u = nl->ut;
    nl->ut = t;
    t = nl->F;
    nl->F = nl->Ft;
    nl->Ft = t;
    return fabs(alpha) * nl_norm2(nl->d, nl->n);
}
