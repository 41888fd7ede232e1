/* Template (see core/instantiate.h; the AMG hierarchy uses the double and double complex
 * instances): the values of P = (I − ω D⁻¹ A) P_tent on its stored pattern (amg_prolong.c);
 * pos: [threads][ncols] slot scratch. */
static inline void FN(amg_prolong_numeric)(const amg_csr *A, const ENTRY *diag, const int32_t *agg,
                                           double omega, amg_csr *P, int64_t *pos)
{
    int64_t n = A->nrows, nagg = P->ncols;
    const ENTRY *av = (const ENTRY *)A->v;
    ENTRY *pv = (ENTRY *)P->v;
    #pragma omp parallel num_threads(sla_threads()) if (n > AMG_PARALLEL_MIN)
    {
        /* pos[a] = slot of column a in the current row: every aggregate met in row i of A is in
         * row i of P, so stale entries of earlier rows are never read. */
        int64_t *ps = pos + (size_t)omp_get_thread_num() * (size_t)nagg;
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++) {
                ps[P->ci[s]] = s;
                pv[s] = 0;
            }
            if (agg[i] >= 0) pv[ps[agg[i]]] = 1;
            ENTRY w = omega / diag[i];
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
                int32_t a = agg[A->ci[k]];
                if (a >= 0) pv[ps[a]] -= w * av[k];
            }
        }
    }
}
