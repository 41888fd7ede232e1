/* The matrix-free operator (sla/backend.h): the user's sla_apply_fn on host vectors. */
#include "krylov/krylov.h"

static sla_status fn_apply(const sla_operator *A, sla_op op, const void *x, void *y)
{
    const sla_fn_operator *f = A->ctx;
    int rc = f->fn(f->fn_ctx, op, f->b, x, y);
    if (rc != 0)
        return SLA_FAIL(SLA_ECALLBACK, "the operator callback returned %d (op = %s, batch "
                        "element %lld)", rc, op == SLA_OP_N ? "N" : "T", (long long)f->b);
    return SLA_OK;
}

void sla_fn_operator_init(sla_fn_operator *f, int64_t n, sla_dtype dtype, sla_apply_fn fn,
                          void *fn_ctx, int64_t b, int nchunks)
{
    sla_host_space_init(&f->space, &f->host, n, dtype, nchunks, NULL);
    f->fn = fn;
    f->fn_ctx = fn_ctx;
    f->b = b;
    f->op = (sla_operator){.domain = &f->space, .range = &f->space, .ctx = f,
                           .apply = fn_apply, .threading = SLA_THREADS_CALLER};
}
