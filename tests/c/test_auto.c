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

static void check_choice(const char *name, const char *desc, const char *method_prefix,
                         const char *why)
{
    if (strncmp(desc, method_prefix, strlen(method_prefix)) != 0 || !strstr(desc, why))
        fail_msg("%s: auto chose '%s', expected '%s...' with '%s'", name, desc, method_prefix, why);
}

static void expect_auto(const char *name, const char *method_prefix, const char *why)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load(name, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-8));
    check_choice(name, desc, method_prefix, why);
    sla_pattern_free(&p);
    free(v);
}

static void rules_on_real_matrices(void **state)
{
    if (!tu_have_matrices()) skip();
    /* rules 4 and 6: the analysis decides, and is handed to the backend */
    expect_auto("bcsstk13.mtx", "cholesky (CHOLMOD", "symmetric, positive diagonal, Cholesky "
                "succeeded; predicted nnz(L) 266 k");
    /* the M-matrix sign pattern without diagonal dominance (and 3 flops per entry of A): no
     * AMG rule, the factorization */
    expect_auto("1138_bus.mtx", "cholesky (CHOLMOD", "Cholesky succeeded; predicted nnz(L)");
    /* rule 2: Stieltjes matrices of small diameter take IC(0)-CG without any analysis */
    expect_auto("nos6.mtx", "cg + ic0", "Stieltjes matrix");
    expect_auto("Laplace3D10.mtx", "cg + ic0", "pseudo-diameter 27 → ~14 IC(0)-CG iterations ≤ 60");
    /* rule 6: sparse factors (KLU's analysis: 14, 12, 3, 6 flops per entry) go to KLU, also
     * symmetric indefinite ones */
    expect_auto("hangGlider_2.mtx", "klu (KLU", "symmetric, diagonal not positive, sparse factor "
                "(flops/nnz(L+U) 14 < 40); predicted nnz(L+U)");
    expect_auto("west0479.mtx", "klu (KLU", "unsymmetric, sparse factor (flops/nnz(L+U) 12 < 40)");
    expect_auto("rajat19.mtx", "klu (KLU", "unsymmetric, sparse factor");
    expect_auto("pores_1.mtx", "klu (KLU", "unsymmetric, sparse factor");
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

static void cholesky_failure_falls_back(void **state)
{
    /* a sparse factor (1 flop per entry): KLU */
    sla_pattern *p = NULL;
    double *v = NULL;
    build_indefinite(10, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-12));
    check_choice("2×2 blocks", desc, "klu", "not SPD (Cholesky failed), sparse factor");
    sla_pattern_free(&p);
    free(v);
    /* a factor with dense fronts: D (A − 2I) D for the 3D Laplacian on 10³ with the
     * checkerboard D = diag((−1)^(x+y+z)): eigenvalues −1.76 … 9.76, positive diagonal, positive
     * off-diagonal entries (no M-matrix rule), 72 flops per entry of L: LDLᵀ */
    if (!tu_have_matrices()) skip();
    tu_load("Laplace3D10.mtx", &p, &v);
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t k = 0; k < sla_pattern_nnz(p); k++) {
        if (ri[k] == ci[k]) v[k] -= 2;
        else v[k] = -v[k];
    }
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-10));
    if (strncmp(desc, "ldlt", 4) != 0 && strncmp(desc, "lu", 2) != 0)
        fail_msg("expected LDLᵀ (or LU without MUMPS), got '%s'", desc);
    assert_non_null(strstr(desc, "not SPD (Cholesky failed), dense-front factor "
                           "(flops/nnz(L) 72 ≥ 40)"));
    sla_pattern_free(&p);
    free(v);
}

/* Solves 2D Poisson nx × ny with auto, checks the choice; returns 1 if `absent` is not in the
 * description either. */
static int expect_poisson(int64_t nx, int64_t ny, const char *method_prefix, const char *why,
                          const char *absent)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    char desc[SLA_DESCRIPTION_LEN], name[64];
    tu_poisson2d(nx, ny, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-9));
    snprintf(name, sizeof name, "poisson %lld × %lld", (long long)nx, (long long)ny);
    check_choice(name, desc, method_prefix, why);
    sla_pattern_free(&p);
    free(v);
    return !absent || !strstr(desc, absent);
}

