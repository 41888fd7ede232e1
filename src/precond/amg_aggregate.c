/* Strength of connection and greedy aggregation of smoothed-aggregation AMG.
 *
 * Method: Vaněk, Mandel & Brezina, "Algebraic multigrid by smoothed aggregation for second and
 * fourth order elliptic problems", Computing 56 (1996), 179–196, section 4: j is strongly
 * connected to i if |a_ij| ≥ θ·sqrt(|a_ii a_jj|); phase 1 makes an aggregate of every node whose
 * strong neighbourhood is still free, phase 2 adds each remaining node to the aggregate it is most
 * strongly connected to. Aggregation runs independently in each smoother block (the "uncoupled"
 * aggregation of ML, Tuminaro & Tong 2000), so it is parallel and deterministic for a given block
 * count. Complex A: the same rule on moduli, |a_ij| ≥ θ·sqrt(|a_ii|·|a_jj|) (t_amg_aggregate.h). */
#include <math.h>

#include "precond/amg_internal.h"

#define SLA_TEMPLATE "precond/t_amg_aggregate.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

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
        count[t + 1] = AMG_DISPATCH(A, aggregate_block, (A, (const void *)diag, theta, lo, hi,
                                                         agg, phase1 + lo));
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
