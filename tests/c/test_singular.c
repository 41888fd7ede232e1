/* The numerical-singularity rule (SLA_RCOND_SINGULAR, solver.h), one contract run against every
 * direct method: cholesky (CHOLMOD), ldlt (MUMPS), lu (UMFPACK), klu. A numerically singular
 * matrix factors (create/refactor SLA_OK; cholesky may refuse with SLA_ENOTSPD when a pivot is
 * not positive), its log-determinant is (0, −inf), and solve and logdet_grad return
 * SLA_ESINGULAR; regular matrices, badly scaled or ill-conditioned ones included, are not
 * refused, and info.rcond is a true upper bound of the dense reciprocal condition number of
 * the row-equilibrated matrix; options.allow_singular solves with a numerically (not exactly)
 * singular factorization. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const sla_method direct[] = {SLA_METHOD_CHOLESKY, SLA_METHOD_LDLT, SLA_METHOD_LU,
                                    SLA_METHOD_KLU};
#define NDIRECT 4

static int is_symmetric_method(sla_method m)
{
    return m == SLA_METHOD_CHOLESKY || m == SLA_METHOD_LDLT;
}

/* 1 if some available backend serves m (ldlt needs MUMPS) */
static int available(sla_method m)
{
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        TU_OK(sla_backend_get(i, &bi));
        if (bi.available && (bi.methods & (1u << m))) return 1;
    }
    return 0;
}

/* Graph Laplacian of the nx × ny grid (Neumann: diagonal = number of neighbours) + shift·I. */
static void neumann2d(int64_t nx, int64_t ny, double shift, sla_pattern **p, double **v)
{
    int64_t n = nx * ny, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)(5 * n)), *c = malloc(sizeof(int64_t) * (size_t)(5 * n));
    double *w = malloc(sizeof(double) * (size_t)(5 * n));
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int64_t i = y * nx + x, deg = 0;
            const int64_t nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
            for (int q = 0; q < 4; q++)
                if (nb[q][0] >= 0 && nb[q][0] < nx && nb[q][1] >= 0 && nb[q][1] < ny) {
                    r[k] = i; c[k] = nb[q][1] * nx + nb[q][0]; w[k++] = -1; deg++;
                }
            r[k] = i; c[k] = i; w[k++] = (double)deg + shift;
        }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *v = malloc(sizeof(double) * (size_t)k);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, w, *v));
    free(r); free(c); free(w);
}

/* A sparse matrix from a dense row-major n × n one (zeros not stored). */
static void from_dense(int64_t n, const double *d, sla_pattern **p, double **v)
{
    int64_t k = 0, *r = malloc(sizeof(int64_t) * (size_t)(n * n)), *c = malloc(sizeof(int64_t) * (size_t)(n * n));
    double *w = malloc(sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            if (d[i * n + j] != 0) { r[k] = i; c[k] = j; w[k++] = d[i * n + j]; }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *v = malloc(sizeof(double) * (size_t)k);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, w, *v));
    free(r); free(c); free(w);
}

static sla_status create(const sla_pattern *p, sla_dtype dt, int64_t batch, const void *v,
                         sla_method m, sla_solver **s)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    sla_matrix A = sla_matrix_view(p, dt, batch, v);
    *s = NULL;
    return sla_solver_create(&A, &o, s);
}

