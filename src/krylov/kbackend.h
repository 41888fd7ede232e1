/* State of the built-in Krylov backend and its operator kinds (private to src/krylov). */
#ifndef SLA_KRYLOV_KBACKEND_H
#define SLA_KRYLOV_KBACKEND_H

#include "backend/solver_impl.h"
#include "precond/precond.h"

/* An operator kind: how the backend builds the operator table of batch element b (CSR,
 * matrix-free; a distributed or device kind fills the same). Chosen once at create. */
typedef struct sla_krylov_kind {
    const char *note;            /* in the description: "" or ", matrix-free" */
    size_t storage_bytes;        /* what operator_for builds in */
    /* sla_krylov_batch.operator_for, with ctx the solver */
    sla_status (*operator_for)(void *solver, int64_t b, int nchunks, void *storage,
                               const sla_operator **A);
    /* bytes the largest kernel of one system moves (the threading rule) */
    double (*kernel_bytes)(const sla_solver *s);
} sla_krylov_kind;

/* CSR (real and complex dtypes: sla_csr_operator) and matrix-free */
extern const sla_krylov_kind sla_krylov_kind_csr, sla_krylov_kind_fn;

typedef struct sla_krylov_impl {
    const sla_krylov_kind *kind;
    sla_pc *pc;                  /* NULL: no preconditioner */
    char auto_note[400];         /* why precond = auto chose this one ("" otherwise) */
    int pc_broken;               /* the last refactor failed: the preconditioner is unusable */
    char pc_error[256];          /* and why */
} sla_krylov_impl;


#endif
