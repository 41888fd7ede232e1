/* The CSR operator (sla/backend.h): batch element b of a sla_matrix, with its host spaces. */
#include "krylov/krylov.h"

#define SLA_TEMPLATE "krylov/t_csr_operator.h"
#include "core/instantiate.h"

static sla_status csr_apply_dot(const sla_operator *op_, sla_op op, const void *x, void *y,
                                double *xy)
{
    const sla_csr_operator *c = op_->ctx;
    const sla_pattern *p = c->A->pattern;
    sla_dtype dt = c->A->dtype;
    int64_t nnz = sla_pattern_nnz(p);
    const char *vals = (const char *)c->A->values + (size_t)(c->b * nnz) * sla_dtype_size(dt);
    if (op == SLA_OP_T) {
        /* Aᵀx by the SpMV layer (a gather on the pattern's cached transpose) */
        sla_matrix Ab = sla_matrix_view(p, dt, 1, vals);
        SLA_TRY(sla_spmv(SLA_OP_T, 1.0, &Ab, x, 0, 1, 0.0, y));
        return xy ? op_->domain->dot(op_->domain, x, y, xy) : SLA_OK;
    }
    const sla_host_space *h = &c->hrange;
    int par = sla_host_par(h, sla_csr_bytes(c->range.n, nnz, sla_dtype_size(dt)));
    SLA_DISPATCH(dt, csr_spmv_dot, (h->nchunks, par, h->bounds, sla_pattern_rowptr(p),
                                    c->rowptr32, sla_pattern_colind(p), (const void *)vals, x,
                                    y, xy));
    return xy ? sla_space_reduce(&c->range, SLA_REDUCE_SUM, xy, 1) : SLA_OK;
}

static sla_status csr_apply(const sla_operator *A, sla_op op, const void *x, void *y)
{
    return csr_apply_dot(A, op, x, y, NULL);
}

/* complex dtypes: y = op(A) x (op = N, T or C) by the complex SpMV; no fused dot (CG's pᴴAp
 * is then apply + the space's dot, Re(pᴴAp)) */
static sla_status csr_apply_complex(const sla_operator *op_, sla_op op, const void *x, void *y)
{
    const sla_csr_operator *c = op_->ctx;
    const sla_pattern *p = c->A->pattern;
    sla_dtype dt = c->A->dtype;
    const char *vals = (const char *)c->A->values +
                       (size_t)(c->b * sla_pattern_nnz(p)) * sla_dtype_size(dt);
    sla_matrix Ab = sla_matrix_view(p, dt, 1, vals);
    return sla_spmv(op, 1.0, &Ab, x, 0, 1, 0.0, y);
}

void sla_csr_operator_init(sla_csr_operator *c, const sla_matrix *A, int64_t b, int nchunks,
                           int own_domain, int rowptr32)
{
    const sla_pattern *p = A->pattern;
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p);
    int64_t bounds[SLA_HOST_MAX_CHUNKS + 1];
    if (nchunks < 1) nchunks = 1;
    if (nchunks > SLA_HOST_MAX_CHUNKS) nchunks = SLA_HOST_MAX_CHUNKS;
    sla_partition_rows(sla_pattern_rowptr(p), m, nchunks, bounds);
    sla_host_space_init(&c->range, &c->hrange, m, A->dtype, nchunks, bounds);
    own_domain = own_domain || m != n;
    if (own_domain) sla_host_space_init(&c->domain, &c->hdomain, n, A->dtype, nchunks, NULL);
    c->A = A;
    c->b = b;
    c->rowptr32 = rowptr32 ? sla_pattern_rowptr32(p) : NULL;
    c->op = (sla_operator){.domain = own_domain ? &c->domain : &c->range, .range = &c->range,
                           .ctx = c, .apply = csr_apply, .apply_dot = csr_apply_dot,
                           .threading = SLA_THREADS_ANY};
    if (sla_dtype_is_complex(A->dtype)) {
        c->op.apply = csr_apply_complex;
        c->op.apply_dot = NULL;
    }
}
