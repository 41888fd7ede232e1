/* The instances of t_blockops.h for every dtype (core/instantiate.h), with their BLAS products
 * and small dense eigensolvers:
 *   real     dgemm / sgemm, dsyevd / ssyevd;
 *   complex  zgemm / cgemm (conjugated transposes), and zhbevd / chbevd on the Hermitian matrix
 *            stored as a full band (kd = m − 1), not zheevd: Debian's OpenBLAS 0.3.21 segfaults
 *            in its multithreaded zgemv (called by zhetrd, thus by zheevd, zheev and zhegvd)
 *            for m ≳ 58 with 2 threads (reproduced in a standalone program, 3 runs of 3), while
 *            zhbevd's band reduction by plane rotations runs clean to m = 400. */
#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "core/cmplx.h"
#include "eig/eig_internal.h"

/* C (m × n) = alpha · op(A) · B + beta · C, column-major; op = conjugate transpose if ct. */
static void blas_gemm_f64(int ct, int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                          int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                          int64_t ldc)
{
    cblas_dgemm(CblasColMajor, ct ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

static void blas_gemm_f32(int ct, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                          int64_t ldc)
{
    cblas_sgemm(CblasColMajor, ct ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

static void blas_gemm_c128(int ct, int64_t m, int64_t n, int64_t k, double complex alpha,
                           const double complex *A, int64_t lda, const double complex *B,
                           int64_t ldb, double complex beta, double complex *C, int64_t ldc)
{
    cblas_zgemm(CblasColMajor, ct ? CblasConjTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                (int)k, &alpha, A, (int)lda, B, (int)ldb, &beta, C, (int)ldc);
}

static void blas_gemm_c64(int ct, int64_t m, int64_t n, int64_t k, float complex alpha,
                          const float complex *A, int64_t lda, const float complex *B,
                          int64_t ldb, float complex beta, float complex *C, int64_t ldc)
{
    cblas_cgemm(CblasColMajor, ct ? CblasConjTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n,
                (int)k, &alpha, A, (int)lda, B, (int)ldb, &beta, C, (int)ldc);
}

static sla_status heev_info(lapack_int info, const char *routine, const char *what, int64_t m)
{
    if (info == 0) return SLA_OK;
    return EIG_FAIL(info < 0 ? SLA_EINTERNAL : SLA_EBREAKDOWN, "LAPACK %s on the %s (%lld × "
                    "%lld) returned info = %d", routine, what, (long long)m, (long long)m,
                    (int)info);
}

static sla_status lapack_heev_f64(int64_t m, double *G, double *w, const char *what)
{
    return heev_info(LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)m, G, (lapack_int)m, w),
                     "dsyevd", what, m);
}

static sla_status lapack_heev_f32(int64_t m, float *G, float *w, const char *what)
{
    return heev_info(LAPACKE_ssyevd(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)m, G, (lapack_int)m, w),
                     "ssyevd", what, m);
}

/* zhbevd / chbevd on the upper band storage with kd = m − 1: AB[kd + i − j, j] = G[i, j], i ≤ j */
#define HBEVD(S, T, R, LT, routine)                                                              \
    static sla_status lapack_heev_##S(int64_t m, T *G, R *w, const char *what)                   \
    {                                                                                            \
        T *ab = sla_malloc((size_t)(m * m), sizeof(T), "band copy");                             \
        if (!ab) return SLA_ENOMEM;                                                              \
        for (int64_t j = 0; j < m; j++)                                                          \
            for (int64_t i = 0; i <= j; i++) ab[m - 1 + i - j + j * m] = G[i + j * m];           \
        lapack_int info = LAPACKE_##routine(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)m,           \
                                            (lapack_int)(m - 1), (LT *)ab, (lapack_int)m, w,     \
                                            (LT *)G, (lapack_int)m);                             \
        sla_free(ab);                                                                            \
        return heev_info(info, #routine, what, m);                                               \
    }
HBEVD(c128, double complex, double, lapack_complex_double, zhbevd)
HBEVD(c64, float complex, float, lapack_complex_float, chbevd)
#undef HBEVD

#define SLA_TEMPLATE "eig/t_blockops.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"
