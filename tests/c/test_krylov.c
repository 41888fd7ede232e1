/* Krylov methods: iteration counts on 2D Poisson, dense references for every method and op,
 * edge cases (b = 0, lucky breakdown, BiCGStab's breakdown restart, indefinite, non-finite,
 * stagnation), options (x0, monitor, maxiter), matrix-free operators, batches with different
 * convergence, float32, determinism and the rule for parallel regions, describe(), allocation
 * failures. */
#include <omp.h>
#include <stdio.h>

#include "ktest.h"

/* ---- 2D Poisson 256², b = 1, x0 = 0, rtol 1e-8: the iteration counts of docs/krylov.md ---- */

static int64_t poisson_iterations(sla_precond pc, int64_t nx, double *relres)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(nx, nx, &p, &v);
    int64_t n = nx * nx;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = kt_options(SLA_METHOD_CG, pc, 1e-8);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double *b = kt_ones(n), *x = calloc((size_t)n, sizeof(double));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(info.converged);
    assert_int_equal(info.reason, SLA_REASON_CONVERGED);
    /* the reported residual is the true one of the returned x */
    double r = kt_residual(&A, 0, SLA_OP_N, x, b);
    TU_CLOSE(info.residual_norm, r, 1e-6);
    assert_true(r <= 1e-8 * sqrt((double)n));
    *relres = r / sqrt((double)n);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(b); free(x);
    return info.iterations;
}

static void poisson_cg_jacobi(void **state)
{
    double rel;
    int64_t it = poisson_iterations(SLA_PRECOND_JACOBI, 256, &rel);
    assert_true(it >= 456 && it <= 484);      /* ≈ 470 (within 3%) */
}

static void poisson_cg_ic0(void **state)
{
    double rel;
    int64_t it = poisson_iterations(SLA_PRECOND_IC0, 256, &rel);
    assert_true(it >= 171 && it <= 181);      /* ≈ 176 in natural order (within 3%) */
}

static void poisson_cg_amg(void **state)
{
    if (!kt_have_amg()) skip();
    double rel;
    int64_t it256 = poisson_iterations(SLA_PRECOND_AMG, 256, &rel);
    int64_t it1024 = poisson_iterations(SLA_PRECOND_AMG, 1024, &rel);
    assert_true(it256 <= 15);
    assert_true(it1024 <= 15);
    assert_true(llabs(it1024 - it256) <= 3);  /* flat in the grid size */
}

/* ---- every method against a dense LAPACK solution, op = N and T ---- */

static void check_method(sla_method m, sla_precond pc, int symmetric, double shift, uint64_t seed)
{
    sla_pattern *p;
    double *v;
    int64_t n = 120;
    kt_random_matrix(n, 4, shift, symmetric, seed, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = kt_options(m, pc, 1e-13);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double b[120], x[120], xr[120];
    tu_fill_random(b, n, seed + 1);
    for (int op = 0; op < 2; op++) {
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, (sla_op)op, 1, b, x, &info));
        kt_dense_solve(&A, 0, (sla_op)op, b, xr);
        if (!(kt_relerr(x, xr, n) < 1e-10))
            fail_msg("%s op %d: error %g after %lld iterations", sla_solver_describe(s), op,
                     kt_relerr(x, xr, n), (long long)info.iterations);
        assert_true(info.residual_norm <= 1e-13 * tu_norm2(b, n));
        assert_int_equal(info.method, m);
    }
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
}

static void methods_dense_reference(void **state)
{
    /* SPD: diagonally dominant symmetric */
    check_method(SLA_METHOD_CG, SLA_PRECOND_NONE, 1, 10, 1);
    check_method(SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1, 10, 2);
    check_method(SLA_METHOD_CG, SLA_PRECOND_IC0, 1, 10, 3);
    check_method(SLA_METHOD_MINRES, SLA_PRECOND_NONE, 1, 10, 4);
    /* symmetric indefinite (shift inside the spectrum) */
    check_method(SLA_METHOD_MINRES, SLA_PRECOND_NONE, 1, 0.5, 5);
    check_method(SLA_METHOD_MINRES, SLA_PRECOND_JACOBI, 1, 0.5, 6);
    /* unsymmetric */
    for (int pc = 0; pc < 3; pc++) {
        sla_precond k = pc == 0 ? SLA_PRECOND_NONE : pc == 1 ? SLA_PRECOND_JACOBI : SLA_PRECOND_ILU0;
        check_method(SLA_METHOD_GMRES, k, 0, 6, 7 + (uint64_t)pc);
        check_method(SLA_METHOD_BICGSTAB, k, 0, 6, 17 + (uint64_t)pc);
    }
}

