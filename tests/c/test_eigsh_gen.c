/* eigsh for the generalized problem A v = λ M v (options.M): the 1D finite-element closed form
 * (stiffness and consistent mass), LAPACK dsygv references on random SPD pairs, M = I against
 * the standard problem, a lumped (diagonal) mass, 1138_bus with a diagonal M, batches with a
 * shared M, float32, bad input, and finite-difference checks of sla_eigsh_generalized_vjp with
 * respect to the values of A and of M. */
#include <lapack.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig_alloc_fail.h"
#include "testutil.h"

#define PI 3.14159265358979323846

static void *xmalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    assert_non_null(p);
    return p;
}

static int have_method(sla_method m)
{
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        if (sla_backend_get(i, &bi) == SLA_OK && bi.available && (bi.methods & (1u << m))) return 1;
    }
    return 0;
}

/* 1 if this build has ARPACK (method arpack answers SLA_EUNSUPPORTED otherwise). */
static int have_arpack(void)
{
    return SLA_HAVE_ARPACK;
}

#define NEED_DIRECT() do { if (!have_method(SLA_METHOD_CHOLESKY)) skip(); } while (0)

/* A symmetric tridiagonal matrix tridiag(off, diag, off) of size n (float64 values). */
static void tridiag(int64_t n, double diag, double off, sla_pattern **p, double **values)
{
    int64_t *r = xmalloc(sizeof(int64_t) * 3 * n), *c = xmalloc(sizeof(int64_t) * 3 * n);
    double *v = xmalloc(sizeof(double) * 3 * n);
    int64_t q = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) { r[q] = i; c[q] = i - 1; v[q++] = off; }
        r[q] = i; c[q] = i; v[q++] = diag;
        if (i < n - 1) { r[q] = i; c[q] = i + 1; v[q++] = off; }
    }
    TU_OK(sla_pattern_from_coo(n, n, q, r, c, p));
    *values = xmalloc(sizeof(double) * q);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

/* A diagonal matrix diag(d) of size n. */
static void diagonal(int64_t n, const double *d, sla_pattern **p, double **values)
{
    int64_t *r = xmalloc(sizeof(int64_t) * n);
    for (int64_t i = 0; i < n; i++) r[i] = i;
    TU_OK(sla_pattern_from_coo(n, n, n, r, r, p));
    *values = xmalloc(sizeof(double) * n);
    memcpy(*values, d, sizeof(double) * n);
    free(r);
}

/* The 1D P1 finite-element pair on (0, 1) with n interior nodes, h = 1/(n + 1): stiffness
 * tridiag(−1, 2, −1)/h and consistent mass h/6·tridiag(1, 4, 1). */
static void fem1d(int64_t n, sla_pattern **pa, double **a, sla_pattern **pm, double **m)
{
    double h = 1.0 / (double)(n + 1);
    tridiag(n, 2.0 / h, -1.0 / h, pa, a);
    tridiag(n, 4.0 * h / 6.0, h / 6.0, pm, m);
}

/* The FEM pair with a batch of two stiffness matrices K and scale·K (a2 [2][nnz]) and one mass. */
static void fem1d_batch2(int64_t n, double scale, sla_pattern **pa, double **a2, sla_pattern **pm,
                         double **m)
{
    double *a;
    fem1d(n, pa, &a, pm, m);
    int64_t nnz = sla_pattern_nnz(*pa);
    *a2 = xmalloc(sizeof(double) * 2 * nnz);
    for (int64_t s = 0; s < nnz; s++) { (*a2)[s] = a[s]; (*a2)[nnz + s] = scale * a[s]; }
    free(a);
}

/* λ_j = (6/h²)(1 − cos θ_j)/(2 + cos θ_j), θ_j = jπ/(n+1), j = 1..n: ascending in j. */
static double fem1d_lambda(int64_t n, int64_t j)
{
    double h = 1.0 / (double)(n + 1), t = (double)j * PI / (double)(n + 1);
    return 6.0 / (h * h) * (1 - cos(t)) / (2 + cos(t));
}

/* max |VᵀMV − I| over the k columns (V row-major n × k, M of batch 1). */
static double m_orth_error(const sla_matrix *M, int64_t k, const double *V)
{
    int64_t n = sla_pattern_nrows(M->pattern);
    double *MV = xmalloc(sizeof(double) * n * k), err = 0;
    TU_OK(sla_spmv(SLA_OP_N, 1.0, M, V, 1, k, 0.0, MV));
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < k; j++) {
            double g = 0;
            for (int64_t q = 0; q < n; q++) g += V[q * k + i] * MV[q * k + j];
            err = fmax(err, fabs(g - (i == j)));
        }
    free(MV);
    return err;
}

/* max over pairs of ‖A v − λ M v‖ / ((‖A‖₁ + |λ|‖M‖₁)‖v‖) (batch 1). */
static double gen_residual(const sla_matrix *A, const sla_matrix *M, int64_t k, const double *lam,
                           const double *V)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double *AV = xmalloc(sizeof(double) * n * k), *MV = xmalloc(sizeof(double) * n * k);
    double nA, nM, worst = 0;
    TU_OK(sla_spmv(SLA_OP_N, 1.0, A, V, 1, k, 0.0, AV));
    TU_OK(sla_spmv(SLA_OP_N, 1.0, M, V, 1, k, 0.0, MV));
    TU_OK(sla_matrix_norm(A, '1', &nA));
    TU_OK(sla_matrix_norm(M, '1', &nM));
    for (int64_t i = 0; i < k; i++) {
        double r = 0, nv = 0;
        for (int64_t q = 0; q < n; q++) {
            double d = AV[q * k + i] - lam[i] * MV[q * k + i];
            r += d * d;
            nv += V[q * k + i] * V[q * k + i];
        }
        worst = fmax(worst, sqrt(r) / ((nA + fabs(lam[i]) * nM) * sqrt(nv)));
    }
    free(AV); free(MV);
    return worst;
}

