/* Test cases shared by test_lu.c (UMFPACK) and test_klu.c (KLU): define LU_METHOD (an sla_method)
 * before including this file. Every case runs the public API against closed forms, dense LAPACK
 * references or central finite differences. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#ifndef LU_METHOD
#error "define LU_METHOD before including lu_cases.h"
#endif

/* The unsymmetric and SPD shared matrices every LU method must solve. */
static const char *const lu_matrices[] = {"west0479.mtx", "rajat19.mtx", "pores_1.mtx", "1138_bus.mtx"};
#define LU_NMATRICES (sizeof lu_matrices / sizeof lu_matrices[0])

static sla_solver *lu_create(const sla_pattern *p, sla_dtype dtype, int64_t batch, const void *v)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = LU_METHOD;
    sla_matrix A = sla_matrix_view(p, dtype, batch, v);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    return s;
}

/* max over the k columns of ‖b − op(A)x‖∞ / (‖op(A)‖∞‖x‖∞ + ‖b‖∞), in double; x, b [n][k]. */
static double scaled_residual(sla_op op, const sla_pattern *p, const double *a, int64_t k,
                              const double *x, const double *b)
{
    int64_t n = sla_pattern_nrows(p);
    double *r = malloc(sizeof(double) * (size_t)(n * k)), anorm, worst = 0;
    memcpy(r, b, sizeof(double) * (size_t)(n * k));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, a);
    TU_OK(sla_spmv(op, -1.0, &A, x, 0, k, 1.0, r));
    TU_OK(sla_matrix_norm(&A, op == SLA_OP_N ? 'I' : '1', &anorm));
    for (int64_t j = 0; j < k; j++) {
        double rn = 0, xn = 0, bn = 0;
        for (int64_t i = 0; i < n; i++) {
            rn = fmax(rn, fabs(r[i * k + j]));
            xn = fmax(xn, fabs(x[i * k + j]));
            bn = fmax(bn, fabs(b[i * k + j]));
        }
        worst = fmax(worst, rn / (anorm * xn + bn));
    }
    free(r);
    return worst;
}

/* Dense row-major copy of one matrix (float64 values). */
static double *dense_of(const sla_pattern *p, const double *a)
{
    int64_t n = sla_pattern_nrows(p), m = sla_pattern_ncols(p);
    double *d = malloc(sizeof(double) * (size_t)(n * m + 1));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, a);
    TU_OK(sla_matrix_to_dense(&A, d));
    return d;
}

/* sign and log|det| of a dense n × n matrix by LAPACK's LU (d is overwritten by the factors;
 * ipiv [n] receives the pivots). */
static void dense_logdet(int64_t n, double *d, int *ipiv, double *sign, double *logabsdet)
{
    lapack_int info = n ? LAPACKE_dgetrf(LAPACK_ROW_MAJOR, (lapack_int)n, (lapack_int)n, d,
                                         (lapack_int)n, ipiv) : 0;
    assert_true(info >= 0);
    *sign = 1;
    *logabsdet = 0;
    for (int64_t i = 0; i < n; i++) {
        double u = d[i * n + i];
        if (u == 0) { *sign = 0; *logabsdet = -INFINITY; return; }
        if (u < 0) *sign = -*sign;
        if (ipiv[i] != i + 1) *sign = -*sign;
        *logabsdet += log(fabs(u));
    }
}

/* Dense inverse of one matrix (asserts nonsingular). */
static double *dense_inverse(const sla_pattern *p, const double *a)
{
    int64_t n = sla_pattern_nrows(p);
    double *d = dense_of(p, a), sg, la;
    int *ipiv = malloc(sizeof(int) * (size_t)(n + 1));
    dense_logdet(n, d, ipiv, &sg, &la);
    assert_true(sg != 0);
    assert_int_equal(LAPACKE_dgetri(LAPACK_ROW_MAJOR, (lapack_int)n, d, (lapack_int)n, ipiv), 0);
    free(ipiv);
    return d;
}

/* Pattern + CSR values from a dense row-major n × n matrix (exact zeros dropped). */
static void from_dense(int64_t n, const double *d, sla_pattern **p, double **v)
{
    TU_OK(sla_matrix_from_dense(n, n, SLA_FLOAT64, 1, d, 0.0, p, (void **)v));
}

/* Asserts that log|det| and its gradient from the solver match LAPACK: sign exactly, log|det|
 * to rtol relative to max(1, |log|det||), and every gradient entry (A⁻¹)[c][r] to rtol relative
 * to the largest entry of the reference. */
