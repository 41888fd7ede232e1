/* Dense references and residuals shared by test_cholesky.c and test_ldlt.c (static helpers,
 * header-only so the test glob needs no extra source). LAPACK through lapack.h (Fortran). */
#ifndef SLA_DIRECT_TESTUTIL_H
#define SLA_DIRECT_TESTUTIL_H

#include <lapack.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Private symbolic cost queries (src/direct/direct.h), exported for the tests. */
sla_status sla_cholmod_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                    double *flops);
sla_status sla_mumps_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                  double *flops);

static double *dt_alloc(int64_t n)
{
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    assert_non_null(p);
    return p;
}

/* max over the batch of ‖B − op(A) X‖∞ / (‖A‖∞ ‖X‖∞ + ‖B‖∞), computed in double (float32
 * inputs are widened first). */
static double dt_scaled_residual(const sla_matrix *A, sla_op op, int64_t nrhs, const void *B,
                                 const void *X)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    int64_t tot = A->batch * n * nrhs;
    double *v = dt_alloc(A->batch * nnz), *b = dt_alloc(tot), *x = dt_alloc(tot), *r = dt_alloc(tot);
    for (int64_t k = 0; k < A->batch * nnz; k++)
        v[k] = A->dtype == SLA_FLOAT64 ? ((const double *)A->values)[k] : ((const float *)A->values)[k];
    for (int64_t k = 0; k < tot; k++) {
        b[k] = A->dtype == SLA_FLOAT64 ? ((const double *)B)[k] : ((const float *)B)[k];
        x[k] = A->dtype == SLA_FLOAT64 ? ((const double *)X)[k] : ((const float *)X)[k];
        r[k] = b[k];
    }
    sla_matrix Ad = sla_matrix_view(A->pattern, SLA_FLOAT64, A->batch, v);
    TU_OK(sla_spmv(op, -1.0, &Ad, x, 1, nrhs, 1.0, r));
    double *anorm = dt_alloc(A->batch), worst = 0;
    TU_OK(sla_matrix_norm(&Ad, op == SLA_OP_N ? 'I' : '1', anorm));
    for (int64_t bb = 0; bb < A->batch; bb++) {
        double rn = 0, xn = 0, bn = 0;
        for (int64_t k = bb * n * nrhs; k < (bb + 1) * n * nrhs; k++) {
            rn = fmax(rn, fabs(r[k]));
            xn = fmax(xn, fabs(x[k]));
            bn = fmax(bn, fabs(b[k]));
        }
        worst = fmax(worst, rn / (anorm[bb] * xn + bn));
    }
    free(v); free(b); free(x); free(r); free(anorm);
    return worst;
}

/* Dense copy (row-major n × n, double) of batch element bb of a float64 matrix. */
static double *dt_dense(const sla_matrix *A, int64_t bb)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    double *d = dt_alloc(n * n);
    sla_matrix one = sla_matrix_view(A->pattern, SLA_FLOAT64, 1,
                                     (const double *)A->values + bb * nnz);
    TU_OK(sla_matrix_to_dense(&one, d));
    return d;
}

/* sign and log|det| of a dense n × n matrix by LU with partial pivoting (dgetrf). */
static void dt_dense_logdet(const double *a, int64_t n, double *sign, double *logabsdet)
{
    double *lu = dt_alloc(n * n);
    memcpy(lu, a, sizeof(double) * (size_t)(n * n));
    lapack_int nn = (lapack_int)n, info = 0, *ipiv = calloc((size_t)n + 1, sizeof(lapack_int));
    LAPACK_dgetrf(&nn, &nn, lu, &nn, ipiv, &info);
    assert_true(info >= 0);
    double s = 1, l = 0;
    for (int64_t i = 0; i < n; i++) {
        double u = lu[i * n + i];   /* LU of Aᵀ (row-major seen as column-major): same det */
        if (u == 0) { s = 0; l = -INFINITY; break; }
        if (u < 0) s = -s;
        if (ipiv[i] != i + 1) s = -s;
        l += log(fabs(u));
    }
    *sign = s;
    *logabsdet = l;
    free(lu);
    free(ipiv);
}