/* All generalized eigenvalues (ascending) and M-orthonormal eigenvectors (column-major n × n)
 * of the dense pair with LAPACK dsygv. */
static void dsygv_reference(const sla_matrix *A, const sla_matrix *M, double *w, double *Z)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double *DM = xmalloc(sizeof(double) * n * n);
    TU_OK(sla_matrix_to_dense(A, Z));
    TU_OK(sla_matrix_to_dense(M, DM));
    lapack_int nn = (lapack_int)n, one = 1, lwork = -1, info = 0;
    double q;
    LAPACK_dsygv(&one, "V", "U", &nn, Z, &nn, DM, &nn, w, &q, &lwork, &info);
    lwork = (lapack_int)q;
    double *work = xmalloc(sizeof(double) * lwork);
    LAPACK_dsygv(&one, "V", "U", &nn, Z, &nn, DM, &nn, w, work, &lwork, &info);
    assert_int_equal(info, 0);
    free(DM); free(work);
}

/* A random dense symmetric pair: A with entries in [−1, 1) (indefinite), M = I·(n/2) + a random
 * symmetric part of entries in [−1/2, 1/2): diagonally dominant, hence SPD with Gershgorin
 * lower bound > 0. Dense patterns. */
static void random_pair(int64_t n, uint64_t seed, sla_pattern **p, double **a, double **m)
{
    int64_t *r = xmalloc(sizeof(int64_t) * n * n), *c = xmalloc(sizeof(int64_t) * n * n);
    double *da = xmalloc(sizeof(double) * n * n), *dm = xmalloc(sizeof(double) * n * n);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            double x = tu_rand(&s), y = 0.5 * tu_rand(&s);
            da[i * n + j] = da[j * n + i] = x;
            dm[i * n + j] = dm[j * n + i] = i == j ? 0.5 * (double)n + fabs(y) : y;
        }
    for (int64_t q = 0; q < n * n; q++) { r[q] = q / n; c[q] = q % n; }
    TU_OK(sla_pattern_from_coo(n, n, n * n, r, c, p));
    *a = da;   /* CSR order of a dense pattern = row-major */
    *m = dm;
    free(r); free(c);
}

/* Options for the k smallest (SA) of A v = λ M v with method and tol. */
static sla_eigsh_options sa_options(const sla_matrix *M, sla_eigsh_method method, double tol)
{
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = method;
    o.M = M;
    o.tol = tol;
    return o;
}

/* ------------------------------------------------------------------------------------------ */

static void fem1d_closed_form(void **state)
{
    (void)state;
    NEED_DIRECT();
    const int64_t ns[] = {120, 1000, 1000};
    const sla_eigsh_method ms[] = {SLA_EIGSH_DENSE, SLA_EIGSH_LANCZOS, SLA_EIGSH_ARPACK};
    for (int t = 0; t < 3; t++) {
        if (ms[t] == SLA_EIGSH_ARPACK && !have_arpack()) continue;
        int64_t n = ns[t], k = 6;
        sla_pattern *pa, *pm; double *a, *m;
        fem1d(n, &pa, &a, &pm, &m);
        sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a), M = sla_matrix_view(pm, SLA_FLOAT64, 1, m);
        sla_eigsh_options o = sa_options(&M, ms[t], 1e-12);
        double lam[6], *V = xmalloc(sizeof(double) * n * k), res[6];
        o.residuals = res;
        sla_eigsh_info info;
        TU_OK(sla_eigsh(&A, k, &o, lam, V, &info));
        assert_int_equal(info.method, ms[t]);
        assert_int_equal(info.converged, k);
        for (int64_t j = 0; j < k; j++) TU_CLOSE(lam[j], fem1d_lambda(n, j + 1), 1e-10);
        assert_true(m_orth_error(&M, k, V) < 1e-10);
        double r = gen_residual(&A, &M, k, lam, V);
        assert_true(r <= 1e-12);
        for (int64_t j = 0; j < k; j++) assert_true(res[j] <= 1e-12);
        TU_CLOSE(info.norm_M, 6.0 / 6.0 / (double)(n + 1), 1e-14);
        if (ms[t] != SLA_EIGSH_DENSE) {
            assert_non_null(strstr(info.description, "(A − σM)⁻¹M"));
            /* one Cholesky of M (the SPD check) and at least one of A − σM */
            assert_true(info.factorizations >= 2);
        }
        /* sigma in the middle: the 4 nearest to σ = (λ_10 + λ_11)/2 */
        if (ms[t] != SLA_EIGSH_DENSE) {
            o.which = SLA_EIGSH_LM;
            o.sigma = 0.5 * (fem1d_lambda(n, 10) + fem1d_lambda(n, 11));
            TU_OK(sla_eigsh(&A, 4, &o, lam, V, &info));
            for (int64_t j = 0; j < 4; j++) TU_CLOSE(lam[j], fem1d_lambda(n, 9 + j), 1e-10);
            assert_true(m_orth_error(&M, 4, V) < 1e-10);
            /* LA: the largest, a shift above the spectrum from the Gershgorin bounds of A and M */
            o.sigma = NAN;
            o.which = SLA_EIGSH_LA;
            TU_OK(sla_eigsh(&A, 3, &o, lam, V, &info));
            for (int64_t j = 0; j < 3; j++) TU_CLOSE(lam[j], fem1d_lambda(n, n - 2 + j), 1e-10);
            /* LM of the SPD pair = LA */
            o.which = SLA_EIGSH_LM;
            double lam2[3];
            TU_OK(sla_eigsh(&A, 3, &o, lam2, V, &info));
            for (int64_t j = 0; j < 3; j++) TU_CLOSE(lam2[j], lam[j], 1e-10);
            /* SM = SA for the SPD pair */
            o.which = SLA_EIGSH_SM;
            TU_OK(sla_eigsh(&A, 3, &o, lam2, V, &info));
            for (int64_t j = 0; j < 3; j++) TU_CLOSE(lam2[j], fem1d_lambda(n, j + 1), 1e-10);
        }
        free(V); free(a); free(m);
        sla_pattern_free(&pa); sla_pattern_free(&pm);
    }
}

