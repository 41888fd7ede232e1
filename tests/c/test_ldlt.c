/* method = ldlt (MUMPS backend, symmetric indefinite): residuals on hangGlider_2 (733 zero
 * diagonals) and an SPD matrix, batches (parallel against serial), float32, refactor, solve VJP
 * against finite differences and a dense reference, determinant sign and log|det| against dense
 * LU, log-determinant gradient against the dense inverse, singular matrices, errors. */
#include <omp.h>
#include <stdio.h>

#include "direct_testutil.h"

static sla_solver_options ldlt_opts(sla_ordering ordering)
{
    return dt_opts(SLA_METHOD_LDLT, ordering);
}

static int have_mumps(void)
{
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        TU_OK(sla_backend_get(i, &bi));
        if (strcmp(bi.name, "mumps") == 0) return bi.available;
    }
    return 0;
}

static double solve_residual(sla_solver *s, const sla_matrix *A, sla_op op, int64_t nrhs,
                             uint64_t seed)
{
    int64_t tot = A->batch * sla_pattern_nrows(A->pattern) * nrhs;
    double *b = dt_alloc(tot), *x = dt_alloc(tot);
    tu_fill_random(b, tot, seed);
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, op, nrhs, b, x, &info));
    assert_int_equal(info.method, SLA_METHOD_LDLT);
    double r = dt_scaled_residual(A, op, nrhs, b, x);
    free(b); free(x);
    return r;
}

static void unavailable_is_named(void **state)
{
    if (have_mumps()) {
        sla_backend_info bi;
        for (int64_t i = 0; i < sla_backend_count(); i++) {
            TU_OK(sla_backend_get(i, &bi));
            if (strcmp(bi.name, "mumps") == 0) break;
        }
        assert_true(bi.methods & (1u << SLA_METHOD_LDLT));
        assert_null(bi.unavailable_reason);
        return;
    }
    int64_t z = 0;
    double a = 1;
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(1, 1, 1, &z, &z, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, &a);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EUNSUPPORTED);
    sla_pattern_free(&p);
}

static void hangglider_kkt(void **state)
{
    if (!have_mumps() || !tu_have_matrices()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load("hangGlider_2.mtx", &p, &v);
    sla_diag_info di;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    TU_OK(sla_matrix_diag_info(&A, &di));
    assert_int_equal(di.zero + di.missing, 733);
    for (int o = SLA_ORDERING_AUTO; o < SLA_ORDERING_COUNT; o++) {
        sla_solver_options opt = ldlt_opts((sla_ordering)o);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &opt, &s));
        assert_non_null(strstr(sla_solver_describe(s), "ldlt (MUMPS"));
        for (int op = 0; op < 2; op++)
            for (int64_t k = 1; k <= 3; k += 2) {
                double r = solve_residual(s, &A, (sla_op)op, k, 31 + (uint64_t)o);
                if (!(r <= 1e-12)) fail_msg("ordering %d op %d nrhs %lld: residual %.3g", o, op, (long long)k, r);
            }
        /* inertia (+914, −733, 0): det has sign (−1)^733 */
        double sg, ld;
        TU_OK(sla_solver_logdet(s, &sg, &ld));
        assert_true(sg == -1);
        assert_true(isfinite(ld));
        sla_solver_free(&s);
    }
    free(v);
    sla_pattern_free(&p);
}

