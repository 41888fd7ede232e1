/* sla_eigsh on complex Hermitian matrices (complex128, complex64): eigenvalues against LAPACK
 * zhbevd / zhbgvd on the dense matrix for every method and which, residuals and orthonormality
 * (VᴴV = I, with M VᴴMV = I) of the complex eigenvectors, the phase convention, real matrices
 * handed as complex, batches; the VJPs against central finite differences of Hermitian
 * perturbations (PyTorch's convention: dL = Re Σ conj(G_s)·δa_s) for eigenvalue losses and a
 * phase-invariant eigenvector loss, standard and generalized; and the refusals: a non-Hermitian
 * or complex symmetric A, a phase-dependent eigenvector loss. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eig_alloc_fail.h"
#include "testutil.h"

typedef double complex zc;

/* A random sparse Hermitian n × n matrix: a tridiagonal band plus random couplings, the
 * diagonal shifted by shift (shift large: positive definite). Pattern symmetric. */
static void hermitian_matrix(int64_t n, uint64_t seed, double shift, sla_pattern **p, zc **values)
{
    int64_t cap = 8 * n, nnz = 0;
    int64_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    zc *v = malloc((size_t)cap * sizeof *v);
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++) {
        r[nnz] = i; c[nnz] = i; v[nnz] = shift + 2.0 * tu_rand(&st); nnz++;
        int64_t js[2] = {(i + 1) % n, (int64_t)((tu_rand(&st) + 1) * 0.5 * n)};
        for (int q = 0; q < 2; q++) {
            int64_t j = js[q] < n ? js[q] : n - 1;
            if (j == i) continue;
            zc a = (tu_rand(&st) - 0.2) + I * tu_rand(&st);
            r[nnz] = i; c[nnz] = j; v[nnz] = a; nnz++;
            r[nnz] = j; c[nnz] = i; v[nnz] = conj(a); nnz++;
        }
    }
    TU_OK(sla_pattern_from_coo(n, n, nnz, r, c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, v, *values));
    free(r); free(c); free(v);
}

static zc *dense(const sla_pattern *p, const zc *a)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    zc *d = calloc((size_t)(n * n), sizeof *d);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) d[i + ci[s] * n] += a[s];
    return d;
}

/* Full upper band storage (kd = n − 1) of a dense column-major Hermitian matrix. */
static zc *full_band(int64_t n, const zc *d)
{
    zc *ab = calloc((size_t)(n * n), sizeof *ab);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i <= j; i++) ab[n - 1 + i - j + j * n] = d[i + j * n];
    return ab;
}

/* All eigenvalues ascending (with M: of the pencil) from LAPACK zhbevd / zhbgvd on the full
 * band: zheevd / zhegvd go through OpenBLAS 0.3.21's multithreaded zgemv, which segfaults for
 * n ≳ 58 with 2 threads (src/eig/hermitian.c, herm_eig). */
static void dense_eigs(const sla_pattern *p, const zc *a, const sla_pattern *pm, const zc *m,
                       double *w)
{
    int64_t n = sla_pattern_nrows(p);
    zc *d = dense(p, a), *ab = full_band(n, d), *z = malloc(sizeof *z);
    if (!m) {
        assert_int_equal(LAPACKE_zhbevd(LAPACK_COL_MAJOR, 'N', 'U', (lapack_int)n,
                                        (lapack_int)(n - 1), (lapack_complex_double *)ab,
                                        (lapack_int)n, w, (lapack_complex_double *)z, 1), 0);
    } else {
        zc *dm = dense(pm, m), *bb = full_band(n, dm);
        assert_int_equal(LAPACKE_zhbgvd(LAPACK_COL_MAJOR, 'N', 'U', (lapack_int)n,
                                        (lapack_int)(n - 1), (lapack_int)(n - 1),
                                        (lapack_complex_double *)ab, (lapack_int)n,
                                        (lapack_complex_double *)bb, (lapack_int)n, w,
                                        (lapack_complex_double *)z, 1), 0);
        free(dm);
        free(bb);
    }
    free(d);
    free(ab);
    free(z);
}