static void dense_references(void **state)
{
    (void)state;
    NEED_DIRECT();
    int64_t n = 60, k = 4;
    sla_pattern *p; double *a, *m;
    random_pair(n, 7, &p, &a, &m);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, a), M = sla_matrix_view(p, SLA_FLOAT64, 1, m);
    double *w = xmalloc(sizeof(double) * n), *Z = xmalloc(sizeof(double) * n * n);
    dsygv_reference(&A, &M, w, Z);
    const sla_eigsh_method ms[] = {SLA_EIGSH_DENSE, SLA_EIGSH_LANCZOS, SLA_EIGSH_AUTO,
                                   SLA_EIGSH_ARPACK, SLA_EIGSH_LOBPCG};
    /* SA (A indefinite: a shift below from the Gershgorin bounds), LA, and sigma (LOBPCG: LM
     * without sigma instead, from both ends of the indefinite pencil) */
    const sla_eigsh_which ws[] = {SLA_EIGSH_SA, SLA_EIGSH_LA, SLA_EIGSH_LM};
    double sigma = 0.5 * (w[30] + w[31]);
    int64_t lm_first = 0;                /* the 4 largest |λ|: w ascending, from both ends */
    {
        int64_t lo = 0, hi = n - 1;
        for (int q = 0; q < 4; q++) {
            if (fabs(w[hi]) >= fabs(w[lo])) hi--; else lo++;
        }
        lm_first = lo;                   /* below: lo values w[0..lo), above: w(hi..n) */
        assert_int_equal(lo, 2);         /* this pair: two at each end (checked against w) */
    }
    for (int t = 0; t < 5; t++)
        for (int u = 0; u < 3 && (ms[t] != SLA_EIGSH_ARPACK || have_arpack()); u++) {
            int lob_lm = ms[t] == SLA_EIGSH_LOBPCG && u == 2;
            sla_eigsh_options o;
            sla_eigsh_options_init(&o);
            o.which = ws[u];
            o.sigma = u == 2 && !lob_lm ? sigma : NAN;
            o.block_size = ms[t] == SLA_EIGSH_LOBPCG ? 8 : 0;
            o.method = ms[t];
            o.M = &M;
            o.tol = 1e-12;
            double lam[4], V[60 * 4];
            TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
            int64_t first = u == 0 ? 0 : u == 1 ? n - k : 29;
            for (int64_t j = 0; j < k; j++) {
                int64_t idx = first + j;
                if (lob_lm) idx = j < lm_first ? j : n - k + j;
                TU_CLOSE(lam[j], w[idx], 1e-10);
                /* the same eigenvector up to sign: |zᵀ M v| = 1 */
                double *Mv = xmalloc(sizeof(double) * n), col[60], dot = 0;
                for (int64_t q = 0; q < n; q++) col[q] = V[q * k + j];
                TU_OK(sla_spmv(SLA_OP_N, 1.0, &M, col, 0, 1, 0.0, Mv));
                for (int64_t q = 0; q < n; q++) dot += Z[idx * n + q] * Mv[q];
                TU_CLOSE(fabs(dot), 1.0, 1e-8);
                free(Mv);
            }
            assert_true(m_orth_error(&M, k, V) < 1e-10);
            assert_true(gen_residual(&A, &M, k, lam, V) < 1e-11);
        }
    free(w); free(Z); free(a); free(m);
    sla_pattern_free(&p);
}

/* M = I reproduces the standard problem; a lumped (diagonal) M d against the scaled standard
 * problem D^(−1/2) A D^(−1/2) (eigenvalues equal, v = D^(−1/2) u). */
