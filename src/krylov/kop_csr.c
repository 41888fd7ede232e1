/* The CSR operator of the Krylov layer: batch element b of a sla_matrix. */
#include "krylov/operator.h"

#define SLA_TEMPLATE "krylov/t_kop_csr.h"
#include "core/instantiate.h"

static sla_status csr_apply_dot(const sla_kop *K, sla_op op, const void *x, void *y, double *xy)
{
    const sla_kop_csr_ctx *c = K->actx;
    const sla_pattern *p = c->A->pattern;
    int64_t nnz = sla_pattern_nnz(p);
    const char *vals = (const char *)c->A->values + (size_t)(c->b * nnz) * sla_dtype_size(K->dtype);
    if (op == SLA_OP_T) {
        /* Aᵀx by the SpMV layer (a gather on the pattern's cached transpose) */
        sla_matrix Ab = sla_matrix_view(p, K->dtype, 1, vals);
        SLA_TRY(sla_spmv(SLA_OP_T, 1.0, &Ab, x, 0, 1, 0.0, y));
        if (xy) *xy = K->dot(K, x, y);
        return SLA_OK;
    }
    int par = sla_kpar(K, sla_kcsr_bytes(K->n, nnz, sla_dtype_size(K->dtype)));
    SLA_DISPATCH(K->dtype, kop_csr_spmv_dot, (K->nchunks, par, K->bounds, sla_pattern_rowptr(p),
                                              sla_pattern_colind(p), (const void *)vals, x, y, xy));
    return SLA_OK;
}

static sla_status csr_apply(const sla_kop *K, sla_op op, const void *x, void *y)
{
    return csr_apply_dot(K, op, x, y, NULL);
}

void sla_kop_csr_init(sla_kop *K, sla_kop_csr_ctx *ctx, const sla_matrix *A, int64_t b,
                      int nchunks)
{
    const sla_pattern *p = A->pattern;
    int64_t n = sla_pattern_nrows(p), bounds[SLA_KMAX_CHUNKS + 1];
    if (nchunks < 1) nchunks = 1;
    if (nchunks > SLA_KMAX_CHUNKS) nchunks = SLA_KMAX_CHUNKS;
    sla_partition_rows(sla_pattern_rowptr(p), n, nchunks, bounds);
    sla_kvec_init(K, n, A->dtype, nchunks, bounds);
    ctx->A = A;
    ctx->b = b;
    K->actx = ctx;
    K->apply = csr_apply;
    K->apply_dot = csr_apply_dot;
}
