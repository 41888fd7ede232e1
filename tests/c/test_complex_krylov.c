/* The Krylov methods as true complex methods on complex spaces: CG (Hermitian PD), MINRES
 * (Hermitian), COCG (complex symmetric), GMRES and BiCGStab (general) against LAPACK's zgesv on
 * the dense matrix, for op N, T and C; real matrices handed as complex give the real answers;
 * COCG and GMRES iteration counts on 2D Helmholtz with an absorbing boundary; the solve VJP
 * (A⁻ᴴ g) against the LU one; COCG's breakdown (rᵀr = 0 for r ≠ 0) reported, not hidden. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef double complex zc;

/* COO triplets of a test matrix, gathered into a pattern and complex128 values */
typedef struct coo {
    int64_t nnz, cap, *r, *c;
    zc *v;
} coo;

static void coo_add(coo *t, int64_t i, int64_t j, zc v)
{
    if (t->nnz == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->r = realloc(t->r, (size_t)t->cap * sizeof *t->r);
        t->c = realloc(t->c, (size_t)t->cap * sizeof *t->c);
        t->v = realloc(t->v, (size_t)t->cap * sizeof *t->v);
    }
    t->r[t->nnz] = i;
    t->c[t->nnz] = j;
    t->v[t->nnz++] = v;
}

static void coo_finish(coo *t, int64_t n, sla_pattern **p, zc **values)
{
    TU_OK(sla_pattern_from_coo(n, n, t->nnz, t->r, t->c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, t->v, *values));
    free(t->r); free(t->c); free(t->v);
}

enum { HERMITIAN, HELMHOLTZ, GENERAL, SHIFTED };

/* max |xz − x| / max |x| for a complex solution xz of a real problem with real solution x;
 * fails the test if xz has any imaginary part (none may ever appear) */
static double real_as_complex_error(const zc *xz, const double *x, int64_t n)
{
    double e = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        e = fmax(e, cabs(xz[i] - x[i]));
        m = fmax(m, fabs(x[i]));
        assert_true(cimag(xz[i]) == 0);
    }
    return e / m;
}

/* On an N × N grid (h = 1/(N+1)), scaled by h²:
 *   HERMITIAN  the magnetic Laplacian (links e^{±iθ}) + 0.05: Hermitian positive definite;
 *   HELMHOLTZ  −Δ − k²(1 + 0.05i) with a first-order absorbing condition (−i k h on the
 *              boundary rows' diagonal): complex symmetric, not Hermitian;
 *   GENERAL    HELMHOLTZ plus a first-order convection term in x: neither;
 *   SHIFTED    HELMHOLTZ with the complex shift −k²(1 + 0.5i): the shifted Laplacian of
 *              Erlangga, Oosterlee & Vuik (2006), with the sign of the problem's damping. */
static void grid_matrix(int kind, int64_t N, double k, sla_pattern **p, zc **values)
{
    coo t = {0};
    double h = 1.0 / (double)(N + 1);
    for (int64_t y = 0; y < N; y++)
        for (int64_t x = 0; x < N; x++) {
            int64_t i = y * N + x;
            zc d = 4;
            int boundary = x == 0 || y == 0 || x == N - 1 || y == N - 1;
            if (kind == HERMITIAN) d += 0.05;
            else d -= k * k * h * h * (1 + (kind == SHIFTED ? 0.5 : 0.05) * I) + (boundary ? I * k * h : 0);
            coo_add(&t, i, i, d);
            const int64_t nb[4][2] = {{x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}};
            for (int q = 0; q < 4; q++) {
                int64_t xx = nb[q][0], yy = nb[q][1];
                if (xx < 0 || yy < 0 || xx >= N || yy >= N) continue;
                zc v = -1;
                if (kind == HERMITIAN) {
                    double th = 0.3 * (double)(y + 1) * (q == 0 ? 1 : q == 1 ? -1 : 0);
                    v = -cexp(I * th);          /* a_ji = conj(a_ij) */
                }
                if (kind == GENERAL && q < 2) v += q == 0 ? 0.3 : -0.3;
                coo_add(&t, i, yy * N + xx, v);
            }
        }
    coo_finish(&t, N * N, p, values);
}

static zc *dense_colmajor(const sla_pattern *p, const zc *a)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    zc *d = calloc((size_t)(n * n), sizeof *d);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) d[i + ci[s] * n] += a[s];
    return d;
}