/* Dense inverse (row-major n × n) by dgetrf + dgetri. */
static double *dt_dense_inverse(const double *a, int64_t n)
{
    double *inv = dt_alloc(n * n);
    memcpy(inv, a, sizeof(double) * (size_t)(n * n));
    lapack_int nn = (lapack_int)n, info = 0, lwork = (lapack_int)(64 * n);
    lapack_int *ipiv = calloc((size_t)n + 1, sizeof(lapack_int));
    double *work = dt_alloc(64 * n);
    LAPACK_dgetrf(&nn, &nn, inv, &nn, ipiv, &info);
    assert_int_equal(info, 0);
    LAPACK_dgetri(&nn, inv, &nn, ipiv, work, &lwork, &info);
    assert_int_equal(info, 0);
    free(ipiv);
    free(work);
    return inv;   /* column-major (Aᵀ)⁻¹ is row-major A⁻¹ */
}

/* Pattern + CSR values from a symmetric list of lower-triangle COO entries (i ≥ j), mirrored. */
static void dt_sym_from_lower(int64_t n, int64_t m, const int64_t *ri, const int64_t *ci,
                              const double *v, sla_pattern **p, double **values)
{
    int64_t *r = malloc(sizeof(int64_t) * (size_t)(2 * m + 1)), *c = malloc(sizeof(int64_t) * (size_t)(2 * m + 1));
    double *vv = dt_alloc(2 * m);
    int64_t k = 0;
    for (int64_t e = 0; e < m; e++) {
        r[k] = ri[e]; c[k] = ci[e]; vv[k++] = v[e];
        if (ri[e] != ci[e]) { r[k] = ci[e]; c[k] = ri[e]; vv[k++] = v[e]; }
    }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = dt_alloc(sla_pattern_nnz(*p));
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, vv, *values));
    free(r); free(c); free(vv);
}

/* Random sparse symmetric matrix: tridiagonal plus `extra` random off-diagonal pairs, diagonal
 * shifted by `shift` (large shift: SPD by diagonal dominance; zero: indefinite in general). */
static void dt_random_sym(int64_t n, int64_t extra, double shift, uint64_t seed, sla_pattern **p,
                          double **values)
{
    int64_t cap = 2 * n + extra, m = 0;
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)cap), *ci = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = dt_alloc(cap);
    for (int64_t i = 0; i < n; i++) {
        ri[m] = i; ci[m] = i; v[m++] = shift + tu_rand(&seed);
        if (i > 0) { ri[m] = i; ci[m] = i - 1; v[m++] = tu_rand(&seed); }
    }
    for (int64_t e = 0; e < extra; e++) {
        int64_t a = (int64_t)((tu_rand(&seed) + 1) / 2 * (double)n) % n;
        int64_t b = (int64_t)((tu_rand(&seed) + 1) / 2 * (double)n) % n;
        if (a == b) continue;
        ri[m] = a > b ? a : b; ci[m] = a > b ? b : a; v[m++] = tu_rand(&seed);
    }
    dt_sym_from_lower(n, m, ri, ci, v, p, values);
    free(ri); free(ci); free(v);
}

static sla_solver_options dt_opts(sla_method method, sla_ordering ordering)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = method;
    o.ordering = ordering;
    return o;
}

/* L = ⟨W, X⟩ with op(A) X = B, from a fresh solver. */
static double dt_loss(const sla_matrix *A, sla_method method, sla_op op, int64_t nrhs,
                      const double *b, const double *w)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_solver_options o = dt_opts(method, SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(A, &o, &s));
    double *x = dt_alloc(n * nrhs), L = 0;
    TU_OK(sla_solver_solve(s, op, nrhs, b, x, NULL));
    for (int64_t i = 0; i < n * nrhs; i++) L += w[i] * x[i];
    sla_solver_free(&s);
    free(x);
    return L;
}

/* sla_solver_solve_vjp of L = ⟨W, X⟩ (k right-hand sides, op N and T) on the symmetric matrix
 * (p, v): dB and dvalues against the dense reference λ = op(A)⁻ᵀ W, ∂a_rc = −Σ_j λ_rj x_cj (op N)
 * or −Σ_j x_rj λ_cj (op T), relative tolerance tol; every COO input entry (duplicates included)
 * receives its slot's gradient; and central differences of L along symmetric perturbations
 * E_rc + E_cr of every stride-th slot (relative error ≤ 1e-6). */
