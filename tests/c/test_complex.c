/* Complex dtypes (complex128, complex64): SpMV with op N, T, C against dense products, the
 * adjoint identity ⟨A x, y⟩ = ⟨x, Aᴴ y⟩, SpMV and solve VJPs against finite differences of a
 * real loss (PyTorch's convention: the gradient of L w.r.t. z is ∂L/∂Re z + i ∂L/∂Im z),
 * sparse LU solves against LAPACK's zgesv, the log-determinant (phase and log|det|) against
 * zgetrf and its gradient against finite differences, real matrices handed as complex, and the
 * clear refusals of what does not take complex values yet. */
#define _GNU_SOURCE             /* mkstemps */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

typedef double complex zc;

/* A random sparse n × n complex matrix, diagonally dominant (nonsingular, well conditioned):
 * the diagonal, the two off-diagonals and a few random entries per row. */
static void random_matrix(int64_t n, uint64_t seed, sla_pattern **p, zc **values)
{
    int64_t cap = 6 * n, nnz = 0;
    int64_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    zc *v = malloc((size_t)cap * sizeof *v);
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++) {
        int64_t cols[5] = {i, (i + 1) % n, (i + n - 1) % n,
                           (int64_t)((tu_rand(&st) + 1) * 0.5 * n),
                           (int64_t)((tu_rand(&st) + 1) * 0.5 * n)};
        for (int q = 0; q < 5; q++) {
            r[nnz] = i;
            c[nnz] = cols[q] < n ? cols[q] : n - 1;
            v[nnz] = (tu_rand(&st) - 0.5) + I * (tu_rand(&st) - 0.5);
            if (q == 0) v[nnz] += 6.0 + 2.0 * I;
            nnz++;
        }
    }
    TU_OK(sla_pattern_from_coo(n, n, nnz, r, c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, v, *values));
    free(r); free(c); free(v);
}

/* dense column-major copy of A (for LAPACK) */
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

static void random_vec(int64_t n, uint64_t seed, zc *x)
{
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++) x[i] = (tu_rand(&st) - 0.5) + I * (tu_rand(&st) - 0.5);
}

/* y = op(D)·x for a dense column-major D */
static void dense_apply(int64_t n, const zc *d, sla_op op, const zc *x, zc *y)
{
    for (int64_t i = 0; i < n; i++) {
        zc s = 0;
        for (int64_t j = 0; j < n; j++) {
            zc a = op == SLA_OP_N ? d[i + j * n] : d[j + i * n];
            s += (op == SLA_OP_C ? conj(a) : a) * x[j];
        }
        y[i] = s;
    }
}

static double maxdiff(int64_t n, const zc *a, const zc *b)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, cabs(a[i] - b[i]));
    return m;
}

static zc dotc(int64_t n, const zc *x, const zc *y)
{
    zc s = 0;
    for (int64_t i = 0; i < n; i++) s += conj(x[i]) * y[i];
    return s;
}

static void spmv_ops(void **state)
{
    (void)state;
    int64_t n = 40;
    sla_pattern *p;
    zc *a;
    random_matrix(n, 1, &p, &a);
    zc *d = dense_colmajor(p, a), x[40], y[40], ref[40], w[40], aty[40];
    random_vec(n, 2, x);
    random_vec(n, 3, w);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int o = 0; o < 3; o++) {
        TU_OK(sla_spmv(ops[o], 1.0, &A, x, 0, 1, 0.0, y));
        dense_apply(n, d, ops[o], x, ref);
        assert_true(maxdiff(n, y, ref) < 1e-13);
    }
    /* complex alpha, beta: y = α A x + β y */
    double alpha[2] = {0.5, -2}, beta[2] = {1.5, 0.25};
    memcpy(y, w, sizeof y);
    TU_OK(sla_spmv_c(SLA_OP_N, alpha, &A, x, 0, 1, beta, y));
    dense_apply(n, d, SLA_OP_N, x, ref);
    for (int64_t i = 0; i < n; i++) ref[i] = (0.5 - 2 * I) * ref[i] + (1.5 + 0.25 * I) * w[i];
    assert_true(maxdiff(n, y, ref) < 1e-13);
    /* adjoint identity ⟨A x, w⟩ = ⟨x, Aᴴ w⟩ */
    TU_OK(sla_spmv(SLA_OP_N, 1.0, &A, x, 0, 1, 0.0, y));
    TU_OK(sla_spmv(SLA_OP_C, 1.0, &A, w, 0, 1, 0.0, aty));
    assert_true(cabs(dotc(n, y, w) - dotc(n, x, aty)) < 1e-12 * cabs(dotc(n, y, w)));
    /* a real A refuses complex scalars */
    double one = 1;
    sla_matrix R = sla_matrix_view(p, SLA_FLOAT64, 1, &one);
    (void)R;
    /* block k = 3 against three single products, op = C */
    zc X3[120], Y3[120];
    for (int64_t i = 0; i < 3 * n; i++) X3[i] = x[i / 3] * (1 + (i % 3)) + I * (i % 3);
    TU_OK(sla_spmv(SLA_OP_C, 1.0, &A, X3, 0, 3, 0.0, Y3));
    for (int j = 0; j < 3; j++) {
        zc xj[40], yj[40];
        for (int64_t i = 0; i < n; i++) xj[i] = X3[i * 3 + j];
        dense_apply(n, d, SLA_OP_C, xj, yj);
        for (int64_t i = 0; i < n; i++) assert_true(cabs(Y3[i * 3 + j] - yj[i]) < 1e-13);
    }
    free(d); free(a);
    sla_pattern_free(&p);
}