/* x = op(D)⁻¹ b by zgesv (op T and C through the transposed / conjugated copy) */
static void dense_solve(int64_t n, const zc *D, sla_op op, const zc *b, zc *x)
{
    zc *M = malloc((size_t)(n * n) * sizeof *M);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            zc a = op == SLA_OP_N ? D[i + j * n] : D[j + i * n];
            M[i + j * n] = op == SLA_OP_C ? conj(a) : a;
        }
    lapack_int *piv = malloc((size_t)n * sizeof *piv);
    memcpy(x, b, (size_t)n * sizeof *x);
    assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, (lapack_int)n, 1,
                                   (lapack_complex_double *)M, (lapack_int)n, piv,
                                   (lapack_complex_double *)x, (lapack_int)n), 0);
    free(M);
    free(piv);
}

static void random_vec(int64_t n, uint64_t seed, zc *x)
{
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++) x[i] = tu_rand(&st) + I * tu_rand(&st);
}

static double rel_err(int64_t n, const zc *x, const zc *ref)
{
    double e = 0, r = 0;
    for (int64_t i = 0; i < n; i++) {
        e += creal((x[i] - ref[i]) * conj(x[i] - ref[i]));
        r += creal(ref[i] * conj(ref[i]));
    }
    return sqrt(e / r);
}

static sla_solver *krylov(const sla_matrix *A, sla_method m, sla_precond pc, double rtol)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    o.precond = pc;
    o.rtol = rtol;
    o.maxiter = 5000;
    o.restart = 400;
    sla_solver *s;
    TU_OK(sla_solver_create(A, &o, &s));
    return s;
}

/* each method on its class of matrices against zgesv, op N, T and C */
static void methods_vs_zgesv(void **state)
{
    (void)state;
    const int64_t N = 12, n = N * N;
    struct { sla_method m; int kind; sla_precond pc; int ops; } cases[] = {
        {SLA_METHOD_CG, HERMITIAN, SLA_PRECOND_NONE, 5},      /* ops: bit N=1, T=2, C=4 */
        {SLA_METHOD_CG, HERMITIAN, SLA_PRECOND_JACOBI, 5},
        {SLA_METHOD_CG, HERMITIAN, SLA_PRECOND_IC0, 7},      /* Aᵀ = conj(A): Hermitian PD too */
        {SLA_METHOD_CG, HERMITIAN, SLA_PRECOND_AMG, 7},
        {SLA_METHOD_COCG, HELMHOLTZ, SLA_PRECOND_AMG, 7},
        {SLA_METHOD_MINRES, HERMITIAN, SLA_PRECOND_NONE, 5},
        {SLA_METHOD_MINRES, HERMITIAN, SLA_PRECOND_JACOBI, 5},
        {SLA_METHOD_COCG, HELMHOLTZ, SLA_PRECOND_NONE, 7},
        {SLA_METHOD_COCG, HELMHOLTZ, SLA_PRECOND_JACOBI, 7},
        {SLA_METHOD_GMRES, HELMHOLTZ, SLA_PRECOND_NONE, 7},
        {SLA_METHOD_GMRES, GENERAL, SLA_PRECOND_NONE, 7},
        {SLA_METHOD_GMRES, GENERAL, SLA_PRECOND_JACOBI, 7},
        {SLA_METHOD_BICGSTAB, GENERAL, SLA_PRECOND_NONE, 7},
        {SLA_METHOD_BICGSTAB, GENERAL, SLA_PRECOND_JACOBI, 7},
        {SLA_METHOD_BICGSTAB, HERMITIAN, SLA_PRECOND_NONE, 7}};
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    zc *ref = malloc((size_t)n * sizeof *ref);
    random_vec(n, 7, b);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sla_pattern *p;
        zc *v;
        grid_matrix(cases[c].kind, N, 20.0, &p, &v);
        zc *D = dense_colmajor(p, v);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
        sla_solver *s = krylov(&A, cases[c].m, cases[c].pc, 1e-11);
        const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
        for (int oi = 0; oi < 3; oi++) {
            if (!(cases[c].ops & (1 << oi))) continue;
            sla_solve_info info;
            dense_solve(n, D, ops[oi], b, ref);
            TU_OK(sla_solver_solve(s, ops[oi], 1, b, x, &info));
            if (!info.converged || info.relative_residual > 1e-11 || rel_err(n, x, ref) > 1e-8)
                fail_msg("case %zu (%s, op %d): converged %d, residual %g, error %g, %lld it",
                         c, sla_solver_describe(s), oi, info.converged, info.relative_residual,
                         rel_err(n, x, ref), (long long)info.iterations);
        }
        sla_solver_free(&s);
        free(D);
        free(v);
        sla_pattern_free(&p);
    }
    free(b); free(x); free(ref);
}

