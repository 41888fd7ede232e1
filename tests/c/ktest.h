/* Helpers shared by the Krylov and preconditioner tests (header-only, static functions):
 * solver shortcuts, true residuals, dense LAPACK references, small test matrices. */
#ifndef SLA_KTEST_H
#define SLA_KTEST_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* LAPACK (Fortran interface of liblapack, linked by the test harness) */
extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv,
                   double *b, const int *ldb, int *info);

static inline sla_solver_options kt_options(sla_method m, sla_precond pc, double rtol)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    o.precond = pc;
    o.rtol = rtol;
    return o;
}

/* ‖b − op(A_b) x‖₂ for batch element `bi` of a float64 matrix, vectors [n]. */
static inline double kt_residual(const sla_matrix *A, int64_t bi, sla_op op, const double *x,
                                 const double *b)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    sla_matrix Ab = sla_matrix_view(A->pattern, SLA_FLOAT64, 1, (const double *)A->values + bi * nnz);
    double *y = malloc(sizeof(double) * (size_t)(n ? n : 1));
    TU_OK(sla_spmv(op, 1.0, &Ab, x, 0, 1, 0.0, y));
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (b[i] - y[i]) * (b[i] - y[i]);
    free(y);
    return sqrt(s);
}

/* Dense solve op(A) x = b (A float64 CSR, batch element bi), by LAPACK dgesv. */
static inline void kt_dense_solve(const sla_matrix *A, int64_t bi, sla_op op, const double *b,
                                  double *x)
{
    int n = (int)sla_pattern_nrows(A->pattern), one = 1, info = 0;
    int64_t nnz = sla_pattern_nnz(A->pattern);
    const int64_t *rp = sla_pattern_rowptr(A->pattern);
    const int32_t *ci = sla_pattern_colind(A->pattern);
    const double *v = (const double *)A->values + bi * nnz;
    double *M = calloc((size_t)n * (size_t)n, sizeof(double));   /* column-major */
    int *ipiv = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            if (op == SLA_OP_N) M[(size_t)ci[s] * n + i] = v[s];
            else M[(size_t)i * n + ci[s]] = v[s];
        }
    memcpy(x, b, sizeof(double) * (size_t)n);
    dgesv_(&n, &one, M, &n, ipiv, x, &n, &info);
    assert_int_equal(info, 0);
    free(M);
    free(ipiv);
}

/* max_i |x_i − y_i| / max_i |y_i| */
static inline double kt_relerr(const double *x, const double *y, int64_t n)
{
    double e = 0, m = 0;
    for (int64_t i = 0; i < n; i++) {
        e = fmax(e, fabs(x[i] - y[i]));
        m = fmax(m, fabs(y[i]));
    }
    return m > 0 ? e / m : e;
}

/* Random sparse n × n matrix: diagonal d_i = shift + |random|·scale_diag, about `per_row`
 * off-diagonal entries per row in [-1, 1). symmetric = 1 mirrors them (values and pattern). */
static inline void kt_random_matrix(int64_t n, int per_row, double shift, int symmetric,
                                    uint64_t seed, sla_pattern **p, double **values)
{
    int64_t cap = n * (2 * per_row + 1), k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    for (int64_t i = 0; i < n; i++) {
        r[k] = i; c[k] = i; v[k++] = shift;
        for (int q = 0; q < per_row; q++) {
            int64_t j = (int64_t)((tu_rand(&seed) + 1) * 0.5 * (double)n);
            if (j >= n) j = n - 1;
            if (j == i) continue;
            double a = tu_rand(&seed);
            r[k] = i; c[k] = j; v[k++] = a;
            if (symmetric) { r[k] = j; c[k] = i; v[k++] = a; }
        }
    }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc(sizeof(double) * (size_t)sla_pattern_nnz(*p));
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

/* Tridiagonal n × n: sub-diagonal lo, diagonal d, super-diagonal up (constant). */
static inline void kt_tridiag(int64_t n, double lo, double d, double up, sla_pattern **p,
                              double **values)
{
    int64_t cap = 3 * n, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) { r[k] = i; c[k] = i - 1; v[k++] = lo; }
        r[k] = i; c[k] = i; v[k++] = d + 0.01 * (double)(i % 7);
        if (i < n - 1) { r[k] = i; c[k] = i + 1; v[k++] = up; }
    }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc(sizeof(double) * (size_t)k);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

static inline double *kt_ones(int64_t n)
{
    double *x = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) x[i] = 1;
    return x;
}

/* 1 if creating a solver with AMG works in this build (amg.c present). */
static inline int kt_have_amg(void)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(4, 4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-8);
    sla_solver *s = NULL;
    sla_status st = sla_solver_create(&A, &o, &s);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
    return st == SLA_OK;
}

#endif