static void gmres_small_restart(void **state)
{
    /* restart 5 on an unsymmetric matrix: many cycles, still the dense solution */
    sla_pattern *p;
    double *v;
    int64_t n = 200;
    kt_random_matrix(n, 3, 4, 0, 99, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-12);
    o.restart = 5;
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_non_null(strstr(sla_solver_describe(s), "gmres(5) + none (krylov)"));
    double b[200], x[200], xr[200];
    tu_fill_random(b, n, 5);
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(info.iterations > 5);
    kt_dense_solve(&A, 0, SLA_OP_N, b, xr);
    assert_true(kt_relerr(x, xr, n) < 1e-9);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
}

/* ---- edge cases ---- */

static void zero_rhs(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(8, 8, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_AUTO, 1e-10);
        o.initial_guess_nonzero = 1;            /* even with a guess, b = 0 gives x = 0 */
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        double b[64] = {0}, x[64];
        for (int i = 0; i < 64; i++) x[i] = 3.0;
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        assert_true(info.converged);
        assert_int_equal(info.iterations, 0);
        assert_true(info.residual_norm == 0 && info.relative_residual == 0);
        for (int i = 0; i < 64; i++) assert_true(x[i] == 0);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v);
}

static void lucky_breakdown(void **state)
{
    /* A = 2I: every method reaches the exact solution in its first step and must return it
     * without NaN. CG and BiCGStab get an exactly zero residual, so they stop even with
     * rtol = atol = 0; GMRES's and MINRES's normalisations leave rounding: rtol 1e-14. */
    int64_t n = 50;
    sla_pattern *p;
    double *v;
    kt_tridiag(n, 0, 2, 0, &p, &v);
    for (int64_t i = 0; i < n; i++) v[sla_pattern_find(p, i, i)] = 2;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_NONE,
                                          m >= SLA_METHOD_GMRES ? 1e-14 : 0);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        double b[50], x[50];
        for (int i = 0; i < n; i++) b[i] = (double)(i % 5) - 2;
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        assert_true(info.converged);
        assert_int_equal(info.iterations, 1);
        for (int i = 0; i < n; i++) {
            assert_true(isfinite(x[i]));
            assert_true(fabs(x[i] - b[i] / 2) <= 1e-15);
        }
        if (m < SLA_METHOD_GMRES) assert_true(info.residual_norm == 0);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v);
}

/* ---- BiCGStab breakdown: relative tests, restart with r̂ = r ---- */

/* The 6 × 6 unsymmetric matrix of system("bicgstab") in tests/python/test_solve.py (duplicates
 * summed). ILU(0) drops fill only in rows 2, 3 and 5, so with b = e_k and r̂ = r₀ = e_k the
 * residual's component k vanishes (to rounding) after one step: ρ = r̂ᵀr was 0 or
 * ‖r‖·1e-16 while ‖r‖ was still 1e-5, and BiCGStab stopped with "breakdown" at a relative
 * residual of up to 4e-5 for 5 of the 12 right-hand sides e_k, op = N and T. */
static void bicgstab_python_6x6(sla_pattern **p, double **values)
{
    static const int64_t r[] = {0, 0, 0, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 5};
    static const int64_t c[] = {0, 2, 3, 1, 0, 1, 2, 0, 1, 3, 3, 4, 2, 3, 4, 5};
    static const double v[] = {
        1.2302646410094575, -0.019964750907762653, 0.2102998901016947, 2.467056737054568,
        -0.44841580471145109, -0.89100303517073753, 3.6891339270701966, -1.2654653080284903,
        -1.1195351830271254, 5.2806735559202576, 0.11494420795897257, 4.0864274678254091,
        0.05837477053151257, -1.0016690028342379, 0.83514757270423645, 2.895191346069987};
    TU_OK(sla_pattern_from_coo(6, 6, 16, r, c, p));
    *values = malloc(sizeof v);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
}

