/* Nonlinear solves on the Bratu problem: the 1D closed form for every method, the adjoint
 * ∂L/∂λ against central finite differences for every method, the gradient independent of the
 * number of Newton steps, the refinement of the adjoint, float32. */
#include <float.h>
#include <stdio.h>

#include "nl_bratu.h"

static sla_nonlinear_options options(sla_nonlinear_method m, double rtol)
{
    sla_nonlinear_options o;
    sla_nonlinear_options_init_for(&o, m);
    o.rtol = rtol;
    o.adjoint_rtol = 1e-13;
    if (m == SLA_NONLINEAR_NEWTON_KRYLOV) o.linear.maxiter = 500;
    return o;
}

/* solves 1D Bratu(λ) with o from u0 = 0; returns the status, u in u */
static sla_status solve(bratu *b, const sla_nonlinear_options *o, double *u,
                        sla_nonlinear_info *info, sla_nonlinear **keep)
{
    sla_nonlinear_problem P = bratu_problem(b);
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, o, &nl));
    double *u0 = calloc((size_t)b->n, sizeof(double));
    sla_status st = sla_nonlinear_solve(nl, u0, u, info);
    free(u0);
    if (keep) *keep = nl; else sla_nonlinear_free(&nl);
    return st;
}

static void closed_form_every_method(void **state)
{
    (void)state;
    bratu b;
    bratu_init(&b, 1, 199, 1.0);
    double *u = malloc(sizeof(double) * 199);
    for (int m = 0; m < SLA_NONLINEAR_METHOD_COUNT; m++) {
        sla_nonlinear_options o = options((sla_nonlinear_method)m, 1e-12);
        sla_nonlinear_info info;
        sla_nonlinear *nl;
        TU_OK(solve(&b, &o, u, &info, &nl));          /* info.history is borrowed from nl */
        assert_true(info.converged);
        assert_int_equal(info.reason, SLA_NONLINEAR_CONVERGED);
        assert_true(info.residual_norm <= 1e-12 * info.initial_residual_norm);
        assert_true(info.history[info.iterations] == info.residual_norm);
        sla_nonlinear_free(&nl);
        double err = 0;
        for (int64_t i = 0; i < b.n; i++)
            err = fmax(err, fabs(u[i] - bratu1d_exact(1.0, (double)(i + 1) * b.h)));
        /* second order: max error ≈ 0.0035·h² here (h = 1/200) */
        if (err > 1e-6) fail_msg("%s: max error %g vs the closed form", info.description, err);
        if (m == SLA_NONLINEAR_NEWTON) assert_true(info.iterations <= 6);
        printf("%-14s %3lld iterations, %4lld linear iterations, %3lld residuals, error %.2e\n",
               sla_nonlinear_method_name(m), (long long)info.iterations,
               (long long)info.linear_iterations, (long long)info.residual_evaluations, err);
    }
    free(u);
    bratu_free(&b);
}

/* second order: halving h divides the error by 4 */
static void closed_form_order(void **state)
{
    (void)state;
    double err[2];
    for (int t = 0; t < 2; t++) {
        bratu b;
        int64_t nx = t == 0 ? 49 : 99;
        bratu_init(&b, 1, nx, 2.0);
        double *u = malloc(sizeof(double) * (size_t)nx);
        sla_nonlinear_options o = options(SLA_NONLINEAR_NEWTON, 1e-11);
        TU_OK(solve(&b, &o, u, NULL, NULL));
        err[t] = 0;
        for (int64_t i = 0; i < nx; i++)
            err[t] = fmax(err[t], fabs(u[i] - bratu1d_exact(2.0, (double)(i + 1) * b.h)));
        free(u);
        bratu_free(&b);
    }
    assert_true(err[0] / err[1] > 3.8 && err[0] / err[1] < 4.2);
}

/* L(u) = Σ cᵢ uᵢ with c_i = sin(i): dL/dλ by the adjoint vs central differences */
static double loss_of(const double *u, int64_t n)
{
    double l = 0;
    for (int64_t i = 0; i < n; i++) l += sin((double)i + 1) * u[i];
    return l;
}

