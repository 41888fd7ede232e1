/* Sparse matrix–matrix product C = A·B for the Galerkin operator Ac = R (A P) (R = Pᵀ), the
 * set-up's main cost.
 *
 * Gustavson's row-wise algorithm (ACM TOMS 4 (1978) 250–269): row i of C is the combination
 * Σ_k a_ik B(k, :), accumulated in a dense per-thread array indexed by column with a marker of the
 * row that last touched each column. Two symbolic passes size C exactly and then write each
 * row's columns in place (sorted: the smoother relies on it); amg_spgemm_numeric then computes
 * the values on that pattern, the same call update() makes, so update() reproduces create() bit
 * for bit. No per-thread output buffers: C is the only copy of the product (buffers grown by
 * doubling and then copied into C held up to three times A·P, the largest array of the AMG set-up,
 * at the set-up's memory peak). Rows are independent: results do not depend on the thread count. */
#include <omp.h>
#include <string.h>

#include "precond/amg_internal.h"

/* Sorts ci[0..n) ascending: insertion for the short rows of AMG, heap sort beyond (no
 * allocation, O(n log n)). */
static void sift(int32_t *ci, int64_t root, int64_t n)
{
    for (;;) {
        int64_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && ci[c + 1] > ci[c]) c++;
        if (ci[root] >= ci[c]) return;
        int32_t t = ci[root]; ci[root] = ci[c]; ci[c] = t;
        root = c;
    }
}

static void sort_columns(int32_t *ci, int64_t n)
{
    if (n > 48) {
        for (int64_t r = n / 2 - 1; r >= 0; r--) sift(ci, r, n);
        for (int64_t e = n - 1; e > 0; e--) {
            int32_t t = ci[0]; ci[0] = ci[e]; ci[e] = t;
            sift(ci, 0, e);
        }
        return;
    }
    for (int64_t i = 1; i < n; i++) {
        int32_t c = ci[i];
        int64_t j = i;
        for (; j > 0 && ci[j - 1] > c; j--) ci[j] = ci[j - 1];
        ci[j] = c;
    }
}

/* The columns of row i of A·B: counted (out = NULL) or written to out; mk[j] = last row that
 * met column j. Returns the count. */
static int64_t row_columns(const amg_csr *A, const amg_csr *B, int64_t i, int64_t *mk,
                           int32_t *out)
{
    int64_t len = 0;
    for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
        int64_t r = A->ci[k];
        for (int64_t q = B->rp[r]; q < B->rp[r + 1]; q++) {
            int32_t j = B->ci[q];
            if (mk[j] != i) {
                mk[j] = i;
                if (out) out[len] = j;
                len++;
            }
        }
    }
    return len;
}

sla_status amg_spgemm(const amg_csr *A, const amg_csr *B, amg_csr *C)
{
    int64_t m = A->nrows, n = B->ncols;
    int nt = m > AMG_PARALLEL_MIN / 8 ? sla_threads() : 1;
    memset(C, 0, sizeof *C);
    C->nrows = m;
    C->ncols = n;
    int64_t *mark = sla_malloc((size_t)nt * (size_t)n, sizeof(int64_t), "AMG product marks");
    C->rp = sla_malloc((size_t)m + 1, sizeof(int64_t), "AMG product row pointers");
    if (!mark || !C->rp) goto fail;
    C->rp[0] = 0;
    for (int pass = 0; pass < 2; pass++) {
        #pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int64_t *mk = mark + (size_t)omp_get_thread_num() * (size_t)n;
            for (int64_t j = 0; j < n; j++) mk[j] = -1;
            #pragma omp for schedule(dynamic, 256)
            for (int64_t i = 0; i < m; i++) {
                if (pass == 0) {
                    C->rp[i + 1] = row_columns(A, B, i, mk, NULL);
                } else {
                    int32_t *out = C->ci + C->rp[i];
                    row_columns(A, B, i, mk, out);
                    sort_columns(out, C->rp[i + 1] - C->rp[i]);
                }
            }
        }
        if (pass == 0) {
            for (int64_t i = 0; i < m; i++) C->rp[i + 1] += C->rp[i];
            C->ci = sla_malloc((size_t)C->rp[m], sizeof(int32_t), "AMG product columns");
            C->v = sla_malloc((size_t)C->rp[m], sizeof(double), "AMG product values");
            if (C->rp[m] > 0 && (!C->ci || !C->v)) goto fail;
        }
    }
    sla_free(mark);
    mark = NULL;
    if (amg_spgemm_numeric(A, B, C) == SLA_OK) return SLA_OK;
fail:
    sla_free(mark);
    amg_csr_free(C);
    return SLA_ENOMEM;
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