static void bicgstab_breakdown_restarts(void **state)
{
    sla_pattern *p;
    double *v;
    bicgstab_python_6x6(&p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    float vf[16];
    for (int k = 0; k < 16; k++) vf[k] = (float)v[k];
    sla_matrix Af = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    sla_solver_options o = kt_options(SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0, 1e-13);
    sla_solver_options of = kt_options(SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0, 1e-6);
    sla_solver *s = NULL, *sf = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_create(&Af, &of, &sf));
    for (int op = 0; op < 2; op++)
        for (int k = 0; k < 6; k++) {
            double b[6] = {0}, x[6], xr[6];
            float bf[6] = {0}, xf[6];
            b[k] = 1;
            bf[k] = 1;
            sla_solve_info info;
            TU_OK(sla_solver_solve(s, (sla_op)op, 1, b, x, &info));
            if (!info.converged)
                fail_msg("op %d, b = e_%d: %s after %lld iterations, relative residual %g", op, k,
                         sla_reason_name(info.reason), (long long)info.iterations,
                         info.relative_residual);
            assert_true(info.iterations <= 6);
            assert_true(kt_residual(&A, 0, (sla_op)op, x, b) <= 1e-13);
            kt_dense_solve(&A, 0, (sla_op)op, b, xr);
            assert_true(kt_relerr(x, xr, 6) < 1e-12);
            TU_OK(sla_solver_solve(sf, (sla_op)op, 1, bf, xf, &info));
            assert_true(info.converged && info.relative_residual <= 1e-6);
            for (int i = 0; i < 6; i++) x[i] = xf[i];
            assert_true(kt_relerr(x, xr, 6) < 1e-5);
        }
    sla_solver_free(&s);
    sla_solver_free(&sf);
    sla_pattern_free(&p);
    free(v);
}

static void bicgstab_genuine_breakdown(void **state)
{
    /* A = blockdiag([0 1; −1 0]) is skew-symmetric: r̂ᵀA r = 0 for r̂ = r, so r̂ᵀv = 0 in the
     * first step and again after the restart with r̂ = r. Reason breakdown after exactly two
     * iterations (one restart), x = 0 untouched and finite, the true residual ‖b‖. */
    int64_t n = 40, R[40], C[40];
    double V[40];
    for (int64_t i = 0; i < n; i++) {
        R[i] = i;
        C[i] = i ^ 1;
        V[i] = i % 2 ? -1.0 : 1.0;
    }
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(n, n, n, R, C, &p));
    double v[40], b[40], x[40];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, V, v));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    for (int64_t i = 0; i < n; i++) b[i] = 1 + 0.1 * (double)(i % 3);
    for (int op = 0; op < 2; op++) {
        sla_solver_options o = kt_options(SLA_METHOD_BICGSTAB, SLA_PRECOND_NONE, 1e-10);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        sla_solve_info info;
        assert_int_equal(sla_solver_solve(s, (sla_op)op, 1, b, x, &info), SLA_NOT_CONVERGED);
        assert_false(info.converged);
        assert_int_equal(info.reason, SLA_REASON_BREAKDOWN);
        assert_int_equal(info.iterations, 2);
        for (int64_t i = 0; i < n; i++) assert_true(x[i] == 0);
        TU_CLOSE(info.residual_norm, tu_norm2(b, n), 1e-15);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
}

static void expect_not_converged(const sla_matrix *A, sla_method m, sla_precond pc,
                                 sla_reason reason, const double *b)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_solver_options o = kt_options(m, pc, 1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(A, &o, &s));
    double *x = calloc((size_t)n, sizeof(double));
    sla_solve_info info;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_NOT_CONVERGED);
    assert_false(info.converged);
    if (info.reason != reason)
        fail_msg("%s: reason %s, expected %s", sla_solver_describe(s), sla_reason_name(info.reason),
                 sla_reason_name(reason));
    for (int64_t i = 0; i < n; i++) assert_true(isfinite(x[i]));   /* the last finite iterate */
    /* the residual reported is the true one of the returned x */
    TU_CLOSE(info.residual_norm, kt_residual(A, 0, SLA_OP_N, x, b), 1e-10);
    free(x);
    sla_solver_free(&s);
}

