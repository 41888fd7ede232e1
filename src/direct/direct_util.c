/* Helpers of the symmetric direct backends: the symmetry check, the lower triangle of A ∪ Aᵀ
 * that CHOLMOD and MUMPS read, dense layout conversions (see direct.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

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

sla_status sla_symlower_check(const sla_symlower *t, const sla_matrix *A, const char *method)
{
    int64_t nnz = sla_pattern_nnz(A->pattern);
    size_t es = sla_dtype_size(A->dtype);
    double eps = A->dtype == SLA_FLOAT64 ? DBL_EPSILON : FLT_EPSILON, rtol = 1000 * eps;
    for (int64_t b = 0; b < A->batch; b++) {
        const char *a = (const char *)A->values + (size_t)(b * nnz) * es;
        int64_t i = 0, j = 0;
        double x = 0, y = 0;
        if (SLA_DISPATCH(A->dtype, asymmetric_pair, (t, nnz, (const void *)a, rtol, eps, &i, &j,
                                                      &x, &y)))
            return SLA_FAIL(SLA_EINVAL, "A[%lld] is not symmetric: a(%lld,%lld) = %.17g but "
                            "a(%lld,%lld) = %.17g (relative tolerance %.1e); %s reads one "
                            "triangle only: symmetrize (A + Aᵀ)/2 or use method lu",
                            (long long)b, (long long)i, (long long)j, x, (long long)j,
                            (long long)i, y, rtol, method);
    }
    return SLA_OK;
}

/* 1 if every off-diagonal entry has its mirror. One O(nnz) pass as in asymmetric_pair (t_direct.h):
 * rows in increasing order i, cursor[j] walking the upper part of row j, where the mirror of a
 * lower entry (i, j) must be next; an upper entry stepped over or left at the end has none. */
static sla_status structurally_symmetric(const sla_pattern *p, int *sym)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    int64_t *cursor = sla_malloc((size_t)n, sizeof(int64_t), "row cursors");
    if (!cursor) return SLA_ENOMEM;
    for (int64_t j = 0; j < n; j++) {
        int64_t s = rp[j];
        while (s < rp[j + 1] && ci[s] <= j) s++;
        cursor[j] = s;
    }
    *sym = 1;
    for (int64_t i = 0; i < n && *sym; i++)
        for (int64_t s = rp[i]; s < rp[i + 1] && ci[s] < i && *sym; s++) {
            int64_t j = ci[s];
            if (cursor[j] < rp[j + 1] && ci[cursor[j]] == i) cursor[j]++;
            else *sym = 0;
        }
    for (int64_t j = 0; j < n && *sym; j++) *sym = cursor[j] == rp[j + 1];
    sla_free(cursor);
    return SLA_OK;
}

static sla_status symlower_alloc(sla_symlower *out, int64_t n, int64_t cap)
{
    out->n = n;
    out->rowptr = sla_malloc((size_t)n + 1, sizeof(int64_t), "symmetric pattern row pointers");
    out->colind = sla_malloc((size_t)cap, sizeof(int64_t), "symmetric pattern columns");
    out->src = sla_malloc((size_t)cap, sizeof(int64_t), "symmetric pattern sources");
    out->mirror = sla_malloc((size_t)cap, sizeof(int64_t), "symmetric pattern mirrors");
    if (out->rowptr && out->colind && out->src && out->mirror) return SLA_OK;
    sla_symlower_free(out);
    return SLA_ENOMEM;
}