/* L = Re Σ conj(w_i)·y_i, y = op(A) x: the VJP with g = w against central differences of L
 * in the real and imaginary part of every value and of x */
static void spmv_vjp_fd(void **state)
{
    (void)state;
    int64_t n = 12;
    sla_pattern *p;
    zc *a;
    random_matrix(n, 5, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    zc x[12], w[12], y[12], dx[12], *dv = malloc((size_t)nnz * sizeof *dv);
    random_vec(n, 6, x);
    random_vec(n, 7, w);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int o = 0; o < 3; o++) {
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
        TU_OK(sla_spmv_vjp(ops[o], 1.0, &A, x, 0, 1, w, dx, dv));
        double h = 1e-6;
        for (int64_t s = 0; s < nnz; s++)
            for (int part = 0; part < 2; part++) {
                zc save = a[s], e = part ? I * h : h;
                a[s] = save + e;
                TU_OK(sla_spmv(ops[o], 1.0, &A, x, 0, 1, 0.0, y));
                double lp = creal(dotc(n, w, y));
                a[s] = save - e;
                TU_OK(sla_spmv(ops[o], 1.0, &A, x, 0, 1, 0.0, y));
                double lm = creal(dotc(n, w, y));
                a[s] = save;
                double fd = (lp - lm) / (2 * h), an = part ? cimag(dv[s]) : creal(dv[s]);
                assert_true(fabs(fd - an) < 1e-7);
            }
        for (int64_t i = 0; i < n; i++)
            for (int part = 0; part < 2; part++) {
                zc save = x[i], e = part ? I * h : h;
                x[i] = save + e;
                TU_OK(sla_spmv(ops[o], 1.0, &A, x, 0, 1, 0.0, y));
                double lp = creal(dotc(n, w, y));
                x[i] = save - e;
                TU_OK(sla_spmv(ops[o], 1.0, &A, x, 0, 1, 0.0, y));
                double lm = creal(dotc(n, w, y));
                x[i] = save;
                double fd = (lp - lm) / (2 * h), an = part ? cimag(dx[i]) : creal(dx[i]);
                assert_true(fabs(fd - an) < 1e-7);
            }
    }
    free(dv); free(a);
    sla_pattern_free(&p);
}

/* op(A) X = B by sparse LU against zgesv, for op N, T, C and 2 right-hand sides */
static void lu_vs_zgesv(void **state)
{
    (void)state;
    int64_t n = 60, k = 2;
    sla_pattern *p;
    zc *a;
    random_matrix(n, 11, &p, &a);
    zc *d = dense_colmajor(p, a);
    zc B[120], X[120];
    random_vec(n * k, 12, B);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver_options_init(&o);          /* method auto: lu for complex */
    sla_solver *s;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_int_equal(sla_solver_method(s), SLA_METHOD_LU);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int oi = 0; oi < 3; oi++) {
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, ops[oi], k, B, X, &info));
        assert_true(info.relative_residual < 1e-13);
        /* dense reference: op(D) column-major, B columns */
        zc *m = malloc((size_t)(n * n) * sizeof *m), *rb = malloc((size_t)(n * k) * sizeof *rb);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                zc v = ops[oi] == SLA_OP_N ? d[i + j * n] : d[j + i * n];
                m[i + j * n] = ops[oi] == SLA_OP_C ? conj(v) : v;
            }
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++) rb[i + j * n] = B[i * k + j];
        lapack_int ipiv[60];
        assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)k,
                                       (lapack_complex_double *)m, (lapack_int)n, ipiv,
                                       (lapack_complex_double *)rb, (lapack_int)n), 0);
        double err = 0, xn = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++) {
                err = fmax(err, cabs(X[i * k + j] - rb[i + j * n]));
                xn = fmax(xn, cabs(rb[i + j * n]));
            }
        assert_true(err <= 1e-12 * xn);
        free(m); free(rb);
    }
    /* complex64 of the same matrix: float accuracy */
    float complex af[400], Bf[120], Xf[120];
    int64_t nnz = sla_pattern_nnz(p);
    assert_true(nnz <= 400);
    for (int64_t q = 0; q < nnz; q++) af[q] = (float complex)a[q];
    for (int64_t q = 0; q < n * k; q++) Bf[q] = (float complex)B[q];
    sla_matrix Af = sla_matrix_view(p, SLA_COMPLEX64, 1, af);
    sla_solver *sf;
    TU_OK(sla_solver_create(&Af, &o, &sf));
    sla_solve_info info;
    TU_OK(sla_solver_solve(sf, SLA_OP_N, k, Bf, Xf, &info));
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, B, X, NULL));
    for (int64_t q = 0; q < n * k; q++) assert_true(cabs(Xf[q] - X[q]) < 1e-5);
    assert_true(info.relative_residual < 1e-5);
    sla_solver_free(&sf);
    sla_solver_free(&s);
    free(d); free(a);
    sla_pattern_free(&p);
}