static void cg_indefinite_and_unsymmetric(void **state)
{
    int64_t n = 40;
    sla_pattern *p;
    double *v;
    /* symmetric indefinite: diagonal +1, −1 alternating plus a coupling */
    kt_tridiag(n, 0.1, 1, 0.1, &p, &v);
    for (int64_t i = 0; i < n; i++) v[sla_pattern_find(p, i, i)] = i % 2 ? -1.0 : 1.0;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = kt_ones(n);
    expect_not_converged(&A, SLA_METHOD_CG, SLA_PRECOND_NONE, SLA_REASON_INDEFINITE, b);
    /* MINRES solves it */
    sla_solver_options o = kt_options(SLA_METHOD_MINRES, SLA_PRECOND_NONE, 1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double x[40], xr[40];
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    kt_dense_solve(&A, 0, SLA_OP_N, b, xr);
    assert_true(kt_relerr(x, xr, n) < 1e-8);
    sla_solver_free(&s);
    /* skew-symmetric: pᵀAp = 0 at once */
    for (int64_t i = 0; i < n; i++) {
        v[sla_pattern_find(p, i, i)] = 0;
        if (i > 0) v[sla_pattern_find(p, i, i - 1)] = -1;
        if (i < n - 1) v[sla_pattern_find(p, i, i + 1)] = 1;
    }
    expect_not_converged(&A, SLA_METHOD_CG, SLA_PRECOND_NONE, SLA_REASON_INDEFINITE, b);
    sla_pattern_free(&p);
    free(v);
    free(b);
}

/* matrix-free operator that turns its output into NaN after `good` calls */
typedef struct nan_op {
    const sla_matrix *A;
    int calls, good;
} nan_op;

static int nan_apply(void *ctx, sla_op op, int64_t b, const void *x, void *y)
{
    nan_op *c = ctx;
    sla_spmv(op, 1.0, c->A, x, 0, 1, 0.0, y);
    if (++c->calls > c->good) ((double *)y)[3] = NAN;
    return 0;
}

static void nonfinite(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(10, 10, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = kt_ones(100);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        nan_op c = {&A, 0, 4};
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_NONE, 1e-12);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create_operator(100, SLA_FLOAT64, 1, nan_apply, &c, &o, &s));
        double x[100];
        sla_solve_info info;
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_NOT_CONVERGED);
        assert_int_equal(info.reason, SLA_REASON_NONFINITE);
        assert_false(info.converged);
        sla_solver_free(&s);
    }
    /* float32 overflow inside the recurrence: values near FLT_MAX */
    float vf[500], bf[100], xf[100];
    int64_t nnz = sla_pattern_nnz(p);
    for (int64_t k = 0; k < nnz; k++) vf[k] = (float)v[k] * 1e37f;
    for (int i = 0; i < 100; i++) bf[i] = 1e30f;
    sla_matrix Af = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_NONE, 1e-6);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&Af, &o, &s));
    sla_solve_info info;
    sla_status st = sla_solver_solve(s, SLA_OP_N, 1, bf, xf, &info);
    assert_int_equal(st, SLA_NOT_CONVERGED);
    assert_int_equal(info.reason, SLA_REASON_NONFINITE);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
    free(b);
}

static void maxiter_reached(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(32, 32, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = kt_ones(1024);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_NONE, 1e-12);
        o.maxiter = 7;
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        double x[1024];
        sla_solve_info info;
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_NOT_CONVERGED);
        assert_int_equal(info.reason, SLA_REASON_MAXITER);
        assert_int_equal(info.iterations, 7);
        TU_CLOSE(info.residual_norm, kt_residual(&A, 0, SLA_OP_N, x, b), 1e-10);
        /* GMRES and MINRES (no preconditioner) minimise ‖r‖₂: it went down */
        if (m == SLA_METHOD_GMRES || m == SLA_METHOD_MINRES)
            assert_true(info.residual_norm < tu_norm2(b, 1024));
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v);
    free(b);
}

static void stagnation_float32(void **state)
{
    /* float32 cannot reach rtol 1e-12 on Poisson: reported as stagnation, never converged */
    sla_pattern *p;
    double *v;
    tu_poisson2d(40, 40, &p, &v);
    int64_t n = 1600, nnz = sla_pattern_nnz(p);
    float *vf = malloc(sizeof(float) * (size_t)nnz), *b = malloc(sizeof(float) * (size_t)n),
          *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t k = 0; k < nnz; k++) vf[k] = (float)v[k];
    for (int64_t i = 0; i < n; i++) b[i] = 1.0f + (float)(i % 3);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_NONE, 1e-12);
        o.maxiter = 20000;
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        sla_solve_info info;
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_NOT_CONVERGED);
        assert_false(info.converged);
        if (info.reason != SLA_REASON_STAGNATION)
            fail_msg("%s: reason %s after %lld iterations", sla_method_name((sla_method)m),
                     sla_reason_name(info.reason), (long long)info.iterations);
        assert_true(info.relative_residual < 1e-4);    /* it got as far as float32 allows */
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v); free(vf); free(b); free(x);
}

/* ---- options: initial guess, monitor ---- */

typedef struct mon_log {
    int64_t calls, last_it[4];
    double last_res;
    int64_t stop_at;
} mon_log;

static int monitor(void *ctx, int64_t b, int64_t j, int64_t it, double res)
{
    mon_log *m = ctx;
    m->calls++;
    if (b < 4 && it > m->last_it[b]) m->last_it[b] = it;   /* max over the columns */
    m->last_res = res;
    return m->stop_at >= 0 && it >= m->stop_at;
}

