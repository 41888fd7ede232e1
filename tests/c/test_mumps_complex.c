/* Method ldlt with complex values (MUMPS zmumps, SYM = 2, complex symmetric LDLᵀ): a 2D
 * Helmholtz operator with an absorbing (complex-shifted) layer against LAPACK's zgesv / zgetrf /
 * zgetri (solves with op N, T, C to a scaled residual ≤ 1e-12, refactor, log-determinant as
 * phase and log|det|, its gradient A⁻ᴴ on the pattern), the solve VJP against method lu,
 * complex64, singular input (the rcond rule), Hermitian-but-not-symmetric input refused, and a
 * real symmetric indefinite matrix handed as complex against the real ldlt. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"   /* sla_huge_alloc, sla_huge_prefault_* */
#include "testutil.h"

typedef double complex zc;

/* −Δ − k²(1 + iσ(x, y)) on an nx × ny grid (Dirichlet), σ > 0 in a layer of width 4 at the
 * boundary: complex symmetric, not Hermitian. hermitian_gauge ≠ 0 multiplies the off-diagonal
 * entries by e^{±iφ} (Hermitian phases): then A is neither symmetric nor (with the complex
 * diagonal) Hermitian; with real diagonal (k2 = 0, shift only) it is Hermitian. */
static void helmholtz(int64_t nx, int64_t ny, double k2, double shift, int gauge,
                      sla_pattern **p, zc **values)
{
    int64_t n = nx * ny, k = 0;
    int64_t *r = malloc((size_t)(5 * n) * sizeof *r), *c = malloc((size_t)(5 * n) * sizeof *c);
    zc *v = malloc((size_t)(5 * n) * sizeof *v);
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int64_t i = y * nx + x;
            const int64_t nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
            for (int q = 0; q < 4; q++) {
                if (nb[q][0] < 0 || nb[q][0] >= nx || nb[q][1] < 0 || nb[q][1] >= ny) continue;
                int64_t j = nb[q][1] * nx + nb[q][0];
                double ph = gauge ? 0.3 * (double)(i - j) : 0;
                r[k] = i; c[k] = j; v[k++] = -cexp(I * ph);
            }
            int64_t d = x < ny - 1 - y ? x : ny - 1 - y;
            d = d < nx - 1 - x ? d : nx - 1 - x;
            d = d < y ? d : y;
            double sigma = d < 4 ? 0.5 * (double)(4 - d) / 4.0 : 0.0;
            r[k] = i; c[k] = i; v[k++] = 4.0 - k2 * (1.0 + I * sigma) + shift;
        }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, v, *values));
    free(r); free(c); free(v);
}

static sla_solver *ldlt(const sla_pattern *p, sla_dtype dt, const void *v)
{
    sla_matrix A = sla_matrix_view(p, dt, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LDLT;
    sla_solver *s;
    sla_status st = sla_solver_create(&A, &o, &s);
    if (st != SLA_OK) fail_msg("create ldlt: %d: %s", st, sla_last_error());
    return s;
}

/* dense column-major op(A) */
static zc *dense(const sla_pattern *p, const zc *a, sla_op op)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    zc *d = calloc((size_t)(n * n), sizeof *d);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            if (op == SLA_OP_N) d[i + ci[s] * n] += a[s];
            else d[ci[s] + i * n] += op == SLA_OP_C ? conj(a[s]) : a[s];
        }
    return d;
}

/* ‖b − Dx‖∞ / (‖D‖∞‖x‖∞ + ‖b‖∞) */
static double scaled_residual(int64_t n, const zc *d, const zc *x, const zc *b)
{
    double r = 0, an = 0, xn = 0, bn = 0;
    for (int64_t i = 0; i < n; i++) {
        zc t = b[i];
        double row = 0;
        for (int64_t j = 0; j < n; j++) { t -= d[i + j * n] * x[j]; row += cabs(d[i + j * n]); }
        r = fmax(r, cabs(t)); an = fmax(an, row); xn = fmax(xn, cabs(x[i])); bn = fmax(bn, cabs(b[i]));
    }
    return r / (an * xn + bn);
}

