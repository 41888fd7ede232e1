/* eigsh: closed forms (1D/2D Laplacians), shared-matrix facts (nos6 cluster, 1138_bus), dense
 * LAPACK references, repeated and negative eigenvalues, tiny matrices, k = n, bad input,
 * batches, float32, non-convergence, preconditioned LOBPCG, and finite-difference checks of
 * the VJP for eigenvalues and eigenvectors. */
#include <lapack.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig_alloc_fail.h"
#include "testutil.h"

#define PI 3.14159265358979323846
#define SQRT1_2 0.70710678118654752440

/* ------------------------------------------------------------------------------------------ */
/* helpers                                                                                     */

static void *xmalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    assert_non_null(p);
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 1D Laplacian tridiag(−1, 2, −1) of size n plus shift·I. */
static void laplace1d(int64_t n, double shift, sla_pattern **p, double **values)
{
    int64_t *r = xmalloc(sizeof(int64_t) * 3 * n), *c = xmalloc(sizeof(int64_t) * 3 * n);
    double *v = xmalloc(sizeof(double) * 3 * n);
    int64_t q = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) { r[q] = i; c[q] = i - 1; v[q++] = -1; }
        r[q] = i; c[q] = i; v[q++] = 2 + shift;
        if (i < n - 1) { r[q] = i; c[q] = i + 1; v[q++] = -1; }
    }
    TU_OK(sla_pattern_from_coo(n, n, q, r, c, p));
    *values = xmalloc(sizeof(double) * q);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

/* Sorted closed-form spectrum of the 2D Laplacian on an mx × my grid:
 * 4 − 2cos(iπ/(mx+1)) − 2cos(jπ/(my+1)). */
static double *laplace2d_rect_spectrum(int64_t mx, int64_t my)
{
    double *ev = xmalloc(sizeof(double) * mx * my);
    for (int64_t i = 1; i <= mx; i++)
        for (int64_t j = 1; j <= my; j++)
            ev[(i - 1) * my + j - 1] = 4 - 2 * cos(i * PI / (mx + 1)) - 2 * cos(j * PI / (my + 1));
    qsort(ev, (size_t)(mx * my), sizeof(double), cmp_double);
    return ev;
}

/* The same on an m × m grid, plus shift. */
static double *laplace2d_spectrum(int64_t m, double shift)
{
    double *ev = laplace2d_rect_spectrum(m, m);
    for (int64_t i = 0; i < m * m; i++) ev[i] += shift;
    return ev;
}

/* The k wanted of a sorted spectrum ev[n], ascending: which/sigma as in eigsh. */
static void pick(const double *ev, int64_t n, int64_t k, sla_eigsh_which w, double sigma, double *out)
{
    double *key = xmalloc(sizeof(double) * n);
    int64_t *idx = xmalloc(sizeof(int64_t) * n);
    for (int64_t i = 0; i < n; i++) {
        idx[i] = i;
        key[i] = !isnan(sigma) ? fabs(ev[i] - sigma) : w == SLA_EIGSH_LM ? -fabs(ev[i]) :
                 w == SLA_EIGSH_SM ? fabs(ev[i]) : w == SLA_EIGSH_LA ? -ev[i] : ev[i];
    }
    for (int64_t i = 1; i < n; i++)          /* insertion sort by key (n small in tests) */
        for (int64_t j = i; j > 0 && key[idx[j]] < key[idx[j - 1]]; j--) {
            int64_t t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t;
        }
    for (int64_t i = 0; i < k; i++) out[i] = ev[idx[i]];
    qsort(out, (size_t)k, sizeof(double), cmp_double);
    free(key); free(idx);
}

/* All eigenvalues (ascending) of batch element 0 with LAPACK dsyev. */
static double *dense_spectrum(const sla_matrix *A)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double *D = xmalloc(sizeof(double) * n * n), *w = xmalloc(sizeof(double) * n);
    sla_matrix A0 = *A;
    A0.batch = 1;
    TU_OK(sla_matrix_to_dense(&A0, D));
    lapack_int nn = (lapack_int)n, lwork = -1, info = 0;
    double q;
    LAPACK_dsyev("N", "U", &nn, D, &nn, w, &q, &lwork, &info);
    lwork = (lapack_int)q;
    double *work = xmalloc(sizeof(double) * lwork);
    LAPACK_dsyev("N", "U", &nn, D, &nn, w, work, &lwork, &info);
    assert_int_equal(info, 0);
    free(D); free(work);
    return w;
}

/* Checks ‖A v_i − λ_i v_i‖ ≤ tol·‖A‖₁, unit norms and orthogonality of the k columns. */
static void check_pairs(const sla_matrix *A, int64_t k, const double *lam, const double *V, double tol)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double *AV = xmalloc(sizeof(double) * A->batch * n * k), *nA = xmalloc(sizeof(double) * A->batch);
    TU_OK(sla_spmv(SLA_OP_N, 1.0, A, V, 1, k, 0.0, AV));
    TU_OK(sla_matrix_norm(A, '1', nA));
    for (int64_t b = 0; b < A->batch; b++) {
        const double *Vb = V + b * n * k, *AVb = AV + b * n * k;
        for (int64_t i = 0; i < k; i++) {
            double r = 0;
            for (int64_t q = 0; q < n; q++) {
                double d = AVb[q * k + i] - lam[b * k + i] * Vb[q * k + i];
                r += d * d;
            }
            if (!(sqrt(r) <= tol * nA[b])) fail_msg("pair %lld (batch %lld): residual %g > %g",
                                                    (long long)i, (long long)b, sqrt(r), tol * nA[b]);
            for (int64_t j = 0; j <= i; j++) {
                double d = 0;
                for (int64_t q = 0; q < n; q++) d += Vb[q * k + i] * Vb[q * k + j];
                TU_CLOSE(d, i == j ? 1.0 : 0.0, 1e-8);
            }
            if (i > 0) assert_true(lam[b * k + i] >= lam[b * k + i - 1]);
        }
    }
    free(AV); free(nA);
}

/* Runs eigsh and compares with the expected ascending values; returns the info. */
static sla_eigsh_info run(const sla_matrix *A, int64_t k, sla_eigsh_method m, sla_eigsh_which w,
                          double sigma, const double *expect, double vtol)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.method = m;
    o.which = w;
    o.sigma = sigma;
    double *lam = xmalloc(sizeof(double) * A->batch * k), *V = xmalloc(sizeof(double) * A->batch * n * k);
    sla_eigsh_info info;
    sla_status st = sla_eigsh(A, k, &o, lam, V, &info);
    if (st != SLA_OK)
        fail_msg("eigsh(method %s, which %s, sigma %g) -> %s: %s", sla_eigsh_method_name(m),
                 sla_eigsh_which_name(w), sigma, sla_status_string(st), sla_last_error());
    for (int64_t b = 0; b < A->batch; b++)
        for (int64_t i = 0; i < k; i++)
            if (!(fabs(lam[b * k + i] - expect[b * k + i]) <= vtol * fmax(1.0, fabs(expect[b * k + i]))))
                fail_msg("method %s which %s sigma %g: λ[%lld][%lld] = %.15g, expected %.15g (%s)",
                         sla_eigsh_method_name(m), sla_eigsh_which_name(w), sigma, (long long)b,
                         (long long)i, lam[b * k + i], expect[b * k + i], info.description);
    check_pairs(A, k, lam, V, 1e-9);
    assert_int_equal(info.converged, k);
    assert_true(info.max_residual <= 1e-10);
    free(lam); free(V);
    return info;
}