/* a real matrix handed as complex gives the real answer, in about the real iteration count */
static void real_as_complex(void **state)
{
    (void)state;
    sla_pattern *p;
    double *a;
    tu_poisson2d(16, 16, &p, &a);
    int64_t n = 256, nnz = sla_pattern_nnz(p);
    zc *az = malloc((size_t)nnz * sizeof *az), *bz = malloc((size_t)n * sizeof *bz);
    zc *xz = malloc((size_t)n * sizeof *xz);
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    for (int64_t k = 0; k < nnz; k++) az[k] = a[k];
    tu_fill_random(b, n, 3);
    for (int64_t i = 0; i < n; i++) bz[i] = b[i];
    sla_matrix Ar = sla_matrix_view(p, SLA_FLOAT64, 1, a);
    sla_matrix Az = sla_matrix_view(p, SLA_COMPLEX128, 1, az);
    const sla_method ms[] = {SLA_METHOD_CG, SLA_METHOD_MINRES, SLA_METHOD_COCG, SLA_METHOD_GMRES,
                             SLA_METHOD_BICGSTAB};
    for (int k = 0; k < 5; k++) {
        sla_solver *sr = krylov(&Ar, ms[k], SLA_PRECOND_NONE, 1e-10);
        sla_solver *sz = krylov(&Az, ms[k], SLA_PRECOND_NONE, 1e-10);
        sla_solve_info ir, iz;
        TU_OK(sla_solver_solve(sr, SLA_OP_N, 1, b, x, &ir));
        TU_OK(sla_solver_solve(sz, SLA_OP_N, 1, bz, xz, &iz));
        assert_true(ir.converged && iz.converged);
        double e = real_as_complex_error(xz, x, n);
        if (e > 1e-8 || llabs(iz.iterations - ir.iterations) > 2)
            fail_msg("%s: |x_c − x_r| = %g, iterations %lld complex vs %lld real",
                     sla_method_name(ms[k]), e, (long long)iz.iterations,
                     (long long)ir.iterations);
        sla_solver_free(&sr);
        sla_solver_free(&sz);
    }
    free(az); free(bz); free(xz); free(b); free(x); free(a);
    sla_pattern_free(&p);
}

/* 2D Helmholtz, k h = 0.6 (10 points per wavelength), absorbing boundary: COCG's iterations
 * (one SpMV each, short recurrences) against full GMRES's (the minimal residual: a lower bound
 * for any Krylov method with the same start), and against BiCGStab (two SpMVs an iteration) */
