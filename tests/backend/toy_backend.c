/* A backend outside libsla, built the way libsla_mpi plugs in: a shared library that sees only
 * the installed headers (<sla/backend.h>), makes a "distributed" vector space out of the host
 * kernels plus a reduce hook (here one process, so the hook only counts its calls: an
 * MPI_Allreduce would go there), and runs libsla's own Krylov methods and preconditioners on it
 * through the batch runner. It registers itself as the solver backend "toy" (CG and MINRES,
 * float64, Jacobi or none). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include <sla/backend.h>

#include "toy_backend.h"

toy_counts toy_count;

/* The reduce hook: what a distributed space does after its local partial sums. One process:
 * the values are already global; count the call, and whether it came from another thread than
 * the caller (a collective from several threads is what a distributed space must never see). */
static sla_status counting_reduce(const sla_space *V, sla_reduce_op op, double *values, int count)
{
    (void)V;
    (void)values;
    #pragma omp atomic
    toy_count.reduces++;
    #pragma omp atomic
    toy_count.values += count;
    if (op == SLA_REDUCE_MAX) {
        #pragma omp atomic
        toy_count.max_reduces++;
    }
    if (omp_in_parallel()) {
        #pragma omp atomic
        toy_count.from_threads++;
    }
    return toy_count.fail_after-- == 0 ? SLA_FAIL(SLA_EBACKEND, "allreduce failed (injected)")
                                       : SLA_OK;
}

void toy_make_distributed(sla_space *V)
{
    V->reduce = counting_reduce;
    V->concurrent = 0;
}

/* ---- the backend ---- */

typedef struct toy_impl {
    sla_pc *pc;                  /* Jacobi, or NULL */
} toy_impl;

/* what operator_for builds per thread */
typedef struct toy_storage {
    sla_csr_operator c;
    sla_pc_binding bind;
} toy_storage;

static sla_status toy_operator_for(void *ctx, int64_t b, int nchunks, void *storage,
                                   const sla_operator **A)
{
    const sla_solver *s = ctx;
    toy_storage *w = storage;
    sla_csr_operator_init(&w->c, sla_solver_matrix(s), b, nchunks, 0, 1);
    toy_make_distributed(&w->c.range);
    const toy_impl *t = sla_solver_impl(s);
    if (t->pc) sla_operator_set_pc(&w->c.op, &w->bind, t->pc, b);
    *A = &w->c.op;
    return SLA_OK;
}

static void toy_destroy(sla_solver *s)
{
    toy_impl *t = sla_solver_impl(s);
    if (!t) return;
    sla_pc_free(&t->pc);
    free(t);
    sla_solver_set_impl(s, NULL);
}

static sla_status toy_create(sla_solver *s)
{
    const sla_solver_options *o = sla_solver_options_resolved(s);
    const sla_matrix *A = sla_solver_matrix(s);
    if (!A) return SLA_FAIL(SLA_EINVAL, "toy: a matrix-free solver is not served");
    toy_impl *t = calloc(1, sizeof *t);
    if (!t) return SLA_FAIL(SLA_ENOMEM, "toy: no memory");
    sla_solver_set_impl(s, t);
    if (o->precond == SLA_PRECOND_JACOBI || o->precond == SLA_PRECOND_AUTO) {
        sla_pc_options po = {.kind = SLA_PRECOND_JACOBI,
                             .absolute_diagonal = o->method == SLA_METHOD_MINRES};
        char reason[SLA_PC_REASON_LEN];
        sla_status st = sla_pc_create(A, &po, &t->pc, reason);
        if (st < 0) return SLA_FAIL(st, "toy: Jacobi failed: %s", reason);
    }
    char d[256];
    snprintf(d, sizeof d, "%s + %s (toy: one-process distributed space)",
             sla_method_name(o->method), t->pc ? sla_pc_describe(t->pc) : "none");
    sla_solver_set_description(s, d);
    return SLA_OK;
}

static sla_status toy_refactor(sla_solver *s)
{
    toy_impl *t = sla_solver_impl(s);
    return t->pc ? sla_pc_update(t->pc, sla_solver_matrix(s), NULL) : SLA_OK;
}

static sla_status toy_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                            const sla_solve_params *p, sla_solve_info *info)
{
    const sla_solver_options *o = sla_solver_options_resolved(s);
    const sla_matrix *A = sla_solver_matrix(s);
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_krylov_batch J = {
        .method = o->method, .op = op, .batch = A->batch, .nrhs = nrhs, .nb = n, .nx = n,
        .dtype = A->dtype, .B = B, .X = X,
        .params = {.rtol = p->rtol, .atol = p->atol, .maxiter = p->maxiter,
                   .restart = o->restart, .x0_nonzero = p->x0_nonzero,
                   .monitor_every = 1},
        .kernel_bytes = 0, .operator_for = toy_operator_for,
        .storage_bytes = sizeof(toy_storage), .ctx = s};
    return sla_krylov_solve_batch(&J, info);
}

/* the generic layer's checks and scalings on a "distributed" block space */
static sla_status toy_block_space(const sla_solver *s, int64_t count, sla_space *V,
                                  sla_host_space *host)
{
    sla_host_space_init(V, host, count, sla_solver_dtype(s), 1, NULL);
    toy_make_distributed(V);
    #pragma omp atomic
    toy_count.block_spaces++;
    return SLA_OK;
}

static const sla_backend toy = {
    .info = {.name = "toy",
             .description = "a one-process distributed space around the host kernels (test)",
             .methods = SLA_METHOD_BIT(SLA_METHOD_CG) | SLA_METHOD_BIT(SLA_METHOD_MINRES),
             .dtypes = SLA_DTYPE_BIT(SLA_FLOAT64),
             .priority = 100,
             .available = 1},
    .create = toy_create,
    .refactor = toy_refactor,
    .solve = toy_solve,
    .destroy = toy_destroy,
    .block_space = toy_block_space,
};

sla_status toy_register(void) { return sla_backend_register(&toy); }

sla_status toy_unregister(void) { return sla_backend_unregister("toy"); }