/* ‖A v_j − λ_j M v_j‖ / ‖A‖₁ ≤ rtol and VᴴMV = I (V [n][k] row-major). */
static void check_pairs(const sla_matrix *A, const sla_matrix *M, int64_t k, const double *lam,
                        const zc *V, double rtol)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    zc *av = malloc((size_t)(n * k) * sizeof *av), *mv = malloc((size_t)(n * k) * sizeof *mv);
    TU_OK(sla_spmv(SLA_OP_N, 1.0, A, V, 0, k, 0.0, av));
    if (M) TU_OK(sla_spmv(SLA_OP_N, 1.0, M, V, 0, k, 0.0, mv));
    else memcpy(mv, V, (size_t)(n * k) * sizeof *mv);
    double na;
    TU_OK(sla_matrix_norm(A, '1', &na));
    for (int64_t j = 0; j < k; j++) {
        double r = 0;
        for (int64_t i = 0; i < n; i++) r += pow(cabs(av[i * k + j] - lam[j] * mv[i * k + j]), 2);
        assert_true(sqrt(r) <= rtol * na);
        for (int64_t l = 0; l < k; l++) {
            zc g = 0;
            for (int64_t i = 0; i < n; i++) g += conj(V[i * k + l]) * mv[i * k + j];
            assert_true(cabs(g - (l == j ? 1.0 : 0.0)) < 1e-9);
        }
        /* phase convention: the largest-magnitude entry is real positive */
        /* (the first entry within 1e-12 of the largest magnitude: eig_fix_phase) */
        double mx = 0;
        for (int64_t i = 0; i < n; i++) mx = fmax(mx, cabs(V[i * k + j]));
        int64_t q = 0;
        while (cabs(V[q * k + j]) < (1 - 1e-12) * mx) q++;
        assert_true(creal(V[q * k + j]) > 0 && cimag(V[q * k + j]) == 0);
    }
    free(av); free(mv);
}

/* The k eigenvalues nearest sigma (w ascending, n of them; sigma between w[mid] and w[mid + 1]):
 * a window of k consecutive ones around it, ascending. */
static const double *nearest(const double *w, int64_t n, int64_t mid, double sigma, int64_t k)
{
    int64_t lo = mid, hi = mid + 1;
    while (hi - lo - 1 < k) {
        if (lo >= 0 && (hi >= n || sigma - w[lo] < w[hi] - sigma)) lo--;
        else hi++;
    }
    return w + lo + 1;
}

/* every method and which against zheevd */
static void methods_vs_zheevd(void **state)
{
    (void)state;
    int64_t ns[2] = {40, 400}, k = 4;
    for (int t = 0; t < 2; t++) {
        int64_t n = ns[t];
        sla_pattern *p;
        zc *a;
        hermitian_matrix(n, 11 + (uint64_t)t, 0.0, &p, &a);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
        double *w = malloc((size_t)n * sizeof *w), lam[4];
        dense_eigs(p, a, NULL, NULL, w);
        zc *V = malloc((size_t)(n * k) * sizeof *V);
        const sla_eigsh_method meth[] = {SLA_EIGSH_AUTO, SLA_EIGSH_DENSE, SLA_EIGSH_LOBPCG,
                                         SLA_EIGSH_LANCZOS};
        const sla_eigsh_which wh[] = {SLA_EIGSH_SA, SLA_EIGSH_LA, SLA_EIGSH_LM};
        for (int mi = 0; mi < 4; mi++)
            for (int wi = 0; wi < 3; wi++) {
                if (meth[mi] == SLA_EIGSH_LANCZOS && wh[wi] == SLA_EIGSH_LM) continue;
                sla_eigsh_options o;
                sla_eigsh_options_init(&o);
                o.method = meth[mi];
                o.which = wh[wi];
                sla_eigsh_info info;
                TU_OK(sla_eigsh(&A, k, &o, lam, V, &info));
                assert_int_equal(info.converged, k);
                /* shift-invert modes beyond auto's dense rule run natively (hlanczos.c) */
                int native = (meth[mi] == SLA_EIGSH_LANCZOS ||
                              (meth[mi] == SLA_EIGSH_AUTO && 2 * n > 300)) &&
                             wh[wi] != SLA_EIGSH_LM;
                assert_non_null(strstr(info.description, native ? "complex Hermitian thick-restart "
                                       "Lanczos" : "real symmetric"));
                double ref[4];
                if (wh[wi] == SLA_EIGSH_SA) memcpy(ref, w, sizeof ref);
                else if (wh[wi] == SLA_EIGSH_LA) memcpy(ref, w + n - k, sizeof ref);
                else {
                    /* the k largest |λ|, ascending */
                    int64_t lo = 0, hi = n - 1, c = 0;
                    double sel[4];
                    while (c < k) sel[c++] = fabs(w[lo]) > fabs(w[hi]) ? w[lo++] : w[hi--];
                    for (int i = 0; i < 4; i++)
                        for (int j = i + 1; j < 4; j++)
                            if (sel[j] < sel[i]) { double x = sel[i]; sel[i] = sel[j]; sel[j] = x; }
                    memcpy(ref, sel, sizeof ref);
                }
                for (int64_t j = 0; j < k; j++) assert_true(fabs(lam[j] - ref[j]) < 1e-9);
                check_pairs(&A, NULL, k, lam, V, 1e-9);
            }
        /* shift-invert: the k nearest sigma */
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.sigma = 0.5 * (w[n / 2] + w[n / 2 + 1]);
        o.method = SLA_EIGSH_LANCZOS;
        TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
        const double *near = nearest(w, n, n / 2, o.sigma, k);
        for (int64_t j = 0; j < k; j++) assert_true(fabs(lam[j] - near[j]) < 1e-9);
        check_pairs(&A, NULL, k, lam, V, 1e-9);
        free(w); free(V); free(a);
        sla_pattern_free(&p);
    }
}

