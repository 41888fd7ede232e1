/* method = cholesky (CHOLMOD backend): residuals on the shared SPD matrices, batches, float32,
 * refactor, solve VJP against finite differences and a dense reference, log-determinant and its
 * gradient against dense LAPACK, orderings, errors and edge cases. */
#include <stdio.h>

#include "direct_testutil.h"

static sla_solver_options chol_opts(sla_ordering ordering)
{
    return dt_opts(SLA_METHOD_CHOLESKY, ordering);
}

/* Solves op(A) X = B for random B (nrhs columns) and returns the scaled residual. */
static double solve_residual(sla_solver *s, const sla_matrix *A, sla_op op, int64_t nrhs,
                             uint64_t seed)
{
    int64_t tot = A->batch * sla_pattern_nrows(A->pattern) * nrhs;
    double *b = dt_alloc(tot), *x = dt_alloc(tot);
    tu_fill_random(b, tot, seed);
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, op, nrhs, b, x, &info));
    assert_int_equal(info.method, SLA_METHOD_CHOLESKY);
    assert_true(info.converged);
    double r = dt_scaled_residual(A, op, nrhs, b, x);
    free(b); free(x);
    return r;
}

static void shared_spd_matrices(void **state)
{
    if (!tu_have_matrices()) skip();
    /* flops/nnz(L) < SLA_SNODE_OWN_MIN_DENSITY = 20: CHOLMOD simplicial (1138_bus 3.4, nos6
     * 13); denser factors within SLA_SNODE_OWN_MAX_FLOPS: supernodal with the own kernels
     * (bcsstk13 208, Laplace3D10 72) */
    const char *names[] = {"1138_bus.mtx", "bcsstk13.mtx", "nos6.mtx", "Laplace3D10.mtx"};
    const char *form[] = {"simplicial", "own numeric kernels", "simplicial",
                          "own numeric kernels"};
    for (int m = 0; m < 4; m++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        tu_load(names[m], &p, &v);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_non_null(strstr(sla_solver_describe(s), "cholesky (CHOLMOD"));
        assert_non_null(strstr(sla_solver_describe(s), form[m]));
        assert_non_null(strstr(sla_solver_describe(s), "nnz(L)"));
        for (int op = 0; op < 2; op++)
            for (int64_t nrhs = 1; nrhs <= 3; nrhs += 2) {
                double r = solve_residual(s, &A, (sla_op)op, nrhs, 11 + (uint64_t)m);
                if (!(r <= 1e-12)) fail_msg("%s op %d nrhs %lld: residual %.3g", names[m], op, (long long)nrhs, r);
            }
        sla_solver_free(&s);
        sla_pattern_free(&p);
        free(v);
    }
}

/* values_b = (1 + b/2)·A + 0.1·b·I on the pattern of nos6, batch 3. */
static double *scaled_batch(const sla_pattern *p, const double *v, int64_t batch)
{
    int64_t nnz = sla_pattern_nnz(p), n = sla_pattern_nrows(p);
    double *vb = dt_alloc(batch * nnz);
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t k = 0; k < nnz; k++) vb[b * nnz + k] = (1 + 0.5 * (double)b) * v[k];
        for (int64_t i = 0; i < n; i++) vb[b * nnz + sla_pattern_find(p, i, i)] += 0.1 * (double)b;
    }
    return vb;
}

