/* Preconditioners through the solver API: IC(0)/ILU(0) are exact where the pattern has no fill
 * (so a Krylov method converges in one step, op = N and T, serial and level-scheduled), ILU(0)
 * and IC(0) agree on symmetric matrices, breakdowns name the row, refactor reuses the set-up,
 * the user callback, AMG when it is in the build. */
#include <stdio.h>

#include "ktest.h"

/* Block-diagonal matrix of nb tridiagonal blocks of size bs: no fill in natural order, and
 * with many blocks the level schedule has bs levels of nb rows (wide enough to be used). */
static void block_tridiag(int64_t nb, int64_t bs, int symmetric, sla_pattern **p, double **values)
{
    int64_t n = nb * bs, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * 3 * (size_t)n), *c = malloc(sizeof(int64_t) * 3 * (size_t)n);
    double *v = malloc(sizeof(double) * 3 * (size_t)n);
    uint64_t seed = 5;
    for (int64_t i = 0; i < n; i++) {
        int64_t q = i % bs;
        if (q > 0) { r[k] = i; c[k] = i - 1; v[k++] = -1 + 0.3 * tu_rand(&seed); }
        r[k] = i; c[k] = i; v[k++] = 4 + tu_rand(&seed);
        if (q < bs - 1) { r[k] = i; c[k] = i + 1; v[k++] = -1 + 0.3 * tu_rand(&seed); }
    }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc(sizeof(double) * (size_t)k);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    if (symmetric)   /* mirror the lower triangle */
        for (int64_t i = 0; i < n; i++)
            if (i % bs > 0)
                (*values)[sla_pattern_find(*p, i - 1, i)] = (*values)[sla_pattern_find(*p, i, i - 1)];
    free(r); free(c); free(v);
}

/* One-step convergence of method + precond for op = N and T against the dense solution. */
static void expect_exact(const sla_matrix *A, sla_method m, sla_precond pc)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_solver_options o = kt_options(m, pc, 1e-12);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(A, &o, &s));
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n),
           *xr = malloc(sizeof(double) * n);
    tu_fill_random(b, n, 17);
    for (int op = 0; op < 2; op++) {
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, (sla_op)op, 1, b, x, &info));
        if (info.iterations != 1)
            fail_msg("%s op %d: %lld iterations", sla_solver_describe(s), op, (long long)info.iterations);
        if (n <= 2000) {
            kt_dense_solve(A, 0, (sla_op)op, b, xr);
            assert_true(kt_relerr(x, xr, n) < 1e-11);
        } else {
            assert_true(kt_residual(A, 0, (sla_op)op, x, b) <= 1e-12 * tu_norm2(b, n));
        }
    }
    free(b); free(x); free(xr);
    sla_solver_free(&s);
}

static void exact_without_fill(void **state)
{
    /* tridiagonal: one chain (serial substitution) */
    sla_pattern *p;
    double *v;
    kt_tridiag(300, -1.2, 4, -0.7, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    expect_exact(&A, SLA_METHOD_GMRES, SLA_PRECOND_ILU0);
    expect_exact(&A, SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0);
    sla_pattern_free(&p);
    free(v);
    kt_tridiag(300, -1, 4, -1, &p, &v);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    expect_exact(&A, SLA_METHOD_CG, SLA_PRECOND_IC0);
    sla_pattern_free(&p);
    free(v);
}

static void exact_level_scheduled(void **state)
{
    /* 12000 blocks of 3: n = 36000 rows in 3 levels of 12000, so with threads and the
     * parallel-region threshold lowered (levels this narrow are not worth a barrier by default)
     * the factorizations and substitutions run by level schedule; still exact, op = N and T */
    double saved = sla_test_par_min_bytes(0);
    sla_pattern *p;
    double *v;
    block_tridiag(12000, 3, 0, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    expect_exact(&A, SLA_METHOD_GMRES, SLA_PRECOND_ILU0);
    expect_exact(&A, SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0);
    sla_pattern_free(&p);
    free(v);
    block_tridiag(12000, 3, 1, &p, &v);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    expect_exact(&A, SLA_METHOD_CG, SLA_PRECOND_IC0);
    sla_pattern_free(&p);
    free(v);
    sla_test_par_min_bytes(saved);
}

static void batch_parallel_equals_serial(void **state)
{
    /* level-scheduled substitutions compute every row exactly as the serial ones: with one
     * chunk for the dots (batch ≥ threads runs each system on one thread) the iterates are
     * bit-identical to a single-threaded run */
    sla_pattern *p;
    double *v1;
    tu_poisson2d(150, 150, &p, &v1);
    int64_t n = 22500, nnz = sla_pattern_nnz(p);
    int nt = sla_get_num_threads();
    int64_t B = nt > 1 ? nt : 2;
    double *v = malloc(sizeof(double) * (size_t)(B * nnz));
    for (int64_t b = 0; b < B; b++) memcpy(v + b * nnz, v1, sizeof(double) * (size_t)nnz);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, B, v);
    double *rhs = malloc(sizeof(double) * (size_t)(B * n)), *X1 = malloc(sizeof(double) * (size_t)(B * n)),
           *X2 = malloc(sizeof(double) * (size_t)(B * n));
    for (int64_t b = 0; b < B; b++) tu_fill_random(rhs + b * n, n, 3);   /* same rhs in each */
    sla_precond pcs[] = {SLA_PRECOND_IC0, SLA_PRECOND_ILU0};
    sla_method ms[] = {SLA_METHOD_CG, SLA_METHOD_GMRES};
    for (int t = 0; t < 2; t++) {
        sla_solver_options o = kt_options(ms[t], pcs[t], 1e-8);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_T, 1, rhs, X1, NULL));
        (void)sla_set_num_threads(1);
        TU_OK(sla_solver_solve(s, SLA_OP_T, 1, rhs, X2, NULL));
        (void)sla_set_num_threads(nt);
        assert_memory_equal(X1, X2, sizeof(double) * (size_t)(B * n));
        /* and every batch element equal (same data) */
        for (int64_t b = 1; b < B; b++) assert_memory_equal(X1, X1 + b * n, sizeof(double) * (size_t)n);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v1); free(v); free(rhs); free(X1); free(X2);
}