static void identity_and_lumped_mass(void **state)
{
    (void)state;
    NEED_DIRECT();
    int64_t m = 24, n = m * m, k = 5;
    sla_pattern *pa, *pi; double *a, *one;
    tu_poisson2d(m, m, &pa, &a);
    double *d = xmalloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++) d[i] = 1.0;
    diagonal(n, d, &pi, &one);
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a), Id = sla_matrix_view(pi, SLA_FLOAT64, 1, one);
    sla_eigsh_options o = sa_options(NULL, SLA_EIGSH_LANCZOS, 1e-12);
    double ls[5], lg[5], *Vs = xmalloc(sizeof(double) * n * k), *Vg = xmalloc(sizeof(double) * n * k);
    TU_OK(sla_eigsh(&A, k, &o, ls, Vs, NULL));
    o.M = &Id;
    TU_OK(sla_eigsh(&A, k, &o, lg, Vg, NULL));
    /* λ_1 simple; λ_2 = λ_3 is a double eigenvalue (eigenvectors not unique): compare λ */
    for (int64_t j = 0; j < k; j++) TU_CLOSE(lg[j], ls[j], 1e-11);
    for (int64_t q = 0; q < n; q++) TU_CLOSE(Vg[q * k], Vs[q * k], 1e-8);
    assert_true(m_orth_error(&Id, k, Vg) < 1e-10);

    /* lumped mass d_i = 1 + (i mod 3): reference dsygv on the dense pair (n = 576) */
    for (int64_t i = 0; i < n; i++) d[i] = 1.0 + (double)(i % 3);
    sla_pattern *pd; double *dv;
    diagonal(n, d, &pd, &dv);
    sla_matrix D = sla_matrix_view(pd, SLA_FLOAT64, 1, dv);
    double *w = xmalloc(sizeof(double) * n), *Z = xmalloc(sizeof(double) * n * n);
    dsygv_reference(&A, &D, w, Z);
    o.M = &D;
    const sla_eigsh_method ms[] = {SLA_EIGSH_LANCZOS, SLA_EIGSH_DENSE};
    for (int t = 0; t < 2; t++) {
        o.method = ms[t];
        TU_OK(sla_eigsh(&A, k, &o, lg, Vg, NULL));
        for (int64_t j = 0; j < k; j++) TU_CLOSE(lg[j], w[j], 1e-11);
        assert_true(m_orth_error(&D, k, Vg) < 1e-10);
        assert_true(gen_residual(&A, &D, k, lg, Vg) < 1e-12);
    }
    free(w); free(Z); free(d); free(a); free(one); free(dv); free(Vs); free(Vg);
    sla_pattern_free(&pa); sla_pattern_free(&pi); sla_pattern_free(&pd);
}

/* 1138_bus (SPD, κ 8.6e6) with the diagonal mass M = diag(A) (Jacobi pencil): its eigenvalues
 * are those of D^(−1/2) A D^(−1/2); reference: the dense path (dsygvd) and a dsygv call. */
static void bus1138_diagonal_mass(void **state)
{
    (void)state;
    NEED_DIRECT();
    if (!tu_have_matrices()) skip();
    sla_pattern *pa, *pd; double *a, *dv;
    tu_load("1138_bus.mtx", &pa, &a);
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a);
    int64_t n = 1138, k = 4;
    double *d = xmalloc(sizeof(double) * n);
    TU_OK(sla_matrix_diagonal(&A, d));
    diagonal(n, d, &pd, &dv);
    sla_matrix M = sla_matrix_view(pd, SLA_FLOAT64, 1, dv);
    double *w = xmalloc(sizeof(double) * n), *Z = xmalloc(sizeof(double) * n * n);
    dsygv_reference(&A, &M, w, Z);
    sla_eigsh_options o = sa_options(&M, SLA_EIGSH_AUTO, 1e-12);
    double lam[4], *V = xmalloc(sizeof(double) * n * k);
    sla_eigsh_info info;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, &info));
    assert_int_equal(info.method, SLA_EIGSH_LANCZOS);
    /* relative agreement (the smallest are far below 1) */
    for (int64_t j = 0; j < k; j++)
        if (!(fabs(lam[j] - w[j]) <= 1e-8 * w[j])) fail_msg("λ_%lld = %.17g, dsygv %.17g", (long long)j, lam[j], w[j]);
    /* SPD pencil: positive, and at least λmin(A)/max(diag) = 3.517e-3/max(diag) (A's fact) */
    double dmax = 0;
    for (int64_t i = 0; i < n; i++) dmax = fmax(dmax, d[i]);
    assert_true(lam[0] >= 0.999 * 3.517e-3 / dmax);
    assert_true(m_orth_error(&M, k, V) < 1e-9);
    assert_true(gen_residual(&A, &M, k, lam, V) < 1e-12);
    free(w); free(Z); free(d); free(a); free(dv); free(V);
    sla_pattern_free(&pa); sla_pattern_free(&pd);
}

/* A batch of two stiffness matrices (scaled 1 and 3) with one shared mass (batch 1); float32. */
static void batch_shared_mass_and_float32(void **state)
{
    (void)state;
    NEED_DIRECT();
    int64_t n = 400, k = 3;
    sla_pattern *pa, *pm; double *a2, *m;
    fem1d_batch2(n, 3.0, &pa, &a2, &pm, &m);
    int64_t nnz = sla_pattern_nnz(pa), nnzm = sla_pattern_nnz(pm);
    double *a = a2;
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 2, a2), M = sla_matrix_view(pm, SLA_FLOAT64, 1, m);
    sla_eigsh_options o = sa_options(&M, SLA_EIGSH_LANCZOS, 1e-12);
    double lam[6], *V = xmalloc(sizeof(double) * 2 * n * k);
    TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
    for (int64_t j = 0; j < k; j++) {
        TU_CLOSE(lam[j], fem1d_lambda(n, j + 1), 1e-10);
        TU_CLOSE(lam[k + j], 3 * fem1d_lambda(n, j + 1), 1e-10);
    }
    assert_true(m_orth_error(&M, k, V + n * k) < 1e-10);

    /* float32: promoted internally, outputs rounded */
    float *af = xmalloc(sizeof(float) * nnz), *mf = xmalloc(sizeof(float) * nnzm), lf[3];
    float *Vf = xmalloc(sizeof(float) * n * k);
    for (int64_t s = 0; s < nnz; s++) af[s] = (float)a[s];
    for (int64_t s = 0; s < nnzm; s++) mf[s] = (float)m[s];
    sla_matrix Af = sla_matrix_view(pa, SLA_FLOAT32, 1, af), Mf = sla_matrix_view(pm, SLA_FLOAT32, 1, mf);
    o.M = &Mf;
    o.tol = 1e-6;
    const sla_eigsh_method ms[] = {SLA_EIGSH_LANCZOS, SLA_EIGSH_DENSE};
    for (int t = 0; t < 2; t++) {
        o.method = ms[t];
        TU_OK(sla_eigsh(&Af, k, &o, lf, Vf, NULL));
        for (int64_t j = 0; j < k; j++) TU_CLOSE(lf[j], fem1d_lambda(n, j + 1), 1e-5);
    }
    free(m); free(a2); free(V); free(af); free(mf); free(Vf);
    sla_pattern_free(&pa); sla_pattern_free(&pm);
}