static void batched_values(void **state)
{
    if (!tu_have_matrices()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load("nos6.mtx", &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), B = 3, k = 2;
    double *vb = scaled_batch(p, v, B);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, B, vb);
    sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double *b = dt_alloc(B * n * k), *x = dt_alloc(B * n * k), *x2 = dt_alloc(n * k);
    tu_fill_random(b, B * n * k, 5);
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, b, x, NULL));
    assert_true(dt_scaled_residual(&A, SLA_OP_N, k, b, x) <= 1e-12);
    /* element 2 alone gives the same solution and log-determinant */
    sla_matrix A2 = sla_matrix_view(p, SLA_FLOAT64, 1, vb + 2 * nnz);
    sla_solver *s2 = NULL;
    TU_OK(sla_solver_create(&A2, &o, &s2));
    TU_OK(sla_solver_solve(s2, SLA_OP_N, k, b + 2 * n * k, x2, NULL));
    for (int64_t i = 0; i < n * k; i++) TU_CLOSE(x[2 * n * k + i], x2[i], 1e-12);
    double sg[3], ld[3], sg2, ld2;
    TU_OK(sla_solver_logdet(s, sg, ld));
    TU_OK(sla_solver_logdet(s2, &sg2, &ld2));
    TU_CLOSE(ld[2], ld2, 1e-13);
    /* (1 + b/2)·A scales the determinant by (1 + b/2)^n when the shift is 0 (b = 0 only) */
    assert_true(sg[0] == 1 && sg[1] == 1 && sg[2] == 1);
    assert_true(ld[1] > ld[0] && ld[2] > ld[1]);
    sla_solver_free(&s);
    sla_solver_free(&s2);
    free(b); free(x); free(x2); free(vb); free(v);
    sla_pattern_free(&p);
}

static void float32_values(void **state)
{
    if (!tu_have_matrices()) skip();
    dt_check_float32("nos6.mtx", SLA_METHOD_CHOLESKY, SLA_OP_T);
    dt_check_float32("Laplace3D10.mtx", SLA_METHOD_CHOLESKY, SLA_OP_N);
}

static void refactor_new_values(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(20, 20, &p, &v);
    int64_t n = 400, nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double *b = dt_alloc(n), *x1 = dt_alloc(n), *x2 = dt_alloc(n), *w = dt_alloc(nnz);
    tu_fill_random(b, n, 9);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x1, NULL));
    for (int64_t k = 0; k < nnz; k++) w[k] = 2 * v[k];
    for (int64_t i = 0; i < n; i++) w[sla_pattern_find(p, i, i)] += 1.0 + (double)(i % 7);
    TU_OK(sla_solver_refactor(s, w));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, NULL));
    sla_matrix W = sla_matrix_view(p, SLA_FLOAT64, 1, w);
    assert_true(dt_scaled_residual(&W, SLA_OP_N, 1, b, x2) <= 1e-13);
    assert_true(fabs(x1[0] - x2[0]) > 1e-3 * fabs(x1[0]));
    /* unsymmetric new values are refused before any numeric work: the old factors stay */
    double *u = dt_alloc(nnz), *x3 = dt_alloc(n);
    for (int64_t k = 0; k < nnz; k++) u[k] = v[k];
    u[sla_pattern_find(p, 0, 1)] = -1.5;
    assert_int_equal(sla_solver_refactor(s, u), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not symmetric"));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x3, NULL));
    for (int64_t i = 0; i < n; i++) assert_true(x3[i] == x2[i]);
    free(u); free(x3);
    /* a failed refactor leaves no factorization until the next good one */
    for (int64_t k = 0; k < nnz; k++) w[k] = -v[k];
    assert_int_equal(sla_solver_refactor(s, w), SLA_ENOTSPD);
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x2, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "refactor failed"));
    TU_OK(sla_solver_refactor(s, v));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x2, NULL));
    for (int64_t i = 0; i < n; i++) TU_CLOSE(x2[i], x1[i], 1e-13);
    sla_solver_free(&s);
    free(b); free(x1); free(x2); free(w); free(v);
    sla_pattern_free(&p);
}

/* Small SPD matrix given as COO with duplicate entries: every (i, j) with i > j of a random
 * pattern is mirrored, and some entries are split into two duplicates. */
