/* method = cholesky (CHOLMOD backend): residuals on the shared SPD matrices, batches, float32,
 * refactor, solve VJP against finite differences and a dense reference, log-determinant and its
 * gradient against dense LAPACK, orderings, errors and edge cases. */
#include <stdio.h>

#include "direct_testutil.h"

static sla_solver_options chol_opts(sla_ordering ordering)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CHOLESKY;
    o.ordering = ordering;
    return o;
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
    const char *names[] = {"1138_bus.mtx", "bcsstk13.mtx", "nos6.mtx", "Laplace3D10.mtx"};
    for (int m = 0; m < 4; m++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        tu_load(names[m], &p, &v);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_non_null(strstr(sla_solver_describe(s), "cholesky (CHOLMOD"));
        assert_non_null(strstr(sla_solver_describe(s), "supernodal"));
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
    const char *names[] = {"nos6.mtx", "Laplace3D10.mtx"};
    for (int m = 0; m < 2; m++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        tu_load(names[m], &p, &v);
        int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 2;
        float *vf = malloc(sizeof(float) * (size_t)nnz), *b = malloc(sizeof(float) * (size_t)(n * k)),
              *x = malloc(sizeof(float) * (size_t)(n * k));
        for (int64_t i = 0; i < nnz; i++) vf[i] = (float)v[i];
        uint64_t seed = 3;
        for (int64_t i = 0; i < n * k; i++) b[i] = (float)tu_rand(&seed);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
        sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_non_null(strstr(sla_solver_describe(s), "float32"));
        TU_OK(sla_solver_solve(s, SLA_OP_T, k, b, x, NULL));
        double r = dt_scaled_residual(&A, SLA_OP_T, k, b, x);
        if (!(r <= 1e-6)) fail_msg("%s float32 residual %.3g", names[m], r);
        float dv[1];
        (void)dv;
        sla_solver_free(&s);
        sla_pattern_free(&p);
        free(v); free(vf); free(b); free(x);
    }
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

static double loss_of(const sla_matrix *A, sla_op op, int64_t nrhs, const double *b,
                      const double *w)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(A, &o, &s));
    double *x = dt_alloc(n * nrhs), L = 0;
    TU_OK(sla_solver_solve(s, op, nrhs, b, x, NULL));
    for (int64_t i = 0; i < n * nrhs; i++) L += w[i] * x[i];
    sla_solver_free(&s);
    free(x);
    return L;
}