/* LOBPCG with B = M on the FEM pair, preconditioned by the exact inverse of K (Cholesky), and
 * auto with a preconditioner (which then picks LOBPCG). */
static void lobpcg_fem(void **state)
{
    (void)state;
    NEED_DIRECT();
    int64_t n = 1000, k = 4;
    sla_pattern *pa, *pm; double *a, *m;
    fem1d(n, &pa, &a, &pm, &m);
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a), M = sla_matrix_view(pm, SLA_FLOAT64, 1, m);
    sla_solver_options so;
    sla_solver_options_init(&so);
    so.method = SLA_METHOD_CHOLESKY;
    sla_solver *chol = NULL;
    TU_OK(sla_solver_create(&A, &so, &chol));
    const sla_eigsh_method ms[] = {SLA_EIGSH_LOBPCG, SLA_EIGSH_AUTO};
    for (int t = 0; t < 2; t++) {
        sla_eigsh_options o = sa_options(&M, ms[t], 1e-11);
        o.precond_solver = chol;
        double lam[4], *V = xmalloc(sizeof(double) * n * k);
        sla_eigsh_info info;
        TU_OK(sla_eigsh(&A, k, &o, lam, V, &info));
        assert_int_equal(info.method, SLA_EIGSH_LOBPCG);
        for (int64_t j = 0; j < k; j++) TU_CLOSE(lam[j], fem1d_lambda(n, j + 1), 1e-9);
        assert_true(m_orth_error(&M, k, V) < 1e-9);
        assert_true(gen_residual(&A, &M, k, lam, V) < 1e-11);
        free(V);
    }
    sla_solver_free(&chol);
    free(a); free(m);
    sla_pattern_free(&pa); sla_pattern_free(&pm);
}

#define EXPECT_FAIL(expr, status, text) do { \
    sla_status st_ = (expr); \
    assert_int_equal(st_, status); \
    if (!strstr(sla_last_error(), text)) fail_msg("message '%s' lacks '%s'", sla_last_error(), text); \
} while (0)

