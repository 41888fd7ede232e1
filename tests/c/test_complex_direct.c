/* Complex direct backends (lu = UMFPACK, klu, cholesky = CHOLMOD LLᴴ): the log-determinant
 * gradient by the complex selected inverse (selinv_lu.h) against the dense inverse from
 * LAPACK's zgetrf/zgetri (torch's convention: ∂ log|det A| = A⁻ᴴ on the pattern), complex64,
 * a BTF-reducible matrix for KLU, and n = 30000 (beyond the old n-solve limit) against single
 * solves; and the numerical-singularity rule of condest.c in its complex form: a Neumann-like
 * singular complex matrix, a nearly singular one, a singular one whose pivots are all 1, and
 * the estimate against the true row-equilibrated 1-norm rcond. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef double complex zc;

static const sla_method lu_methods[] = {SLA_METHOD_LU, SLA_METHOD_KLU};

static sla_solver *create(const sla_pattern *p, sla_dtype dt, const void *v, sla_method m)
{
    sla_matrix A = sla_matrix_view(p, dt, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    sla_solver *s;
    sla_status st = sla_solver_create(&A, &o, &s);
    if (st != SLA_OK) fail_msg("create %s: %d: %s", sla_method_name(m), st, sla_last_error());
    return s;
}

/* COO → CSR values (duplicates summed) */
static void from_coo(int64_t n, int64_t nnz, const int64_t *r, const int64_t *c, const zc *v,
                     sla_pattern **p, zc **values)
{
    TU_OK(sla_pattern_from_coo(n, n, nnz, r, c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, v, *values));
}

/* A random sparse general complex n × n matrix, diagonally dominant, its random entries within
 * a band of half-width 15 (a small fill at any n: large_n runs it at n = 30000). With blocks = 1 it is
 * block upper triangular (two diagonal blocks, entries (i, j) with i < n/2 ≤ j only above):
 * reducible, so KLU finds several BTF blocks. */
static void general(int64_t n, uint64_t seed, int blocks, sla_pattern **p, zc **values)
{
    int64_t cap = 6 * n, k = 0;
    int64_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    zc *v = malloc((size_t)cap * sizeof *v);
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++)
        for (int q = 0; q < 5; q++) {
            int64_t j = q == 0 ? i : q == 1 ? i + 1
                      : i + (int64_t)(tu_rand(&st) * 15.0);
            j = j < 0 ? 0 : j >= n ? n - 1 : j;
            if (blocks && i >= n / 2 && j < n / 2) j = i;           /* nothing below the blocks */
            r[k] = i;
            c[k] = j;
            v[k] = (tu_rand(&st) - 0.5) + I * (tu_rand(&st) - 0.5) + (j == i ? 5.0 - 3.0 * I : 0);
            k++;
        }
    from_coo(n, k, r, c, v, p, values);
    free(r); free(c); free(v);
}

/* A Hermitian positive definite complex matrix: tridiagonal plus random symmetric pairs within a
 * band of half-width 15 */
static void hermitian_pd(int64_t n, uint64_t seed, sla_pattern **p, zc **values)
{
    int64_t cap = 8 * n, k = 0;
    int64_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    zc *v = malloc((size_t)cap * sizeof *v);
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++) {
        r[k] = c[k] = i; v[k++] = 8.0;
        for (int q = 0; q < 2; q++) {
            int64_t j = q == 0 ? i + 1 : i + (int64_t)(tu_rand(&st) * 15.0);
            if (j < 0 || j >= n || j == i) continue;
            zc a = (tu_rand(&st) - 0.5) + I * (tu_rand(&st) - 0.5);
            r[k] = i; c[k] = j; v[k++] = a;
            r[k] = j; c[k] = i; v[k++] = conj(a);
        }
    }
    from_coo(n, k, r, c, v, p, values);
    free(r); free(c); free(v);
}

/* dense column-major copy */
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