/* a real symmetric matrix handed as complex: the real eigenvalues, |v| of the real vectors */
static void real_as_complex(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(12, 11, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 3;
    zc *z = malloc((size_t)nnz * sizeof *z);
    for (int64_t s = 0; s < nnz; s++) z[s] = v[s];
    sla_matrix Ar = sla_matrix_view(p, SLA_FLOAT64, 1, v), Az = sla_matrix_view(p, SLA_COMPLEX128, 1, z);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = SLA_EIGSH_LOBPCG;
    double lr[3], lz[3], *vr = malloc((size_t)(n * k) * sizeof *vr);
    zc *vz = malloc((size_t)(n * k) * sizeof *vz);
    TU_OK(sla_eigsh(&Ar, k, &o, lr, vr, NULL));
    TU_OK(sla_eigsh(&Az, k, &o, lz, vz, NULL));
    for (int64_t j = 0; j < k; j++) assert_true(fabs(lr[j] - lz[j]) < 1e-11);
    /* λ_1 simple: the vectors agree (both have their largest entry positive) */
    for (int64_t i = 0; i < n; i++) assert_true(cabs(vz[i * k] - vr[i * k]) < 1e-8);
    free(vr); free(vz); free(z); free(v);
    sla_pattern_free(&p);
}

/* generalized A v = λ M v with Hermitian PD M (its own pattern), batch 2, vs zhegvd */
static void generalized_batch(void **state)
{
    (void)state;
    int64_t n = 160, k = 3;
    sla_pattern *p, *pm;
    zc *a0, *a1, *m;
    hermitian_matrix(n, 21, 0.0, &p, &a0);
    int64_t nnz = sla_pattern_nnz(p);
    a1 = malloc((size_t)nnz * sizeof *a1);
    for (int64_t s = 0; s < nnz; s++) a1[s] = a0[s] * (s % 3 == 0 ? 1.5 : 1.0);
    /* a1 stays Hermitian: scale mirrored entries alike */
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t t = sla_pattern_find(p, ci[s], i);
            if (t > s) a1[t] = conj(a1[s]);
        }
    hermitian_matrix(n, 22, 12.0, &pm, &m);
    zc *ab = malloc((size_t)(2 * nnz) * sizeof *ab);
    memcpy(ab, a0, (size_t)nnz * sizeof *ab);
    memcpy(ab + nnz, a1, (size_t)nnz * sizeof *ab);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 2, ab), M = sla_matrix_view(pm, SLA_COMPLEX128, 1, m);
    double *w = malloc((size_t)n * sizeof *w), lam[6], res[6];
    zc *V = malloc((size_t)(2 * n * k) * sizeof *V);
    const sla_eigsh_method meth[] = {SLA_EIGSH_DENSE, SLA_EIGSH_LOBPCG, SLA_EIGSH_LANCZOS};
    for (int mi = 0; mi < 3; mi++) {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.M = &M;
        o.which = SLA_EIGSH_SA;
        o.method = meth[mi];
        o.residuals = res;
        TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
        for (int b = 0; b < 2; b++) {
            dense_eigs(p, b ? a1 : a0, pm, m, w);
            for (int64_t j = 0; j < k; j++) {
                assert_true(fabs(lam[b * k + j] - w[j]) < 1e-9 * fabs(w[j]) + 1e-10);
                assert_true(res[b * k + j] <= 1e-10);
            }
            sla_matrix Ab = sla_matrix_view(p, SLA_COMPLEX128, 1, ab + b * nnz);
            check_pairs(&Ab, &M, k, lam + b * k, V + b * n * k, 1e-9);
        }
    }
    free(w); free(V); free(ab); free(a0); free(a1); free(m);
    sla_pattern_free(&p);
    sla_pattern_free(&pm);
}

/* complex64: the complex128 eigenvalues to float32 accuracy */
static void complex64(void **state)
{
    (void)state;
    int64_t n = 120, k = 2;
    sla_pattern *p;
    zc *a;
    hermitian_matrix(n, 31, 0.0, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    float complex *af = malloc((size_t)nnz * sizeof *af), *vf = malloc((size_t)(n * k) * sizeof *vf);
    for (int64_t s = 0; s < nnz; s++) af[s] = (float complex)a[s];
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX64, 1, af);
    double *w = malloc((size_t)n * sizeof *w);
    dense_eigs(p, a, NULL, NULL, w);
    float lam[2];
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_LA;
    TU_OK(sla_eigsh(&A, k, &o, lam, vf, NULL));
    for (int64_t j = 0; j < k; j++) assert_true(fabs(lam[j] - w[n - k + j]) < 1e-5 * fabs(w[n - 1]));
    free(af); free(vf); free(w); free(a);
    sla_pattern_free(&p);
}