/* Every consequence of "numerically singular" for method m on (p, v) in dtype dt. */
static void expect_singular(const sla_pattern *p, const double *v, sla_method m, sla_dtype dt,
                            const char *what)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    void *vals = (void *)v;
    float *vf = NULL;
    if (dt == SLA_FLOAT32) {
        vf = malloc(sizeof(float) * (size_t)nnz);
        for (int64_t k = 0; k < nnz; k++) vf[k] = (float)v[k];
        vals = vf;
    }
    sla_solver *s;
    sla_status st = create(p, dt, 1, vals, m, &s);
    if (m == SLA_METHOD_CHOLESKY && st == SLA_ENOTSPD) { free(vf); return; }   /* refused: fine */
    if (st != SLA_OK) fail_msg("%s %s: create -> %d: %s", what, sla_method_name(m), st, sla_last_error());
    size_t es = sla_dtype_size(dt);
    void *b = calloc((size_t)n, es), *x = calloc((size_t)n, es), *g = calloc((size_t)nnz, es);
    for (int64_t i = 0; i < n; i++) {
        if (dt == SLA_FLOAT64) ((double *)b)[i] = 1 + 0.5 * sin((double)i);
        else ((float *)b)[i] = (float)(1 + 0.5 * sin((double)i));
    }
    sla_solve_info info;
    st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
    if (st != SLA_ESINGULAR)
        fail_msg("%s %s %s: solve -> %d (relative residual %g, rcond %g), expected SLA_ESINGULAR",
                 what, sla_method_name(m), sla_dtype_name(dt), st, info.relative_residual, info.rcond);
    assert_non_null(strstr(sla_last_error(), "singular"));
    assert_false(info.converged);
    assert_int_equal(info.reason, SLA_REASON_ERROR);
    assert_true(info.rcond < SLA_RCOND_SINGULAR);
    assert_int_equal(sla_solver_solve(s, SLA_OP_T, 1, b, x, NULL), SLA_ESINGULAR);
    double sign = 7, lad = 7;
    TU_OK(sla_solver_logdet(s, &sign, &lad));
    if (!(sign == 0 && lad == -INFINITY))
        fail_msg("%s %s: logdet (%g, %g), expected (0, -inf)", what, sla_method_name(m), sign, lad);
    assert_int_equal(sla_solver_logdet_grad(s, NULL, g), SLA_ESINGULAR);
    assert_non_null(strstr(sla_solver_describe(s), "singular"));
    sla_solver_free(&s);
    free(b); free(x); free(g); free(vf);
}

/* The 20 × 20 Neumann Laplacian (exactly singular: rcond ≈ 1e-18) and a shift of 1e-14 (SPD,
 * κ ≈ 8e14, so Cholesky succeeds), float64 and float32. */
static void neumann_laplacian_is_singular_everywhere(void **state)
{
    (void)state;
    const double shifts[] = {0, 1e-14};
    for (int k = 0; k < 2; k++) {
        sla_pattern *p;
        double *v;
        neumann2d(20, 20, shifts[k], &p, &v);
        for (int m = 0; m < NDIRECT; m++) {
            if (!available(direct[m])) continue;
            expect_singular(p, v, direct[m], SLA_FLOAT64, k ? "Neumann + 1e-14 I" : "Neumann");
            if (k == 0) expect_singular(p, v, direct[m], SLA_FLOAT32, "Neumann");
        }
        sla_pattern_free(&p);
        free(v);
    }
}

/* Singular matrices whose pivots do not show it: the bidiagonal U with 1 on the diagonal and −2
 * above (every pivot 1, κ ≈ 3·2⁵⁰) for LU, and UᵀU (tridiagonal SPD, Cholesky factor U,
 * κ ≈ 2⁶⁰) for every method; and a dependent row (row 2 = row 0 + 3·row 1) of a random
 * unsymmetric matrix, whose elimination leaves a pivot at rounding level, not zero. */