static void monitor_callback(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(32, 32, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = kt_ones(1024), x[1024];
    mon_log log = {.stop_at = -1};
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-10);
    o.monitor = monitor;
    o.monitor_ctx = &log;
    o.monitor_every = 10;
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    /* iteration 0, every 10th, and the end */
    int64_t expect = 1 + info.iterations / 10 + (info.iterations % 10 != 0);
    assert_int_equal(log.calls, expect);
    assert_int_equal(log.last_it[0], info.iterations);
    sla_solver_free(&s);
    /* a nonzero return stops the solve with SLA_ECALLBACK, for every method */
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        log = (mon_log){.stop_at = 5};
        o = kt_options((sla_method)m, SLA_PRECOND_NONE, 1e-10);
        o.monitor = monitor;
        o.monitor_ctx = &log;
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_ECALLBACK);
        assert_non_null(strstr(sla_last_error(), "monitor returned 1 at iteration 5"));
        assert_int_equal(log.last_it[0], 5);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v);
    free(b);
}

static void initial_guess(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(32, 32, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = kt_ones(1024), x[1024], x2[1024];
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_NONE, 1e-10);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        sla_solve_info i1, i2;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &i1));
        sla_solver_free(&s);
        /* starting from the solution: 0 iterations; from a perturbed one: fewer */
        o.initial_guess_nonzero = 1;
        TU_OK(sla_solver_create(&A, &o, &s));
        memcpy(x2, x, sizeof x);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, &i2));
        assert_int_equal(i2.iterations, 0);
        for (int i = 0; i < 1024; i++) x2[i] = x[i] * (1 + 1e-6);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, &i2));
        assert_true(i2.iterations < i1.iterations);
        assert_true(kt_relerr(x2, x, 1024) < 1e-8);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v);
    free(b);
}

/* ---- matrix-free operator ---- */

typedef struct csr_op {
    const sla_matrix *A;
    int64_t calls_t;
} csr_op;

static int csr_apply(void *ctx, sla_op op, int64_t b, const void *x, void *y)
{
    csr_op *c = ctx;
    int64_t nnz = sla_pattern_nnz(c->A->pattern);
    sla_matrix Ab = sla_matrix_view(c->A->pattern, c->A->dtype, 1,
                                    (const char *)c->A->values + b * nnz * (int64_t)sla_dtype_size(c->A->dtype));
    if (op == SLA_OP_T) c->calls_t++;
    return sla_spmv(op, 1.0, &Ab, x, 0, 1, 0.0, y) != SLA_OK;
}

static void matrix_free_equals_csr(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(40, 40, &p, &v);
    int64_t n = 1600;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * n), *x1 = malloc(sizeof(double) * n),
           *x2 = malloc(sizeof(double) * n);
    tu_fill_random(b, n, 3);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_NONE, 1e-10);
        sla_solver *s1 = NULL, *s2 = NULL;
        csr_op c = {&A, 0};
        TU_OK(sla_solver_create(&A, &o, &s1));
        TU_OK(sla_solver_create_operator(n, SLA_FLOAT64, 1, csr_apply, &c, &o, &s2));
        assert_non_null(strstr(sla_solver_describe(s2), "matrix-free"));
        for (int op = 0; op < 2; op++) {
            sla_solve_info i1, i2;
            TU_OK(sla_solver_solve(s1, (sla_op)op, 1, b, x1, &i1));
            TU_OK(sla_solver_solve(s2, (sla_op)op, 1, b, x2, &i2));
            assert_true(llabs(i1.iterations - i2.iterations) <= 1);
            assert_true(kt_relerr(x2, x1, n) < 1e-8);
        }
        assert_true(c.calls_t > 0);            /* op = T used the operator's transpose */
        sla_solver_free(&s1);
        sla_solver_free(&s2);
    }
    /* a failing operator callback: SLA_ECALLBACK naming it */
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_NONE, 1e-10);
    sla_solver *s = NULL;
    csr_op bad = {NULL, 0};
    TU_OK(sla_solver_create_operator(n, SLA_FLOAT64, 1, csr_apply, &bad, &o, &s));
    sla_matrix broken = sla_matrix_view(p, (sla_dtype)7, 1, v);
    bad.A = &broken;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x1, NULL), SLA_ECALLBACK);
    assert_non_null(strstr(sla_last_error(), "operator callback returned 1"));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(b); free(x1); free(x2);
}

/* ---- batches and several right-hand sides ---- */

