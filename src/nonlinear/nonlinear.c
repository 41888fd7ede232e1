/* The nonlinear solver object: options, argument checks, work space, the solve entry point
 * and its dispatch to the method drivers (newton.c, newton_krylov.c, picard.c, anderson.c). */
#include <math.h>
#include <string.h>

#include "nonlinear/nl_internal.h"

void sla_nonlinear_options_init(sla_nonlinear_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->method = SLA_NONLINEAR_NEWTON;
    opt->rtol = 1e-8;
    opt->atol = 0;
    opt->stol = 1e-14;
    opt->dtol = 1e10;
    opt->max_iter = 50;
    opt->stagnation_window = 10;
    opt->line_search = 1;
    opt->armijo_c = 1e-4;
    opt->max_backtracks = 20;
    sla_solver_options_init(&opt->linear);
    opt->eta0 = 0.5;
    opt->eta_max = 0.9;
    opt->ew_gamma = 0.9;
    opt->ew_alpha = 2;
    opt->damping = 1;
    opt->anderson_depth = 5;
    opt->adjoint_rtol = 1e-10;
    opt->adjoint_atol = 0;
    opt->adjoint_max_iter = 0;
}

void sla_nonlinear_options_init_for(sla_nonlinear_options *opt, sla_nonlinear_method method)
{
    if (!opt) return;
    sla_nonlinear_options_init(opt);
    opt->method = method;
    if (method == SLA_NONLINEAR_PICARD || method == SLA_NONLINEAR_ANDERSON) opt->max_iter = 500;
}

static const char *const method_names[] = {"newton", "newton_krylov", "picard", "anderson"};

const char *sla_nonlinear_method_name(sla_nonlinear_method m)
{
    return (unsigned)m < SLA_NONLINEAR_METHOD_COUNT ? method_names[m] : "invalid";
}

sla_status sla_nonlinear_method_from_name(const char *name, sla_nonlinear_method *m)
{
    SLA_CHECK_ARG(name && m, "name or m is NULL");
    for (int i = 0; i < SLA_NONLINEAR_METHOD_COUNT; i++)
        if (strcmp(name, method_names[i]) == 0) {
            *m = (sla_nonlinear_method)i;
            return SLA_OK;
        }
    return SLA_FAIL(SLA_EINVAL, "unknown nonlinear method '%s' (newton, newton_krylov, picard, "
                    "anderson)", name);
}

const char *sla_nonlinear_reason_name(sla_nonlinear_reason r)
{
    static const char *const names[] = {
        "converged", "max iterations", "line search failed", "diverged", "non-finite",
        "stagnation", "linear solver failed", "callback failed", "error"};
    return (unsigned)r < SLA_NONLINEAR_REASON_COUNT ? names[r] : "invalid";
}

#define OPT_CHECK(cond, ...) SLA_CHECK_ARG_AS("sla_nonlinear_create", cond, __VA_ARGS__)

static int in_range(double x, double lo, double hi) { return x >= lo && x <= hi; }

static sla_status check_options(const sla_nonlinear_options *o)
{
    OPT_CHECK((unsigned)o->method < SLA_NONLINEAR_METHOD_COUNT, "options.method = %d is invalid",
              (int)o->method);
    OPT_CHECK(in_range(o->rtol, 0, INFINITY) && isfinite(o->rtol) && in_range(o->atol, 0, INFINITY)
              && isfinite(o->atol), "options.rtol = %g and options.atol = %g must be finite and "
              "≥ 0", o->rtol, o->atol);
    OPT_CHECK(in_range(o->stol, 0, 1), "options.stol = %g is not in [0, 1]", o->stol);
    OPT_CHECK(o->dtol == 0 || (o->dtol > 1 && !isnan(o->dtol)),
              "options.dtol = %g must be 0 (off) or > 1", o->dtol);
    OPT_CHECK(o->max_iter >= 0, "options.max_iter = %lld < 0", (long long)o->max_iter);
    OPT_CHECK(o->max_iter < (INT64_C(1) << 40), "options.max_iter = %lld is too large",
              (long long)o->max_iter);
    OPT_CHECK(o->stagnation_window >= 0, "options.stagnation_window = %lld < 0",
              (long long)o->stagnation_window);
    OPT_CHECK(o->line_search == 0 || o->line_search == 1, "options.line_search = %d is not 0 or 1",
              o->line_search);
    OPT_CHECK(o->armijo_c > 0 && o->armijo_c < 1, "options.armijo_c = %g is not in (0, 1)",
              o->armijo_c);
    OPT_CHECK(o->max_backtracks >= 0 && o->max_backtracks <= 1000,
              "options.max_backtracks = %lld is not in [0, 1000]", (long long)o->max_backtracks);
    OPT_CHECK(in_range(o->eta0, 0, 1) && o->eta0 < 1 && in_range(o->eta_max, 0, 1) &&
              o->eta_max < 1, "options.eta0 = %g and options.eta_max = %g must be in [0, 1)",
              o->eta0, o->eta_max);
    OPT_CHECK(o->ew_gamma > 0 && o->ew_gamma <= 1, "options.ew_gamma = %g is not in (0, 1]",
              o->ew_gamma);
    OPT_CHECK(o->ew_alpha > 1 && o->ew_alpha <= 2, "options.ew_alpha = %g is not in (1, 2]",
              o->ew_alpha);
    OPT_CHECK(o->damping > 0 && o->damping <= 1, "options.damping = %g is not in (0, 1]",
              o->damping);
    OPT_CHECK(o->anderson_depth >= 1 && o->anderson_depth <= 100,
              "options.anderson_depth = %lld is not in [1, 100]", (long long)o->anderson_depth);
    OPT_CHECK(in_range(o->adjoint_rtol, 0, 1) && in_range(o->adjoint_atol, 0, INFINITY) &&
              isfinite(o->adjoint_atol), "options.adjoint_rtol = %g must be in [0, 1] and "
              "options.adjoint_atol = %g finite and ≥ 0", o->adjoint_rtol, o->adjoint_atol);
    OPT_CHECK(o->adjoint_max_iter >= 0, "options.adjoint_max_iter = %lld < 0",
              (long long)o->adjoint_max_iter);
    if (o->method == SLA_NONLINEAR_NEWTON_KRYLOV) {
        sla_method m = o->linear.method;
        OPT_CHECK(m == SLA_METHOD_AUTO || (sla_method_is_iterative(m) && m != SLA_METHOD_LSQR),
                  "options.linear.method = %s: newton_krylov needs a Krylov method (cg, "
                  "bicgstab, gmres, minres) or auto (gmres)", sla_method_name(m));
    }
    return SLA_OK;
}