static void check_solves(const sla_pattern *p, const zc *a, sla_solver *s, const char *what)
{
    int64_t n = sla_pattern_nrows(p);
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x),
       *xr = malloc((size_t)n * sizeof *xr);
    lapack_int *ipiv = malloc((size_t)n * sizeof *ipiv);
    for (int64_t i = 0; i < n; i++) b[i] = cos(0.3 * (double)i) + I * sin(0.7 * (double)i);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int o = 0; o < 3; o++) {
        TU_OK(sla_solver_solve(s, ops[o], 1, b, x, NULL));
        zc *d = dense(p, a, ops[o]);
        double res = scaled_residual(n, d, x, b);
        if (!(res <= 1e-12)) fail_msg("%s op %d: scaled residual %g", what, o, res);
        memcpy(xr, b, (size_t)n * sizeof *xr);
        assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, (lapack_int)n, 1, (lapack_complex_double *)d,
                                       (lapack_int)n, ipiv, (lapack_complex_double *)xr, (lapack_int)n), 0);
        double e = 0, m = 0;
        for (int64_t i = 0; i < n; i++) { e = fmax(e, cabs(x[i] - xr[i])); m = fmax(m, cabs(xr[i])); }
        if (!(e <= 1e-10 * m)) fail_msg("%s op %d: |x − x_zgesv| %g (max %g)", what, o, e, m);
        free(d);
    }
    free(b); free(x); free(xr); free(ipiv);
}

/* logdet against zgetrf, the gradient against zgetri */
static void check_logdet(const sla_pattern *p, const zc *a, sla_solver *s, const char *what)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    zc *d = dense(p, a, SLA_OP_N);
    lapack_int *ipiv = malloc((size_t)n * sizeof *ipiv);
    assert_int_equal(LAPACKE_zgetrf(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n,
                                    (lapack_complex_double *)d, (lapack_int)n, ipiv), 0);
    double lad_ref = 0;
    zc ph_ref = 1;
    for (int64_t i = 0; i < n; i++) {
        zc u = d[i + i * n];
        lad_ref += log(cabs(u));
        ph_ref *= (ipiv[i] != i + 1 ? -1.0 : 1.0) * u / cabs(u);
    }
    double sign[2], lad;
    TU_OK(sla_solver_logdet(s, sign, &lad));
    if (!(fabs(lad - lad_ref) <= 1e-11 * fabs(lad_ref)))
        fail_msg("%s: log|det| %.17g vs zgetrf %.17g", what, lad, lad_ref);
    if (!(cabs(sign[0] + I * sign[1] - ph_ref) <= 1e-10))
        fail_msg("%s: phase %g%+gi vs zgetrf %g%+gi", what, sign[0], sign[1], creal(ph_ref), cimag(ph_ref));
    assert_int_equal(LAPACKE_zgetri(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_complex_double *)d,
                                    (lapack_int)n, ipiv), 0);
    zc *dv = malloc((size_t)nnz * sizeof *dv);
    double g = 0.75;
    TU_OK(sla_solver_logdet_grad(s, &g, dv));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double e = 0, m = 0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t q = rp[r]; q < rp[r + 1]; q++) {
            zc want = g * conj(d[ci[q] + r * n]);
            e = fmax(e, cabs(dv[q] - want));
            m = fmax(m, cabs(want));
        }
    if (!(e <= 1e-11 * m)) fail_msg("%s: logdet gradient error %g (max %g)", what, e, m);
    free(d); free(ipiv); free(dv);
}

static void helmholtz_vs_lapack(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(18, 16, 0.9, 0, 0, &p, &a);
    sla_solver *s = ldlt(p, SLA_COMPLEX128, a);
    assert_non_null(strstr(sla_solver_describe(s), "MUMPS"));
    check_solves(p, a, s, "helmholtz");
    check_logdet(p, a, s, "helmholtz");
    /* refactor: other values (k² = 3.1, a stronger indefiniteness) on the same pattern */
    sla_pattern *p2;
    zc *a2;
    helmholtz(18, 16, 3.1, 0, 0, &p2, &a2);
    TU_OK(sla_solver_refactor(s, a2));
    check_solves(p2, a2, s, "helmholtz refactored");
    check_logdet(p2, a2, s, "helmholtz refactored");
    sla_solver_free(&s);
    free(a); free(a2);
    sla_pattern_free(&p);
    sla_pattern_free(&p2);
}

