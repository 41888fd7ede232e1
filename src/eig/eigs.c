/* A few eigenpairs of a general matrix: ARPACK-ng dnaupd/dneupd (implicitly restarted Arnoldi,
 * regular mode OP = A) with libsla's SpMV in the reverse-communication loop. Calls are
 * serialized: ARPACK keeps state in Fortran SAVE variables. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "core/internal.h"
#include "sla/config.h"

#if SLA_HAVE_ARPACK
#include <arpack/arpack.h>

static pthread_mutex_t eigs_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const WHICH[] = {"LM", "SM", "LR", "SR", "LI", "SI"};

typedef struct eigs_ws {
    double *resid, *v, *workd, *workl, *workev, *dr, *di, *z;
    a_int *select;
} eigs_ws;

static void ws_free(eigs_ws *w)
{
    sla_free(w->resid); sla_free(w->v); sla_free(w->workd); sla_free(w->workl);
    sla_free(w->workev); sla_free(w->dr); sla_free(w->di); sla_free(w->z); sla_free(w->select);
}

static sla_status ws_alloc(eigs_ws *w, a_int n, a_int ncv, a_int nev, a_int lworkl)
{
    w->resid = sla_malloc((size_t)n, sizeof(double), "ARPACK residual");
    w->v = sla_malloc((size_t)n * (size_t)ncv, sizeof(double), "ARPACK basis");
    w->workd = sla_malloc((size_t)(3 * n), sizeof(double), "ARPACK workd");
    w->workl = sla_calloc((size_t)lworkl, sizeof(double), "ARPACK workl");
    w->workev = sla_calloc((size_t)(3 * ncv), sizeof(double), "ARPACK workev");
    w->dr = sla_malloc((size_t)nev + 1, sizeof(double), "eigenvalues");
    w->di = sla_malloc((size_t)nev + 1, sizeof(double), "eigenvalues");
    w->z = sla_malloc((size_t)n * (size_t)(nev + 1), sizeof(double), "eigenvectors");
    w->select = sla_calloc((size_t)ncv, sizeof(a_int), "ARPACK select");
    return w->resid && w->v && w->workd && w->workl && w->workev && w->dr && w->di && w->z &&
           w->select ? SLA_OK : SLA_ENOMEM;
}

static sla_status arnoldi(const sla_matrix *A, a_int n, a_int nev, a_int ncv, const char *which,
                          double tol, a_int maxiter, eigs_ws *w, a_int *iparam, a_int *ipntr,
                          a_int lworkl)
{
    a_int ido = 0, info = 1;                     /* info 1: resid holds the start vector */
    for (a_int i = 0; i < n; i++) w->resid[i] = 1.0 + 0.5 * sin(1.0 + (double)i);
    iparam[0] = 1;                               /* exact shifts */
    iparam[2] = maxiter;
    iparam[6] = 1;                               /* regular mode */
    for (;;) {
        dnaupd_c(&ido, "I", n, which, nev, tol, w->resid, ncv, w->v, n, iparam, ipntr,
                 w->workd, w->workl, lworkl, &info);
        if (ido != -1 && ido != 1) break;
        SLA_TRY(sla_spmv(SLA_OP_N, 1.0, A, w->workd + ipntr[0] - 1, 0, 1, 0.0,
                         w->workd + ipntr[1] - 1));
    }
    if (info < 0 || (info != 0 && info != 1))
        return SLA_FAIL_AS("sla_eigs", SLA_EBACKEND, "ARPACK dnaupd returned info = %d",
                           (int)info);
    return SLA_OK;
}

sla_status sla_eigs(const sla_matrix *A, int64_t k, sla_eigs_which which, double tol,
                    int64_t maxiter, int64_t ncv, double *wr, double *wi, double *V,
                    int64_t *nconv)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, 1));
    SLA_CHECK_ARG(wr && wi && nconv, "wr, wi or nconv is NULL");
    SLA_CHECK_ARG((int)which >= 0 && (int)which <= SLA_EIGS_SI, "which = %d", (int)which);
    if (A->dtype != SLA_FLOAT64)
        return SLA_FAIL(SLA_EDTYPE, "A must be float64");
    SLA_CHECK_ARG(A->batch == 1, "A->batch = %lld: one matrix at a time", (long long)A->batch);
    int64_t n = sla_pattern_nrows(A->pattern);
    if (n != sla_pattern_ncols(A->pattern))
        return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld: eigenvalues need a square matrix",
                        (long long)n, (long long)sla_pattern_ncols(A->pattern));
    SLA_CHECK_ARG(k >= 1 && k <= n - 2, "k = %lld must be in [1, n − 2 = %lld] (ARPACK)",
                  (long long)k, (long long)(n - 2));
    if (ncv <= 0) ncv = n < (2 * k + 1 > 20 ? 2 * k + 1 : 20) ? n : (2 * k + 1 > 20 ? 2 * k + 1 : 20);
    SLA_CHECK_ARG(ncv >= k + 2 && ncv <= n, "ncv = %lld must be in [k + 2, n]", (long long)ncv);
    if (maxiter <= 0) maxiter = 10 * n > 300 ? 10 * n : 300;
    a_int lworkl = (a_int)(3 * ncv * ncv + 6 * ncv);
    a_int iparam[11] = {0}, ipntr[14] = {0};
    eigs_ws w = {0};
    sla_status st = ws_alloc(&w, (a_int)n, (a_int)ncv, (a_int)k, lworkl);
    pthread_mutex_lock(&eigs_lock);
    if (st == SLA_OK)
        st = arnoldi(A, (a_int)n, (a_int)k, (a_int)ncv, WHICH[which], tol > 0 ? tol : 0.0,
                     (a_int)maxiter, &w, iparam, ipntr, lworkl);
    a_int got = st == SLA_OK ? iparam[4] : 0;
    if (st == SLA_OK) {
        a_int ierr = 0;
        dneupd_c(V != NULL, "A", w.select, w.dr, w.di, w.z, (a_int)n, 0.0, 0.0, w.workev, "I",
                 (a_int)n, WHICH[which], (a_int)k, tol > 0 ? tol : 0.0, w.resid, (a_int)ncv,
                 w.v, (a_int)n, iparam, ipntr, w.workd, w.workl, lworkl, &ierr);
        if (ierr != 0)
            st = SLA_FAIL(SLA_EBACKEND, "ARPACK dneupd returned info = %d", (int)ierr);
    }
    pthread_mutex_unlock(&eigs_lock);
    if (st == SLA_OK) {
        int64_t m = got < k ? got : k;
        for (int64_t j = 0; j < m; j++) { wr[j] = w.dr[j]; wi[j] = w.di[j]; }
        for (int64_t j = m; j < k; j++) wr[j] = wi[j] = NAN;
        for (int64_t i = 0; V && i < n; i++)            /* column-major z → row-major V */
            for (int64_t j = 0; j < k; j++) V[i * k + j] = j < m ? w.z[j * n + i] : NAN;
        *nconv = m;
        if (m < k)
            st = SLA_FAIL(SLA_NOT_CONVERGED, "ARPACK converged %lld of %lld eigenvalues in "
                          "%lld restarts", (long long)m, (long long)k, (long long)maxiter);
    }
    ws_free(&w);
    return st;
}

#else

sla_status sla_eigs(const sla_matrix *A, int64_t k, sla_eigs_which which, double tol,
                    int64_t maxiter, int64_t ncv, double *wr, double *wi, double *V,
                    int64_t *nconv)
{
    return SLA_FAIL(SLA_EUNSUPPORTED, "built without ARPACK (libarpack2-dev)");
}

#endif
