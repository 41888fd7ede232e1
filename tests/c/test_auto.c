/* method = auto and the backend registry: every rule on real and generated matrices. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Solves A x = 1 with the given options; returns the solver's description in desc and checks
 * the relative residual. */
static sla_status solve_ones(const sla_matrix *A, const sla_solver_options *o, char *desc,
                             size_t len, double tol)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    sla_solver *s = NULL;
    sla_solve_info info;
    sla_status st = sla_solver_create(A, o, &s);
    if (st == SLA_OK) st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
    if (st == SLA_NOT_CONVERGED)
        fprintf(stderr, "not converged: %s after %lld iterations, residual %g: %s\n",
                sla_reason_name(info.reason), (long long)info.iterations, info.residual_norm,
                info.description);
    if (st == SLA_OK) {
        snprintf(desc, len, "%s", info.description);
        assert_string_equal(info.description, sla_solver_describe(s));
        assert_true(info.converged);
        double *r = malloc(sizeof(double) * (size_t)n);
        memcpy(r, b, sizeof(double) * (size_t)n);
        TU_OK(sla_spmv(SLA_OP_N, -1.0, A, x, 0, 1, 1.0, r));
        assert_true(tu_norm2(r, n) <= tol * tu_norm2(b, n));
        free(r);
    }
    sla_solver_free(&s);
    free(b);
    free(x);
    return st;
}

static void expect_auto(const char *name, const char *method_prefix, const char *why)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load(name, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-8));
    if (strncmp(desc, method_prefix, strlen(method_prefix)) != 0 || !strstr(desc, why))
        fail_msg("%s: auto chose '%s', expected '%s...' with '%s'", name, desc, method_prefix, why);
    assert_true(strstr(desc, "predicted nnz(") || strstr(desc, "dense bound nnz("));
    sla_pattern_free(&p);
    free(v);
}

static void direct_rules_on_real_matrices(void **state)
{
    if (!tu_have_matrices()) skip();
    expect_auto("bcsstk13.mtx", "cholesky (CHOLMOD", "symmetric, positive diagonal, Cholesky succeeded");
    expect_auto("1138_bus.mtx", "cholesky (CHOLMOD", "Cholesky succeeded");
    expect_auto("nos6.mtx", "cholesky (CHOLMOD", "Cholesky succeeded");
    /* an M-matrix sign pattern with a costly factor goes to AMG-PCG */
    expect_auto("Laplace3D10.mtx", "cg + AMG", "M-matrix sign pattern with flops/nnz(A)");
    expect_auto("hangGlider_2.mtx", "ldlt (MUMPS", "symmetric, diagonal not positive");
    expect_auto("west0479.mtx", "lu (UMFPACK", "unsymmetric, high fill");
    expect_auto("rajat19.mtx", "klu (KLU", "unsymmetric, low fill");
}

/* Blocks [[2, 3], [3, 1]]: symmetric with a positive diagonal but indefinite (eigenvalues
 * (3 ± √37)/2), and the ones vector is not an eigenvector, so CG meets negative curvature. */
static void build_indefinite(int64_t n, sla_pattern **p, double **v)
{
    /* n/2 copies of the 2×2 block on the diagonal */
    int64_t *r = malloc(sizeof(int64_t) * (size_t)(2 * n)), *c = malloc(sizeof(int64_t) * (size_t)(2 * n));
    double *x = malloc(sizeof(double) * (size_t)(2 * n));
    int64_t k = 0;
    for (int64_t i = 0; i < n; i += 2) {
        r[k] = i; c[k] = i; x[k++] = 2;
        r[k] = i; c[k] = i + 1; x[k++] = 3;
        r[k] = i + 1; c[k] = i; x[k++] = 3;
        r[k] = i + 1; c[k] = i + 1; x[k++] = 1;
    }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *v = malloc(sizeof(double) * (size_t)k);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, x, *v));
    free(r); free(c); free(x);
}

static void cholesky_failure_falls_back_to_ldlt(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    build_indefinite(10, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-12));
    assert_non_null(strstr(desc, "not SPD (Cholesky failed)"));
    assert_true(strncmp(desc, "ldlt", 4) == 0 || strncmp(desc, "lu", 2) == 0);
    sla_pattern_free(&p);
    free(v);
}