sla_status sla_symlower_build(const sla_pattern *p, sla_symlower *out)
{
    memset(out, 0, sizeof *out);
    int64_t n = sla_pattern_nrows(p), k = 0;
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    int sym = 0;
    SLA_TRY(structurally_symmetric(p, &sym));
    if (sym) {
        /* the common case: the lower part of each CSR row is a prefix of it (sorted columns);
         * the mirror of (i, j) is the next unvisited upper entry of row j (cursor walk) */
        int64_t cap = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1] && ci[s] <= i; s++) cap++;
        SLA_TRY(symlower_alloc(out, n, cap));
        int64_t *cursor = sla_malloc((size_t)n, sizeof(int64_t), "row cursors");
        if (!cursor) { sla_symlower_free(out); return SLA_ENOMEM; }
        for (int64_t j = 0; j < n; j++) {
            int64_t s = rp[j];
            while (s < rp[j + 1] && ci[s] <= j) s++;
            cursor[j] = s;
        }
        out->rowptr[0] = 0;
        for (int64_t i = 0; i < n; i++) {
            for (int64_t s = rp[i]; s < rp[i + 1] && ci[s] <= i; s++) {
                out->colind[k] = ci[s];
                out->mirror[k] = ci[s] == i ? s : cursor[ci[s]]++;
                out->src[k++] = s;
            }
            out->rowptr[i + 1] = k;
        }
        sla_free(cursor);
        out->nnz = k;
        out->pattern = p;
        return SLA_OK;
    }
    /* entries with j ≤ i of rows of A and of Aᵀ, merged; at most nnz(A) of them */
    const sla_pattern *t;
    const int64_t *perm;
    SLA_TRY(sla_pattern_cached_transpose(p, &t, &perm));
    const int64_t *trp = sla_pattern_rowptr(t);
    const int32_t *tci = sla_pattern_colind(t);
    SLA_TRY(symlower_alloc(out, n, sla_pattern_nnz(p)));
    out->rowptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = rp[i], q = trp[i];
        while ((s < rp[i + 1] && ci[s] <= i) || (q < trp[i + 1] && tci[q] <= i)) {
            int64_t cs = s < rp[i + 1] && ci[s] <= i ? ci[s] : INT64_MAX;
            int64_t cq = q < trp[i + 1] && tci[q] <= i ? tci[q] : INT64_MAX;
            int64_t j = cs < cq ? cs : cq;
            out->colind[k] = j;
            /* prefer the stored lower entry; the mirror is the other, if stored */
            out->src[k] = cs == j ? s : perm[q];
            out->mirror[k] = j == i ? out->src[k] : cs == j && cq == j ? perm[q] : -1;
            k++;
            if (cs == j) s++;
            if (cq == j) q++;
        }
        out->rowptr[i + 1] = k;
    }
    out->nnz = k;
    out->pattern = p;
    return SLA_OK;
}

void sla_symlower_free(sla_symlower *t)
{
    if (!t) return;
    sla_free(t->rowptr);
    sla_free(t->colind);
    sla_free(t->src);
    sla_free(t->mirror);
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

void sla_direct_residuals(const sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                          const void *X, double *r, sla_solve_info *info)
{
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    size_t es = sla_dtype_size(s->dtype);
    info->residual_norm = info->relative_residual = 0;
    for (int64_t b = 0; b < s->batch; b++) {
        const char *a = (const char *)s->A.values + (size_t)(b * nnz) * es;
        size_t off = (size_t)(b * n * nrhs) * es;
        for (int64_t j = 0; j < nrhs; j++) {
            double rn = 0, bn = 0;
            SLA_DISPATCH(s->dtype, residual_column, (s->pattern, (const void *)a, op,
                                                     (const void *)((const char *)B + off),
                                                     (const void *)((const char *)X + off),
                                                     nrhs, j, r, &rn, &bn));
            info->residual_norm = fmax(info->residual_norm, rn);
            if (bn > 0) info->relative_residual = fmax(info->relative_residual, rn / bn);
            else if (rn > 0) info->relative_residual = INFINITY;
        }
    }
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

sla_status sla_direct_for_each(int64_t batch, int nthreads, sla_batch_fn fn, void *ctx,
                               const char *func, sla_batch_error *err)
{
    *err = (sla_batch_error)SLA_BATCH_ERROR_INIT;
    if (nthreads <= 1 || batch <= 1) {
        for (int64_t b = 0; b < batch; b++) {
            sla_status st = fn(ctx, b, 0);
            if (st < 0) sla_batch_error_record(err, b, st);
        }
    } else {
        #pragma omp parallel for num_threads(nthreads) schedule(static)
        for (int64_t b = 0; b < batch; b++) {
            sla_status st = fn(ctx, b, omp_get_thread_num());
            if (st < 0) sla_batch_error_record(err, b, st);
        }
    }
    return sla_batch_error_failed(err) ? sla_batch_error_raise(err, func) : SLA_OK;
}