static void spd_matrix_agrees_with_cholesky(void **state)
{
    if (!have_mumps() || !tu_have_matrices()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load("nos6.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO), oc = o;
    oc.method = SLA_METHOD_CHOLESKY;
    sla_solver *s = NULL, *c = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_create(&A, &oc, &c));
    for (int op = 0; op < 2; op++) assert_true(solve_residual(s, &A, (sla_op)op, 2, 3) <= 1e-12);
    double sg, ld, sgc, ldc;
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    TU_OK(sla_solver_logdet(c, &sgc, &ldc));
    assert_true(sg == 1 && sgc == 1);
    TU_CLOSE(ld, ldc, 1e-12);
    sla_solver_free(&s);
    sla_solver_free(&c);
    free(v);
    sla_pattern_free(&p);
}

/* hangGlider_2 batch 3: values_b = (1 + b/2)·A, nonzero diagonal entries shifted by 0.01·b.
 * With 2 threads (the value gathers run in parallel, MUMPS calls are serialized) and with 1
 * thread the results are identical; element 2 solved alone agrees to rounding. Two solver objects
 * used from two threads at once also agree (MUMPS calls are serialized inside). */
static void batched_parallel_vs_serial(void **state)
{
    if (!have_mumps() || !tu_have_matrices()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load("hangGlider_2.mtx", &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), B = 3, k = 2;
    double *vb = dt_alloc(B * nnz);
    for (int64_t b = 0; b < B; b++)
        for (int64_t q = 0; q < nnz; q++) {
            vb[b * nnz + q] = (1 + 0.5 * (double)b) * v[q];
            if (sla_pattern_rowind(p)[q] == sla_pattern_colind(p)[q] && v[q] != 0)
                vb[b * nnz + q] += 0.01 * (double)b;
        }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, B, vb);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    double *b = dt_alloc(B * n * k), *x = dt_alloc(B * n * k), *x1 = dt_alloc(B * n * k);
    double *x2 = dt_alloc(n * k), sg[3], ld[3], sg1[3], ld1[3], sg2, ld2;
    tu_fill_random(b, B * n * k, 41);
    sla_solver *s = NULL, *s1 = NULL, *s2 = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, b, x, NULL));
    assert_true(dt_scaled_residual(&A, SLA_OP_N, k, b, x) <= 1e-12);
    TU_OK(sla_solver_logdet(s, sg, ld));
    int saved = sla_get_num_threads();
    (void)sla_set_num_threads(1);
    TU_OK(sla_solver_create(&A, &o, &s1));
    TU_OK(sla_solver_solve(s1, SLA_OP_N, k, b, x1, NULL));
    TU_OK(sla_solver_logdet(s1, sg1, ld1));
    (void)sla_set_num_threads(saved);
    for (int64_t i = 0; i < B * n * k; i++) assert_true(x[i] == x1[i]);
    for (int i = 0; i < 3; i++) assert_true(sg[i] == sg1[i] && ld[i] == ld1[i]);
    sla_matrix A2 = sla_matrix_view(p, SLA_FLOAT64, 1, vb + 2 * nnz);
    TU_OK(sla_solver_create(&A2, &o, &s2));
    TU_OK(sla_solver_solve(s2, SLA_OP_N, k, b + 2 * n * k, x2, NULL));
    TU_OK(sla_solver_logdet(s2, &sg2, &ld2));
    double xmax = 0, err = 0;
    for (int64_t i = 0; i < n * k; i++) {
        xmax = fmax(xmax, fabs(x2[i]));
        err = fmax(err, fabs(x2[i] - x[2 * n * k + i]));
    }
    /* hangGlider_2 has κ ≈ 8.8e10: forward errors of two backward-stable solves differ by ~κε */
    if (!(err <= 1e-7 * xmax)) fail_msg("element 2 alone: error %.3g of %.3g", err, xmax);
    assert_true(sg2 == sg[2]);
    TU_CLOSE(ld2, ld[2], 1e-10);
    /* scaling by (1 + b/2) with no diagonal shift would multiply det by (1 + b/2)^n */
    assert_true(ld[1] > ld[0]);
    /* two solver objects used from two threads at once */
    double *y = dt_alloc(B * n * k), *y2 = dt_alloc(n * k);
    sla_status st[2];
    #pragma omp parallel for num_threads(2)
    for (int t = 0; t < 2; t++)
        for (int rep = 0; rep < 3; rep++)
            st[t] = t == 0 ? sla_solver_solve(s, SLA_OP_N, k, b, y, NULL)
                           : sla_solver_solve(s2, SLA_OP_T, k, b + 2 * n * k, y2, NULL);
    TU_OK(st[0]);
    TU_OK(st[1]);
    for (int64_t i = 0; i < B * n * k; i++) assert_true(y[i] == x[i]);
    for (int64_t i = 0; i < n * k; i++) assert_true(y2[i] == x2[i]);
    free(y); free(y2);
    sla_solver_free(&s);
    sla_solver_free(&s1);
    sla_solver_free(&s2);
    free(b); free(x); free(x1); free(x2); free(vb); free(v);
    sla_pattern_free(&p);
}

static void float32_values(void **state)
{
    if (!have_mumps() || !tu_have_matrices()) skip();
    dt_check_float32("hangGlider_2.mtx", SLA_METHOD_LDLT, SLA_OP_N);
}