/* The loss L = Σ_j wλ_j λ_j + Σ_j Σ_i c_i w_j |v_ij|² (phase invariant) of eigsh(A) (SA). */
static double loss(const sla_matrix *A, const sla_matrix *M, int64_t k, double *lam, zc *V)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = SLA_EIGSH_DENSE;
    o.tol = 0;
    o.M = M;
    TU_OK(sla_eigsh(A, k, &o, lam, V, NULL));
    double L = 0;
    for (int64_t j = 0; j < k; j++) {
        L += (1.0 + j) * lam[j];
        for (int64_t i = 0; i < n; i++) L += (0.3 + j) * (1.0 + 0.1 * (double)(i % 7)) * pow(cabs(V[i * k + j]), 2);
    }
    return L;
}

/* gradients of loss() by the VJPs against central differences of Hermitian perturbations of a
 * few entries (real and imaginary directions), standard and generalized */
static void vjp_fd(void **state)
{
    (void)state;
    int64_t n = 30, k = 3;
    for (int gen = 0; gen < 2; gen++) {
        sla_pattern *p, *pm = NULL;
        zc *a, *m = NULL;
        hermitian_matrix(n, 41, 0.0, &p, &a);
        if (gen) hermitian_matrix(n, 42, 10.0, &pm, &m);
        int64_t nnz = sla_pattern_nnz(p);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a), M;
        if (gen) M = sla_matrix_view(pm, SLA_COMPLEX128, 1, m);
        double lam[3], gl[3];
        zc V[90], gV[90];
        loss(&A, gen ? &M : NULL, k, lam, V);
        for (int64_t j = 0; j < k; j++) {
            gl[j] = 1.0 + j;
            for (int64_t i = 0; i < n; i++)
                gV[i * k + j] = 2.0 * (0.3 + j) * (1.0 + 0.1 * (double)(i % 7)) * V[i * k + j];
        }
        zc *dA = malloc((size_t)nnz * sizeof *dA), *dM = gen ? malloc((size_t)sla_pattern_nnz(pm) * sizeof *dM) : NULL;
        if (gen) TU_OK(sla_eigsh_generalized_vjp(&A, &M, k, lam, V, gl, gV, dA, dM));
        else TU_OK(sla_eigsh_vjp(&A, k, lam, V, gl, gV, dA));
        for (int which = 0; which < 1 + gen; which++) {
            const sla_pattern *q = which ? pm : p;
            zc *x = which ? m : a, *G = which ? dM : dA;
            const int64_t *rp = sla_pattern_rowptr(q);
            const int32_t *ci = sla_pattern_colind(q);
            int checked = 0;
            for (int64_t i = 0; i < n && checked < 6; i += 5)
                for (int64_t s = rp[i]; s < rp[i + 1] && checked < 6; s++) {
                    int64_t t = sla_pattern_find(q, ci[s], i);
                    for (int dir = 0; dir < 2; dir++) {
                        if (t == s && dir == 1) continue;       /* the diagonal stays real */
                        zc d = dir ? I : 1.0, xs = x[s], xt = x[t];
                        double h = 1e-6, Lp, Lm;
                        x[s] = xs + h * d; if (t != s) x[t] = xt + h * conj(d);
                        Lp = loss(&A, gen ? &M : NULL, k, lam, V);
                        x[s] = xs - h * d; if (t != s) x[t] = xt - h * conj(d);
                        Lm = loss(&A, gen ? &M : NULL, k, lam, V);
                        x[s] = xs; x[t] = xt;
                        double fd = (Lp - Lm) / (2 * h);
                        /* dL = Re Σ conj(G)·δ */
                        double an = creal(conj(G[s]) * d) + (t != s ? creal(conj(G[t]) * conj(d)) : 0);
                        assert_true(fabs(fd - an) < 1e-6 * (1 + fabs(an)));
                    }
                    checked++;
                }
        }
        free(dA); free(dM); free(a); free(m);
        sla_pattern_free(&p);
        sla_pattern_free(&pm);
    }
}

/* Hellmann–Feynman in PyTorch's convention: ∂λ_j/∂a_rc = v_r·conj(v_c) */
static void eigenvalue_vjp_is_vvh(void **state)
{
    (void)state;
    int64_t n = 50, k = 2;
    sla_pattern *p;
    zc *a;
    hermitian_matrix(n, 51, 0.0, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    double lam[2], gl[2] = {0, 1};
    zc V[100], *dA = malloc((size_t)nnz * sizeof *dA);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_LA;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, gl, NULL, dA));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++)
            assert_true(cabs(dA[s] - V[i * k + 1] * conj(V[ci[s] * k + 1])) < 1e-12);
    free(dA); free(a);
    sla_pattern_free(&p);
}