/* Rule 2 on 2D Poisson: IC(0) up to pseudo-diameter 120 (60 × 60: 118), then (64 × 64: 126,
 * 4096 unknowns: no sample) the analysis, whose 120 flops per entry of A give AMG. */
static void stieltjes_rule_and_its_diameter_limit(void **state)
{
    expect_poisson(60, 60, "cg + ic0", "strictly in each of 1 components: SPD); pseudo-diameter "
                   "118 → ~59 IC(0)-CG iterations ≤ 60: IC(0)", NULL);
    assert_true(expect_poisson(64, 64, "cg + AMG", "diagonally dominant, M-matrix sign pattern, "
                               "flops/nnz(A)", "ball"));
}

/* 2D Poisson nx × ny (as tu_poisson2d) on n ≥ nx·ny unknowns, plus `extra` more COO entries. */
static void poisson_plus(int64_t nx, int64_t ny, int64_t n, int extra, const int64_t *er,
                         const int64_t *ec, const double *ev, sla_pattern **p, double **v)
{
    sla_pattern *g = NULL;
    double *gv = NULL;
    tu_poisson2d(nx, ny, &g, &gv);
    int64_t nnz = sla_pattern_nnz(g) + extra, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)nnz), *c = malloc(sizeof(int64_t) * (size_t)nnz);
    double *x = malloc(sizeof(double) * (size_t)nnz);
    const int64_t *gr = sla_pattern_rowind(g);
    const int32_t *gc = sla_pattern_colind(g);
    for (; k < sla_pattern_nnz(g); k++) { r[k] = gr[k]; c[k] = gc[k]; x[k] = gv[k]; }
    for (int t = 0; t < extra; t++, k++) { r[k] = er[t]; c[k] = ec[t]; x[k] = ev[t]; }
    TU_OK(sla_pattern_from_coo(n, n, nnz, r, c, p));
    *v = malloc(sizeof(double) * (size_t)nnz);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, x, *v));
    sla_pattern_free(&g);
    free(gv); free(r); free(c); free(x);
}

/* A − I/2 for 2D Poisson 100²: the M-matrix sign pattern and a positive diagonal, but
 * indefinite (not diagonally dominant), so neither IC(0) nor AMG-PCG: the Cholesky attempt
 * fails and the factor, 59 flops per entry, goes to LDLᵀ. */
static void shifted_laplacian_is_not_sent_to_cg(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(100, 100, &p, &v);
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t k = 0; k < sla_pattern_nnz(p); k++)
        if (ri[k] == ci[k]) v[k] -= 0.5;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-8));
    if (strncmp(desc, "ldlt", 4) != 0 && strncmp(desc, "lu", 2) != 0)
        fail_msg("expected LDLᵀ (or LU without MUMPS), got '%s'", desc);
    assert_non_null(strstr(desc, "not SPD (Cholesky failed), dense-front factor"));
    sla_pattern_free(&p);
    free(v);
}

/* Weakly diagonally dominant everywhere, but the second component, [[1, −1], [−1, 1]], has no
 * strictly dominant row (it is singular): not a Stieltjes matrix, so no IC(0) rule; Cholesky
 * fails and KLU keeps the singular factorization. */
static void stieltjes_needs_a_strict_row_in_every_component(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    const int64_t br[] = {36, 36, 37, 37}, bc[] = {36, 37, 36, 37};
    const double bv[] = {1, -1, -1, 1};
    poisson_plus(6, 6, 38, 4, br, bc, bv, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, NULL, &s));
    check_choice("grid + singular block", sla_solver_describe(s), "klu",
                 "not SPD (Cholesky failed), sparse factor");
    assert_null(strstr(sla_solver_describe(s), "Stieltjes"));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
}

