/* The adjoint of a nonlinear solve (implicit function theorem). At the solution u* of
 * F(u, θ) = 0, differentiating F(u*(θ), θ) = 0 gives J·u*'(θ) = −∂F/∂θ, so for a loss L(u*)
 * with g = ∂L/∂u*:
 *   ∂L/∂θ = gᵀ u*'(θ) = −gᵀ J⁻¹ ∂F/∂θ = −λᵀ ∂F/∂θ,   Jᵀ λ = g,
 * one linear solve with Jᵀ at u*, whatever path the iteration took to u* (Griewank & Walther,
 * "Evaluating Derivatives", SIAM 2008, §15.1; the adjoint of torch-sla's nonlinear_solve).
 *
 * Pattern path (problem.jacobian): the last Newton step's solver object holds J(u_{K−1}), not
 * J(u*). Rather than refactor, λ is refined with it (op = T on its factors or preconditioner):
 *   λ₀ = 0; r_j = g − J(u*)ᵀλ_j; λ_{j+1} = λ_j + J(u_{K−1})⁻ᵀ r_j,
 * which contracts by ‖I − J(u*)ᵀJ(u_{K−1})⁻ᵀ‖ = O(‖u* − u_{K−1}‖), i.e. one or two steps after
 * a Newton iteration that converged, and which also makes up for an iterative solver's own
 * tolerance. Residuals are computed with J(u*) (one SpMV with op = T). If a step contracts by
 * less than 1/2, the solver is refactored at J(u*) (symbolic analysis kept) and the refinement
 * goes on. Matrix-free path (problem.jacobian_apply): a Krylov solve on Jᵀ. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/kernels.h"
#include "nonlinear/nl_internal.h"

#define NL_REFINE_MAX 20
/* contraction below which the refinement refactors at J(u*), and below which it has stalled */
#define NL_REFINE_SLOW 0.5
#define NL_REFINE_STALL 0.9

static void info_init(sla_solve_info *info)
{
    memset(info, 0, sizeof *info);
    info->reason = SLA_REASON_ERROR;
    info->residual_norm = info->relative_residual = info->rcond = NAN;
    info->normal_residual = NAN;
}

/* J(u*) into one buffer of L: *jstar its index, *at_star 1 if L's solver holds it. The
 * values of an earlier vjp of the same solve are reused. */
static sla_status jacobian_at_solution(sla_nonlinear *nl, nl_linear *L, int *jstar, int *at_star)
{
    SLA_TRY(nl_linear_alloc(nl, L) < 0 ? sla_error_attribute(SLA_ENOMEM, NL_VJP) : SLA_OK);
    int is_lin = L == &nl->lin;
    if (L->s && ((is_lin && nl->lin_at_solution) || (!is_lin && nl->adj_solve == nl->solves))) {
        *jstar = L->cur;
        *at_star = 1;
        return SLA_OK;
    }
    if (is_lin && L->s && nl->jstar_solve == nl->solves) {
        *jstar = 1 - L->cur;
        *at_star = 0;
        return SLA_OK;
    }
    int b = L->s ? 1 - L->cur : 0;
    SLA_TRY(nl_matrix(nl, NL_VJP, nl->P.jacobian, "jacobian", nl->u, L->vals[b]));
    *jstar = b;
    *at_star = 0;
    nl->jstar_solve = nl->solves;
    if (!L->s || !is_lin) {              /* no solver yet, or the adjoint's own one: at u* */
        SLA_TRY(nl_linear_set(nl, L, b, NL_VJP));
        *at_star = 1;
        if (is_lin) nl->lin_at_solution = 1;
        else nl->adj_solve = nl->solves;
    }
    return SLA_OK;
}

/* r = gs − J(u*)ᵀ λ in float64 (jd: J(u*)'s values as doubles), so that a float32 problem's
 * refinement converges past float32's rounding (mixed-precision iterative refinement) */
static sla_status residual(sla_nonlinear *nl, const double *jd, const double *gs,
                           const double *lam, double *r)
{
    sla_matrix J = sla_matrix_view(nl->pattern, SLA_FLOAT64, 1, jd);
    sla_status st = sla_spmv(SLA_OP_T, 1, &J, lam, 0, 1, 0, r);
    if (st < 0) return sla_error_attribute(st, NL_VJP);
    for (int64_t i = 0; i < nl->n; i++) r[i] = gs[i] - r[i];
    return SLA_OK;
}

static sla_status refine_loop(sla_nonlinear *nl, nl_linear *L, int jstar, int at_star,
                              const double *jd, const double *gs, double tol, double *lam,
                              int64_t maxit, double *rn_out, sla_solve_info *info);