static double solve_loss(double lambda, const sla_nonlinear_options *o, int64_t nx)
{
    bratu b;
    bratu_init(&b, 1, nx, lambda);
    double *u = malloc(sizeof(double) * (size_t)nx);
    TU_OK(solve(&b, o, u, NULL, NULL));
    double l = loss_of(u, nx);
    free(u);
    bratu_free(&b);
    return l;
}

static double adjoint_dlambda(bratu *b, const sla_nonlinear_options *o, sla_solve_info *vi,
                              const double *u0)
{
    sla_nonlinear_problem P = bratu_problem(b);
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, o, &nl));
    int64_t n = b->n;
    double *u = malloc(sizeof(double) * (size_t)n), *g = malloc(sizeof(double) * (size_t)n);
    double *z = calloc((size_t)n, sizeof(double));
    sla_nonlinear_info info;
    TU_OK(sla_nonlinear_solve(nl, u0 ? u0 : z, u, &info));
    for (int64_t i = 0; i < n; i++) g[i] = sin((double)i + 1);
    b->dlambda = 0;
    TU_OK(sla_nonlinear_vjp(nl, g, NULL, vi));
    free(u);
    free(g);
    free(z);
    sla_nonlinear_free(&nl);
    return b->dlambda;
}

static void adjoint_vs_finite_differences(void **state)
{
    (void)state;
    int64_t nx = 60;
    for (int m = 0; m < SLA_NONLINEAR_METHOD_COUNT; m++) {
        sla_nonlinear_options o = options((sla_nonlinear_method)m, 1e-13);
        bratu b;
        bratu_init(&b, 1, nx, 1.5);
        sla_solve_info vi;
        double dl = adjoint_dlambda(&b, &o, &vi, NULL);
        bratu_free(&b);
        double h = 1e-5;
        double fd = (solve_loss(1.5 + h, &o, nx) - solve_loss(1.5 - h, &o, nx)) / (2 * h);
        double rel = fabs(dl - fd) / fabs(fd);
        printf("%-14s dL/dλ adjoint %.12g, FD %.12g, rel %.2e (%s)\n",
               sla_nonlinear_method_name(m), dl, fd, rel, vi.description);
        assert_true(vi.converged);
        assert_true(rel <= 1e-6);
    }
}

/* The matrix-free adjoint (jacobian_apply only) agrees with the pattern one. */
static void adjoint_matrix_free(void **state)
{
    (void)state;
    bratu b;
    bratu_init(&b, 1, 60, 1.5);
    sla_nonlinear_options o = options(SLA_NONLINEAR_NEWTON_KRYLOV, 1e-13);
    sla_solve_info vi;
    double ref = adjoint_dlambda(&b, &o, &vi, NULL);
    bratu_free(&b);
    bratu_init(&b, 1, 60, 1.5);
    sla_nonlinear_problem P = bratu_problem(&b);
    P.jacobian = NULL;
    P.linearization = NULL;
    P.pattern = NULL;
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    double u0[60] = {0}, u[60], g[60];
    TU_OK(sla_nonlinear_solve(nl, u0, u, NULL));
    for (int i = 0; i < 60; i++) g[i] = sin(i + 1.0);
    b.dlambda = 0;
    TU_OK(sla_nonlinear_vjp(nl, g, NULL, &vi));
    assert_true(strstr(vi.description, "matrix-free") != NULL);
    assert_true(fabs(b.dlambda - ref) <= 1e-9 * fabs(ref));
    sla_nonlinear_free(&nl);
    bratu_free(&b);
}

/* Newton from u0 = 0 (3 steps) and from a far start (~30 steps) gives the same gradient to
 * 1e-10: the adjoint depends on u* only (−Δu + u³ = λ, one solution). */
