/* LSQR (least squares, rectangular A) and its adjoint: dense LAPACK references (dgels for full
 * rank, dgelsd for minimum-norm), consistent systems, CG's answer on an SPD system, the shared
 * illc1850 matrix, b = 0, non-finite input, damping, op = T, float32, matrix-free, and
 * gradients against central differences and against the square solve VJP. */
#include <float.h>
#include <lapacke.h>
#include <stdio.h>

#include "ktest.h"

/* A random m × n sparse matrix with about `density` of its entries in [-1, 1) and 3 added to
 * a_jj (j < min(m, n)), so that it has full rank: pattern, CSR values, and its dense row-major
 * copy [m][n]. Entries are generated row by row, so COO order is CSR order. */
static void rand_sparse(int64_t m, int64_t n, double density, uint64_t seed, sla_pattern **p,
                        double **vals, double **dense)
{
    uint64_t st = seed;
    int64_t cap = m * n, nnz = 0;
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)cap), *ci = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    *dense = calloc((size_t)cap, sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double keep = 0.5 * (tu_rand(&st) + 1), a = tu_rand(&st);
            if (i == j) a += 3;
            else if (keep >= density) continue;
            ri[nnz] = i;
            ci[nnz] = j;
            v[nnz++] = a;
            (*dense)[i * n + j] = a;
        }
    TU_OK(sla_pattern_from_coo(m, n, nnz, ri, ci, p));
    assert_int_equal(sla_pattern_nnz(*p), nnz);
    *vals = v;
    free(ri);
    free(ci);
}

static sla_solver_options lsqr_options(double rtol)
{
    return kt_options(SLA_METHOD_LSQR, SLA_PRECOND_AUTO, rtol);
}

/* max_i |x_i − y_i| / max_i |y_i| */
static double rel_err(const double *x, const double *y, int64_t n)
{
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs(x[i] - y[i]));
        s = fmax(s, fabs(y[i]));
    }
    return d / s;
}

/* the transpose of a dense row-major [m][n] into [n][m] */
static double *transpose(const double *a, int64_t m, int64_t n)
{
    double *t = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) t[j * m + i] = a[i * n + j];
    return t;
}

/* minimum-norm least-squares solution of the dense [m][n] system, nrhs columns of B [m][k]
 * (row-major) into X [n][k], by dgelsd (SVD); returns the rank */
static int dense_lstsq(const double *a, int64_t m, int64_t n, int64_t k, const double *B, double *X)
{
    int64_t ld = m > n ? m : n;
    double *A = malloc(sizeof(double) * (size_t)(m * n)), *bx = calloc((size_t)(ld * k), sizeof(double));
    double *sv = malloc(sizeof(double) * (size_t)(m < n ? m : n));
    memcpy(A, a, sizeof(double) * (size_t)(m * n));
    memcpy(bx, B, sizeof(double) * (size_t)(m * k));
    lapack_int rank = 0;
    assert_int_equal(LAPACKE_dgelsd(LAPACK_ROW_MAJOR, (lapack_int)m, (lapack_int)n, (lapack_int)k,
                                    A, (lapack_int)n, bx, (lapack_int)k, sv, -1.0, &rank), 0);
    memcpy(X, bx, sizeof(double) * (size_t)(n * k));
    free(A);
    free(bx);
    free(sv);
    return (int)rank;
}

/* Overdetermined, full column rank, batch 2 × nrhs 2: x against dgels (QR), the residual and
 * ‖Aᵀr‖ in the info against the dense ones. */