static void batched_different_convergence(void **state)
{
    /* A_b = P + c_b I on one pattern: c_b = 0, 0.05, 1 converge in very different numbers of
     * iterations; each system has its own test; nrhs = 2 columns */
    sla_pattern *p;
    double *v1;
    tu_poisson2d(30, 30, &p, &v1);
    int64_t n = 900, nnz = sla_pattern_nnz(p), B = 3, k = 2;
    double shifts[3] = {0, 0.05, 1};
    double *v = malloc(sizeof(double) * (size_t)(B * nnz));
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < nnz; s++) v[b * nnz + s] = v1[s];
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < n; i++) v[b * nnz + sla_pattern_find(p, i, i)] += shifts[b];
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, B, v);
    double *rhs = malloc(sizeof(double) * (size_t)(B * n * k)), *X = malloc(sizeof(double) * (size_t)(B * n * k));
    tu_fill_random(rhs, B * n * k, 11);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        mon_log log = {.stop_at = -1};
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_AUTO, 1e-10);
        o.monitor = monitor;
        o.monitor_ctx = &log;
        o.monitor_every = 1000000;               /* only iteration 0 and the end */
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, SLA_OP_N, k, rhs, X, &info));
        assert_true(log.last_it[0] > log.last_it[1] && log.last_it[1] > log.last_it[2]);
        int64_t maxit = 0;
        for (int64_t b = 0; b < B; b++) maxit = log.last_it[b] > maxit ? log.last_it[b] : maxit;
        assert_int_equal(info.iterations, maxit);
        /* every column of every element solved; compare with element-wise solves */
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < k; j++) {
                double bj[900], xj[900], xr[900];
                for (int64_t i = 0; i < n; i++) {
                    bj[i] = rhs[(b * n + i) * k + j];
                    xj[i] = X[(b * n + i) * k + j];
                }
                kt_dense_solve(&A, b, SLA_OP_N, bj, xr);
                assert_true(kt_relerr(xj, xr, n) < 1e-7);
            }
        sla_solver_free(&s);
        /* without a monitor the systems may run in parallel: same answers */
        o.monitor = NULL;
        double *X2 = malloc(sizeof(double) * (size_t)(B * n * k));
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_N, k, rhs, X2, &info));
        assert_true(kt_relerr(X2, X, B * n * k) < 1e-7);
        sla_solver_free(&s);
        free(X2);
    }
    sla_pattern_free(&p);
    free(v1); free(v); free(rhs); free(X);
}

/* ---- float32 ---- */

static void float32_methods(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(64, 64, &p, &v);
    int64_t n = 4096, nnz = sla_pattern_nnz(p);
    float *vf = malloc(sizeof(float) * (size_t)nnz), *bf = malloc(sizeof(float) * (size_t)n),
          *xf = malloc(sizeof(float) * (size_t)n);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n),
           *xr = malloc(sizeof(double) * (size_t)n);
    for (int64_t k = 0; k < nnz; k++) vf[k] = (float)v[k];
    tu_fill_random(b, n, 8);
    for (int64_t i = 0; i < n; i++) bf[i] = (float)b[i];
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v), Af = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    sla_solver_options o64 = kt_options(SLA_METHOD_CG, SLA_PRECOND_NONE, 1e-12);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o64, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, xr, NULL));
    sla_solver_free(&s);
    sla_precond pcs[] = {SLA_PRECOND_IC0, SLA_PRECOND_JACOBI, SLA_PRECOND_ILU0, SLA_PRECOND_ILU0};
    sla_method ms[] = {SLA_METHOD_CG, SLA_METHOD_MINRES, SLA_METHOD_GMRES, SLA_METHOD_BICGSTAB};
    for (int t = 0; t < 4; t++) {
        sla_solver_options o = kt_options(ms[t], pcs[t], 1e-5);
        TU_OK(sla_solver_create(&Af, &o, &s));
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, SLA_OP_T, 1, bf, xf, &info));
        assert_true(info.relative_residual <= 1e-5);
        for (int64_t i = 0; i < n; i++) x[i] = xf[i];
        assert_true(kt_relerr(x, xr, n) < 1e-3);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v); free(vf); free(bf); free(xf); free(b); free(x); free(xr);
}

/* ---- determinism, describe, bad input, allocation failures ---- */

static void deterministic(void **state)
{
    double saved = sla_test_par_min_bytes(0);   /* every kernel on the team */
    sla_pattern *p;
    double *v;
    tu_poisson2d(100, 100, &p, &v);
    int64_t n = 10000;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * n), *x1 = malloc(sizeof(double) * n),
           *x2 = malloc(sizeof(double) * n);
    tu_fill_random(b, n, 4);
    for (int m = SLA_METHOD_CG; m <= SLA_METHOD_MINRES; m++) {
        sla_solver_options o = kt_options((sla_method)m, SLA_PRECOND_AUTO, 1e-6);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        sla_solve_info i1, i2;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x1, &i1));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, &i2));
        assert_int_equal(i1.iterations, i2.iterations);
        assert_memory_equal(x1, x2, sizeof(double) * (size_t)n);
        /* the kernels' int64 row-pointer path (nnz > INT32_MAX) gives the same bits */
        int was = sla_test_rowptr32(0);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, &i2));
        sla_test_rowptr32(was);
        assert_int_equal(i1.iterations, i2.iterations);
        assert_memory_equal(x1, x2, sizeof(double) * (size_t)n);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v); free(b); free(x1); free(x2);
    sla_test_par_min_bytes(saved);
}