static void gradient_independent_of_steps(void **state)
{
    (void)state;
    int64_t nx = 60;
    double far[60];
    for (int i = 0; i < nx; i++) far[i] = 1e5 * (1 + 0.5 * cos(7.0 * i));
    double dl[2];
    int64_t its[2];
    for (int t = 0; t < 2; t++) {
        bratu b;
        bratu_init(&b, 1, nx, 10);
        b.cubic = 1;
        sla_nonlinear_options o = options(SLA_NONLINEAR_NEWTON, 0);
        o.atol = 1e-10;          /* absolute: rtol·‖F(u0)‖ would be huge from the far start */
        o.max_iter = 200;
        sla_nonlinear_problem P = bratu_problem(&b);
        sla_nonlinear *nl;
        TU_OK(sla_nonlinear_create(&P, &o, &nl));
        double u0[60] = {0}, u[60], g[60];
        sla_nonlinear_info info;
        TU_OK(sla_nonlinear_solve(nl, t ? far : u0, u, &info));
        its[t] = info.iterations;
        for (int i = 0; i < nx; i++) g[i] = sin(i + 1.0);
        b.dlambda = 0;
        TU_OK(sla_nonlinear_vjp(nl, g, NULL, NULL));
        dl[t] = b.dlambda;
        sla_nonlinear_free(&nl);
        bratu_free(&b);
    }
    printf("Newton %lld vs %lld steps: dL/dλ %.15g vs %.15g\n", (long long)its[0],
           (long long)its[1], dl[0], dl[1]);
    assert_true(its[0] <= 5 && its[1] >= 25);
    assert_true(fabs(dl[0] - dl[1]) <= 1e-10 * fabs(dl[0]));
}

/* λ returned by the vjp satisfies J(u*)ᵀλ = g to the adjoint tolerance; a second vjp on the
 * same solve gives the same λ. */
static void adjoint_residual(void **state)
{
    (void)state;
    bratu b;
    bratu_init(&b, 2, 20, 3.0);
    sla_nonlinear_options o = options(SLA_NONLINEAR_NEWTON, 1e-10);
    sla_nonlinear_problem P = bratu_problem(&b);
    P.param_vjp = NULL;
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    int64_t n = b.n;
    double *u0 = calloc((size_t)n, sizeof(double)), *u = malloc(sizeof(double) * (size_t)n);
    double *g = malloc(sizeof(double) * (size_t)n), *lam = malloc(sizeof(double) * (size_t)n);
    double *lam2 = malloc(sizeof(double) * (size_t)n), *r = malloc(sizeof(double) * (size_t)n);
    TU_OK(sla_nonlinear_solve(nl, u0, u, NULL));
    tu_fill_random(g, n, 5);
    sla_solve_info vi;
    TU_OK(sla_nonlinear_vjp(nl, g, lam, &vi));
    bratu_apply(&b, SLA_OP_T, u, lam, r);
    for (int64_t i = 0; i < n; i++) r[i] -= g[i];
    assert_true(tu_norm2(r, n) <= 1e-12 * tu_norm2(g, n));
    assert_true(vi.relative_residual <= 1e-13);
    TU_OK(sla_nonlinear_vjp(nl, g, lam2, NULL));
    for (int64_t i = 0; i < n; i++) assert_true(fabs(lam2[i] - lam[i]) <= 1e-12 * fabs(lam[i]) + 1e-300);
    /* tiny cotangents neither underflow nor lose digits */
    for (int64_t i = 0; i < n; i++) g[i] *= 1e-300;
    TU_OK(sla_nonlinear_vjp(nl, g, lam2, NULL));
    for (int64_t i = 0; i < n; i++) TU_CLOSE(lam2[i] * 1e300, lam[i], 1e-10);
    free(u0); free(u); free(g); free(lam); free(lam2); free(r);
    sla_nonlinear_free(&nl);
    bratu_free(&b);
}

/* Newton with an iterative linear solver (CG + AMG) at a loose linear tolerance: Newton still
 * converges, and the refinement makes the adjoint exact to its own tolerance. */