/* the solve VJP (λ = A⁻ᴴg) and its matrix gradient against method lu (UMFPACK complex) */
static void vjp_vs_lu(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(12, 10, 2.0, 0, 0, &p, &a);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    sla_solver *lu, *s = ldlt(p, SLA_COMPLEX128, a);
    TU_OK(sla_solver_create(&A, &o, &lu));
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *g = malloc((size_t)n * sizeof *g);
    zc *db[2], *dv[2];
    for (int64_t i = 0; i < n; i++) {
        b[i] = 1.0 + 0.1 * (double)i * I;
        g[i] = sin((double)i) - 0.5 * I;
    }
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int op = 0; op < 3; op++) {
        for (int k = 0; k < 2; k++) {
            sla_solver *t = k ? lu : s;
            db[k] = malloc((size_t)n * sizeof **db);
            dv[k] = calloc((size_t)nnz, sizeof **dv);
            TU_OK(sla_solver_solve(t, ops[op], 1, b, x, NULL));
            TU_OK(sla_solver_solve_vjp(t, ops[op], 1, x, g, db[k], dv[k], NULL));
        }
        double e = 0, m = 0;
        for (int64_t i = 0; i < n; i++) { e = fmax(e, cabs(db[0][i] - db[1][i])); m = fmax(m, cabs(db[1][i])); }
        for (int64_t q = 0; q < nnz; q++) { e = fmax(e, cabs(dv[0][q] - dv[1][q])); m = fmax(m, cabs(dv[1][q])); }
        if (!(e <= 1e-11 * m)) fail_msg("op %d: vjp ldlt vs lu %g (max %g)", op, e, m);
        for (int k = 0; k < 2; k++) { free(db[k]); free(dv[k]); }
    }
    sla_solver_free(&s);
    sla_solver_free(&lu);
    free(a); free(b); free(x); free(g);
    sla_pattern_free(&p);
}

static void complex64(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(10, 10, 1.5, 0, 0, &p, &a);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    float complex *af = malloc((size_t)nnz * sizeof *af), *bf = malloc((size_t)n * sizeof *bf),
                  *xf = malloc((size_t)n * sizeof *xf);
    for (int64_t q = 0; q < nnz; q++) af[q] = (float complex)a[q];
    for (int64_t i = 0; i < n; i++) bf[i] = 1.0f + 0.5f * I;
    sla_solver *s = ldlt(p, SLA_COMPLEX64, af);
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, bf, xf, &info));
    zc *x = malloc((size_t)n * sizeof *x), *b = malloc((size_t)n * sizeof *b);
    for (int64_t i = 0; i < n; i++) { x[i] = xf[i]; b[i] = bf[i]; }
    zc *d = dense(p, a, SLA_OP_N);
    double res = scaled_residual(n, d, x, b);
    if (!(res <= 1e-6)) fail_msg("complex64: scaled residual %g", res);
    sla_solver_free(&s);
    free(af); free(bf); free(xf); free(x); free(b); free(d); free(a);
    sla_pattern_free(&p);
}

/* diagonal = −(row sum of the off-diagonal) + extra: singular (null vector 1) for extra = 0 */
static void neumann_diagonal(const sla_pattern *p, zc *a, zc extra)
{
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < sla_pattern_nrows(p); i++) {
        zc off = 0;
        int64_t dq = -1;
        for (int64_t q = rp[i]; q < rp[i + 1]; q++) { if (ci[q] == i) dq = q; else off += a[q]; }
        a[dq] = -off + extra;
    }
}

/* exactly singular (the Neumann-like Laplacian times 1 + 2i: complex symmetric, null vector
 * 1) and Hermitian-but-not-symmetric input */
