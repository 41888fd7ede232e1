/* Memory of the AMG hierarchy level by level (sla_amg_level_memory_get, amg.h): what each level
 * owns, so that bench/bench_scale.c can print where the bytes of an AMG-PCG solve go. */
#include <string.h>

#include "precond/amg_internal.h"

/* Bytes of a CSR matrix the hierarchy owns (borrowed parts count 0). */
static int64_t csr_bytes(const amg_csr *M)
{
    if (!M->rp) return 0;
    int64_t nnz = amg_nnz(M), b = 0;
    if (!M->borrowed) b += 8 * (M->nrows + 1) + 4 * nnz;
    if (!M->borrowed_v && M->v) b += 8 * nnz * (int64_t)amg_es(M);
    return b;
}

static int64_t blocks_bytes(const amg_blocks *b)
{
    return b->bounds ? 8 * (b->n + 1) + 4 * (b->nhalo + b->nbrows) : 0;
}

int sla_amg_nlevels(const sla_amg *amg)
{
    return amg ? amg->nlevels : 0;
}

sla_status sla_amg_level_memory_get(const sla_amg *amg, int l, sla_amg_level_memory *m)
{
    SLA_CHECK_ARG(amg && m, "%s is NULL", amg ? "m" : "amg");
    SLA_CHECK_ARG(l >= 0 && l < amg->nlevels, "level %d is outside [0, %d)", l, amg->nlevels);
    const amg_level *L = &amg->lev[l];
    int64_t n = L->A.nrows, es = (int64_t)amg_es(&L->A);   /* doubles per value */
    memset(m, 0, sizeof *m);
    m->rows = n;
    m->nnz = amg_nnz(&L->A);
    m->A = csr_bytes(&L->A);
    m->P = csr_bytes(&L->P);
    m->R = 0;   /* restriction through P since the fused Galerkin product (amg_restrict.c) */
    m->vectors = 8 * es * n * ((L->b != NULL) + (L->x != NULL) + (L->r != NULL));
    m->snapshot = L->xold ? 8 * es * n : 0;
    m->diagonals = 8 * es * n * ((L->diag != NULL) + (L->dinv != NULL));
    m->aggregates = L->agg ? 4 * n : 0;
    m->lists = blocks_bytes(&L->blk) + (L->rst.shared ? L->P.ncols + 4 * L->rst.nrows : 0);
    m->transposes = csr_bytes(&L->At) + blocks_bytes(&L->blkt) + (L->atperm ? 8 * m->nnz : 0);
    m->peak_rss_bytes = L->peak_rss;
    return SLA_OK;
}