/* L = Re Σ conj(w)·x, x = op(A)⁻¹ b: solve VJP against central differences (op N, C, T) */
static void solve_vjp_fd(void **state)
{
    (void)state;
    int64_t n = 10;
    sla_pattern *p;
    zc *a;
    random_matrix(n, 21, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    zc b[10], w[10], x[10], db[10], *dv = malloc((size_t)nnz * sizeof *dv);
    random_vec(n, 22, b);
    random_vec(n, 23, w);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_C, SLA_OP_T};
    for (int oi = 0; oi < 3; oi++) {
        sla_op op = ops[oi];
        sla_solver *s;
        TU_OK(sla_solver_create(&A, NULL, &s));
        TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
        TU_OK(sla_solver_solve_vjp(s, op, 1, x, w, db, dv, NULL));
        sla_solver_free(&s);
        double h = 1e-6;
        for (int64_t q = 0; q < nnz + n; q++)
            for (int part = 0; part < 2; part++) {
                zc *z = q < nnz ? &a[q] : &b[q - nnz], save = *z, e = part ? I * h : h;
                double l[2];
                for (int sgn = 0; sgn < 2; sgn++) {
                    *z = save + (sgn ? -e : e);
                    TU_OK(sla_solver_create(&A, NULL, &s));
                    TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
                    sla_solver_free(&s);
                    l[sgn] = creal(dotc(n, w, x));
                }
                *z = save;
                zc an = q < nnz ? dv[q] : db[q - nnz];
                double fd = (l[0] - l[1]) / (2 * h);
                assert_true(fabs(fd - (part ? cimag(an) : creal(an))) < 1e-7);
            }
    }
    free(dv); free(a);
    sla_pattern_free(&p);
}