static int have_arpack(void) { return SLA_HAVE_ARPACK; }

/* Shift-invert and the eigenvector VJP need direct backends: Cholesky and LDLᵀ (or LU). */
static int have_method(sla_method m)
{
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        if (sla_backend_get(i, &bi) == SLA_OK && bi.available && (bi.methods & (1u << m))) return 1;
    }
    return 0;
}

#define NEED_DIRECT() do { if (!have_method(SLA_METHOD_CHOLESKY) || \
    (!have_method(SLA_METHOD_LDLT) && !have_method(SLA_METHOD_LU))) skip(); } while (0)

/* ------------------------------------------------------------------------------------------ */
/* forward                                                                                     */

static void laplace1d_closed_form(void **state)
{
    NEED_DIRECT();
    int64_t n = 400, k = 5;
    sla_pattern *p; double *v;
    laplace1d(n, 0.0, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *ev = xmalloc(sizeof(double) * n), want[8];
    for (int64_t j = 1; j <= n; j++) ev[j - 1] = 2 - 2 * cos(j * PI / (n + 1));
    const sla_eigsh_which ws[] = {SLA_EIGSH_SA, SLA_EIGSH_LA, SLA_EIGSH_SM, SLA_EIGSH_LM};
    for (int q = 0; q < 4; q++) {
        pick(ev, n, k, ws[q], NAN, want);
        run(&A, k, SLA_EIGSH_AUTO, ws[q], NAN, want, 1e-9);
        run(&A, k, SLA_EIGSH_DENSE, ws[q], NAN, want, 1e-12);
        if (ws[q] != SLA_EIGSH_SM) run(&A, k, SLA_EIGSH_LOBPCG, ws[q], NAN, want, 1e-9);
        /* LM with Lanczos/ARPACK is regular mode, too slow for this clustered spectrum */
        if (ws[q] == SLA_EIGSH_LM) continue;
        run(&A, k, SLA_EIGSH_LANCZOS, ws[q], NAN, want, 1e-9);
        if (have_arpack()) run(&A, k, SLA_EIGSH_ARPACK, ws[q], NAN, want, 1e-9);
    }
    /* interior eigenvalues nearest sigma = 1 (shift-invert on an indefinite A − σI) */
    pick(ev, n, k, SLA_EIGSH_LM, 1.0, want);
    run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_LM, 1.0, want, 1e-10);
    run(&A, k, SLA_EIGSH_DENSE, SLA_EIGSH_LM, 1.0, want, 1e-12);
    if (have_arpack()) run(&A, k, SLA_EIGSH_ARPACK, SLA_EIGSH_LM, 1.0, want, 1e-10);
    free(ev); free(v);
    sla_pattern_free(&p);
}

static void laplace2d_closed_form(void **state)
{
    NEED_DIRECT();
    /* 40 × 40 grid: λ(i,j) = λ(j,i), so most eigenvalues have multiplicity 2 */
    int64_t m = 40, n = m * m, k = 6;
    sla_pattern *p; double *v;
    tu_poisson2d(m, m, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *ev = laplace2d_spectrum(m, 0.0), want[8];
    assert_true(fabs(ev[1] - ev[2]) < 1e-12);   /* the test covers a repeated pair */
    const sla_eigsh_which ws[] = {SLA_EIGSH_SA, SLA_EIGSH_LA, SLA_EIGSH_SM, SLA_EIGSH_LM};
    for (int q = 0; q < 4; q++) {
        pick(ev, n, k, ws[q], NAN, want);
        sla_eigsh_info info = run(&A, k, SLA_EIGSH_AUTO, ws[q], NAN, want, 1e-9);
        if (ws[q] == SLA_EIGSH_SA || ws[q] == SLA_EIGSH_SM) {
            /* SPD: both by shift-invert at σ = 0 with a Cholesky factorization */
            assert_int_equal(info.method, SLA_EIGSH_LANCZOS);
            assert_true(info.sigma == 0.0);
            /* 42 for the first run (block 2); its double eigenvalues then need the
             * confirming run with block 3, 57 more (docs/eigsh.md, "Repeated eigenvalues") */
            if (!(info.operator_applications <= 110))
                fail_msg("%lld operator applications", (long long)info.operator_applications);
        }
        if (ws[q] != SLA_EIGSH_SM) run(&A, k, SLA_EIGSH_LOBPCG, ws[q], NAN, want, 1e-9);
    }
    pick(ev, n, k, SLA_EIGSH_LM, 3.0, want);
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_LM, 3.0, want, 1e-10);
    if (have_arpack()) {
        /* ARPACK (single-vector Lanczos) against the closed form, repeated pairs included */
        for (int q = 0; q < 3; q++) {
            pick(ev, n, k, ws[q], NAN, want);
            run(&A, k, SLA_EIGSH_ARPACK, ws[q], NAN, want, 1e-9);
        }
        pick(ev, n, k, SLA_EIGSH_LM, 3.0, want);
        run(&A, k, SLA_EIGSH_ARPACK, SLA_EIGSH_LM, 3.0, want, 1e-10);
    }
    free(ev); free(v);
    sla_pattern_free(&p);
}

/* ‖A v_i − λ_i v_i‖₂ / ‖A‖₁ of the k returned pairs (V row-major n × k). */
static void pair_residuals(const sla_matrix *A, int64_t k, const double *lam, const double *V,
                           double *res)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double *AV = xmalloc(sizeof(double) * n * k), nA;
    TU_OK(sla_spmv(SLA_OP_N, 1.0, A, V, 1, k, 0.0, AV));
    TU_OK(sla_matrix_norm(A, '1', &nA));
    for (int64_t i = 0; i < k; i++) {
        double r = 0;
        for (int64_t q = 0; q < n; q++) r += pow(AV[q * k + i] - lam[i] * V[q * k + i], 2);
        res[i] = sqrt(r) / nA;
    }
    free(AV);
}