/* x of one solve of A x = b on `threads` threads with parallel-region threshold `bytes`. */
static void solve_with(const sla_matrix *A, sla_method m, sla_precond pc, int threads,
                       double bytes, const double *b, double *x)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    int nt = sla_get_num_threads();
    double saved = sla_test_par_min_bytes(bytes);
    (void)sla_set_num_threads(threads);
    sla_solver_options o = kt_options(m, pc, 1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(kt_residual(A, 0, SLA_OP_N, x, b) <= 1e-10 * tu_norm2(b, n));
    sla_solver_free(&s);
    (void)sla_set_num_threads(nt);
    sla_test_par_min_bytes(saved);
}

static void parallel_regions_rule(void **state)
{
    /* The threshold (core/internal.h) only chooses whether a kernel runs its fixed chunks on
     * the team or on the calling thread, never the numbers. 2D Poisson 100²: SpMV 0.92 MB,
     * below the default threshold, so one chunk and the bits of a 1-thread run; with the
     * threshold at 0 every kernel runs on 2 threads (2 chunks); with the threshold at the
     * SpMV's bytes the partition is the same (2 chunks) but only the SpMV runs on the team
     * (CG's updates move 0.56 MB): the same bits as all-parallel. */
    sla_pattern *p;
    double *v;
    tu_poisson2d(100, 100, &p, &v);
    int64_t n = 10000, nnz = sla_pattern_nnz(p);
    double spmv_bytes = 12.0 * (double)nnz + 32.0 * (double)n;   /* sla_kcsr_bytes, float64 */
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * n), *x[4];
    tu_fill_random(b, n, 14);
    for (int k = 0; k < 4; k++) x[k] = malloc(sizeof(double) * n);
    sla_method ms[] = {SLA_METHOD_CG, SLA_METHOD_BICGSTAB, SLA_METHOD_GMRES};
    sla_precond pcs[] = {SLA_PRECOND_JACOBI, SLA_PRECOND_ILU0, SLA_PRECOND_NONE};
    for (int t = 0; t < 3; t++) {
        solve_with(&A, ms[t], pcs[t], 2, -1, b, x[0]);           /* default rule, 2 threads */
        solve_with(&A, ms[t], pcs[t], 1, -1, b, x[1]);           /* 1 thread */
        assert_memory_equal(x[0], x[1], sizeof(double) * (size_t)n);
        solve_with(&A, ms[t], pcs[t], 2, 0, b, x[2]);            /* all kernels on 2 threads */
        solve_with(&A, ms[t], pcs[t], 2, spmv_bytes, b, x[3]);   /* the SpMV only */
        assert_memory_equal(x[2], x[3], sizeof(double) * (size_t)n);
        double d = 0;                  /* 2 chunks sum in another order than 1: not the same */
        for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(x[2][i] - x[0][i]));
        assert_true(d > 0 && d < 1e-6);
    }
    sla_pattern_free(&p);
    for (int k = 0; k < 4; k++) free(x[k]);
    free(v); free(b);
}

static void describe_and_auto(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(10, 10, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_string_equal(sla_solver_describe(s), "cg + ic0 (krylov): rtol 1e-10, maxiter 1100");
    sla_solver_free(&s);
    o.atol = 1e-12;
    o.maxiter = 77;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_string_equal(sla_solver_describe(s), "cg + ic0 (krylov): rtol 1e-10, atol 1e-12, maxiter 77");
    sla_solver_free(&s);
    struct { sla_method m; const char *pc; } expect[] = {
        {SLA_METHOD_CG, "cg + ic0"}, {SLA_METHOD_MINRES, "minres + jacobi(|diag|)"},
        {SLA_METHOD_GMRES, "gmres(50) + ilu0"}, {SLA_METHOD_BICGSTAB, "bicgstab + ilu0"}};
    for (int t = 0; t < 4; t++) {
        o = kt_options(expect[t].m, SLA_PRECOND_AUTO, 1e-10);
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_non_null(strstr(sla_solver_describe(s), expect[t].pc));
        assert_non_null(strstr(sla_solver_describe(s), "precond auto"));
        sla_solve_info info;
        double *b = kt_ones(100), x[100];
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        assert_int_not_equal(info.precond, SLA_PRECOND_AUTO);   /* the resolved one */
        assert_non_null(strstr(info.description, expect[t].pc));
        free(b);
        sla_solver_free(&s);
    }
    /* CG from 5000 unknowns on: AMG when it is in the build, else IC(0), and it says so */
    sla_pattern *pl;
    double *vl;
    tu_poisson2d(80, 80, &pl, &vl);
    sla_matrix Al = sla_matrix_view(pl, SLA_FLOAT64, 1, vl);
    o = kt_options(SLA_METHOD_CG, SLA_PRECOND_AUTO, 1e-10);
    TU_OK(sla_solver_create(&Al, &o, &s));
    if (kt_have_amg()) {
        assert_non_null(strstr(sla_solver_describe(s), "cg + AMG"));
    } else {
        assert_non_null(strstr(sla_solver_describe(s), "cg + ic0"));
        assert_non_null(strstr(sla_solver_describe(s), "precond auto → ic0 (amg not in this build)"));
    }
    sla_solver_free(&s);
    sla_pattern_free(&pl);
    free(vl);
    /* the backend is listed and available */
    int found = 0;
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        TU_OK(sla_backend_get(i, &bi));
        if (strcmp(bi.name, "krylov") == 0) {
            found = 1;
            assert_true(bi.available);
            assert_true(bi.methods & (1u << SLA_METHOD_MINRES));
        }
    }
    assert_true(found);
    sla_pattern_free(&p);
    free(v);
}