static void singular_and_hermitian(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(9, 8, 0, 0, 0, &p, &a);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    neumann_diagonal(p, a, 0);
    for (int64_t q = 0; q < nnz; q++) a[q] *= 1 + 2 * I;
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LDLT;
    sla_solver *s;
    TU_OK(sla_solver_create(&A, &o, &s));
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x),
       *g = malloc((size_t)nnz * sizeof *g);
    for (int64_t i = 0; i < n; i++) b[i] = 1 + 0.1 * (double)i;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ESINGULAR);
    assert_non_null(strstr(sla_last_error(), "singular"));
    assert_int_equal(sla_solver_solve(s, SLA_OP_C, 1, b, x, NULL), SLA_ESINGULAR);
    double sign[2] = {7, 7}, lad = 7;
    TU_OK(sla_solver_logdet(s, sign, &lad));
    assert_true(sign[0] == 0 && sign[1] == 0 && lad == -INFINITY);
    assert_int_equal(sla_solver_logdet_grad(s, NULL, g), SLA_ESINGULAR);
    sla_solver_free(&s);
    free(a);
    sla_pattern_free(&p);
    /* Hermitian (gauge phases, real diagonal): refused, the message says Hermitian */
    helmholtz(6, 5, 0, 0.5, 1, &p, &a);
    A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "Hermitian"));
    assert_non_null(strstr(sla_last_error(), "complex symmetric"));
    assert_null(s);
    free(a); free(b); free(x); free(g);
    sla_pattern_free(&p);
}

/* a real symmetric indefinite matrix as complex128 gives the real ldlt's answers */
static void real_as_complex(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(11, 9, 0, -2.7, 0, &p, &a);   /* 4 − 2.7 on the diagonal: indefinite */
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    double *ar = malloc((size_t)nnz * sizeof *ar), *br = malloc((size_t)n * sizeof *br),
           *xr = malloc((size_t)n * sizeof *xr);
    for (int64_t q = 0; q < nnz; q++) ar[q] = creal(a[q]);
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) { br[i] = cos((double)i); b[i] = br[i]; }
    sla_solver *s = ldlt(p, SLA_COMPLEX128, a), *sr = ldlt(p, SLA_FLOAT64, ar);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    TU_OK(sla_solver_solve(sr, SLA_OP_N, 1, br, xr, NULL));
    double e = 0, m = 0;
    for (int64_t i = 0; i < n; i++) { e = fmax(e, cabs(x[i] - xr[i])); m = fmax(m, fabs(xr[i])); }
    if (!(e <= 1e-12 * m)) fail_msg("real as complex: %g (max %g)", e, m);
    double sz[2], lz, sgr, lr;
    TU_OK(sla_solver_logdet(s, sz, &lz));
    TU_OK(sla_solver_logdet(sr, &sgr, &lr));
    assert_true(fabs(lz - lr) <= 1e-12 * fabs(lr));
    assert_true(fabs(sz[0] - sgr) <= 1e-12 && fabs(sz[1]) <= 1e-12);
    sla_solver_free(&s);
    sla_solver_free(&sr);
    free(a); free(ar); free(br); free(xr); free(b); free(x);
    sla_pattern_free(&p);
}

/* every ordering gives the same answers */
static void orderings(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(14, 13, 1.7, 0, 0, &p, &a);
    const sla_ordering ords[] = {SLA_ORDERING_NATURAL, SLA_ORDERING_AMD, SLA_ORDERING_METIS};
    const char *names[] = {"natural", "AMD", "METIS"};
    for (int k = 0; k < 3; k++) {
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_LDLT;
        o.ordering = ords[k];
        sla_solver *s;
        sla_status st = sla_solver_create(&A, &o, &s);
        if (st == SLA_EUNSUPPORTED && ords[k] == SLA_ORDERING_METIS) continue;   /* no METIS */
        TU_OK(st);
        assert_non_null(strstr(sla_solver_describe(s), names[k]));
        check_solves(p, a, s, names[k]);
        check_logdet(p, a, s, names[k]);
        sla_solver_free(&s);
    }
    free(a);
    sla_pattern_free(&p);
}

/* the condition estimate on LDLᵀ's factors (its first call solves two columns in one JOB = 3):
 * the same Higham estimator as on LU's factors, so the same estimate up to rounding and the
 * column each takes: (i) regular Helmholtz, rcond within a factor 2 of LU's and not refused;
 * (ii) the singular Neumann operator of singular_and_hermitian plus 1e-15·(1 − i)·I (no exact
 * null pivot, rcond ~ 1e-16): refused with SLA_ESINGULAR, rcond < SLA_RCOND_SINGULAR */
