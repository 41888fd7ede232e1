/* Sparse matrix–matrix product C = A·B for the Galerkin operator Ac = R (A P) (R = Pᵀ), the
 * set-up's main cost.
 *
 * Gustavson's row-wise algorithm (ACM TOMS 4 (1978) 250–269): row i of C is the combination
 * Σ_k a_ik B(k, :), accumulated in a dense per-thread array indexed by column with a marker of the
 * row that last touched each column. One pass computes pattern and values: each thread takes a
 * contiguous range of rows of about equal work (Σ_k nnz(B(k,:))), appends its rows to the range's
 * buffer, and the buffers are copied into place after a prefix sum of the row counts. Columns are
 * sorted per row (the smoother relies on it). amg_spgemm_numeric recomputes the values on the
 * stored pattern in the same order of operations, so update() reproduces create() bit for bit.
 * Rows are independent: results do not depend on the thread count. */
#include <omp.h>
#include <string.h>

#include "precond/amg_internal.h"

typedef struct row_buffer {
    int32_t *ci;
    double *v;
    int64_t len, cap;
    int failed;
} row_buffer;

static int buffer_reserve(row_buffer *b, int64_t extra)
{
    if (b->len + extra <= b->cap) return 1;
    int64_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra) cap *= 2;
    int32_t *ci = sla_malloc((size_t)cap, sizeof(int32_t), "AMG product buffer");
    double *v = ci ? sla_malloc((size_t)cap, sizeof(double), "AMG product buffer") : NULL;
    if (!ci || !v) {
        sla_free(ci);
        sla_free(v);
        b->failed = 1;
        return 0;
    }
    if (b->len) {
        memcpy(ci, b->ci, sizeof(int32_t) * (size_t)b->len);
        memcpy(v, b->v, sizeof(double) * (size_t)b->len);
    }
    sla_free(b->ci);
    sla_free(b->v);
    b->ci = ci;
    b->v = v;
    b->cap = cap;
    return 1;
}

/* Sorts the pairs (ci, v)[0..n) by column: insertion for the short rows of AMG, heap sort
 * beyond (no allocation, O(n log n)). */
static void sift(int32_t *ci, double *v, int64_t root, int64_t n)
{
    for (;;) {
        int64_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && ci[c + 1] > ci[c]) c++;
        if (ci[root] >= ci[c]) return;
        int32_t tc = ci[root]; ci[root] = ci[c]; ci[c] = tc;
        double tv = v[root]; v[root] = v[c]; v[c] = tv;
        root = c;
    }
}

static void sort_pairs(int32_t *ci, double *v, int64_t n)
{
    if (n > 48) {
        for (int64_t r = n / 2 - 1; r >= 0; r--) sift(ci, v, r, n);
        for (int64_t e = n - 1; e > 0; e--) {
            int32_t tc = ci[0]; ci[0] = ci[e]; ci[e] = tc;
            double tv = v[0]; v[0] = v[e]; v[e] = tv;
            sift(ci, v, 0, e);
        }
        return;
    }
    for (int64_t i = 1; i < n; i++) {
        int32_t c = ci[i];
        double x = v[i];
        int64_t j = i;
        for (; j > 0 && ci[j - 1] > c; j--) { ci[j] = ci[j - 1]; v[j] = v[j - 1]; }
        ci[j] = c;
        v[j] = x;
    }
}

/* Row ranges of about equal work Σ_k nnz(B(k,:)) over the entries of each row of A. */
static sla_status work_split(const amg_csr *A, const amg_csr *B, int nt, int64_t *bounds)
{
    int64_t m = A->nrows;
    int64_t *work = sla_malloc((size_t)m + 1, sizeof(int64_t), "AMG product work");
    if (!work) return SLA_ENOMEM;
    work[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t w = 1;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
            w += B->rp[A->ci[k] + 1] - B->rp[A->ci[k]];
        work[i + 1] = work[i] + w;
    }
    sla_partition_rows(work, m, nt, bounds);
    sla_free(work);
    return SLA_OK;
}

