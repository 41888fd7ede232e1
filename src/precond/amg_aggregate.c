/* Strength of connection and greedy aggregation of smoothed-aggregation AMG.
 *
 * Method: Vaněk, Mandel & Brezina, "Algebraic multigrid by smoothed aggregation for second and
 * fourth order elliptic problems", Computing 56 (1996), 179–196, section 4: j is strongly
 * connected to i if |a_ij| ≥ θ·sqrt(|a_ii a_jj|); phase 1 makes an aggregate of every node whose
 * strong neighbourhood is still free, phase 2 adds each remaining node to the aggregate it is most
 * strongly connected to. Aggregation runs independently in each smoother block (the "uncoupled"
 * aggregation of ML, Tuminaro & Tong 2000), so it is parallel and deterministic for a given block
 * count. */
#include <math.h>

#include "precond/amg_internal.h"

static inline int is_strong(double a, double di, double dj, double theta)
{
    return a != 0 && fabs(a) >= theta * sqrt(fabs(di * dj));
}

/* Aggregates rows [lo, hi) using only in-block strong connections; aggregate ids are local
 * (0, 1, ...) and their number is returned. phase1[i] = 1 marks phase-1 members. */
static int64_t aggregate_block(const amg_csr *A, const double *diag, double theta, int64_t lo,
                               int64_t hi, int32_t *agg, unsigned char *phase1)
{
    const int64_t *rp = A->rp;
    const int32_t *ci = A->ci;
    const double *v = A->v;
    int64_t count = 0;
    for (int64_t i = lo; i < hi; i++) { agg[i] = -1; phase1[i - lo] = 0; }

    /* Phase 1: roots whose whole strong neighbourhood is free. */
    for (int64_t i = lo; i < hi; i++) {
        if (agg[i] >= 0) continue;
        int has_strong = 0, free_nbhd = 1;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j == i || j < lo || j >= hi || !is_strong(v[k], diag[i], diag[j], theta)) continue;
            has_strong = 1;
            if (agg[j] >= 0) { free_nbhd = 0; break; }
        }
        if (!has_strong || !free_nbhd) continue;
        int32_t a = (int32_t)count++;
        agg[i] = a;
        phase1[i - lo] = 1;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j == i || j < lo || j >= hi || !is_strong(v[k], diag[i], diag[j], theta)) continue;
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
            if (!is_strong(v[k], diag[i], diag[j], theta)) continue;
            if (fabs(v[k]) > best) { best = fabs(v[k]); a = agg[j]; }
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
            if (j != i && is_strong(v[k], diag[i], diag[j], theta)) {
                agg[i] = (int32_t)count++;
                break;
            }
        }
    }
    return count;
}

sla_status amg_aggregate(const amg_csr *A, const double *diag, double theta,
                         const amg_blocks *blk, int32_t *agg, int64_t *nagg)
{
    int nb = blk->n;
    int64_t n = A->nrows;
    int64_t *count = sla_calloc((size_t)nb + 1, sizeof(int64_t), "AMG aggregate counts");
    unsigned char *phase1 = sla_malloc((size_t)n, 1, "AMG aggregation flags");
    if (!count || !phase1) {
        sla_free(count);
        sla_free(phase1);
        return SLA_ENOMEM;
    }
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (nb > 1)
    for (int t = 0; t < nb; t++) {
        int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1];
        count[t + 1] = aggregate_block(A, diag, theta, lo, hi, agg, phase1 + lo);
    }
    for (int t = 0; t < nb; t++) count[t + 1] += count[t];
    if (count[nb] > INT32_MAX) {
        sla_free(count);
        sla_free(phase1);
        return SLA_FAIL(SLA_EINDEX, "%lld aggregates do not fit in int32", (long long)count[nb]);
    }
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (nb > 1)
    for (int t = 0; t < nb; t++)
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
            if (agg[i] >= 0) agg[i] += (int32_t)count[t];
    *nagg = count[nb];
    sla_free(count);
    sla_free(phase1);
    return SLA_OK;
}