/* 7-point 3D Laplacian on an m³ grid (an M-matrix: method auto alone would pick AMG-CG for it). */
static void laplace3d(int64_t m, sla_pattern **p, double **values)
{
    int64_t n = m * m * m, q = 0;
    int64_t *r = xmalloc(sizeof(int64_t) * 7 * n), *c = xmalloc(sizeof(int64_t) * 7 * n);
    double *v = xmalloc(sizeof(double) * 7 * n);
    for (int64_t x = 0; x < m; x++)
        for (int64_t y = 0; y < m; y++)
            for (int64_t z = 0; z < m; z++) {
                int64_t i = (x * m + y) * m + z;
                r[q] = i; c[q] = i; v[q++] = 6;
                const int64_t nb[6][3] = {{x - 1, y, z}, {x + 1, y, z}, {x, y - 1, z},
                                          {x, y + 1, z}, {x, y, z - 1}, {x, y, z + 1}};
                for (int d = 0; d < 6; d++) {
                    if (nb[d][0] < 0 || nb[d][0] >= m || nb[d][1] < 0 || nb[d][1] >= m ||
                        nb[d][2] < 0 || nb[d][2] >= m) continue;
                    r[q] = i; c[q] = (nb[d][0] * m + nb[d][1]) * m + nb[d][2]; v[q++] = -1;
                }
            }
    TU_OK(sla_pattern_from_coo(n, n, q, r, c, p));
    *values = xmalloc(sizeof(double) * q);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

/* sigma with the default factor options on an M-matrix: the factorization of A − σI is a direct
 * one (method auto with need_determinant; it once was AMG-MINRES, and shift-invert stalled at a
 * residual of 0.2), and the description holds the factor's whole description, never one cut
 * in the middle of a word ("auto: symmetric, positi; sigma given"). */
static void sigma_auto_factor(void **state)
{
    NEED_DIRECT();
    int64_t m = 10, n = m * m * m, k = 3;
    sla_pattern *p; double *v;
    laplace3d(m, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *ev = xmalloc(sizeof(double) * n), want[3];
    for (int64_t i = 1, q = 0; i <= m; i++)
        for (int64_t j = 1; j <= m; j++)
            for (int64_t l = 1; l <= m; l++)
                ev[q++] = 6 - 2 * cos(i * PI / (m + 1)) - 2 * cos(j * PI / (m + 1)) - 2 * cos(l * PI / (m + 1));
    qsort(ev, (size_t)n, sizeof(double), cmp_double);
    pick(ev, n, k, SLA_EIGSH_LM, 3.0, want);      /* a triple eigenvalue 2.9928581 */
    sla_eigsh_info info = run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_LM, 3.0, want, 1e-10);
    const char *d = info.description, *f = strstr(d, ", factor: ");
    assert_true(strlen(d) < SLA_DESCRIPTION_LEN);
    if (!f || strstr(d, "AMG") || strstr(d, "krylov")) fail_msg("not a direct factor: %s", d);
    /* the factor's description (with its "; auto: ..." clauses) is whole: the same solver made
     * here describes itself identically */
    int64_t nnz = sla_pattern_nnz(p);
    double *w = xmalloc(sizeof(double) * nnz);
    memcpy(w, v, sizeof(double) * nnz);
    for (int64_t i = 0; i < n; i++) w[sla_pattern_find(p, i, i)] -= info.sigma;
    sla_matrix S = sla_matrix_view(p, SLA_FLOAT64, 1, w);
    sla_solver_options so;
    sla_solver_options_init(&so);
    so.need_determinant = 1;
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&S, &so, &s));
    assert_non_null(strstr(sla_solver_describe(s), "; auto: "));
    if (!strstr(d, sla_solver_describe(s))) fail_msg("factor description cut: %s", d);
    sla_solver_free(&s);
    free(w);
    const char *tail = "; sigma given: shift-invert";
    assert_true(strlen(d) > strlen(tail));
    assert_string_equal(d + strlen(d) - strlen(tail), tail);
    free(ev); free(v);
    sla_pattern_free(&p);
}

static void nos6_cluster(void **state)
{
    NEED_DIRECT();
    if (!tu_have_matrices()) skip();
    sla_pattern *p; double *v;
    tu_load("nos6.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.tol = 1e-12;
    double lam[3], V[675 * 3];
    sla_eigsh_info info;
    TU_OK(sla_eigsh(&A, 3, &o, lam, V, &info));
    /* facts of the shared matrix: 1.000015, 1.000025, 1.000042 (7 digits) */
    assert_true(fabs(lam[0] - 1.000015) < 1e-6);
    assert_true(fabs(lam[1] - 1.000025) < 1e-6);
    assert_true(fabs(lam[2] - 1.000042) < 1e-6);
    assert_true(lam[0] < lam[1] && lam[1] < lam[2]);
    check_pairs(&A, 3, lam, V, 1e-12);
    /* the dense reference agrees to 1e-9 on the cluster */
    double *w = dense_spectrum(&A);
    for (int i = 0; i < 3; i++) TU_CLOSE(lam[i], w[i], 1e-9);
    /* ARPACK on the same problem (shift-invert at σ = 0, which it cannot move: ~700 restarts
     * within the default maxiter), SA and SM, agrees with Lanczos and the dense reference */
    if (have_arpack()) {
        const sla_eigsh_which ws[] = {SLA_EIGSH_SA, SLA_EIGSH_SM};
        for (int q = 0; q < 2; q++) {
            double la[3], lb[3], Va[675 * 3];
            sla_eigsh_info ia, ib;
            o.which = ws[q];
            o.tol = 1e-10;
            o.method = SLA_EIGSH_ARPACK;
            TU_OK(sla_eigsh(&A, 3, &o, la, Va, &ia));
            assert_int_equal(ia.method, SLA_EIGSH_ARPACK);
            assert_int_equal(ia.converged, 3);
            assert_true(ia.sigma == 0.0);
            check_pairs(&A, 3, la, Va, 1e-10);
            o.method = SLA_EIGSH_LANCZOS;
            TU_OK(sla_eigsh(&A, 3, &o, lb, NULL, &ib));
            for (int i = 0; i < 3; i++) {
                TU_CLOSE(la[i], lb[i], 1e-9);
                TU_CLOSE(la[i], w[i], 1e-9);
            }
        }
        /* stopped by maxiter: ARPACK's last Ritz pairs, near the cluster, with their true
         * residuals (they used to be zeros) */
        double res[3], mine[3];
        o.which = SLA_EIGSH_SA;
        o.method = SLA_EIGSH_ARPACK;
        o.maxiter = 30;
        o.residuals = res;
        assert_int_equal(sla_eigsh(&A, 3, &o, lam, V, &info), SLA_NOT_CONVERGED);
        assert_true(info.restarts == 31 || info.restarts == 30);
        pair_residuals(&A, 3, lam, V, mine);
        for (int i = 0; i < 3; i++) {
            /* λ1 = 1.000015 is the smallest eigenvalue: Rayleigh quotients lie above it */
            if (!(lam[i] >= w[0] - 1e-9 && lam[i] < 1.001))
                fail_msg("pair %d: λ = %.10g is not a Ritz value near the cluster", i, lam[i]);
            assert_true(res[i] > 0 && res[i] < 1e-3);
            TU_CLOSE(mine[i], res[i], 1e-6);
        }
        assert_true(lam[0] < 1.0001);
    }
    free(w); free(v);
    sla_pattern_free(&p);
}

static void bus1138_smallest(void **state)
{
    NEED_DIRECT();
    if (!tu_have_matrices()) skip();
    sla_pattern *p; double *v;
    tu_load("1138_bus.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *w = dense_spectrum(&A);
    const sla_eigsh_method ms[] = {SLA_EIGSH_AUTO, SLA_EIGSH_LANCZOS};
    for (int q = 0; q < 2; q++) {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = SLA_EIGSH_SA;
        o.method = ms[q];
        o.tol = 1e-12;
        double lam[2], V[1138 * 2];
        TU_OK(sla_eigsh(&A, 2, &o, lam, V, NULL));
        /* facts: λmin 3.517e-3, λ2 9.862e-2 (4 digits) */
        assert_true(fabs(lam[0] - 3.517e-3) < 0.0005e-3 * 1.01);
        assert_true(fabs(lam[1] - 9.862e-2) < 0.0005e-2 * 1.01);
        TU_CLOSE(lam[0], w[0], 1e-7);
        TU_CLOSE(lam[1], w[1], 1e-7);
    }
    free(w); free(v);
    sla_pattern_free(&p);
}

/* A random sparse symmetric matrix (band + random entries), n small, dense reference. */
static void random_symmetric(int64_t n, uint64_t seed, sla_pattern **p, double **values)
{
    int64_t cap = 8 * n, q = 0;
    int64_t *r = xmalloc(sizeof(int64_t) * cap), *c = xmalloc(sizeof(int64_t) * cap);
    double *v = xmalloc(sizeof(double) * cap);
    for (int64_t i = 0; i < n; i++) { r[q] = i; c[q] = i; v[q++] = 3 * tu_rand(&seed); }
    for (int64_t t = 0; t < 3 * n / 2; t++) {
        int64_t i = (int64_t)((tu_rand(&seed) + 1) / 2 * n) % n, j = (int64_t)((tu_rand(&seed) + 1) / 2 * n) % n;
        if (i == j) continue;
        double a = tu_rand(&seed);
        r[q] = i; c[q] = j; v[q++] = a;
        r[q] = j; c[q] = i; v[q++] = a;
    }
    TU_OK(sla_pattern_from_coo(n, n, q, r, c, p));
    *values = xmalloc(sizeof(double) * q);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

static void dense_references(void **state)
{
    NEED_DIRECT();
    int64_t n = 360, k = 4;
    sla_pattern *p; double *v;
    random_symmetric(n, 7, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *w = dense_spectrum(&A), want[8];
    const sla_eigsh_which ws[] = {SLA_EIGSH_SA, SLA_EIGSH_LA, SLA_EIGSH_SM, SLA_EIGSH_LM};
    for (int q = 0; q < 4; q++) {
        pick(w, n, k, ws[q], NAN, want);
        run(&A, k, SLA_EIGSH_AUTO, ws[q], NAN, want, 1e-9);
        run(&A, k, SLA_EIGSH_LANCZOS, ws[q], NAN, want, 1e-9);
        if (ws[q] != SLA_EIGSH_SM) run(&A, k, SLA_EIGSH_LOBPCG, ws[q], NAN, want, 1e-9);
    }
    pick(w, n, k, SLA_EIGSH_LM, 0.3, want);
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_LM, 0.3, want, 1e-10);
    free(w); free(v);
    sla_pattern_free(&p);
}

static void negative_eigenvalues(void **state)
{
    NEED_DIRECT();
    /* 2D Laplacian − 5 I: spectrum in (−5, 3), so LM are the most negative, SM straddle 0 */
    int64_t m = 30, n = m * m, k = 5;
    sla_pattern *p; double *v;
    tu_poisson2d(m, m, &p, &v);
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++) if (v[s] == 4) v[s] = 4 - 5;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *ev = laplace2d_spectrum(m, -5.0), want[8];
    pick(ev, n, k, SLA_EIGSH_LM, NAN, want);
    assert_true(want[k - 1] < 0);
    run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_LM, NAN, want, 1e-9);
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_LM, NAN, want, 1e-9);
    pick(ev, n, k, SLA_EIGSH_SM, NAN, want);
    assert_true(want[0] < 0 && want[k - 1] > 0);
    run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_SM, NAN, want, 1e-10);
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_SM, NAN, want, 1e-10);
    free(ev); free(v);
    sla_pattern_free(&p);
}