static void spd_with_duplicates(int64_t n, sla_pattern **p, double **csr, int64_t **row,
                                int64_t **col, double **coo, int64_t *ncoo)
{
    uint64_t seed = 77;
    int64_t cap = 8 * n + 8, m = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = dt_alloc(cap);
    for (int64_t i = 0; i < n; i++) {
        /* diagonal given as two duplicates summing to 6 + rand */
        double d = 6 + tu_rand(&seed);
        r[m] = i; c[m] = i; v[m++] = 0.25 * d;
        r[m] = i; c[m] = i; v[m++] = 0.75 * d;
        int64_t j = (i * 7 + 3) % n;
        if (j != i) {
            double a = tu_rand(&seed);
            r[m] = i; c[m] = j; v[m++] = a;
            r[m] = j; c[m] = i; v[m++] = a;
        }
        if (i > 0) {
            double a = tu_rand(&seed);
            r[m] = i; c[m] = i - 1; v[m++] = a;
            r[m] = i - 1; c[m] = i; v[m++] = a;
        }
    }
    TU_OK(sla_pattern_from_coo(n, n, m, r, c, p));
    *csr = dt_alloc(sla_pattern_nnz(*p));
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *csr));
    *row = r; *col = c; *coo = v; *ncoo = m;
}

static void solve_vjp_dense_and_fd(void **state)
{
    int64_t n = 14, *row, *col, ncoo;
    sla_pattern *p = NULL;
    double *v, *coo;
    spd_with_duplicates(n, &p, &v, &row, &col, &coo, &ncoo);
    assert_true(sla_pattern_has_duplicates(p));
    dt_check_solve_vjp(p, v, SLA_METHOD_CHOLESKY, 2, 1e-12, 3);
    free(v); free(row); free(col); free(coo);
    sla_pattern_free(&p);
}

static void logdet_dense(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    dt_random_sym(30, 40, 8.0, 4, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = dt_alloc(2 * nnz);
    for (int64_t k = 0; k < nnz; k++) { vb[k] = v[k]; vb[nnz + k] = 1e-3 * v[k]; }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, vb);
    sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double sg[2], ld[2];
    TU_OK(sla_solver_logdet(s, sg, ld));
    for (int64_t b = 0; b < 2; b++) {
        double *d = dt_dense(&A, b), rs, rl;
        dt_dense_logdet(d, 30, &rs, &rl);
        assert_true(sg[b] == rs && rs == 1);
        TU_CLOSE(ld[b], rl, 1e-12);
        free(d);
    }
    TU_CLOSE(ld[1], ld[0] + 30 * log(1e-3), 1e-12);
    sla_solver_free(&s);
    free(v); free(vb);
    sla_pattern_free(&p);
}

static void logdet_grad_dense(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    dt_random_sym(60, 150, 12.0, 8, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = dt_alloc(2 * nnz);
    for (int64_t k = 0; k < nnz; k++) { vb[k] = v[k]; vb[nnz + k] = v[k] * (1 + 0.01 * (double)(k % 5)); }
    for (int o = SLA_ORDERING_AUTO; o < SLA_ORDERING_COUNT; o++) {
        dt_check_logdet_grad_dense(p, v, 1, SLA_METHOD_CHOLESKY, (sla_ordering)o, 1);
    }
    /* batch 2 (the second element made symmetric again by scaling mirrored pairs alike) */
    for (int64_t q = 0; q < nnz; q++) {
        int64_t r = sla_pattern_rowind(p)[q], c = sla_pattern_colind(p)[q];
        int64_t lo = sla_pattern_find(p, r > c ? r : c, r > c ? c : r);
        vb[nnz + q] = v[q] * (1 + 0.01 * (double)(lo % 5));
    }
    dt_check_logdet_grad_dense(p, vb, 2, SLA_METHOD_CHOLESKY, SLA_ORDERING_AUTO, 1);
    sla_pattern_free(&p);
    free(v);
    /* 2D Poisson (simplicial factor) */
    tu_poisson2d(15, 13, &p, &v);
    dt_check_logdet_grad_dense(p, v, 1, SLA_METHOD_CHOLESKY, SLA_ORDERING_METIS, 1);
    dt_check_logdet_grad_dense(p, v, 1, SLA_METHOD_CHOLESKY, SLA_ORDERING_AMD, 1);
    sla_pattern_free(&p);
    free(v);
    free(vb);
    /* a dense 90 × 90 SPD matrix: supernodal (flops/nnz(L) ≈ 60), batch 2, every ordering */
    int64_t n = 90;
    double *dense = dt_alloc(2 * n * n);
    uint64_t seed = 3;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            double a = i == j ? n : tu_rand(&seed);
            dense[i * n + j] = dense[j * n + i] = a;
            dense[n * n + i * n + j] = dense[n * n + j * n + i] = a * (i == j ? 1.5 : 1.0);
        }
    TU_OK(sla_matrix_from_dense(n, n, SLA_FLOAT64, 2, dense, -1, &p, (void **)&v));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, v);
    sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_non_null(strstr(sla_solver_describe(s), "supernodal"));
    sla_solver_free(&s);
    for (int o2 = SLA_ORDERING_AUTO; o2 < SLA_ORDERING_COUNT; o2++)
        dt_check_logdet_grad_dense(p, v, 2, SLA_METHOD_CHOLESKY, (sla_ordering)o2, 1);
    sla_pattern_free(&p);
    free(v);
    free(dense);
}