static void overdetermined_matches_qr(void **state)
{
    (void)state;
    int64_t m = 80, n = 30, k = 2, nb = 2;
    sla_pattern *p;
    double *v0, *d0, *v1, *d1;
    rand_sparse(m, n, 0.15, 11, &p, &v0, &d0);
    int64_t nnz = sla_pattern_nnz(p);
    /* batch element 1: other values on the same pattern */
    double *vals = malloc(sizeof(double) * (size_t)(2 * nnz));
    memcpy(vals, v0, sizeof(double) * (size_t)nnz);
    v1 = vals + nnz;
    d1 = calloc((size_t)(m * n), sizeof(double));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < m; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            v1[s] = v0[s] * (1 + 0.3 * sin((double)s));
            d1[i * n + ci[s]] = v1[s];
        }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, nb, vals);
    double B[2 * 80 * 2], X[2 * 30 * 2], Xr[30 * 2], Bcol[80], xcol[30];
    tu_fill_random(B, nb * m * k, 5);
    sla_solver_options o = lsqr_options(1e-12);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_int_equal(sla_solver_method(s), SLA_METHOD_LSQR);
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, B, X, &info));
    assert_true(info.converged);
    assert_int_equal(info.reason, SLA_REASON_CONVERGED);
    assert_true(info.iterations > 5 && info.iterations <= 10 * n);
    double rmax = 0, armax = 0;
    for (int64_t b = 0; b < nb; b++) {
        const double *d = b ? d1 : d0;
        dense_lstsq(d, m, n, k, B + b * m * k, Xr);
        assert_true(rel_err(X + b * n * k, Xr, n * k) < 1e-9);
        for (int64_t j = 0; j < k; j++) {
            /* dense r = b − A x and Aᵀr at LSQR's x */
            for (int64_t i = 0; i < n; i++) xcol[i] = X[(b * n + i) * k + j];
            double rr = 0;
            for (int64_t i = 0; i < m; i++) {
                double t = B[(b * m + i) * k + j];
                for (int64_t c = 0; c < n; c++) t -= d[i * n + c] * xcol[c];
                Bcol[i] = t;
                rr += t * t;
            }
            double ar = 0;
            for (int64_t c = 0; c < n; c++) {
                double t = 0;
                for (int64_t i = 0; i < m; i++) t += d[i * n + c] * Bcol[i];
                ar += t * t;
            }
            rmax = fmax(rmax, sqrt(rr));
            armax = fmax(armax, sqrt(ar));
        }
    }
    TU_CLOSE(info.residual_norm, rmax, 1e-10);
    assert_true(rmax > 1);                       /* an inconsistent system: r ≠ 0 */
    assert_true(fabs(info.normal_residual - armax) <= 1e-12 * rmax * 10 + 1e-3 * armax);
    assert_true(info.normal_residual < 1e-9 * rmax);
    assert_non_null(strstr(sla_solver_describe(s), "lsqr"));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v0); free(d0); free(d1); free(vals);
}

/* b = A x_true: LSQR recovers x_true to rtol (stopping rule S1) */
static void consistent_recovers_solution(void **state)
{
    (void)state;
    int64_t m = 120, n = 50;
    sla_pattern *p;
    double *v, *d, xt[50], b[120], x[50];
    rand_sparse(m, n, 0.08, 21, &p, &v, &d);
    tu_fill_random(xt, n, 3);
    for (int64_t i = 0; i < m; i++) {
        b[i] = 0;
        for (int64_t j = 0; j < n; j++) b[i] += d[i * n + j] * xt[j];
    }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    sla_solve_info info;
    for (int64_t j = 0; j < n; j++) x[j] = NAN;     /* X is output only: never read */
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(rel_err(x, xt, n) < 1e-8);
    /* S1 with ‖A‖ ≤ ‖A‖_F */
    double fro = tu_norm2(v, sla_pattern_nnz(p));
    assert_true(info.residual_norm <= 1e-10 * (tu_norm2(b, m) + fro * tu_norm2(x, n)));
    assert_true(info.relative_residual < 1e-9);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d);
}

