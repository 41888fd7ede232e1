/* Anderson acceleration of the fixed-point map G(u) = u + d(u), d(u) the Picard direction
 * (−A(u)⁻¹F(u) with a linearization, −F(u) without), depth m, damping β:
 *   f_k = d(u_k);  m_k = min(m, k);
 *   γ_k = argmin ‖f_k − ΔF_k γ‖₂,  ΔF_k = [Δf_{k−m_k} … Δf_{k−1}],  Δf_i = f_{i+1} − f_i;
 *   u_{k+1} = u_k + β f_k − (ΔX_k + β ΔF_k) γ_k,  ΔX_k = [Δu_{k−m_k} … Δu_{k−1}];
 * u_1 = u_0 + β f_0. The least-squares problem is solved by LAPACK's dgelsy (QR with column
 * pivoting, rank-revealing at rcond 1e-12), so nearly dependent differences do not blow γ up.
 * Histories ΔX, ΔF are circular [m][n] (float64). Walker & Ni, "Anderson acceleration for
 * fixed-point iterations", SIAM J. Numer. Anal. 49(4), 2011, Algorithm AA; Anderson, J. ACM
 * 12, 1965. */
#include <lapacke.h>
#include <math.h>

#include "nonlinear/nl_internal.h"

#define NL_ANDERSON_RCOND 1e-12

/* γ = argmin ‖f − ΔF γ‖ over the mk stored columns (slots 0..mk−1); γ into nl->gamma */
static sla_status least_squares(sla_nonlinear *nl, const double *f, int64_t mk)
{
    int64_t n = nl->n;
    if (n > INT32_MAX) return SLA_FAIL_AS(NL_SOLVE, SLA_EINVAL, "anderson: n = %lld exceeds "
                                          "LAPACK's int32 sizes", (long long)n);
    for (int64_t j = 0; j < mk; j++)
        for (int64_t i = 0; i < n; i++) nl->lsq[j * n + i] = nl->dG[j * n + i];
    for (int64_t i = 0; i < n; i++) nl->gamma[i] = f[i];
    lapack_int jpvt[100] = {0}, rank = 0;
    lapack_int info = LAPACKE_dgelsy(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)mk, 1, nl->lsq,
                                     (lapack_int)n, nl->gamma, (lapack_int)n, jpvt,
                                     NL_ANDERSON_RCOND, &rank);
    if (info != 0)
        return SLA_FAIL_AS(NL_SOLVE, info < 0 ? SLA_EINTERNAL : SLA_EBACKEND,
                           "anderson: LAPACKE_dgelsy returned %d at iteration %lld", (int)info,
                           (long long)nl->iter);
    return SLA_OK;
}

sla_status nl_anderson(sla_nonlinear *nl)
{
    int64_t n = nl->n, m = nl->opt.anderson_depth;
    double beta = nl->opt.damping;
    double *f = nl->d;
    for (int64_t k = 0;; k++) {
        nl->iter = k + 1;
        sla_status st = nl_picard_direction(nl, nl->u, nl->F, f);
        if (st != SLA_OK) return st;
        int64_t mk = k < m ? k : m;
        if (k > 0) {                                   /* Δf_{k−1} into its slot */
            double *df = nl->dG + ((k - 1) % m) * n;
            for (int64_t i = 0; i < n; i++) df[i] = f[i] - nl->f_prev[i];
        }
        for (int64_t i = 0; i < n; i++) {
            nl->f_prev[i] = f[i];
            nl->w[i] = beta * f[i];                    /* the step, before the correction */
        }
        if (mk > 0) {
            SLA_TRY(least_squares(nl, f, mk));
            for (int64_t j = 0; j < mk; j++) {
                double g = nl->gamma[j];
                const double *dx = nl->dX + j * n, *df = nl->dG + j * n;
                for (int64_t i = 0; i < n; i++) nl->w[i] -= g * (dx[i] + beta * df[i]);
            }
        }
        for (int64_t i = 0; i < n; i++) nl->ut[i] = nl->u[i] + nl->w[i];
        double step;
        st = nl_take_step(nl, &step);
        if (st != SLA_OK) return st;
        double *dx = nl->dX + (k % m) * n;             /* Δu_k into its slot */
        for (int64_t i = 0; i < n; i++) dx[i] = nl->w[i];
        nl->lin_at_solution = 0;
        if (nl_after_step(nl, step)) return SLA_OK;
    }
}
