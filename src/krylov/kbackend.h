/* State of the built-in Krylov backend (private to src/krylov). */
#ifndef SLA_KRYLOV_KBACKEND_H
#define SLA_KRYLOV_KBACKEND_H

#include "precond/precond.h"
#include "solve/backend.h"

typedef struct sla_krylov_impl {
    sla_pc *pc;                  /* NULL: no preconditioner */
    char auto_note[400];         /* why precond = auto chose this one ("" otherwise) */
    int pc_broken;               /* the last refactor failed: the preconditioner is unusable */
    char pc_error[256];          /* and why */
} sla_krylov_impl;

/* op(A_b) X_b = B_b for every batch element and column (ksolve.c). */
sla_status sla_krylov_solve_all(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                                sla_solve_info *info);

#endif