static void iterative_linear_solver(void **state)
{
    (void)state;
    bratu b;
    bratu_init(&b, 2, 40, 5.0);
    sla_nonlinear_options o = options(SLA_NONLINEAR_NEWTON, 1e-10);
    o.linear.method = SLA_METHOD_CG;
    o.linear.precond = SLA_PRECOND_AMG;
    o.linear.rtol = 1e-4;
    o.adjoint_rtol = 1e-11;
    sla_nonlinear_problem P = bratu_problem(&b);
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    int64_t n = b.n;
    double *u0 = calloc((size_t)n, sizeof(double)), *u = malloc(sizeof(double) * (size_t)n);
    double *g = malloc(sizeof(double) * (size_t)n), *lam = malloc(sizeof(double) * (size_t)n);
    double *r = malloc(sizeof(double) * (size_t)n);
    sla_nonlinear_info info;
    TU_OK(sla_nonlinear_solve(nl, u0, u, &info));
    assert_true(info.linear_iterations > 0 && info.linear.method == SLA_METHOD_CG);
    for (int64_t i = 0; i < n; i++) g[i] = 1;
    sla_solve_info vi;
    TU_OK(sla_nonlinear_vjp(nl, g, lam, &vi));
    bratu_apply(&b, SLA_OP_T, u, lam, r);
    for (int64_t i = 0; i < n; i++) r[i] -= g[i];
    printf("CG+AMG Newton: %lld iterations; adjoint %s, rel. residual %.2e\n",
           (long long)info.iterations, vi.description, tu_norm2(r, n) / tu_norm2(g, n));
    assert_true(tu_norm2(r, n) <= 2e-11 * tu_norm2(g, n));
    free(u0); free(u); free(g); free(lam); free(r);
    sla_nonlinear_free(&nl);
    bratu_free(&b);
}

/* float32: the same problem through float callbacks converges to float32 accuracy */
typedef struct f32ctx { bratu *b; double tmp_u[64], tmp_f[64], tmp_j[256]; } f32ctx;

static int res32(void *ctx, const void *uv, void *Fv)
{
    f32ctx *c = ctx;
    const float *u = uv;
    float *F = Fv;
    for (int64_t i = 0; i < c->b->n; i++) c->tmp_u[i] = u[i];
    bratu_residual(c->b, c->tmp_u, c->tmp_f);
    for (int64_t i = 0; i < c->b->n; i++) F[i] = (float)c->tmp_f[i];
    return 0;
}

static int jac32(void *ctx, const void *uv, void *Jv)
{
    f32ctx *c = ctx;
    const float *u = uv;
    float *J = Jv;
    for (int64_t i = 0; i < c->b->n; i++) c->tmp_u[i] = u[i];
    bratu_jacobian(c->b, c->tmp_u, c->tmp_j);
    for (int64_t q = 0; q < sla_pattern_nnz(c->b->p); q++) J[q] = (float)c->tmp_j[q];
    return 0;
}

static void float32(void **state)
{
    (void)state;
    bratu b;
    bratu_init(&b, 1, 64, 1.0);
    f32ctx c = {.b = &b};
    sla_nonlinear_problem P = {.n = 64, .dtype = SLA_FLOAT32, .residual = res32, .pattern = b.p,
                               .jacobian = jac32, .ctx = &c};
    sla_nonlinear_options o = options(SLA_NONLINEAR_NEWTON, 1e-3);   /* float32's floor ~1e-4 */
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    float u0[64] = {0}, u[64], g[64], lam[64];
    sla_nonlinear_info info;
    TU_OK(sla_nonlinear_solve(nl, u0, u, &info));
    for (int i = 0; i < 64; i++)
        assert_true(fabs(u[i] - bratu1d_exact(1.0, (i + 1) * b.h)) < 1e-3);
    for (int i = 0; i < 64; i++) g[i] = 1;
    sla_solve_info vi;
    TU_OK(sla_nonlinear_vjp(nl, g, lam, &vi));
    assert_true(vi.relative_residual <= 1e-12);    /* residuals in float64: refined past float32 */
    sla_nonlinear_free(&nl);
    bratu_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_form_every_method),
        cmocka_unit_test(closed_form_order),
        cmocka_unit_test(adjoint_vs_finite_differences),
        cmocka_unit_test(adjoint_matrix_free),
        cmocka_unit_test(gradient_independent_of_steps),
        cmocka_unit_test(adjoint_residual),
        cmocka_unit_test(iterative_linear_solver),
        cmocka_unit_test(float32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