static void ilu0_equals_ic0_on_symmetric(void **state)
{
    /* for symmetric A, ILU(0) = L (D Lᵀ) and IC(0) = (L D^½)(D^½ Lᵀ) are the same M: GMRES
     * with either takes the same iterations to the same solution */
    sla_pattern *p;
    double *v;
    tu_poisson2d(48, 48, &p, &v);
    int64_t n = 48 * 48;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = kt_ones(n), *x1 = malloc(sizeof(double) * n), *x2 = malloc(sizeof(double) * n);
    sla_solve_info i1, i2;
    sla_solver *s = NULL;
    sla_solver_options o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_ILU0, 1e-10);
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x1, &i1));
    sla_solver_free(&s);
    o.precond = SLA_PRECOND_IC0;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, &i2));
    sla_solver_free(&s);
    assert_int_equal(i1.iterations, i2.iterations);
    assert_true(kt_relerr(x1, x2, n) < 1e-9);
    sla_pattern_free(&p);
    free(v); free(b); free(x1); free(x2);
}

static void breakdown_messages(void **state)
{
    sla_pattern *p;
    double *v;
    sla_solver *s = NULL;
    kt_tridiag(20, 1, 1, 1, &p, &v);          /* symmetric, not SPD: pivot 1 − 1 = 0 at row 1 */
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    for (int64_t i = 0; i < 20; i++) v[sla_pattern_find(p, i, i)] = 1;
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-10);
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EBREAKDOWN);
    assert_null(s);
    assert_non_null(strstr(sla_last_error(), "IC(0) breakdown at row 1 (batch element 0)"));
    /* ILU(0): the same zero pivot */
    o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_ILU0, 1e-10);
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "ILU(0): zero pivot at row 1 (batch element 0)"));
    /* Jacobi: a zero diagonal */
    v[sla_pattern_find(p, 7, 7)] = 0;
    o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_JACOBI, 1e-10);
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "zero or missing diagonal entry in row 7 (batch element 0)"));
    /* precond = auto gives way: GMRES on this matrix falls back to none and says why */
    o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_AUTO, 1e-10);
    TU_OK(sla_solver_create(&A, &o, &s));
    const char *d = sla_solver_describe(s);
    assert_non_null(strstr(d, "gmres(50) + none"));
    assert_non_null(strstr(d, "ilu0 failed"));
    assert_non_null(strstr(d, "jacobi failed"));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
}