/* On shared matrices: columns of A⁻¹ from solves against the entries of the gradient. */
static void logdet_grad_shared(void **state)
{
    if (!tu_have_matrices()) skip();
    const char *names[] = {"nos6.mtx", "1138_bus.mtx", "bcsstk13.mtx"};   /* the last supernodal */
    for (int m = 0; m < 3; m++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        tu_load(names[m], &p, &v);
        int64_t n = sla_pattern_nrows(p);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        int64_t cols[] = {0, 1, n / 3, n / 2, n - 1};
        dt_check_logdet_grad_columns(s, p, cols, 5, names[m]);
        sla_solver_free(&s);
        free(v);
        sla_pattern_free(&p);
    }
}

/* sla_solver_create with cholesky on the n × n COO matrix fails with SLA_ENOTSPD saying `text`. */
static void expect_not_spd(int64_t n, int64_t nnz, const int64_t *r, const int64_t *c,
                           const double *v, const char *text)
{
    sla_pattern *p = NULL;
    double csr[8];
    TU_OK(sla_pattern_from_coo(n, n, nnz, r, c, &p));
    if (nnz) TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, csr));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, nnz ? csr : NULL);
    sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = (sla_solver *)0x1;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_ENOTSPD);
    assert_null(s);
    if (!strstr(sla_last_error(), text)) fail_msg("'%s' lacks '%s'", sla_last_error(), text);
    sla_pattern_free(&p);
}

static void not_spd_names_column(void **state)
{
    /* diag(1, 2, −3, 4) */
    int64_t r[] = {0, 1, 2, 3};
    double d[] = {1, 2, -3, 4};
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(4, 4, 4, r, r, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, d);
    for (int o = SLA_ORDERING_AUTO; o < SLA_ORDERING_COUNT; o++) {
        sla_solver_options opt = chol_opts((sla_ordering)o);
        sla_solver *s = (sla_solver *)0x1;
        assert_int_equal(sla_solver_create(&A, &opt, &s), SLA_ENOTSPD);
        assert_null(s);
        assert_non_null(strstr(sla_last_error(), "column 2 "));
        assert_non_null(strstr(sla_last_error(), "A[0]"));
        assert_non_null(strstr(sla_last_error(), "diagonal entry a(2,2) = -3 "));
    }
    sla_pattern_free(&p);
    /* structurally singular: row and column 1 empty; the zero matrix (no entries); a stored
     * zero row: each names the column and says why */
    int64_t r2[] = {0, 2, 0, 2}, c2[] = {0, 2, 2, 0};
    double v2[] = {2, 3, 1, 1}, zeros[3] = {0, 0, 0};
    expect_not_spd(3, 4, r2, c2, v2, "row and column 1 of A are zero (A is singular");
    expect_not_spd(3, 0, NULL, NULL, NULL, "row and column 0 of A are zero");
    expect_not_spd(3, 3, r, r, zeros, "of A are zero");
    /* 2D Poisson with a negative diagonal at 17, second batch element only */
    double *v = NULL;
    tu_poisson2d(6, 6, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = dt_alloc(2 * nnz);
    memcpy(vb, v, sizeof(double) * (size_t)nnz);
    memcpy(vb + nnz, v, sizeof(double) * (size_t)nnz);
    vb[nnz + sla_pattern_find(p, 17, 17)] = -4;
    A = sla_matrix_view(p, SLA_FLOAT64, 2, vb);
    sla_solver_options opt = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, &opt, &s), SLA_ENOTSPD);
    assert_non_null(strstr(sla_last_error(), "A[1]: "));
    assert_non_null(strstr(sla_last_error(), "not positive definite"));
    assert_non_null(strstr(sla_last_error(), "column 17 "));
    free(v); free(vb);
    sla_pattern_free(&p);
}

