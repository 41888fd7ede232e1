/* Inexact Newton–Krylov: each step solves J(u_k) d = −F(u_k) by a Krylov method on the
 * products J v only, to the relative tolerance η_k (the forcing term), then backtracks:
 *   ‖F(u_k) + J(u_k) d_k‖ ≤ η_k ‖F(u_k)‖.
 * Forcing terms: Eisenstat & Walker, "Choosing the forcing terms in an inexact Newton
 * method", SIAM J. Sci. Comput. 17(1), 1996, choice 2 with its safeguard:
 *   η_k = γ (‖F_k‖/‖F_{k−1}‖)^α;  if γ η_{k−1}^α > 0.1: η_k = max(η_k, γ η_{k−1}^α);
 *   η_k ≤ η_max;
 * and Kelley's safeguard against oversolving the last step (Kelley 1995, §6.3, eq. 6.20):
 *   η_k ≥ 0.5·τ/‖F_k‖, τ the nonlinear tolerance.
 * J v comes from problem.jacobian_apply, or from a forward difference of F (Brown & Saad,
 * SIAM J. Sci. Stat. Comput. 11, 1990): J v ≈ (F(u + h v) − F(u))/h, h = √ε·max(1, ‖u‖)/‖v‖.
 * The preconditioner is built on the linearization A(u) ≈ J (the Amat/Pmat split) through a
 * public sla_preconditioner object, updated every step (set-up structure kept); the Krylov
 * solver is an sla_solver_create_operator object with its user preconditioner. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nonlinear/nl_internal.h"

/* The operator of the Krylov solves: J(tu)·v or J(tu)ᵀ·v (or the FD product). An error inside
 * is remembered with its message, which the Krylov layer's own "callback returned" message
 * would otherwise replace. */
typedef struct nk_ctx {
    sla_nonlinear *nl;
    const char *func;
    int use_fd;
    const void *matrix;          /* values of J on the pattern: products by SpMV, or NULL */
    sla_status err;
    char msg[1024];
} nk_ctx;

static int remember(nk_ctx *c, sla_status st)
{
    if (st >= 0) return 0;
    if (c->err == SLA_OK) {
        c->err = st;
        snprintf(c->msg, sizeof c->msg, "%s", sla_last_error());
    }
    return 1;
}

static sla_status fd_product(sla_nonlinear *nl, const void *v, void *y)
{
    nl_get(nl->P.dtype, v, nl->fd, nl->n);
    double vn = nl_norm2(nl->fd, nl->n);
    if (vn == 0) {
        memset(y, 0, (size_t)nl->n * nl->es);
        return SLA_OK;
    }
    double eps = nl->P.dtype == SLA_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
    double h = sqrt(eps) * fmax(1, nl_norm2(nl->u, nl->n)) / vn;
    nl_axpby(1, nl->u, h, nl->fd, nl->n);               /* fd = u + h v */
    SLA_TRY(nl_residual(nl, nl->fd, nl->fd, "a finite-difference product J·v"));
    if (nl->info) nl->info->jacobian_products++;
    for (int64_t i = 0; i < nl->n; i++) nl->fd[i] = (nl->fd[i] - nl->F[i]) / h;
    nl_put(nl->P.dtype, nl->fd, y, nl->n);
    return SLA_OK;
}

static int nk_apply(void *ctx, sla_op op, int64_t b, const void *x, void *y)
{
    (void)b;
    nk_ctx *c = ctx;
    sla_nonlinear *nl = c->nl;
    if (c->matrix) {
        sla_matrix J = sla_matrix_view(nl->pattern, nl->P.dtype, 1, c->matrix);
        return remember(c, sla_error_attribute(sla_spmv(op, 1, &J, x, 0, 1, 0, y), c->func));
    }
    if (c->use_fd) {
        if (op != SLA_OP_N)
            return remember(c, SLA_FAIL_AS(c->func, SLA_EINVAL, "finite-difference products "
                                           "J·v have no transpose; give jacobian_apply"));
        return remember(c, fd_product(nl, x, y));
    }
    return remember(c, nl_jacobian_apply(nl, c->func, op, nl->tu, x, y));
}

/* preconditioners of the operator solves: the NK preconditioner, or Picard's factors */
static int nk_precond(void *ctx, sla_op op, int64_t b, const void *r, void *z)
{
    (void)b;
    nk_ctx *c = ctx;
    return remember(c, sla_preconditioner_apply(c->nl->pc, op, 0, r, z));
}

static int lin_precond(void *ctx, sla_op op, int64_t b, const void *r, void *z)
{
    (void)b;
    nk_ctx *c = ctx;
    sla_status st = sla_solver_solve(c->nl->lin.s, op, 1, r, z, NULL);
    return remember(c, st < 0 ? st : SLA_OK);      /* a Krylov factor's warning is harmless */
}