static void dt_check_solve_vjp(const sla_pattern *p, const double *v, sla_method method,
                               int64_t k, double tol, int64_t stride)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), nin = sla_pattern_nnz_input(p);
    const int64_t *ri = sla_pattern_rowind(p), *map = sla_pattern_map(p);
    const int32_t *ci = sla_pattern_colind(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *dense = dt_dense(&A, 0), *inv = dt_dense_inverse(dense, n);
    double *b = dt_alloc(n * k), *w = dt_alloc(n * k), *x = dt_alloc(n * k), *db = dt_alloc(n * k);
    double *dv = dt_alloc(nnz), *dcoo = dt_alloc(nin), *vp = dt_alloc(nnz), *lam = dt_alloc(n * k);
    tu_fill_random(b, n * k, 21);
    tu_fill_random(w, n * k, 22);
    for (int op = 0; op < 2; op++) {
        sla_solver_options o = dt_opts(method, SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, (sla_op)op, k, b, x, NULL));
        TU_OK(sla_solver_solve_vjp(s, (sla_op)op, k, x, w, db, dv, NULL));
        sla_solver_free(&s);
        memset(lam, 0, sizeof(double) * (size_t)(n * k));
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++)
                for (int64_t q = 0; q < n; q++)
                    lam[i * k + j] += (op == SLA_OP_N ? inv[q * n + i] : inv[i * n + q]) * w[q * k + j];
        for (int64_t i = 0; i < n * k; i++) TU_CLOSE(db[i], lam[i], tol);
        for (int64_t q = 0; q < nnz; q++) {
            double ref = 0;
            for (int64_t j = 0; j < k; j++)
                ref -= op == SLA_OP_N ? lam[ri[q] * k + j] * x[ci[q] * k + j]
                                      : x[ri[q] * k + j] * lam[ci[q] * k + j];
            TU_CLOSE(dv[q], ref, tol);
        }
        TU_OK(sla_values_scatter(p, SLA_FLOAT64, 1, dv, dcoo));
        for (int64_t e = 0; e < nin; e++) assert_true(dcoo[e] == dv[map[e]]);
        for (int64_t q = 0; q < nnz; q += stride) {
            int64_t mirror = sla_pattern_find(p, ci[q], ri[q]);
            double h = 1e-6 * fmax(fabs(v[q]), 1e-2);
            memcpy(vp, v, sizeof(double) * (size_t)nnz);
            vp[q] += h;
            if (mirror != q) vp[mirror] += h;
            sla_matrix Ap = sla_matrix_view(p, SLA_FLOAT64, 1, vp);
            double Lp = dt_loss(&Ap, method, (sla_op)op, k, b, w);
            vp[q] -= 2 * h;
            if (mirror != q) vp[mirror] -= 2 * h;
            double Lm = dt_loss(&Ap, method, (sla_op)op, k, b, w);
            double fd = (Lp - Lm) / (2 * h), an = dv[q] + (mirror != q ? dv[mirror] : 0);
            if (!(fabs(fd - an) <= 1e-6 * fmax(fabs(an), 1e-3)))
                fail_msg("op %d slot %lld: FD %.12g vs VJP %.12g", op, (long long)q, fd, an);
        }
    }
    free(dense); free(inv); free(b); free(w); free(x); free(db); free(dv); free(dcoo);
    free(vp); free(lam);
}

/* sign, log|det| (against dense LU, when check_logdet) and logdet_grad (against the dense
 * inverse: max |dvalues − g·(A⁻ᵀ)[r,c]| ≤ 1e-10·|g|·max|A⁻¹|) for every batch element;
 * g[b] = 1 − 0.75 b. */