static void hangglider_indefinite(void **state)
{
    NEED_DIRECT();
    if (!tu_have_matrices()) skip();
    sla_pattern *p; double *v;
    tu_load("hangGlider_2.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    int64_t n = sla_pattern_nrows(p), k = 4;
    double *w = dense_spectrum(&A), want[8];
    /* inertia (+914, −733, 0) */
    int64_t neg = 0;
    for (int64_t i = 0; i < n; i++) neg += w[i] < 0;
    assert_int_equal(neg, 733);
    pick(w, n, k, SLA_EIGSH_SM, NAN, want);
    run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_SM, NAN, want, 1e-8);
    pick(w, n, k, SLA_EIGSH_LM, NAN, want);
    run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_LM, NAN, want, 1e-8);
    free(w); free(v);
    sla_pattern_free(&p);
}

/* A graph Laplacian (2D grid, Neumann: the path's tridiag(−1, 2, −1) with 1 at its ends, in
 * each direction) is singular and attains its Gershgorin lower bound 0. SA's shift below the spectrum then sat
 * 1e-10·‖A‖₁ from λ = 0 and Lanczos stalled (2 of 4 pairs); closed form
 * λ = (2 − 2cos(iπ/m)) + (2 − 2cos(jπ/m)), i, j = 0 … m − 1. */
static void graph_laplacian_smallest(void **state)
{
    NEED_DIRECT();
    const int64_t m = 40, n = m * m, k = 4;
    int64_t *r = xmalloc(sizeof(int64_t) * 5 * n), *c = xmalloc(sizeof(int64_t) * 5 * n);
    double *v = xmalloc(sizeof(double) * 5 * n);
    int64_t nnz = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) {
            int64_t q = i * m + j, deg = 0;
            const int64_t nb[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
            for (int t = 0; t < 4; t++) {
                if (nb[t][0] < 0 || nb[t][0] >= m || nb[t][1] < 0 || nb[t][1] >= m) continue;
                r[nnz] = q; c[nnz] = nb[t][0] * m + nb[t][1]; v[nnz++] = -1; deg++;
            }
            r[nnz] = q; c[nnz] = q; v[nnz++] = (double)deg;
        }
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(n, n, nnz, r, c, &p));
    double *cv = xmalloc(sizeof(double) * nnz);
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, cv));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, cv);
    double mu = 2 - 2 * cos(PI / (double)m), want[4] = {0, mu, mu, 2 * mu};
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_SA, NAN, want, 1e-10);
    /* σ = 0 is the eigenvalue itself; the factorization (KLU: rcond 2.4e-14, no zero pivot)
     * succeeds, so the rounding-level pivot ratio must be what moves σ (it stalled at 0 of 4) */
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_LM, 0.0, want, 1e-10);
    run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_SM, NAN, want, 1e-10);
    free(r); free(c); free(v); free(cv);
    sla_pattern_free(&p);
}

static void identity_repeated(void **state)
{
    NEED_DIRECT();
    int64_t n = 200, k = 5;
    int64_t *r = xmalloc(sizeof(int64_t) * n);
    double *one = xmalloc(sizeof(double) * n), want[5] = {1, 1, 1, 1, 1};
    for (int64_t i = 0; i < n; i++) { r[i] = i; one[i] = 1; }
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(n, n, n, r, r, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, one);
    run(&A, k, SLA_EIGSH_DENSE, SLA_EIGSH_LA, NAN, want, 1e-14);
    run(&A, k, SLA_EIGSH_LOBPCG, SLA_EIGSH_SA, NAN, want, 1e-12);
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_LM, NAN, want, 1e-12);
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_SM, NAN, want, 1e-12);
    /* sigma = 1 is the eigenvalue itself: A − σI = 0 is singular, σ is moved and retried */
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_LM, 1.0, want, 1e-12);
    free(r); free(one);
    sla_pattern_free(&p);
}

