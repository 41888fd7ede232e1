/* Solver objects: argument checks, dispatch to backends, the generic solve VJP. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solve/backend.h"

void sla_solver_options_init(sla_solver_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->method = SLA_METHOD_AUTO;
    opt->precond = SLA_PRECOND_AUTO;
    opt->ordering = SLA_ORDERING_AUTO;
    opt->rtol = 1e-10;
    opt->atol = 0;
    opt->maxiter = -1;           /* resolved to 10·n + 100 at create */
    opt->restart = 50;
    opt->monitor_every = 1;
}

static sla_status check_options(const sla_solver_options *o)
{
    SLA_CHECK_ARG((unsigned)o->method < SLA_METHOD_COUNT, "options.method = %d is invalid", (int)o->method);
    SLA_CHECK_ARG((unsigned)o->precond < SLA_PRECOND_COUNT, "options.precond = %d is invalid", (int)o->precond);
    SLA_CHECK_ARG((unsigned)o->ordering < SLA_ORDERING_COUNT, "options.ordering = %d is invalid", (int)o->ordering);
    SLA_CHECK_ARG(o->rtol >= 0 && o->atol >= 0 && isfinite(o->rtol) && isfinite(o->atol),
                  "options.rtol = %g and options.atol = %g must be finite and ≥ 0", o->rtol, o->atol);
    SLA_CHECK_ARG(o->restart >= 1, "options.restart = %lld < 1", (long long)o->restart);
    SLA_CHECK_ARG(o->precond != SLA_PRECOND_USER || o->user_precond,
                  "options.precond = user but options.user_precond is NULL");
    return SLA_OK;
}

static sla_status solver_alloc(int64_t n, sla_dtype dtype, int64_t batch,
                               const sla_solver_options *opt, sla_solver **out)
{
    sla_solver *s = sla_calloc(1, sizeof *s, "solver");
    if (!s) return SLA_ENOMEM;
    if (opt) s->opt = *opt; else sla_solver_options_init(&s->opt);
    sla_status st = check_options(&s->opt);
    if (st != SLA_OK) { sla_free(s); return st; }
    if (s->opt.maxiter < 0) s->opt.maxiter = 10 * n + 100;
    if (s->opt.monitor_every < 1) s->opt.monitor_every = 1;
    s->n = n;
    s->dtype = dtype;
    s->batch = batch;
    s->rcond = NAN;
    *out = s;
    return SLA_OK;
}

sla_status sla_solver_create_with(sla_solver *s, sla_method method)
{
    const sla_backend *b = sla_backend_find(method, s->dtype, s->opt.backend);
    if (!b) return SLA_EUNSUPPORTED;
    s->opt.method = method;
    s->backend = b;
    s->description[0] = '\0';
    sla_status st = b->create(s);
    if (st < 0) {
        if (b->destroy) b->destroy(s);
        s->impl = NULL;
        s->backend = NULL;
    }
    return st;
}

sla_status sla_solver_create(const sla_matrix *A, const sla_solver_options *opt, sla_solver **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(sla_matrix_check(A, 1));
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    if (m != n)
        return SLA_FAIL(SLA_ESHAPE, "matrix is %lld × %lld; solvers need a square matrix "
                        "(least squares is not available yet)", (long long)m, (long long)n);
    sla_solver *s = NULL;
    SLA_TRY(solver_alloc(n, A->dtype, A->batch, opt, &s));
    s->pattern = sla_pattern_retain((sla_pattern *)A->pattern);
    s->A = *A;
    sla_status st = s->opt.method == SLA_METHOD_AUTO ? sla_auto_create(s)
                                                     : sla_solver_create_with(s, s->opt.method);
    if (st < 0) { sla_solver_free(&s); return st; }
    *out = s;
    return SLA_OK;
}