static void refactor_reuses_setup(void **state)
{
    /* create on A1, refactor to A2: the same iterates as a fresh create on A2, op = N and T */
    sla_pattern *p;
    double *v1;
    kt_random_matrix(400, 4, 8, 0, 21, &p, &v1);
    int64_t n = 400, nnz = sla_pattern_nnz(p);
    double *v2 = malloc(sizeof(double) * (size_t)nnz), *v1s;
    for (int64_t k = 0; k < nnz; k++) v2[k] = 1.5 * v1[k] + 0.1 * sin((double)k);
    sla_pattern *ps;
    kt_random_matrix(400, 4, 8, 1, 22, &ps, &v1s);   /* symmetric, for IC(0) */
    int64_t nnzs = sla_pattern_nnz(ps);
    double *v2s = malloc(sizeof(double) * (size_t)nnzs);
    for (int64_t k = 0; k < nnzs; k++) v2s[k] = 0.5 * v1s[k];
    double b[400], x1[400], x2[400], xr[400];
    tu_fill_random(b, n, 2);
    struct { sla_method m; sla_precond pc; int sym; } cases[] = {
        {SLA_METHOD_GMRES, SLA_PRECOND_ILU0, 0}, {SLA_METHOD_BICGSTAB, SLA_PRECOND_JACOBI, 0},
        {SLA_METHOD_CG, SLA_PRECOND_IC0, 1}};
    for (int t = 0; t < 3; t++) {
        sla_pattern *pp = cases[t].sym ? ps : p;
        double *a1 = cases[t].sym ? v1s : v1, *a2 = cases[t].sym ? v2s : v2;
        sla_matrix A1 = sla_matrix_view(pp, SLA_FLOAT64, 1, a1), A2 = sla_matrix_view(pp, SLA_FLOAT64, 1, a2);
        sla_solver_options o = kt_options(cases[t].m, cases[t].pc, 1e-12);
        sla_solver *s = NULL, *fresh = NULL;
        TU_OK(sla_solver_create(&A1, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_T, 1, b, x1, NULL));   /* builds ILU(0)'s transposed factors */
        TU_OK(sla_solver_refactor(s, a2));
        TU_OK(sla_solver_create(&A2, &o, &fresh));
        for (int op = 0; op < 2; op++) {
            sla_solve_info i1, i2;
            TU_OK(sla_solver_solve(s, (sla_op)op, 1, b, x1, &i1));
            TU_OK(sla_solver_solve(fresh, (sla_op)op, 1, b, x2, &i2));
            assert_int_equal(i1.iterations, i2.iterations);
            assert_memory_equal(x1, x2, sizeof x1);
            kt_dense_solve(&A2, 0, (sla_op)op, b, xr);
            assert_true(kt_relerr(x1, xr, n) < 1e-9);
        }
        sla_solver_free(&s);
        sla_solver_free(&fresh);
    }
    /* a refactor whose IC(0) breaks down: the error names the row, solves are refused until
     * a refactor succeeds */
    sla_matrix A1 = sla_matrix_view(ps, SLA_FLOAT64, 1, v1s);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A1, &o, &s));
    for (int64_t k = 0; k < nnzs; k++) v2s[k] = -v1s[k];
    assert_int_equal(sla_solver_refactor(s, v2s), SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "at row 0"));
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x1, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "refactor"));
    TU_OK(sla_solver_refactor(s, v1s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x1, NULL));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    sla_pattern_free(&ps);
    free(v1); free(v2); free(v1s); free(v2s);
}

/* ---- user preconditioner ---- */

typedef struct user_pc {
    const double *diag;          /* Jacobi through the callback */
    int64_t n, calls_n, calls_t;
    double sign;                 /* −1 makes it negative definite */
    int fail;
} user_pc;

static int user_apply(void *ctx, sla_op op, int64_t b, const void *r, void *z)
{
    user_pc *u = ctx;
    if (u->fail) return 42;
    if (op == SLA_OP_N) u->calls_n++; else u->calls_t++;
    for (int64_t i = 0; i < u->n; i++)
        ((double *)z)[i] = u->sign * ((const double *)r)[i] / u->diag[i];
    return 0;
}

static int spmv_apply(void *ctx, sla_op op, int64_t b, const void *x, void *y)
{
    return sla_spmv(op, 1.0, (const sla_matrix *)ctx, x, 0, 1, 0.0, y) != SLA_OK;
}