/* Square SPD (2D Poisson): LSQR's x equals CG's */
static void square_spd_equals_cg(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(12, 10, &p, &v);
    int64_t n = 120;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double b[120], xl[120], xc[120];
    tu_fill_random(b, n, 9);
    sla_solver_options ol = lsqr_options(1e-12), oc = kt_options(SLA_METHOD_CG, SLA_PRECOND_NONE, 1e-12);
    sla_solver *sl = NULL, *sc = NULL;
    TU_OK(sla_solver_create(&A, &ol, &sl));
    TU_OK(sla_solver_create(&A, &oc, &sc));
    sla_solve_info il, ic;
    TU_OK(sla_solver_solve(sl, SLA_OP_N, 1, b, xl, &il));
    TU_OK(sla_solver_solve(sc, SLA_OP_N, 1, b, xc, &ic));
    assert_true(rel_err(xl, xc, n) < 1e-9);
    /* LSQR on AᵀA = A² squares κ: more iterations than CG, but converged */
    assert_true(il.iterations >= ic.iterations);
    assert_true(il.residual_norm < 1e-9 * tu_norm2(b, n));
    sla_solver_free(&sl);
    sla_solver_free(&sc);
    sla_pattern_free(&p);
    free(v);
}

/* Underdetermined (m < n, full row rank): LSQR from x₀ = 0 gives the minimum-norm solution */
static void underdetermined_min_norm(void **state)
{
    (void)state;
    int64_t m = 25, n = 60;
    sla_pattern *p;
    double *v, *d, b[25], x[60], xr[60];
    rand_sparse(m, n, 0.2, 31, &p, &v, &d);
    tu_fill_random(b, m, 4);
    assert_int_equal(dense_lstsq(d, m, n, 1, b, xr), m);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-12);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(rel_err(x, xr, n) < 1e-9);
    assert_true(info.residual_norm < 1e-10 * tu_norm2(b, m) * 10);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d);
}

/* op = T: min ‖b − Aᵀx‖ on a wide A (Aᵀ tall) against dgels on the dense Aᵀ */
static void transposed_problem(void **state)
{
    (void)state;
    int64_t m = 20, n = 55;              /* A is 20 × 55, Aᵀ 55 × 20 */
    sla_pattern *p;
    double *v, *d, b[55], x[20], xr[20];
    rand_sparse(m, n, 0.2, 41, &p, &v, &d);
    double *dt = transpose(d, m, n);
    tu_fill_random(b, n, 6);
    dense_lstsq(dt, n, m, 1, b, xr);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-12);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_T, 1, b, x, &info));
    assert_true(rel_err(x, xr, m) < 1e-9);
    /* shapes are checked for op: B of op = N has 20 rows */
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, NULL, x, &info), SLA_EINVAL);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d); free(dt);
}

/* damp: min ‖b − Ax‖² + damp²‖x‖² equals dgels on the augmented [A; damp·I] with [b; 0] */
static void damped_matches_augmented(void **state)
{
    (void)state;
    int64_t m = 50, n = 20;
    double damp = 0.7;
    sla_pattern *p;
    double *v, *d, b[50], x[20], xr[20];
    rand_sparse(m, n, 0.15, 51, &p, &v, &d);
    double *aug = calloc((size_t)((m + n) * n), sizeof(double)), baug[70] = {0};
    memcpy(aug, d, sizeof(double) * (size_t)(m * n));
    for (int64_t j = 0; j < n; j++) aug[(m + j) * n + j] = damp;
    tu_fill_random(b, m, 8);
    memcpy(baug, b, sizeof b);
    dense_lstsq(aug, m + n, n, 1, baug, xr);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-12);
    o.damp = damp;
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(rel_err(x, xr, n) < 1e-9);
    assert_non_null(strstr(sla_solver_describe(s), "damp 0.7"));
    /* the VJPs of a damped problem are refused */
    double g[20], db[50];
    tu_fill_random(g, n, 1);
    assert_int_equal(sla_solver_lstsq_vjp(s, SLA_OP_N, 1, b, x, g, db, NULL, NULL), SLA_EUNSUPPORTED);
    assert_non_null(strstr(sla_last_error(), "damp"));
    sla_solver_free(&s);
    /* damp with method auto on a square matrix: auto picks LSQR */
    o.method = SLA_METHOD_AUTO;
    double *vs, *ds;
    sla_pattern *ps;
    rand_sparse(n, n, 0.2, 52, &ps, &vs, &ds);
    sla_matrix As = sla_matrix_view(ps, SLA_FLOAT64, 1, vs);
    TU_OK(sla_solver_create(&As, &o, &s));
    assert_int_equal(sla_solver_method(s), SLA_METHOD_LSQR);
    sla_solver_free(&s);
    /* damp with another method is refused */
    o.method = SLA_METHOD_CG;
    assert_int_equal(sla_solver_create(&As, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "options.damp"));
    sla_pattern_free(&ps);
    sla_pattern_free(&p);
    free(v); free(d); free(aug); free(vs); free(ds);
}