/* refusals: non-Hermitian, complex symmetric, a phase-dependent loss, a preconditioner */
static void refusals(void **state)
{
    (void)state;
    int64_t n = 20, k = 2;
    sla_pattern *p;
    zc *a;
    hermitian_matrix(n, 61, 0.0, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    double lam[2], gl[2] = {1, 0};
    zc V[40], gV[40] = {0}, *dA = malloc((size_t)nnz * sizeof *dA);
    zc *b = malloc((size_t)nnz * sizeof *b);
    /* complex symmetric: Aᵀ = A */
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++)
            b[s] = ci[s] == i ? a[s] + 0.5 * I : (ci[s] > i ? a[s] : conj(a[s]));
    sla_matrix B = sla_matrix_view(p, SLA_COMPLEX128, 1, b);
    assert_int_equal(sla_eigsh(&B, k, NULL, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not Hermitian"));
    assert_non_null(strstr(sla_last_error(), "complex symmetric"));
    b[1] += 0.25;                                   /* general */
    assert_int_equal(sla_eigsh(&B, k, NULL, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not Hermitian"));
    /* the loss Im v_{r,0} at an entry r other than the phase one depends on the phase */
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
    int64_t r = cabs(V[0]) > cabs(V[2 * k]) ? 2 : 0;
    gV[r * k] = I;
    assert_int_equal(sla_eigsh_vjp(&A, k, lam, V, gl, gV, dA), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "phase"));
    /* eigenvalue cotangents alone are fine */
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, gl, NULL, dA));
    /* LOBPCG preconditioners are real only */
    o.precond = (sla_precond_fn)1;
    assert_int_equal(sla_eigsh(&A, k, &o, lam, V, NULL), SLA_EUNSUPPORTED);
    free(dA); free(a); free(b);
    sla_pattern_free(&p);
}

/* options through the real form: a start block v0, block_size, ncv, ARPACK (if built) */
static void options_through_real_form(void **state)
{
    (void)state;
    int64_t n = 200, k = 3;
    sla_pattern *p;
    zc *a;
    hermitian_matrix(n, 71, 0.0, &p, &a);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    double *w = malloc((size_t)n * sizeof *w), lam[3];
    dense_eigs(p, a, NULL, NULL, w);
    zc *V = malloc((size_t)(n * k) * sizeof *V), *v0 = malloc((size_t)(n * 2) * sizeof *v0);
    uint64_t st = 3;
    for (int64_t q = 0; q < 2 * n; q++) v0[q] = tu_rand(&st) + I * tu_rand(&st);
    for (int c = 0; c < 4; c++) {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = SLA_EIGSH_SA;
        o.v0 = v0;
        o.nv0 = 2;
        if (c == 0) { o.method = SLA_EIGSH_LOBPCG; o.block_size = k + 1; }
        if (c == 1) { o.method = SLA_EIGSH_LANCZOS; o.block_size = 3; o.ncv = 24; }
        if (c == 2) { o.method = SLA_EIGSH_LANCZOS; o.v0 = NULL; }
        if (c == 3) o.method = SLA_EIGSH_ARPACK;
        sla_status s = sla_eigsh(&A, k, &o, lam, V, NULL);
        if (c == 3 && s == SLA_EUNSUPPORTED) continue;          /* built without ARPACK */
        TU_OK(s);
        for (int64_t j = 0; j < k; j++) assert_true(fabs(lam[j] - w[j]) < 1e-9);
        check_pairs(&A, NULL, k, lam, V, 1e-9);
    }
    /* a size the real form cannot take names the field */
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.method = SLA_EIGSH_LOBPCG;
    o.block_size = 1;
    assert_int_equal(sla_eigsh(&A, k, &o, lam, V, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "block_size"));
    free(w); free(V); free(v0); free(a);
    sla_pattern_free(&p);
}

/* a repeated eigenvalue of A (two identical decoupled blocks): the eigenvalues and their
 * gradient are fine, an eigenvector loss that depends on the basis of the eigenspace is
 * refused as in the real VJP */
static void repeated_eigenvalue(void **state)
{
    (void)state;
    int64_t h = 15, n = 2 * h, k = 2;
    sla_pattern *p1;
    zc *a1;
    hermitian_matrix(h, 81, 0.0, &p1, &a1);
    const int64_t *rp = sla_pattern_rowptr(p1);
    const int32_t *ci = sla_pattern_colind(p1);
    int64_t nnz1 = sla_pattern_nnz(p1);
    int64_t *r = malloc((size_t)(2 * nnz1) * sizeof *r), *c = malloc((size_t)(2 * nnz1) * sizeof *c);
    zc *v = malloc((size_t)(2 * nnz1) * sizeof *v);
    for (int blk = 0; blk < 2; blk++)
        for (int64_t i = 0; i < h; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                int64_t q = blk * nnz1 + s;
                r[q] = i + blk * h; c[q] = ci[s] + blk * h; v[q] = a1[s];
            }
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(n, n, 2 * nnz1, r, c, &p));
    zc *a = malloc((size_t)sla_pattern_nnz(p) * sizeof *a), *dA = malloc((size_t)sla_pattern_nnz(p) * sizeof *dA);
    TU_OK(sla_values_gather(p, SLA_COMPLEX128, 1, v, a));
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = SLA_EIGSH_DENSE;
    double lam[2], gl[2] = {1, 1};
    zc V[60], gV[60];
    TU_OK(sla_eigsh(&A, k, &o, lam, V, NULL));
    assert_true(fabs(lam[0] - lam[1]) < 1e-12 * (1 + fabs(lam[0])));
    TU_OK(sla_eigsh_vjp(&A, k, lam, V, gl, NULL, dA));
    /* the sum of the pair: ∂(λ₁ + λ₂)/∂a_ii is the projector's diagonal, summing to 2 */
    double tr = 0;
    for (int64_t i = 0; i < n; i++) tr += creal(dA[sla_pattern_find(p, i, i)]);
    assert_true(fabs(tr - 2.0) < 1e-10);
    /* g_1 = v_2 (v_2ᴴg_1 = 1 ≠ v_1ᴴg_2 = 0): the loss depends on the basis of the eigenspace */
    for (int64_t i = 0; i < n; i++) {
        gV[i * k] = V[i * k + 1];
        gV[i * k + 1] = 0;
    }
    assert_int_equal(sla_eigsh_vjp(&A, k, lam, V, NULL, gV, dA), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "repeated"));
    free(r); free(c); free(v); free(a); free(a1); free(dA);
    sla_pattern_free(&p);
    sla_pattern_free(&p1);
}