static void tiny_and_full(void **state)
{
    /* 1 × 1 */
    int64_t z = 0;
    double three = 3, lam[4], V[16];
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(1, 1, 1, &z, &z, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, &three);
    TU_OK(sla_eigsh(&A, 1, NULL, lam, V, NULL));
    assert_true(lam[0] == 3 && V[0] == 1);
    sla_pattern_free(&p);
    /* 2 × 2 [[2, 1], [1, 2]]: 1 with (1, −1)/√2 (tie: first component positive), 3 with (1, 1)/√2 */
    int64_t r2[] = {0, 0, 1, 1}, c2[] = {0, 1, 0, 1};
    double v2[] = {2, 1, 1, 2};
    TU_OK(sla_pattern_from_coo(2, 2, 4, r2, c2, &p));
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v2);
    TU_OK(sla_eigsh(&A, 2, NULL, lam, V, NULL));
    TU_CLOSE(lam[0], 1, 1e-15);
    TU_CLOSE(lam[1], 3, 1e-15);
    /* V row-major [2][2]: column 0 = (1, −1)/√2, column 1 = (1, 1)/√2 */
    TU_CLOSE(V[0], SQRT1_2, 1e-15);
    TU_CLOSE(V[2], -SQRT1_2, 1e-15);
    TU_CLOSE(V[1], SQRT1_2, 1e-15);
    TU_CLOSE(V[3], SQRT1_2, 1e-15);
    sla_pattern_free(&p);
    /* k = n: the dense path returns the whole spectrum */
    int64_t n = 50;
    double *v;
    laplace1d(n, 0.0, &p, &v);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *ev = xmalloc(sizeof(double) * n);
    for (int64_t j = 1; j <= n; j++) ev[j - 1] = 2 - 2 * cos(j * PI / (n + 1));
    sla_eigsh_info info = run(&A, n, SLA_EIGSH_AUTO, SLA_EIGSH_LM, NAN, ev, 1e-13);
    assert_int_equal(info.method, SLA_EIGSH_DENSE);
    /* iterative methods refuse k = n with a message */
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.method = SLA_EIGSH_LOBPCG;
    double *lam50 = xmalloc(sizeof(double) * n);
    assert_int_equal(sla_eigsh(&A, n, &o, lam50, NULL, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "too large"));
    assert_int_equal(strncmp(sla_last_error(), "sla_eigsh: method lobpcg", 24), 0);
    free(ev); free(v); free(lam50);
    sla_pattern_free(&p);
}

/* The zero matrix (stored zeros, or no entry at all): every eigenvalue is 0 with residual 0,
 * converged (it once reported residual inf, "0 of k converged"). */
static void zero_matrix(void **state)
{
    int64_t n = 3, r[3] = {0, 1, 2};
    double zeros[3] = {0, 0, 0}, lam[2] = {9, 9}, V[6];
    sla_pattern *p;
    for (int stored = 0; stored <= 1; stored++) {
        TU_OK(sla_pattern_from_coo(n, n, stored ? 3 : 0, r, r, &p));
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, zeros);
        sla_eigsh_info info;
        TU_OK(sla_eigsh(&A, 2, NULL, lam, V, &info));
        assert_true(lam[0] == 0 && lam[1] == 0 && info.converged == 2 && info.max_residual == 0);
        sla_pattern_free(&p);
    }
}

/* A start block with dependent columns (all equal): LOBPCG replaces them by random directions
 * and converges (with 4 equal columns in a block of 6, a non-orthonormal noise column once
 * survived SVQB and LOBPCG stopped with 1 of 2 pairs and λ₁ = 2.83). */