/* the dense inverse (column-major) by zgetrf + zgetri */
static zc *dense_inverse(const sla_pattern *p, const zc *a)
{
    int64_t n = sla_pattern_nrows(p);
    zc *d = dense(p, a);
    lapack_int *ipiv = malloc((size_t)n * sizeof *ipiv);
    assert_int_equal(LAPACKE_zgetrf(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n,
                                    (lapack_complex_double *)d, (lapack_int)n, ipiv), 0);
    assert_int_equal(LAPACKE_zgetri(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_complex_double *)d,
                                    (lapack_int)n, ipiv), 0);
    free(ipiv);
    return d;
}

/* max over the slots (r, c) of |dv_s − g·conj((A⁻¹)_cr)| relative to max |g·(A⁻¹)_cr| */
static double grad_error(const sla_pattern *p, const zc *inv, double g, const zc *dv)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double err = 0, ref = 0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t s = rp[r]; s < rp[r + 1]; s++) {
            zc want = g * conj(inv[ci[s] + r * n]);
            err = fmax(err, cabs(dv[s] - want));
            ref = fmax(ref, cabs(want));
        }
    return err / ref;
}

/* the selected-inverse gradient of every complex direct method against the dense inverse,
 * complex128 and complex64, a batch of two with different weights */
static void selinv_vs_dense(void **state)
{
    (void)state;
    for (int kind = 0; kind < 3; kind++) {          /* general, block triangular, Hermitian PD */
        int64_t n = 70;
        sla_pattern *p;
        zc *a;
        if (kind < 2) general(n, 11 + (uint64_t)kind, kind, &p, &a);
        else hermitian_pd(n, 13, &p, &a);
        int64_t nnz = sla_pattern_nnz(p);
        zc *inv = dense_inverse(p, a);
        const sla_method ms[] = {SLA_METHOD_LU, SLA_METHOD_KLU, SLA_METHOD_CHOLESKY};
        for (int m = 0; m < (kind == 2 ? 3 : 2); m++) {
            sla_solver *s = create(p, SLA_COMPLEX128, a, ms[m]);
            zc *dv = malloc((size_t)nnz * sizeof *dv);
            double g = -1.75;
            TU_OK(sla_solver_logdet_grad(s, &g, dv));
            double e = grad_error(p, inv, g, dv);
            if (!(e < 1e-12)) fail_msg("kind %d %s: relative error %g", kind, sla_method_name(ms[m]), e);
            sla_solver_free(&s);
            /* complex64: factored in double, rounded at the end */
            float complex *af = malloc((size_t)nnz * sizeof *af), *df = malloc((size_t)nnz * sizeof *df);
            for (int64_t q = 0; q < nnz; q++) af[q] = (float complex)a[q];
            s = create(p, SLA_COMPLEX64, af, ms[m]);
            TU_OK(sla_solver_logdet_grad(s, NULL, df));
            for (int64_t q = 0; q < nnz; q++) dv[q] = df[q];
            e = grad_error(p, inv, 1.0, dv);
            if (!(e < 1e-5)) fail_msg("kind %d %s complex64: relative error %g", kind, sla_method_name(ms[m]), e);
            sla_solver_free(&s);
            free(af); free(df); free(dv);
        }
        free(inv); free(a);
        sla_pattern_free(&p);
    }
}

/* n = 30000, above the old n-solve limit (20000): the gradient exists, and rows r of it match
 * column r of A⁻¹ from single solves */