/* [[H, Bᵀ], [B, 0]] with H = tridiag(−1, 4, −1) (m × m) and B the (m/2) × m pairing matrix. */
static void kkt(int64_t m, uint64_t seed, sla_pattern **p, double **v)
{
    int64_t mc = m / 2, cap = 3 * m + 2 * mc, k = 0;
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)cap), *ci = malloc(sizeof(int64_t) * (size_t)cap);
    double *vals = dt_alloc(cap);
    for (int64_t i = 0; i < m; i++) {
        ri[k] = i; ci[k] = i; vals[k++] = 4 + tu_rand(&seed);
        if (i > 0) { ri[k] = i; ci[k] = i - 1; vals[k++] = -1; }
    }
    for (int64_t j = 0; j < mc; j++) {
        ri[k] = m + j; ci[k] = 2 * j; vals[k++] = 1 + tu_rand(&seed);
        ri[k] = m + j; ci[k] = 2 * j + 1; vals[k++] = tu_rand(&seed);
    }
    dt_sym_from_lower(m + mc, k, ri, ci, vals, p, v);
    free(ri); free(ci); free(vals);
}

static void refactor_new_values(void **state)
{
    if (!have_mumps()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    kkt(40, 3, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double *b = dt_alloc(n), *x1 = dt_alloc(n), *x2 = dt_alloc(n), *w = dt_alloc(nnz);
    tu_fill_random(b, n, 4);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x1, NULL));
    for (int64_t q = 0; q < nnz; q++) w[q] = v[q] * (1.5 + 0.1 * (double)(sla_pattern_find(p, sla_pattern_colind(p)[q], sla_pattern_rowind(p)[q]) == q));
    /* keep symmetry: scale mirrored pairs alike */
    for (int64_t q = 0; q < nnz; q++) {
        int64_t r = sla_pattern_rowind(p)[q], c = sla_pattern_colind(p)[q];
        w[q] = v[q] * (r == c ? 1.6 : 1.5);
    }
    TU_OK(sla_solver_refactor(s, w));
    TU_OK(sla_solver_solve(s, SLA_OP_T, 1, b, x2, NULL));
    sla_matrix W = sla_matrix_view(p, SLA_FLOAT64, 1, w);
    assert_true(dt_scaled_residual(&W, SLA_OP_T, 1, b, x2) <= 1e-13);
    assert_true(fabs(x2[0] - x1[0]) > 1e-6 * fabs(x1[0]));
    sla_solver_free(&s);
    free(b); free(x1); free(x2); free(w); free(v);
    sla_pattern_free(&p);
}

/* Indefinite matrix given as COO with duplicates (each entry of the lower triangle split in two
 * halves, mirrored). */
static void solve_vjp_dense_and_fd(void **state)
{
    if (!have_mumps()) skip();
    sla_pattern *p0 = NULL;
    double *v0 = NULL;
    kkt(12, 9, &p0, &v0);
    int64_t n = sla_pattern_nrows(p0), nnz0 = sla_pattern_nnz(p0), m = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)(2 * nnz0)), *c = malloc(sizeof(int64_t) * (size_t)(2 * nnz0));
    double *coo = dt_alloc(2 * nnz0);
    for (int64_t q = 0; q < nnz0; q++) {
        int64_t i = sla_pattern_rowind(p0)[q], j = sla_pattern_colind(p0)[q];
        r[m] = i; c[m] = j; coo[m++] = 0.3 * v0[q];
        r[m] = i; c[m] = j; coo[m++] = 0.7 * v0[q];
    }
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(n, n, m, r, c, &p));
    assert_true(sla_pattern_has_duplicates(p));
    double *v = dt_alloc(sla_pattern_nnz(p));
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, coo, v));
    dt_check_solve_vjp(p, v, SLA_METHOD_LDLT, 2, 1e-11, 2);
    free(v); free(v0); free(r); free(c); free(coo);
    sla_pattern_free(&p);
    sla_pattern_free(&p0);
}