static void cocg_helmholtz(void **state)
{
    (void)state;
    const int64_t N = 40, n = N * N;
    sla_pattern *p;
    zc *v;
    grid_matrix(HELMHOLTZ, N, 0.6 * (N + 1), &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    zc *b = calloc((size_t)n, sizeof *b), *x = malloc((size_t)n * sizeof *x);
    b[(N / 2) * N + N / 2] = 1;                      /* a point source */
    sla_solve_info ic, ig, ib;
    sla_solver *c = krylov(&A, SLA_METHOD_COCG, SLA_PRECOND_NONE, 1e-8);
    TU_OK(sla_solver_solve(c, SLA_OP_N, 1, b, x, &ic));
    sla_solver *g = krylov(&A, SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-8);
    TU_OK(sla_solver_solve(g, SLA_OP_N, 1, b, x, &ig));
    sla_solver *bi = krylov(&A, SLA_METHOD_BICGSTAB, SLA_PRECOND_NONE, 1e-8);
    TU_OK(sla_solver_solve(bi, SLA_OP_N, 1, b, x, &ib));
    printf("# Helmholtz %lld²: COCG %lld, GMRES(400) %lld, BiCGStab %lld iterations\n",
           (long long)N, (long long)ic.iterations, (long long)ig.iterations,
           (long long)ib.iterations);
    assert_true(ic.converged && ig.converged);
    /* GMRES minimises the residual: it never needs more iterations; COCG's quasi-minimal
     * residual stays within a small factor of it on this problem */
    assert_true(ig.iterations <= ic.iterations);
    assert_true(ic.iterations <= 3 * ig.iterations);
    sla_solver_free(&c);
    sla_solver_free(&g);
    sla_solver_free(&bi);
    free(b); free(x); free(v);
    sla_pattern_free(&p);
}

/* the backward of x = A⁻¹ b through COCG, GMRES and CG: dB = A⁻ᴴ g, dA = −dB xᴴ on the
 * pattern, against the LU solver's */
static void vjp_vs_lu(void **state)
{
    (void)state;
    const int64_t N = 10, n = N * N;
    struct { sla_method m; int kind; } cases[] = {
        {SLA_METHOD_COCG, HELMHOLTZ}, {SLA_METHOD_GMRES, GENERAL}, {SLA_METHOD_CG, HERMITIAN},
        {SLA_METHOD_BICGSTAB, GENERAL}};
    zc *b = malloc((size_t)n * sizeof *b), *g = malloc((size_t)n * sizeof *g);
    zc *x = malloc((size_t)n * sizeof *x), *dbk = malloc((size_t)n * sizeof *dbk);
    zc *dbl = malloc((size_t)n * sizeof *dbl);
    random_vec(n, 11, b);
    random_vec(n, 12, g);
    for (int c = 0; c < 4; c++) {
        sla_pattern *p;
        zc *v;
        grid_matrix(cases[c].kind, N, 15.0, &p, &v);
        int64_t nnz = sla_pattern_nnz(p);
        zc *dak = malloc((size_t)nnz * sizeof *dak), *dal = malloc((size_t)nnz * sizeof *dal);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
        sla_solver *k = krylov(&A, cases[c].m, SLA_PRECOND_NONE, 1e-12);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_LU;
        sla_solver *lu;
        TU_OK(sla_solver_create(&A, &o, &lu));
        TU_OK(sla_solver_solve(lu, SLA_OP_N, 1, b, x, NULL));
        TU_OK(sla_solver_solve_vjp(k, SLA_OP_N, 1, x, g, dbk, dak, NULL));
        TU_OK(sla_solver_solve_vjp(lu, SLA_OP_N, 1, x, g, dbl, dal, NULL));
        if (rel_err(n, dbk, dbl) > 1e-9 || rel_err(nnz, dak, dal) > 1e-9)
            fail_msg("%s: dB error %g, dA error %g", sla_method_name(cases[c].m),
                     rel_err(n, dbk, dbl), rel_err(nnz, dak, dal));
        sla_solver_free(&k);
        sla_solver_free(&lu);
        free(dak); free(dal); free(v);
        sla_pattern_free(&p);
    }
    free(b); free(g); free(x); free(dbk); free(dbl);
}

/* COCG's bilinear form vanishes for r = (1, i): rᵀr = 0 with ‖r‖ = √2. Breakdown, never a
 * claimed convergence; complex64 runs too */
static void cocg_breakdown(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *v;
    coo t = {0};
    coo_add(&t, 0, 0, 2);
    coo_add(&t, 1, 1, 3);
    coo_finish(&t, 2, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    sla_solver *s = krylov(&A, SLA_METHOD_COCG, SLA_PRECOND_NONE, 1e-10);
    zc b[2] = {1, I}, x[2];
    sla_solve_info info;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_NOT_CONVERGED);
    assert_false(info.converged);
    assert_int_equal(info.reason, SLA_REASON_BREAKDOWN);
    sla_solver_free(&s);
    /* GMRES solves it; so does COCG in complex64 with b = (1, 1) */
    s = krylov(&A, SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-10);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(info.converged && cabs(x[0] - 0.5) < 1e-12 && cabs(x[1] - I / 3.0) < 1e-12);
    sla_solver_free(&s);
    float complex v32[2] = {2, 3}, b32[2] = {1, 1}, x32[2];
    sla_matrix A32 = sla_matrix_view(p, SLA_COMPLEX64, 1, v32);
    s = krylov(&A32, SLA_METHOD_COCG, SLA_PRECOND_JACOBI, 1e-5);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b32, x32, &info));
    assert_true(info.converged && cabsf(x32[0] - 0.5f) < 1e-6f && cabsf(x32[1] - 1 / 3.0f) < 1e-6f);
    sla_solver_free(&s);
    free(v);
    sla_pattern_free(&p);
}

/* method = auto with backend = "krylov": CG for Hermitian PD, COCG for complex symmetric,
 * GMRES for general (and each solves) */
static void auto_rules(void **state)
{
    (void)state;
    const int64_t N = 8, n = N * N;
    const struct { int kind; const char *method; } cases[] = {
        {HERMITIAN, "cg"}, {HELMHOLTZ, "cocg"}, {GENERAL, "gmres"}};
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    random_vec(n, 5, b);
    for (int c = 0; c < 3; c++) {
        sla_pattern *p;
        zc *v;
        grid_matrix(cases[c].kind, N, 10.0, &p, &v);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.backend = "krylov";
        sla_solver *s;
        TU_OK(sla_solver_create(&A, &o, &s));
        char want[16];
        snprintf(want, sizeof want, "%s", cases[c].method);
        if (strncmp(sla_solver_describe(s), want, strlen(want)) != 0 ||
            sla_solver_method(s) == SLA_METHOD_AUTO)
            fail_msg("expected %s: %s", want, sla_solver_describe(s));
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        assert_true(info.converged);
        sla_solver_free(&s);
        free(v);
        sla_pattern_free(&p);
    }
    free(b);
    free(x);
}

