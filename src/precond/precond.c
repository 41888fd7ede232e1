/* The preconditioner interface: creation by kind and dispatch (see precond/precond.h). */
#include <string.h>

#include "precond/precond.h"

static const sla_pc_class *class_of(sla_precond kind)
{
    switch (kind) {
    case SLA_PRECOND_JACOBI: return &sla_pc_jacobi;
    case SLA_PRECOND_IC0: return &sla_pc_ic0;
    case SLA_PRECOND_ILU0: return &sla_pc_ilu0;
    case SLA_PRECOND_AMG: return &sla_pc_amg;
    case SLA_PRECOND_USER: return &sla_pc_user;
    default: return NULL;
    }
}

static sla_status pc_create(const sla_matrix *A, int64_t n, sla_dtype dtype, int64_t batch,
                            const sla_pc_options *o, sla_pc **out)
{
    SLA_CHECK_ARG(o && out, "NULL argument");
    *out = NULL;
    const sla_pc_class *cls = class_of(o->kind);
    SLA_CHECK_ARG(cls, "preconditioner '%s' has no set-up", sla_precond_name(o->kind));
    SLA_CHECK_ARG(A || o->kind == SLA_PRECOND_USER, "preconditioner %s needs the matrix",
                  sla_precond_name(o->kind));
    SLA_CHECK_ARG(o->kind != SLA_PRECOND_USER || o->user, "user preconditioner callback is NULL");
    sla_pc *pc = sla_calloc(1, sizeof *pc, "preconditioner");
    if (!pc) return SLA_ENOMEM;
    pc->cls = cls;
    pc->opt = *o;
    pc->dtype = dtype;
    pc->n = n;
    pc->batch = batch;
    sla_status st = cls->setup(pc, A);
    if (st < 0) {
        sla_pc_free(&pc);
        return st;
    }
    *out = pc;
    return SLA_OK;
}

sla_status sla_pc_create(const sla_matrix *A, const sla_pc_options *o, sla_pc **out)
{
    SLA_CHECK_ARG(A, "matrix is NULL");
    return pc_create(A, sla_pattern_nrows(A->pattern), A->dtype, A->batch, o, out);
}

sla_status sla_pc_create_matrix_free(int64_t n, sla_dtype dtype, int64_t batch,
                                     const sla_pc_options *o, sla_pc **out)
{
    return pc_create(NULL, n, dtype, batch, o, out);
}

sla_status sla_pc_update(sla_pc *pc, const sla_matrix *A)
{
    return pc->cls->update(pc, A);
}

sla_status sla_pc_prepare(sla_pc *pc, sla_op op)
{
    return pc->cls->prepare ? pc->cls->prepare(pc, op) : SLA_OK;
}

sla_status sla_pc_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z)
{
    return pc->cls->apply(pc, op, b, r, z);
}

const void *sla_pc_inv_diag(const sla_pc *pc, int64_t b)
{
    if (!pc->inv_diag) return NULL;
    return (const char *)pc->inv_diag + (size_t)(b * pc->n) * sla_dtype_size(pc->dtype);
}

int sla_pc_reentrant(const sla_pc *pc) { return pc->cls->reentrant; }

const char *sla_pc_describe(const sla_pc *pc) { return pc->desc; }

void sla_pc_free(sla_pc **ppc)
{
    if (!ppc || !*ppc) return;
    sla_pc *pc = *ppc;
    *ppc = NULL;
    if (pc->cls && pc->cls->destroy) pc->cls->destroy(pc);
    sla_free(pc);
}
