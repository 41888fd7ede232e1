/* The operator kinds of the built-in Krylov backend: batch element b of the solver's CSR matrix,
 * or its matrix-free callback, each with the solver's preconditioner bound to it. The backend
 * chooses the kind once at create; the solve never asks which it is. */
#include <math.h>

#include "krylov/kbackend.h"
#include "krylov/krylov.h"

typedef struct csr_storage {
    sla_csr_operator c;
    sla_pc_binding bind;
} csr_storage;

typedef struct fn_storage {
    sla_fn_operator f;
    sla_pc_binding bind;
} fn_storage;

static void bind_pc(const sla_solver *s, sla_operator *A, sla_pc_binding *bind, int64_t b)
{
    const sla_krylov_impl *K = s->impl;
    if (K->pc) sla_operator_set_pc(A, bind, K->pc, b);
}

static sla_status csr_for(void *solver, int64_t b, int nchunks, void *storage,
                          const sla_operator **A)
{
    const sla_solver *s = solver;
    csr_storage *w = storage;
    /* LSQR's x lives in a space of its own (equal chunks) even for a square A. Under AMG the
     * outer SpMV is about a sixth of an iteration's traffic (the V-cycle reads A_0 four times,
     * and P), so the int32 row pointers would gain ~1 % for 4 B/row in the configuration whose
     * memory is the tightest (bench_scale amg 2 2000: 196.1 → 200.1 B/unknown) */
    const sla_krylov_impl *K = s->impl;
    int amg = K->pc && K->pc->opt.kind == SLA_PRECOND_AMG;
    sla_csr_operator_init(&w->c, &s->A, b, nchunks, s->opt.method == SLA_METHOD_LSQR, !amg);
    bind_pc(s, &w->c.op, &w->bind, b);
    *A = &w->c.op;
    return SLA_OK;
}

static sla_status fn_for(void *solver, int64_t b, int nchunks, void *storage,
                         const sla_operator **A)
{
    const sla_solver *s = solver;
    fn_storage *w = storage;
    sla_fn_operator_init(&w->f, s->n, s->dtype, s->apply, s->apply_ctx, b, nchunks);
    bind_pc(s, &w->f.op, &w->bind, b);
    *A = &w->f.op;
    return SLA_OK;
}

/* CG's update streams 7 vectors; the CSR SpMV may move more */
static double vector_bytes(const sla_solver *s)
{
    return 7.0 * (double)s->n * (double)sla_dtype_size(s->dtype);
}

static double csr_bytes(const sla_solver *s)
{
    double spmv = sla_csr_bytes(s->m, sla_pattern_nnz(s->pattern), sla_dtype_size(s->dtype));
    return fmax(vector_bytes(s), spmv);
}

const sla_krylov_kind sla_krylov_kind_csr = {
    .note = "", .storage_bytes = sizeof(csr_storage), .operator_for = csr_for,
    .kernel_bytes = csr_bytes,
};

const sla_krylov_kind sla_krylov_kind_fn = {
    .note = ", matrix-free", .storage_bytes = sizeof(fn_storage), .operator_for = fn_for,
    .kernel_bytes = vector_bytes,
};