static void unsymmetric_rejected(void **state)
{
    int64_t r[] = {0, 0, 1, 1}, c[] = {0, 1, 0, 1};
    double v[] = {4, 1, 1.5, 4};
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(2, 2, 4, r, c, &p));
    double csr[4];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, csr));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, csr);
    sla_solver_options opt = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, &opt, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not symmetric"));
    assert_non_null(strstr(sla_last_error(), "a(0,1) = 1"));
    /* an entry whose mirror is missing must be zero */
    int64_t r2[] = {0, 0, 1}, c2[] = {0, 1, 1};
    double v2[] = {4, 0, 4}, x[2], b[2] = {8, 4};
    sla_pattern *p2 = NULL;
    TU_OK(sla_pattern_from_coo(2, 2, 3, r2, c2, &p2));
    A = sla_matrix_view(p2, SLA_FLOAT64, 1, v2);
    TU_OK(sla_solver_create(&A, &opt, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    TU_CLOSE(x[0], 2, 1e-15);
    TU_CLOSE(x[1], 1, 1e-15);
    double dv[3];
    TU_OK(sla_solver_logdet_grad(s, NULL, dv));
    TU_CLOSE(dv[0], 0.25, 1e-15);
    TU_CLOSE(dv[1], 0, 1e-15);
    TU_CLOSE(dv[2], 0.25, 1e-15);
    sla_solver_free(&s);
    v2[1] = 1e-3;
    assert_int_equal(sla_solver_create(&A, &opt, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "a(0,1) = 0.001 but a(1,0) = 0"));
    /* a lower entry without mirror: (1, 0) stored, (0, 1) not */
    int64_t r3[] = {0, 1, 1}, c3[] = {0, 0, 1};
    double v3[] = {4, 0, 2};
    sla_pattern *p3 = NULL;
    TU_OK(sla_pattern_from_coo(2, 2, 3, r3, c3, &p3));
    A = sla_matrix_view(p3, SLA_FLOAT64, 1, v3);
    TU_OK(sla_solver_create(&A, &opt, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    TU_CLOSE(x[0], 2, 1e-15);
    TU_CLOSE(x[1], 2, 1e-15);
    sla_solver_free(&s);
    v3[1] = -0.5;
    assert_int_equal(sla_solver_create(&A, &opt, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "a(1,0) = -0.5 but a(0,1) = 0"));
    sla_pattern_free(&p);
    sla_pattern_free(&p2);
    sla_pattern_free(&p3);
}

static void nonfinite_rejected(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(4, 4, &p, &v);
    v[5] = NAN;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options opt = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, &opt, &s), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "slot 5"));
    v[5] = -1;   /* slot 5 of the 4×4 grid Laplacian is an off-diagonal −1 */
    TU_OK(sla_solver_create(&A, &opt, &s));
    double b[16] = {0}, x[16];
    b[3] = INFINITY;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "B[0][3][0]"));
    double w[80];
    memcpy(w, v, sizeof(double) * (size_t)sla_pattern_nnz(p));
    w[0] = NAN;
    assert_int_equal(sla_solver_refactor(s, w), SLA_ENONFINITE);
    b[3] = 1;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));   /* old factorization kept */
    sla_solver_free(&s);
    free(v);
    sla_pattern_free(&p);
}