static void large_n(void **state)
{
    (void)state;
    int64_t n = 30000;
    for (int kind = 0; kind < 2; kind++) {
        sla_pattern *p;
        zc *a;
        if (kind == 0) general(n, 21, 0, &p, &a);
        else hermitian_pd(n, 22, &p, &a);
        int64_t nnz = sla_pattern_nnz(p);
        const int64_t *rp = sla_pattern_rowptr(p);
        const int32_t *ci = sla_pattern_colind(p);
        const sla_method ms[] = {SLA_METHOD_LU, SLA_METHOD_KLU, SLA_METHOD_CHOLESKY};
        zc *dv = malloc((size_t)nnz * sizeof *dv), *e = calloc((size_t)n, sizeof *e),
           *y = malloc((size_t)n * sizeof *y);
        for (int m = kind == 0 ? 0 : 2; m < (kind == 0 ? 2 : 3); m++) {
            sla_solver *s = create(p, SLA_COMPLEX128, a, ms[m]);
            TU_OK(sla_solver_logdet_grad(s, NULL, dv));
            const int64_t rows[] = {0, 1, 7, n / 3, n / 2 + 5, n - 1};
            for (int t = 0; t < 6; t++) {
                int64_t r = rows[t];
                e[r] = 1;
                TU_OK(sla_solver_solve(s, SLA_OP_N, 1, e, y, NULL));
                e[r] = 0;
                for (int64_t q = rp[r]; q < rp[r + 1]; q++)
                    if (!(cabs(dv[q] - conj(y[ci[q]])) < 1e-12 * (1 + cabs(y[ci[q]]))))
                        fail_msg("%s: slot (%lld, %d): %g%+gi vs %g%+gi", sla_method_name(ms[m]),
                                 (long long)r, ci[q], creal(dv[q]), cimag(dv[q]),
                                 creal(conj(y[ci[q]])), cimag(conj(y[ci[q]])));
            }
            sla_solver_free(&s);
        }
        free(dv); free(e); free(y); free(a);
        sla_pattern_free(&p);
    }
}

/* 1 / (‖RA‖₁ ‖(RA)⁻¹‖₁), R = diag(1/max_j |a_ij|), from the dense inverse */
static double true_rcond(const sla_pattern *p, const zc *a)
{
    int64_t n = sla_pattern_nrows(p);
    zc *d = dense(p, a);
    for (int64_t i = 0; i < n; i++) {
        double m = 0;
        for (int64_t j = 0; j < n; j++) m = fmax(m, cabs(d[i + j * n]));
        for (int64_t j = 0; j < n; j++) d[i + j * n] /= m;
    }
    double an = 0;
    for (int64_t j = 0; j < n; j++) {
        double t = 0;
        for (int64_t i = 0; i < n; i++) t += cabs(d[i + j * n]);
        an = fmax(an, t);
    }
    int64_t nnz = 0;
    for (int64_t q = 0; q < n * n; q++) nnz += d[q] != 0;
    int64_t *r = malloc((size_t)nnz * sizeof *r), *c = malloc((size_t)nnz * sizeof *c);
    zc *v = malloc((size_t)nnz * sizeof *v);
    nnz = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            if (d[i + j * n] != 0) { r[nnz] = i; c[nnz] = j; v[nnz++] = d[i + j * n]; }
    sla_pattern *ps;
    zc *vs;
    from_coo(n, nnz, r, c, v, &ps, &vs);
    zc *inv = dense_inverse(ps, vs);
    double in = 0;
    for (int64_t j = 0; j < n; j++) {
        double t = 0;
        for (int64_t i = 0; i < n; i++) t += cabs(inv[i + j * n]);
        in = fmax(in, t);
    }
    free(r); free(c); free(v); free(vs); free(inv); free(d);
    sla_pattern_free(&ps);
    return 1 / (an * in);
}

/* Solves, logdet and its gradient refused (SLA_ESINGULAR, logdet (0, −inf)); cholesky may
 * refuse at create with SLA_ENOTSPD instead */