static void rcond_like_lu(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(23, 19, 3.0, 0, 0, &p, &a);
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    sla_solver *s = ldlt(p, SLA_COMPLEX128, a), *u;
    TU_OK(sla_solver_create(&A, &o, &u));
    double rl = sla_solver_rcond(s), ru = sla_solver_rcond(u);
    if (!(rl > SLA_RCOND_SINGULAR && rl <= 2 * ru && ru <= 2 * rl))
        fail_msg("rcond ldlt %g, lu %g", rl, ru);
    sla_solver_free(&s);
    sla_solver_free(&u);
    free(a);
    sla_pattern_free(&p);
    helmholtz(9, 8, 0, 0, 0, &p, &a);
    n = sla_pattern_nrows(p);
    neumann_diagonal(p, a, 1e-15 * (1 - I));
    s = ldlt(p, SLA_COMPLEX128, a);
    zc b[72], x[72];
    for (int64_t i = 0; i < n; i++) b[i] = 1 + 0.1 * (double)i;
    if (!(sla_solver_rcond(s) < SLA_RCOND_SINGULAR))
        fail_msg("nearly singular: rcond %g (%s)", sla_solver_rcond(s), sla_solver_describe(s));
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL), SLA_ESINGULAR);
    sla_solver_free(&s);
    free(a);
    sla_pattern_free(&p);
}

/* libsla's huge-page work arrays (error.c; MUMPS's WK_USER): zero-filled, 2 MiB aligned on
 * Linux, writable to the end; an injected failure is SLA_ENOMEM naming the array. Then the
 * LDLᵀ of a Helmholtz matrix with each of its allocations failing in turn: SLA_ENOMEM and no
 * solver until every allocation succeeds, then the residual; and a 300 × 300 one whose work
 * array (80 MB) is libsla's, factored, refactored and solved to a backward error ‖b − Ax‖∞ /
 * (‖A‖∞‖x‖∞ + ‖b‖∞) ≤ 1e-12 (measured 1.6e-13 at n = 90000) */

static void work_array_failures(void **state)
{
    (void)state;
    size_t bytes = ((size_t)3 << 20) + 5;
    unsigned char *w = sla_huge_alloc(bytes, "test array");
    assert_non_null(w);
#if defined(__linux__)
    assert_int_equal((uintptr_t)w % ((uintptr_t)2 << 20), 0);
#endif
    for (size_t i = 0; i < bytes; i += 4093) assert_int_equal(w[i], 0);
    assert_int_equal(w[bytes - 1], 0);
    memset(w, 0x5a, bytes);
    sla_huge_free(w, bytes);
    /* the prefault thread races with the owner's writes and never changes a byte: the odd
     * 4 KiB pages written while it runs keep their values, the even ones stay zero */
    size_t big = ((size_t)96 << 20) + 7;
    unsigned char *v = sla_huge_alloc(big, "test array");
    assert_non_null(v);
    sla_prefault pf;
    sla_huge_prefault_start(&pf, v, big);
    for (size_t i = 4096; i < big; i += 8192) v[i] = (unsigned char)(1 + (i >> 13) % 251);
    sla_huge_prefault_join(&pf);
    for (size_t i = 0; i < big; i += 4096)
        assert_int_equal(v[i], (i / 4096) % 2 ? (unsigned char)(1 + (i >> 13) % 251) : 0);
    assert_int_equal(v[big - 1], 0);
    sla_huge_free(v, big);
    sla_test_fail_alloc_after(0);
    assert_null(sla_huge_alloc(bytes, "test array"));
    sla_test_fail_alloc_after(-1);
    assert_non_null(strstr(sla_last_error(), "test array"));
    sla_pattern *p;
    zc *a;
    helmholtz(12, 10, 3.0, 0, 0, &p, &a);
    int64_t n = sla_pattern_nrows(p);
    sla_solver *s = NULL;
    for (int64_t k = 0;; k++) {
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_LDLT;
        sla_test_fail_alloc_after(k);
        sla_status st = sla_solver_create(&A, &o, &s);
        int64_t used = sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) { assert_true(k >= used); break; }
        if (st != SLA_ENOMEM) fail_msg("allocation %lld failing: status %d (%s)", (long long)k,
                                       (int)st, sla_last_error());
        assert_null(s);
    }
    for (int big = 0; big < 2; big++) {
        if (big) {
            sla_solver_free(&s);
            free(a);
            sla_pattern_free(&p);
            helmholtz(300, 300, 3.0, 0, 0, &p, &a);
            n = sla_pattern_nrows(p);
            s = ldlt(p, SLA_COMPLEX128, a);
            TU_OK(sla_solver_refactor(s, a));
        }
        zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n; i++) b[i] = 1 - 0.2 * (double)(i % 97) * I;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        const int64_t *rp = sla_pattern_rowptr(p);
        const int32_t *ci = sla_pattern_colind(p);
        double r = 0, nb = 0, na = 0, nx = 0;          /* ∞-norms */
        for (int64_t i = 0; i < n; i++) {
            zc t = b[i];
            double row = 0;
            for (int64_t q = rp[i]; q < rp[i + 1]; q++) {
                t -= a[q] * x[ci[q]];
                row += cabs(a[q]);
            }
            r = fmax(r, cabs(t));
            nb = fmax(nb, cabs(b[i]));
            na = fmax(na, row);
            nx = fmax(nx, cabs(x[i]));
        }
        double scaled = r / (na * nx + nb);                 /* backward error */
        if (!(scaled <= 1e-12)) fail_msg("n = %lld: scaled residual %g", (long long)n, scaled);
        free(b); free(x);
    }
    sla_solver_free(&s);
    free(a);
    sla_pattern_free(&p);
}