/* phase and log|det| against zgetrf; the gradient of log|det| against central differences */
static void logdet_phase_grad(void **state)
{
    (void)state;
    int64_t n = 15;
    sla_pattern *p;
    zc *a;
    random_matrix(n, 31, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver *s;
    TU_OK(sla_solver_create(&A, NULL, &s));
    double sign[2], lad;
    TU_OK(sla_solver_logdet(s, sign, &lad));
    zc *d = dense_colmajor(p, a);
    lapack_int ipiv[15];
    assert_int_equal(LAPACKE_zgetrf(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n,
                                    (lapack_complex_double *)d, (lapack_int)n, ipiv), 0);
    double ref = 0;
    zc ph = 1;
    for (int64_t i = 0; i < n; i++) {
        zc u = d[i + i * n];
        ref += log(cabs(u));
        ph *= u / cabs(u);
        if (ipiv[i] != i + 1) ph = -ph;
    }
    TU_CLOSE(lad, ref, 1e-12);
    assert_true(cabs(sign[0] + I * sign[1] - ph) < 1e-12);
    zc *dv = malloc((size_t)nnz * sizeof *dv);
    TU_OK(sla_solver_logdet_grad(s, NULL, dv));
    sla_solver_free(&s);
    double h = 1e-6;
    for (int64_t q = 0; q < nnz; q++)
        for (int part = 0; part < 2; part++) {
            zc save = a[q], e = part ? I * h : h;
            double l[2], sg[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                a[q] = save + (sgn ? -e : e);
                TU_OK(sla_solver_create(&A, NULL, &s));
                TU_OK(sla_solver_logdet(s, sg, &l[sgn]));
                sla_solver_free(&s);
            }
            a[q] = save;
            double fd = (l[0] - l[1]) / (2 * h);
            assert_true(fabs(fd - (part ? cimag(dv[q]) : creal(dv[q]))) < 1e-7);
        }
    free(dv); free(d); free(a);
    sla_pattern_free(&p);
}

/* a real matrix handed as complex gives the real answers (solve, logdet sign ±1) */
static void real_as_complex(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(6, 5, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    zc *vz = malloc((size_t)nnz * sizeof *vz), *bz = malloc((size_t)n * sizeof *bz),
       *xz = malloc((size_t)n * sizeof *xz);
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    for (int64_t q = 0; q < nnz; q++) vz[q] = -v[q];          /* negative definite: det sign */
    tu_fill_random(b, n, 3);
    for (int64_t i = 0; i < n; i++) bz[i] = b[i];
    for (int64_t q = 0; q < nnz; q++) v[q] = -v[q];
    sla_matrix Ar = sla_matrix_view(p, SLA_FLOAT64, 1, v), Az = sla_matrix_view(p, SLA_COMPLEX128, 1, vz);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    sla_solver *sr, *sz;
    TU_OK(sla_solver_create(&Ar, &o, &sr));
    TU_OK(sla_solver_create(&Az, &o, &sz));
    TU_OK(sla_solver_solve(sr, SLA_OP_N, 1, b, x, NULL));
    TU_OK(sla_solver_solve(sz, SLA_OP_N, 1, bz, xz, NULL));
    for (int64_t i = 0; i < n; i++) {
        assert_true(fabs(creal(xz[i]) - x[i]) < 1e-12 * (1 + fabs(x[i])));
        assert_true(cimag(xz[i]) == 0);
    }
    double sr_sign, sr_lad, sz_sign[2], sz_lad;
    TU_OK(sla_solver_logdet(sr, &sr_sign, &sr_lad));
    TU_OK(sla_solver_logdet(sz, sz_sign, &sz_lad));
    TU_CLOSE(sz_lad, sr_lad, 1e-12);
    TU_CLOSE(sz_sign[0], sr_sign, 1e-14);
    assert_true(fabs(sz_sign[1]) < 1e-14);
    sla_solver_free(&sr);
    sla_solver_free(&sz);
    free(vz); free(bz); free(xz); free(b); free(x); free(v);
    sla_pattern_free(&p);
}

/* what does not take complex values says so: LDLᵀ of a non-symmetric A,
 * Krylov op = T, eigsh of a non-Hermitian matrix, norms, symmetry tests */
static void refusals(void **state)
{
    (void)state;
    int64_t n = 8;
    sla_pattern *p;
    zc *a;
    random_matrix(n, 41, &p, &a);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver *s = NULL;
    /* LSQR takes complex values (test_lsqr_complex.c checks the answers) */
    /* ldlt (MUMPS zmumps) takes complex symmetric matrices only (test_mumps_complex.c) */
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LDLT;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_null(s);
    assert_non_null(strstr(sla_last_error(), "not complex symmetric"));
    /* cholesky of a non-Hermitian A: refused naming the first entry whose mirror differs */
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CHOLESKY;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_null(s);
    assert_non_null(strstr(sla_last_error(), "not Hermitian: batch 0, A["));
    assert_non_null(strstr(sla_last_error(), "but conj(A["));
    /* every preconditioner has complex kernels (jacobi, ic0, ilu0, amg: test_complex_krylov.c) */
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_GMRES;
    /* Krylov with op = T (not conjugated) solves since the methods run on complex spaces
     * (test_complex_krylov.c checks the answers) */
    o.precond = SLA_PRECOND_NONE;
    TU_OK(sla_solver_create(&A, &o, &s));
    zc b[8] = {1, 2, 3, 4, 5, 6, 7, 8}, x[8];
    sla_solve_info ti;
    TU_OK(sla_solver_solve(s, SLA_OP_T, 1, b, x, &ti));
    assert_true(ti.converged);
    sla_solver_free(&s);
    double ev[2];
    /* eigsh takes Hermitian complex matrices only (tests/c/test_eigsh_complex.c) */
    assert_int_equal(sla_eigsh(&A, 1, NULL, ev, NULL, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not Hermitian"));
    sla_diag_info di;
    assert_int_equal(sla_matrix_diag_info(&A, &di), SLA_EDTYPE);
    /* complex scalars on a real matrix */
    double v[64] = {0}, xr[8] = {0}, y[8];
    sla_matrix R = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double alpha[2] = {1, 1}, beta[2] = {0, 0};
    assert_int_equal(sla_spmv_c(SLA_OP_N, alpha, &R, xr, 0, 1, beta, y), SLA_EDTYPE);
    free(a);
    sla_pattern_free(&p);
}

/* symmetric vs Hermitian tests, norms (moduli), diagonal, dense round trip */
static void properties(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    int64_t n = 6;
    random_matrix(n, 61, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    zc *d = malloc((size_t)(n * n) * sizeof *d), diag[6];
    TU_OK(sla_matrix_to_dense(&A, d));
    TU_OK(sla_matrix_diagonal(&A, diag));
    double fro = 0, mx = 0, nrm[4];
    for (int64_t q = 0; q < n * n; q++) { fro += cabs(d[q]) * cabs(d[q]); mx = fmax(mx, cabs(d[q])); }
    for (int64_t i = 0; i < n; i++) assert_true(diag[i] == d[i * n + i]);
    TU_OK(sla_matrix_norm(&A, 'F', &nrm[0]));
    TU_OK(sla_matrix_norm(&A, 'M', &nrm[1]));
    TU_CLOSE(nrm[0], sqrt(fro), 1e-14);
    TU_CLOSE(nrm[1], mx, 1e-15);
    /* from_dense gives back the same matrix */
    sla_pattern *p2;
    void *v2;
    TU_OK(sla_matrix_from_dense(n, n, SLA_COMPLEX128, 1, d, 0.0, &p2, &v2));
    assert_int_equal(sla_pattern_nnz(p2), nnz);
    assert_true(maxdiff(nnz, v2, a) == 0);
    sla_free(v2);
    sla_pattern_free(&p2);
    /* H = D + Dᴴ is Hermitian, not symmetric; S = D + Dᵀ symmetric, not Hermitian */
    zc *h = malloc((size_t)(n * n) * sizeof *h), *sy = malloc((size_t)(n * n) * sizeof *sy);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            h[i * n + j] = d[i * n + j] + conj(d[j * n + i]);
            sy[i * n + j] = d[i * n + j] + d[j * n + i];
        }
    const zc *mats[2] = {h, sy};
    for (int m = 0; m < 2; m++) {
        sla_pattern *pm;
        void *vm;
        TU_OK(sla_matrix_from_dense(n, n, SLA_COMPLEX128, 1, mats[m], 0.0, &pm, &vm));
        sla_matrix M = sla_matrix_view(pm, SLA_COMPLEX128, 1, vm);
        int sym, herm;
        TU_OK(sla_matrix_is_symmetric(&M, 1e-14, 0, &sym));
        TU_OK(sla_matrix_is_hermitian(&M, 1e-14, 0, &herm));
        assert_int_equal(sym, m == 1);
        assert_int_equal(herm, m == 0);
        sla_free(vm);
        sla_pattern_free(&pm);
    }
    free(h); free(sy); free(d); free(a);
    sla_pattern_free(&p);
}

/* re + i·im also when im is infinite or NaN (re + I*im would mix them: inf·I = NaN + inf·i) */
static zc cz(double re, double im)
{
    double v[2] = {re, im};
    zc z;
    memcpy(&z, v, sizeof z);
    return z;
}

/* Symmetry and Hermitian tests with non-finite values: a NaN or inf matches only the same
 * value in each of the real and imaginary parts (|inf − 1| ≤ rtol·inf must not pass, and a
 * NaN real part must not hide differing imaginary parts). */
static void properties_nonfinite(void **state)
{
    (void)state;
    int64_t r[4] = {0, 0, 1, 1}, c[4] = {0, 1, 0, 1};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(2, 2, 4, r, c, &p));
    const double inf = INFINITY, nan = NAN;
    struct { zc a01, a10, d0; int sym, herm; } cases[] = {
        {cz(nan, 1), cz(nan, 5), 1, 0, 0},      /* imaginary parts differ */
        {cz(nan, 1), cz(nan, -1), 1, 0, 1},     /* conj of each other */
        {cz(nan, 1), cz(nan, 1), 1, 1, 0},
        {cz(inf, 1), cz(1, 5), 1, 0, 0},        /* inf against a finite value */
        {cz(1, inf), cz(1, -inf), 1, 0, 1},
        {cz(1, 0), cz(1, 0), cz(nan, 2), 1, 0}, /* diagonal nan + 2i: not Hermitian */
        {cz(1, 0), cz(1, 0), cz(3, inf), 1, 0}, /* diagonal 3 + inf·i: not Hermitian */
        {cz(1, 0), cz(1, 0), cz(inf, 0), 1, 1}, /* a real inf matches itself */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        zc v[4] = {cases[k].d0, cases[k].a01, cases[k].a10, 2};
        sla_matrix M = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
        for (int q = 0; q < 2; q++) {
            int sym = -1, herm = -1;
            double rtol = q ? 1e-10 : 0;
            TU_OK(sla_matrix_is_symmetric(&M, rtol, 0, &sym));
            TU_OK(sla_matrix_is_hermitian(&M, rtol, 0, &herm));
            if (sym != cases[k].sym || herm != cases[k].herm)
                fail_msg("case %zu rtol %g: symmetric %d (expected %d), Hermitian %d (expected %d)",
                         k, rtol, sym, cases[k].sym, herm, cases[k].herm);
        }
    }
    /* real: [[1, inf], [1, 1]] is not symmetric for any rtol */
    double rv[4] = {1, inf, 1, 1};
    sla_matrix R = sla_matrix_view(p, SLA_FLOAT64, 1, rv);
    int sym = -1;
    TU_OK(sla_matrix_is_symmetric(&R, 1e-8, 0, &sym));
    assert_int_equal(sym, 0);
    sla_pattern_free(&p);
}

/* Matrix Market: complex general and Hermitian files written and read back bit for bit; a
 * real file read as complex; the shared complex file young1c solved by LU to a small residual */
static void matrix_market(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    random_matrix(9, 71, &p, &a);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    char path[] = "/tmp/sla_test_complex_XXXXXX.mtx";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    TU_OK(sla_mm_write(path, &A, 0, SLA_MM_COMPLEX, SLA_MM_GENERAL, "complex"));
    sla_pattern *q;
    void *v;
    sla_mm_field field;
    sla_mm_symmetry sym;
    TU_OK(sla_mm_read_matrix(path, SLA_COMPLEX128, &q, &v, &field, &sym));
    assert_int_equal(field, SLA_MM_COMPLEX);
    assert_int_equal(sla_pattern_nnz(q), sla_pattern_nnz(p));
    assert_true(memcmp(v, a, (size_t)sla_pattern_nnz(p) * sizeof *a) == 0);
    sla_free(v);
    sla_pattern_free(&q);
    /* a real dtype refuses the complex file; a real field refuses a complex A */
    assert_int_equal(sla_mm_read_matrix(path, SLA_FLOAT64, &q, &v, NULL, NULL), SLA_EDTYPE);
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_GENERAL, NULL), SLA_EINVAL);
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_COMPLEX, SLA_MM_HERMITIAN, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not Hermitian"));
    /* Hermitian storage: H = D + Dᴴ */
    int64_t n = 9;
    zc d[81], h[81];
    TU_OK(sla_matrix_to_dense(&A, d));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) h[i * n + j] = d[i * n + j] + conj(d[j * n + i]);
    sla_pattern *ph;
    void *vh;
    TU_OK(sla_matrix_from_dense(n, n, SLA_COMPLEX128, 1, h, 0.0, &ph, &vh));
    sla_matrix H = sla_matrix_view(ph, SLA_COMPLEX128, 1, vh);
    TU_OK(sla_mm_write(path, &H, 0, SLA_MM_COMPLEX, SLA_MM_HERMITIAN, NULL));
    TU_OK(sla_mm_read_matrix(path, SLA_COMPLEX128, &q, &v, &field, &sym));
    assert_int_equal(sym, SLA_MM_HERMITIAN);
    zc hb[81];
    sla_matrix Q = sla_matrix_view(q, SLA_COMPLEX128, 1, v);
    TU_OK(sla_matrix_to_dense(&Q, hb));
    assert_true(memcmp(hb, h, sizeof h) == 0);
    sla_free(v);
    sla_pattern_free(&q);
    sla_free(vh);
    sla_pattern_free(&ph);
    remove(path);
    free(a);
    sla_pattern_free(&p);
    if (!tu_have_matrices()) return;
    /* young1c (Davis collection, complex general 841 × 841): LU, scaled residual */
    TU_OK(sla_mm_read_matrix(tu_matrix_path("young1c.mtx"), SLA_COMPLEX128, &q, &v, &field, &sym));
    int64_t m = sla_pattern_nrows(q);
    sla_matrix Y = sla_matrix_view(q, SLA_COMPLEX128, 1, v);
    zc *b = malloc((size_t)m * sizeof *b), *x = malloc((size_t)m * sizeof *x);
    random_vec(m, 72, b);
    sla_solver *s;
    sla_solve_info info;
    TU_OK(sla_solver_create(&Y, NULL, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(info.relative_residual < 1e-12);
    sla_solver_free(&s);
    /* the same file read as complex64 */
    void *v64;
    sla_pattern *q64;
    TU_OK(sla_mm_read_matrix(tu_matrix_path("young1c.mtx"), SLA_COMPLEX64, &q64, &v64, NULL, NULL));
    for (int64_t k = 0; k < sla_pattern_nnz(q); k++)
        assert_true(((float complex *)v64)[k] == (float complex)((zc *)v)[k]);
    sla_free(v64);
    sla_pattern_free(&q64);
    free(b); free(x); sla_free(v);
    sla_pattern_free(&q);
    /* a real file read as complex: zero imaginary parts */
    TU_OK(sla_mm_read_matrix(tu_matrix_path("nos6.mtx"), SLA_COMPLEX128, &q, &v, NULL, NULL));
    double *vr;
    sla_pattern *qr;
    TU_OK(sla_mm_read_matrix(tu_matrix_path("nos6.mtx"), SLA_FLOAT64, &qr, (void **)&vr, NULL, NULL));
    for (int64_t k = 0; k < sla_pattern_nnz(q); k++)
        assert_true(((zc *)v)[k] == vr[k]);
    sla_free(v); sla_free(vr);
    sla_pattern_free(&q);
    sla_pattern_free(&qr);
}

/* A Hermitian positive definite sparse matrix: D + E + Eᴴ with a dominant positive diagonal */
static void hermitian_pd(int64_t n, uint64_t seed, sla_pattern **p, zc **values)
{
    sla_pattern *q;
    zc *e;
    random_matrix(n, seed, &q, &e);
    int64_t nnz = sla_pattern_nnz(q), cap = 2 * nnz, k = 0;
    const int64_t *rp = sla_pattern_rowptr(q);
    const int32_t *ci = sla_pattern_colind(q);
    int64_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    zc *v = malloc((size_t)cap * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            zc a = ci[s] == i ? 8.0 : e[s];
            r[k] = i; c[k] = ci[s]; v[k++] = a;                  /* E, diagonal 8 */
            if (ci[s] != i) { r[k] = ci[s]; c[k] = i; v[k++] = conj(a); }   /* Eᴴ */
        }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, v, *values));
    free(r); free(c); free(v); free(e);
    sla_pattern_free(&q);
}

