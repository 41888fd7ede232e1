/* Template (see core/instantiate.h; the AMG hierarchy uses the double and double complex
 * instances): the values of Ac = Pᵀ A P (Pᴴ A P when P->conj_r) on Ac's stored pattern, in the
 * summation order described in amg_galerkin.c. w: the first thread's work arrays (each thread
 * takes its own slice of m, and maxlen for the columns). */
#if SLA_COMPLEX
#define RCOEF(P, p) ((P)->conj_r ? CONJ(p) : (p))
#else
#define RCOEF(P, p) (p)
#endif

/* P(i, J): the entry of row i of P in column J (present: i is in column J's list). */
static inline ENTRY FN(p_entry)(const amg_csr *P, int64_t i, int32_t J)
{
    int64_t s = P->rp[i];
    while (P->ci[s] != J) s++;
    return ((const ENTRY *)P->v)[s];
}

/* Ac(J, :) += pij · (A P)(i, :); st: this (J, i) pair's stamp. */
static inline void FN(add_ap_row)(const amg_csr *A, const amg_csr *P, int64_t i, ENTRY pij,
                                  int64_t st, const galerkin_work *w, ENTRY *cv)
{
    /* (A P)(i, c) = Σ_k a_ik P(k, c) over k in A's row order: 0 + x and x alike start a sum
     * (a −0 start differs only in the sign of a zero, which vanishes when added to Ac's +0) */
    const ENTRY *av = (const ENTRY *)A->v, *pv = (const ENTRY *)P->v;
    ENTRY *acc = (ENTRY *)w->acc;
    int64_t len = 0;
    for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
        int64_t r = A->ci[k];
        ENTRY a = av[k];
        for (int64_t q = P->rp[r]; q < P->rp[r + 1]; q++) {
            int32_t c = P->ci[q];
            if (w->stamp[c] != st) {
                w->stamp[c] = st;
                acc[c] = a * pv[q];
                w->cols[len++] = c;
            } else {
                acc[c] += a * pv[q];
            }
        }
    }
    for (int64_t t = 0; t < len; t++) cv[w->slot[w->cols[t]]] += pij * acc[w->cols[t]];
}

static inline void FN(galerkin_values)(const amg_csr *A, const amg_csr *P, const amg_csr *PT,
                                       amg_csr *C, const galerkin_work *w0, int64_t maxlen, int nt)
{
    int64_t m = P->ncols;
    #pragma omp parallel num_threads(nt) if (nt > 1)
    {
        size_t off = (size_t)omp_get_thread_num() * (size_t)m;
        galerkin_work w = {w0->slot + off, (double *)((ENTRY *)w0->acc + off), w0->stamp + off,
                           w0->cols + (size_t)omp_get_thread_num() * (size_t)maxlen};
        for (int64_t c = 0; c < m; c++) w.stamp[c] = -1;
        /* stamps only grow: one per (J, i) pair met by this thread */
        int64_t st = 0;
        ENTRY *v = (ENTRY *)C->v;
        #pragma omp for schedule(dynamic, 256)
        for (int64_t J = 0; J < m; J++) {
            ENTRY *cv = v + C->rp[J];
            for (int64_t s = C->rp[J]; s < C->rp[J + 1]; s++) {
                w.slot[C->ci[s]] = (int32_t)(s - C->rp[J]);
                v[s] = 0;
            }
            for (int64_t t = PT->rp[J]; t < PT->rp[J + 1]; t++, st++) {
                int64_t i = PT->ci[t];
                FN(add_ap_row)(A, P, i, RCOEF(P, FN(p_entry)(P, i, (int32_t)J)), st, &w, cv);
            }
        }
    }
}

#undef RCOEF