static void solve_vjp_dense_and_fd(void **state)
{
    int64_t n = 14, k = 2, *row, *col, ncoo;
    sla_pattern *p = NULL;
    double *v, *coo;
    spd_with_duplicates(n, &p, &v, &row, &col, &coo, &ncoo);
    assert_true(sla_pattern_has_duplicates(p));
    int64_t nnz = sla_pattern_nnz(p);
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *dense = dt_dense(&A, 0), *inv = dt_dense_inverse(dense, n);
    double *b = dt_alloc(n * k), *w = dt_alloc(n * k), *x = dt_alloc(n * k), *db = dt_alloc(n * k);
    double *dv = dt_alloc(nnz), *dcoo = dt_alloc(ncoo);
    tu_fill_random(b, n * k, 21);
    tu_fill_random(w, n * k, 22);
    for (int op = 0; op < 2; op++) {
        sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, (sla_op)op, k, b, x, NULL));
        TU_OK(sla_solver_solve_vjp(s, (sla_op)op, k, x, w, db, dv, NULL));
        /* dense reference: λ = op(A)⁻ᵀ W; op N: ∂a_rc = −Σ_j λ_rj x_cj; op T: −Σ_j x_rj λ_cj */
        double *lam = dt_alloc(n * k);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++)
                for (int64_t q = 0; q < n; q++)
                    lam[i * k + j] += (op == SLA_OP_N ? inv[q * n + i] : inv[i * n + q]) * w[q * k + j];
        for (int64_t i = 0; i < n * k; i++) TU_CLOSE(db[i], lam[i], 1e-12);
        for (int64_t q = 0; q < nnz; q++) {
            double ref = 0;
            for (int64_t j = 0; j < k; j++)
                ref -= op == SLA_OP_N ? lam[ri[q] * k + j] * x[ci[q] * k + j]
                                      : x[ri[q] * k + j] * lam[ci[q] * k + j];
            TU_CLOSE(dv[q], ref, 1e-12);
        }
        /* duplicates: each input entry receives its slot's gradient */
        TU_OK(sla_values_scatter(p, SLA_FLOAT64, 1, dv, dcoo));
        const int64_t *map = sla_pattern_map(p);
        for (int64_t e = 0; e < ncoo; e++) assert_true(dcoo[e] == dv[map[e]]);
        assert_true(dcoo[0] == dcoo[1]);      /* the two halves of a_00 */
        /* central differences of L = ⟨W, X⟩ along symmetric perturbations E_rc + E_cr */
        double *vp = dt_alloc(nnz);
        for (int64_t q = 0; q < nnz; q += 3) {
            int64_t mirror = sla_pattern_find(p, ci[q], ri[q]);
            double h = 1e-6 * fabs(v[q]);
            memcpy(vp, v, sizeof(double) * (size_t)nnz);
            vp[q] += h;
            if (mirror != q) vp[mirror] += h;
            sla_matrix Ap = sla_matrix_view(p, SLA_FLOAT64, 1, vp);
            double Lp = loss_of(&Ap, (sla_op)op, k, b, w);
            vp[q] -= 2 * h;
            if (mirror != q) vp[mirror] -= 2 * h;
            double Lm = loss_of(&Ap, (sla_op)op, k, b, w);
            double fd = (Lp - Lm) / (2 * h), an = dv[q] + (mirror != q ? dv[mirror] : 0);
            if (!(fabs(fd - an) <= 1e-6 * fmax(fabs(an), 1e-3)))
                fail_msg("op %d slot %lld: FD %.12g vs VJP %.12g", op, (long long)q, fd, an);
        }
        free(vp); free(lam);
        sla_solver_free(&s);
    }
    free(dense); free(inv); free(b); free(w); free(x); free(db); free(dv); free(dcoo);
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

/* max over slots |dvalues − g·(A⁻ᵀ)[r, c]| relative to max |A⁻¹| for every ordering. */
static void check_logdet_grad_dense(sla_pattern *p, const double *v, int64_t batch,
                                    const double *g, sla_ordering ordering)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, batch, v);
    sla_solver_options o = chol_opts(ordering);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double *dv = dt_alloc(batch * nnz);
    TU_OK(sla_solver_logdet_grad(s, g, dv));
    for (int64_t b = 0; b < batch; b++) {
        double *d = dt_dense(&A, b), *inv = dt_dense_inverse(d, n), imax = 0, err = 0;
        double gb = g ? g[b] : 1;
        for (int64_t i = 0; i < n * n; i++) imax = fmax(imax, fabs(inv[i]));
        for (int64_t q = 0; q < nnz; q++)
            err = fmax(err, fabs(dv[b * nnz + q] - gb * inv[ci[q] * n + ri[q]]));
        if (!(err <= 1e-10 * fabs(gb) * imax))
            fail_msg("ordering %d batch %lld: logdet_grad error %.3g (max |A⁻¹| %.3g)",
                     (int)ordering, (long long)b, err, imax);
        free(d); free(inv);
    }
    sla_solver_free(&s);
    free(dv);
}