static void expect_singular(const sla_pattern *p, const zc *a, sla_method m, const char *what)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    sla_solver *s;
    sla_status st = sla_solver_create(&A, &o, &s);
    if (m == SLA_METHOD_CHOLESKY && st == SLA_ENOTSPD) return;
    if (st != SLA_OK) fail_msg("%s %s: create %d: %s", what, sla_method_name(m), st, sla_last_error());
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x),
       *g = malloc((size_t)nnz * sizeof *g);
    for (int64_t i = 0; i < n; i++) b[i] = 1 + 0.5 * sin((double)i) + 0.25 * I;
    sla_solve_info info;
    st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
    if (st != SLA_ESINGULAR)
        fail_msg("%s %s: solve %d (rcond %g), expected SLA_ESINGULAR (%s)", what,
                 sla_method_name(m), st, sla_solver_rcond(s), sla_solver_describe(s));
    assert_non_null(strstr(sla_last_error(), "singular"));
    assert_true(sla_solver_rcond(s) < SLA_RCOND_SINGULAR);
    assert_int_equal(sla_solver_solve(s, SLA_OP_C, 1, b, x, NULL), SLA_ESINGULAR);
    double sign[2] = {7, 7}, lad = 7;
    TU_OK(sla_solver_logdet(s, sign, &lad));
    assert_true(sign[0] == 0 && sign[1] == 0 && lad == -INFINITY);
    assert_int_equal(sla_solver_logdet_grad(s, NULL, g), SLA_ESINGULAR);
    assert_non_null(strstr(sla_solver_describe(s), "singular"));
    /* options.allow_singular: a numerically (not exactly) singular factorization is used */
    sla_solver_free(&s);
    free(b); free(x); free(g);
}

/* The graph Laplacian of an nx × ny grid in a gauge e^{iφ}: L_φ = D L D*, D = diag(e^{iφ_i})
 * (Hermitian, complex entries, singular with null vector D·1), times a complex scale z (z real:
 * Hermitian; else complex symmetric only when the gauge is trivial), plus shift·I. */
static void gauge_laplacian(int64_t nx, int64_t ny, zc z, int gauge, double shift,
                            sla_pattern **p, zc **values)
{
    int64_t n = nx * ny, k = 0;
    int64_t *r = malloc((size_t)(5 * n) * sizeof *r), *c = malloc((size_t)(5 * n) * sizeof *c);
    zc *v = malloc((size_t)(5 * n) * sizeof *v);
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int64_t i = y * nx + x, deg = 0;
            const int64_t nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
            for (int q = 0; q < 4; q++) {
                if (nb[q][0] < 0 || nb[q][0] >= nx || nb[q][1] < 0 || nb[q][1] >= ny) continue;
                int64_t j = nb[q][1] * nx + nb[q][0];
                double ph = gauge ? 0.7 * (double)i - 0.7 * (double)j + 0.01 * (double)(i * i - j * j) : 0;
                r[k] = i; c[k] = j; v[k++] = -z * cexp(I * ph);
                deg++;
            }
            r[k] = i; c[k] = i; v[k++] = z * (double)deg + shift;
        }
    from_coo(n, k, r, c, v, p, values);
    free(r); free(c); free(v);
}

static void singular_matrices(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    /* Neumann, Hermitian in a gauge: exactly singular, every method */
    gauge_laplacian(15, 12, 1.0, 1, 0, &p, &a);
    const sla_method all[] = {SLA_METHOD_LU, SLA_METHOD_KLU, SLA_METHOD_CHOLESKY};
    for (int m = 0; m < 3; m++) expect_singular(p, a, all[m], "gauge Neumann");
    free(a); sla_pattern_free(&p);
    /* complex symmetric (1 + 2i)·L, and nearly singular: + 1e-15·(1 − i)·I (rcond ~ 1e-16) */
    for (int k = 0; k < 2; k++) {
        gauge_laplacian(15, 12, 1.0 + 2.0 * I, 0, 0, &p, &a);
        if (k) {
            const int64_t *rp = sla_pattern_rowptr(p);
            const int32_t *ci = sla_pattern_colind(p);
            for (int64_t i = 0; i < sla_pattern_nrows(p); i++)
                for (int64_t q = rp[i]; q < rp[i + 1]; q++)
                    if (ci[q] == i) a[q] += 1e-15 * (1 - I);
        }
        for (int m = 0; m < 2; m++)
            expect_singular(p, a, lu_methods[m], k ? "nearly singular (1+2i) Neumann" : "(1+2i) Neumann");
        free(a); sla_pattern_free(&p);
    }
    /* every pivot 1, κ ≈ 2⁶⁰: U = I − 2i·(superdiagonal); a pivot-ratio test cannot see it */
    int64_t n = 60, r[120], c[120];
    zc v[120];
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        r[k] = i; c[k] = i; v[k++] = 1;
        if (i + 1 < n) { r[k] = i; c[k] = i + 1; v[k++] = -2.0 * I; }
    }
    from_coo(n, k, r, c, v, &p, &a);
    for (int m = 0; m < 2; m++) expect_singular(p, a, lu_methods[m], "bidiagonal, pivots 1");
    free(a); sla_pattern_free(&p);
}