/* X[i][j] = op(A)⁻¹ B by nrhs single-column solves (the reference of the block solves) */
static void column_solves(sla_solver *s, sla_op op, int64_t n, int64_t nrhs, const zc *B, zc *X)
{
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    for (int64_t j = 0; j < nrhs; j++) {
        for (int64_t i = 0; i < n; i++) b[i] = B[i * nrhs + j];
        TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
        for (int64_t i = 0; i < n; i++) X[i * nrhs + j] = x[i];
    }
    free(b); free(x);
}

static void assert_close(const zc *x, const zc *ref, int64_t len, double tol, const char *what)
{
    double e = 0, m = 0;
    for (int64_t i = 0; i < len; i++) { e = fmax(e, cabs(x[i] - ref[i])); m = fmax(m, cabs(ref[i])); }
    if (!(e <= tol * m)) fail_msg("%s: |x − ref| %g (max %g)", what, e, m);
}

/* allocations of one sla_solver_solve without info: 0 in the backend when the solution comes
 * from the condition estimate (sla_solver_create_for), ≥ 1 (MUMPS's right-hand side block)
 * otherwise */
static int64_t solve_allocations(sla_solver *s, sla_op op, int64_t nrhs, const zc *B, zc *X)
{
    sla_test_fail_alloc_after(-1);
    TU_OK(sla_solver_solve(s, op, nrhs, B, X, NULL));
    return sla_test_fail_alloc_after(-1);
}

/* sla_solver_create_for / refactor_for: the right-hand side told at create is solved with the
 * condition estimate and returned by the next solve with equal B (another buffer), once; the
 * multi-column block solve against column-by-column solves; a changed B, op C, a refactor,
 * a singular matrix and bad arguments */
