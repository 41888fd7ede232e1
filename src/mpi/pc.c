/* Preconditioners of the distributed solvers. Jacobi and the block-Jacobi kinds are libsla's
 * serial preconditioners (sla_pc_create) of each rank's diagonal block, A restricted to the
 * rows and columns this rank owns: the coupling to other ranks (the off-diagonal block) is
 * dropped, so M is block diagonal over the ranks (for Jacobi M = diag(A) exactly, the diagonal
 * being in the diagonal block). BoomerAMG is hypre's (pc_hypre.c). Set-ups are agreed: a
 * failure on one rank is every rank's, with that rank named. */
#include <stdio.h>
#include <string.h>

#include "mpi/dsolver.h"

static const double no_rows_diag[1] = {0};   /* inv_diag of a rank without rows: never read */

/* the local kind of a block kind */
static sla_precond local_kind(sla_dist_precond k)
{
    switch (k) {
    case SLA_DIST_PC_JACOBI: return SLA_PRECOND_JACOBI;
    case SLA_DIST_PC_BJACOBI_IC0: return SLA_PRECOND_IC0;
    case SLA_DIST_PC_BJACOBI_ILU0: return SLA_PRECOND_ILU0;
    case SLA_DIST_PC_BJACOBI_AMG: return SLA_PRECOND_AMG;
    default: return SLA_PRECOND_NONE;
    }
}

/* the diagonal block's values [batch][nnz_diag] out of A's [batch][diag | offd] */
static void copy_diag(dist_pc *pc, const sla_dist_matrix *A)
{
    const sla_dist_pattern *P = A->pattern;
    size_t es = sla_dtype_size(A->dtype);
    int64_t nloc = sla_dist_pattern_nnz(P);
    for (int64_t b = 0; b < A->batch; b++)
        memcpy((char *)pc->diag_values + (size_t)(b * P->nnz_diag) * es,
               (const char *)A->values + (size_t)(b * nloc) * es, (size_t)P->nnz_diag * es);
}

/* the local set-up; "rank r: " is added by the agreement */
static sla_status local_create(dist_pc *pc, const sla_dist_matrix *A, const char *func)
{
    const sla_dist_pattern *P = A->pattern;
    size_t es = sla_dtype_size(A->dtype);
    pc->diag_values = sla_malloc((size_t)(A->batch * (P->nnz_diag ? P->nnz_diag : 1)), es,
                                 "diagonal block values");
    if (!pc->diag_values) return sla_error_attribute(SLA_ENOMEM, func);
    copy_diag(pc, A);
    if (P->rows->n == 0) return SLA_OK;
    sla_matrix D = sla_matrix_view(P->diag, A->dtype, A->batch, pc->diag_values);
    sla_pc_options o = {.kind = local_kind(pc->kind), .absolute_diagonal = pc->absolute_diagonal};
    char reason[SLA_PC_REASON_LEN];
    sla_status st = sla_pc_create(&D, &o, &pc->local, reason);
    if (st < 0 && reason[0]) return sla_error_set(st, func, "%s", reason);
    return sla_error_attribute(st, func);
}

sla_status dist_pc_create(dist_pc *pc, sla_dist_precond kind, int absolute_diagonal,
                          const sla_dist_matrix *A, const char *func)
{
    memset(pc, 0, sizeof *pc);
    pc->kind = kind;
    pc->absolute_diagonal = absolute_diagonal;
    MPI_Comm comm = A->pattern->comm;
    sla_status st = SLA_OK;
    if (kind == SLA_DIST_PC_NONE) {
        snprintf(pc->note, sizeof pc->note, "none");
        return SLA_OK;
    }
    if (kind == SLA_DIST_PC_BOOMERAMG) {
        st = dist_hypre_create(A, func, &pc->hypre);     /* agreed inside */
        if (st == SLA_OK) snprintf(pc->note, sizeof pc->note, "%s", dist_hypre_describe(pc->hypre));
    } else {
        st = dist_agree(comm, func, local_create(pc, A, func));
        if (st == SLA_OK)
            snprintf(pc->note, sizeof pc->note, "%s%s%s",
                     kind == SLA_DIST_PC_JACOBI ? "" : "block Jacobi (one block per rank) with ",
                     sla_dist_precond_name(kind) + (kind == SLA_DIST_PC_JACOBI ? 0 : 8),
                     absolute_diagonal ? " on |diag|" : "");
    }
    if (st < 0) dist_pc_free(pc);
    return st;
}

sla_status dist_pc_update(dist_pc *pc, const sla_dist_matrix *A, const char *func)
{
    if (pc->kind == SLA_DIST_PC_NONE) return SLA_OK;
    if (pc->kind == SLA_DIST_PC_BOOMERAMG) return dist_hypre_update(pc->hypre, A, func);
    copy_diag(pc, A);
    sla_status st = SLA_OK;
    if (pc->local) {
        sla_matrix D = sla_matrix_view(A->pattern->diag, A->dtype, A->batch, pc->diag_values);
        char reason[SLA_PC_REASON_LEN];
        st = sla_pc_update(pc->local, &D, reason);
        st = st < 0 && reason[0] ? sla_error_set(st, func, "%s", reason)
                                 : sla_error_attribute(st, func);
    }
    return dist_agree(A->pattern->comm, func, st);
}

void dist_pc_free(dist_pc *pc)
{
    sla_pc_free(&pc->local);
    sla_free(pc->diag_values);
    pc->diag_values = NULL;
    dist_hypre_free(&pc->hypre);
}

static sla_status apply_local(const sla_operator *A, sla_op op, const void *r, void *z)
{
    const dist_operator *o = A->pctx;
    if (!o->pc->local) return SLA_OK;          /* no rows here */
    return sla_pc_apply(o->pc->local, op, o->pc_b, r, z);
}

static sla_status apply_hypre(const sla_operator *A, sla_op op, const void *r, void *z)
{
    const dist_operator *o = A->pctx;
    (void)op;                                  /* symmetric A only for op = T (solver.c) */
    return dist_hypre_apply(o->pc->hypre, o->pc_b, r, z);
}

sla_status dist_pc_bind(dist_pc *pc, dist_operator *o, int64_t b, sla_op op)
{
    o->pc = pc;
    o->pc_b = b;
    o->op.pctx = o;
    o->op.precond = NULL;
    o->op.inv_diag = NULL;
    switch (pc->kind) {
    case SLA_DIST_PC_NONE: return SLA_OK;
    case SLA_DIST_PC_BOOMERAMG: o->op.precond = apply_hypre; return SLA_OK;
    default: break;
    }
    o->op.precond = apply_local;
    if (pc->kind == SLA_DIST_PC_JACOBI) {
        /* every rank fuses M⁻¹ into CG's updates, or none does: the same branches, the same
         * collectives */
        const void *d = pc->local ? sla_pc_inv_diag(pc->local, b) : no_rows_diag;
        o->op.inv_diag = d ? d : no_rows_diag;
    }
    return pc->local ? sla_pc_prepare(pc->local, op) : SLA_OK;
}
