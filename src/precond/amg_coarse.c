/* Coarsest level of the AMG hierarchy: dense Cholesky (LAPACK dpotrf) when the matrix is
 * symmetric positive definite, else dense LU with partial pivoting (dgetrf); a singular matrix
 * (a pivot below 1e-13 of the largest, e.g. a pure Neumann problem) falls back to symmetric
 * smoother sweeps, done by the caller (kind AMG_COARSE_SMOOTH). Complex hierarchies: zpotrf
 * for a Hermitian positive definite matrix, else zgetrf (a complex symmetric coarsest matrix). */
#include <math.h>
#include <string.h>

#include "precond/amg_internal.h"

/* LAPACK (Fortran 77 interface; the trailing size_t are gfortran's hidden string lengths). */
extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info, size_t);
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info, size_t);

void amg_coarse_free(amg_coarse *c)
{
    sla_free(c->f);
    sla_free(c->ipiv);
    memset(c, 0, sizeof *c);
}

extern void zpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t);
extern void zpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info, size_t);
extern void zgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void zgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
                    const int *lda, const int *ipiv, double *b, const int *ldb, int *info, size_t);

#define SLA_TEMPLATE "precond/t_amg_coarse.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

static void to_dense(const amg_csr *A, double *f)
{
    AMG_DISPATCH(A, to_dense, (A, (void *)f));
}

/* No factor: the caller smooths the coarsest level instead. */
static sla_status smooth_instead(amg_coarse *c)
{
    int n = c->n;
    amg_coarse_free(c);
    c->kind = AMG_COARSE_SMOOTH;
    c->n = n;
    return SLA_OK;
}

sla_status amg_coarse_factor(const amg_csr *A, int64_t coarse_size, amg_coarse *c)
{
    int64_t n = A->nrows;
    amg_coarse_free(c);
    c->n = (int)n;
    if (n == 0) { c->kind = AMG_COARSE_NONE; return SLA_OK; }
    if (n > (coarse_size > AMG_DENSE_MAX ? coarse_size : AMG_DENSE_MAX)) return smooth_instead(c);
    int ni = (int)n, info = 0;
    c->cplx = A->cplx;
    c->f = sla_malloc((size_t)(n * n) * amg_es(A), sizeof(double), "AMG coarse factor");
    if (!c->f) return SLA_ENOMEM;
    to_dense(A, c->f);
    int cls = AMG_DISPATCH(A, coarse_class, ((const void *)c->f, n));
    if (cls < 0) return smooth_instead(c);   /* NaN/Inf (unvalidated input): not for LAPACK */
    if (cls == 1) {                            /* symmetric (Hermitian): try Cholesky */
        (c->cplx ? zpotrf_ : dpotrf_)("L", &ni, c->f, &ni, &info, 1);
        if (info == 0) { c->kind = AMG_COARSE_CHOLESKY; return SLA_OK; }
        to_dense(A, c->f);
    }
    c->ipiv = sla_malloc((size_t)n, sizeof(int), "AMG coarse pivots");
    if (!c->ipiv) return SLA_ENOMEM;
    (c->cplx ? zgetrf_ : dgetrf_)(&ni, &ni, c->f, &ni, c->ipiv, &info);
    if (info != 0 || !AMG_DISPATCH(A, pivots_ok, ((const void *)c->f, n))) return smooth_instead(c);
    c->kind = AMG_COARSE_LU;
    return SLA_OK;
}

void amg_coarse_solve(const amg_coarse *c, int trans, const double *b, double *x)
{
    int n = c->n, one = 1, info = 0;
    if (c->kind != AMG_COARSE_CHOLESKY && c->kind != AMG_COARSE_LU) return;
    memcpy(x, b, sizeof(double) * (size_t)n * (c->cplx ? 2 : 1));
    if (c->kind == AMG_COARSE_CHOLESKY)
        (c->cplx ? zpotrs_ : dpotrs_)("L", &n, &one, c->f, &n, x, &n, &info, 1);
    else
        (c->cplx ? zgetrs_ : dgetrs_)(trans ? "T" : "N", &n, &one, c->f, &n, c->ipiv, x, &n, &info, 1);
}
