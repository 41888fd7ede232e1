/* Jacobi (diagonal) preconditioner: M = diag(A), or diag(|A|) for MINRES, whose preconditioner
 * must be SPD. A zero or missing diagonal entry fails the set-up with SLA_EBREAKDOWN naming the
 * row. The inverse diagonal is exposed (sla_pc_inv_diag) so that CG fuses M⁻¹ into its vector
 * updates. Complex: M = diag(A) (complex symmetric for COCG; real for a Hermitian A, as CG
 * needs) or diag(|A|) (SPD, MINRES); op = C applies diag(A)⁻ᴴ. */
#include <math.h>
#include <omp.h>
#include <stdio.h>

#include "precond/precond.h"

#define SLA_TEMPLATE "precond/t_jacobi.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

static sla_status jacobi_update(sla_pc *pc, const sla_matrix *A)
{
    void *d = (void *)pc->inv_diag;
    SLA_TRY(sla_matrix_diagonal(A, d));
    int64_t bad = SLA_DISPATCH_ALL(pc->dtype, jacobi_invert, (pc->batch * pc->n, pc->opt.absolute_diagonal, d));
    if (bad >= 0)
        return sla_pc_fail(pc, SLA_EBREAKDOWN, __func__, NULL, "Jacobi: zero or missing "
                           "diagonal entry in row %lld (batch element %lld)", (long long)(bad % pc->n), (long long)(bad / pc->n));
    return SLA_OK;
}

static sla_status jacobi_setup(sla_pc *pc, const sla_matrix *A)
{
    pc->impl = sla_malloc((size_t)(pc->batch * pc->n), sla_dtype_size(pc->dtype), "Jacobi diagonal");
    if (!pc->impl) return SLA_ENOMEM;
    pc->inv_diag = pc->impl;
    snprintf(pc->desc, sizeof pc->desc, "%s", pc->opt.absolute_diagonal ? "jacobi(|diag|)" : "jacobi");
    return jacobi_update(pc, A);
}

static sla_status jacobi_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z)
{
    const char *d = (const char *)pc->inv_diag + (size_t)(b * pc->n) * sla_dtype_size(pc->dtype);
    SLA_DISPATCH_ALL(pc->dtype, jacobi_apply, (pc->n, op == SLA_OP_C, (const void *)d, r, z));
    return SLA_OK;
}

static void jacobi_destroy(sla_pc *pc)
{
    sla_free(pc->impl);
    pc->impl = NULL;
    pc->inv_diag = NULL;
}

const sla_pc_class sla_pc_jacobi = {
    .setup = jacobi_setup, .update = jacobi_update, .apply = jacobi_apply,
    .destroy = jacobi_destroy, .threading = SLA_THREADS_ANY,
};