/* The two numeric paths of the backend: a factor within SLA_SNODE_OWN_MAX_FLOPS (2D grid) runs
 * the own supernodal kernels, a larger one (3D 25³ grid, METIS, ~10⁹ flops) CHOLMOD's; both
 * solve to a residual at rounding level for op N and T, one and three right-hand sides. */
static void own_kernels_and_cholmod(void **state)
{
    int64_t dims2[2] = {45, 38}, dims3[3] = {25, 25, 25};
    double lo[3] = {-1, -1.2, -0.8}, up[3] = {-1, -1.2, -0.8};
    for (int c = 0; c < 2; c++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        TU_OK(sla_gallery_grid(c ? 3 : 2, c ? dims3 : dims2, c ? 6.1 : 4.5, lo, up, &p, &v));
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        const char *d = sla_solver_describe(s);
        if (c) assert_null(strstr(d, "own numeric kernels"));
        else assert_non_null(strstr(d, "own numeric kernels"));
        for (int op = 0; op < 2; op++)
            for (int64_t nrhs = 1; nrhs <= 3; nrhs += 2) {
                double r = solve_residual(s, &A, (sla_op)op, nrhs, 31 + (uint64_t)c);
                if (!(r <= 1e-13)) fail_msg("grid %d op %d nrhs %lld: residual %.3g", c, op, (long long)nrhs, r);
            }
        sla_solver_free(&s);
        sla_pattern_free(&p);
        free(v);
    }
}

static void tiny_and_structured(void **state)
{
    sla_solver_options opt = chol_opts(SLA_ORDERING_AUTO);
    /* 1 × 1 */
    int64_t z = 0;
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(1, 1, 1, &z, &z, &p));
    double a = 4, b = 2, x = 0, sg, ld, dv;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, &a);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &opt, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_T, 1, &b, &x, NULL));
    TU_CLOSE(x, 0.5, 1e-16);
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    TU_CLOSE(ld, log(4.0), 1e-16);
    TU_OK(sla_solver_logdet_grad(s, NULL, &dv));
    TU_CLOSE(dv, 0.25, 1e-16);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    /* diagonal */
    int64_t idx[5] = {0, 1, 2, 3, 4};
    double d[5] = {1, 2, 3, 4, 5}, bb[5] = {1, 1, 1, 1, 1}, xx[5], dd[5];
    TU_OK(sla_pattern_from_coo(5, 5, 5, idx, idx, &p));
    A = sla_matrix_view(p, SLA_FLOAT64, 1, d);
    TU_OK(sla_solver_create(&A, &opt, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, bb, xx, NULL));
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    TU_OK(sla_solver_logdet_grad(s, NULL, dd));
    for (int i = 0; i < 5; i++) { TU_CLOSE(xx[i], 1.0 / d[i], 1e-15); TU_CLOSE(dd[i], 1.0 / d[i], 1e-15); }
    TU_CLOSE(ld, log(120.0), 1e-15);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    /* symmetrically permuted tridiagonal (random permutation), every ordering */
    int64_t n = 50, perm[50], ri[99], ci[99];
    double tv[99];
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    uint64_t seed = 13;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)((tu_rand(&seed) + 1) / 2 * (double)(i + 1)) % (i + 1), t = perm[i];
        perm[i] = perm[j]; perm[j] = t;
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        ri[m] = perm[i]; ci[m] = perm[i]; tv[m++] = 2.5;
        if (i > 0) { ri[m] = perm[i] > perm[i - 1] ? perm[i] : perm[i - 1]; ci[m] = perm[i] > perm[i - 1] ? perm[i - 1] : perm[i]; tv[m++] = -1; }
    }
    double *vals = NULL;
    dt_sym_from_lower(n, m, ri, ci, tv, &p, &vals);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, vals);
    for (int o = SLA_ORDERING_AUTO; o < SLA_ORDERING_COUNT; o++) {
        sla_solver_options oo = chol_opts((sla_ordering)o);
        TU_OK(sla_solver_create(&A, &oo, &s));
        assert_true(solve_residual(s, &A, SLA_OP_N, 2, 3) <= 1e-14);
        sla_solver_free(&s);
        dt_check_logdet_grad_dense(p, vals, 1, SLA_METHOD_CHOLESKY, (sla_ordering)o, 1);
    }
    /* a tridiagonal has nnz(L) = 2n − 1 under AMD (no fill) */
    double lnz = 0, fl = 0;
    TU_OK(sla_cholmod_analyze_cost(&A, SLA_ORDERING_AMD, &lnz, &fl));
    assert_true(lnz == 2 * n - 1);
    assert_true(fl > 0);
    free(vals);
    sla_pattern_free(&p);
}