/* complex IC(0), M = L Lᴴ: exact (one PCG step) where the pattern has no fill (a tridiagonal
 * Hermitian matrix with complex off-diagonals); on the magnetic Laplacian fewer CG iterations
 * than Jacobi, x against zgesv; a real matrix handed as complex gives the real IC(0)'s
 * iterations and answer; a Hermitian indefinite matrix breaks down with SLA_EBREAKDOWN */
static void ic0_complex(void **state)
{
    (void)state;
    const int64_t n1 = 50;
    coo t = {0};
    for (int64_t i = 0; i < n1; i++) {
        coo_add(&t, i, i, 2.5 + 0.01 * (double)i);
        if (i + 1 < n1) {
            zc e = -cexp(I * 0.7 * (double)(i + 1));
            coo_add(&t, i, i + 1, e);
            coo_add(&t, i + 1, i, conj(e));
        }
    }
    sla_pattern *p;
    zc *v;
    coo_finish(&t, n1, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    zc *b = malloc(1600 * sizeof *b), *x = malloc(1600 * sizeof *x), *ref = malloc(1600 * sizeof *ref);
    random_vec(n1, 21, b);
    zc *D = dense_colmajor(p, v);
    sla_solver *s = krylov(&A, SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-12);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int oi = 0; oi < 3; oi++) {
        sla_solve_info info;
        dense_solve(n1, D, ops[oi], b, ref);
        TU_OK(sla_solver_solve(s, ops[oi], 1, b, x, &info));
        if (!info.converged || info.iterations > 1 || rel_err(n1, x, ref) > 1e-12)
            fail_msg("tridiagonal, op %d: %lld iterations, error %g", oi,
                     (long long)info.iterations, rel_err(n1, x, ref));
    }
    sla_solver_free(&s);
    v[0] = -3;                                   /* a_00 < 0: Hermitian, not PD */
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = SLA_PRECOND_IC0;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "row 0"));
    free(D); free(v);
    sla_pattern_free(&p);

    const int64_t N = 40, n = N * N;             /* magnetic Laplacian 40² */
    grid_matrix(HERMITIAN, N, 0, &p, &v);
    A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    D = dense_colmajor(p, v);
    random_vec(n, 22, b);
    dense_solve(n, D, SLA_OP_N, b, ref);
    sla_solve_info ij, ii;
    s = krylov(&A, SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-10);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &ij));
    sla_solver_free(&s);
    s = krylov(&A, SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-10);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &ii));
    sla_solver_free(&s);
    printf("# magnetic Laplacian 40²: CG + Jacobi %lld, CG + IC(0) %lld iterations\n",
           (long long)ij.iterations, (long long)ii.iterations);
    assert_true(ii.converged && ii.relative_residual <= 1e-10 && rel_err(n, x, ref) < 1e-7);
    assert_true(2 * ii.iterations < ij.iterations);
    free(D); free(v);
    sla_pattern_free(&p);

    double *a, *br = malloc(256 * sizeof *br), *xr = malloc(256 * sizeof *xr);
    tu_poisson2d(16, 16, &p, &a);                /* real as complex */
    int64_t nnz = sla_pattern_nnz(p);
    zc *az = malloc((size_t)nnz * sizeof *az);
    for (int64_t k = 0; k < nnz; k++) az[k] = a[k];
    tu_fill_random(br, 256, 4);
    for (int64_t i = 0; i < 256; i++) b[i] = br[i];
    sla_matrix Ar = sla_matrix_view(p, SLA_FLOAT64, 1, a), Az = sla_matrix_view(p, SLA_COMPLEX128, 1, az);
    sla_solver *sr = krylov(&Ar, SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-10);
    sla_solver *sz = krylov(&Az, SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-10);
    sla_solve_info ir, iz;
    TU_OK(sla_solver_solve(sr, SLA_OP_N, 1, br, xr, &ir));
    TU_OK(sla_solver_solve(sz, SLA_OP_N, 1, b, x, &iz));
    double e = 0, r = 0;
    for (int64_t i = 0; i < 256; i++) {
        e = fmax(e, cabs(x[i] - xr[i]));
        r = fmax(r, fabs(xr[i]));
        assert_true(cimag(x[i]) == 0);
    }
    if (iz.iterations != ir.iterations || e > 1e-12 * r)
        fail_msg("IC(0) real as complex: %lld vs %lld iterations, |x_c − x_r| = %g",
                 (long long)iz.iterations, (long long)ir.iterations, e / r);
    sla_solver_free(&sr);
    sla_solver_free(&sz);
    free(a); free(az); free(br); free(xr); free(b); free(x); free(ref);
    sla_pattern_free(&p);
}