/* The magnetic Laplacian of an m × m grid (open boundary): 4 on the diagonal, −e^{iθ_ij} between
 * neighbours, θ_ij = −θ_ji. gauge = 1: θ_ij = φ_i − φ_j (zero flux), so that A = D L Dᴴ with D
 * the unitary diagonal e^{iφ}: complex eigenvectors, the spectrum of the real grid Laplacian L,
 * λ_ab = 4 − 2cos(aπ/(m+1)) − 2cos(bπ/(m+1)), a, b = 1..m (double for a ≠ b). gauge = 0:
 * random θ_ij (random flux). */
static void magnetic_laplacian(int64_t m, int gauge, uint64_t seed, sla_pattern **p, zc **values)
{
    int64_t n = m * m, cap = 5 * n, nnz = 0;
    int64_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    zc *v = malloc((size_t)cap * sizeof *v);
    double *phi = malloc((size_t)n * sizeof *phi);
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++) phi[i] = 3.0 * tu_rand(&st);
    for (int64_t i = 0; i < n; i++) {
        r[nnz] = i; c[nnz] = i; v[nnz++] = 4.0;
        int64_t x = i % m, y = i / m, nb[2] = {x + 1 < m ? i + 1 : -1, y + 1 < m ? i + m : -1};
        for (int q = 0; q < 2; q++) {
            if (nb[q] < 0) continue;
            double th = gauge ? phi[i] - phi[nb[q]] : 3.0 * tu_rand(&st);
            zc a = -cexp(I * th);
            r[nnz] = i; c[nnz] = nb[q]; v[nnz++] = a;
            r[nnz] = nb[q]; c[nnz] = i; v[nnz++] = conj(a);
        }
    }
    TU_OK(sla_pattern_from_coo(n, n, nnz, r, c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, v, *values));
    free(r); free(c); free(v); free(phi);
}

/* the native kernels on a random-flux magnetic Laplacian (n = 576): SA, LA and σ inside the
 * spectrum against zhbevd to 1e-10 relative, residuals, VᴴV = I, the phase; the operator
 * counts are those of a complex iteration (no doubled basis); complex64 and a batch of two */