/* regular complex matrices are not refused, and the estimate is an upper bound of the true
 * row-equilibrated rcond within a small factor (Higham's estimator is a lower bound of the
 * inverse's norm): shifted gauge Laplacians from well to badly conditioned (1e-3 .. 1e-9),
 * badly row-scaled, and a general random matrix */
static void regular_rcond(void **state)
{
    (void)state;
    const double shifts[] = {1e-1, 1e-4, 1e-8};
    for (int t = 0; t < 4; t++) {
        sla_pattern *p;
        zc *a;
        if (t < 3) gauge_laplacian(12, 10, 1.0, 1, shifts[t], &p, &a);
        else general(90, 31, 0, &p, &a);
        /* scale row 3 by 1e-200: rcond is of the row-equilibrated matrix */
        const int64_t *rp = sla_pattern_rowptr(p);
        for (int64_t q = rp[3]; q < rp[4]; q++) a[q] *= 1e-200;
        double want = true_rcond(p, a);
        const sla_method ms[] = {SLA_METHOD_LU, SLA_METHOD_KLU, SLA_METHOD_CHOLESKY};
        for (int m = 0; m < 3; m++) {
            if (m == 2) continue;      /* the row scaling breaks Hermitian symmetry */
            sla_solver *s = create(p, SLA_COMPLEX128, a, ms[m]);
            int64_t n = sla_pattern_nrows(p);
            zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
            for (int64_t i = 0; i < n; i++) b[i] = 1 - 0.5 * I * cos((double)i);
            sla_solve_info info;
            TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
            double got = sla_solver_rcond(s);
            if (!(got >= want * (1 - 1e-8) && got <= 10 * want))
                fail_msg("case %d %s: rcond %g, true %g", t, sla_method_name(ms[m]), got, want);
            sla_solver_free(&s);
            free(b); free(x);
        }
        free(a); sla_pattern_free(&p);
    }
    /* Hermitian PD, unscaled: cholesky too */
    sla_pattern *p;
    zc *a;
    gauge_laplacian(12, 10, 1.0, 1, 1e-6, &p, &a);
    double want = true_rcond(p, a);
    const sla_method all[] = {SLA_METHOD_LU, SLA_METHOD_KLU, SLA_METHOD_CHOLESKY};
    for (int m = 0; m < 3; m++) {
        sla_solver *s = create(p, SLA_COMPLEX128, a, all[m]);
        double got = sla_solver_rcond(s);
        if (!(got >= want * (1 - 1e-8) && got <= 10 * want))
            fail_msg("Hermitian %s: rcond %g, true %g", sla_method_name(all[m]), got, want);
        sla_solver_free(&s);
    }
    free(a); sla_pattern_free(&p);
}

/* a supernodal complex LLᴴ (a 120 × 120 gauge Laplacian + 0.5 I): the Cholesky gradient, from
 * the factor converted to simplicial form, equals the LU one */