/* The shared illc1850 (1850 × 712 least-squares problem): LSQR against the dense QR */
static void shared_illc1850(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    sla_pattern *p;
    double *v;
    tu_load("illc1850.mtx", &p, &v);
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p);
    assert_int_equal(m, 1850);
    assert_int_equal(n, 712);
    double *d = calloc((size_t)(m * n), sizeof(double)), *b = malloc(sizeof(double) * (size_t)m);
    double *x = malloc(sizeof(double) * (size_t)n), *xr = malloc(sizeof(double) * (size_t)n);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < m; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) d[i * n + ci[s]] = v[s];
    tu_fill_random(b, m, 12);
    assert_int_equal(dense_lstsq(d, m, n, 1, b, xr), n);        /* full column rank */
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);                 /* method auto: rectangular → LSQR */
    o.rtol = 1e-12;
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_int_equal(sla_solver_method(s), SLA_METHOD_LSQR);
    assert_non_null(strstr(sla_solver_describe(s), "rectangular 1850 × 712"));
    sla_solve_info info;
    sla_status st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
    assert_true(st == SLA_OK);
    assert_true(rel_err(x, xr, n) < 1e-6);
    /* S2: ‖Aᵀr‖ ≤ rtol‖A‖‖r‖, with LSQR's ‖A‖ estimate, which after many more iterations than
     * n (2265 here: illc1850 is ill-conditioned) exceeds ‖A‖_F as orthogonality is lost */
    double fro = tu_norm2(v, sla_pattern_nnz(p));
    assert_true(info.normal_residual <= 1e-10 * fro * info.residual_norm);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d); free(b); free(x); free(xr);
}

/* b = 0 gives x = 0 at once; Aᵀb = 0 (b orthogonal to the range) gives x = 0 too */
static void zero_rhs(void **state)
{
    (void)state;
    int64_t r[] = {0, 1}, c[] = {0, 1};
    double v[] = {2, 3};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(3, 2, 2, r, c, &p));    /* row 2 is empty */
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double b[3] = {0, 0, 0}, x[2] = {5, 5};
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(x[0] == 0 && x[1] == 0);
    assert_int_equal(info.iterations, 0);
    assert_true(info.residual_norm == 0 && info.normal_residual == 0);
    b[2] = 4;                                     /* Aᵀb = 0: the least-squares solution is 0 */
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(x[0] == 0 && x[1] == 0);
    TU_CLOSE(info.residual_norm, 4, 1e-15);
    assert_true(info.normal_residual == 0);
    b[0] = 2; b[1] = 6;                           /* x = (1, 2), r = (0, 0, 4) */
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    TU_CLOSE(x[0], 1, 1e-14);
    TU_CLOSE(x[1], 2, 1e-14);
    TU_CLOSE(info.residual_norm, 4, 1e-14);
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

static int nan_operator(void *ctx, sla_op op, int64_t b, const void *x, void *y)
{
    (void)ctx; (void)op; (void)b;
    const double *xi = x;
    double *yo = y;
    for (int i = 0; i < 4; i++) yo[i] = i == 2 ? NAN : 2 * xi[i];
    return 0;
}

/* Non-finite B is refused naming the entry; non-finite values at create; an operator that
 * returns NaN stops with reason non-finite */