static sla_status check_problem(const sla_nonlinear_problem *P, sla_nonlinear_method method)
{
    OPT_CHECK(P->n >= 0, "problem.n = %lld < 0", (long long)P->n);
    if (P->dtype != SLA_FLOAT64 && P->dtype != SLA_FLOAT32)
        return SLA_FAIL_AS("sla_nonlinear_create", SLA_EDTYPE, "problem.dtype = %d is not float64 "
                           "or float32", (int)P->dtype);
    OPT_CHECK(P->residual, "problem.residual is NULL");
    OPT_CHECK(P->pattern || (!P->jacobian && !P->linearization),
              "problem.jacobian or problem.linearization is set but problem.pattern is NULL");
    if (P->pattern) {
        int64_t r = sla_pattern_nrows(P->pattern), c = sla_pattern_ncols(P->pattern);
        if (r != P->n || c != P->n)
            return SLA_FAIL_AS("sla_nonlinear_create", SLA_ESHAPE, "problem.pattern is %lld × "
                               "%lld but problem.n = %lld", (long long)r, (long long)c,
                               (long long)P->n);
    }
    OPT_CHECK(method != SLA_NONLINEAR_NEWTON || P->jacobian,
              "method newton needs problem.jacobian (values on problem.pattern); for a "
              "matrix-free problem use newton_krylov");
    return SLA_OK;
}

static void free_work(sla_nonlinear *nl)
{
    void *arrays[] = {nl->u, nl->F, nl->d, nl->ut, nl->Ft, nl->w, nl->tx, nl->ty, nl->tb,
                      nl->tsol, nl->tu, nl->pvals, nl->fd, nl->dX, nl->dG, nl->f_prev,
                      nl->g_prev, nl->lsq, nl->gamma, nl->history};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) sla_free(arrays[i]);
}

static sla_status alloc_work(sla_nonlinear *nl)
{
    size_t n = (size_t)nl->n, es = nl->es, nnz = (size_t)nl->nnz;
    double **dv[] = {&nl->u, &nl->F, &nl->d, &nl->ut, &nl->Ft, &nl->w};
    for (size_t i = 0; i < sizeof dv / sizeof *dv; i++)
        if (!(*dv[i] = sla_calloc(n, sizeof(double), "nonlinear work vector"))) return SLA_ENOMEM;
    void **tv[] = {&nl->tx, &nl->ty, &nl->tb, &nl->tsol, &nl->tu};
    for (size_t i = 0; i < sizeof tv / sizeof *tv; i++)
        if (!(*tv[i] = sla_calloc(n, es, "nonlinear work vector"))) return SLA_ENOMEM;
    if (!(nl->history = sla_malloc((size_t)nl->opt.max_iter + 1, sizeof(double),
                                   "residual history")))
        return SLA_ENOMEM;
    sla_nonlinear_method m = nl->opt.method;
    if (m == SLA_NONLINEAR_NEWTON || ((m == SLA_NONLINEAR_PICARD || m == SLA_NONLINEAR_ANDERSON)
                                      && nl->P.linearization))
        SLA_TRY(nl_linear_alloc(nl, &nl->lin));
    if (m == SLA_NONLINEAR_NEWTON_KRYLOV) {
        if (!(nl->fd = sla_calloc(n, sizeof(double), "finite-difference vector")))
            return SLA_ENOMEM;
        if (nl->P.linearization && !(nl->pvals = sla_calloc(nnz, es, "preconditioning matrix")))
            return SLA_ENOMEM;
    }
    if (m == SLA_NONLINEAR_ANDERSON) {
        size_t mn = (size_t)nl->opt.anderson_depth;
        if (!(nl->dX = sla_calloc(mn * n, sizeof(double), "Anderson history")) ||
            !(nl->dG = sla_calloc(mn * n, sizeof(double), "Anderson history")) ||
            !(nl->f_prev = sla_calloc(n, sizeof(double), "Anderson history")) ||
            !(nl->lsq = sla_calloc(mn * n, sizeof(double), "Anderson least squares")) ||
            !(nl->gamma = sla_calloc(n > mn ? n : mn, sizeof(double), "Anderson coefficients")))
            return SLA_ENOMEM;
    }
    return SLA_OK;
}

