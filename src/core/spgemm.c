/* Sparse × sparse products C = A·B and their VJP (the masked products G·Bᵀ on A's pattern and
 * Aᵀ·G on B's). The pattern comes from Gustavson's row-wise symbolic pass (a marker array per
 * row); values from t_spgemm.h per dtype. The VJP reads C's slots through the same per-row
 * column → slot map, so each of its sums has a fixed order. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/pattern_impl.h"

#define SLA_TEMPLATE "core/t_spgemm.h"
#include "core/instantiate.h"

static int cmp_int64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

sla_status sla_spgemm_pattern(const sla_pattern *A, const sla_pattern *B, sla_pattern **C)
{
    SLA_CHECK_ARG(A && B && C, "A, B or C is NULL");
    *C = NULL;
    if (A->ncols != B->nrows)
        return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld and B %lld × %lld: inner dimensions "
                        "differ", (long long)A->nrows, (long long)A->ncols,
                        (long long)B->nrows, (long long)B->ncols);
    int64_t m = A->nrows, n = B->ncols;
    int64_t *rowptr = sla_malloc((size_t)m + 1, sizeof *rowptr, "row pointers");
    int64_t *mark = sla_malloc((size_t)n, sizeof *mark, "column markers");
    int64_t cap = 1024, len = 0;
    int64_t *col = sla_malloc((size_t)cap, sizeof *col, "columns");
    sla_status st = rowptr && mark && col ? SLA_OK : SLA_ENOMEM;
    for (int64_t j = 0; st == SLA_OK && j < n; j++) mark[j] = -1;
    if (st == SLA_OK) rowptr[0] = 0;
    for (int64_t i = 0; st == SLA_OK && i < m; i++) {
        for (int64_t p = A->rowptr[i]; st == SLA_OK && p < A->rowptr[i + 1]; p++) {
            int64_t k = A->colind[p];
            for (int64_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++) {
                int64_t j = B->colind[q];
                if (mark[j] == i) continue;
                mark[j] = i;
                if (len == cap) {
                    int64_t *grown = sla_malloc((size_t)(cap *= 2), sizeof *grown, "columns");
                    if (!grown) { st = SLA_ENOMEM; break; }
                    memcpy(grown, col, sizeof *col * (size_t)len);
                    sla_free(col);
                    col = grown;
                }
                col[len++] = j;
            }
        }
        rowptr[i + 1] = len;
    }
    /* rows sorted here, so that the pattern's input order is its CSR order */
    for (int64_t i = 0; st == SLA_OK && i < m; i++)
        qsort(col + rowptr[i], (size_t)(rowptr[i + 1] - rowptr[i]), sizeof *col, cmp_int64);
    if (st == SLA_OK) st = sla_pattern_from_csr(m, n, rowptr, col, C);
    sla_free(rowptr);
    sla_free(mark);
    sla_free(col);
    return sla_error_attribute(st, __func__);
}

/* shapes, dtypes, batches; *batch = the product's */
static sla_status check_operands(const char *func, const sla_matrix *A, const sla_matrix *B,
                                 const sla_pattern *C, int64_t *batch)
{
    SLA_TRY(sla_matrix_check_for(func, "A", A, 0));
    SLA_TRY(sla_matrix_check_for(func, "B", B, 0));
    SLA_CHECK_ARG_AS(func, C, "C is NULL");
    if (A->dtype != B->dtype)
        return SLA_FAIL_AS(func, SLA_EDTYPE, "A and B have different dtypes");
    const sla_pattern *a = A->pattern, *b = B->pattern;
    if (a->ncols != b->nrows || C->nrows != a->nrows || C->ncols != b->ncols)
        return SLA_FAIL_AS(func, SLA_ESHAPE, "A %lld × %lld, B %lld × %lld, C %lld × %lld do "
                           "not chain", (long long)a->nrows, (long long)a->ncols,
                           (long long)b->nrows, (long long)b->ncols, (long long)C->nrows,
                           (long long)C->ncols);
    if (A->batch != B->batch && A->batch != 1 && B->batch != 1)
        return SLA_FAIL_AS(func, SLA_EINVAL, "batches %lld and %lld: equal, or one of them 1",
                           (long long)A->batch, (long long)B->batch);
    *batch = A->batch > B->batch ? A->batch : B->batch;
    return SLA_OK;
}

static int64_t *slot_arrays(int nthreads, int64_t n)
{
    int64_t *slot = sla_malloc((size_t)nthreads * (size_t)(n ? n : 1), sizeof *slot,
                               "column slots");
    for (int64_t j = 0; slot && j < nthreads * n; j++) slot[j] = -1;
    return slot;
}