static void dt_check_logdet_grad_dense(const sla_pattern *p, const double *v, int64_t batch,
                                       sla_method method, sla_ordering ordering, int check_logdet)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, batch, v);
    sla_solver_options o = dt_opts(method, ordering);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    double *sg = dt_alloc(batch), *ld = dt_alloc(batch), *dv = dt_alloc(batch * nnz), *g = dt_alloc(batch);
    for (int64_t b = 0; b < batch; b++) g[b] = 1.0 - 0.75 * (double)b;
    TU_OK(sla_solver_logdet(s, sg, ld));
    TU_OK(sla_solver_logdet_grad(s, batch == 1 ? NULL : g, dv));
    for (int64_t b = 0; b < batch; b++) {
        double *d = dt_dense(&A, b), rs, rl;
        if (check_logdet) {
            dt_dense_logdet(d, n, &rs, &rl);
            if (sg[b] != rs) fail_msg("batch %lld: sign %g, dense %g", (long long)b, sg[b], rs);
            TU_CLOSE(ld[b], rl, 1e-11);
        }
        double *inv = dt_dense_inverse(d, n), imax = 0, err = 0;
        for (int64_t i = 0; i < n * n; i++) imax = fmax(imax, fabs(inv[i]));
        for (int64_t q = 0; q < nnz; q++)
            err = fmax(err, fabs(dv[b * nnz + q] - g[b] * inv[ci[q] * n + ri[q]]));
        if (!(err <= 1e-10 * fabs(g[b]) * imax))
            fail_msg("ordering %d batch %lld: logdet_grad error %.3g (max |A⁻¹| %.3g)",
                     (int)ordering, (long long)b, err, imax);
        free(d); free(inv);
    }
    sla_solver_free(&s);
    free(sg); free(ld); free(dv); free(g);
}

/* logdet_grad of solver s (g = 1) against columns j of A⁻¹ from solves: for every slot (j, c),
 * |dvalues − (A⁻¹)[c, j]| ≤ 1e-10·max|A⁻¹ e_j|. */
static void dt_check_logdet_grad_columns(sla_solver *s, const sla_pattern *p, const int64_t *cols,
                                         int ncols, const char *name)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), checked = 0;
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *dv = dt_alloc(nnz), *e = dt_alloc(n), *col = dt_alloc(n);
    TU_OK(sla_solver_logdet_grad(s, NULL, dv));
    for (int t = 0; t < ncols; t++) {
        int64_t j = cols[t];
        memset(e, 0, sizeof(double) * (size_t)n);
        e[j] = 1;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, e, col, NULL));
        double cmax = 0, err = 0;
        for (int64_t i = 0; i < n; i++) cmax = fmax(cmax, fabs(col[i]));
        for (int64_t q = 0; q < nnz; q++)
            if (ri[q] == j) { err = fmax(err, fabs(dv[q] - col[ci[q]])); checked++; }
        if (!(err <= 1e-10 * cmax))
            fail_msg("%s column %lld: error %.3g of %.3g", name, (long long)j, err, cmax);
    }
    assert_true(checked >= ncols);
    free(dv); free(e); free(col);
}

/* Every allocation of create / solve / logdet / logdet_grad on (p, v) duplicated into a batch
 * of 2 failing in turn returns SLA_ENOMEM (ASan checks that nothing leaks), until all succeed;
 * once in float64 with one right-hand side, once in float32 with three (the conversion
 * buffers). An allocation that failed while the calls still succeeded was swallowed: the
 * allocation count of the run tells (sla_test_fail_alloc_after returns it). */