sla_status sla_nonlinear_create(const sla_nonlinear_problem *problem,
                                const sla_nonlinear_options *opt, sla_nonlinear **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(problem, "problem is NULL");
    sla_nonlinear_options o;
    if (opt) o = *opt; else sla_nonlinear_options_init(&o);
    SLA_TRY(check_options(&o));
    SLA_TRY(check_problem(problem, o.method));
    o.linear.initial_guess_nonzero = 0;          /* steps start from zero */
    sla_nonlinear *nl = sla_calloc(1, sizeof *nl, "nonlinear solver");
    if (!nl) return sla_error_attribute(SLA_ENOMEM, __func__);
    nl->P = *problem;
    nl->opt = o;
    nl->n = problem->n;
    nl->es = sla_dtype_size(problem->dtype);
    if (problem->pattern) {
        nl->pattern = sla_pattern_retain((sla_pattern *)problem->pattern);
        nl->P.pattern = nl->pattern;
        nl->nnz = sla_pattern_nnz(nl->pattern);
    }
    nl->lin_is_jacobian = o.method == SLA_NONLINEAR_NEWTON;
    sla_status st = alloc_work(nl);
    if (st < 0) {
        sla_nonlinear_free(&nl);
        return sla_error_attribute(st, __func__);
    }
    *out = nl;
    return SLA_OK;
}

sla_status sla_nonlinear_solve(sla_nonlinear *nl, const void *u0, void *u, sla_nonlinear_info *info)
{
    if (!info && nl) info = &nl->scratch_info;
    if (info) {
        memset(info, 0, sizeof *info);
        info->reason = SLA_NONLINEAR_ERROR;
        info->residual_norm = info->initial_residual_norm = info->tolerance = NAN;
    }
    SLA_CHECK_ARG(nl, "nl is NULL");
    info->method = nl->opt.method;
    SLA_CHECK_ARG((u0 && u) || nl->n == 0, "u0 or u is NULL");
    size_t bytes = (size_t)nl->n * nl->es;
    SLA_CHECK_ARG(!(u0 && u && (const char *)u < (const char *)u0 + bytes &&
                    (const char *)u0 < (const char *)u + bytes), "u overlaps u0");
    nl->info = info;
    nl->converged = 0;
    nl->solves++;
    sla_status st = nl_begin(nl, u0);
    if (st < 0) return nl_finish(nl, st, SLA_NONLINEAR_ERROR, u);
    if (nl_fnorm(nl) <= info->tolerance)
        return nl_finish(nl, SLA_OK, SLA_NONLINEAR_CONVERGED, u);
    if (nl->opt.max_iter == 0) return nl_finish(nl, SLA_OK, SLA_NONLINEAR_MAXITER, u);
    switch (nl->opt.method) {
    case SLA_NONLINEAR_NEWTON: st = nl_newton(nl); break;
    case SLA_NONLINEAR_NEWTON_KRYLOV: st = nl_newton_krylov(nl); break;
    case SLA_NONLINEAR_PICARD: st = nl_picard(nl); break;
    default: st = nl_anderson(nl); break;
    }
    return nl_finish(nl, st, SLA_NONLINEAR_ERROR, u);
}

const void *sla_nonlinear_solution(const sla_nonlinear *nl)
{
    if (!nl || !nl->have_solution) return NULL;
    nl_put(nl->P.dtype, nl->u, nl->tu, nl->n);
    return nl->tu;
}

void sla_nonlinear_free(sla_nonlinear **pnl)
{
    if (!pnl || !*pnl) return;
    sla_nonlinear *nl = *pnl;
    *pnl = NULL;
    nl_linear_free(&nl->lin);
    nl_linear_free(&nl->adj);
    sla_preconditioner_free(&nl->pc);
    free_work(nl);
    sla_pattern_free(&nl->pattern);
    sla_free(nl);
}