sla_status amg_spgemm(const amg_csr *A, const amg_csr *B, amg_csr *C)
{
    int64_t m = A->nrows, n = B->ncols;
    int nt = m > AMG_PARALLEL_MIN / 8 ? sla_threads() : 1;
    sla_status st = SLA_ENOMEM;
    memset(C, 0, sizeof *C);
    C->nrows = m;
    C->ncols = n;
    int64_t *bounds = sla_malloc((size_t)nt + 1, sizeof(int64_t), "AMG product ranges");
    int64_t *mark = sla_malloc((size_t)nt * (size_t)n, sizeof(int64_t), "AMG product marks");
    row_buffer *buf = sla_calloc((size_t)nt, sizeof(row_buffer), "AMG product buffers");
    C->rp = sla_malloc((size_t)m + 1, sizeof(int64_t), "AMG product row pointers");
    if (!bounds || !mark || !buf || !C->rp) goto done;
    if ((st = work_split(A, B, nt, bounds)) != SLA_OK) goto done;
    st = SLA_ENOMEM;
    C->rp[0] = 0;
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        /* ranges, not threads, own the buffers: a smaller team (nested parallelism off) still
         * covers every range */
        int64_t *mk = mark + (size_t)omp_get_thread_num() * (size_t)n;   /* slot of column j */
        #pragma omp for schedule(static, 1)
        for (int t = 0; t < nt; t++) {
            row_buffer *b = &buf[t];
            for (int64_t j = 0; j < n; j++) mk[j] = -1;
            for (int64_t i = bounds[t]; i < bounds[t + 1] && !b->failed; i++) {
                int64_t start = b->len;
                for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
                    int64_t r = A->ci[k];
                    double a = A->v[k];
                    if (!buffer_reserve(b, B->rp[r + 1] - B->rp[r])) break;
                    for (int64_t q = B->rp[r]; q < B->rp[r + 1]; q++) {
                        int32_t j = B->ci[q];
                        if (mk[j] < start) {   /* first touch in this row */
                            mk[j] = b->len;
                            b->ci[b->len] = j;
                            b->v[b->len++] = a * B->v[q];
                        } else {
                            b->v[mk[j]] += a * B->v[q];
                        }
                    }
                }
                sort_pairs(b->ci + start, b->v + start, b->len - start);
                C->rp[i + 1] = b->len - start;
            }
        }
    }
    for (int t = 0; t < nt; t++)
        if (buf[t].failed) {   /* the worker's message is thread-local: raise it here */
            st = SLA_FAIL(SLA_ENOMEM, "cannot grow the buffer of a sparse product");
            goto done;
        }
    for (int64_t i = 0; i < m; i++) C->rp[i + 1] += C->rp[i];
    C->ci = sla_malloc((size_t)C->rp[m], sizeof(int32_t), "AMG product columns");
    C->v = sla_malloc((size_t)C->rp[m], sizeof(double), "AMG product values");
    if (!C->ci || !C->v) goto done;
    #pragma omp parallel for schedule(static, 1) num_threads(nt) if (nt > 1)
    for (int t = 0; t < nt; t++) {
        int64_t off = C->rp[bounds[t]];
        memcpy(C->ci + off, buf[t].ci, sizeof(int32_t) * (size_t)buf[t].len);
        memcpy(C->v + off, buf[t].v, sizeof(double) * (size_t)buf[t].len);
    }
    st = SLA_OK;
done:
    if (st != SLA_OK) amg_csr_free(C);
    for (int t = 0; buf && t < nt; t++) {
        sla_free(buf[t].ci);
        sla_free(buf[t].v);
    }
    sla_free(buf);
    sla_free(mark);
    sla_free(bounds);
    return st;
}

sla_status amg_spgemm_numeric(const amg_csr *A, const amg_csr *B, amg_csr *C)
{
    int64_t m = A->nrows, n = B->ncols;
    int nt = m > AMG_PARALLEL_MIN / 8 ? sla_threads() : 1;
    int64_t *pos = sla_malloc((size_t)nt * (size_t)n, sizeof(int64_t), "AMG product slots");
    if (!pos) return SLA_ENOMEM;
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        /* every column met while expanding row i is in row i's pattern: no reset needed */
        int64_t *ps = pos + (size_t)omp_get_thread_num() * (size_t)n;
        #pragma omp for schedule(dynamic, 256)
        for (int64_t i = 0; i < m; i++) {
            for (int64_t s = C->rp[i]; s < C->rp[i + 1]; s++) {
                ps[C->ci[s]] = s;
                C->v[s] = 0;
            }
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
                int64_t r = A->ci[k];
                double a = A->v[k];
                for (int64_t q = B->rp[r]; q < B->rp[r + 1]; q++) C->v[ps[B->ci[q]]] += a * B->v[q];
            }
        }
    }
    sla_free(pos);
    return SLA_OK;
}