static void dt_check_allocation_failures(const sla_pattern *p, const double *v, sla_method method,
                                         sla_ordering ordering)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    double *vb = dt_alloc(2 * nnz), *b = dt_alloc(6 * n), *x = dt_alloc(6 * n), *dv = dt_alloc(2 * nnz);
    float *vf = calloc((size_t)(2 * nnz + 1), sizeof(float)), *bf = calloc((size_t)(6 * n + 1), sizeof(float));
    assert_true(vf && bf);
    memcpy(vb, v, sizeof(double) * (size_t)nnz);
    memcpy(vb + nnz, v, sizeof(double) * (size_t)nnz);
    for (int64_t i = 0; i < 2 * nnz; i++) vf[i] = (float)vb[i];
    for (int64_t i = 0; i < 6 * n; i++) { b[i] = 1; bf[i] = 1; }
    sla_solver_options o = dt_opts(method, ordering);
    for (int f32 = 0; f32 < 2; f32++) {
        sla_matrix A = sla_matrix_view(p, f32 ? SLA_FLOAT32 : SLA_FLOAT64, 2, f32 ? (void *)vf : (void *)vb);
        int64_t nrhs = f32 ? 3 : 1;
        int done = 0;
        for (int64_t k = 0; k < 400 && !done; k++) {
            sla_solver *s = NULL;
            double sg[2], ld[2];
            sla_test_fail_alloc_after(k);
            sla_status st = sla_solver_create(&A, &o, &s);
            if (st == SLA_OK) st = sla_solver_solve(s, SLA_OP_N, nrhs, f32 ? (void *)bf : (void *)b, x, NULL);
            if (st == SLA_OK) st = sla_solver_logdet(s, sg, ld);
            if (st == SLA_OK) st = sla_solver_logdet_grad(s, NULL, dv);
            int64_t used = sla_test_fail_alloc_after(-1);
            if (st == SLA_OK && k < used)
                fail_msg("%s (%s): allocation %lld of %lld failed but every call succeeded",
                         sla_method_name(method), f32 ? "float32" : "float64", (long long)k,
                         (long long)used);
            if (st == SLA_OK) done = 1;
            else if (st != SLA_ENOMEM)
                fail_msg("%s (%s), allocation %lld failing: status %d, %s", sla_method_name(method),
                         f32 ? "float32" : "float64", (long long)k, (int)st, sla_last_error());
            sla_solver_free(&s);
        }
        assert_true(done);
    }
    free(vb); free(b); free(x); free(dv); free(vf); free(bf);
}

/* float32 values and right-hand sides of a shared matrix: scaled residual (in double) ≤ 1e-6,
 * description says float32. */
static void dt_check_float32(const char *name, sla_method method, sla_op op)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load(name, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 2;
    float *vf = malloc(sizeof(float) * (size_t)nnz), *b = malloc(sizeof(float) * (size_t)(n * k)),
          *x = malloc(sizeof(float) * (size_t)(n * k));
    for (int64_t i = 0; i < nnz; i++) vf[i] = (float)v[i];
    uint64_t seed = 3;
    for (int64_t i = 0; i < n * k; i++) b[i] = (float)tu_rand(&seed);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    sla_solver_options o = dt_opts(method, SLA_ORDERING_AUTO);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_non_null(strstr(sla_solver_describe(s), "float32"));
    TU_OK(sla_solver_solve(s, op, k, b, x, NULL));
    double r = dt_scaled_residual(&A, op, k, b, x);
    if (!(r <= 1e-6)) fail_msg("%s float32 residual %.3g", name, r);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(vf); free(b); free(x);
}

/* 7-point 3D Poisson (Dirichlet) on an m³ grid: diagonal 6, neighbours −1. */
static void dt_poisson3d(int64_t m, sla_pattern **p, double **values)
{
    tu_poisson3d(m, p, values);
}

/* The AUTO ordering rule on a 2D grid (AMD kept) and on a 30³ grid (METIS chosen: AMD's factor
 * has flops/nnz(L) ≈ 900 ≥ 500), visible in describe(); solutions correct either way. */
static void dt_check_auto_ordering(sla_method method)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    for (int k = 0; k < 2; k++) {
        if (k == 0) tu_poisson2d(60, 60, &p, &v); else dt_poisson3d(30, &p, &v);
        int64_t n = sla_pattern_nrows(p);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver_options o = dt_opts(method, SLA_ORDERING_AUTO);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        const char *want = k == 0 ? ", AMD)" : ", METIS)";
        if (!strstr(sla_solver_describe(s), want))
            fail_msg("expected %s in '%s'", want, sla_solver_describe(s));
        double *b = dt_alloc(n), *x = dt_alloc(n);
        tu_fill_random(b, n, 5);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        assert_true(dt_scaled_residual(&A, SLA_OP_N, 1, b, x) <= 1e-13);
        sla_solver_free(&s);
        sla_pattern_free(&p);
        free(v); free(b); free(x);
    }
}

#endif
