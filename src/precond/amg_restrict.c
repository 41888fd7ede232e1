/* Restriction of the V-cycle, b_c = Pᵀ r, through P itself (no stored R = Pᵀ: ~30 bytes per fine
 * unknown on 2D 5-point Poisson).
 *
 * A transposed product scatters: row i of P adds P(i, c) r_i to b_c. Each coarse entry is summed
 * over i ascending from 0, as the former row of R did (R's rows listed i ascending), so the result
 * is that product's bit for bit. In parallel, the fine rows are split by the level's smoother
 * blocks (fixed at create): a coarse column fed by the rows of one block only is summed by that
 * block's thread; one fed by several (shared: near the block boundaries, a few per thousand) is
 * summed afterwards by one thread over the rows that feed any shared column, ascending. So the
 * order, and the bits, do not depend on the thread count. The entries fed by a block's boundary
 * rows are shared too, so that the Gauss–Seidel sweep can restrict each residual as it forms it
 * (amg_gs_forward_restrict, amg_smooth.c) without storing r. Complex hierarchies restrict by
 * Pᴴ (P->conj_r, Hermitian A) or Pᵀ (complex symmetric A): t_amg_restrict.h. */
#include <string.h>

#include "precond/amg_internal.h"

void amg_restrict_free(amg_restrict *rs)
{
    sla_free(rs->shared);
    sla_free(rs->rows);
    sla_free(rs->rv);
    memset(rs, 0, sizeof *rs);
}

sla_status amg_restrict_build(const amg_csr *P, const amg_blocks *blk, amg_restrict *rs)
{
    amg_restrict_free(rs);
    if (blk->n <= 1) return SLA_OK;          /* one block: a serial scatter, nothing shared */
    int64_t nc = P->ncols, nrows = 0;
    int32_t *owner = sla_malloc((size_t)nc, sizeof(int32_t), "AMG restriction owners");
    rs->shared = sla_calloc((size_t)nc, 1, "AMG restriction shared columns");
    if (!owner || !rs->shared) goto fail;
    for (int64_t c = 0; c < nc; c++) owner[c] = -1;
    for (int t = 0; t < blk->n; t++)
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
            for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++) {
                int32_t c = P->ci[s];
                if (owner[c] < 0) owner[c] = t;
                else if (owner[c] != t) rs->shared[c] = 1;
            }
    /* the fused residual (amg_gs_forward_restrict) forms the residuals of the rows that read
     * another block after all others: what they feed is summed in the ordered pass */
    for (int64_t k = 0; k < blk->nbrows; k++) {
        int64_t i = blk->brows[k];
        for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++) rs->shared[P->ci[s]] = 1;
    }
    sla_free(owner);
    owner = NULL;
    for (int pass = 0; pass < 2; pass++) {
        nrows = 0;
        for (int64_t i = 0; i < P->nrows; i++) {
            int any = 0;
            for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++) any |= rs->shared[P->ci[s]];
            if (any && pass) rs->rows[nrows] = (int32_t)i;
            nrows += any;
        }
        if (pass) break;
        rs->rows = sla_malloc((size_t)nrows, sizeof(int32_t), "AMG restriction rows");
        rs->rv = sla_malloc((size_t)nrows * amg_es(P), sizeof(double), "AMG restriction residuals");
        if (!rs->rows || !rs->rv) goto fail;
    }
    rs->nrows = nrows;
    return SLA_OK;
fail:
    sla_free(owner);
    amg_restrict_free(rs);
    return SLA_ENOMEM;
}

#define SLA_TEMPLATE "precond/t_amg_restrict.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

void amg_restrict_apply(const amg_csr *P, const amg_blocks *blk, const amg_restrict *rs,
                        const double *r, double *bc)
{
    AMG_DISPATCH(P, amg_restrict_apply, (P, blk, rs, (const void *)r, (void *)bc));
}