static void non_finite(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v, *d, b[12], x[5];
    rand_sparse(12, 5, 0.3, 61, &p, &v, &d);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    tu_fill_random(b, 12, 1);
    b[7] = INFINITY;
    sla_solve_info info;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "B[0][7][0]"));
    assert_int_equal(info.reason, SLA_REASON_ERROR);
    sla_solver_free(&s);
    v[3] = NAN;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_ENONFINITE);
    assert_null(s);
    TU_OK(sla_solver_create_operator(4, SLA_FLOAT64, 1, nan_operator, NULL, &o, &s));
    double b4[4] = {1, 2, 3, 4}, x4[4];
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b4, x4, &info), SLA_NOT_CONVERGED);
    assert_int_equal(info.reason, SLA_REASON_NONFINITE);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d);
}

/* Clear errors: another method on a rectangular A; a preconditioner with lsqr; the square
 * solve VJP on a rectangular solver; the least-squares VJP on another method */
static void errors_are_clear(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v, *d;
    rand_sparse(9, 4, 0.3, 71, &p, &v, &d);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = NULL;
    sla_method direct[] = {SLA_METHOD_CHOLESKY, SLA_METHOD_LU, SLA_METHOD_KLU, SLA_METHOD_CG,
                           SLA_METHOD_GMRES};
    for (int i = 0; i < 5; i++) {
        sla_solver_options o = kt_options(direct[i], SLA_PRECOND_AUTO, 1e-10);
        assert_int_equal(sla_solver_create(&A, &o, &s), SLA_ESHAPE);
        assert_non_null(strstr(sla_last_error(), "9 × 4"));
        assert_non_null(strstr(sla_last_error(), sla_method_name(direct[i])));
        assert_non_null(strstr(sla_last_error(), "lsqr"));
    }
    sla_solver_options o = kt_options(SLA_METHOD_LSQR, SLA_PRECOND_JACOBI, 1e-10);
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "no preconditioner"));
    o = lsqr_options(1e-10);
    TU_OK(sla_solver_create(&A, &o, &s));
    double x[4] = {1, 2, 3, 4}, g[4] = {1, 0, 0, 0}, db[9];
    assert_int_equal(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, db, NULL, NULL), SLA_EUNSUPPORTED);
    assert_non_null(strstr(sla_last_error(), "sla_solver_lstsq_vjp"));
    sla_solver_free(&s);
    double *vs, *ds;
    sla_pattern *ps;
    rand_sparse(4, 4, 0.3, 72, &ps, &vs, &ds);
    sla_matrix As = sla_matrix_view(ps, SLA_FLOAT64, 1, vs);
    o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-10);
    TU_OK(sla_solver_create(&As, &o, &s));
    assert_int_equal(sla_solver_lstsq_vjp(s, SLA_OP_N, 1, db, x, g, db + 4, NULL, NULL),
                     SLA_EUNSUPPORTED);
    assert_non_null(strstr(sla_last_error(), "sla_solver_lstsq_vjp: method gmres"));
    sla_solver_free(&s);
    assert_true(strcmp(sla_method_name(SLA_METHOD_LSQR), "lsqr") == 0);
    sla_method m;
    TU_OK(sla_method_from_name("lsqr", &m));
    assert_int_equal(m, SLA_METHOD_LSQR);
    assert_true(sla_method_is_iterative(SLA_METHOD_LSQR));
    sla_pattern_free(&ps);
    sla_pattern_free(&p);
    free(v); free(d); free(vs); free(ds);
}

/* L = gᵀx(values, b) by a fresh LSQR solve */
static double lsq_loss(sla_solver *s, sla_op op, const double *vals, const double *b,
                       const double *g, int64_t nx)
{
    double x[64];
    TU_OK(sla_solver_refactor(s, vals));
    TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
    double l = 0;
    for (int64_t i = 0; i < nx; i++) l += g[i] * x[i];
    return l;
}

/* ∂b and ∂values of the least-squares VJP against central differences (rel. err ≤ 1e-6), for
 * an m × n A and op; m < n (op = N) exercises the minimum-norm term z wᵀ */