sla_status sla_solver_create_operator(int64_t n, sla_dtype dtype, int64_t batch, sla_apply_fn apply,
                                      void *apply_ctx, const sla_solver_options *opt,
                                      sla_solver **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(n >= 0, "n = %lld < 0", (long long)n);
    SLA_CHECK_ARG(batch >= 1, "batch = %lld < 1", (long long)batch);
    SLA_CHECK_ARG(apply, "apply is NULL");
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64 or float32", (int)dtype);
    sla_method m = opt ? opt->method : SLA_METHOD_AUTO;
    if (m == SLA_METHOD_AUTO)
        return SLA_FAIL(SLA_EINVAL, "a matrix-free operator needs an explicit iterative method "
                        "(cg, bicgstab, gmres, minres)");
    if (!sla_method_is_iterative(m))
        return SLA_FAIL(SLA_EINVAL, "method %s needs the matrix; a matrix-free operator supports "
                        "cg, bicgstab, gmres, minres", sla_method_name(m));
    sla_precond pc = opt->precond;
    if (pc != SLA_PRECOND_AUTO && pc != SLA_PRECOND_NONE && pc != SLA_PRECOND_USER)
        return SLA_FAIL(SLA_EINVAL, "preconditioner %s needs the matrix; a matrix-free operator "
                        "supports none and user", sla_precond_name(pc));
    sla_solver *s = NULL;
    SLA_TRY(solver_alloc(n, dtype, batch, opt, &s));
    if (s->opt.precond == SLA_PRECOND_AUTO) s->opt.precond = SLA_PRECOND_NONE;
    s->apply = apply;
    s->apply_ctx = apply_ctx;
    sla_status st = sla_solver_create_with(s, m);
    if (st < 0) { sla_solver_free(&s); return st; }
    *out = s;
    return SLA_OK;
}

sla_status sla_solver_refactor(sla_solver *s, const void *values)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(s->pattern, "a matrix-free solver has no values to refactor");
    sla_matrix A = s->A;
    A.values = values;
    SLA_TRY(sla_matrix_check(&A, 1));
    const void *old = s->A.values;
    s->A.values = values;
    sla_status st = s->backend->refactor(s);
    if (st < 0) s->A.values = old;
    return st;
}

static void info_init(const sla_solver *s, sla_solve_info *info)
{
    memset(info, 0, sizeof *info);
    info->method = s->opt.method;
    info->precond = sla_method_is_iterative(s->opt.method) ? s->opt.precond : SLA_PRECOND_NONE;
    info->converged = 1;
    info->reason = SLA_REASON_CONVERGED;
    info->rcond = s->rcond;
    snprintf(info->description, sizeof info->description, "%s", s->description);
}

sla_status sla_solver_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                            sla_solve_info *info)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(op == SLA_OP_N || op == SLA_OP_T, "op = %d is not N or T", (int)op);
    SLA_CHECK_ARG(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    int64_t total = s->batch * s->n * nrhs;
    SLA_CHECK_ARG((B && X) || total == 0, "%s is NULL", B ? "X" : "B");
    SLA_CHECK_ARG(B != X || total == 0, "B and X must not alias");
    int64_t bad;
    if (!sla_all_finite(s->dtype, B, total, &bad))
        return SLA_FAIL(SLA_ENONFINITE, "B[%lld][%lld][%lld] is not finite",
                        (long long)(bad / (s->n * nrhs)), (long long)(bad / nrhs % s->n),
                        (long long)(bad % nrhs));
    sla_solve_info local;
    if (!info) info = &local;
    info_init(s, info);
    if (total == 0) return SLA_OK;
    sla_status st = s->backend->solve(s, op, nrhs, B, X, info);
    if (st < 0) return st;
    int fb = sla_auto_fallback(s, info);
    if (fb < 0) return fb;
    if (fb > 0) {
        /* auto switched method: solve again from the caller's guess (or zero) */
        if (!s->opt.initial_guess_nonzero) memset(X, 0, (size_t)total * sla_dtype_size(s->dtype));
        info_init(s, info);
        st = s->backend->solve(s, op, nrhs, B, X, info);
        if (st < 0) return st;
    }
    return info->converged ? SLA_OK : SLA_NOT_CONVERGED;
}

/* max |x| over n entries, as double */
static double max_abs(sla_dtype dtype, const void *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = dtype == SLA_FLOAT64 ? ((const double *)x)[i] : ((const float *)x)[i];
        m = fmax(m, fabs(v));
    }
    return m;
}

static void scale_into(sla_dtype dtype, const void *x, double alpha, int64_t n, void *y)
{
    if (dtype == SLA_FLOAT64)
        for (int64_t i = 0; i < n; i++) ((double *)y)[i] = alpha * ((const double *)x)[i];
    else
        for (int64_t i = 0; i < n; i++) ((float *)y)[i] = (float)(alpha * ((const float *)x)[i]);
}

