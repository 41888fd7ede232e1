/* The user's preconditioner (options.user_precond), e.g. a learned one: z = M⁻¹ r or M⁻ᵀ r
 * through the callback, per batch element. It has no set-up; refactor leaves it to the user. */
#include <stdio.h>

#include "precond/precond.h"

static sla_status user_setup(sla_pc *pc, const sla_matrix *A)
{
    (void)A;
    snprintf(pc->desc, sizeof pc->desc, "user");
    return SLA_OK;
}

static sla_status user_update(sla_pc *pc, const sla_matrix *A)
{
    (void)pc;
    (void)A;
    return SLA_OK;
}

static sla_status user_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z)
{
    int rc = pc->opt.user(pc->opt.user_ctx, op, b, r, z);
    if (rc != 0)
        return SLA_FAIL(SLA_ECALLBACK, "the preconditioner callback returned %d (op = %s, batch "
                        "element %lld)", rc, op == SLA_OP_N ? "N" : "T", (long long)b);
    return SLA_OK;
}

static void user_destroy(sla_pc *pc) { (void)pc; }

const sla_pc_class sla_pc_user = {
    .setup = user_setup, .update = user_update, .apply = user_apply, .destroy = user_destroy,
    .threading = SLA_THREADS_CALLER,
};