static void dependent_start_block(void **state)
{
    int64_t n = 50, k = 2;
    sla_pattern *p;
    double *v, lam[2], ev[2];
    laplace1d(n, 0.0, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    for (int64_t j = 1; j <= k; j++) ev[j - 1] = 2 - 2 * cos(j * PI / (n + 1));
    double *v0 = xmalloc(sizeof(double) * n * 6);
    for (int64_t nv0 = 1; nv0 <= 6; nv0++) {
        for (int64_t i = 0; i < n * nv0; i++) v0[i] = 1.0;
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.method = SLA_EIGSH_LOBPCG;
        o.which = SLA_EIGSH_SA;
        o.v0 = v0;
        o.nv0 = nv0;
        sla_eigsh_info info;
        TU_OK(sla_eigsh(&A, k, &o, lam, NULL, &info));
        TU_CLOSE(lam[0], ev[0], 1e-10);
        TU_CLOSE(lam[1], ev[1], 1e-10);
    }
    free(v0); free(v);
    sla_pattern_free(&p);
}

static void bad_input(void **state)
{
    int64_t r[] = {0, 0, 1, 1}, c[] = {0, 1, 0, 1};
    double unsym[] = {2, 1, 1.5, 2}, lam[2], V[4];
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(2, 2, 4, r, c, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, unsym);
    assert_int_equal(sla_eigsh(&A, 1, NULL, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not symmetric"));
    assert_non_null(strstr(sla_last_error(), "a[0][1] = 1"));
    double sym[] = {2, 1, 1, 2};
    A.values = sym;
    assert_int_equal(sla_eigsh(&A, 0, NULL, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "k = 0"));
    assert_int_equal(sla_eigsh(&A, 3, NULL, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "k = 3 is not in [1, n] = [1, 2]"));
    assert_int_equal(sla_eigsh(&A, 1, NULL, NULL, V, NULL), SLA_EINVAL);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.sigma = 1.0;
    assert_int_equal(sla_eigsh(&A, 1, &o, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "only LM"));
    /* the message starts with the public function (it started with "check_options:") */
    assert_int_equal(strncmp(sla_last_error(), "sla_eigsh: options.which", 24), 0);
    sla_eigsh_options_init(&o);
    o.method = (sla_eigsh_method)42;
    assert_int_equal(sla_eigsh(&A, 1, &o, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "options.method = 42"));
    double nan_v[] = {2, NAN, NAN, 2};
    A.values = nan_v;
    assert_int_equal(sla_eigsh(&A, 1, NULL, lam, V, NULL), SLA_ENONFINITE);
    sla_pattern_free(&p);
    /* not square */
    int64_t r3[] = {0, 1}, c3[] = {0, 2};
    TU_OK(sla_pattern_from_coo(2, 3, 2, r3, c3, &p));
    A = sla_matrix_view(p, SLA_FLOAT64, 1, sym);
    assert_int_equal(sla_eigsh(&A, 1, NULL, lam, V, NULL), SLA_ESHAPE);
    assert_non_null(strstr(sla_last_error(), "square"));
    sla_pattern_free(&p);
    /* LOBPCG with sigma, LOBPCG SM on an indefinite matrix */
    double *v;
    laplace1d(100, -2.0, &p, &v);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double lam5[5];
    sla_eigsh_options_init(&o);
    o.method = SLA_EIGSH_LOBPCG;
    o.sigma = 0.5;
    assert_int_equal(sla_eigsh(&A, 5, &o, lam5, NULL, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "sigma"));
    o.sigma = NAN;
    o.which = SLA_EIGSH_SM;
    assert_int_equal(sla_eigsh(&A, 5, &o, lam5, NULL, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "interior"));
    free(v);
    sla_pattern_free(&p);
}

/* Outputs overlapping inputs or each other: SLA_EINVAL naming both arrays, nothing written (the
 * reviewer's case: eigenvalues = A's values overwrote the matrix). */
static void aliasing_rejected(void **state)
{
    sla_pattern *p; double *v;
    laplace1d(12, 0.0, &p, &v);
    int64_t n = 12, k = 2, nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *keep = xmalloc(sizeof(double) * nnz), buf[64], lam[2], V[24], dv[64];
    memcpy(keep, v, sizeof(double) * nnz);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.method = SLA_EIGSH_DENSE;
    o.which = SLA_EIGSH_SA;
    struct { void *ev, *vec, *res; const char *a, *b; } cases[] = {
        {v, V, NULL, "eigenvalues", "A's values"},
        {lam, v + 3, NULL, "eigenvectors", "A's values"},
        {lam, V, v + nnz - 1, "options.residuals", "A's values"},
        {buf, buf + 1, NULL, "eigenvectors", "eigenvalues"},
        {buf, V, buf + 1, "options.residuals", "eigenvalues"},
        {lam, buf, buf + 20, "options.residuals", "eigenvectors"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        o.residuals = cases[c].res;
        sla_clear_error();
        assert_int_equal(sla_eigsh(&A, k, &o, cases[c].ev, cases[c].vec, NULL), SLA_EINVAL);
        char want[96];
        snprintf(want, sizeof want, "%s overlaps %s", cases[c].a, cases[c].b);
        if (!strstr(sla_last_error(), want)) fail_msg("case %zu: '%s' lacks '%s'", c, sla_last_error(), want);
        assert_memory_equal(v, keep, sizeof(double) * nnz);
    }
    /* v0 is an input too */
    o.residuals = NULL;
    double v0[24] = {0};
    for (int64_t i = 0; i < n; i++) v0[i * 2] = 1;
    o.v0 = v0;
    o.nv0 = 2;
    assert_int_equal(sla_eigsh(&A, k, &o, lam, v0 + 4, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "eigenvectors overlaps options.v0"));
    /* the VJP: dvalues against each input */
    o.v0 = NULL;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
    double gl[2] = {1, -1}, gv[24] = {0}, lam_c[2], V_c[24];
    memcpy(lam_c, lam, sizeof lam);
    memcpy(V_c, V, sizeof V);
    gv[5] = 1;
    const void *ins[] = {v, lam, V, gl, gv};
    const char *names[] = {"A's values", "eigenvalues", "eigenvectors", "g_eigenvalues", "g_eigenvectors"};
    for (int c = 0; c < 5; c++) {
        void *out = (void *)ins[c];
        sla_clear_error();
        assert_int_equal(sla_eigsh_vjp(&A, k, lam, V, gl, gv, out), SLA_EINVAL);
        char want[96];
        snprintf(want, sizeof want, "dvalues overlaps %s", names[c]);
        if (!strstr(sla_last_error(), want)) fail_msg("vjp %d: '%s' lacks '%s'", c, sla_last_error(), want);
    }
    assert_memory_equal(v, keep, sizeof(double) * nnz);
    assert_memory_equal(lam, lam_c, sizeof lam);
    assert_memory_equal(V, V_c, sizeof V);
    assert_true(gl[0] == 1 && gl[1] == -1 && gv[5] == 1);
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, gl, gv, dv));
    free(keep); free(v);
    sla_pattern_free(&p);
}

static void batched_values(void **state)
{
    NEED_DIRECT();
    /* three matrices on one pattern: A_b = (b + 1)·L + b·I, L on a 24 × 25 grid (simple
     * eigenvalues, so that single-vector ARPACK is a fair comparison) */
    int64_t mx = 24, my = 25, n = mx * my, k = 4, B = 3;
    sla_pattern *p; double *v;
    tu_poisson2d(mx, my, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = xmalloc(sizeof(double) * B * nnz), *ev = laplace2d_rect_spectrum(mx, my);
    double want[3 * 4];
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t b = 0; b < B; b++) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++)
                vb[b * nnz + s] = (b + 1) * v[s] + (ci[s] == i ? (double)b : 0.0);
        for (int64_t i = 0; i < k; i++) want[b * k + i] = (b + 1) * ev[i] + b;
    }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, B, vb);
    run(&A, k, SLA_EIGSH_AUTO, SLA_EIGSH_SA, NAN, want, 1e-9);
    run(&A, k, SLA_EIGSH_LOBPCG, SLA_EIGSH_SA, NAN, want, 1e-9);
    run(&A, k, SLA_EIGSH_LANCZOS, SLA_EIGSH_SM, NAN, want, 1e-9);
    if (have_arpack()) run(&A, k, SLA_EIGSH_ARPACK, SLA_EIGSH_SM, NAN, want, 1e-9);
    free(v); free(vb); free(ev);
    sla_pattern_free(&p);
}

static void float32_values(void **state)
{
    int64_t m = 20, n = m * m, k = 3;
    sla_pattern *p; double *v;
    tu_poisson2d(m, m, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    float *vf = xmalloc(sizeof(float) * nnz), lam[3], *V = xmalloc(sizeof(float) * n * k);
    for (int64_t s = 0; s < nnz; s++) vf[s] = (float)v[s];
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    double *ev = laplace2d_spectrum(m, 0.0);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = SLA_EIGSH_LOBPCG;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
    for (int i = 0; i < k; i++) TU_CLOSE(lam[i], ev[i], 1e-6);
    double nv = 0;
    for (int64_t q = 0; q < n; q++) nv += (double)V[q * k] * V[q * k];
    TU_CLOSE(nv, 1.0, 1e-6);
    free(v); free(vf); free(V); free(ev);
    sla_pattern_free(&p);
}

static void not_converged_reported(void **state)
{
    int64_t m = 30, n = m * m, k = 4;
    sla_pattern *p; double *v;
    tu_poisson2d(m, m, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double lam[4], *V = xmalloc(sizeof(double) * n * k), res[4], mine[4];
    /* LOBPCG (SA) with 2 iterations, Lanczos and ARPACK in regular mode (LM) with 1 restart:
     * the outputs are the best approximations (Ritz pairs, not zeros) and the reported
     * residuals are theirs */
    const sla_eigsh_method ms[] = {SLA_EIGSH_LOBPCG, SLA_EIGSH_LANCZOS, SLA_EIGSH_ARPACK};
    const sla_eigsh_which ws[] = {SLA_EIGSH_SA, SLA_EIGSH_LM, SLA_EIGSH_LM};
    for (int q = 0; q < 3; q++) {
        if (ms[q] == SLA_EIGSH_ARPACK && !have_arpack()) continue;
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = ws[q];
        o.method = ms[q];
        o.maxiter = q == 0 ? 2 : 1;
        o.residuals = res;
        sla_eigsh_info info;
        assert_int_equal(sla_eigsh(&A, k, &o, lam, V, &info), SLA_NOT_CONVERGED);
        assert_non_null(strstr(sla_last_error(), "converged"));
        assert_true(info.converged < k);
        assert_true(info.max_residual > o.tol);
        double mx = 0;
        for (int i = 0; i < k; i++) mx = fmax(mx, res[i]);
        assert_true(mx == info.max_residual);
        pair_residuals(&A, k, lam, V, mine);
        for (int i = 0; i < k; i++) {
            /* Rayleigh quotients of unit vectors lie in the spectrum [0, 8] */
            if (!(lam[i] > 0 && lam[i] < 8 && isfinite(res[i])))
                fail_msg("method %s: pair %d: λ = %g, residual %g", sla_eigsh_method_name(ms[q]),
                         i, lam[i], res[i]);
            TU_CLOSE(mine[i], res[i], 1e-6);
        }
    }
    free(v); free(V);
    sla_pattern_free(&p);
}

/* Exact inverse as a preconditioner: LOBPCG converges in a few iterations. */
static void preconditioned_lobpcg(void **state)
{
    NEED_DIRECT();
    int64_t m = 40, n = m * m, k = 4;
    sla_pattern *p; double *v;
    tu_poisson2d(m, m, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *ev = laplace2d_spectrum(m, 0.0), lam[4], *V = xmalloc(sizeof(double) * n * k);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = SLA_EIGSH_LOBPCG;
    sla_eigsh_info plain, prec;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, &plain));
    sla_solver *s = NULL;
    sla_solver_options so;
    sla_solver_options_init(&so);
    so.method = SLA_METHOD_CHOLESKY;
    TU_OK(sla_solver_create(&A, &so, &s));
    o.precond_solver = s;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, &prec));
    for (int i = 0; i < k; i++) TU_CLOSE(lam[i], ev[i], 1e-9);
    assert_true(prec.precond_applications > 0);
    assert_true(prec.iterations * 4 < plain.iterations);
    /* a start block of exact eigenvectors: converged at once */
    o.precond_solver = NULL;
    double *V0 = xmalloc(sizeof(double) * n * k);      /* v0 is an input: not the output V */
    memcpy(V0, V, sizeof(double) * n * k);
    o.v0 = V0;
    o.nv0 = k;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, &prec));
    assert_true(prec.iterations <= 2);
    sla_solver_free(&s);
    free(v); free(V); free(V0); free(ev);
    sla_pattern_free(&p);
}

