/* The matrix-free operator of the Krylov layer: the user's sla_apply_fn. */
#include "krylov/operator.h"

static sla_status fn_apply(const sla_kop *K, sla_op op, const void *x, void *y)
{
    const sla_kop_fn_ctx *c = K->actx;
    int rc = c->apply(c->ctx, op, c->b, x, y);
    if (rc != 0)
        return SLA_FAIL(SLA_ECALLBACK, "the operator callback returned %d (op = %s, batch "
                        "element %lld)", rc, op == SLA_OP_N ? "N" : "T", (long long)c->b);
    return SLA_OK;
}

void sla_kop_fn_init(sla_kop *K, sla_kop_fn_ctx *ctx, int64_t n, sla_dtype dtype,
                     sla_apply_fn apply, void *apply_ctx, int64_t b, int nchunks)
{
    sla_kvec_init(K, n, dtype, nchunks, NULL);
    ctx->apply = apply;
    ctx->ctx = apply_ctx;
    ctx->b = b;
    K->actx = ctx;
    K->apply = fn_apply;
    K->apply_dot = sla_kop_generic_apply_dot;
}
