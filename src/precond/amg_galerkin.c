/* Galerkin coarse operator Ac = Pᵀ A P of the AMG set-up, formed without A·P or R = Pᵀ.
 *
 * Row J of Ac is Σ_i P(i, J) (A P)(i, :) over the fine rows i of column J of P, ascending; row i of
 * A P is Σ_k a_ik P(k, :) (Gustavson's row-wise product, ACM TOMS 4 (1978) 250–269). Each row of
 * A P is formed on the fly in a per-thread dense accumulator, once for every coarse row it feeds
 * (~2.5 times on 2D Poisson), and never stored: A P was the largest array of the set-up (~60
 * bytes per fine unknown on 2D 5-point Poisson) and R another ~30. Every entry is summed in the
 * order of the former R·(A·P) product (A P entries over k in A's row order, then Ac entries over i
 * ascending), so the operators, and the iterations, are those of that product bit for bit.
 * The column lists of P's columns (PT: Pᵀ's pattern, no values, ~11 bytes per fine unknown) are
 * built for the product and freed after it. Two symbolic passes size Ac exactly and write each
 * row's columns in place, sorted (the smoother relies on it); amg_galerkin_numeric computes the
 * values on that pattern, the same call update() makes, so update() reproduces create() bit for
 * bit. Coarse rows are independent: results do not depend on the thread count.
 * Complex hierarchies: Ac = Pᴴ A P (P->conj_r, Hermitian A: Ac Hermitian) or Pᵀ A P (complex
 * symmetric A: Ac complex symmetric), the value kernels in t_amg_galerkin.h. */
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

/* Per-thread work of the symbolic product: mk[c] = last row that met coarse column c; bit r of
 * seen: fine row r already listed in rows (a bit map: 1/8 byte per fine row and thread) (the fine rows of A within reach of column J of P, each
 * walked once: 5-point Poisson meets each about 2.5 times). */
typedef struct symbolic_work {
    int64_t *mk;
    uint64_t *seen;
    int32_t *rows;
} symbolic_work;

/* The columns of row J of Pᵀ A P: counted (out = NULL) or written to out. Returns the count. */
static int64_t row_columns(const amg_csr *A, const amg_csr *P, const amg_csr *PT, int64_t J,
                           const symbolic_work *w, int32_t *out)
{
    int64_t len = 0, nr = 0;
    for (int64_t t = PT->rp[J]; t < PT->rp[J + 1]; t++) {
        int64_t i = PT->ci[t];
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
            int32_t r = A->ci[k];
            uint64_t bit = (uint64_t)1 << (r & 63);
            if (!(w->seen[r >> 6] & bit)) {
                w->seen[r >> 6] |= bit;
                w->rows[nr++] = r;
            }
        }
    }
    for (int64_t t = 0; t < nr; t++) {
        int32_t r = w->rows[t];
        w->seen[r >> 6] &= ~((uint64_t)1 << (r & 63));
        for (int64_t q = P->rp[r]; q < P->rp[r + 1]; q++) {
            int32_t c = P->ci[q];
            if (w->mk[c] != J) {
                w->mk[c] = J;
                if (out) out[len] = c;
                len++;
            }
        }
    }
    return len;
}

/* The most fine rows row_columns can list: max_J Σ_{i in column J of P} |A(i, :)|. */
static int64_t reach_bound(const amg_csr *A, const amg_csr *PT)
{
    int64_t best = 0;
    for (int64_t J = 0; J < PT->nrows; J++) {
        int64_t len = 0;
        for (int64_t t = PT->rp[J]; t < PT->rp[J + 1]; t++)
            len += A->rp[PT->ci[t] + 1] - A->rp[PT->ci[t]];
        if (len > best) best = len;
    }
    return best;
}

static int threads_for(int64_t m)
{
    return m > AMG_PARALLEL_MIN / 8 ? sla_threads() : 1;
}