static void check_logdet_dense(const sla_pattern *p, const double *a, double rtol)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    double sign, logdet, rsign, rlog;
    TU_OK(sla_solver_logdet(s, &sign, &logdet));
    double *d = dense_of(p, a);
    int *ipiv = malloc(sizeof(int) * (size_t)(n + 1));
    dense_logdet(n, d, ipiv, &rsign, &rlog);
    assert_true(sign == rsign);
    TU_CLOSE(logdet, rlog, rtol);
    double *g = malloc(sizeof(double) * (size_t)(nnz + 1));
    TU_OK(sla_solver_logdet_grad(s, NULL, g));
    double *inv = dense_inverse(p, a), ref_max = 0, err = 0;
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t r = 0; r < n; r++)
        for (int64_t t = rp[r]; t < rp[r + 1]; t++) {
            double ref = inv[(int64_t)ci[t] * n + r];
            ref_max = fmax(ref_max, fabs(ref));
            err = fmax(err, fabs(g[t] - ref));
        }
    if (!(err <= rtol * ref_max))
        fail_msg("log|det| gradient error %g > %g · max |A⁻ᵀ| = %g", err, rtol, rtol * ref_max);
    free(d); free(ipiv); free(g); free(inv);
    sla_solver_free(&s);
}

/* ---------------------------------------------------------------------------------------------
 * Solves on the shared matrices
 * ------------------------------------------------------------------------------------------- */

static void solve_shared_matrices(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    for (size_t m = 0; m < LU_NMATRICES; m++) {
        sla_pattern *p;
        double *a;
        tu_load(lu_matrices[m], &p, &a);
        int64_t n = sla_pattern_nrows(p), k = 3;
        sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
        double *b = malloc(sizeof(double) * (size_t)(n * k)), *x = malloc(sizeof(double) * (size_t)(n * k));
        double *b1 = malloc(sizeof(double) * (size_t)n), *x1 = malloc(sizeof(double) * (size_t)n);
        tu_fill_random(b, n * k, 17 + m);
        for (int64_t i = 0; i < n; i++) b1[i] = b[i * k];
        for (int op = SLA_OP_N; op <= SLA_OP_T; op++) {
            sla_solve_info info;
            TU_OK(sla_solver_solve(s, (sla_op)op, k, b, x, &info));
            double res = scaled_residual((sla_op)op, p, a, k, x, b);
            if (!(res <= 1e-12))
                fail_msg("%s op %d nrhs %lld: scaled residual %g", lu_matrices[m], op, (long long)k, res);
            assert_true(info.converged && info.reason == SLA_REASON_CONVERGED);
            assert_int_equal(info.method, LU_METHOD);
            assert_true(info.rcond > 0 && info.rcond <= 1);
            assert_true(isfinite(info.residual_norm) && info.relative_residual < 1e-6);
            /* one right-hand side gives the first column of the block solve */
            TU_OK(sla_solver_solve(s, (sla_op)op, 1, b1, x1, NULL));
            assert_true(scaled_residual((sla_op)op, p, a, 1, x1, b1) <= 1e-12);
            for (int64_t i = 0; i < n; i++) TU_CLOSE(x1[i], x[i * k], 1e-9 * (1 + fabs(x[i * k])));
        }
        free(b); free(x); free(b1); free(x1); free(a);
        sla_solver_free(&s);
        sla_pattern_free(&p);
    }
}