/* The magnetic Laplacian with a weak field: links −e^{iα(y+1)} along x, −1 along y, diagonal
 * 4 + shift (Hermitian positive definite; with α ~ 1/N² the field is smooth on the grid and the
 * matrix as ill-conditioned as the Poisson matrix) */
static void magnetic_weak(int64_t N, double alpha, double shift, sla_pattern **p, zc **values)
{
    coo t = {0};
    for (int64_t y = 0; y < N; y++)
        for (int64_t x = 0; x < N; x++) {
            int64_t i = y * N + x;
            coo_add(&t, i, i, 4 + shift);
            zc e = -cexp(I * alpha * (double)(y + 1));
            if (x + 1 < N) coo_add(&t, i, i + 1, e);
            if (x > 0) coo_add(&t, i, i - 1, conj(e));
            if (y + 1 < N) coo_add(&t, i, i + N, -1);
            if (y > 0) coo_add(&t, i, i - N, -1);
        }
    coo_finish(&t, N * N, p, values);
}

/* complex inner products u = xᴴy (conj = 1) or xᵀy */
static zc zdot(int64_t n, const zc *x, const zc *y, int cj)
{
    zc s = 0;
    for (int64_t i = 0; i < n; i++) s += (cj ? conj(x[i]) : x[i]) * y[i];
    return s;
}

static int user_amg(void *ctx, sla_op op, int64_t b, const void *r, void *z)
{
    return sla_preconditioner_apply(ctx, op, b, r, z) == SLA_OK ? 0 : 1;
}

/* complex AMG on Hermitian PD A (R = Pᴴ): the V-cycle is Hermitian (⟨M⁻¹x, y⟩ = ⟨x, M⁻¹y⟩),
 * CG + AMG needs a bounded number of iterations on the magnetic Laplacian 32² to 128² with a
 * fixed total flux 10 (α = 10/N²)
 * (CG + Jacobi grows with the grid), x against zgesv at 24²; a real matrix handed as complex
 * gives the real AMG-CG's iterations and x */