sla_status amg_galerkin(const amg_csr *A, const amg_csr *P, const amg_csr *PT, amg_csr *C)
{
    int64_t m = P->ncols, nw = (A->nrows + 63) / 64, nreach = reach_bound(A, PT);
    int nt = threads_for(m);
    memset(C, 0, sizeof *C);
    C->nrows = C->ncols = m;
    C->cplx = A->cplx;
    C->conj_r = A->conj_r;
    int64_t *mark = sla_malloc((size_t)nt * (size_t)m, sizeof(int64_t), "AMG product marks");
    uint64_t *seen = sla_calloc((size_t)nt * (size_t)nw, sizeof(uint64_t), "AMG product fine marks");
    int32_t *rows = sla_malloc((size_t)nt * (size_t)nreach, sizeof(int32_t), "AMG product rows");
    C->rp = sla_malloc((size_t)m + 1, sizeof(int64_t), "AMG product row pointers");
    if (!mark || !seen || !rows || !C->rp) goto fail;
    C->rp[0] = 0;
    for (int pass = 0; pass < 2; pass++) {
        #pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int me = omp_get_thread_num();
            symbolic_work w = {mark + (size_t)me * (size_t)m, seen + (size_t)me * (size_t)nw,
                               rows + (size_t)me * (size_t)nreach};
            for (int64_t j = 0; j < m; j++) w.mk[j] = -1;
            #pragma omp for schedule(dynamic, 256)
            for (int64_t J = 0; J < m; J++) {
                if (pass == 0) {
                    C->rp[J + 1] = row_columns(A, P, PT, J, &w, NULL);
                } else {
                    int32_t *out = C->ci + C->rp[J];
                    row_columns(A, P, PT, J, &w, out);
                    sort_columns(out, C->rp[J + 1] - C->rp[J]);
                }
            }
        }
        if (pass == 0) {
            for (int64_t J = 0; J < m; J++) C->rp[J + 1] += C->rp[J];
            C->ci = sla_malloc((size_t)C->rp[m], sizeof(int32_t), "AMG product columns");
            C->v = sla_malloc((size_t)C->rp[m] * amg_es(A), sizeof(double), "AMG product values");
            if (C->rp[m] > 0 && (!C->ci || !C->v)) goto fail;
        }
    }
    sla_free(mark);
    sla_free(seen);
    sla_free(rows);
    mark = NULL;
    seen = NULL;
    rows = NULL;
    if (amg_galerkin_numeric(A, P, PT, C) == SLA_OK) return SLA_OK;
fail:
    sla_free(mark);
    sla_free(seen);
    sla_free(rows);
    amg_csr_free(C);
    return SLA_ENOMEM;
}

/* The longest row of A P can be: max_i Σ_k |P(k, :)| over row i of A. */
static int64_t ap_row_bound(const amg_csr *A, const amg_csr *P)
{
    int64_t best = 0;
    for (int64_t i = 0; i < A->nrows; i++) {
        int64_t len = 0;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
            len += P->rp[A->ci[k] + 1] - P->rp[A->ci[k]];
        if (len > best) best = len;
    }
    return best;
}

/* Per-thread work of the numeric product: slot of each column in the current row of Ac (offset
 * from the row start), the row of A P being formed, the stamp of its last writer, and its
 * columns (at most maxlen). */
typedef struct galerkin_work {
    int32_t *slot;
    double *acc;                 /* ENTRY values of the hierarchy's scalar type */
    int64_t *stamp;
    int32_t *cols;
} galerkin_work;

#define SLA_TEMPLATE "precond/t_amg_galerkin.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

sla_status amg_galerkin_numeric(const amg_csr *A, const amg_csr *P, const amg_csr *PT,
                                amg_csr *C)
{
    int64_t m = P->ncols;
    int nt = threads_for(m);
    int32_t *slot = sla_malloc((size_t)nt * (size_t)m, sizeof(int32_t), "AMG product slots");
    double *acc = sla_malloc((size_t)nt * (size_t)m * amg_es(A), sizeof(double), "AMG product row");
    int64_t *stamp = sla_malloc((size_t)nt * (size_t)m, sizeof(int64_t), "AMG product stamps");
    int64_t maxlen = ap_row_bound(A, P);
    int32_t *cols = sla_malloc((size_t)nt * (size_t)maxlen, sizeof(int32_t), "AMG product row columns");
    if (!slot || !acc || !stamp || !cols) {
        sla_free(slot);
        sla_free(acc);
        sla_free(stamp);
        sla_free(cols);
        return SLA_ENOMEM;
    }
    galerkin_work w = {slot, acc, stamp, cols};
    AMG_DISPATCH(A, galerkin_values, (A, P, PT, C, &w, maxlen, nt));
    sla_free(slot);
    sla_free(acc);
    sla_free(stamp);
    sla_free(cols);
    return SLA_OK;
}