/* A batch of three matrices on one pattern: A, 2·A, and A with a perturbed diagonal. */
static void solve_batched(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    sla_pattern *p;
    double *a;
    tu_load("west0479.mtx", &p, &a);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 2, B = 3;
    double *v = malloc(sizeof(double) * (size_t)(B * nnz));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t t = 0; t < nnz; t++) { v[t] = a[t]; v[nnz + t] = 2 * a[t]; v[2 * nnz + t] = a[t]; }
    for (int64_t i = 0; i < n; i++)
        for (int64_t t = rp[i]; t < rp[i + 1]; t++)
            if (ci[t] == i) v[2 * nnz + t] += 1.5 * (1 + fabs(a[t]));
    sla_solver *s = lu_create(p, SLA_FLOAT64, B, v);
    double *b = malloc(sizeof(double) * (size_t)(B * n * k)), *x = malloc(sizeof(double) * (size_t)(B * n * k));
    tu_fill_random(b, n * k, 5);
    memcpy(b + n * k, b, sizeof(double) * (size_t)(n * k));
    tu_fill_random(b + 2 * n * k, n * k, 6);
    for (int op = SLA_OP_N; op <= SLA_OP_T; op++) {
        TU_OK(sla_solver_solve(s, (sla_op)op, k, b, x, NULL));
        for (int64_t e = 0; e < B; e++)
            assert_true(scaled_residual((sla_op)op, p, v + e * nnz, k, x + e * n * k, b + e * n * k) <= 1e-12);
        for (int64_t i = 0; i < n * k; i++)              /* (2A)⁻¹b = A⁻¹b / 2 */
            TU_CLOSE(x[n * k + i], 0.5 * x[i], 1e-9 * (1 + fabs(x[i])));
    }
    double sign[3], logdet[3];
    TU_OK(sla_solver_logdet(s, sign, logdet));
    assert_true(sign[1] == sign[0]);                       /* det(2A) = 2^n det A */
    TU_CLOSE(logdet[1], logdet[0] + (double)n * log(2.0), 1e-12);
    /* batched VJP of X = A⁻¹B: dB solves Aᵀ dB = G per element, dvalues = −dB xᵀ on the pattern */
    double *db = malloc(sizeof(double) * (size_t)(B * n * k)), *dv = malloc(sizeof(double) * (size_t)(B * nnz));
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, b, x, NULL));
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, k, x, b, db, dv, NULL));
    for (int64_t e = 0; e < B; e++) {
        assert_true(scaled_residual(SLA_OP_T, p, v + e * nnz, k, db + e * n * k, b + e * n * k) <= 1e-12);
        for (int64_t i = 0; i < n; i += 37)
            for (int64_t t = rp[i]; t < rp[i + 1]; t++) {
                double ref = 0;
                for (int64_t j = 0; j < k; j++) ref -= db[(e * n + i) * k + j] * x[(e * n + ci[t]) * k + j];
                TU_CLOSE(dv[e * nnz + t], ref, 1e-12 * (1 + fabs(ref)));
            }
    }
    free(db); free(dv);
    free(v); free(b); free(x); free(a);
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

static void refactor_new_values(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    sla_pattern *p;
    double *a;
    tu_load("rajat19.mtx", &p, &a);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    double *a2 = malloc(sizeof(double) * (size_t)nnz), *b = malloc(sizeof(double) * (size_t)n);
    double *x = malloc(sizeof(double) * (size_t)n);
    uint64_t seed = 99;
    for (int64_t t = 0; t < nnz; t++) a2[t] = a[t] * (1 + 0.05 * tu_rand(&seed));
    tu_fill_random(b, n, 3);
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a), *fresh = lu_create(p, SLA_FLOAT64, 1, a2);
    TU_OK(sla_solver_refactor(s, a2));
    for (int op = SLA_OP_N; op <= SLA_OP_T; op++) {
        TU_OK(sla_solver_solve(s, (sla_op)op, 1, b, x, NULL));
        assert_true(scaled_residual((sla_op)op, p, a2, 1, x, b) <= 1e-12);
    }
    double s1, l1, s2, l2;
    TU_OK(sla_solver_logdet(s, &s1, &l1));
    TU_OK(sla_solver_logdet(fresh, &s2, &l2));
    assert_true(s1 == s2);
    TU_CLOSE(l1, l2, 1e-10);
    /* a refactor with a non-finite value is refused and leaves the factors of a2 in place */
    a2[7] = NAN;
    assert_int_equal(sla_solver_refactor(s, a2), SLA_ENONFINITE);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    free(a); free(a2); free(b); free(x);
    sla_solver_free(&s);
    sla_solver_free(&fresh);
    sla_pattern_free(&p);
}

