/* AMG as a preconditioner: one hierarchy per batch element, built by src/precond/amg.c through
 * the internal API of amg.h (create once, update on refactor, one V-cycle per apply).
 *
 * The AMG functions are referenced weakly so that this build links whether or not amg.c is
 * part of it; without it, asking for AMG fails with SLA_EUNSUPPORTED and says why. */
#include <stdio.h>

#include "precond/amg.h"
#include "precond/precond.h"

#pragma weak sla_amg_options_init
#pragma weak sla_amg_create
#pragma weak sla_amg_update
#pragma weak sla_amg_apply
#pragma weak sla_amg_describe
#pragma weak sla_amg_free

typedef struct amg_pc_t {
    sla_amg **h;                 /* [batch] */
} amg_pc_t;

static sla_status amg_setup(sla_pc *pc, const sla_matrix *A)
{
    if (!sla_amg_create || !sla_amg_apply || !sla_amg_update || !sla_amg_free)
        return sla_pc_fail(pc, SLA_EUNSUPPORTED, __func__, NULL, "the AMG preconditioner is not "
                           "in this build of sla (src/precond/amg.c)");
    amg_pc_t *M = sla_calloc(1, sizeof *M, "AMG preconditioner");
    if (!M) return SLA_ENOMEM;
    pc->impl = M;
    M->h = sla_calloc((size_t)pc->batch, sizeof *M->h, "AMG hierarchies");
    if (!M->h) return SLA_ENOMEM;
    sla_amg_options o;
    sla_amg_options_init(&o);
    for (int64_t b = 0; b < pc->batch; b++) {
        sla_status st = sla_amg_create(A, b, &o, &M->h[b]);
        if (st < 0) return sla_error_wrap(st, __func__, "batch element %lld", (long long)b);
    }
    snprintf(pc->desc, sizeof pc->desc, "%s", sla_amg_describe ? sla_amg_describe(M->h[0]) : "amg");
    return SLA_OK;
}

static sla_status amg_update(sla_pc *pc, const sla_matrix *A)
{
    amg_pc_t *M = pc->impl;
    for (int64_t b = 0; b < pc->batch; b++) {
        sla_status st = sla_amg_update(M->h[b], A, b);
        if (st < 0) return sla_error_wrap(st, __func__, "batch element %lld", (long long)b);
    }
    return SLA_OK;
}

static sla_status amg_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z)
{
    const amg_pc_t *M = pc->impl;
    return sla_amg_apply(M->h[b], op, r, z);
}

static void amg_destroy(sla_pc *pc)
{
    amg_pc_t *M = pc->impl;
    if (!M) return;
    if (M->h && sla_amg_free)
        for (int64_t b = 0; b < pc->batch; b++) sla_amg_free(&M->h[b]);
    sla_free(M->h);
    sla_free(M);
    pc->impl = NULL;
}

const sla_pc_class sla_pc_amg = {
    .setup = amg_setup, .update = amg_update, .apply = amg_apply, .destroy = amg_destroy,
    .threading = SLA_THREADS_PER_BATCH,
};