sla_status sla_solver_solve_vjp(sla_solver *s, sla_op op, int64_t nrhs, const void *X,
                                const void *G, void *dB, void *dvalues, sla_solve_info *info)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(op == SLA_OP_N || op == SLA_OP_T, "op = %d is not N or T", (int)op);
    SLA_CHECK_ARG(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    SLA_CHECK_ARG(!dvalues || s->pattern, "dvalues requested from a matrix-free solver");
    SLA_CHECK_ARG(!dvalues || X, "X is NULL (needed for dvalues)");
    int64_t total = s->batch * s->n * nrhs, nnz = s->pattern ? sla_pattern_nnz(s->pattern) : 0;
    SLA_CHECK_ARG(G || total == 0, "G is NULL");
    size_t es = sla_dtype_size(s->dtype);
    sla_solve_info local;
    if (!info) info = &local;
    info_init(s, info);
    if (dvalues) memset(dvalues, 0, (size_t)(s->batch * nnz) * es);
    if (total == 0) return SLA_OK;

    /* λ = op(A)⁻ᵀ G, solved on G/‖G‖∞ so that tiny cotangents (float32) do not underflow
     * inside the solver; atol is scaled alike so the stopping rule is unchanged. */
    double gmax = max_abs(s->dtype, G, total);
    void *lam = dB ? dB : sla_malloc((size_t)total, es, "adjoint solution");
    void *rhs = sla_malloc((size_t)total, es, "scaled cotangent");
    sla_status st = (lam && rhs) ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK && gmax == 0) {
        memset(lam, 0, (size_t)total * es);
    } else if (st == SLA_OK) {
        double scale = isfinite(gmax) ? gmax : 1.0;
        scale_into(s->dtype, G, 1.0 / scale, total, rhs);
        double atol = s->opt.atol;
        s->opt.atol = atol / scale;
        int guess = s->opt.initial_guess_nonzero;
        s->opt.initial_guess_nonzero = 0;
        st = sla_solver_solve(s, op == SLA_OP_N ? SLA_OP_T : SLA_OP_N, nrhs, rhs, lam, info);
        s->opt.atol = atol;
        s->opt.initial_guess_nonzero = guess;
        if (st >= 0) {
            scale_into(s->dtype, lam, scale, total, lam);
            info->residual_norm *= scale;
        }
    }
    if (st >= 0 && dvalues) {
        /* op = N: ∂a_rc = −λ_r x_c;  op = T (Aᵀx = b): ∂a_rc = −x_r λ_c */
        const void *u = op == SLA_OP_N ? lam : X, *v = op == SLA_OP_N ? X : lam;
        sla_status st2 = sla_pattern_outer_add(s->pattern, s->dtype, s->batch, -1.0, u, 1, v, 1,
                                               nrhs, dvalues);
        if (st2 < 0) st = st2;
    }
    if (lam != dB) sla_free(lam);
    sla_free(rhs);
    return st;
}

sla_status sla_solver_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(sign && logabsdet, "sign or logabsdet is NULL");
    if (!s->backend->logdet)
        return SLA_FAIL(SLA_EUNSUPPORTED, "method %s (%s) does not give determinants; use a "
                        "direct method (cholesky, ldlt, lu, klu)", sla_method_name(s->opt.method),
                        s->backend->info.name);
    return s->backend->logdet(s, sign, logabsdet);
}

sla_status sla_solver_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(dvalues || sla_pattern_nnz(s->pattern) == 0, "dvalues is NULL");
    if (!s->backend->logdet_grad)
        return SLA_FAIL(SLA_EUNSUPPORTED, "method %s (%s) does not give log-determinant "
                        "gradients; use a direct method", sla_method_name(s->opt.method),
                        s->backend->info.name);
    double *ones = NULL;
    if (!g) {
        ones = sla_malloc((size_t)s->batch, sizeof(double), "ones");
        if (!ones) return SLA_ENOMEM;
        for (int64_t b = 0; b < s->batch; b++) ones[b] = 1;
        g = ones;
    }
    sla_status st = s->backend->logdet_grad(s, g, dvalues);
    sla_free(ones);
    return st;
}

const char *sla_solver_describe(const sla_solver *s)
{
    return s ? s->description : "";
}

sla_method sla_solver_method(const sla_solver *s)
{
    return s ? s->opt.method : SLA_METHOD_AUTO;
}

void sla_solver_free(sla_solver **ps)
{
    if (!ps || !*ps) return;
    sla_solver *s = *ps;
    *ps = NULL;
    if (s->backend && s->backend->destroy) s->backend->destroy(s);
    sla_pattern_free(&s->pattern);
    sla_free(s);
}