/* float32 values and right-hand sides: factored in double, X rounded to float32. */
static void solve_float32(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    const char *names[] = {"pores_1.mtx", "west0479.mtx"};
    for (int m = 0; m < 2; m++) {
        sla_pattern *p;
        double *a;
        tu_load(names[m], &p, &a);
        int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 2;
        float *af = malloc(sizeof(float) * (size_t)nnz), *bf = malloc(sizeof(float) * (size_t)(n * k));
        float *xf = malloc(sizeof(float) * (size_t)(n * k));
        double *ad = malloc(sizeof(double) * (size_t)nnz), *bd = malloc(sizeof(double) * (size_t)(n * k));
        double *xd = malloc(sizeof(double) * (size_t)(n * k));
        for (int64_t t = 0; t < nnz; t++) ad[t] = af[t] = (float)a[t];
        tu_fill_random(bd, n * k, 8);
        for (int64_t i = 0; i < n * k; i++) bd[i] = bf[i] = (float)bd[i];
        sla_solver *s = lu_create(p, SLA_FLOAT32, 1, af);
        for (int op = SLA_OP_N; op <= SLA_OP_T; op++) {
            TU_OK(sla_solver_solve(s, (sla_op)op, k, bf, xf, NULL));
            for (int64_t i = 0; i < n * k; i++) xd[i] = xf[i];
            double res = scaled_residual((sla_op)op, p, ad, k, xd, bd);
            if (!(res <= 1e-6)) fail_msg("%s float32 op %d: scaled residual %g", names[m], op, res);
        }
        /* logdet and its float32 gradient agree with the float64 solver on the same values */
        sla_solver *s64 = lu_create(p, SLA_FLOAT64, 1, ad);
        double sg, ld, sg64, ld64, gmax = 0, err = 0;
        TU_OK(sla_solver_logdet(s, &sg, &ld));
        TU_OK(sla_solver_logdet(s64, &sg64, &ld64));
        assert_true(sg == sg64 && (sg == 1 || sg == -1));
        TU_CLOSE(ld, ld64, 1e-14);
        float *gf = malloc(sizeof(float) * (size_t)nnz);
        double *gd = malloc(sizeof(double) * (size_t)nnz);
        TU_OK(sla_solver_logdet_grad(s, NULL, gf));
        TU_OK(sla_solver_logdet_grad(s64, NULL, gd));
        for (int64_t t = 0; t < nnz; t++) { gmax = fmax(gmax, fabs(gd[t])); err = fmax(err, fabs(gf[t] - gd[t])); }
        assert_true(err <= 1e-6 * gmax);
        free(gf); free(gd);
        sla_solver_free(&s64);
        free(af); free(bf); free(xf); free(ad); free(bd); free(xd); free(a);
        sla_solver_free(&s);
        sla_pattern_free(&p);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Adjoints
 * ------------------------------------------------------------------------------------------- */

/* A well-conditioned random unsymmetric n × n matrix with a zero-free permuted diagonal and
 * zeros on the diagonal, so that pivoting is needed; as dense row-major. */
static double *random_unsymmetric(int64_t n, uint64_t seed)
{
    double *d = calloc((size_t)(n * n), sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        d[i * n + (i + 3) % n] = 4 + tu_rand(&seed);           /* dominant permuted diagonal */
        for (int e = 0; e < 2; e++) {
            int64_t j = (int64_t)((tu_rand(&seed) + 1) * 0.5 * (double)n) % n;
            if (j != i && j != (i + 3) % n) d[i * n + j] = tu_rand(&seed);
        }
    }
    return d;
}

/* L(a, b) = ⟨w, x⟩ with op(A) x = b, for the finite differences of the VJP. */
static double vjp_loss(sla_solver *s, sla_op op, int64_t n, int64_t k, const double *b,
                       const double *w, double *x)
{
    TU_OK(sla_solver_solve(s, op, k, b, x, NULL));
    double l = 0;
    for (int64_t i = 0; i < n * k; i++) l += w[i] * x[i];
    return l;
}

/* solve_vjp against central finite differences and against the dense formula
 * ∂a_rc = −λ_r x_c (op = N) with λ = A⁻ᵀ w, for one and two right-hand sides. */
static void solve_vjp_matches_fd_and_dense(void **state)
{
    (void)state;
    int64_t n = 12;
    double *d = random_unsymmetric(n, 41);
    sla_pattern *p;
    double *a;
    from_dense(n, d, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *inv = dense_inverse(p, a), *ap = malloc(sizeof(double) * (size_t)nnz);
    for (int64_t k = 1; k <= 2; k++)
        for (int op = SLA_OP_N; op <= SLA_OP_T; op++) {
            double *b = malloc(sizeof(double) * (size_t)(n * k)), *w = malloc(sizeof(double) * (size_t)(n * k));
            double *x = malloc(sizeof(double) * (size_t)(n * k)), *db = malloc(sizeof(double) * (size_t)(n * k));
            double *da = malloc(sizeof(double) * (size_t)nnz), *lam = calloc((size_t)(n * k), sizeof(double));
            double *xfd = malloc(sizeof(double) * (size_t)(n * k));
            tu_fill_random(b, n * k, 100 + k);
            tu_fill_random(w, n * k, 200 + k);
            sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
            TU_OK(sla_solver_solve(s, (sla_op)op, k, b, x, NULL));
            TU_OK(sla_solver_solve_vjp(s, (sla_op)op, k, x, w, db, da, NULL));
            /* dense: λ = op(A)⁻ᵀ w, i.e. A⁻ᵀ w (op = N) or A⁻¹ w (op = T) */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < k; j++)
                    for (int64_t m = 0; m < n; m++)
                        lam[i * k + j] += (op == SLA_OP_N ? inv[m * n + i] : inv[i * n + m]) * w[m * k + j];
            for (int64_t i = 0; i < n * k; i++) TU_CLOSE(db[i], lam[i], 1e-12);
            for (int64_t r = 0; r < n; r++)
                for (int64_t t = rp[r]; t < rp[r + 1]; t++) {
                    double ref = 0;
                    for (int64_t j = 0; j < k; j++)
                        ref -= op == SLA_OP_N ? lam[r * k + j] * x[ci[t] * k + j]
                                              : x[r * k + j] * lam[ci[t] * k + j];
                    TU_CLOSE(da[t], ref, 1e-12);
                    /* central difference in a_t */
                    double h = 1e-6 * fmax(1, fabs(a[t])), lp, lm;
                    memcpy(ap, a, sizeof(double) * (size_t)nnz);
                    ap[t] = a[t] + h;
                    TU_OK(sla_solver_refactor(s, ap));
                    lp = vjp_loss(s, (sla_op)op, n, k, b, w, xfd);
                    ap[t] = a[t] - h;
                    TU_OK(sla_solver_refactor(s, ap));
                    lm = vjp_loss(s, (sla_op)op, n, k, b, w, xfd);
                    double fd = (lp - lm) / (2 * h);
                    if (!(fabs(fd - da[t]) <= 1e-6 * fmax(fabs(da[t]), 1e-3)))
                        fail_msg("op %d k %lld slot %lld: VJP %.12g, finite difference %.12g", op,
                                 (long long)k, (long long)t, da[t], fd);
                }
            free(b); free(w); free(x); free(db); free(da); free(lam); free(xfd);
            sla_solver_free(&s);
        }
    free(d); free(a); free(ap); free(inv);
    sla_pattern_free(&p);
}

/* COO input with duplicate entries: every duplicate receives its slot's gradient, which is the
 * derivative with respect to each duplicate (they enter the matrix as a sum). */
static void vjp_duplicates_scatter(void **state)
{
    (void)state;
    /* 3 × 3, entry (0,0) given twice and (2,1) three times */
    int64_t r[] = {0, 0, 1, 2, 2, 1, 2, 0, 2}, c[] = {0, 0, 1, 1, 1, 2, 1, 2, 0};
    double v[] = {1.5, 0.5, 3, 0.25, 0.5, -1, 0.25, 0.7, 0.3};
    int64_t nin = 9;
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(3, 3, nin, r, c, &p));
    int64_t nnz = sla_pattern_nnz(p);
    assert_int_equal(nnz, 6);
    double a[6], b[3] = {1, -2, 0.5}, w[3] = {0.3, 1, -0.7}, x[3], da[6], dcoo[9];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, a));
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, w, NULL, da, NULL));
    TU_OK(sla_values_scatter(p, SLA_FLOAT64, 1, da, dcoo));
    assert_true(dcoo[0] == dcoo[1]);
    assert_true(dcoo[3] == dcoo[4] && dcoo[4] == dcoo[6]);
    for (int64_t e = 0; e < nin; e++) {                  /* finite difference in COO entry e */
        double vp[9], h = 1e-6, l[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            memcpy(vp, v, sizeof vp);
            vp[e] += sgn ? -h : h;
            double ap[6];
            TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, vp, ap));
            TU_OK(sla_solver_refactor(s, ap));
            l[sgn] = vjp_loss(s, SLA_OP_N, 3, 1, b, w, x);
        }
        TU_CLOSE(dcoo[e], (l[0] - l[1]) / (2 * h), 1e-6);
    }
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

