/* Solver objects, their lifecycle: options, create (with a matrix or a matrix-free operator),
 * refactor, logdet, free, and the accessors (public, and for backends). The solve is solve.c,
 * its backward vjp.c and lstsq.c. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/kernels.h"
#include "solve/backend.h"

void sla_solver_options_init(sla_solver_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->method = SLA_METHOD_AUTO;
    opt->precond = SLA_PRECOND_AUTO;
    opt->ordering = SLA_ORDERING_AUTO;
    opt->rtol = SLA_TOL_DEFAULT;     /* no tolerance given: see sla_solver_options (solver.h) */
    opt->atol = SLA_TOL_DEFAULT;
    opt->maxiter = SLA_MAXITER_DEFAULT;   /* resolved to 10·n + 100 at create */
    opt->restart = 50;
    opt->monitor_every = 1;
}

static sla_status check_options(const char *func, const sla_solver_options *o)
{
    ARG_CHECK((unsigned)o->method < SLA_METHOD_COUNT, "options.method = %d is invalid", (int)o->method);
    ARG_CHECK((unsigned)o->precond < SLA_PRECOND_COUNT, "options.precond = %d is invalid", (int)o->precond);
    ARG_CHECK((unsigned)o->ordering < SLA_ORDERING_COUNT, "options.ordering = %d is invalid", (int)o->ordering);
    ARG_CHECK((o->rtol >= 0 || o->rtol == SLA_TOL_DEFAULT) &&
              (o->atol >= 0 || o->atol == SLA_TOL_DEFAULT) && isfinite(o->rtol) && isfinite(o->atol),
              "options.rtol = %g and options.atol = %g must be finite and ≥ 0 (or "
              "SLA_TOL_DEFAULT)", o->rtol, o->atol);
    ARG_CHECK(o->maxiter >= 1 || o->maxiter == SLA_MAXITER_DEFAULT,
              "options.maxiter = %lld must be ≥ 1 (or SLA_MAXITER_DEFAULT = -1)", (long long)o->maxiter);
    ARG_CHECK(o->monitor_every >= 1, "options.monitor_every = %lld must be ≥ 1",
              (long long)o->monitor_every);
    ARG_CHECK(!o->backend || *o->backend, "options.backend is \"\": NULL or \"auto\" for any "
              "backend, else a name that sla_backend_get() lists");
    ARG_CHECK(o->restart >= 1, "options.restart = %lld < 1", (long long)o->restart);
    ARG_CHECK(o->damp >= 0 && isfinite(o->damp), "options.damp = %g must be finite and ≥ 0",
              o->damp);
    ARG_CHECK(o->damp == 0 || o->method == SLA_METHOD_LSQR || o->method == SLA_METHOD_AUTO,
              "options.damp = %g is for method lsqr only (method %s)", o->damp,
              sla_method_name(o->method));
    ARG_CHECK(o->allow_singular == 0 || o->allow_singular == 1,
              "options.allow_singular = %d must be 0 or 1", o->allow_singular);
    ARG_CHECK(o->precond != SLA_PRECOND_USER || o->user_precond,
                  "options.precond = user but options.user_precond is NULL");
    return SLA_OK;
}