static void bad_input(void **state)
{
    (void)state;
    NEED_DIRECT();
    int64_t n = 40;
    sla_pattern *pa, *pm; double *a, *m;
    fem1d(n, &pa, &a, &pm, &m);
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a);
    double lam[2], V[80];
    sla_eigsh_options o = sa_options(NULL, SLA_EIGSH_AUTO, 1e-10);
    /* M not SPD: a negative diagonal entry at row 17 (both the Cholesky check and dsygvd) */
    double *mbad = xmalloc(sizeof(double) * sla_pattern_nnz(pm));
    memcpy(mbad, m, sizeof(double) * sla_pattern_nnz(pm));
    mbad[sla_pattern_find(pm, 17, 17)] = -1.0;
    sla_matrix Mb = sla_matrix_view(pm, SLA_FLOAT64, 1, mbad);
    o.M = &Mb;
    o.method = SLA_EIGSH_LANCZOS;
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_ENOTSPD, "column 17");
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_ENOTSPD, "mass matrix M");
    o.method = SLA_EIGSH_DENSE;
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_ENOTSPD, "column 17");
    /* M semidefinite (the path graph's Laplacian, null vector 1): its last Cholesky pivot is
     * rounding (here ≤ 0; when it is a tiny positive number, the rcond test refuses it: see
     * tests/python/test_eigsh.py), refused by every method as by dsygvd */
    const int64_t *mri = sla_pattern_rowind(pm);
    const int32_t *mci = sla_pattern_colind(pm);
    for (int64_t q = 0; q < sla_pattern_nnz(pm); q++)
        mbad[q] = mri[q] != mci[q] ? -1.0 : (mri[q] == 0 || mri[q] == n - 1) ? 1.0 : 2.0;
    for (int meth = 0; meth < 3; meth++) {
        const sla_eigsh_method ms[] = {SLA_EIGSH_LANCZOS, SLA_EIGSH_LOBPCG, SLA_EIGSH_DENSE};
        o.method = ms[meth];
        EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_ENOTSPD, "mass matrix M");
    }
    /* size mismatch */
    sla_pattern *p2, *pm2; double *a2, *m2;
    fem1d(n + 1, &p2, &a2, &pm2, &m2);
    sla_matrix Mbig = sla_matrix_view(pm2, SLA_FLOAT64, 1, m2);
    o.M = &Mbig;
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_ESHAPE, "41 × 41");
    /* dtype mismatch */
    float mf[200] = {0};
    sla_matrix Mf = sla_matrix_view(pm, SLA_FLOAT32, 1, mf);
    o.M = &Mf;
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_EDTYPE, "float32");
    /* batch mismatch: M batch 2 for A batch 1 */
    double *mm2 = xmalloc(sizeof(double) * 2 * sla_pattern_nnz(pm));
    sla_matrix M2 = sla_matrix_view(pm, SLA_FLOAT64, 2, mm2);
    o.M = &M2;
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_EINVAL, "batch 2");
    /* M not symmetric */
    double *mns = xmalloc(sizeof(double) * sla_pattern_nnz(pm));
    memcpy(mns, m, sizeof(double) * sla_pattern_nnz(pm));
    mns[sla_pattern_find(pm, 3, 4)] *= 2;
    sla_matrix Mns = sla_matrix_view(pm, SLA_FLOAT64, 1, mns);
    o.M = &Mns;
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, lam, V, NULL), SLA_EINVAL, "M is not symmetric");
    /* Lanczos has no regular mode with M: LM of an indefinite A needs sigma or LOBPCG */
    sla_matrix M = sla_matrix_view(pm, SLA_FLOAT64, 1, m);
    o.M = &M;
    double *aind = xmalloc(sizeof(double) * sla_pattern_nnz(pa));
    for (int64_t s = 0; s < sla_pattern_nnz(pa); s++) aind[s] = a[s];
    for (int64_t i = 0; i < n; i++) aind[sla_pattern_find(pa, i, i)] -= 3.0 * (double)(n + 1);
    sla_matrix Aind = sla_matrix_view(pa, SLA_FLOAT64, 1, aind);
    o.method = SLA_EIGSH_LANCZOS;
    o.which = SLA_EIGSH_LM;
    EXPECT_FAIL(sla_eigsh(&Aind, 2, &o, lam, V, NULL), SLA_EUNSUPPORTED, "no regular mode");
    o.which = SLA_EIGSH_SA;
    free(aind);
    /* an output overlapping M's values */
    o.method = SLA_EIGSH_LANCZOS;
    EXPECT_FAIL(sla_eigsh(&A, 2, &o, m, V, NULL), SLA_EINVAL, "M's values");
    /* VJP: M of the wrong size; dM overlapping M's values */
    double g[2] = {1, 1}, dA[200];
    o.method = SLA_EIGSH_AUTO;
    TU_OK(sla_eigsh(&A, 2, &o, lam, V, NULL));
    EXPECT_FAIL(sla_eigsh_generalized_vjp(&A, &M, 2, lam, V, g, NULL, dA, m), SLA_EINVAL, "M's values");
    EXPECT_FAIL(sla_eigsh_generalized_vjp(&A, &Mbig, 2, lam, V, g, NULL, dA, NULL), SLA_ESHAPE, "41 × 41");
    free(a); free(m); free(mbad); free(a2); free(m2); free(mm2); free(mns);
    sla_pattern_free(&pa); sla_pattern_free(&pm); sla_pattern_free(&p2); sla_pattern_free(&pm2);
}

/* Loss L = Σ c_i λ_i of the k smallest; central differences on the symmetric pair of slots
 * (eigsh needs symmetric input: a_ij and a_ji move together, whose derivative is the sum of the
 * two slots' gradients). */
/* L = Σ_i c_i λ_i (+ Σ_i Σ_r u[r][i]·v_i[r] when u is set: the global U of the eigenvector
 * checks, n × k row-major, or NULL). */
static const double *U_loss;

static double loss(const sla_matrix *A, const sla_matrix *M, int64_t k, const double *c,
                   sla_eigsh_method method)
{
    sla_eigsh_options o = sa_options(M, method, 1e-14);
    int64_t n = sla_pattern_nrows(A->pattern);
    double lam[3], *V = U_loss ? xmalloc(sizeof(double) * n * k) : NULL;
    sla_status st = sla_eigsh(A, k, &o, lam, V, NULL);
    if (st != SLA_OK && st != SLA_NOT_CONVERGED) fail_msg("%s", sla_last_error());
    double L = 0;
    for (int64_t i = 0; i < k; i++) L += c[i] * lam[i];
    for (int64_t q = 0; U_loss && q < n * k; q++) L += U_loss[q] * V[q];
    free(V);
    return L;
}

/* L(x + d·h) for the symmetric pair of slots s, t (t = s on the diagonal). */
static double shifted_loss(const sla_matrix *A, const sla_matrix *M, double *x, int64_t s, int64_t t,
                           double d, int64_t k, const double *c, sla_eigsh_method method)
{
    double xs = x[s], xt = x[t];
    x[t] = xt + d;
    x[s] = xs + d;
    double L = loss(A, M, k, c, method);
    x[t] = xt;
    x[s] = xs;
    return L;
}

/* Fourth-order central differences (h = 1e-4·max|x|) against the analytic gradient, per slot
 * relative to max(|∂L|, 1e-3·max|∂L|) (slots with tiny gradients are measured on the scale of
 * the gradient). */