/* CG (Hermitian PD), MINRES (Hermitian), GMRES and BiCGStab (general) against the LU answer,
 * op N and C, and the solve VJP through CG against the LU one */
static void krylov_vs_lu(void **state)
{
    (void)state;
    int64_t n = 50;
    sla_pattern *ph, *pg;
    zc *ah, *ag;
    hermitian_pd(n, 51, &ph, &ah);
    random_matrix(n, 52, &pg, &ag);
    zc b[50], x[50], ref[50], g[50];
    random_vec(n, 53, b);
    random_vec(n, 54, g);
    struct { sla_method m; int hermitian; sla_precond pc; } cases[] = {
        {SLA_METHOD_CG, 1, SLA_PRECOND_NONE}, {SLA_METHOD_MINRES, 1, SLA_PRECOND_NONE},
        {SLA_METHOD_GMRES, 0, SLA_PRECOND_NONE}, {SLA_METHOD_BICGSTAB, 0, SLA_PRECOND_NONE},
        {SLA_METHOD_GMRES, 1, SLA_PRECOND_NONE}, {SLA_METHOD_CG, 1, SLA_PRECOND_JACOBI},
        {SLA_METHOD_GMRES, 0, SLA_PRECOND_JACOBI}, {SLA_METHOD_BICGSTAB, 0, SLA_PRECOND_AUTO}};
    for (int c = 0; c < 8; c++) {
        sla_matrix A = sla_matrix_view(cases[c].hermitian ? ph : pg, SLA_COMPLEX128, 1,
                                       cases[c].hermitian ? ah : ag);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_LU;
        sla_solver *lu, *kr;
        TU_OK(sla_solver_create(&A, &o, &lu));
        o.method = cases[c].m;
        o.precond = cases[c].pc;
        o.rtol = 1e-12;
        TU_OK(sla_solver_create(&A, &o, &kr));
        if (cases[c].pc != SLA_PRECOND_NONE)   /* auto: ILU(0) for BiCGStab */
            assert_non_null(strstr(sla_solver_describe(kr),
                                   cases[c].pc == SLA_PRECOND_AUTO ? "ilu0" : "jacobi"));
        const sla_op ops[] = {SLA_OP_N, SLA_OP_C};
        for (int oi = 0; oi < 2; oi++) {
            sla_solve_info info;
            TU_OK(sla_solver_solve(lu, ops[oi], 1, b, ref, NULL));
            TU_OK(sla_solver_solve(kr, ops[oi], 1, b, x, &info));
            assert_true(info.converged && info.relative_residual <= 1e-12);
            assert_true(maxdiff(n, x, ref) < 1e-9 * tu_norm2((double *)ref, 2 * n));
        }
        /* the backward of x = A⁻¹b: dB = A⁻ᴴg by the Krylov method */
        zc dbk[50], dbl[50];
        TU_OK(sla_solver_solve(kr, SLA_OP_N, 1, b, x, NULL));
        TU_OK(sla_solver_solve_vjp(kr, SLA_OP_N, 1, x, g, dbk, NULL, NULL));
        TU_OK(sla_solver_solve_vjp(lu, SLA_OP_N, 1, x, g, dbl, NULL, NULL));
        assert_true(maxdiff(n, dbk, dbl) < 1e-9 * tu_norm2((double *)dbl, 2 * n));
        sla_solver_free(&lu);
        sla_solver_free(&kr);
    }
    free(ah); free(ag);
    sla_pattern_free(&ph);
    sla_pattern_free(&pg);
}