static void supernodal_cholesky(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    gauge_laplacian(120, 120, 1.0, 1, 0.5, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    sla_solver *ch = create(p, SLA_COMPLEX128, a, SLA_METHOD_CHOLESKY);
    sla_solver *lu = create(p, SLA_COMPLEX128, a, SLA_METHOD_LU);
    assert_non_null(strstr(sla_solver_describe(ch), "supernodal"));
    zc *g1 = malloc((size_t)nnz * sizeof *g1), *g2 = malloc((size_t)nnz * sizeof *g2);
    TU_OK(sla_solver_logdet_grad(ch, NULL, g1));
    TU_OK(sla_solver_logdet_grad(lu, NULL, g2));
    double e = 0, m = 0;
    for (int64_t q = 0; q < nnz; q++) {
        e = fmax(e, cabs(g1[q] - g2[q]));
        m = fmax(m, cabs(g2[q]));
    }
    if (!(e < 1e-13 * m)) fail_msg("cholesky vs lu gradient: %g (max %g)", e, m);
    sla_solver_free(&ch);
    sla_solver_free(&lu);
    free(g1); free(g2); free(a);
    sla_pattern_free(&p);
}

/* method auto on complex matrices: the choice of each class and its "; auto: <why>" in the
 * description, kept across a refactor; the solve is checked against the dense inverse */
static void auto_choice(void **state)
{
    (void)state;
    static const struct { int kind; sla_method want; const char *why; } cases[] = {
        {0, SLA_METHOD_CHOLESKY, "; auto: complex Hermitian, Cholesky (LLᴴ) succeeded"},
        {1, SLA_METHOD_LU, "; auto: complex Hermitian, not positive definite (Cholesky failed): LU"},
#if SLA_HAVE_MUMPS
        {2, SLA_METHOD_LDLT, "; auto: complex symmetric (Aᵀ = A, not Hermitian): LDLᵀ (MUMPS"},
#else
        {2, SLA_METHOD_LU, "; auto: complex symmetric (Aᵀ = A, not Hermitian), LDLᵀ unavailable or refused: LU"},
#endif
        {3, SLA_METHOD_LU, "; auto: complex, neither Hermitian nor symmetric: LU"},
    };
    for (int t = 0; t < 4; t++) {
        sla_pattern *p;
        zc *a;
        if (cases[t].kind == 0) hermitian_pd(40, 3, &p, &a);
        else if (cases[t].kind == 1) gauge_laplacian(7, 6, 1.0, 1, -0.9, &p, &a);
        else if (cases[t].kind == 2) gauge_laplacian(7, 6, 1.0 + 2.0 * I, 0, 0.4, &p, &a);
        else general(40, 5, 1, &p, &a);
        sla_solver *s = create(p, SLA_COMPLEX128, a, SLA_METHOD_AUTO);
        assert_int_equal(sla_solver_method(s), cases[t].want);
        for (int r = 0; r < 2; r++) {
            if (r) TU_OK(sla_solver_refactor(s, a));
            const char *d = sla_solver_describe(s), *w = strstr(d, cases[t].why);
            if (!w || strstr(w + 1, "; auto: ")) fail_msg("case %d: %s", t, d);
        }
        int64_t n = sla_pattern_nrows(p);
        zc *inv = dense_inverse(p, a), *b = malloc((size_t)n * sizeof *b),
           *x = malloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n; i++) b[i] = 1 + 0.1 * (double)i - 0.3 * I;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        double err = 0, nx = 0;
        for (int64_t i = 0; i < n; i++) {
            zc want = 0;
            for (int64_t j = 0; j < n; j++) want += inv[i + j * n] * b[j];   /* column-major */
            err = fmax(err, cabs(x[i] - want));
            nx = fmax(nx, cabs(want));
        }
        if (!(err <= 1e-11 * nx)) fail_msg("case %d: error %g of %g", t, err, nx);
        sla_solver_free(&s);
        free(inv); free(b); free(x); free(a);
        sla_pattern_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(selinv_vs_dense),
        cmocka_unit_test(large_n),
        cmocka_unit_test(singular_matrices),
        cmocka_unit_test(regular_rcond),
        cmocka_unit_test(supernodal_cholesky),
        cmocka_unit_test(auto_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