static void logdet_grad_dense(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    dt_random_sym(60, 150, 12.0, 8, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = dt_alloc(2 * nnz), g[2] = {2.5, -1.0};
    for (int64_t k = 0; k < nnz; k++) { vb[k] = v[k]; vb[nnz + k] = v[k] * (1 + 0.01 * (double)(k % 5)); }
    for (int o = SLA_ORDERING_AUTO; o < SLA_ORDERING_COUNT; o++) {
        check_logdet_grad_dense(p, v, 1, NULL, (sla_ordering)o);
    }
    /* batch 2 (the second element made symmetric again by scaling mirrored pairs alike) */
    for (int64_t q = 0; q < nnz; q++) {
        int64_t r = sla_pattern_rowind(p)[q], c = sla_pattern_colind(p)[q];
        int64_t lo = sla_pattern_find(p, r > c ? r : c, r > c ? c : r);
        vb[nnz + q] = v[q] * (1 + 0.01 * (double)(lo % 5));
    }
    check_logdet_grad_dense(p, vb, 2, g, SLA_ORDERING_AUTO);
    sla_pattern_free(&p);
    free(v);
    /* 2D Poisson: wide supernodes under METIS */
    tu_poisson2d(15, 13, &p, &v);
    check_logdet_grad_dense(p, v, 1, NULL, SLA_ORDERING_METIS);
    check_logdet_grad_dense(p, v, 1, NULL, SLA_ORDERING_AMD);
    sla_pattern_free(&p);
    free(v);
    free(vb);
}

/* On shared matrices: columns of A⁻¹ from solves against the entries of the gradient. */
static void logdet_grad_shared(void **state)
{
    if (!tu_have_matrices()) skip();
    const char *names[] = {"nos6.mtx", "1138_bus.mtx"};
    for (int m = 0; m < 2; m++) {
        sla_pattern *p = NULL;
        double *v = NULL;
        tu_load(names[m], &p, &v);
        int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
        const int64_t *ri = sla_pattern_rowind(p);
        const int32_t *ci = sla_pattern_colind(p);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver_options o = chol_opts(SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        double *dv = dt_alloc(nnz), *e = dt_alloc(n), *col = dt_alloc(n);
        TU_OK(sla_solver_logdet_grad(s, NULL, dv));
        int64_t cols[] = {0, 1, n / 3, n / 2, n - 1}, checked = 0;
        for (int t = 0; t < 5; t++) {
            int64_t j = cols[t];
            memset(e, 0, sizeof(double) * (size_t)n);
            e[j] = 1;
            TU_OK(sla_solver_solve(s, SLA_OP_N, 1, e, col, NULL));   /* col = A⁻¹ e_j */
            double cmax = 0, err = 0;
            for (int64_t i = 0; i < n; i++) cmax = fmax(cmax, fabs(col[i]));
            for (int64_t q = 0; q < nnz; q++)
                if (ri[q] == j) { err = fmax(err, fabs(dv[q] - col[ci[q]])); checked++; }
            if (!(err <= 1e-10 * cmax)) fail_msg("%s column %lld: error %.3g of %.3g", names[m], (long long)j, err, cmax);
        }
        assert_true(checked >= 5);
        sla_solver_free(&s);
        free(dv); free(e); free(col); free(v);
        sla_pattern_free(&p);
    }
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
    }
    sla_pattern_free(&p);
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
    assert_non_null(strstr(sla_last_error(), "A[1] is not positive definite"));
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
    sla_pattern_free(&p);
    sla_pattern_free(&p2);
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
        check_logdet_grad_dense(p, vals, 1, NULL, (sla_ordering)o);
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

/* Every allocation of create / solve / logdet_grad failing in turn returns SLA_ENOMEM cleanly
 * (ASan checks that nothing leaks). */
static void allocation_failures(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(5, 4, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = dt_alloc(2 * nnz), b[40], x[40], *dv = dt_alloc(2 * nnz);
    memcpy(vb, v, sizeof(double) * (size_t)nnz);
    memcpy(vb + nnz, v, sizeof(double) * (size_t)nnz);
    for (int i = 0; i < 40; i++) b[i] = 1;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, vb);
    sla_solver_options opt = chol_opts(SLA_ORDERING_AUTO);
    int done = 0;
    for (int64_t k = 0; k < 200 && !done; k++) {
        sla_solver *s = NULL;
        sla_test_fail_alloc_after(k);
        sla_status st = sla_solver_create(&A, &opt, &s);
        if (st == SLA_OK) st = sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL);
        if (st == SLA_OK) st = sla_solver_logdet_grad(s, NULL, dv);
        sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) done = 1;
        else assert_int_equal(st, SLA_ENOMEM);
        sla_solver_free(&s);
    }
    assert_true(done);
    free(v); free(vb); free(dv);
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
        cmocka_unit_test(orderings_and_cost),
        cmocka_unit_test(empty_matrix),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