/* Cholesky (CHOLMOD complex LLᴴ) of a Hermitian positive definite matrix against LU: solves
 * with op N, T, C, logdet and its gradient; a non-Hermitian or indefinite matrix refused */
static void cholesky_hermitian(void **state)
{
    (void)state;
    int64_t n = 40;
    sla_pattern *p;
    zc *a;
    hermitian_pd(n, 81, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    sla_solver *lu, *ch;
    TU_OK(sla_solver_create(&A, &o, &lu));
    o.method = SLA_METHOD_CHOLESKY;
    TU_OK(sla_solver_create(&A, &o, &ch));
    assert_non_null(strstr(sla_solver_describe(ch), "complex"));
    zc b[40], x[40], ref[40];
    random_vec(n, 82, b);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int oi = 0; oi < 3; oi++) {
        sla_solve_info info;
        TU_OK(sla_solver_solve(lu, ops[oi], 1, b, ref, NULL));
        TU_OK(sla_solver_solve(ch, ops[oi], 1, b, x, &info));
        assert_true(info.relative_residual < 1e-13);
        assert_true(maxdiff(n, x, ref) < 1e-12 * tu_norm2((double *)ref, 2 * n));
    }
    double s1[2], s2[2], l1, l2;
    TU_OK(sla_solver_logdet(lu, s1, &l1));
    TU_OK(sla_solver_logdet(ch, s2, &l2));
    TU_CLOSE(l2, l1, 1e-11);
    assert_true(s2[0] == 1 && s2[1] == 0 && fabs(s1[0] - 1) < 1e-12 && fabs(s1[1]) < 1e-12);
    zc *g1 = malloc((size_t)nnz * sizeof *g1), *g2 = malloc((size_t)nnz * sizeof *g2);
    TU_OK(sla_solver_logdet_grad(lu, NULL, g1));
    TU_OK(sla_solver_logdet_grad(ch, NULL, g2));
    assert_true(maxdiff(nnz, g1, g2) < 1e-12);
    /* the solve VJP through the Cholesky factors */
    zc g[40], d1[40], d2[40], *v1 = malloc((size_t)nnz * sizeof *v1), *v2 = malloc((size_t)nnz * sizeof *v2);
    random_vec(n, 83, g);
    TU_OK(sla_solver_solve(ch, SLA_OP_N, 1, b, x, NULL));
    TU_OK(sla_solver_solve_vjp(ch, SLA_OP_N, 1, x, g, d1, v1, NULL));
    TU_OK(sla_solver_solve_vjp(lu, SLA_OP_N, 1, x, g, d2, v2, NULL));
    assert_true(maxdiff(n, d1, d2) < 1e-12 && maxdiff(nnz, v1, v2) < 1e-12);
    sla_solver_free(&ch);
    /* not Hermitian: one off-diagonal entry changed */
    for (int64_t q = 0; q < nnz; q++)
        if (sla_pattern_colind(p)[q] != 0 && sla_pattern_rowptr(p)[1] > q) { a[q] += 0.5 * I; break; }
    assert_int_equal(sla_solver_create(&A, &o, &ch), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not Hermitian"));
    /* Hermitian but indefinite: −A */
    for (int64_t q = 0; q < nnz; q++) a[q] = -a[q];
    sla_pattern_free(&p);
    free(a);
    hermitian_pd(n, 81, &p, &a);
    for (int64_t q = 0; q < nnz; q++) a[q] = -a[q];
    A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    assert_int_equal(sla_solver_create(&A, &o, &ch), SLA_ENOTSPD);
    /* method auto: LU for the indefinite one, Cholesky for the definite one */
    TU_OK(sla_solver_create(&A, NULL, &ch));
    assert_int_equal(sla_solver_method(ch), SLA_METHOD_LU);
    sla_solver_free(&ch);
    for (int64_t q = 0; q < nnz; q++) a[q] = -a[q];
    TU_OK(sla_solver_create(&A, NULL, &ch));
    assert_int_equal(sla_solver_method(ch), SLA_METHOD_CHOLESKY);
    sla_solver_free(&ch);
    sla_solver_free(&lu);
    free(g1); free(g2); free(v1); free(v2); free(a);
    sla_pattern_free(&p);
}

/* KLU's complex LU against UMFPACK's: solves N, T, C (2 right-hand sides, a batch of 2 with
 * complex64 too), logdet phase and gradient, refactor, a singular matrix refused */
static void klu_vs_umfpack(void **state)
{
    (void)state;
    int64_t n = 45, k = 2;
    sla_pattern *p;
    zc *a1;
    random_matrix(n, 91, &p, &a1);
    int64_t nnz = sla_pattern_nnz(p);
    zc *a = malloc((size_t)(2 * nnz) * sizeof *a);
    memcpy(a, a1, (size_t)nnz * sizeof *a);
    for (int64_t q = 0; q < nnz; q++) a[nnz + q] = a1[q] * (0.5 - 1.5 * I) + (q % 3);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 2, a);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    sla_solver *lu, *kl;
    TU_OK(sla_solver_create(&A, &o, &lu));
    o.method = SLA_METHOD_KLU;
    TU_OK(sla_solver_create(&A, &o, &kl));
    assert_non_null(strstr(sla_solver_describe(kl), "complex"));
    zc B[180], X[180], R[180];
    random_vec(2 * n * k, 92, B);
    const sla_op ops[] = {SLA_OP_N, SLA_OP_T, SLA_OP_C};
    for (int oi = 0; oi < 3; oi++) {
        sla_solve_info info;
        TU_OK(sla_solver_solve(lu, ops[oi], k, B, R, NULL));
        TU_OK(sla_solver_solve(kl, ops[oi], k, B, X, &info));
        assert_true(info.relative_residual < 1e-13);
        assert_true(maxdiff(2 * n * k, X, R) < 1e-11 * tu_norm2((double *)R, 4 * n * k));
    }
    double s1[4], s2[4], l1[2], l2[2];
    TU_OK(sla_solver_logdet(lu, s1, l1));
    TU_OK(sla_solver_logdet(kl, s2, l2));
    for (int b = 0; b < 2; b++) {
        TU_CLOSE(l2[b], l1[b], 1e-11);
        assert_true(fabs(s1[2 * b] - s2[2 * b]) < 1e-12 && fabs(s1[2 * b + 1] - s2[2 * b + 1]) < 1e-12);
    }
    zc *g1 = malloc((size_t)(2 * nnz) * sizeof *g1), *g2 = malloc((size_t)(2 * nnz) * sizeof *g2);
    double gw[2] = {1.5, -0.5};
    TU_OK(sla_solver_logdet_grad(lu, gw, g1));
    TU_OK(sla_solver_logdet_grad(kl, gw, g2));
    assert_true(maxdiff(2 * nnz, g1, g2) < 1e-12);
    /* refactor with new values on both */
    for (int64_t q = 0; q < 2 * nnz; q++) a[q] *= 1 + 0.25 * I;
    TU_OK(sla_solver_refactor(lu, a));
    TU_OK(sla_solver_refactor(kl, a));
    TU_OK(sla_solver_solve(lu, SLA_OP_N, k, B, R, NULL));
    TU_OK(sla_solver_solve(kl, SLA_OP_N, k, B, X, NULL));
    assert_true(maxdiff(2 * n * k, X, R) < 1e-11 * tu_norm2((double *)R, 4 * n * k));
    /* a zero row: singular, solves refused, logdet sign 0 */
    const int64_t *rp = sla_pattern_rowptr(p);
    for (int64_t q = rp[3]; q < rp[4]; q++) a[q] = 0;
    TU_OK(sla_solver_refactor(kl, a));
    assert_int_equal(sla_solver_solve(kl, SLA_OP_N, k, B, X, NULL), SLA_ESINGULAR);
    TU_OK(sla_solver_logdet(kl, s2, l2));
    assert_true(s2[0] == 0 && s2[1] == 0 && isinf(l2[0]));
    sla_solver_free(&kl);
    sla_solver_free(&lu);
    free(g1); free(g2); free(a); free(a1);
    sla_pattern_free(&p);
}