/* ---------------------------------------------------------------------------------------------
 * Determinants: signs, permutations, pivoting, singular matrices
 * ------------------------------------------------------------------------------------------- */

static void logdet_of_dense(int64_t n, const double *d, double *sign, double *logdet)
{
    sla_pattern *p;
    double *a;
    from_dense(n, d, &p, &a);
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    TU_OK(sla_solver_logdet(s, sign, logdet));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(a);
}

static void det_signs_small(void **state)
{
    (void)state;
    double sign, ld;
    double m1[] = {-3};
    logdet_of_dense(1, m1, &sign, &ld);
    assert_true(sign == -1);
    TU_CLOSE(ld, log(3.0), 1e-15);
    double m2[] = {1, 2, 3, 4};                            /* det −2 */
    logdet_of_dense(2, m2, &sign, &ld);
    assert_true(sign == -1);
    TU_CLOSE(ld, log(2.0), 1e-14);
    double swap[] = {0, 1, 1, 0};                          /* zero (0,0): row pivoting, det −1 */
    logdet_of_dense(2, swap, &sign, &ld);
    assert_true(sign == -1);
    TU_CLOSE(ld, 0, 1e-15);
    double piv[] = {0, 2, 1, 1, 1, 0, 3, 0, 1};           /* det 0·1 − 2·1 + 1·(0 − 3) = −5 */
    logdet_of_dense(3, piv, &sign, &ld);
    assert_true(sign == -1);
    TU_CLOSE(ld, log(5.0), 1e-14);
    double diag[] = {2, 0, 0, 0, 0, -0.5, 0, 0, 0, 0, -4, 0, 0, 0, 0, 3};   /* det 12 */
    logdet_of_dense(4, diag, &sign, &ld);
    assert_true(sign == 1);
    TU_CLOSE(ld, log(12.0), 1e-14);
}

