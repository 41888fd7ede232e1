/* The preconditioner interface: creation by kind, dispatch, the reason of a failed set-up as
 * data, and the binding to an operator's precond slot (see precond/precond.h, sla/backend.h). */
#include <stdarg.h>
#include <stdio.h>
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

sla_status sla_pc_fail(sla_pc *pc, sla_status status, const char *func, const char *hint,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pc->reason, sizeof pc->reason, fmt, ap);
    va_end(ap);
    if (hint) return sla_error_set(status, func, "%s; %s", pc->reason, hint);
    return sla_error_set(status, func, "%s", pc->reason);
}

/* the reason of a failed set-up or update into the caller's buffer: the class's own, or for a
 * failure it did not describe (allocation, AMG internals) the status string */
static void give_reason(const sla_pc *pc, sla_status st, char *reason)
{
    if (!reason) return;
    const char *r = st >= 0 ? "" : pc && pc->reason[0] ? pc->reason : sla_status_string(st);
    snprintf(reason, SLA_PC_REASON_LEN, "%s", r);
}

static sla_status pc_create(const sla_matrix *A, int64_t n, sla_dtype dtype, int64_t batch,
                            const sla_pc_options *o, sla_pc **out, char *reason)
{
    give_reason(NULL, SLA_OK, reason);
    SLA_CHECK_ARG(o && out, "NULL argument");
    *out = NULL;
    const sla_pc_class *cls = class_of(o->kind);
    SLA_CHECK_ARG(cls, "preconditioner '%s' has no set-up", sla_precond_name(o->kind));
    SLA_CHECK_ARG(A || o->kind == SLA_PRECOND_USER, "preconditioner %s needs the matrix",
                  sla_precond_name(o->kind));
    SLA_CHECK_ARG(o->kind != SLA_PRECOND_USER || o->user, "user preconditioner callback is NULL");
    if (sla_dtype_is_complex(dtype) && o->kind != SLA_PRECOND_USER && o->kind != SLA_PRECOND_NONE &&
        o->kind != SLA_PRECOND_JACOBI && o->kind != SLA_PRECOND_ILU0 && o->kind != SLA_PRECOND_IC0 && o->kind != SLA_PRECOND_AMG)
        return SLA_FAIL(SLA_EDTYPE, "preconditioner %s does not take %s values yet (none, "
                        "jacobi, ic0, ilu0, amg and user do)", sla_precond_name(o->kind),
                        sla_dtype_name(dtype));
    sla_pc *pc = sla_calloc(1, sizeof *pc, "preconditioner");
    if (!pc) return SLA_ENOMEM;
    pc->cls = cls;
    pc->opt = *o;
    pc->dtype = dtype;
    pc->n = n;
    pc->batch = batch;
    sla_status st = cls->setup(pc, A);
    if (st < 0) {
        give_reason(pc, st, reason);
        sla_pc_free(&pc);
        return st;
    }
    *out = pc;
    return SLA_OK;
}

sla_status sla_pc_create(const sla_matrix *A, const sla_pc_options *o, sla_pc **out,
                         char *reason)
{
    SLA_CHECK_ARG(A, "matrix is NULL");
    return pc_create(A, sla_pattern_nrows(A->pattern), A->dtype, A->batch, o, out, reason);
}

sla_status sla_pc_create_matrix_free(int64_t n, sla_dtype dtype, int64_t batch,
                                     const sla_pc_options *o, sla_pc **out)
{
    return pc_create(NULL, n, dtype, batch, o, out, NULL);
}

sla_status sla_pc_update(sla_pc *pc, const sla_matrix *A, char *reason)
{
    pc->reason[0] = '\0';
    sla_status st = pc->cls->update(pc, A);
    give_reason(pc, st, reason);
    return st;
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

sla_threading sla_pc_threading(const sla_pc *pc) { return pc->cls->threading; }

const char *sla_pc_describe(const sla_pc *pc) { return pc->desc; }

void sla_pc_free(sla_pc **ppc)
{
    if (!ppc || !*ppc) return;
    sla_pc *pc = *ppc;
    *ppc = NULL;
    if (pc->cls && pc->cls->destroy) pc->cls->destroy(pc);
    sla_free(pc);
}

/* ---- the precond slot of an operator ---- */

static sla_status bound_apply(const sla_operator *A, sla_op op, const void *r, void *z)
{
    const sla_pc_binding *c = A->pctx;
    return sla_pc_apply(c->pc, op, c->b, r, z);
}

void sla_operator_set_pc(sla_operator *A, sla_pc_binding *bind, const sla_pc *pc, int64_t b)
{
    bind->pc = pc;
    bind->b = b;
    A->pctx = bind;
    A->precond = bound_apply;
    A->inv_diag = sla_pc_inv_diag(pc, b);
    sla_threading t = sla_pc_threading(pc);
    if (t < A->threading) A->threading = t;
}