static void memory_budget_switches_to_iterative(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(64, 64, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    /* 2D Poisson itself has the M-matrix sign pattern: AMG-PCG by default */
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-8));
    if (strncmp(desc, "cg + AMG", 8) != 0) fail_msg("2D Poisson: expected AMG-PCG, got '%s'", desc);
    /* D·A·D with a checkerboard D = diag(±1): same spectrum (SPD), positive off-diagonals, so
     * the M-matrix rule does not apply and the factorization is chosen */
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t k = 0; k < sla_pattern_nnz(p); k++)
        if (ri[k] != ci[k]) v[k] = -v[k];
    sla_solver_options o;
    sla_solver_options_init(&o);
    TU_OK(solve_ones(&A, &o, desc, sizeof desc, 1e-8));
    if (strncmp(desc, "cholesky", 8) != 0) fail_msg("expected Cholesky, got '%s'", desc);
    o.memory_budget = 1000;                 /* bytes: no factor fits */
    o.rtol = 1e-10;
    TU_OK(solve_ones(&A, &o, desc, sizeof desc, 1e-9));
    if (strncmp(desc, "cg", 2) != 0 || !strstr(desc, "> budget 1 kB"))
        fail_msg("expected CG from the memory budget, got '%s'", desc);
    /* a flop budget does the same */
    sla_solver_options_init(&o);
    o.flop_budget = 1;
    TU_OK(solve_ones(&A, &o, desc, sizeof desc, 1e-8));
    assert_true(strncmp(desc, "cg", 2) == 0);
    sla_pattern_free(&p);
    free(v);
}

static void iterative_fallback_is_reported(void **state)
{
    /* symmetric, positive diagonal, indefinite, and forced onto the iterative path: CG sees
     * negative curvature, auto falls back to MINRES once and says so */
    sla_pattern *p = NULL;
    double *v = NULL;
    build_indefinite(200, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.memory_budget = 1;
    o.precond = SLA_PRECOND_NONE;
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, &o, desc, sizeof desc, 1e-8));
    if (!strstr(desc, "cg stopped (indefinite) → minres") || strncmp(desc, "minres", 6) != 0)
        fail_msg("expected the CG → MINRES fallback in '%s'", desc);
    sla_pattern_free(&p);
    free(v);
}

static void unsymmetric_iterative_and_forced_errors(void **state)
{
    if (!tu_have_matrices()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load("west0479.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CHOLESKY;           /* cannot work: unsymmetric */
    sla_solver *s = NULL;
    sla_status st = sla_solver_create(&A, &o, &s);
    assert_true(st < 0);
    assert_null(s);
    assert_non_null(strstr(sla_last_error(), "symmetric"));
    sla_pattern_free(&p);
    free(v);
    /* an unsymmetric generated matrix on the iterative path gets GMRES */
    tu_poisson2d(30, 30, &p, &v);
    for (int64_t s2 = 0; s2 < sla_pattern_nnz(p); s2++) {
        int64_t i = sla_pattern_rowind(p)[s2], j = sla_pattern_colind(p)[s2];
        if (j == i + 1) v[s2] = -1.2;         /* convection-diffusion: upwinded, row sums kept */
        if (j == i - 1) v[s2] = -0.8;
    }
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options_init(&o);
    o.memory_budget = 1;
    char desc[SLA_DESCRIPTION_LEN];
    st = solve_ones(&A, &o, desc, sizeof desc, 1e-8);
    if (st != SLA_OK) fail_msg("status %d: %s", (int)st, sla_last_error());
    if (strncmp(desc, "gmres", 5) != 0 || !strstr(desc, "unsymmetric"))
        fail_msg("expected GMRES for an unsymmetric matrix, got '%s'", desc);
    sla_pattern_free(&p);
    free(v);
}

static void rectangular_is_refused(void **state)
{
    int64_t r[] = {0, 1, 2}, c[] = {0, 1, 0};
    double v[] = {1, 2, 3};
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(3, 2, 3, r, c, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, NULL, &s), SLA_ESHAPE);
    assert_non_null(strstr(sla_last_error(), "3 × 2"));
    sla_pattern_free(&p);
}

static void registry_lists_every_backend(void **state)
{
    const char *want[] = {"cholmod", "umfpack", "klu", "mumps", "krylov"};
    int64_t n = sla_backend_count();
    assert_true(n >= 5);
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int found = 0;
        for (int64_t i = 0; i < n; i++) {
            sla_backend_info bi;
            TU_OK(sla_backend_get(i, &bi));
            if (strcmp(bi.name, want[w]) != 0) continue;
            found = 1;
            assert_true(bi.available || bi.unavailable_reason);
            assert_true(bi.methods != 0);
        }
        if (!found) fail_msg("backend %s not registered", want[w]);
    }
    sla_backend_info bi;
    assert_int_equal(sla_backend_get(n, &bi), SLA_EINVAL);
    /* a backend asked for by a name that does not exist */
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(4, 4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CHOLESKY;
    o.backend = "petsc";
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EUNSUPPORTED);
    assert_non_null(strstr(sla_last_error(), "petsc"));
    sla_pattern_free(&p);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(direct_rules_on_real_matrices),
        cmocka_unit_test(cholesky_failure_falls_back_to_ldlt),
        cmocka_unit_test(memory_budget_switches_to_iterative),
        cmocka_unit_test(iterative_fallback_is_reported),
        cmocka_unit_test(unsymmetric_iterative_and_forced_errors),
        cmocka_unit_test(rectangular_is_refused),
        cmocka_unit_test(registry_lists_every_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
