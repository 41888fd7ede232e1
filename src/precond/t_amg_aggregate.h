/* Template (see core/instantiate.h; the AMG hierarchy uses the double and double complex
 * instances): strength of connection and the greedy aggregation of one smoother block
 * (amg_aggregate.c), on moduli of the values. */
/* |a_ij| ≥ θ sqrt(|a_ii| |a_jj|) (|x|·|y| = |x·y| exactly in floating point: the real instance
 * gives the bits of fabs(a_ii a_jj)) */
static inline int FN(is_strong)(ENTRY a, ENTRY di, ENTRY dj, double theta)
{
    return a != 0 && ABS(a) >= theta * sqrt(ABS(di) * ABS(dj));
}

/* Aggregates rows [lo, hi) using only in-block strong connections; aggregate ids are local
 * (0, 1, ...) and their number is returned. phase1[i] = 1 marks phase-1 members. */
static inline int64_t FN(aggregate_block)(const amg_csr *A, const ENTRY *diag, double theta, int64_t lo,
                                          int64_t hi, int32_t *agg, unsigned char *phase1)
{
    const int64_t *rp = A->rp;
    const int32_t *ci = A->ci;
    const ENTRY *v = (const ENTRY *)A->v;
    int64_t count = 0;
    for (int64_t i = lo; i < hi; i++) { agg[i] = -1; phase1[i - lo] = 0; }

    /* Phase 1: roots whose whole strong neighbourhood is free. */
    for (int64_t i = lo; i < hi; i++) {
        if (agg[i] >= 0) continue;
        int has_strong = 0, free_nbhd = 1;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j == i || j < lo || j >= hi || !FN(is_strong)(v[k], diag[i], diag[j], theta)) continue;
            has_strong = 1;
            if (agg[j] >= 0) { free_nbhd = 0; break; }
        }
        if (!has_strong || !free_nbhd) continue;
        int32_t a = (int32_t)count++;
        agg[i] = a;
        phase1[i - lo] = 1;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j == i || j < lo || j >= hi || !FN(is_strong)(v[k], diag[i], diag[j], theta)) continue;
            agg[j] = a;
            phase1[j - lo] = 1;
        }
    }
    /* Phase 2: every free node with a strong in-block neighbour has one in a phase-1 aggregate
     * (else phase 1 would have made it a root); join the most strongly connected one. */
    for (int64_t i = lo; i < hi; i++) {
        if (agg[i] >= 0) continue;
        double best = -1;
        int32_t a = -1;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j == i || j < lo || j >= hi || !phase1[j - lo]) continue;
            if (!FN(is_strong)(v[k], diag[i], diag[j], theta)) continue;
            if (ABS(v[k]) > best) { best = ABS(v[k]); a = agg[j]; }
        }
        agg[i] = a;   /* still −1 if none: phase 3 */
    }
    /* Phase 3: a node strongly connected only across the block boundary becomes a singleton
     * aggregate, so that the coarse space still represents it; a node without any strong
     * connection (e.g. a Dirichlet row) stays out of every aggregate: the smoother solves it. */
    for (int64_t i = lo; i < hi; i++) {
        if (agg[i] >= 0) continue;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j != i && FN(is_strong)(v[k], diag[i], diag[j], theta)) {
                agg[i] = (int32_t)count++;
                break;
            }
        }
    }
    return count;
}