/* ------------------------------------------------------------------------------------------ */
/* gradients                                                                                   */

/* L = Σ c_i λ_i + Σ ⟨d_i, v_i⟩ for the k eigenpairs of A (values vals). */
static double loss(const sla_pattern *p, const double *vals, int64_t k, const sla_eigsh_options *o,
                   const double *c, const double *d)
{
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, vals);
    double *lam = xmalloc(sizeof(double) * k), *V = xmalloc(sizeof(double) * n * k);
    TU_OK(sla_eigsh(&A, k, o, lam, V, NULL));
    double L = 0;
    for (int64_t i = 0; i < k; i++) L += (c ? c[i] : 0) * lam[i];
    if (d) for (int64_t q = 0; q < n * k; q++) L += d[q] * V[q];
    free(lam); free(V);
    return L;
}

/* Central differences along symmetric perturbations of the pairs (r, c), (c, r), compared with
 * the sum of the two slots of the VJP (each stored entry is an independent variable). */
static void fd_check(const sla_pattern *p, double *vals, int64_t k, const sla_eigsh_options *o,
                     int with_values, int with_vectors, uint64_t seed)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    double *c = xmalloc(sizeof(double) * k), *d = xmalloc(sizeof(double) * n * k);
    tu_fill_random(c, k, seed);
    tu_fill_random(d, n * k, seed + 1);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, vals);
    double *lam = xmalloc(sizeof(double) * k), *V = xmalloc(sizeof(double) * n * k);
    double *g = xmalloc(sizeof(double) * nnz);
    TU_OK(sla_eigsh(&A, k, o, lam, V, NULL));
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, with_values ? c : NULL, with_vectors ? d : NULL, g));
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    double gmax = 0;
    for (int64_t s = 0; s < nnz; s++) gmax = fmax(gmax, fabs(g[s]));
    /* h balances the truncation error O(h²/gap²) against the forward's accuracy (the dense
     * path's, ~1e-15/h) */
    double h = 1e-6;
    int checked = 0;
    for (int64_t s = 0; s < nnz && checked < 12; s += 1 + nnz / 12) {
        int64_t t = sla_pattern_find(p, ci[s], ri[s]);
        double save_s = vals[s], save_t = vals[t];
        vals[s] += h; if (t != s) vals[t] += h;
        double Lp = loss(p, vals, k, o, with_values ? c : NULL, with_vectors ? d : NULL);
        vals[s] = save_s - h; if (t != s) vals[t] = save_t - h;
        double Lm = loss(p, vals, k, o, with_values ? c : NULL, with_vectors ? d : NULL);
        vals[s] = save_s; vals[t] = save_t;
        double fd = (Lp - Lm) / (2 * h), an = g[s] + (t != s ? g[t] : 0.0);
        /* relative error 1e-6, relative to the gradient's largest entry */
        if (!(fabs(fd - an) <= 1e-6 * fmax(fabs(an), gmax)))
            fail_msg("slot %lld (%lld, %d): VJP %.12g, finite differences %.12g", (long long)s,
                     (long long)ri[s], ci[s], an, fd);
        checked++;
    }
    free(c); free(d); free(lam); free(V); free(g);
}

static void vjp_finite_differences(void **state)
{
    NEED_DIRECT();
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.tol = 1e-13;
    /* random sparse symmetric, n = 60: dense path */
    sla_pattern *p; double *v;
    random_symmetric(60, 3, &p, &v);
    o.which = SLA_EIGSH_SA;
    fd_check(p, v, 3, &o, 1, 0, 11);
    fd_check(p, v, 3, &o, 0, 1, 12);
    fd_check(p, v, 3, &o, 1, 1, 13);
    o.which = SLA_EIGSH_LM;
    fd_check(p, v, 2, &o, 1, 1, 14);
    free(v);
    sla_pattern_free(&p);
    /* n = 400 (1D Laplacian + a random diagonal): the out-of-block term by a sparse LDLᵀ of
     * A − λ_i I. Finite differences need a forward accurate to ~1e-15 (h = 1e-6 for gaps of
     * 4e-3), so they use the dense path; the VJP from Lanczos / LOBPCG outputs must agree. */
    laplace1d(400, 0.0, &p, &v);
    uint64_t seed = 5;
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++)
        if (ri[s] == ci[s]) v[s] += 0.5 * tu_rand(&seed);
    o.method = SLA_EIGSH_DENSE;
    const sla_eigsh_which ws[] = {SLA_EIGSH_SM, SLA_EIGSH_LA};
    const sla_eigsh_method ms[] = {SLA_EIGSH_LANCZOS, SLA_EIGSH_LOBPCG};
    for (int q = 0; q < 2; q++) {
        o.which = ws[q];
        o.method = SLA_EIGSH_DENSE;
        fd_check(p, v, 3, &o, 1, 1, 21 + q);
        /* the same VJP from the iterative forward */
        int64_t n = 400, k = 3, nnz = sla_pattern_nnz(p);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        double lam[3], *V = xmalloc(sizeof(double) * n * k), *g1 = xmalloc(sizeof(double) * nnz);
        double *g2 = xmalloc(sizeof(double) * nnz), c[3], *d = xmalloc(sizeof(double) * n * k);
        tu_fill_random(c, k, 31);
        tu_fill_random(d, n * k, 32);
        TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
        TU_OK(sla_eigsh_vjp(&A, k, lam, V, c, d, g1));
        o.method = ms[q];
        TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
        TU_OK(sla_eigsh_vjp(&A, k, lam, V, c, d, g2));
        double gmax = 0, dmax = 0;
        for (int64_t s = 0; s < nnz; s++) {
            gmax = fmax(gmax, fabs(g1[s]));
            dmax = fmax(dmax, fabs(g1[s] - g2[s]));
        }
        if (!(dmax <= 1e-6 * gmax)) fail_msg("%s: VJP differs from the dense one by %g (max %g)",
                                             sla_eigsh_method_name(ms[q]), dmax, gmax);
        free(V); free(g1); free(g2); free(d);
    }
    free(v);
    sla_pattern_free(&p);
}

