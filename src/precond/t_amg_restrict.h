/* Template (see core/instantiate.h; the AMG hierarchy uses the double and double complex
 * instances): b_c = Pᵀ r through P (Pᴴ r when P->conj_r), in the order of amg_restrict.c. */
#if SLA_COMPLEX
#define RCOEF(P, p) ((P)->conj_r ? CONJ(p) : (p))
#else
#define RCOEF(P, p) (p)
#endif

static inline void FN(amg_restrict_apply)(const amg_csr *P, const amg_blocks *blk,
                                          const amg_restrict *rs, const ENTRY *r, ENTRY *bc)
{
    int64_t nc = P->ncols;
    const ENTRY *pv = (const ENTRY *)P->v;
    if (!rs->shared) {
        memset(bc, 0, sizeof(ENTRY) * (size_t)nc);
        for (int64_t i = 0; i < P->nrows; i++)
            for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++) bc[P->ci[s]] += RCOEF(P, pv[s]) * r[i];
        return;
    }
    const unsigned char *sh = rs->shared;
    #pragma omp parallel num_threads(sla_threads())
    {
        #pragma omp for schedule(static)
        for (int64_t c = 0; c < nc; c++) bc[c] = 0;
        #pragma omp for schedule(static, 1)
        for (int t = 0; t < blk->n; t++)
            for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
                for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++)
                    if (!sh[P->ci[s]]) bc[P->ci[s]] += RCOEF(P, pv[s]) * r[i];
    }
    for (int64_t q = 0; q < rs->nrows; q++) {
        int64_t i = rs->rows[q];
        for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++)
            if (sh[P->ci[s]]) bc[P->ci[s]] += RCOEF(P, pv[s]) * r[i];
    }
}

#undef RCOEF