static sla_status solver_alloc(const char *func, int64_t m, int64_t n, sla_dtype dtype,
                               int64_t batch, const sla_solver_options *opt, sla_solver **out)
{
    sla_solver *s = sla_calloc(1, sizeof *s, "solver");
    if (!s) return sla_error_attribute(SLA_ENOMEM, func);
    if (opt) s->opt = *opt; else sla_solver_options_init(&s->opt);
    sla_status st = check_options(func, &s->opt);
    if (st != SLA_OK) { sla_free(s); return st; }
    if (s->opt.maxiter == SLA_MAXITER_DEFAULT) s->opt.maxiter = 10 * (m > n ? m : n) + 100;
    /* no tolerance given: the classic defaults, and method auto's accuracy target (auto.c) */
    s->default_tol = s->opt.rtol == SLA_TOL_DEFAULT && s->opt.atol == SLA_TOL_DEFAULT;
    if (s->opt.rtol == SLA_TOL_DEFAULT) s->opt.rtol = 1e-10;
    if (s->opt.atol == SLA_TOL_DEFAULT) s->opt.atol = 0;
    s->m = m;
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
    /* the matrix's memory space and the backend's must agree (matrix.h, sla_backend.memory) */
    int device = s->pattern && s->A.space == SLA_MEM_DEVICE;
    if (device && b->memory != SLA_MEM_DEVICE)
        return SLA_FAIL(SLA_EINVAL, "A is in device memory but backend '%s' takes host memory "
                        "(options.backend: a device backend such as \"cuda\", or NULL)",
                        b->info.name);
    if (!device && b->memory == SLA_MEM_DEVICE)
        return SLA_FAIL(SLA_EINVAL, "backend '%s' takes device memory but %s is in host memory "
                        "(set A.space = SLA_MEM_DEVICE with device values, or use a host backend)",
                        b->info.name, s->pattern ? "A" : "a matrix-free operator");
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

/* A device view: method auto's rules read values on the host, so they do not run; auto is
 * BiCGStab (no symmetry or definiteness test runs on device values; name cg for SPD A) with
 * Jacobi, and the backend is "cuda" unless options.backend names another device backend. */
static sla_status device_create(sla_solver *s)
{
    if (!s->opt.backend || strcasecmp(s->opt.backend, "auto") == 0) s->opt.backend = "cuda";
    sla_method method = s->opt.method;
    if (method == SLA_METHOD_AUTO) {
        method = SLA_METHOD_BICGSTAB;
        if (s->opt.precond == SLA_PRECOND_AUTO) s->opt.precond = SLA_PRECOND_JACOBI;
        snprintf(s->why, sizeof s->why, "method auto on device memory: bicgstab + jacobi (no "
                 "symmetry or definiteness test runs on device values; name cg for SPD A)");
    }
    sla_status st = sla_solver_create_with(s, method);
    if (st >= 0 && s->why[0]) sla_text_append(s->description, sizeof s->description, "; auto: ", s->why);
    return st;
}

/* method = auto among the Krylov methods for a complex A: Hermitian with a positive diagonal
 * (necessary for positive definite; CG's curvature test decides the rest) → CG; Hermitian
 * otherwise → MINRES; complex symmetric (Aᵀ = A, Helmholtz with absorbing boundaries) → COCG;
 * general → GMRES. */
static sla_status complex_krylov_method(const sla_matrix *A, int herm, double eps, sla_method *m)
{
    if (herm) {
        const int64_t *rp = sla_pattern_rowptr(A->pattern);
        const int32_t *ci = sla_pattern_colind(A->pattern);
        int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
        int posdiag = 1;
        for (int64_t b = 0; b < A->batch && posdiag; b++)
            for (int64_t i = 0; i < n && posdiag; i++) {
                double d = 0;
                for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
                    if (ci[k] != i) continue;
                    size_t at = (size_t)(b * nnz + k);
                    d += A->dtype == SLA_COMPLEX128
                             ? creal(((const double complex *)A->values)[at])
                             : crealf(((const float complex *)A->values)[at]);
                }
                posdiag = d > 0;
            }
        *m = posdiag ? SLA_METHOD_CG : SLA_METHOD_MINRES;
        return SLA_OK;
    }
    int sym = 0;
    SLA_TRY(sla_matrix_is_symmetric(A, 1000 * eps, 0, &sym));
    *m = sym ? SLA_METHOD_COCG : SLA_METHOD_GMRES;
    return SLA_OK;
}

/* Creates the solver of method o->method and records why method auto chose it: s->why, and
 * "; auto: <why>" after the backend's description (kept across refactors). */
static sla_status create_because(const sla_matrix *A, const sla_solver_options *o,
                                 sla_solver **out, const char *why)
{
    SLA_TRY(sla_solver_create(A, o, out));
    sla_solver *s = *out;
    snprintf(s->why, sizeof s->why, "%s", why);
    sla_text_append(s->description, sizeof s->description, "; auto: ", s->why);
    return SLA_OK;
}

/* method = auto for a square complex A (docs/auto.md, "Complex matrices"): Hermitian →
 * Cholesky (CHOLMOD LLᴴ) when its factorization succeeds, else LU (UMFPACK); complex symmetric
 * (Aᵀ = A) → LDLᵀ (MUMPS SYM = 2; LU where no backend serves ldlt): 1.3–1.8× faster than
 * UMFPACK's LU on the 2D Helmholtz 1000² (docs/auto.md); general → LU. With backend "krylov", the Krylov method of
 * the matrix's class (complex_krylov_method). */