/* edge cases: an empty 0 × 0 matrix and a batch of two Hermitian matrices, every method */
static void edge_cases(void **state)
{
    (void)state;
    sla_pattern *p0;
    TU_OK(sla_pattern_from_coo(0, 0, 0, NULL, NULL, &p0));
    zc dummy = 0;
    sla_matrix A0 = sla_matrix_view(p0, SLA_COMPLEX128, 1, &dummy);
    const sla_method ms[] = {SLA_METHOD_LU, SLA_METHOD_KLU, SLA_METHOD_CHOLESKY, SLA_METHOD_CG,
                             SLA_METHOD_GMRES};
    for (int i = 0; i < 5; i++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = ms[i];
        sla_solver *s;
        TU_OK(sla_solver_create(&A0, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, NULL, NULL, NULL));
        if (i < 3) {
            double sg[2], lad;
            TU_OK(sla_solver_logdet(s, sg, &lad));
            assert_true(sg[0] == 1 && sg[1] == 0 && lad == 0);
        }
        sla_solver_free(&s);
    }
    sla_pattern_free(&p0);
    /* a batch of two Hermitian positive definite matrices on one pattern */
    int64_t n = 20;
    sla_pattern *p;
    zc *a;
    hermitian_pd(n, 95, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    zc *a2 = malloc((size_t)(2 * nnz) * sizeof *a2);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t q = rp[i]; q < rp[i + 1]; q++) {
            a2[q] = a[q];
            a2[nnz + q] = ci[q] == i ? a[q] + 3 : 0.5 * a[q];    /* still Hermitian PD */
        }
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 2, a2);
    zc b[40], x[40], r[40];
    random_vec(2 * n, 96, b);
    for (int i = 0; i < 5; i++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = ms[i];
        o.rtol = 1e-13;
        sla_solver *s;
        sla_solve_info info;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
        assert_true(info.relative_residual < 1e-12);
        memcpy(r, b, sizeof r);
        TU_OK(sla_spmv(SLA_OP_N, -1.0, &A, x, 1, 1, 1.0, r));
        assert_true(tu_norm2((double *)r, 4 * n) < 1e-11 * tu_norm2((double *)b, 4 * n));
        sla_solver_free(&s);
    }
    free(a); free(a2);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spmv_ops),
        cmocka_unit_test(spmv_vjp_fd),
        cmocka_unit_test(lu_vs_zgesv),
        cmocka_unit_test(solve_vjp_fd),
        cmocka_unit_test(logdet_phase_grad),
        cmocka_unit_test(real_as_complex),
        cmocka_unit_test(properties),
        cmocka_unit_test(properties_nonfinite),
        cmocka_unit_test(matrix_market),
        cmocka_unit_test(krylov_vs_lu),
        cmocka_unit_test(cholesky_hermitian),
        cmocka_unit_test(klu_vs_umfpack),
        cmocka_unit_test(edge_cases),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