static void amg_hermitian(void **state)
{
    (void)state;
    const int64_t sizes[] = {24, 32, 64, 128};
    int64_t it_amg[4], it_jac[4];
    for (int q = 0; q < 4; q++) {
        int64_t N = sizes[q], n = N * N;
        sla_pattern *p;
        zc *v;
        magnetic_weak(N, 10.0 / (double)(N * N), 1e-4, &p, &v);   /* a fixed total flux */
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
        zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
        zc *y = malloc((size_t)n * sizeof *y), *mx = malloc((size_t)n * sizeof *mx);
        zc *my = malloc((size_t)n * sizeof *my);
        random_vec(n, 31 + (uint64_t)q, b);
        sla_solve_info ia, ij;
        sla_solver *s = krylov(&A, SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-8);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &ia));
        if (q == 0) printf("# %s\n", sla_solver_describe(s));
        sla_solver_free(&s);
        assert_true(ia.converged && ia.relative_residual <= 1e-8);
        if (q == 0) {                            /* against the dense solve */
            zc *D = dense_colmajor(p, v), *ref = malloc((size_t)n * sizeof *ref);
            dense_solve(n, D, SLA_OP_N, b, ref);
            assert_true(rel_err(n, x, ref) < 1e-6);
            free(D); free(ref);
        }
        s = krylov(&A, SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-8);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &ij));
        sla_solver_free(&s);
        it_amg[q] = ia.iterations;
        it_jac[q] = ij.iterations;
        printf("# weak-field magnetic Laplacian %lld²: CG + AMG %lld, CG + Jacobi %lld iterations\n",
               (long long)N, (long long)ia.iterations, (long long)ij.iterations);
        /* the V-cycle is Hermitian: ⟨M⁻¹x, y⟩ = ⟨x, M⁻¹y⟩ */
        sla_preconditioner *M;
        TU_OK(sla_preconditioner_create(&A, SLA_PRECOND_AMG, &M));
        random_vec(n, 41, x);
        random_vec(n, 42, y);
        TU_OK(sla_preconditioner_apply(M, SLA_OP_N, 0, x, mx));
        TU_OK(sla_preconditioner_apply(M, SLA_OP_N, 0, y, my));
        zc l = zdot(n, mx, y, 1), r = zdot(n, x, my, 1);
        if (cabs(l - r) > 1e-12 * cabs(l)) fail_msg("⟨M⁻¹x, y⟩ = %g%+gi, ⟨x, M⁻¹y⟩ = %g%+gi",
                                                   creal(l), cimag(l), creal(r), cimag(r));
        /* op C is op N, op T is conj(M⁻¹ conj(x)) */
        TU_OK(sla_preconditioner_apply(M, SLA_OP_C, 0, x, my));
        assert_true(rel_err(n, my, mx) == 0);
        for (int64_t i = 0; i < n; i++) y[i] = conj(x[i]);
        TU_OK(sla_preconditioner_apply(M, SLA_OP_N, 0, y, my));
        TU_OK(sla_preconditioner_apply(M, SLA_OP_T, 0, x, mx));
        for (int64_t i = 0; i < n; i++) assert_true(mx[i] == conj(my[i]));
        if (q == 0) {   /* values that are not Hermitian any more: refused, not a wrong cycle */
            zc *w = malloc((size_t)sla_pattern_nnz(p) * sizeof *w);
            for (int64_t k = 0; k < sla_pattern_nnz(p); k++) w[k] = creal(v[k]) + 0.1 * I;
            assert_int_equal(sla_preconditioner_update(M, w), SLA_EINVAL);
            assert_non_null(strstr(sla_last_error(), "create a new hierarchy"));
            assert_int_equal(sla_preconditioner_apply(M, SLA_OP_N, 0, x, mx), SLA_EINVAL);
            free(w);
        }
        sla_preconditioner_free(&M);
        free(b); free(x); free(y); free(mx); free(my); free(v);
        sla_pattern_free(&p);
    }
    assert_true(it_amg[3] <= it_amg[1] + 8);     /* bounded: 32² → 128² */
    assert_true(3 * it_amg[3] < it_jac[3]);
    assert_true(it_jac[3] > 2 * it_jac[1]);      /* Jacobi's grow with the grid */

    sla_pattern *p;                              /* a real matrix handed as complex */
    double *a;
    tu_poisson2d(64, 64, &p, &a);
    int64_t n = 4096, nnz = sla_pattern_nnz(p);
    zc *az = malloc((size_t)nnz * sizeof *az), *bz = malloc((size_t)n * sizeof *bz);
    zc *xz = malloc((size_t)n * sizeof *xz);
    double *br = malloc((size_t)n * sizeof *br), *xr = malloc((size_t)n * sizeof *xr);
    for (int64_t k = 0; k < nnz; k++) az[k] = a[k];
    tu_fill_random(br, n, 5);
    for (int64_t i = 0; i < n; i++) bz[i] = br[i];
    sla_matrix Ar = sla_matrix_view(p, SLA_FLOAT64, 1, a), Az = sla_matrix_view(p, SLA_COMPLEX128, 1, az);
    sla_solver *sr = krylov(&Ar, SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-10);
    sla_solver *sz = krylov(&Az, SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-10);
    sla_solve_info ir, iz;
    TU_OK(sla_solver_solve(sr, SLA_OP_N, 1, br, xr, &ir));
    TU_OK(sla_solver_solve(sz, SLA_OP_N, 1, bz, xz, &iz));
    double e = real_as_complex_error(xz, xr, n);
    if (iz.iterations != ir.iterations || e > 1e-12)
        fail_msg("AMG real as complex: %lld vs %lld iterations, |x_c − x_r| = %g",
                 (long long)iz.iterations, (long long)ir.iterations, e);
    sla_solver_free(&sr);
    sla_solver_free(&sz);
    free(az); free(bz); free(xz); free(br); free(xr); free(a);
    sla_pattern_free(&p);
}

/* complex AMG on a complex symmetric A (R = Pᵀ) as the shifted-Laplacian preconditioner of a 2D
 * Helmholtz problem (Erlangga, Oosterlee & Vuik 2006): the cycle of A_shift = −Δ − k²(1 + 0.5i)
 * is complex symmetric (xᵀM⁻¹y = yᵀM⁻¹x), and COCG and GMRES on A = −Δ − k²(1 + 0.05i) with
 * it need far fewer iterations than without; residuals checked */