static void hidden_singularity(void **state)
{
    (void)state;
    int64_t n = 50;
    double *u = calloc((size_t)(n * n), sizeof(double)), *a = calloc((size_t)(n * n), sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        u[i * n + i] = 1;
        if (i + 1 < n) u[i * n + i + 1] = -2;
    }
    for (int64_t i = 0; i < n; i++)          /* a = UᵀU */
        for (int64_t j = 0; j < n; j++)
            for (int64_t q = 0; q < n; q++) a[i * n + j] += u[q * n + i] * u[q * n + j];
    sla_pattern *p;
    double *v;
    from_dense(n, u, &p, &v);
    expect_singular(p, v, SLA_METHOD_LU, SLA_FLOAT64, "Kahan bidiagonal");
    expect_singular(p, v, SLA_METHOD_KLU, SLA_FLOAT64, "Kahan bidiagonal");
    sla_pattern_free(&p);
    free(v);
    from_dense(n, a, &p, &v);
    for (int m = 0; m < NDIRECT; m++)
        if (available(direct[m])) expect_singular(p, v, direct[m], SLA_FLOAT64, "UᵀU");
    sla_pattern_free(&p);
    free(v);
    /* a dependent row */
    int64_t n2 = 30;
    double *d = calloc((size_t)(n2 * n2), sizeof(double));
    uint64_t seed = 5;
    for (int64_t i = 0; i < n2; i++) {
        d[i * n2 + i] = 4;
        for (int e = 0; e < 3; e++) d[i * n2 + (int64_t)((tu_rand(&seed) + 1) * 0.5 * (double)n2) % n2] += tu_rand(&seed);
    }
    for (int64_t j = 0; j < n2; j++) d[2 * n2 + j] = d[j] + 3 * d[n2 + j];
    from_dense(n2, d, &p, &v);
    expect_singular(p, v, SLA_METHOD_LU, SLA_FLOAT64, "dependent row");
    expect_singular(p, v, SLA_METHOD_KLU, SLA_FLOAT64, "dependent row");
    sla_pattern_free(&p);
    free(v); free(u); free(a); free(d);
}

/* The exact reciprocal 1-norm condition number of the row-equilibrated dense matrix d. */
static double dense_rcond_rowscaled(int64_t n, const double *d)
{
    double *m = malloc(sizeof(double) * (size_t)(n * n)), anorm = 0, inorm = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = 0;
        for (int64_t j = 0; j < n; j++) r = fmax(r, fabs(d[i * n + j]));
        for (int64_t j = 0; j < n; j++) m[i * n + j] = d[i * n + j] / r;
    }
    for (int64_t j = 0; j < n; j++) {
        double c = 0;
        for (int64_t i = 0; i < n; i++) c += fabs(m[i * n + j]);
        anorm = fmax(anorm, c);
    }
    lapack_int *ipiv = malloc(sizeof(lapack_int) * (size_t)n);
    assert_int_equal(LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, m, (lapack_int)n, ipiv), 0);
    assert_int_equal(LAPACKE_dgetri(LAPACK_ROW_MAJOR, (lapack_int)n, m, (lapack_int)n, ipiv), 0);
    for (int64_t j = 0; j < n; j++) {
        double c = 0;
        for (int64_t i = 0; i < n; i++) c += fabs(m[i * n + j]);
        inorm = fmax(inorm, c);
    }
    free(m); free(ipiv);
    return 1 / (anorm * inorm);
}

/* Regular matrices are solved: shared ones (west0479: rcond 7e-13 before row scaling, 2e-8
 * after; hangGlider_2, bcsstk13, pores_1, the Neumann Laplacian + 1e-6·I), and the estimate lies
 * between the dense truth and 10 times it (an upper bound by construction). */