/* Permutation matrices of n = 6: the sign is the parity, log|det| = 0. */
static void det_permutations(void **state)
{
    (void)state;
    int64_t perms[][6] = {{1, 0, 2, 3, 4, 5},          /* one transposition: −1 */
                          {1, 2, 0, 3, 4, 5},          /* 3-cycle: +1 */
                          {5, 4, 3, 2, 1, 0},          /* three transpositions: −1 */
                          {1, 2, 3, 4, 5, 0},          /* 6-cycle: −1 */
                          {1, 0, 3, 2, 5, 4}};         /* three transpositions: −1 */
    double expect[] = {-1, 1, -1, -1, -1};
    for (int t = 0; t < 5; t++) {
        double d[36] = {0}, sign, ld;
        for (int i = 0; i < 6; i++) d[i * 6 + perms[t][i]] = 1;
        logdet_of_dense(6, d, &sign, &ld);
        if (sign != expect[t]) fail_msg("permutation %d: sign %g, expected %g", t, sign, expect[t]);
        TU_CLOSE(ld, 0, 1e-15);
        /* its solve is the permutation, its log|det| gradient is A⁻ᵀ = A on the pattern */
        sla_pattern *p;
        double *a, b[6] = {1, 2, 3, 4, 5, 6}, x[6], g[6];
        from_dense(6, d, &p, &a);
        sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        for (int i = 0; i < 6; i++) TU_CLOSE(x[perms[t][i]], b[i], 1e-15);
        TU_OK(sla_solver_logdet_grad(s, NULL, g));
        for (int i = 0; i < 6; i++) TU_CLOSE(g[i], 1, 1e-15);
        sla_solver_free(&s);
        sla_pattern_free(&p);
        free(a);
    }
}

static void logdet_shared_vs_lapack(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    for (size_t m = 0; m < LU_NMATRICES; m++) {
        sla_pattern *p;
        double *a;
        tu_load(lu_matrices[m], &p, &a);
        /* rajat19's inverse has entries up to 1e9 (κ ≈ 1e10): a looser gradient tolerance */
        check_logdet_dense(p, a, strcmp(lu_matrices[m], "rajat19.mtx") == 0 ? 1e-7 : 1e-10);
        free(a);
        sla_pattern_free(&p);
    }
}

/* log|det| of a matrix whose sign flips: −A for odd n. */
static void logdet_negated_and_random(void **state)
{
    (void)state;
    for (int64_t n = 5; n <= 13; n += 4) {
        double *d = random_unsymmetric(n, 7 + (uint64_t)n);
        sla_pattern *p;
        double *a;
        from_dense(n, d, &p, &a);
        check_logdet_dense(p, a, 1e-12);
        for (int64_t t = 0; t < sla_pattern_nnz(p); t++) a[t] = -a[t];
        check_logdet_dense(p, a, 1e-12);
        free(d); free(a);
        sla_pattern_free(&p);
    }
}

