/* SpGEMM kernels for one dtype (instantiated by core/instantiate.h: REAL, FN). slot[] is a
 * per-thread [ncols(C)] array, −1 outside the current row, that maps a column of C's row i
 * to its slot. */

/* c[row i] = Σ_k a_ik · B(k, :), k in A's row order (a fixed order of operations); returns
 * the first row whose product has a column outside C's row, or −1 */
static int64_t FN(spgemm_rows)(const sla_pattern *A, const REAL *a, const sla_pattern *B,
                            const REAL *b, const sla_pattern *C, REAL *c, int64_t i0,
                            int64_t i1, int64_t *slot)
{
    for (int64_t i = i0; i < i1; i++) {
        for (int64_t s = C->rowptr[i]; s < C->rowptr[i + 1]; s++) {
            slot[C->colind[s]] = s;
            c[s] = 0;
        }
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int64_t k = A->colind[p];
            REAL aik = a[p];
            for (int64_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++) {
                int64_t s = slot[B->colind[q]];
                if (s < 0) {
                    for (int64_t t = C->rowptr[i]; t < C->rowptr[i + 1]; t++) slot[C->colind[t]] = -1;
                    return i;
                }
                c[s] += aik * b[q];
            }
        }
        for (int64_t s = C->rowptr[i]; s < C->rowptr[i + 1]; s++) slot[C->colind[s]] = -1;
    }
    return -1;
}

/* da_ik += Σ_j g_ij b_kj for rows [i0, i1) of A (da not cleared here) */
static void FN(spgemm_vjp_a)(const sla_pattern *A, const sla_pattern *B, const REAL *b,
                             const sla_pattern *C, const REAL *g, REAL *da, int64_t i0,
                             int64_t i1, int64_t *slot)
{
    for (int64_t i = i0; i < i1; i++) {
        for (int64_t s = C->rowptr[i]; s < C->rowptr[i + 1]; s++) slot[C->colind[s]] = s;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int64_t k = A->colind[p];
            REAL acc = 0;
            for (int64_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++)
                acc += g[slot[B->colind[q]]] * b[q];
            da[p] += acc;
        }
        for (int64_t s = C->rowptr[i]; s < C->rowptr[i + 1]; s++) slot[C->colind[s]] = -1;
    }
}

/* db_kj += Σ_i a_ik g_ij over every row i (serial: rows of A scatter into rows of B) */
static void FN(spgemm_vjp_b)(const sla_pattern *A, const REAL *a, const sla_pattern *B,
                             const sla_pattern *C, const REAL *g, REAL *db, int64_t *slot)
{
    for (int64_t i = 0; i < A->nrows; i++) {
        for (int64_t s = C->rowptr[i]; s < C->rowptr[i + 1]; s++) slot[C->colind[s]] = s;
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int64_t k = A->colind[p];
            REAL aik = a[p];
            for (int64_t q = B->rowptr[k]; q < B->rowptr[k + 1]; q++)
                db[q] += aik * g[slot[B->colind[q]]];
        }
        for (int64_t s = C->rowptr[i]; s < C->rowptr[i + 1]; s++) slot[C->colind[s]] = -1;
    }
}