static void bad_input(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(6, 6, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = NULL;
    /* matrix-free with a matrix preconditioner: refused, naming it */
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-10);
    csr_op c = {&A, 0};
    assert_int_equal(sla_solver_create_operator(36, SLA_FLOAT64, 1, csr_apply, &c, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "jacobi"));
    assert_null(s);
    /* user preconditioner without callback */
    o = kt_options(SLA_METHOD_CG, SLA_PRECOND_USER, 1e-10);
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "user_precond"));
    /* non-finite right-hand side */
    o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-10);
    TU_OK(sla_solver_create(&A, &o, &s));
    double b[36] = {0}, x[36];
    b[7] = INFINITY;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "B[0][7][0]"));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
}

static void allocation_failures(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(12, 12, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, NULL);
    double *v2 = malloc(sizeof(double) * 2 * (size_t)sla_pattern_nnz(p));
    memcpy(v2, v, sizeof(double) * (size_t)sla_pattern_nnz(p));
    memcpy(v2 + sla_pattern_nnz(p), v, sizeof(double) * (size_t)sla_pattern_nnz(p));
    A.values = v2;
    double b[288], x[288];
    tu_fill_random(b, 288, 1);
    sla_method ms[] = {SLA_METHOD_CG, SLA_METHOD_GMRES, SLA_METHOD_BICGSTAB, SLA_METHOD_MINRES};
    sla_precond pcs[] = {SLA_PRECOND_IC0, SLA_PRECOND_ILU0, SLA_PRECOND_ILU0, SLA_PRECOND_JACOBI};
    for (int t = 0; t < 4; t++) {
        for (int64_t k = 0;; k++) {
            sla_solver_options o = kt_options(ms[t], pcs[t], 1e-8);
            sla_solver *s = NULL;
            sla_test_fail_alloc_after(k);
            sla_status st = sla_solver_create(&A, &o, &s);
            if (st == SLA_OK) st = sla_solver_solve(s, SLA_OP_T, 1, b, x, NULL);
            int64_t used = sla_test_fail_alloc_after(-1);
            sla_solver_free(&s);
            if (st == SLA_OK) { assert_true(k >= used); break; }
            assert_int_equal(st, SLA_ENOMEM);
        }
    }
    sla_pattern_free(&p);
    free(v);
    free(v2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(poisson_cg_jacobi),
        cmocka_unit_test(poisson_cg_ic0),
        cmocka_unit_test(poisson_cg_amg),
        cmocka_unit_test(methods_dense_reference),
        cmocka_unit_test(gmres_small_restart),
        cmocka_unit_test(zero_rhs),
        cmocka_unit_test(lucky_breakdown),
        cmocka_unit_test(bicgstab_breakdown_restarts),
        cmocka_unit_test(bicgstab_genuine_breakdown),
        cmocka_unit_test(cg_indefinite_and_unsymmetric),
        cmocka_unit_test(nonfinite),
        cmocka_unit_test(maxiter_reached),
        cmocka_unit_test(stagnation_float32),
        cmocka_unit_test(monitor_callback),
        cmocka_unit_test(initial_guess),
        cmocka_unit_test(matrix_free_equals_csr),
        cmocka_unit_test(batched_different_convergence),
        cmocka_unit_test(float32_methods),
        cmocka_unit_test(deterministic),
        cmocka_unit_test(parallel_regions_rule),
        cmocka_unit_test(describe_and_auto),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(allocation_failures),
    };
    if (getenv("KT_FILTER")) cmocka_set_test_filter(getenv("KT_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