/* Gradient of Σ_b g_b log|det A_b| against central finite differences, batch of two. */
static void logdet_grad_fd_batched(void **state)
{
    (void)state;
    int64_t n = 9;
    double *d = random_unsymmetric(n, 3);
    sla_pattern *p;
    double *a;
    from_dense(n, d, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    double *v = malloc(sizeof(double) * (size_t)(2 * nnz)), *vp = malloc(sizeof(double) * (size_t)(2 * nnz));
    double *gr = malloc(sizeof(double) * (size_t)(2 * nnz)), g[2] = {0.7, -1.3};
    for (int64_t t = 0; t < nnz; t++) { v[t] = a[t]; v[nnz + t] = a[t] * (1 + 0.3 * sin((double)t)); }
    sla_solver *s = lu_create(p, SLA_FLOAT64, 2, v);
    TU_OK(sla_solver_logdet_grad(s, g, gr));
    for (int64_t t = 0; t < 2 * nnz; t++) {
        double h = 1e-6, l[2], sign[2], ld[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            memcpy(vp, v, sizeof(double) * (size_t)(2 * nnz));
            vp[t] += sgn ? -h : h;
            TU_OK(sla_solver_refactor(s, vp));
            TU_OK(sla_solver_logdet(s, sign, ld));
            l[sgn] = g[0] * ld[0] + g[1] * ld[1];
        }
        TU_CLOSE(gr[t], (l[0] - l[1]) / (2 * h), 1e-6);
    }
    free(d); free(a); free(v); free(vp); free(gr);
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

/* A numerically singular matrix: create succeeds, logdet gives (0, −inf), solve and the
 * gradient fail with SLA_ESINGULAR naming the column. */
static void singular_numeric(void **state)
{
    (void)state;
    double d[] = {1, 2, 0, 2, 4, 0, 0, 0, 3};             /* rows 0 and 1 dependent */
    sla_pattern *p;
    double *a, sign, ld, b[3] = {1, 1, 1}, x[3], g[5];
    from_dense(3, d, &p, &a);
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    assert_non_null(strstr(sla_solver_describe(s), "singular"));
    TU_OK(sla_solver_logdet(s, &sign, &ld));
    assert_true(sign == 0 && ld == -INFINITY);
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ESINGULAR);
    assert_non_null(strstr(sla_last_error(), "singular"));
    assert_non_null(strstr(sla_last_error(), "column"));
    assert_int_equal(sla_solver_solve(s, SLA_OP_T, 1, b, x, NULL), SLA_ESINGULAR);
    assert_int_equal(sla_solver_logdet_grad(s, NULL, g), SLA_ESINGULAR);
    /* a refactor with nonsingular values makes it usable again */
    a[3] = 5;                                              /* slot 3 is (1,1): 4 → 5 */
    TU_OK(sla_solver_refactor(s, a));
    TU_OK(sla_solver_logdet(s, &sign, &ld));
    assert_true(sign == 1);
    TU_CLOSE(ld, log(3.0), 1e-14);                         /* (5 − 4)·3 */
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(a);
}

/* Structurally singular: column 2 of a 4 × 4 matrix is empty; the message names column 2. */
static void singular_structural(void **state)
{
    (void)state;
    int64_t r[] = {0, 1, 2, 3, 0, 2}, c[] = {0, 1, 3, 3, 3, 1};
    double v[] = {1, 2, 3, 4, 5, 6}, a[6], sign, ld, b[4] = {1, 2, 3, 4}, x[4];
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(4, 4, 6, r, c, &p));
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, a));
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    TU_OK(sla_solver_logdet(s, &sign, &ld));
    assert_true(sign == 0 && ld == -INFINITY);
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ESINGULAR);
    if (!strstr(sla_last_error(), "at column 2 "))
        fail_msg("message does not name column 2: %s", sla_last_error());
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

/* ---------------------------------------------------------------------------------------------
 * Edge cases and bad input
 * ------------------------------------------------------------------------------------------- */

static void tiny_and_diagonal(void **state)
{
    (void)state;
    double one[] = {-2}, b = 3, x, g;
    sla_pattern *p;
    double *a;
    from_dense(1, one, &p, &a);
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    TU_OK(sla_solver_solve(s, SLA_OP_T, 1, &b, &x, NULL));
    TU_CLOSE(x, -1.5, 1e-15);
    TU_OK(sla_solver_logdet_grad(s, NULL, &g));
    TU_CLOSE(g, -0.5, 1e-15);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(a);
    /* diagonal 50 × 50: solution b_i / d_i, gradient 1 / d_i */
    int64_t n = 50, idx[50];
    double dv[50], bv[50], xv[50], gv[50];
    for (int64_t i = 0; i < n; i++) { idx[i] = i; dv[i] = (i % 3 ? 1.0 : -2.0) * (double)(i + 1); bv[i] = 1; }
    TU_OK(sla_pattern_from_coo(n, n, n, idx, idx, &p));
    s = lu_create(p, SLA_FLOAT64, 1, dv);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, bv, xv, NULL));
    TU_OK(sla_solver_logdet_grad(s, NULL, gv));
    double sign, ld, lref = 0, sref = 1;
    TU_OK(sla_solver_logdet(s, &sign, &ld));
    for (int64_t i = 0; i < n; i++) {
        TU_CLOSE(xv[i], 1 / dv[i], 1e-15);
        TU_CLOSE(gv[i], 1 / dv[i], 1e-15);
        lref += log(fabs(dv[i]));
        if (dv[i] < 0) sref = -sref;
    }
    assert_true(sign == sref && sign == -1);              /* 17 negative entries */
    TU_CLOSE(ld, lref, 1e-14);
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

static void empty_matrix(void **state)
{
    (void)state;
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(0, 0, 0, NULL, NULL, &p));
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, NULL);
    double sign, ld;
    TU_OK(sla_solver_logdet(s, &sign, &ld));
    assert_true(sign == 1 && ld == 0);
    TU_OK(sla_solver_logdet_grad(s, NULL, NULL));
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