static sla_status complex_auto_create(const sla_matrix *A, sla_solver_options *o,
                                      sla_solver **out)
{
    int herm = 0, sym = 0;
    double eps = A->dtype == SLA_COMPLEX128 ? 2.220446049250313e-16 : 1.1920929e-07;
    SLA_TRY(sla_matrix_is_hermitian(A, 1000 * eps, 0, &herm));
    if (!herm) SLA_TRY(sla_matrix_is_symmetric(A, 1000 * eps, 0, &sym));
    const char *cls = herm ? "complex Hermitian" : sym ? "complex symmetric (Aᵀ = A, not "
                      "Hermitian)" : "complex, neither Hermitian nor symmetric";
    char why[256];
    if (o->backend && strcasecmp(o->backend, "krylov") == 0) {
        SLA_TRY(complex_krylov_method(A, herm, eps, &o->method));
        snprintf(why, sizeof why, "%s, backend krylov: %s", cls, sla_method_name(o->method));
        return create_because(A, o, out, why);
    }
    if (herm) {
        o->method = SLA_METHOD_CHOLESKY;
        sla_status st = create_because(A, o, out, "complex Hermitian, Cholesky (LLᴴ) succeeded");
        if (st != SLA_ENOTSPD && st != SLA_EINVAL) return st;
        sla_clear_error();         /* not positive definite: LU below */
        cls = "complex Hermitian, not positive definite (Cholesky failed)";
    }
    if (sym) {
        o->method = SLA_METHOD_LDLT;
        sla_status st = create_because(A, o, out, "complex symmetric (Aᵀ = A, not Hermitian): "
                                       "LDLᵀ (MUMPS, half the factor of LU, docs/auto.md)");
        if (st != SLA_EUNSUPPORTED && st != SLA_EINVAL) return st;
        sla_clear_error();         /* no MUMPS in this build, a backend without ldlt, or ldlt's
                                    * own symmetry test refused what the class test admitted */
        cls = "complex symmetric (Aᵀ = A, not Hermitian), LDLᵀ unavailable or refused";
    }
    o->method = SLA_METHOD_LU;
    snprintf(why, sizeof why, "%s: LU", cls);
    return create_because(A, o, out, why);
}

sla_status sla_solver_create(const sla_matrix *A, const sla_solver_options *opt, sla_solver **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(sla_matrix_check_space(__func__, "A", A, 1 | SLA_CHECK_COMPLEX_OK));
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    sla_method method = opt ? opt->method : SLA_METHOD_AUTO;
    if (sla_dtype_is_complex(A->dtype)) {
        /* complex, method = auto: Cholesky (CHOLMOD LLᴴ) for a Hermitian matrix whose
         * factorization succeeds, else sparse LU (UMFPACK); with backend = "krylov" the
         * Krylov method of the matrix's class (complex_krylov_method); a rectangular A (or
         * damp > 0) gets LSQR; a method no backend serves for complex is refused by
         * sla_backend_find by name */
        if (method == SLA_METHOD_AUTO) {
            sla_solver_options o;
            if (opt) o = *opt; else sla_solver_options_init(&o);
            if (m != n || o.damp > 0) {    /* least squares: complex LSQR (rule 0 of auto) */
                o.method = SLA_METHOD_LSQR;
                return sla_solver_create(A, &o, out);
            }
            return complex_auto_create(A, &o, out);
        }
    }
    if (m != n && method != SLA_METHOD_AUTO && method != SLA_METHOD_LSQR)
        return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld; method %s needs a square matrix (least "
                        "squares: method lsqr or auto)", (long long)m, (long long)n,
                        sla_method_name(method));
    sla_solver *s = NULL;
    SLA_TRY(solver_alloc(__func__, m, n, A->dtype, A->batch, opt, &s));
    s->pattern = sla_pattern_retain((sla_pattern *)A->pattern);
    s->A = *A;
    sla_status st = A->space == SLA_MEM_DEVICE ? device_create(s)
                  : s->opt.method == SLA_METHOD_AUTO ? sla_auto_create(s)
                                                     : sla_solver_create_with(s, s->opt.method);
    if (st < 0) { sla_solver_free(&s); return sla_error_attribute(st, __func__); }
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
                        "(cg, bicgstab, gmres, minres, lsqr)");
    if (!sla_method_is_iterative(m))
        return SLA_FAIL(SLA_EINVAL, "method %s needs the matrix; a matrix-free operator supports "
                        "cg, bicgstab, gmres, minres, lsqr", sla_method_name(m));
    sla_precond pc = opt->precond;
    if (pc != SLA_PRECOND_AUTO && pc != SLA_PRECOND_NONE && pc != SLA_PRECOND_USER)
        return SLA_FAIL(SLA_EINVAL, "preconditioner %s needs the matrix; a matrix-free operator "
                        "supports none and user", sla_precond_name(pc));
    sla_solver *s = NULL;
    SLA_TRY(solver_alloc(__func__, n, n, dtype, batch, opt, &s));
    if (s->opt.precond == SLA_PRECOND_AUTO) s->opt.precond = SLA_PRECOND_NONE;
    s->apply = apply;
    s->apply_ctx = apply_ctx;
    sla_status st = sla_solver_create_with(s, m);
    if (st < 0) { sla_solver_free(&s); return sla_error_attribute(st, __func__); }
    *out = s;
    return SLA_OK;
}