static void fd_check(const sla_matrix *A, const sla_matrix *M, double *x, const sla_pattern *px,
                     const double *grad, int64_t k, const double *c, sla_eigsh_method method)
{
    int64_t n = sla_pattern_nrows(px), nnz = sla_pattern_nnz(px);
    const int64_t *rp = sla_pattern_rowptr(px);
    const int32_t *ci = sla_pattern_colind(px);
    double xmax = 0, gmax = 0;
    for (int64_t s = 0; s < nnz; s++) { xmax = fmax(xmax, fabs(x[s])); gmax = fmax(gmax, fabs(grad[s])); }
    double h = 1e-4 * xmax, worst = 0;
    int checked = 0;
    for (int64_t i = 0; i < n; i += 3)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t j = ci[s];
            if (j < i) continue;
            int64_t t = sla_pattern_find(px, j, i);
            double f1 = shifted_loss(A, M, x, s, t, h, k, c, method) - shifted_loss(A, M, x, s, t, -h, k, c, method);
            double f2 = shifted_loss(A, M, x, s, t, 2 * h, k, c, method) - shifted_loss(A, M, x, s, t, -2 * h, k, c, method);
            double fd = (8 * f1 - f2) / (12 * h), an = grad[s] + (t != s ? grad[t] : 0);
            double err = fabs(fd - an) / fmax(fabs(an), 1e-3 * gmax);
            if (err > 1e-6) print_message("slot (%lld,%lld): fd %.10g analytic %.10g\n", (long long)i, (long long)j, fd, an);
            worst = fmax(worst, err);
            checked++;
        }
    assert_true(checked > 5);
    if (!(worst <= 1e-6)) fail_msg("finite differences: worst relative error %.3g", worst);
}

static void vjp_finite_differences(void **state)
{
    (void)state;
    NEED_DIRECT();
    /* random dense pair (dense path) and the FEM pair (Lanczos, own patterns of A and M) */
    int64_t k = 3;
    const double c[3] = {0.7, -1.3, 0.4};
    for (int t = 0; t < 2; t++) {
        sla_pattern *pa, *pm; double *a, *m;
        int64_t n;
        sla_eigsh_method method;
        if (t == 0) {
            n = 14;
            random_pair(n, 11, &pa, &a, &m);
            pm = sla_pattern_retain(pa);
            method = SLA_EIGSH_DENSE;
        } else {
            n = 60;
            fem1d(n, &pa, &a, &pm, &m);
            /* a lumped diagonal part in M so that M's pattern differs from A's in values only;
             * and a non-uniform stiffness */
            for (int64_t s = 0; s < sla_pattern_nnz(pa); s++) a[s] *= 1.0 + 0.01 * (double)(s % 7 == 0);
            method = SLA_EIGSH_LANCZOS;
        }
        /* re-symmetrize a (the perturbation above is per slot) */
        const int64_t *rp = sla_pattern_rowptr(pa);
        const int32_t *ci = sla_pattern_colind(pa);
        for (int64_t i = 0; i < n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++)
                if (ci[s] > i) a[sla_pattern_find(pa, ci[s], i)] = a[s];
        sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a), M = sla_matrix_view(pm, SLA_FLOAT64, 1, m);
        sla_eigsh_options o = sa_options(&M, method, 1e-14);
        double lam[3], *V = xmalloc(sizeof(double) * n * k);
        sla_status st = sla_eigsh(&A, k, &o, lam, V, NULL);
        assert_true(st == SLA_OK || st == SLA_NOT_CONVERGED);
        double *dA = xmalloc(sizeof(double) * sla_pattern_nnz(pa));
        double *dM = xmalloc(sizeof(double) * sla_pattern_nnz(pm));
        TU_OK(sla_eigsh_generalized_vjp(&A, &M, k, lam, V, c, NULL, dA, dM));
        fd_check(&A, &M, a, pa, dA, k, c, method);
        fd_check(&A, &M, m, pm, dM, k, c, method);
        /* identity: Σ_s a_s ∂L/∂a_s + Σ_t m_t ∂L/∂m_t = 0 (λ is homogeneous of degree 0 in
         * (A, M) jointly) */
        double hom = 0, Ls = 0;
        for (int64_t s = 0; s < sla_pattern_nnz(pa); s++) hom += a[s] * dA[s];
        for (int64_t s = 0; s < sla_pattern_nnz(pm); s++) hom += m[s] * dM[s];
        for (int64_t i = 0; i < k; i++) Ls += fabs(c[i] * lam[i]);
        assert_true(fabs(hom) <= 1e-9 * Ls);
        /* eigenvectors too: L + Σ uᵀv_i with a random u (scaled like v) */
        double *u = xmalloc(sizeof(double) * n * k), vmax = 0;
        tu_fill_random(u, n * k, 99);
        for (int64_t q = 0; q < n * k; q++) vmax = fmax(vmax, fabs(V[q]));
        for (int64_t q = 0; q < n * k; q++) u[q] *= Ls / (vmax * (double)n);
        TU_OK(sla_eigsh_generalized_vjp(&A, &M, k, lam, V, c, u, dA, dM));
        U_loss = u;
        fd_check(&A, &M, a, pa, dA, k, c, method);
        fd_check(&A, &M, m, pm, dM, k, c, method);
        U_loss = NULL;
        /* v scales as (scale of M)^(−1/2): Σ m ∂L/∂m + Σ a ∂L/∂a = −½ Σ uᵀv */
        double uv = 0;
        hom = 0;
        for (int64_t s = 0; s < sla_pattern_nnz(pa); s++) hom += a[s] * dA[s];
        for (int64_t s = 0; s < sla_pattern_nnz(pm); s++) hom += m[s] * dM[s];
        for (int64_t q = 0; q < n * k; q++) uv += u[q] * V[q];
        TU_CLOSE(hom, -0.5 * uv, 1e-9 * Ls);
        free(u); free(V); free(dA); free(dM); free(a); free(m);
        sla_pattern_free(&pa); sla_pattern_free(&pm);
    }
}