/* λ by iterative refinement (pattern path); *rn the final ‖gs − J(u*)ᵀλ‖ */
static sla_status refine(sla_nonlinear *nl, const double *gs, double tol, double *lam,
                         double *rn_out, sla_solve_info *info)
{
    nl_linear *L = nl->lin_is_jacobian ? &nl->lin : &nl->adj;
    int jstar, at_star;
    SLA_TRY(jacobian_at_solution(nl, L, &jstar, &at_star));
    int64_t maxit = nl->opt.adjoint_max_iter > 0 ? nl->opt.adjoint_max_iter : NL_REFINE_MAX;
    double *jd = L->vals[jstar];
    if (nl->P.dtype != SLA_FLOAT64) {
        if (!(jd = sla_malloc((size_t)nl->nnz, sizeof(double), "J(u*) in float64")))
            return sla_error_attribute(SLA_ENOMEM, NL_VJP);
        nl_get(nl->P.dtype, L->vals[jstar], jd, nl->nnz);
    }
    sla_status st = refine_loop(nl, L, jstar, at_star, jd, gs, tol, lam, maxit, rn_out, info);
    if (jd != L->vals[jstar]) sla_free(jd);
    return st;
}

static sla_status refine_loop(sla_nonlinear *nl, nl_linear *L, int jstar, int at_star,
                              const double *jd, const double *gs, double tol, double *lam,
                              int64_t maxit, double *rn_out, sla_solve_info *info)
{
    double *r = nl->w, *dl = nl->d;
    memset(lam, 0, (size_t)nl->n * sizeof *lam);
    memcpy(r, gs, (size_t)nl->n * sizeof *r);
    double rn = nl_norm2(r, nl->n);
    int refactored = 0, start_at_star = at_star;
    info->reason = SLA_REASON_MAXITER;
    for (int64_t it = 0; it < maxit; it++) {
        sla_solve_info li;
        sla_status st = nl_linear_solve(nl, L, SLA_OP_T, r, dl, &li);
        info->iterations += li.iterations;
        info->method = li.method;
        info->precond = li.precond;
        info->rcond = li.rcond;
        if (st < 0) return sla_error_wrap(st, NL_VJP, "the adjoint solve J(u)ᵀ λ = g");
        nl_axpby(1, dl, 1, lam, nl->n);
        SLA_TRY(residual(nl, jd, gs, lam, r));
        double rn_new = nl_norm2(r, nl->n);
        if (!isfinite(rn_new))
            return SLA_FAIL_AS(NL_VJP, SLA_ENONFINITE, "the adjoint solve gave a non-finite "
                               "λ (step %lld of the refinement)", (long long)it + 1);
        if (rn_new <= tol) {
            rn = rn_new;
            info->reason = SLA_REASON_CONVERGED;
            break;
        }
        if (!(rn_new <= NL_REFINE_SLOW * rn)) {
            if (!at_star) {
                SLA_TRY(nl_linear_set(nl, L, jstar, NL_VJP));
                at_star = refactored = 1;
                if (L == &nl->lin) nl->lin_at_solution = 1;
            } else if (!(rn_new <= NL_REFINE_STALL * rn)) {
                rn = rn_new;
                info->reason = SLA_REASON_STAGNATION;
                break;
            }
        }
        rn = rn_new;
    }
    *rn_out = rn;
    snprintf(info->description, sizeof info->description, "adjoint: iterative refinement on "
             "J(u*)ᵀ with %s (its matrix: %s%s)", sla_solver_describe(L->s),
             start_at_star ? "J(u*)" : "the Jacobian of the last Newton step",
             refactored ? ", refactored at u* after a slow step" : "");
    return SLA_OK;
}

/* A Krylov solve with Jᵀ, preconditioned by newton_krylov's preconditioner (op = T) or
 * Picard's factors: J(u*) by SpMV when problem.jacobian gives it, else jacobian_apply */
static sla_status krylov(sla_nonlinear *nl, const double *gs, double tol, double *lam,
                         double *rn_out, sla_solve_info *info)
{
    nl_put(nl->P.dtype, nl->u, nl->tu, nl->n);
    const void *J = NULL;
    if (nl->P.jacobian) {
        SLA_TRY(nl_linear_alloc(nl, &nl->adj) < 0 ? sla_error_attribute(SLA_ENOMEM, NL_VJP) : 0);
        if (nl->jkrylov_solve != nl->solves)
            SLA_TRY(nl_matrix(nl, NL_VJP, nl->P.jacobian, "jacobian", nl->u, nl->adj.vals[0]));
        nl->jkrylov_solve = nl->solves;
        J = nl->adj.vals[0];
    }
    int64_t maxit = nl->opt.adjoint_max_iter > 0 ? nl->opt.adjoint_max_iter : 10 * nl->n + 100;
    /* tol = max(rtol·‖g‖, atol) already: the Krylov rule with rtol 0 and atol tol */
    sla_status st = nl_krylov_solve(nl, NL_VJP, SLA_OP_T, 0, tol, maxit, 0, J, gs, lam, info);
    if (st < 0) return st;
    *rn_out = info->residual_norm;
    char d[SLA_DESCRIPTION_LEN] = "adjoint: ";
    sla_text_append(d, sizeof d, "", J ? "J(u*) by SpMV, " : "matrix-free, ");
    sla_text_append(d, sizeof d, "", info->description);
    memcpy(info->description, d, sizeof d);
    return SLA_OK;
}