static void check_fd(int64_t m, int64_t n, sla_op op, uint64_t seed)
{
    sla_pattern *p;
    double *v, *d;
    rand_sparse(m, n, 0.3, seed, &p, &v, &d);
    int64_t nnz = sla_pattern_nnz(p), nb = op == SLA_OP_N ? m : n, nx = op == SLA_OP_N ? n : m;
    double b[64], g[64], x[64], db[64], *dv = malloc(sizeof(double) * (size_t)nnz);
    double *vp = malloc(sizeof(double) * (size_t)nnz);
    tu_fill_random(b, nb, seed + 1);
    tu_fill_random(g, nx, seed + 2);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-14);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
    sla_solve_info info;
    TU_OK(sla_solver_lstsq_vjp(s, op, 1, b, x, g, db, dv, &info));
    assert_true(info.converged && info.iterations > 0);
    double h = 1e-6, err = 0, scale = 0;
    for (int64_t i = 0; i < nb; i++) {
        double bp[64];
        memcpy(bp, b, sizeof(double) * (size_t)nb);
        bp[i] = b[i] + h;
        double lp = lsq_loss(s, op, v, bp, g, nx);
        bp[i] = b[i] - h;
        double lm = lsq_loss(s, op, v, bp, g, nx);
        double fd = (lp - lm) / (2 * h);
        err = fmax(err, fabs(fd - db[i]));
        scale = fmax(scale, fabs(db[i]));
    }
    assert_true(err <= 1e-6 * scale);
    err = scale = 0;
    for (int64_t q = 0; q < nnz; q++) {
        memcpy(vp, v, sizeof(double) * (size_t)nnz);
        vp[q] = v[q] + h;
        double lp = lsq_loss(s, op, vp, b, g, nx);
        vp[q] = v[q] - h;
        double lm = lsq_loss(s, op, vp, b, g, nx);
        double fd = (lp - lm) / (2 * h);
        err = fmax(err, fabs(fd - dv[q]));
        scale = fmax(scale, fabs(dv[q]));
    }
    if (err > 1e-6 * scale) fail_msg("dvalues: max error %g vs max |dv| %g", err, scale);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d); free(dv); free(vp);
}

static void vjp_finite_differences(void **state)
{
    (void)state;
    check_fd(14, 6, SLA_OP_N, 81);      /* overdetermined, full column rank */
    check_fd(6, 14, SLA_OP_T, 82);      /* the same through op = T */
    check_fd(6, 13, SLA_OP_N, 83);      /* underdetermined: minimum-norm, third term */
    check_fd(13, 6, SLA_OP_T, 84);      /* op(A) = Aᵀ wide */
}

/* Square nonsingular A: the least-squares VJP equals the solve VJP (LU) */
static void square_vjp_equals_solve_vjp(void **state)
{
    (void)state;
    int64_t n = 25;
    sla_pattern *p;
    double *v, *d, b[25], x[25], g[25], db1[25], db2[25];
    rand_sparse(n, n, 0.2, 91, &p, &v, &d);
    int64_t nnz = sla_pattern_nnz(p);
    double *dv1 = malloc(sizeof(double) * (size_t)nnz), *dv2 = malloc(sizeof(double) * (size_t)nnz);
    tu_fill_random(b, n, 2);
    tu_fill_random(g, n, 3);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = lsqr_options(1e-13), ol = kt_options(SLA_METHOD_LU, SLA_PRECOND_AUTO, 0);
    sla_solver *s = NULL, *sl = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_create(&A, &ol, &sl));
    TU_OK(sla_solver_solve(sl, SLA_OP_N, 1, b, x, NULL));
    TU_OK(sla_solver_solve_vjp(sl, SLA_OP_N, 1, x, g, db1, dv1, NULL));
    TU_OK(sla_solver_lstsq_vjp(s, SLA_OP_N, 1, b, x, g, db2, dv2, NULL));
    assert_true(rel_err(db2, db1, n) < 1e-9);
    assert_true(rel_err(dv2, dv1, nnz) < 1e-9);
    /* and sla_solver_solve_vjp on a square LSQR solver gives the same */
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, db2, dv2, NULL));
    assert_true(rel_err(db2, db1, n) < 1e-9);
    assert_true(rel_err(dv2, dv1, nnz) < 1e-9);
    /* G = 0: zero gradients, no solve */
    memset(g, 0, sizeof g);
    sla_solve_info info;
    TU_OK(sla_solver_lstsq_vjp(s, SLA_OP_N, 1, b, x, g, db2, dv2, &info));
    assert_int_equal(info.iterations, 0);
    assert_true(db2[0] == 0 && dv2[nnz - 1] == 0);
    sla_solver_free(&s);
    sla_solver_free(&sl);
    sla_pattern_free(&p);
    free(v); free(d); free(dv1); free(dv2);
}