static void logdet_and_grad_dense(void **state)
{
    if (!have_mumps()) skip();
    int negative = 0, positive = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        dt_random_sym(25, 30, 0.0, seed, &p, &v);
        int64_t nnz = sla_pattern_nnz(p);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        double *d = dt_dense(&A, 0), rs, rl;
        dt_dense_logdet(d, 25, &rs, &rl);
        negative += rs < 0;
        positive += rs > 0;
        free(d);
        /* batch 2: the second element is −A (det sign flips for odd n) */
        double *vb = dt_alloc(2 * nnz);
        for (int64_t q = 0; q < nnz; q++) { vb[q] = v[q]; vb[nnz + q] = -v[q]; }
        dt_check_logdet_grad_dense(p, vb, 2, SLA_METHOD_LDLT, (sla_ordering)(seed % SLA_ORDERING_COUNT), 1);
        free(v); free(vb);
        sla_pattern_free(&p);
    }
    assert_true(negative > 0 && positive > 0);    /* both signs were exercised */
    sla_pattern *p = NULL;
    double *v = NULL;
    kkt(30, 5, &p, &v);
    dt_check_logdet_grad_dense(p, v, 1, SLA_METHOD_LDLT, SLA_ORDERING_AUTO, 1);
    dt_check_logdet_grad_dense(p, v, 1, SLA_METHOD_LDLT, SLA_ORDERING_METIS, 1);
    free(v);
    sla_pattern_free(&p);
}

static void logdet_grad_hangglider(void **state)
{
    if (!have_mumps() || !tu_have_matrices()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load("hangGlider_2.mtx", &p, &v);
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    int64_t cols[] = {0, 7, n / 2, n - 2, n - 1};
    dt_check_logdet_grad_columns(s, p, cols, 5, "hangGlider_2");
    sla_solver_free(&s);
    free(v);
    sla_pattern_free(&p);
}

static void singular_matrices(void **state)
{
    if (!have_mumps()) skip();
    /* [[1, 1], [1, 1]]: numerically singular */
    int64_t r[] = {0, 0, 1, 1}, c[] = {0, 1, 0, 1};
    double v[] = {1, 1, 1, 1}, b[2] = {1, 2}, x[2], sg, ld, dv[4];
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(2, 2, 4, r, c, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    assert_true(sg == 0 && ld == -INFINITY);
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ESINGULAR);
    assert_non_null(strstr(sla_last_error(), "null pivot at column"));
    assert_int_equal(sla_solver_logdet_grad(s, NULL, dv), SLA_ESINGULAR);
    /* refactor to a regular matrix: solves work again */
    double w[] = {2, 1, 1, 2};
    TU_OK(sla_solver_refactor(s, w));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    TU_CLOSE(x[0], 0, 1e-15);
    TU_CLOSE(x[1], 1, 1e-15);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    /* structurally singular: row and column 2 empty, named in the message */
    int64_t r3[] = {0, 1, 1, 3}, c3[] = {0, 1, 3, 1};
    double v3[] = {2, 0, 1, 1}, b4[4] = {1, 1, 1, 1}, x4[4];
    TU_OK(sla_pattern_from_coo(4, 4, 4, r3, c3, &p));
    double csr[4];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v3, csr));
    A = sla_matrix_view(p, SLA_FLOAT64, 1, csr);
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    assert_true(sg == 0 && ld == -INFINITY);
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b4, x4, NULL), SLA_ESINGULAR);
    assert_non_null(strstr(sla_last_error(), "column 2 "));
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

/* No stored entry: n = 0 is regular (det 1, as every method), n × n is the zero matrix (sign 0,
 * −inf, solves SLA_ESINGULAR naming column 0). MUMPS rejects both (INFOG(1) = −16, −2), so
 * the backend must not hand them to it; batches, refactor and method auto included. */