static void orderings_and_cost(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(40, 40, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    const char *label[] = {"", "natural", "AMD", "METIS"};
    double lnz[SLA_ORDERING_COUNT], fl[SLA_ORDERING_COUNT];
    for (int o = SLA_ORDERING_AUTO; o < SLA_ORDERING_COUNT; o++) {
        sla_solver_options opt = chol_opts((sla_ordering)o);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &opt, &s));
        if (o != SLA_ORDERING_AUTO) assert_non_null(strstr(sla_solver_describe(s), label[o]));
        assert_true(solve_residual(s, &A, SLA_OP_N, 1, 2) <= 1e-13);
        sla_solver_free(&s);
        TU_OK(sla_cholmod_analyze_cost(&A, (sla_ordering)o, &lnz[o], &fl[o]));
    }
    /* natural ordering of a 40×40 grid: band of width 40 fills completely */
    assert_true(lnz[SLA_ORDERING_NATURAL] > 40 * 1600 * 0.9);
    assert_true(lnz[SLA_ORDERING_AMD] < lnz[SLA_ORDERING_NATURAL] / 2);
    assert_true(lnz[SLA_ORDERING_METIS] < lnz[SLA_ORDERING_NATURAL] / 2);
    assert_true(fl[SLA_ORDERING_AMD] > 0 && fl[SLA_ORDERING_METIS] > 0);
    free(v);
    sla_pattern_free(&p);
}

static void auto_ordering_rule(void **state)
{
    dt_check_auto_ordering(SLA_METHOD_CHOLESKY);
}

static void empty_matrix(void **state)
{
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(0, 0, 0, NULL, NULL, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, NULL);
    sla_solver_options opt = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &opt, &s));
    double sg, ld;
    TU_OK(sla_solver_logdet(s, &sg, &ld));
    assert_true(sg == 1 && ld == 0);
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

static void allocation_failures(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(5, 4, &p, &v);
    dt_check_allocation_failures(p, v, SLA_METHOD_CHOLESKY, SLA_ORDERING_AUTO);
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shared_spd_matrices),
        cmocka_unit_test(batched_values),
        cmocka_unit_test(float32_values),
        cmocka_unit_test(refactor_new_values),
        cmocka_unit_test(solve_vjp_dense_and_fd),
        cmocka_unit_test(logdet_dense),
        cmocka_unit_test(logdet_grad_dense),
        cmocka_unit_test(logdet_grad_shared),
        cmocka_unit_test(not_spd_names_column),
        cmocka_unit_test(unsymmetric_rejected),
        cmocka_unit_test(nonfinite_rejected),
        cmocka_unit_test(tiny_and_structured),
        cmocka_unit_test(own_kernels_and_cholmod),
        cmocka_unit_test(orderings_and_cost),
        cmocka_unit_test(auto_ordering_rule),
        cmocka_unit_test(empty_matrix),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