/* Rule 3: 2D Poisson 100² (10⁴ unknowns > 4 × 1024) is decided from a 1024-node ball: 46 flops
 * per entry there, dimension 2, extrapolated to 160 > 100: AMG without the full analysis. A
 * strip 1000 × 12 (diameter 1010: no IC(0)) has a one-dimensional ball: no growth, so the full
 * analysis decides, and its cheap factor stays direct. */
static void sampled_rule_on_large_graphs(void **state)
{
    expect_poisson(100, 100, "cg + AMG", "(AMD on a 1024-node ball: 46, dimension 2.1, "
                   "extrapolated): AMG", NULL);
    expect_poisson(1000, 12, "cholesky", "Cholesky succeeded; predicted nnz(L)", NULL);
}

/* An explicitly stored zero without its mirror keeps a matrix symmetric (the test compares
 * with 0), so the Stieltjes rule still applies; a mirror off by more than the tolerance makes
 * it unsymmetric (KLU). */
static void symmetry_test_pairs_missing_mirrors(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    const int64_t er[] = {0}, ec[] = {30};
    const double ev[] = {0};
    poisson_plus(8, 8, 64, 1, er, ec, ev, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-9));
    check_choice("stored zero", desc, "cg + ic0", "Stieltjes matrix");
    /* now a(0, 30) = −1e-3 with no mirror: unsymmetric */
    v[sla_pattern_find(p, 0, 30)] = -1e-3;
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-9));
    check_choice("unpaired entry", desc, "klu", "unsymmetric, sparse factor");
    /* and a mirror pair differing in the 12th digit (beyond 1000ε relative) too */
    v[sla_pattern_find(p, 0, 30)] = 0;
    v[sla_pattern_find(p, 0, 1)] *= 1 + 1e-11;
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-9));
    check_choice("perturbed pair", desc, "klu", "unsymmetric");
    /* while a difference in the 15th digit is rounding */
    v[sla_pattern_find(p, 0, 1)] = -1 * (1 + 1e-14);
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-9));
    check_choice("rounding", desc, "cg + ic0", "Stieltjes matrix");
    sla_pattern_free(&p);
    free(v);
}

/* float32 cannot reach rtol 1e-10 by iteration: the preference for IC(0) applies only from
 * rtol ≥ 1000ε = 1.2e-4 (the direct backends factor in double). */
static void float32_rules_respect_the_attainable_rtol(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(20, 20, &p, &v);
    int64_t nnz = sla_pattern_nnz(p), n = 400;
    float *vf = malloc(sizeof(float) * (size_t)nnz), *b = malloc(sizeof(float) * (size_t)n),
          *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t k = 0; k < nnz; k++) vf[k] = (float)v[k];
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    sla_solver_options o;
    sla_solver_options_init(&o);
    const char *want[] = {"cholesky", "cg + ic0"};
    const double rtol[] = {1e-10, 1e-3};
    for (int t = 0; t < 2; t++) {
        o.rtol = rtol[t];
        sla_solver *s = NULL;
        sla_solve_info info;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        check_choice("float32 poisson 20²", sla_solver_describe(s), want[t], "");
        /* ‖b − A x‖ ≤ max(rtol, float32 rounding) ‖b‖ */
        double rr = 0;
        for (int64_t i = 0; i < n; i++) {
            double ri = b[i];
            for (int64_t k = sla_pattern_rowptr(p)[i]; k < sla_pattern_rowptr(p)[i + 1]; k++)
                ri -= (double)vf[k] * (double)x[sla_pattern_colind(p)[k]];
            rr += ri * ri;
        }
        assert_true(sqrt(rr) <= 1e-3 * sqrt((double)n));
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v); free(vf); free(b); free(x);
}

/* The analysis handed from auto to CHOLMOD and KLU serves refactors and batches like the
 * backend's own: refactor with 2A, then a batch [A, 2A]. */