/* Batched, two right-hand sides: dB and dvalues of the VJP equal those of each system alone */
static void vjp_batched_multi_rhs(void **state)
{
    (void)state;
    int64_t m = 16, n = 7, k = 2;
    sla_pattern *p;
    double *v, *d;
    rand_sparse(m, n, 0.3, 95, &p, &v, &d);
    int64_t nnz = sla_pattern_nnz(p);
    double *vals = malloc(sizeof(double) * (size_t)(2 * nnz));
    for (int64_t q = 0; q < nnz; q++) { vals[q] = v[q]; vals[nnz + q] = v[q] * (1 + 0.2 * cos((double)q)); }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, vals);
    double B[2 * 16 * 2], X[2 * 7 * 2], G[2 * 7 * 2], dB[2 * 16 * 2];
    double *dv = malloc(sizeof(double) * (size_t)(2 * nnz)), *dv1 = malloc(sizeof(double) * (size_t)nnz);
    double *acc = calloc((size_t)nnz, sizeof(double));
    tu_fill_random(B, 2 * m * k, 4);
    tu_fill_random(G, 2 * n * k, 5);
    sla_solver_options o = lsqr_options(1e-13);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, B, X, NULL));
    TU_OK(sla_solver_lstsq_vjp(s, SLA_OP_N, k, B, X, G, dB, dv, NULL));
    for (int64_t b = 0; b < 2; b++) {
        sla_matrix A1 = sla_matrix_view(p, SLA_FLOAT64, 1, vals + b * nnz);
        sla_solver *s1 = NULL;
        TU_OK(sla_solver_create(&A1, &o, &s1));
        memset(acc, 0, sizeof(double) * (size_t)nnz);
        for (int64_t j = 0; j < k; j++) {
            double bj[16], xj[7], gj[7], dbj[16];
            for (int64_t i = 0; i < m; i++) bj[i] = B[(b * m + i) * k + j];
            for (int64_t i = 0; i < n; i++) gj[i] = G[(b * n + i) * k + j];
            TU_OK(sla_solver_solve(s1, SLA_OP_N, 1, bj, xj, NULL));
            TU_OK(sla_solver_lstsq_vjp(s1, SLA_OP_N, 1, bj, xj, gj, dbj, dv1, NULL));
            for (int64_t i = 0; i < m; i++) TU_CLOSE(dB[(b * m + i) * k + j], dbj[i], 1e-9);
            for (int64_t q = 0; q < nnz; q++) acc[q] += dv1[q];
        }
        assert_true(rel_err(dv + b * nnz, acc, nnz) < 1e-9);
        sla_solver_free(&s1);
    }
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d); free(vals); free(dv); free(dv1); free(acc);
}