static void bad_input(void **state)
{
    (void)state;
    int64_t r[] = {0, 1, 2}, c[] = {0, 3, 1};
    double v[] = {1, 2, 3};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(3, 4, 3, r, c, &p));
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = LU_METHOD;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = (sla_solver *)&o;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_ESHAPE);
    assert_null(s);
    assert_non_null(strstr(sla_last_error(), "3 × 4"));
    sla_pattern_free(&p);
    /* NaN in the right-hand side */
    double d[] = {2, 1, 1, 3}, b[2] = {1, NAN}, x[2];
    double *a;
    from_dense(2, d, &p, &a);
    s = lu_create(p, SLA_FLOAT64, 1, a);
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "B[0][1][0]"));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(a);
}

/* Every allocation of create, solve and logdet_grad failing in turn: an error (never a crash or
 * a leak under ASan), and success once no allocation fails. */
static void allocation_failures(void **state)
{
    (void)state;
    double *d = random_unsymmetric(10, 11), b[20], x[20], g[64];
    sla_pattern *p;
    double *a;
    from_dense(10, d, &p, &a);
    assert_true(sla_pattern_nnz(p) <= 64);
    tu_fill_random(b, 20, 1);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = LU_METHOD;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, a);
    int done = 0;
    for (int64_t k = 0; k < 200 && !done; k++) {
        sla_solver *s = NULL;
        sla_test_fail_alloc_after(k);
        sla_status st = sla_solver_create(&A, &o, &s);
        if (st == SLA_OK) st = sla_solver_solve(s, SLA_OP_N, 2, b, x, NULL);
        if (st == SLA_OK) st = sla_solver_logdet_grad(s, NULL, g);
        sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) done = 1;
        else assert_int_equal(st, SLA_ENOMEM);
        sla_solver_free(&s);
    }
    assert_true(done);
    sla_pattern_free(&p);
    free(a);
    free(d);
}

/* Each ordering option (auto, natural, amd, metis) reaches the backend: describe() contains
 * expect[k] and also[k] (expect[k] NULL: create refuses with SLA_EUNSUPPORTED), and the solve on
 * west0479 is correct. */
static void check_orderings(const char *const expect[4], const char *const also[4])
{
    if (!tu_have_matrices()) skip();
    sla_pattern *p;
    double *a;
    tu_load("west0479.mtx", &p, &a);
    int64_t n = sla_pattern_nrows(p);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, n, 2);
    const sla_ordering ord[] = {SLA_ORDERING_AUTO, SLA_ORDERING_NATURAL, SLA_ORDERING_AMD,
                                SLA_ORDERING_METIS};
    for (int k = 0; k < 4; k++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = LU_METHOD;
        o.ordering = ord[k];
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, a);
        sla_solver *s;
        if (!expect[k]) {
            assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EUNSUPPORTED);
            continue;
        }
        TU_OK(sla_solver_create(&A, &o, &s));
        const char *d = sla_solver_describe(s);
        if (!strstr(d, expect[k]) || !strstr(d, also[k]) || !strstr(d, "nnz(L+U)"))
            fail_msg("ordering %s: description '%s' lacks '%s' or '%s'", sla_ordering_name(ord[k]),
                     d, expect[k], also[k]);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        assert_true(scaled_residual(SLA_OP_N, p, a, 1, x, b) <= 1e-12);
        sla_solver_free(&s);
    }
    free(a); free(b); free(x);
    sla_pattern_free(&p);
}

#define LU_SHARED_TESTS                                  \
    cmocka_unit_test(solve_shared_matrices),             \
    cmocka_unit_test(solve_batched),                     \
    cmocka_unit_test(refactor_new_values),               \
    cmocka_unit_test(solve_float32),                     \
    cmocka_unit_test(solve_vjp_matches_fd_and_dense),    \
    cmocka_unit_test(vjp_duplicates_scatter),            \
    cmocka_unit_test(det_signs_small),                   \
    cmocka_unit_test(det_permutations),                  \
    cmocka_unit_test(logdet_shared_vs_lapack),           \
    cmocka_unit_test(logdet_negated_and_random),         \
    cmocka_unit_test(logdet_grad_fd_batched),            \
    cmocka_unit_test(singular_numeric),                  \
    cmocka_unit_test(singular_structural),               \
    cmocka_unit_test(tiny_and_diagonal),                 \
    cmocka_unit_test(empty_matrix),                      \
    cmocka_unit_test(bad_input),                         \
    cmocka_unit_test(allocation_failures)