/* VJP with a shared M (batch 1) and A of batch 2: dM is the sum over the batch. */
static void vjp_shared_mass(void **state)
{
    (void)state;
    NEED_DIRECT();
    int64_t n = 30, k = 2;
    sla_pattern *pa, *pm; double *a2, *m;
    fem1d_batch2(n, 2.0, &pa, &a2, &pm, &m);
    int64_t nnz = sla_pattern_nnz(pa), nnzm = sla_pattern_nnz(pm);
    sla_matrix A2 = sla_matrix_view(pa, SLA_FLOAT64, 2, a2), M = sla_matrix_view(pm, SLA_FLOAT64, 1, m);
    sla_eigsh_options o = sa_options(&M, SLA_EIGSH_AUTO, 1e-10);
    double lam[4], V[2 * 30 * 2], g[4] = {1, 2, 3, 4};
    TU_OK(sla_eigsh(&A2, k, &o, lam, V, NULL));
    double *dA = xmalloc(sizeof(double) * 2 * nnz), *dM = xmalloc(sizeof(double) * nnzm);
    TU_OK(sla_eigsh_generalized_vjp(&A2, &M, k, lam, V, g, NULL, dA, dM));
    /* per element separately */
    double *dMs = xmalloc(sizeof(double) * nnzm), *dAb = xmalloc(sizeof(double) * nnz);
    for (int64_t s = 0; s < nnzm; s++) dMs[s] = 0;
    for (int b = 0; b < 2; b++) {
        sla_matrix Ab = sla_matrix_view(pa, SLA_FLOAT64, 1, a2 + b * nnz);
        double Vb[60], *dMb = xmalloc(sizeof(double) * nnzm);
        memcpy(Vb, V + b * n * k, sizeof Vb);
        TU_OK(sla_eigsh_generalized_vjp(&Ab, &M, k, lam + b * k, Vb, g + b * k, NULL, dAb, dMb));
        for (int64_t s = 0; s < nnz; s++) TU_CLOSE(dA[b * nnz + s], dAb[s], 1e-14);
        for (int64_t s = 0; s < nnzm; s++) dMs[s] += dMb[s];
        free(dMb);
    }
    for (int64_t s = 0; s < nnzm; s++) TU_CLOSE(dM[s], dMs[s], 1e-13);
    /* one slot by its formula: ∂L/∂m_00 = −Σ_b Σ_i g_bi·λ_bi·v_bi[0]² */
    double want = 0;
    for (int b = 0; b < 2; b++)
        for (int64_t i = 0; i < k; i++) want -= g[b * k + i] * lam[b * k + i] * V[b * n * k + i] * V[b * n * k + i];
    TU_CLOSE(dM[sla_pattern_find(pm, 0, 0)], want, 1e-13);
    free(m); free(a2); free(dA); free(dM); free(dMs); free(dAb);
    sla_pattern_free(&pa); sla_pattern_free(&pm);
}

typedef struct alloc_case {
    const sla_matrix *A, *M;
    const sla_eigsh_options *o;
    double *lam, *V;
    const double *gv;
    double *dA, *dM;
} alloc_case;

static sla_status forward_and_vjp(void *ctx)
{
    alloc_case *c = ctx;
    sla_status st = sla_eigsh(c->A, 2, c->o, c->lam, c->V, NULL);
    if (st == SLA_OK)
        st = sla_eigsh_generalized_vjp(c->A, c->M, 2, c->lam, c->V, c->lam, c->gv, c->dA, c->dM);
    return st;
}

/* Every allocation failing in turn (forward with M, then the VJP with eigenvector cotangents):
 * SLA_ENOMEM, never a silent success or another error. */
static void allocation_failures(void **state)
{
    (void)state;
    NEED_DIRECT();
    if (!have_method(SLA_METHOD_LDLT)) skip();
    int64_t n = 60;
    sla_pattern *pa, *pm; double *a, *m;
    fem1d(n, &pa, &a, &pm, &m);
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a), M = sla_matrix_view(pm, SLA_FLOAT64, 1, m);
    const sla_eigsh_method ms[] = {SLA_EIGSH_DENSE, SLA_EIGSH_LANCZOS, SLA_EIGSH_ARPACK,
                                   SLA_EIGSH_LOBPCG};
    double lam[2], V[120], gv[120], dA[200], dM[200];
    for (int i = 0; i < 120; i++) gv[i] = i % 7 == 0 ? 1.0 : 0.0;
    for (int q = 0; q < 4; q++) {
        if (ms[q] == SLA_EIGSH_ARPACK && !have_arpack()) continue;
        sla_eigsh_options o = sa_options(&M, ms[q], 1e-10);
        /* LDLᵀ for A − λ_i M in the VJP asked for by the VJP itself; the forward's factor
         * options pin Cholesky (no auto cost prediction, see test_eigsh.c) */
        sla_solver_options fo;
        sla_solver_options_init(&fo);
        fo.method = SLA_METHOD_CHOLESKY;
        o.factor_options = &fo;
        alloc_case c = {&A, &M, &o, lam, V, gv, dA, dM};
        eig_every_allocation_fails(sla_eigsh_method_name(ms[q]), forward_and_vjp, &c);
    }
    free(a); free(m);
    sla_pattern_free(&pa); sla_pattern_free(&pm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fem1d_closed_form),
        cmocka_unit_test(dense_references),
        cmocka_unit_test(identity_and_lumped_mass),
        cmocka_unit_test(bus1138_diagonal_mass),
        cmocka_unit_test(batch_shared_mass_and_float32),
        cmocka_unit_test(lobpcg_fem),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(vjp_finite_differences),
        cmocka_unit_test(vjp_shared_mass),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