static void native_magnetic(void **state)
{
    (void)state;
    int64_t m = 24, n = m * m, k = 6;
    sla_pattern *p;
    zc *a;
    magnetic_laplacian(m, 0, 5, &p, &a);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    double *w = malloc((size_t)n * sizeof *w), lam[2 * 6];
    dense_eigs(p, a, NULL, NULL, w);
    zc *V = malloc((size_t)(2 * n * k) * sizeof *V);
    sla_solver_options lu;
    sla_solver_options_init(&lu);
    lu.method = SLA_METHOD_LU;
    for (int c = 0; c < 4; c++) {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = c == 1 ? SLA_EIGSH_LA : SLA_EIGSH_SA;
        /* σ inside: by default the real 2n form's symmetric factorization serves the complex
         * iteration; with factor_options (c = 3) the complex matrix is factored as asked */
        if (c >= 2) o.sigma = 0.5 * (w[n / 3] + w[n / 3 + 1]);
        if (c == 3) o.factor_options = &lu;
        sla_eigsh_info info;
        TU_OK(sla_eigsh(&A, k, &o, lam, V, &info));
        assert_non_null(strstr(info.description, "complex Hermitian thick-restart Lanczos"));
        if (c == 2) assert_non_null(strstr(info.description, "real 2n form of A − σI"));
        if (c == 3) assert_null(strstr(info.description, "real 2n form"));
        assert_int_equal(info.method, SLA_EIGSH_LANCZOS);
        assert_int_equal(info.converged, k);
        assert_true(info.operator_applications == 2 * info.iterations);
        const double *ref = c == 0 ? w : c == 1 ? w + n - k : nearest(w, n, n / 3, o.sigma, k);
        for (int64_t j = 0; j < k; j++) assert_true(fabs(lam[j] - ref[j]) <= 1e-10 * fabs(ref[j]));
        check_pairs(&A, NULL, k, lam, V, 1e-10);
    }
    /* complex64: promoted once, outputs rounded */
    int64_t nnz = sla_pattern_nnz(p);
    float complex *a32 = malloc((size_t)nnz * sizeof *a32), *V32 = malloc((size_t)(n * k) * sizeof *V32);
    for (int64_t s = 0; s < nnz; s++) a32[s] = (float complex)a[s];
    sla_matrix A32 = sla_matrix_view(p, SLA_COMPLEX64, 1, a32);
    float l32[6];
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.tol = 1e-6;
    TU_OK(sla_eigsh(&A32, k, &o, l32, V32, NULL));
    for (int64_t j = 0; j < k; j++) assert_true(fabs(l32[j] - w[j]) < 1e-5);
    /* a batch of two: A and 2A + I */
    zc *ab = malloc((size_t)(2 * nnz) * sizeof *ab);
    const int64_t *rp = sla_pattern_rowptr(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            ab[s] = a[s];
            ab[nnz + s] = 2.0 * a[s] + (sla_pattern_colind(p)[s] == i ? 1.0 : 0.0);
        }
    sla_matrix Ab = sla_matrix_view(p, SLA_COMPLEX128, 2, ab);
    TU_OK(sla_eigsh(&Ab, k, &o, lam, V, NULL));
    for (int64_t j = 0; j < k; j++) {
        assert_true(fabs(lam[j] - w[j]) < 1e-8);
        assert_true(fabs(lam[k + j] - (2 * w[j] + 1)) < 1e-8);
    }
    free(w); free(V); free(a); free(a32); free(V32); free(ab);
    sla_pattern_free(&p);
}

/* repeated eigenvalues through the native kernels: the zero-flux magnetic Laplacian of a
 * 20 × 20 grid has the grid Laplacian's spectrum, the 6 smallest being λ11, λ12 = λ21, λ22,
 * λ13 = λ31 (closed form); every copy is found (block 2), eigenvectors orthonormal; with
 * block 4 too, and with σ between the doubles */
static void native_multiplicity(void **state)
{
    (void)state;
    int64_t m = 20, n = m * m, k = 6;
    sla_pattern *p;
    zc *a;
    magnetic_laplacian(m, 1, 9, &p, &a);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    double h = 3.14159265358979323846 / (double)(m + 1), ref[6];
    const int ab[6][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 3}, {3, 1}};
    for (int q = 0; q < 6; q++) ref[q] = 4 - 2 * cos(ab[q][0] * h) - 2 * cos(ab[q][1] * h);
    double lam[6];
    zc *V = malloc((size_t)(n * k) * sizeof *V);
    for (int c = 0; c < 3; c++) {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = SLA_EIGSH_SA;
        if (c == 1) o.block_size = 4;
        int64_t kk = k;
        if (c == 2) {
            o.sigma = 0.5 * (ref[3] + ref[4]);   /* nearest: λ22, λ13 = λ31 */
            kk = 3;
        }
        sla_eigsh_info info;
        TU_OK(sla_eigsh(&A, kk, &o, lam, V, &info));
        assert_non_null(strstr(info.description, "complex Hermitian thick-restart Lanczos"));
        const double *r = c == 2 ? ref + 3 : ref;
        for (int64_t j = 0; j < kk; j++) assert_true(fabs(lam[j] - r[j]) <= 1e-10 * r[j]);
        /* the doubles are exact ties */
        assert_true(fabs(lam[1] - lam[2]) < 1e-12);
        check_pairs(&A, NULL, kk, lam, V, 1e-10);
    }
    free(V); free(a);
    sla_pattern_free(&p);
}

