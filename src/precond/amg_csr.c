/* CSR helpers of the AMG hierarchy: allocation, transpose with its value permutation, sorting. */
#include <string.h>

#include "precond/amg_internal.h"

void amg_csr_free(amg_csr *M)
{
    if (!M) return;
    if (!M->borrowed) {
        sla_free(M->rp);
        sla_free(M->ci);
    }
    if (!M->borrowed_v) sla_free(M->v);
    memset(M, 0, sizeof *M);
}

sla_status amg_csr_alloc(amg_csr *M, int64_t nrows, int64_t ncols, int64_t nnz)
{
    memset(M, 0, sizeof *M);
    M->nrows = nrows;
    M->ncols = ncols;
    M->rp = sla_malloc((size_t)nrows + 1, sizeof(int64_t), "AMG row pointers");
    M->ci = sla_malloc((size_t)nnz, sizeof(int32_t), "AMG column indices");
    M->v = sla_malloc((size_t)nnz, sizeof(double), "AMG values");
    if (!M->rp || !M->ci || !M->v) {
        amg_csr_free(M);
        return SLA_ENOMEM;
    }
    M->rp[0] = 0;
    return SLA_OK;
}

/* Counting sort by column: the rows of Mᵀ come out with sorted columns because the rows of M are
 * visited in order. O(nnz + ncols). */
sla_status amg_transpose(const amg_csr *M, amg_csr *Mt, int64_t **perm_out)
{
    int64_t m = M->nrows, n = M->ncols, nnz = amg_nnz(M);
    int64_t *perm = perm_out ? sla_malloc((size_t)nnz, sizeof(int64_t), "AMG transpose permutation")
                             : NULL;
    int64_t *next = sla_calloc((size_t)n + 1, sizeof(int64_t), "AMG transpose counts");
    sla_status st = SLA_ENOMEM;
    if ((perm_out && !perm) || !next) goto fail;
    if ((st = amg_csr_alloc(Mt, n, m, nnz)) != SLA_OK) goto fail;
    for (int64_t k = 0; k < nnz; k++) next[M->ci[k] + 1]++;
    for (int64_t j = 0; j < n; j++) next[j + 1] += next[j];
    memcpy(Mt->rp, next, sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = M->rp[i]; k < M->rp[i + 1]; k++) {
            int64_t p = next[M->ci[k]]++;
            Mt->ci[p] = (int32_t)i;
            if (perm) perm[p] = k;
            else Mt->v[p] = M->v[k];
        }
    sla_free(next);
    if (perm) {
        amg_permute_values(M, perm, Mt);
        *perm_out = perm;
    }
    return SLA_OK;
fail:
    sla_free(perm);
    sla_free(next);
    return st;
}

sla_status amg_transpose_pattern(const amg_csr *M, amg_csr *Mt)
{
    int64_t m = M->nrows, n = M->ncols, nnz = amg_nnz(M);
    memset(Mt, 0, sizeof *Mt);
    Mt->nrows = n;
    Mt->ncols = m;
    Mt->rp = sla_calloc((size_t)n + 1, sizeof(int64_t), "AMG transpose row pointers");
    Mt->ci = sla_malloc((size_t)nnz, sizeof(int32_t), "AMG transpose columns");
    int64_t *next = sla_malloc((size_t)n + 1, sizeof(int64_t), "AMG transpose cursors");
    if (!Mt->rp || !Mt->ci || !next) {
        sla_free(next);
        amg_csr_free(Mt);
        return SLA_ENOMEM;
    }
    for (int64_t k = 0; k < nnz; k++) Mt->rp[M->ci[k] + 1]++;
    for (int64_t j = 0; j < n; j++) Mt->rp[j + 1] += Mt->rp[j];
    memcpy(next, Mt->rp, sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = M->rp[i]; k < M->rp[i + 1]; k++) Mt->ci[next[M->ci[k]]++] = (int32_t)i;
    sla_free(next);
    return SLA_OK;
}

void amg_permute_values(const amg_csr *M, const int64_t *perm, amg_csr *Mt)
{
    int64_t nnz = amg_nnz(Mt);
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (nnz > 4 * AMG_PARALLEL_MIN)
    for (int64_t k = 0; k < nnz; k++) Mt->v[k] = M->v[perm[k]];
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

void amg_sort_int32(int32_t *idx, int64_t n)
{
    if (n > 32) {
        qsort(idx, (size_t)n, sizeof *idx, cmp_int32);
        return;
    }
    for (int64_t i = 1; i < n; i++) {
        int32_t t = idx[i];
        int64_t j = i;
        for (; j > 0 && idx[j - 1] > t; j--) idx[j] = idx[j - 1];
        idx[j] = t;
    }
}