static void handed_analysis_refactors_and_batches(void **state)
{
    if (!tu_have_matrices()) skip();
    const char *names[] = {"1138_bus.mtx", "west0479.mtx"}, *want[] = {"cholesky", "klu"};
    for (int t = 0; t < 2; t++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        tu_load(names[t], &p, &v);
        int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
        double *v2 = malloc(sizeof(double) * (size_t)(2 * nnz));
        double *b = malloc(sizeof(double) * (size_t)(2 * n));
        double *x = malloc(sizeof(double) * (size_t)(2 * n));
        for (int64_t k = 0; k < nnz; k++) { v2[k] = v[k]; v2[nnz + k] = 2 * v[k]; }
        for (int64_t i = 0; i < 2 * n; i++) b[i] = 1;
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver *s = NULL;
        sla_solve_info info;
        TU_OK(sla_solver_create(&A, NULL, &s));
        check_choice(names[t], sla_solver_describe(s), want[t], "predicted nnz(");
        TU_OK(sla_solver_refactor(s, v2 + nnz));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        /* 2A x = 1: x is half the solution of A x = 1, so A (2x) = 1 */
        for (int64_t i = 0; i < n; i++) x[i] *= 2;
        double *r = malloc(sizeof(double) * (size_t)(2 * n));
        memcpy(r, b, sizeof(double) * (size_t)n);
        TU_OK(sla_spmv(SLA_OP_N, -1.0, &A, x, 0, 1, 1.0, r));
        assert_true(tu_norm2(r, n) <= 1e-8 * tu_norm2(b, n));
        sla_solver_free(&s);
        sla_matrix B = sla_matrix_view(p, SLA_FLOAT64, 2, v2);
        TU_OK(sla_solver_create(&B, NULL, &s));
        check_choice(names[t], sla_solver_describe(s), want[t], "");
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        memcpy(r, b, sizeof(double) * (size_t)(2 * n));
        TU_OK(sla_spmv(SLA_OP_N, -1.0, &B, x, 1, 1, 1.0, r));
        assert_true(tu_norm2(r, 2 * n) <= 1e-8 * tu_norm2(b, 2 * n));
        sla_solver_free(&s);
        sla_pattern_free(&p);
        free(v); free(v2); free(b); free(x); free(r);
    }
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

/* options.need_determinant: a Stieltjes matrix (rule 2 would take IC(0)-CG) and a budget no
 * factor fits (rule 7) still get a factorization, and the determinant is the closed form of
 * the 2D Laplacian: log det = Σ log(4 − 2cos(iπ/(k+1)) − 2cos(jπ/(k+1))). */
static void need_determinant_forces_a_factorization(void **state)
{
    const int64_t k = 12;
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(k, k, &p, &v);
    for (int64_t i = 0; i < sla_pattern_nnz(p); i++)     /* strictly dominant boundary rows */
        if (sla_pattern_rowind(p)[i] == sla_pattern_colind(p)[i]) v[i] = 4;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    char desc[SLA_DESCRIPTION_LEN];
    TU_OK(solve_ones(&A, NULL, desc, sizeof desc, 1e-8));
    check_choice("poisson 12²", desc, "cg + ic0", "Stieltjes matrix");
    double exact = 0;
    for (int64_t i = 1; i <= k; i++)
        for (int64_t j = 1; j <= k; j++)
            exact += log(4 - 2 * cos((double)i * acos(-1.0) / (double)(k + 1)) -
                         2 * cos((double)j * acos(-1.0) / (double)(k + 1)));
    for (int budget = 0; budget <= 1; budget++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.need_determinant = 1;
        if (budget) o.memory_budget = 1000;           /* bytes: no factor fits */
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        check_choice("need_determinant", sla_solver_describe(s), "cholesky (CHOLMOD",
                     "determinant requested: direct");
        double sg, ld;
        TU_OK(sla_solver_logdet(s, &sg, &ld));
        assert_true(sg == 1 && fabs(ld - exact) <= 1e-12 * fabs(exact));
        sla_solver_free(&s);
    }
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

/* Every allocation of auto's own path failing in turn (its facts, sweeps, sample, the analysis
 * it hands over, then the backend's create): SLA_ENOMEM and nothing leaked (AddressSanitizer
 * checks), until the create succeeds. A 1D Laplacian of 4200 unknowns takes the sample (> 4096,
 * diameter too large for IC(0)), then the CHOLMOD analysis; an unsymmetric 2D convection-
 * diffusion matrix the KLU analysis. */
static void allocation_failures(void **state)
{
    sla_pattern *p[2] = {NULL, NULL};
    double *v[2] = {NULL, NULL};
    tu_poisson2d(4200, 1, &p[0], &v[0]);
    tu_poisson2d(10, 10, &p[1], &v[1]);
    for (int64_t s = 0; s < sla_pattern_nnz(p[1]); s++)
        if (sla_pattern_colind(p[1])[s] == sla_pattern_rowind(p[1])[s] + 1) v[1][s] = -1.5;
    const char *want[] = {"cholesky", "klu"};
    for (int t = 0; t < 2; t++) {
        sla_matrix A = sla_matrix_view(p[t], SLA_FLOAT64, 1, v[t]);
        int failures = 0;
        for (int64_t k = 0;; k++) {
            sla_solver *s = NULL;
            sla_test_fail_alloc_after(k);
            sla_status st = sla_solver_create(&A, NULL, &s);
            int64_t used = sla_test_fail_alloc_after(-1);
            if (st == SLA_OK && used <= k) {
                check_choice("allocation failures", sla_solver_describe(s), want[t], "");
                sla_solver_free(&s);
                break;
            }
            sla_solver_free(&s);
            if (st != SLA_ENOMEM) fail_msg("allocation %lld failing: status %d (%s)", (long long)k,
                                           (int)st, sla_last_error());
            failures++;
        }
        assert_true(failures > 10);
        sla_pattern_free(&p[t]);
        free(v[t]);
    }
}

/* rectangular: auto chooses LSQR (rule 0) and says why; a direct method is refused */
static void rectangular_goes_lsqr(void **state)
{
    int64_t r[] = {0, 1, 2}, c[] = {0, 1, 0};
    double v[] = {1, 2, 3};
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(3, 2, 3, r, c, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, NULL, &s));
    assert_int_equal(sla_solver_method(s), SLA_METHOD_LSQR);
    assert_non_null(strstr(sla_solver_describe(s), "auto: rectangular 3 × 2"));
    /* A = [1 0; 0 2; 3 0], b = (1, 2, 3): x = ((1 + 9)/10, 1) = (1, 1), r = 0 */
    double b[3] = {1, 2, 3}, x[2];
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    TU_CLOSE(x[0], 1, 1e-12);
    TU_CLOSE(x[1], 1, 1e-12);
    sla_solver_free(&s);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CHOLESKY;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_ESHAPE);
    assert_non_null(strstr(sla_last_error(), "3 × 2"));
    /* a determinant of a rectangular matrix: a shape error, not "lsqr gives no determinant" */
    sla_solver_options_init(&o);
    o.need_determinant = 1;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_ESHAPE);
    assert_non_null(strstr(sla_last_error(), "sla_solver_create: A is 3 × 2: a determinant needs "
                           "a square matrix"));
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
        cmocka_unit_test(rules_on_real_matrices),
        cmocka_unit_test(cholesky_failure_falls_back),
        cmocka_unit_test(stieltjes_rule_and_its_diameter_limit),
        cmocka_unit_test(stieltjes_needs_a_strict_row_in_every_component),
        cmocka_unit_test(shifted_laplacian_is_not_sent_to_cg),
        cmocka_unit_test(sampled_rule_on_large_graphs),
        cmocka_unit_test(symmetry_test_pairs_missing_mirrors),
        cmocka_unit_test(float32_rules_respect_the_attainable_rtol),
        cmocka_unit_test(handed_analysis_refactors_and_batches),
        cmocka_unit_test(memory_budget_switches_to_iterative),
        cmocka_unit_test(need_determinant_forces_a_factorization),
        cmocka_unit_test(iterative_fallback_is_reported),
        cmocka_unit_test(unsymmetric_iterative_and_forced_errors),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(rectangular_goes_lsqr),
        cmocka_unit_test(registry_lists_every_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