/* float32: the same overdetermined problem to float32 accuracy */
static void float32_overdetermined(void **state)
{
    (void)state;
    int64_t m = 60, n = 20;
    sla_pattern *p;
    double *v, *d, b[60], xr[20];
    rand_sparse(m, n, 0.2, 101, &p, &v, &d);
    int64_t nnz = sla_pattern_nnz(p);
    float *vf = malloc(sizeof(float) * (size_t)nnz), bf[60], xf[20];
    for (int64_t q = 0; q < nnz; q++) vf[q] = (float)v[q];
    tu_fill_random(b, m, 7);
    for (int64_t i = 0; i < m; i++) bf[i] = (float)b[i];
    /* the reference on the float32-rounded data */
    for (int64_t i = 0; i < m * n; i++) d[i] = (double)(float)d[i];
    for (int64_t i = 0; i < m; i++) b[i] = (double)bf[i];
    dense_lstsq(d, m, n, 1, b, xr);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    sla_solver_options o = lsqr_options(1e-5);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, bf, xf, &info));
    double x[20];
    for (int64_t i = 0; i < n; i++) x[i] = xf[i];
    assert_true(rel_err(x, xr, n) < 1e-4);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d); free(vf);
}

typedef struct { const sla_matrix *A; } mf_ctx;

static int csr_operator(void *ctx, sla_op op, int64_t b, const void *x, void *y)
{
    const mf_ctx *c = ctx;
    (void)b;
    return sla_spmv(op, 1.0, c->A, x, 0, 1, 0.0, y) == SLA_OK ? 0 : 1;
}

/* Matrix-free LSQR (square operator) gives the CSR answer */
static void matrix_free_square(void **state)
{
    (void)state;
    int64_t n = 30;
    sla_pattern *p;
    double *v, *d, b[30], x1[30], x2[30];
    rand_sparse(n, n, 0.15, 111, &p, &v, &d);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    tu_fill_random(b, n, 1);
    sla_solver_options o = lsqr_options(1e-12);
    sla_solver *s1 = NULL, *s2 = NULL;
    mf_ctx c = {&A};
    TU_OK(sla_solver_create(&A, &o, &s1));
    TU_OK(sla_solver_create_operator(n, SLA_FLOAT64, 1, csr_operator, &c, &o, &s2));
    TU_OK(sla_solver_solve(s1, SLA_OP_T, 1, b, x1, NULL));
    TU_OK(sla_solver_solve(s2, SLA_OP_T, 1, b, x2, NULL));
    assert_true(rel_err(x2, x1, n) < 1e-12);
    assert_non_null(strstr(sla_solver_describe(s2), "matrix-free"));
    sla_solver_free(&s1);
    sla_solver_free(&s2);
    sla_pattern_free(&p);
    free(v); free(d);
}

/* Parallel kernels on a small problem (threshold 0): rows and columns chunked apart (m ≠ n),
 * same answer as the serial kernels */
static void parallel_kernels(void **state)
{
    (void)state;
    int64_t m = 90, n = 35;
    sla_pattern *p;
    double *v, *d, b[90], x1[35], x2[35];
    rand_sparse(m, n, 0.1, 121, &p, &v, &d);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    tu_fill_random(b, m, 3);
    sla_solver_options o = lsqr_options(1e-12);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x1, NULL));
    double old = sla_test_par_min_bytes(0);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, NULL));
    sla_test_par_min_bytes(old);
    assert_true(rel_err(x2, x1, n) < 1e-10);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overdetermined_matches_qr),
        cmocka_unit_test(consistent_recovers_solution),
        cmocka_unit_test(square_spd_equals_cg),
        cmocka_unit_test(underdetermined_min_norm),
        cmocka_unit_test(transposed_problem),
        cmocka_unit_test(damped_matches_augmented),
        cmocka_unit_test(shared_illc1850),
        cmocka_unit_test(zero_rhs),
        cmocka_unit_test(non_finite),
        cmocka_unit_test(errors_are_clear),
        cmocka_unit_test(vjp_finite_differences),
        cmocka_unit_test(square_vjp_equals_solve_vjp),
        cmocka_unit_test(vjp_batched_multi_rhs),
        cmocka_unit_test(float32_overdetermined),
        cmocka_unit_test(matrix_free_square),
        cmocka_unit_test(parallel_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