sla_status sla_spgemm(const sla_matrix *A, const sla_matrix *B, const sla_pattern *C,
                      void *c_values)
{
    int64_t batch;
    SLA_TRY(check_operands(__func__, A, B, C, &batch));
    SLA_CHECK_ARG(c_values || C->nnz == 0, "c_values is NULL");
    size_t es = sla_dtype_size(A->dtype);
    int64_t m = C->nrows, n = C->ncols, bad = -1;
    int nt = sla_threads();
    int64_t *slot = slot_arrays(nt, n);
    if (!slot) return SLA_ENOMEM;
    for (int64_t t = 0; t < batch && bad < 0; t++) {
        const char *a = (const char *)A->values + (size_t)(A->batch > 1 ? t : 0) * A->pattern->nnz * es;
        const char *b = (const char *)B->values + (size_t)(B->batch > 1 ? t : 0) * B->pattern->nnz * es;
        char *c = (char *)c_values + (size_t)t * C->nnz * es;
#pragma omp parallel num_threads(nt) reduction(max : bad)
        {
            int id = omp_get_thread_num(), k = omp_get_num_threads();
            int64_t i0 = m * id / k, i1 = m * (id + 1) / k, r;
            int64_t *sl = slot + (size_t)id * (size_t)n;
            r = SLA_DISPATCH(A->dtype, spgemm_rows, (A->pattern, (const void *)a, B->pattern,
                                                     (const void *)b, C, (void *)c, i0, i1, sl));
            if (r >= 0 && r + 1 > bad) bad = r + 1;
        }
    }
    sla_free(slot);
    if (bad > 0)
        return SLA_FAIL(SLA_EINVAL, "C does not contain the pattern of A·B (row %lld): use "
                        "sla_spgemm_pattern", (long long)(bad - 1));
    return SLA_OK;
}

sla_status sla_spgemm_vjp(const sla_matrix *A, const sla_matrix *B, const sla_pattern *C,
                          const void *g, void *dA, void *dB)
{
    int64_t batch;
    SLA_TRY(check_operands(__func__, A, B, C, &batch));
    SLA_CHECK_ARG(g || C->nnz == 0, "g is NULL");
    size_t es = sla_dtype_size(A->dtype);
    int64_t m = C->nrows, n = C->ncols;
    int64_t na = A->pattern->nnz, nb = B->pattern->nnz;
    /* the product's pattern must lie in C (checked by a values pass into scratch) */
    void *scratch = sla_malloc((size_t)(C->nnz ? C->nnz : 1), es, "scratch");
    if (!scratch) return SLA_ENOMEM;
    sla_matrix A1 = *A, B1 = *B;
    A1.batch = B1.batch = 1;
    sla_status st = sla_spgemm(&A1, &B1, C, scratch);
    sla_free(scratch);
    if (st != SLA_OK) return sla_error_attribute(st, __func__);
    if (dA) memset(dA, 0, (size_t)A->batch * (size_t)na * es);
    if (dB) memset(dB, 0, (size_t)B->batch * (size_t)nb * es);
    int nt = sla_threads();
    int64_t *slot = slot_arrays(nt, n);
    if (!slot) return SLA_ENOMEM;
    for (int64_t t = 0; t < batch; t++) {
        size_t ta = A->batch > 1 ? (size_t)t : 0, tb = B->batch > 1 ? (size_t)t : 0;
        const char *a = (const char *)A->values + ta * na * es;
        const char *b = (const char *)B->values + tb * nb * es;
        const char *gt = (const char *)g + (size_t)t * C->nnz * es;
        if (dA) {
            char *da = (char *)dA + ta * na * es;
#pragma omp parallel num_threads(nt)
            {
                int id = omp_get_thread_num(), k = omp_get_num_threads();
                SLA_DISPATCH(A->dtype, spgemm_vjp_a,
                             (A->pattern, B->pattern, (const void *)b, C, (const void *)gt,
                              (void *)da, m * id / k, m * (id + 1) / k,
                              slot + (size_t)id * (size_t)n));
            }
        }
        if (dB)
            SLA_DISPATCH(A->dtype, spgemm_vjp_b, (A->pattern, (const void *)a, B->pattern, C,
                                                  (const void *)gt,
                                                  (void *)((char *)dB + tb * nb * es), slot));
    }
    sla_free(slot);
    return SLA_OK;
}