static void first_rhs(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    helmholtz(12, 10, 2.0, 0, 0, &p, &a);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 3, len = n * k;
    zc *B = malloc((size_t)len * sizeof *B), *B2 = malloc((size_t)len * sizeof *B2),
       *X = malloc((size_t)len * sizeof *X), *ref = malloc((size_t)len * sizeof *ref),
       *refc = malloc((size_t)len * sizeof *refc), *a2 = malloc((size_t)nnz * sizeof *a2);
    for (int64_t q = 0; q < len; q++) B[q] = cos(0.37 * (double)q) + I * sin(1.3 * (double)q);
    sla_solver *s0 = ldlt(p, SLA_COMPLEX128, a);
    column_solves(s0, SLA_OP_N, n, k, B, ref);
    column_solves(s0, SLA_OP_C, n, k, B, refc);
    TU_OK(sla_solver_solve(s0, SLA_OP_N, k, B, X, NULL));     /* one block call */
    assert_close(X, ref, len, 1e-12, "block solve");
    assert_true(solve_allocations(s0, SLA_OP_N, k, B, X) > 0);

    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LDLT;
    sla_solver *s;
    TU_OK(sla_solver_create_for(&A, &o, SLA_OP_N, k, B, &s));
    memcpy(B2, B, (size_t)len * sizeof *B2);
    memset(X, 0, (size_t)len * sizeof *X);
    assert_int_equal(solve_allocations(s, SLA_OP_T, k, B2, X), 0);   /* A = Aᵀ: T is N */
    assert_close(X, ref, len, 1e-12, "create_for, op T");
    assert_true(solve_allocations(s, SLA_OP_N, k, B2, X) > 0);      /* once only */
    assert_close(X, ref, len, 1e-12, "second solve");
    sla_solver_free(&s);

    /* a changed B is solved as it is; op C */
    TU_OK(sla_solver_create_for(&A, &o, SLA_OP_N, k, B, &s));
    B2[5] += 1;
    assert_true(solve_allocations(s, SLA_OP_N, k, B2, X) > 0);
    zc *ref2 = malloc((size_t)len * sizeof *ref2);
    column_solves(s0, SLA_OP_N, n, k, B2, ref2);
    assert_close(X, ref2, len, 1e-12, "changed B");
    sla_solver_free(&s);
    TU_OK(sla_solver_create_for(&A, &o, SLA_OP_C, k, B, &s));
    assert_true(solve_allocations(s, SLA_OP_N, k, B, X) > 0);       /* told C, asked N */
    sla_solver_free(&s);
    TU_OK(sla_solver_create_for(&A, &o, SLA_OP_C, k, B, &s));
    assert_int_equal(solve_allocations(s, SLA_OP_C, k, B, X), 0);
    assert_close(X, refc, len, 1e-12, "create_for, op C");

    /* refactor_for with 2A: X = ref / 2; a plain refactor keeps nothing */
    for (int64_t q = 0; q < nnz; q++) a2[q] = 2 * a[q];
    TU_OK(sla_solver_refactor_for(s, a2, SLA_OP_N, k, B));
    assert_int_equal(solve_allocations(s, SLA_OP_N, k, B, X), 0);
    for (int64_t q = 0; q < len; q++) X[q] *= 2;
    assert_close(X, ref, len, 1e-12, "refactor_for");
    TU_OK(sla_solver_refactor_for(s, a, SLA_OP_N, k, B));
    TU_OK(sla_solver_refactor(s, a2));
    assert_true(solve_allocations(s, SLA_OP_N, k, B, X) > 0);
    sla_solver_free(&s);
    /* a plain create after create_for: the hint did not outlive its call */
    TU_OK(sla_solver_create_for(&A, &o, SLA_OP_N, k, B, &s));
    sla_solver_free(&s);
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_true(solve_allocations(s, SLA_OP_N, k, B, X) > 0);
    sla_solver_free(&s);

    /* bad arguments, named */
    assert_int_equal(sla_solver_create_for(&A, &o, (sla_op)7, k, B, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "op = 7"));
    assert_null(s);
    assert_int_equal(sla_solver_create_for(&A, &o, SLA_OP_N, 0, B, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "nrhs"));
    assert_int_equal(sla_solver_create_for(&A, &o, SLA_OP_N, k, NULL, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "B"));

    /* singular (the Neumann-like matrix): told B, the solve still refuses */
    neumann_diagonal(p, a, 0);
    TU_OK(sla_solver_create_for(&A, &o, SLA_OP_N, k, B, &s));
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, k, B, X, NULL), SLA_ESINGULAR);
    sla_solver_free(&s);
    sla_solver_free(&s0);
    free(a); free(a2); free(B); free(B2); free(X); free(ref); free(refc); free(ref2);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(helmholtz_vs_lapack),
        cmocka_unit_test(vjp_vs_lu),
        cmocka_unit_test(complex64),
        cmocka_unit_test(singular_and_hermitian),
        cmocka_unit_test(real_as_complex),
        cmocka_unit_test(orderings),
        cmocka_unit_test(rcond_like_lu),
        cmocka_unit_test(work_array_failures),
        cmocka_unit_test(first_rhs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
