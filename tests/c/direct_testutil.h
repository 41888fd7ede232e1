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

#endif