static void amg_shifted_laplacian(void **state)
{
    (void)state;
    const int64_t N = 80, n = N * N;
    double k = 0.6 * (double)(N + 1);             /* k h = 0.6: 10 points per wavelength */
    sla_pattern *p, *ps;
    zc *v, *vs;
    grid_matrix(HELMHOLTZ, N, k, &p, &v);
    grid_matrix(SHIFTED, N, k, &ps, &vs);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v), As = sla_matrix_view(ps, SLA_COMPLEX128, 1, vs);
    sla_preconditioner *M;
    TU_OK(sla_preconditioner_create(&As, SLA_PRECOND_AMG, &M));
    printf("# shifted Laplacian: %s\n", sla_preconditioner_describe(M));
    assert_non_null(strstr(sla_preconditioner_describe(M), "complex symmetric"));
    zc *b = calloc((size_t)n, sizeof *b), *x = malloc((size_t)n * sizeof *x);
    zc *y = malloc((size_t)n * sizeof *y), *mx = malloc((size_t)n * sizeof *mx);
    zc *my = malloc((size_t)n * sizeof *my);
    random_vec(n, 51, x);
    random_vec(n, 52, y);
    TU_OK(sla_preconditioner_apply(M, SLA_OP_N, 0, x, mx));
    TU_OK(sla_preconditioner_apply(M, SLA_OP_N, 0, y, my));
    zc l = zdot(n, mx, y, 0), r = zdot(n, x, my, 0);
    assert_true(cabs(l - r) <= 1e-12 * cabs(l));
    b[(N / 2) * N + N / 2] = 1;                   /* a point source */
    const sla_method ms[] = {SLA_METHOD_COCG, SLA_METHOD_GMRES};
    for (int q = 0; q < 2; q++) {
        sla_solve_info i0, i1;
        sla_solver *s = krylov(&A, ms[q], SLA_PRECOND_NONE, 1e-8);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &i0));
        sla_solver_free(&s);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = ms[q];
        o.rtol = 1e-8;
        o.maxiter = 5000;
        o.restart = 400;
        o.precond = SLA_PRECOND_USER;
        o.user_precond = user_amg;
        o.user_precond_ctx = M;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &i1));
        sla_solver_free(&s);
        printf("# Helmholtz %lld², k h = 0.6: %s %lld iterations, with AMG(shifted Laplacian) %lld\n",
               (long long)N, sla_method_name(ms[q]), (long long)i0.iterations,
               (long long)i1.iterations);
        assert_true(i0.converged && i1.converged && i1.relative_residual <= 1e-8);
        assert_true(2 * i1.iterations < i0.iterations);
    }
    sla_preconditioner_free(&M);
    free(b); free(x); free(y); free(mx); free(my); free(v); free(vs);
    sla_pattern_free(&p);
    sla_pattern_free(&ps);
}

/* the magnetic Laplacian 60² (α = 10/N²): CG + AMG to rtol 1e-12 matches the sparse direct
 * (LU) solve to 1e-8 in fewer iterations than CG + Jacobi; CG or MINRES + AMG of a complex
 * symmetric (non-Hermitian) A is refused, naming the method */
static void amg_magnetic_direct(void **state)
{
    (void)state;
    const int64_t N = 60, n = N * N;
    sla_pattern *p;
    zc *v;
    magnetic_weak(N, 10.0 / (double)(N * N), 1e-4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    zc *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    zc *ref = malloc((size_t)n * sizeof *ref);
    random_vec(n, 61, b);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    sla_solver *s;
    sla_solve_info ia, ij, id;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, ref, &id));
    sla_solver_free(&s);
    s = krylov(&A, SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-12);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &ij));
    sla_solver_free(&s);
    s = krylov(&A, SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-12);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &ia));
    sla_solver_free(&s);
    double e = rel_err(n, x, ref);
    printf("# magnetic Laplacian 60²: CG + AMG %lld, CG + Jacobi %lld iterations; "
           "|x − x_LU| / |x_LU| = %.2e\n", (long long)ia.iterations, (long long)ij.iterations, e);
    assert_true(ia.converged && ij.converged);
    assert_true(2 * ia.iterations < ij.iterations);
    assert_true(e < 1e-8);
    free(b); free(x); free(ref); free(v);
    sla_pattern_free(&p);

    grid_matrix(HELMHOLTZ, 20, 12.6, &p, &v);        /* complex symmetric, not Hermitian */
    A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    const sla_method ms[] = {SLA_METHOD_CG, SLA_METHOD_MINRES};
    for (int q = 0; q < 2; q++) {
        sla_solver_options_init(&o);
        o.method = ms[q];
        o.precond = SLA_PRECOND_AMG;
        s = NULL;
        assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
        assert_null(s);
        assert_non_null(strstr(sla_last_error(), "needs a Hermitian A"));
        assert_non_null(strstr(sla_last_error(), sla_method_name(ms[q])));
    }
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(methods_vs_zgesv), cmocka_unit_test(real_as_complex),
        cmocka_unit_test(cocg_helmholtz), cmocka_unit_test(vjp_vs_lu),
        cmocka_unit_test(cocg_breakdown), cmocka_unit_test(auto_rules),
        cmocka_unit_test(ic0_complex), cmocka_unit_test(amg_hermitian),
        cmocka_unit_test(amg_shifted_laplacian), cmocka_unit_test(amg_magnetic_direct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