static void user_preconditioner(void **state)
{
    sla_pattern *p;
    double *v;
    kt_random_matrix(300, 4, 9, 1, 31, &p, &v);
    int64_t n = 300;
    for (int64_t i = 0; i < n; i++) v[sla_pattern_find(p, i, i)] += (double)(i % 10);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double diag[300], b[300], x1[300], x2[300];
    TU_OK(sla_matrix_diagonal(&A, diag));
    tu_fill_random(b, n, 4);
    user_pc u = {diag, n, 0, 0, 1, 0};
    /* CG: the callback doing Jacobi matches the built-in Jacobi */
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_USER, 1e-10);
    o.user_precond = user_apply;
    o.user_precond_ctx = &u;
    sla_solver *s = NULL, *ref = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_non_null(strstr(sla_solver_describe(s), "cg + user"));
    sla_solve_info i1, i2;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x1, &i1));
    assert_int_equal(i1.precond, SLA_PRECOND_USER);
    sla_solver_options oj = kt_options(SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-10);
    TU_OK(sla_solver_create(&A, &oj, &ref));
    TU_OK(sla_solver_solve(ref, SLA_OP_N, 1, b, x2, &i2));
    assert_true(llabs(i1.iterations - i2.iterations) <= 1);
    assert_true(kt_relerr(x1, x2, n) < 1e-8);
    assert_true(u.calls_n >= i1.iterations);
    sla_solver_free(&s);
    sla_solver_free(&ref);
    /* GMRES adjoint solve: the callback is asked for M⁻ᵀ */
    o.method = SLA_METHOD_GMRES;
    TU_OK(sla_solver_create(&A, &o, &s));
    double g[300], db[300];
    tu_fill_random(g, n, 5);
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x1, g, db, NULL, NULL));
    assert_true(u.calls_t > 0);
    /* a failing callback: SLA_ECALLBACK naming it */
    u.fail = 1;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x1, NULL), SLA_ECALLBACK);
    assert_non_null(strstr(sla_last_error(), "preconditioner callback returned 42"));
    sla_solver_free(&s);
    /* matrix-free operator + user preconditioner */
    u.calls_n = 0;
    u.fail = 0;
    o = kt_options(SLA_METHOD_CG, SLA_PRECOND_USER, 1e-10);
    o.user_precond = user_apply;
    o.user_precond_ctx = &u;
    TU_OK(sla_solver_create_operator(n, SLA_FLOAT64, 1, spmv_apply, &A, &o, &s));
    assert_non_null(strstr(sla_solver_describe(s), "cg + user (krylov, matrix-free)"));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, &i1));
    assert_true(u.calls_n >= i1.iterations);
    assert_true(kt_residual(&A, 0, SLA_OP_N, x2, b) <= 1e-10 * tu_norm2(b, n));
    sla_solver_free(&s);
    /* a negative definite M: CG and MINRES report it as indefinite, never converged */
    u.sign = -1;
    for (int m = 0; m < 2; m++) {
        o.method = m ? SLA_METHOD_MINRES : SLA_METHOD_CG;
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x1, &i1), SLA_NOT_CONVERGED);
        assert_int_equal(i1.reason, SLA_REASON_INDEFINITE);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v);
}

/* ---- AMG through amg.h ---- */

static void amg_preconditioner(void **state)
{
    sla_pattern *p;
    double *v1;
    tu_poisson2d(64, 64, &p, &v1);
    int64_t n = 4096, nnz = sla_pattern_nnz(p);
    double *v = malloc(sizeof(double) * 2 * (size_t)nnz);
    for (int64_t k = 0; k < nnz; k++) { v[k] = v1[k]; v[nnz + k] = 3 * v1[k]; }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, v);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-10);
    sla_solver *s = NULL;
    sla_status st = sla_solver_create(&A, &o, &s);
    if (st == SLA_EUNSUPPORTED) {
        /* not in this build: the message says so */
        assert_non_null(strstr(sla_last_error(), "AMG preconditioner is not in this build"));
        sla_pattern_free(&p);
        free(v1); free(v);
        skip();
    }
    TU_OK(st);
    assert_non_null(strstr(sla_solver_describe(s), "cg + AMG"));
    double *b = malloc(sizeof(double) * 2 * n), *x = malloc(sizeof(double) * 2 * n);
    tu_fill_random(b, 2 * n, 9);
    for (int op = 0; op < 2; op++) {
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, (sla_op)op, 1, b, x, &info));
        assert_true(info.iterations <= 20);
        for (int64_t e = 0; e < 2; e++)
            assert_true(kt_residual(&A, e, (sla_op)op, x + e * n, b + e * n) <= 1e-10 * tu_norm2(b + e * n, n));
    }
    /* refactor: element 1 becomes the Poisson matrix too */
    double *w = malloc(sizeof(double) * 2 * (size_t)nnz);
    for (int64_t k = 0; k < nnz; k++) { w[k] = 2 * v1[k]; w[nnz + k] = v1[k]; }
    TU_OK(sla_solver_refactor(s, w));
    A.values = w;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    for (int64_t e = 0; e < 2; e++)
        assert_true(kt_residual(&A, e, SLA_OP_N, x + e * n, b + e * n) <= 1e-10 * tu_norm2(b + e * n, n));
    sla_solver_free(&s);
    /* MINRES and GMRES accept it as well */
    o.method = SLA_METHOD_MINRES;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v1); free(v); free(w); free(b); free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_without_fill),
        cmocka_unit_test(exact_level_scheduled),
        cmocka_unit_test(batch_parallel_equals_serial),
        cmocka_unit_test(ilu0_equals_ic0_on_symmetric),
        cmocka_unit_test(breakdown_messages),
        cmocka_unit_test(refactor_reuses_setup),
        cmocka_unit_test(user_preconditioner),
        cmocka_unit_test(amg_preconditioner),
    };
    if (getenv("KT_FILTER")) cmocka_set_test_filter(getenv("KT_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