sla_status sla_solver_refactor(sla_solver *s, const void *values)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(s->pattern, "a matrix-free solver has no values to refactor");
    int64_t nnz = sla_pattern_nnz(s->pattern), bad;
    SLA_CHECK_ARG(values || nnz == 0, "values is NULL (expected [%lld][%lld] values)",
                  (long long)s->batch, (long long)nnz);
    /* device values: the device backend's refactor checks them */
    if (s->A.space == SLA_MEM_HOST && !sla_all_finite(s->dtype, values, s->batch * nnz, &bad)) {
        int64_t q = bad % nnz;
        const int64_t *ri = sla_pattern_rowind(s->pattern);
        return SLA_FAIL(SLA_ENONFINITE, "values: value at batch %lld, slot %lld (row %lld, col %d) "
                        "is not finite",
                        (long long)(bad / nnz), (long long)q, (long long)(ri ? ri[q] : -1),
                        sla_pattern_colind(s->pattern)[q]);
    }
    const void *old = s->A.values;
    s->A.values = values;
    sla_status st = s->is_auto ? sla_auto_refactor(s) : s->backend->refactor(s);
    if (st < 0) s->A.values = old;
    /* complex auto's choice (complex_auto_create): the backend rewrote its description */
    else if (!s->is_auto && s->why[0] && !strstr(s->description, "; auto: "))
        sla_text_append(s->description, sizeof s->description, "; auto: ", s->why);
    return sla_error_attribute(st, __func__);
}
sla_status sla_solver_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(sign && logabsdet, "sign or logabsdet is NULL");
    if (!s->backend->logdet)
        return SLA_FAIL(SLA_EUNSUPPORTED, "method %s (%s) does not give determinants; use a "
                        "direct method (cholesky, ldlt, lu, klu)", sla_method_name(s->opt.method),
                        s->backend->info.name);
    return sla_error_attribute(s->backend->logdet(s, sign, logabsdet), __func__);
}

sla_status sla_solver_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(dvalues || sla_pattern_nnz(s->pattern) == 0, "dvalues is NULL");
    size_t vbytes = sla_solver_values_bytes(s);
    SLA_TRY(sla_check_overlap(__func__, "dvalues", dvalues, vbytes, "the matrix values",
                              s->A.values, vbytes));
    SLA_TRY(sla_check_overlap(__func__, "dvalues", dvalues, vbytes, "g", g,
                              (size_t)s->batch * sizeof(double)));
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
    return sla_error_attribute(st, __func__);
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
    sla_auto_free(s);
    sla_pattern_free(&s->pattern);
    sla_free(s);
}
/* ---- accessors: the user API (sla/solver.h) ---- */

double sla_solver_rcond(const sla_solver *s) { return s ? s->rcond : NAN; }

sla_dtype sla_solver_dtype(const sla_solver *s) { return s ? s->dtype : SLA_FLOAT64; }

int64_t sla_solver_batch(const sla_solver *s) { return s ? s->batch : 0; }

int64_t sla_solver_rows(const sla_solver *s) { return s ? s->m : 0; }

int64_t sla_solver_cols(const sla_solver *s) { return s ? s->n : 0; }

/* ---- accessors for backends (sla/backend.h) ---- */

const sla_matrix *sla_solver_matrix(const sla_solver *s)
{
    return s && s->pattern ? &s->A : NULL;
}

sla_apply_fn sla_solver_apply_fn(const sla_solver *s, void **ctx)
{
    if (ctx) *ctx = s ? s->apply_ctx : NULL;
    return s ? s->apply : NULL;
}

const sla_solver_options *sla_solver_options_resolved(const sla_solver *s)
{
    return s ? &s->opt : NULL;
}

void *sla_solver_impl(const sla_solver *s) { return s ? s->impl : NULL; }

void sla_solver_set_impl(sla_solver *s, void *impl) { s->impl = impl; }

void sla_solver_set_description(sla_solver *s, const char *text)
{
    s->description[0] = '\0';
    sla_text_append(s->description, sizeof s->description, "", text ? text : "");
}

void sla_solver_set_rcond(sla_solver *s, double rcond) { s->rcond = rcond; }