static void empty_and_zero_matrices(void **state)
{
    if (!have_mumps()) skip();
    for (int64_t n = 0; n <= 3; n += 3)
        for (int64_t batch = 1; batch <= 2; batch++) {
            sla_pattern *p = NULL;
            TU_OK(sla_pattern_from_coo(n, n, 0, NULL, NULL, &p));
            sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, batch, NULL);
            const sla_method ms[] = {SLA_METHOD_LDLT, SLA_METHOD_AUTO, SLA_METHOD_LU};
            for (int q = 0; q < 3; q++) {
                sla_solver_options o = dt_opts(ms[q], SLA_ORDERING_AUTO);
                sla_solver *s = NULL;
                TU_OK(sla_solver_create(&A, &o, &s));
                if (ms[q] == SLA_METHOD_LDLT)
                    assert_non_null(strstr(sla_solver_describe(s), "ldlt (MUMPS"));
                double sg[2] = {9, 9}, ld[2] = {9, 9}, b[6] = {1, 1, 1, 1, 1, 1}, x[6];
                TU_OK(sla_solver_logdet(s, sg, ld));
                for (int64_t e = 0; e < batch; e++) {
                    if (n == 0) assert_true(sg[e] == 1 && ld[e] == 0);
                    else assert_true(sg[e] == 0 && ld[e] == -INFINITY);
                }
                sla_status st = sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL);
                if (n == 0) {
                    TU_OK(st);
                    TU_OK(sla_solver_logdet_grad(s, NULL, NULL));
                } else {
                    assert_int_equal(st, SLA_ESINGULAR);
                    if (!strstr(sla_last_error(), "column 0"))
                        fail_msg("%s: '%s' names no column", sla_method_name(ms[q]), sla_last_error());
                    assert_int_equal(sla_solver_logdet_grad(s, NULL, NULL), SLA_ESINGULAR);
                }
                TU_OK(sla_solver_refactor(s, NULL));
                TU_OK(sla_solver_logdet(s, sg, ld));
                assert_true(sg[0] == (n == 0 ? 1 : 0));
                sla_solver_free(&s);
            }
            double lnz = -1, fl = -1;
            TU_OK(sla_mumps_analyze_cost(&A, SLA_ORDERING_AUTO, &lnz, &fl));
            assert_true(lnz == 0 && fl == 0);
            sla_pattern_free(&p);
        }
}

static void tiny_and_structured(void **state)
{
    if (!have_mumps()) skip();
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    /* 1 × 1 negative */
    int64_t z = 0;
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(1, 1, 1, &z, &z, &p));
    double a = -2, b = 1, x, sg, ld, dv;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, &a);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, &b, &x, NULL));
    TU_CLOSE(x, -0.5, 1e-16);
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    assert_true(sg == -1);
    TU_CLOSE(ld, log(2.0), 1e-16);
    TU_OK(sla_solver_logdet_grad(s, NULL, &dv));
    TU_CLOSE(dv, -0.5, 1e-16);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    /* symmetric permutation: swaps (0 1) (2 3) (4 5) and fixed 6: det = (−1)^3 */
    int64_t r[] = {0, 1, 2, 3, 4, 5, 6}, c[] = {1, 0, 3, 2, 5, 4, 6};
    double one[7] = {1, 1, 1, 1, 1, 1, 1}, bb[7] = {1, 2, 3, 4, 5, 6, 7}, xx[7], dd[7];
    TU_OK(sla_pattern_from_coo(7, 7, 7, r, c, &p));
    A = sla_matrix_view(p, SLA_FLOAT64, 1, one);
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, bb, xx, NULL));
    for (int i = 0; i < 7; i++) TU_CLOSE(xx[i], bb[c[i]], 1e-15);
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    assert_true(sg == -1);
    TU_CLOSE(ld, 0, 1e-15);
    TU_OK(sla_solver_logdet_grad(s, NULL, dd));
    for (int i = 0; i < 7; i++) TU_CLOSE(dd[i], 1, 1e-15);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    /* the symbolic cost of a tridiagonal: no fill */
    double *tv = NULL, lnz = 0, fl = 0;
    dt_random_sym(50, 0, 3.0, 2, &p, &tv);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, tv);
    TU_OK(sla_mumps_analyze_cost(&A, SLA_ORDERING_AMD, &lnz, &fl));
    assert_true(lnz >= 2 * 50 - 1 && lnz <= 3 * 50);
    assert_true(fl > 0);
    free(tv);
    sla_pattern_free(&p);
}

static void auto_ordering_rule(void **state)
{
    if (!have_mumps()) skip();
    dt_check_auto_ordering(SLA_METHOD_LDLT);
}

static void bad_input(void **state)
{
    if (!have_mumps()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    kkt(8, 1, &p, &v);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    v[3] = NAN;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "slot 3"));
    v[3] = 0.5;      /* breaks symmetry of that pair */
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not symmetric"));
    free(v);
    sla_pattern_free(&p);
}