static sla_status vjp_checked(sla_nonlinear *nl, const void *g, void *lambda,
                              sla_solve_info *info)
{
    int64_t n = nl->n;
    double *gs = nl->Ft, *lam = nl->ut;
    nl_get(nl->P.dtype, g, gs, n);
    double amax = 0;
    for (int64_t i = 0; i < n; i++) amax = fmax(amax, fabs(gs[i]));
    int e = 0;
    double rn = 0, gn = 0;
    if (amax == 0) {
        memset(lam, 0, (size_t)n * sizeof *lam);
        info->reason = SLA_REASON_CONVERGED;
        snprintf(info->description, sizeof info->description, "adjoint: g = 0, λ = 0");
    } else {
        frexp(amax, &e);                 /* amax = m·2^e, m ∈ [0.5, 1): scale by 2^−e */
        for (int64_t i = 0; i < n; i++) gs[i] = ldexp(gs[i], -e);
        gn = nl_norm2(gs, n);
        double rtol = nl->opt.adjoint_rtol;
        if (nl->P.dtype == SLA_FLOAT32 && !nl->P.jacobian) rtol = fmax(rtol, 64 * FLT_EPSILON);
        double tol = fmax(rtol * gn, ldexp(nl->opt.adjoint_atol, -e));
        /* newton: refinement on its solver; newton_krylov: Krylov with its preconditioner;
         * otherwise a solver on J(u*) if there is a pattern, else matrix-free Krylov */
        int use_refine = nl->lin_is_jacobian || (nl->P.jacobian && !nl->pc);
        sla_status st = use_refine ? refine(nl, gs, tol, lam, &rn, info)
                                   : krylov(nl, gs, tol, lam, &rn, info);
        if (st < 0) return st;
        for (int64_t i = 0; i < n; i++) lam[i] = ldexp(lam[i], e);
    }
    info->converged = info->reason == SLA_REASON_CONVERGED;
    info->residual_norm = ldexp(rn, e);
    info->relative_residual = gn > 0 ? rn / gn : 0;
    if (lambda) nl_put(nl->P.dtype, lam, lambda, n);
    if (nl->P.param_vjp) {
        for (int64_t i = 0; i < n; i++) nl->w[i] = -lam[i];
        nl_put(nl->P.dtype, nl->w, nl->tx, n);
        nl_put(nl->P.dtype, nl->u, nl->tu, n);
        sla_clear_error();
        int rc = nl->P.param_vjp(nl->P.ctx, nl->tu, nl->tx);
        if (rc != 0) {
            char inner[768];
            snprintf(inner, sizeof inner, "%s", sla_last_error());
            info->converged = 0;
            info->reason = SLA_REASON_ERROR;
            return SLA_FAIL_AS(NL_VJP, SLA_ECALLBACK, "the param_vjp callback returned %d%s%s",
                               rc, inner[0] ? ": " : "", inner);
        }
    }
    return info->converged ? SLA_OK : SLA_NOT_CONVERGED;
}

sla_status sla_nonlinear_vjp(sla_nonlinear *nl, const void *g, void *lambda, sla_solve_info *info)
{
    sla_solve_info scratch;
    if (!info) info = &scratch;
    info_init(info);
    SLA_CHECK_ARG(nl, "nl is NULL");
    SLA_CHECK_ARG(nl->have_solution, "no sla_nonlinear_solve has run on this object yet");
    SLA_CHECK_ARG(nl->converged, "the last sla_nonlinear_solve did not converge: the implicit "
                  "function theorem gives the gradient at a solution of F(u) = 0 only");
    SLA_CHECK_ARG(nl->P.jacobian || nl->P.jacobian_apply, "the adjoint needs J(u*)ᵀ: "
                  "problem.jacobian (on problem.pattern) or problem.jacobian_apply");
    SLA_CHECK_ARG(g || nl->n == 0, "g is NULL");
    size_t bytes = (size_t)nl->n * nl->es;
    const sla_buf out[] = {{"lambda", lambda, bytes}}, in[] = {{"g", g, bytes}};
    SLA_TRY(sla_check_aliasing(__func__, out, 1, in, 1));
    int64_t bad;
    if (!sla_all_finite(nl->P.dtype, g, nl->n, &bad))
        return SLA_FAIL(SLA_ENONFINITE, "g[%lld] is not finite", (long long)bad);
    nl->info = NULL;
    nl->iter = -1;
    return sla_error_attribute(vjp_checked(nl, g, lambda, info), __func__);
}