/* every allocation of the complex forward and VJPs failing in turn: SLA_ENOMEM, no leak */
typedef struct alloc_case {
    sla_matrix A, M;
    int gen, vjp;
    double lam[2];
    zc V[40], gV[40], dA[400], dM[400];
} alloc_case;

static sla_status alloc_run(void *ctx)
{
    alloc_case *c = ctx;
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = c->gen == 2 ? SLA_EIGSH_LANCZOS : SLA_EIGSH_LOBPCG;  /* 2: the native kernels */
    if (c->gen == 1) o.M = &c->M;
    if (!c->vjp) return sla_eigsh(&c->A, 2, &o, c->lam, c->V, NULL);
    double gl[2] = {1, 2};
    return c->gen == 1 ? sla_eigsh_generalized_vjp(&c->A, &c->M, 2, c->lam, c->V, gl, c->gV, c->dA, c->dM)
                  : sla_eigsh_vjp(&c->A, 2, c->lam, c->V, gl, c->gV, c->dA);
}

static void allocation_failures(void **state)
{
    (void)state;
    int64_t n = 20;
    sla_pattern *p, *pm;
    zc *a, *m;
    hermitian_matrix(n, 91, 0.0, &p, &a);
    hermitian_matrix(n, 92, 10.0, &pm, &m);
    assert_true(sla_pattern_nnz(p) <= 400 && sla_pattern_nnz(pm) <= 400);
    alloc_case c = {0};
    c.A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    c.M = sla_matrix_view(pm, SLA_COMPLEX128, 1, m);
    for (c.gen = 0; c.gen < 3; c.gen++) {
        c.vjp = 0;
        eig_every_allocation_fails(c.gen == 1 ? "generalized eigsh" : c.gen ? "native eigsh" : "eigsh",
                                   alloc_run, &c);
        for (int64_t q = 0; q < 2 * n; q++) c.gV[q] = 2.0 * c.V[q];
        c.vjp = 1;
        eig_every_allocation_fails(c.gen == 1 ? "generalized VJP" : "VJP", alloc_run, &c);
    }
    free(a); free(m);
    sla_pattern_free(&p);
    sla_pattern_free(&pm);
}

/* Explicit method lanczos on n = 1 … 6 (SA, LA, σ, k = 1, 2): the native path was taken
 * whenever the default sizes could be computed, even when they did not fit (ncv < k + block):
 * n = 1 asked for 2⁶⁴ − 1 doubles, n = 2 wrote past its basis (heap corruption). Each call now
 * answers correctly or refuses with SLA_EINVAL naming the sizes. */
static void lanczos_tiny(void **state)
{
    (void)state;
    for (int64_t n = 1; n <= 6; n++) {
        sla_pattern *p;
        zc *a;
        hermitian_matrix(n, 100 + (uint64_t)n, 1.0, &p, &a);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
        double w[6], lam[2];
        dense_eigs(p, a, NULL, NULL, w);
        zc V[12];
        for (int64_t k = 1; k <= 2 && k <= n; k++)
            for (int c = 0; c < 3; c++) {
                sla_eigsh_options o;
                sla_eigsh_options_init(&o);
                o.method = SLA_EIGSH_LANCZOS;
                o.which = c == 1 ? SLA_EIGSH_LA : c == 2 ? SLA_EIGSH_LM : SLA_EIGSH_SA;
                if (c == 2) o.sigma = w[0] - 0.5;       /* below the spectrum: the k lowest */
                sla_status st = sla_eigsh(&A, k, &o, lam, V, NULL);
                if (st == SLA_EINVAL) {
                    if (!strstr(sla_last_error(), "too large"))
                        fail_msg("n %lld k %lld case %d: %s", (long long)n, (long long)k, c,
                                 sla_last_error());
                    continue;
                }
                if (st != SLA_OK)
                    fail_msg("n %lld k %lld case %d: status %d: %s", (long long)n, (long long)k,
                             c, (int)st, sla_last_error());
                for (int64_t j = 0; j < k; j++) {
                    double ref = c == 1 ? w[n - k + j] : w[j];
                    assert_true(fabs(lam[j] - ref) <= 1e-10 * (1 + fabs(ref)));
                }
                check_pairs(&A, NULL, k, lam, V, 1e-9);
            }
        free(a);
        sla_pattern_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(methods_vs_zheevd),
        cmocka_unit_test(real_as_complex),
        cmocka_unit_test(generalized_batch),
        cmocka_unit_test(complex64),
        cmocka_unit_test(eigenvalue_vjp_is_vvh),
        cmocka_unit_test(vjp_fd),
        cmocka_unit_test(options_through_real_form),
        cmocka_unit_test(repeated_eigenvalue),
        cmocka_unit_test(refusals),
        cmocka_unit_test(native_magnetic),
        cmocka_unit_test(native_multiplicity),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(lanczos_tiny),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