sla_status nl_krylov_solve(sla_nonlinear *nl, const char *func, sla_op op, double rtol,
                           double atol, int64_t maxiter, int use_fd, const void *matrix,
                           const double *b, double *x, sla_solve_info *li)
{
    nk_ctx c = {.nl = nl, .func = func, .use_fd = use_fd, .matrix = matrix};
    sla_solver_options o = nl->opt.linear;
    if (o.method == SLA_METHOD_AUTO) o.method = SLA_METHOD_GMRES;
    o.rtol = rtol;
    o.atol = atol;
    if (maxiter > 0) o.maxiter = maxiter;
    o.initial_guess_nonzero = 0;
    if (o.precond != SLA_PRECOND_USER) {
        o.precond = SLA_PRECOND_NONE;
        if (nl->pc) {
            o.precond = SLA_PRECOND_USER;
            o.user_precond = nk_precond;
            o.user_precond_ctx = &c;
        } else if (nl->lin.s && !nl->lin_is_jacobian) {
            o.precond = SLA_PRECOND_USER;
            o.user_precond = lin_precond;
            o.user_precond_ctx = &c;
        }
    }
    sla_solver *s = NULL;
    sla_status st = sla_solver_create_operator(nl->n, nl->P.dtype, 1, nk_apply, &c, &o, &s);
    if (st < 0) return sla_error_wrap(st, func, "creating the Krylov solver");
    nl_put(nl->P.dtype, b, nl->tb, nl->n);
    st = sla_solver_solve(s, op, 1, nl->tb, nl->tsol, li);
    sla_solver_free(&s);
    if (c.err < 0) {                   /* the callback's own status and message */
        size_t fl = strlen(func);
        const char *m = strncmp(c.msg, func, fl) == 0 && c.msg[fl] == ':' ? c.msg + fl + 2 : c.msg;
        sla_error_set(c.err, func, "%s", m);
        li->converged = 0;
        li->reason = SLA_REASON_ERROR;
        return c.err;
    }
    if (st >= 0) nl_get(nl->P.dtype, nl->tsol, x, nl->n);
    return st;
}

/* precond = auto on the linearization: ILU(0), then Jacobi, then none (a zero pivot or zero
 * diagonal gives way to the next, noted in the description) */
static sla_status pc_create(sla_nonlinear *nl)
{
    sla_matrix A = sla_matrix_view(nl->pattern, nl->P.dtype, 1, nl->pvals);
    sla_precond want = nl->opt.linear.precond;
    if (want != SLA_PRECOND_AUTO) {
        nl->pc_kind = want;
        sla_status st = sla_preconditioner_create(&A, want, &nl->pc);
        return st < 0 ? sla_error_wrap(st, NL_SOLVE, "iteration %lld: the preconditioner on the "
                                       "linearization", (long long)nl->iter) : SLA_OK;
    }
    const sla_precond cand[] = {SLA_PRECOND_ILU0, SLA_PRECOND_JACOBI};
    for (size_t i = 0; i < sizeof cand / sizeof *cand; i++) {
        sla_status st = sla_preconditioner_create(&A, cand[i], &nl->pc);
        if (st == SLA_OK) {
            nl->pc_kind = cand[i];
            return SLA_OK;
        }
        if (st != SLA_EBREAKDOWN) return st;
        sla_text_append(nl->pc_note, sizeof nl->pc_note, nl->pc_note[0] ? "; " : "auto: ",
                        sla_last_error());
    }
    sla_clear_error();
    nl->pc_kind = SLA_PRECOND_NONE;
    return SLA_OK;
}

sla_status nl_nk_precond_update(sla_nonlinear *nl, const double *u)
{
    sla_precond want = nl->opt.linear.precond;
    if (!nl->P.linearization || want == SLA_PRECOND_USER || want == SLA_PRECOND_NONE)
        return SLA_OK;
    if (nl->pc_tried && !nl->pc) return SLA_OK;       /* auto found none that works */
    SLA_TRY(nl_matrix(nl, NL_SOLVE, nl->P.linearization, "linearization", u, nl->pvals));
    if (!nl->pc) {
        nl->pc_tried = 1;
        return pc_create(nl);
    }
    sla_status st = sla_preconditioner_update(nl->pc, nl->pvals);
    return st < 0 ? sla_error_wrap(st, NL_SOLVE, "iteration %lld: updating the preconditioner",
                                   (long long)nl->iter) : SLA_OK;
}

/* Eisenstat–Walker choice 2 with the safeguards above */
static double forcing(const sla_nonlinear *nl, int64_t k, double f, double f_prev,
                      double eta_prev)
{
    const sla_nonlinear_options *o = &nl->opt;
    double eta = o->eta0;
    if (k > 0) {
        eta = o->ew_gamma * pow(f / f_prev, o->ew_alpha);
        double s = o->ew_gamma * pow(eta_prev, o->ew_alpha);
        if (s > 0.1) eta = fmax(eta, s);
    }
    eta = fmin(eta, o->eta_max);
    eta = fmax(eta, 0.5 * nl->info->tolerance / f);
    return fmin(eta, o->eta_max);
}

sla_status nl_newton_krylov(sla_nonlinear *nl)
{
    double f_prev = 0, eta = 0;
    for (int64_t k = 0;; k++) {
        nl->iter = k + 1;
        double f = nl_fnorm(nl);
        eta = forcing(nl, k, f, f_prev, eta);
        sla_status st = nl_nk_precond_update(nl, nl->u);
        if (st < 0) return nl_linear_failed(nl, st, NULL);
        nl_put(nl->P.dtype, nl->u, nl->tu, nl->n);
        for (int64_t i = 0; i < nl->n; i++) nl->w[i] = -nl->F[i];
        sla_solve_info li;
        st = nl_krylov_solve(nl, NL_SOLVE, SLA_OP_N, eta, nl->opt.linear.atol, 0,
                             !nl->P.jacobian_apply, NULL, nl->w, nl->d, &li);
        nl_count_linear(nl, &li);
        if (st == SLA_ECALLBACK) {
            nl->info->reason = SLA_NONLINEAR_CALLBACK;
            return st;
        }
        /* a Krylov solve that stopped above η still gives a step worth the line search */
        if (st < 0) return nl_linear_failed(nl, st, "the Krylov solve of J d = −F");
        if (!nl_finite(nl->d, nl->n)) return nl_linear_failed(nl, SLA_OK, NULL);
        double alpha;
        st = nl_line_search(nl, f, &alpha);
        if (st != SLA_OK) return st;
        double step = nl_accept(nl, alpha);
        f_prev = f;
        if (nl_after_step(nl, step)) return SLA_OK;
    }
}