static void regular_matrices_are_not_refused(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    const char *names[] = {"west0479.mtx", "hangGlider_2.mtx", "bcsstk13.mtx", "pores_1.mtx", NULL};
    for (int f = 0; f < 5; f++) {
        sla_pattern *p;
        double *v;
        if (names[f]) tu_load(names[f], &p, &v);
        else neumann2d(20, 20, 1e-6, &p, &v);
        int64_t n = sla_pattern_nrows(p);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        int sym = 0;
        TU_OK(sla_matrix_is_symmetric(&A, 0, 1e-13, &sym));
        double truth = -1;
        if (n <= 500) {
            double *d = malloc(sizeof(double) * (size_t)(n * n));
            TU_OK(sla_matrix_to_dense(&A, d));
            truth = dense_rcond_rowscaled(n, d);
            free(d);
        }
        double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
        tu_fill_random(b, n, 3);
        for (int m = 0; m < NDIRECT; m++) {
            if (!available(direct[m]) || (is_symmetric_method(direct[m]) && !sym)) continue;
            sla_solver *s;
            sla_status st = create(p, SLA_FLOAT64, 1, v, direct[m], &s);
            if (st == SLA_ENOTSPD && direct[m] == SLA_METHOD_CHOLESKY) continue;  /* indefinite */
            TU_OK(st);
            sla_solve_info info;
            st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
            if (st != SLA_OK)
                fail_msg("%s %s refused: %s", names[f] ? names[f] : "Neumann + 1e-6 I",
                         sla_method_name(direct[m]), sla_last_error());
            assert_true(info.converged && info.rcond >= SLA_RCOND_SINGULAR);
            if (truth > 0 && !(info.rcond >= truth * (1 - 1e-6) && info.rcond <= 10 * truth))
                fail_msg("%s %s: rcond estimate %g, dense %g", names[f] ? names[f] : "Neumann",
                         sla_method_name(direct[m]), info.rcond, truth);
            double sign, lad;
            TU_OK(sla_solver_logdet(s, &sign, &lad));
            assert_true(sign != 0 && isfinite(lad));
            sla_solver_free(&s);
        }
        free(b); free(x); free(v);
        sla_pattern_free(&p);
    }
    /* rows scaled by 1e±150: row equilibration makes it the identity (rcond 1) */
    double d[] = {1e150, 0, 0, 1e-150}, *v;
    sla_pattern *p;
    from_dense(2, d, &p, &v);
    for (int m = 0; m < NDIRECT; m++) {
        if (!available(direct[m])) continue;
        sla_solver *s;
        TU_OK(create(p, SLA_FLOAT64, 1, v, direct[m], &s));
        double b[2] = {1, 1}, x[2];
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        TU_CLOSE(info.rcond, 1, 1e-15);
        TU_CLOSE(x[1], 1e150, 1e-15);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v);
}

/* A batch with one numerically singular element: the message names it, the logdet of the
 * others stays finite; a refactor with regular values makes it usable, and back. */
static void batch_and_refactor(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    neumann2d(8, 8, 0, &p, &v);
    int64_t n = 64, nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *vb = malloc(sizeof(double) * (size_t)(2 * nnz)), b[128], x[128], sign[2], lad[2];
    for (int64_t k = 0; k < nnz; k++) vb[k] = vb[nnz + k] = v[k];
    for (int64_t i = 0; i < n; i++)                /* element 0 regular: + I */
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) if (ci[k] == i) vb[k] += 1;
    for (int64_t i = 0; i < 2 * n; i++) b[i] = 1;
    for (int m = 0; m < NDIRECT; m++) {
        if (!available(direct[m])) continue;
        sla_solver *s;
        sla_status st = create(p, SLA_FLOAT64, 2, vb, direct[m], &s);
        if (st == SLA_ENOTSPD) {                  /* cholesky: element 1 not positive definite */
            assert_int_equal(direct[m], SLA_METHOD_CHOLESKY);
            continue;
        }
        TU_OK(st);
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ESINGULAR);
        if (!strstr(sla_last_error(), "1") || !strstr(sla_last_error(), "singular"))
            fail_msg("%s: %s", sla_method_name(direct[m]), sla_last_error());
        TU_OK(sla_solver_logdet(s, sign, lad));
        assert_true(sign[0] == 1 && isfinite(lad[0]) && sign[1] == 0 && lad[1] == -INFINITY);
        double *w = malloc(sizeof(double) * (size_t)(2 * nnz));
        memcpy(w, vb, sizeof(double) * (size_t)(2 * nnz));
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) if (ci[k] == i) w[nnz + k] += 0.5;
        TU_OK(sla_solver_refactor(s, w));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        TU_OK(sla_solver_logdet(s, sign, lad));
        assert_true(sign[0] == 1 && sign[1] == 1);
        TU_OK(sla_solver_refactor(s, vb));        /* singular again */
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ESINGULAR);
        sla_solver_free(&s);
        free(w);
    }
    free(vb); free(v);
    sla_pattern_free(&p);
}

