/* Helpers of the symmetric direct backends: the symmetry check, the lower triangle of A ∪ Aᵀ
 * that CHOLMOD and MUMPS read, dense layout conversions (see direct.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "direct/direct.h"

#define SLA_TEMPLATE "direct/t_direct.h"
#include "core/instantiate.h"

sla_status sla_direct_check_square(const sla_matrix *A)
{
    SLA_TRY(sla_matrix_check(A, 0));
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    if (m != n) return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld, not square", (long long)m, (long long)n);
    return SLA_OK;
}

sla_status sla_direct_check_symmetric(const sla_matrix *A, const char *method)
{
    const sla_pattern *t;
    const int64_t *perm;
    SLA_TRY(sla_pattern_cached_transpose(A->pattern, &t, &perm));
    int64_t nnz = sla_pattern_nnz(A->pattern);
    size_t es = sla_dtype_size(A->dtype);
    double eps = A->dtype == SLA_FLOAT64 ? DBL_EPSILON : FLT_EPSILON, rtol = 1000 * eps;
    for (int64_t b = 0; b < A->batch; b++) {
        const char *a = (const char *)A->values + (size_t)(b * nnz) * es;
        int64_t i = 0, j = 0;
        double x = 0, y = 0;
        if (SLA_DISPATCH(A->dtype, asymmetric_pair, (A->pattern, t, perm, (const void *)a, rtol, eps,
                                                      &i, &j, &x, &y)))
            return SLA_FAIL(SLA_EINVAL, "A[%lld] is not symmetric: a(%lld,%lld) = %.17g but "
                            "a(%lld,%lld) = %.17g (relative tolerance %.1e); %s reads one "
                            "triangle only: symmetrize (A + Aᵀ)/2 or use method lu",
                            (long long)b, (long long)i, (long long)j, x, (long long)j,
                            (long long)i, y, rtol, method);
    }
    return SLA_OK;
}

sla_status sla_symlower_build(const sla_pattern *p, sla_symlower *out)
{
    memset(out, 0, sizeof *out);
    const sla_pattern *t;
    const int64_t *perm;
    SLA_TRY(sla_pattern_cached_transpose(p, &t, &perm));
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p), *trp = sla_pattern_rowptr(t);
    const int32_t *ci = sla_pattern_colind(p), *tci = sla_pattern_colind(t);
    /* entries with j ≤ i of rows of A and of Aᵀ, merged; at most nnz(A) of them */
    int64_t cap = sla_pattern_nnz(p);
    out->n = n;
    out->rowptr = sla_malloc((size_t)n + 1, sizeof(int64_t), "symmetric pattern row pointers");
    out->colind = sla_malloc((size_t)cap, sizeof(int64_t), "symmetric pattern columns");
    out->src = sla_malloc((size_t)cap, sizeof(int64_t), "symmetric pattern sources");
    if (!out->rowptr || !out->colind || !out->src) {
        sla_symlower_free(out);
        return SLA_ENOMEM;
    }
    int64_t k = 0;
    out->rowptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = rp[i], q = trp[i];
        while ((s < rp[i + 1] && ci[s] <= i) || (q < trp[i + 1] && tci[q] <= i)) {
            int64_t cs = s < rp[i + 1] && ci[s] <= i ? ci[s] : INT64_MAX;
            int64_t cq = q < trp[i + 1] && tci[q] <= i ? tci[q] : INT64_MAX;
            int64_t j = cs < cq ? cs : cq;
            out->colind[k] = j;
            out->src[k++] = cs == j ? s : perm[q];   /* prefer the stored lower entry */
            if (cs == j) s++;
            if (cq == j) q++;
        }
        out->rowptr[i + 1] = k;
    }
    out->nnz = k;
    return SLA_OK;
}

void sla_symlower_free(sla_symlower *t)
{
    if (!t) return;
    sla_free(t->rowptr);
    sla_free(t->colind);
    sla_free(t->src);
    memset(t, 0, sizeof *t);
}

void sla_symlower_gather(const sla_symlower *t, sla_dtype dtype, const void *values, double *out)
{
    SLA_DISPATCH(dtype, gather_double, (t->nnz, t->src, values, out));
}

void sla_dense_to_colmajor(sla_dtype dtype, int64_t n, int64_t k, const void *in, double *out)
{
    if (dtype == SLA_FLOAT64 && k == 1) { memcpy(out, in, (size_t)n * sizeof(double)); return; }
    SLA_DISPATCH(dtype, to_colmajor, (n, k, in, out));
}

void sla_dense_from_colmajor(sla_dtype dtype, int64_t n, int64_t k, const double *in, int64_t ld,
                             void *out)
{
    if (dtype == SLA_FLOAT64 && k == 1) { memcpy(out, in, (size_t)n * sizeof(double)); return; }
    SLA_DISPATCH(dtype, from_colmajor, (n, k, in, ld, out));
}

void sla_direct_scatter_scaled(sla_dtype dtype, int64_t nnz, double g, const double *z,
                               const int64_t *pos, void *out)
{
    SLA_DISPATCH(dtype, scatter_scaled, (nnz, g, z, pos, out));
}

void sla_batch_error_record(sla_batch_error *e, int64_t b, sla_status st)
{
    #pragma omp critical(sla_batch_error)
    if (b < e->b) {
        e->b = b;
        e->st = st;
        snprintf(e->msg, sizeof e->msg, "%s", sla_last_error());
    }
}

int sla_batch_error_failed(const sla_batch_error *e)
{
    return e->b != INT64_MAX;
}

sla_status sla_batch_error_raise(const sla_batch_error *e, const char *func)
{
    return sla_error_set(e->st, func, "A[%lld]: %s", (long long)e->b, e->msg);
}