static void vjp_degenerate(void **state)
{
    NEED_DIRECT();
    /* 2D Laplacian 12 × 12: λ_2 = λ_3 (repeated pair) */
    int64_t m = 12, n = m * m, k = 3;
    sla_pattern *p; double *v;
    tu_poisson2d(m, m, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double lam[3], *V = xmalloc(sizeof(double) * n * k), *G = xmalloc(sizeof(double) * n * k);
    double *g = xmalloc(sizeof(double) * sla_pattern_nnz(p)), gl[3] = {1, 2, 3};
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
    assert_true(fabs(lam[1] - lam[2]) < 1e-12);
    /* eigenvalue cotangents alone: always defined */
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, gl, NULL, g));
    /* a cotangent that depends on the basis of the eigenspace: a clear error */
    tu_fill_random(G, n * k, 99);
    assert_int_equal(sla_eigsh_vjp(&A, k, lam, V, NULL, G, g), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "repeated eigenvalue λ_1 = λ_2"));
    /* an invariant cotangent G = V·S with S symmetric is accepted, and finite */
    double S[9] = {1, 0.5, 0.2, 0.5, -1, 0.3, 0.2, 0.3, 2};
    for (int64_t q = 0; q < n; q++)
        for (int64_t i = 0; i < k; i++) {
            G[q * k + i] = 0;
            for (int64_t j = 0; j < k; j++) G[q * k + i] += V[q * k + j] * S[j * k + i];
        }
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, NULL, G, g));
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++) assert_true(isfinite(g[s]));
    free(v); free(V); free(G); free(g);
    sla_pattern_free(&p);
}

static void vjp_batched_float32(void **state)
{
    /* batch of two, float32: the eigenvalue VJP per batch element equals v_i[r] v_i[c] */
    int64_t m = 10, n = m * m, k = 2, B = 2;
    sla_pattern *p; double *v;
    tu_poisson2d(m, m, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    float *vf = xmalloc(sizeof(float) * B * nnz), lam[4], *V = xmalloc(sizeof(float) * B * n * k);
    float *g = xmalloc(sizeof(float) * B * nnz), gl[4] = {1, 0, 0, 1};
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < nnz; s++) vf[b * nnz + s] = (float)(v[s] * (b + 1));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, B, vf);
    TU_OK(sla_eigsh(&A, k, NULL, lam, V, NULL));
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, gl, NULL, g));
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < nnz; s++) {
            int64_t i = b == 0 ? 0 : 1;
            double e = (double)V[(b * n + ri[s]) * k + i] * V[(b * n + ci[s]) * k + i];
            TU_CLOSE(g[b * nnz + s], e, 1e-6);
        }
    free(v); free(vf); free(V); free(g);
    sla_pattern_free(&p);
}

/* Every allocation failing in turn: an error, no leak (ASan checks), never a failure swallowed
 * by a fallback. Dense, LOBPCG and the eigenvalue VJP; then shift-invert Lanczos and ARPACK
 * (the factorization of A − σI: Cholesky, and LDLᵀ for SM of an indefinite matrix) with the
 * eigenvector VJP (one LDLᵀ factorization per eigenvalue). */
typedef struct alloc_case {
    const sla_matrix *A;
    const sla_eigsh_options *o;
    double *lam, *V;
    const double *gv;
    double *g;
} alloc_case;

static sla_status forward_and_vjp(void *ctx)
{
    alloc_case *c = ctx;
    sla_status st = sla_eigsh(c->A, 2, c->o, c->lam, c->V, NULL);
    if (st == SLA_OK) st = sla_eigsh_vjp(c->A, 2, c->lam, c->V, c->lam, c->gv, c->g);
    return st;
}

static void allocation_failures(void **state)
{
    sla_pattern *p; double *v;
    laplace1d(60, 0.0, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    const sla_eigsh_method ms[] = {SLA_EIGSH_DENSE, SLA_EIGSH_LOBPCG, SLA_EIGSH_LANCZOS,
                                   SLA_EIGSH_ARPACK, SLA_EIGSH_LANCZOS};
    double lam[2], V[120], g[178], gv[120];
    for (int i = 0; i < 120; i++) gv[i] = i % 7 == 0 ? 1.0 : 0.0;
    for (int q = 0; q < 5; q++) {
        if (q >= 2 && (!have_method(SLA_METHOD_CHOLESKY) || !have_method(SLA_METHOD_LDLT))) continue;
        if (ms[q] == SLA_EIGSH_ARPACK && !have_arpack()) continue;
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.method = ms[q];
        o.which = q == 4 ? SLA_EIGSH_LM : SLA_EIGSH_SA;
        /* interior: LDLᵀ of an indefinite A − σI, asked for explicitly: method auto's cost
         * prediction (src/solve/auto.c, predict()) still clears an SLA_ENOMEM of the symbolic
         * analysis and goes on (reported to the owner of auto.c) */
        sla_solver_options fo;
        sla_solver_options_init(&fo);
        fo.method = SLA_METHOD_LDLT;
        if (q == 4) { o.sigma = 0.5; o.factor_options = &fo; }
        alloc_case c = {&A, &o, lam, V, q >= 2 ? gv : NULL, g};
        eig_every_allocation_fails(sla_eigsh_method_name(ms[q]), forward_and_vjp, &c);
    }
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(laplace1d_closed_form),
        cmocka_unit_test(laplace2d_closed_form),
        cmocka_unit_test(sigma_auto_factor),
        cmocka_unit_test(nos6_cluster),
        cmocka_unit_test(bus1138_smallest),
        cmocka_unit_test(dense_references),
        cmocka_unit_test(negative_eigenvalues),
        cmocka_unit_test(hangglider_indefinite),
        cmocka_unit_test(graph_laplacian_smallest),
        cmocka_unit_test(identity_repeated),
        cmocka_unit_test(tiny_and_full),
        cmocka_unit_test(zero_matrix),
        cmocka_unit_test(dependent_start_block),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(aliasing_rejected),
        cmocka_unit_test(batched_values),
        cmocka_unit_test(float32_values),
        cmocka_unit_test(not_converged_reported),
        cmocka_unit_test(preconditioned_lobpcg),
        cmocka_unit_test(vjp_finite_differences),
        cmocka_unit_test(vjp_degenerate),
        cmocka_unit_test(vjp_batched_float32),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