static void allocation_failures(void **state)
{
    if (!have_mumps()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    kkt(10, 2, &p, &v);
    dt_check_allocation_failures(p, v, SLA_METHOD_LDLT, SLA_ORDERING_METIS);
    free(v);
    sla_pattern_free(&p);
}

/* allocations of one sla_solver_solve without info: none when X comes from the condition
 * estimate (sla_solver_create_for), the right-hand side block otherwise */
static int64_t solve_allocations(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X)
{
    sla_test_fail_alloc_after(-1);
    TU_OK(sla_solver_solve(s, op, nrhs, B, X, NULL));
    return sla_test_fail_alloc_after(-1);
}

/* sla_solver_create_for / refactor_for on the real ldlt: a batch of 2 KKT matrices, 2 columns,
 * float64 and float32; the told B solved with the estimate (no allocation at the solve) to the
 * plain solve's accuracy, once; op C is T for real dtypes */
static void first_rhs(void **state)
{
    if (!have_mumps()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    kkt(40, 5, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 2, tot = 2 * n * k;
    double *vb = dt_alloc(2 * nnz), *b = dt_alloc(tot), *bc = dt_alloc(tot), *x = dt_alloc(tot),
           *ref = dt_alloc(tot);
    for (int64_t q = 0; q < nnz; q++) { vb[q] = v[q]; vb[nnz + q] = 1.5 * v[q]; }
    tu_fill_random(b, tot, 8);
    memcpy(bc, b, (size_t)tot * sizeof *bc);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, vb);
    sla_solver_options o = ldlt_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_true(solve_allocations(s, SLA_OP_N, k, b, ref) > 0);
    sla_solver_free(&s);
    TU_OK(sla_solver_create_for(&A, &o, SLA_OP_C, k, b, &s));
    assert_int_equal(solve_allocations(s, SLA_OP_N, k, bc, x), 0);
    assert_true(dt_scaled_residual(&A, SLA_OP_N, k, b, x) <= 1e-13);
    for (int64_t i = 0; i < tot; i++) TU_CLOSE(x[i], ref[i], 1e-10);
    assert_true(solve_allocations(s, SLA_OP_N, k, bc, x) > 0);
    TU_OK(sla_solver_refactor_for(s, vb, SLA_OP_T, k, b));
    bc[3] = -bc[3];                                   /* another B: solved as given */
    assert_true(solve_allocations(s, SLA_OP_T, k, bc, x) > 0);
    assert_true(dt_scaled_residual(&A, SLA_OP_T, k, bc, x) <= 1e-13);
    sla_solver_free(&s);
    /* float32 */
    float *vf = malloc(sizeof(float) * (size_t)(2 * nnz)), *bf = malloc(sizeof(float) * (size_t)tot),
          *xf = malloc(sizeof(float) * (size_t)tot), *rf = malloc(sizeof(float) * (size_t)tot);
    for (int64_t q = 0; q < 2 * nnz; q++) vf[q] = (float)vb[q];
    for (int64_t i = 0; i < tot; i++) bf[i] = (float)b[i];
    sla_matrix Af = sla_matrix_view(p, SLA_FLOAT32, 2, vf);
    TU_OK(sla_solver_create(&Af, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, bf, rf, NULL));
    sla_solver_free(&s);
    TU_OK(sla_solver_create_for(&Af, &o, SLA_OP_N, k, bf, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, bf, xf, &info));
    assert_true(info.relative_residual <= 1e-5);
    for (int64_t i = 0; i < tot; i++) TU_CLOSE(xf[i], rf[i], 1e-5);
    sla_solver_free(&s);
    free(vf); free(bf); free(xf); free(rf);
    free(vb); free(b); free(bc); free(x); free(ref); free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unavailable_is_named),
        cmocka_unit_test(hangglider_kkt),
        cmocka_unit_test(spd_matrix_agrees_with_cholesky),
        cmocka_unit_test(batched_parallel_vs_serial),
        cmocka_unit_test(float32_values),
        cmocka_unit_test(refactor_new_values),
        cmocka_unit_test(solve_vjp_dense_and_fd),
        cmocka_unit_test(logdet_and_grad_dense),
        cmocka_unit_test(logdet_grad_hangglider),
        cmocka_unit_test(singular_matrices),
        cmocka_unit_test(empty_and_zero_matrices),
        cmocka_unit_test(tiny_and_structured),
        cmocka_unit_test(auto_ordering_rule),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(first_rhs),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