/* options.allow_singular = 1, the inverse-iteration use: the numerically singular Neumann
 * Laplacian + 1e-14·I (no zero pivot) is solved by every method (N and T), info.rcond still says
 * it is below SLA_RCOND_SINGULAR, describe() says it was allowed, the logdet is the factors'
 * (finite), and X is the null vector to working accuracy: ‖A x‖₂ ≤ 1e-12·‖A‖₁·‖x‖₂ (one step of
 * inverse iteration at σ = 0). Exactly singular factors ([[1, 1], [1, 1]]: a zero pivot, MUMPS's
 * null pivot, or cholesky's SLA_ENOTSPD) are refused as without it; the field must be 0 or 1. */
static void allow_singular_solves_near_null(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    neumann2d(20, 20, 1e-14, &p, &v);
    int64_t n = 400;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    double *ax = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) b[i] = 1 + 0.5 * sin((double)i);
    double one[] = {1, 1, 1, 1}, *w;
    sla_pattern *p1;
    from_dense(2, one, &p1, &w);
    sla_matrix A1 = sla_matrix_view(p1, SLA_FLOAT64, 1, w);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.allow_singular = 1;
    for (int m = 0; m < NDIRECT; m++) {
        if (!available(direct[m])) continue;
        o.method = direct[m];
        const char *name = sla_method_name(direct[m]);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_non_null(strstr(sla_solver_describe(s), "numerically singular (options.allow_singular)"));
        for (int t = 0; t < 2; t++) {
            sla_solve_info info;
            sla_status st = sla_solver_solve(s, t ? SLA_OP_T : SLA_OP_N, 1, b, x, &info);
            if (st != SLA_OK) fail_msg("%s: solve -> %d: %s", name, st, sla_last_error());
            assert_true(info.rcond < SLA_RCOND_SINGULAR);
            TU_OK(sla_spmv(SLA_OP_N, 1.0, &A, x, 1, 1, 0.0, ax));
            double nax = 0, nx = 0;
            for (int64_t i = 0; i < n; i++) { nax += ax[i] * ax[i]; nx += x[i] * x[i]; }
            if (!(sqrt(nax) <= 1e-12 * 8 * sqrt(nx)))
                fail_msg("%s: ‖A x‖ = %g, ‖x‖ = %g: not the null vector", name, sqrt(nax), sqrt(nx));
        }
        double sign = 0, lad = 0;
        TU_OK(sla_solver_logdet(s, &sign, &lad));
        assert_true(sign != 0 && isfinite(lad));
        sla_solver_free(&s);
        /* exactly singular: still refused */
        sla_status st = sla_solver_create(&A1, &o, &s);
        if (st == SLA_ENOTSPD && direct[m] == SLA_METHOD_CHOLESKY) continue;
        TU_OK(st);
        double b2[2] = {1, 2}, x2[2];
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b2, x2, NULL), SLA_ESINGULAR);
        TU_OK(sla_solver_logdet(s, &sign, &lad));
        assert_true(sign == 0 && lad == -INFINITY);
        sla_solver_free(&s);
    }
    o.method = SLA_METHOD_LU;
    o.allow_singular = 2;
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "options.allow_singular"));
    free(b); free(x); free(ax); free(v); free(w);
    sla_pattern_free(&p);
    sla_pattern_free(&p1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(neumann_laplacian_is_singular_everywhere),
        cmocka_unit_test(hidden_singularity),
        cmocka_unit_test(regular_matrices_are_not_refused),
        cmocka_unit_test(batch_and_refactor),
        cmocka_unit_test(allow_singular_solves_near_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
