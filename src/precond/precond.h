/* Preconditioners of the Krylov layer: one interface for all of them (exported to backends by
 * sla/backend.h; the classes below are private).
 *
 *   sla_pc_create   set-up: symbolic (patterns, level schedules, AMG coarsening) once, then
 *                   numeric for every batch element (a batch shares one pattern);
 *   sla_pc_update   numeric set-up only, for new values on the same pattern (solver refactor);
 *   sla_pc_prepare  once before applies with op = T (ILU(0) builds its transposed factors);
 *   sla_pc_apply    z = M_b⁻¹ r (op = N) or M_b⁻ᵀ r (op = T) for batch element b;
 *   sla_pc_free.
 * The forward solve, the adjoint (op = T) solve and every refactor reuse the same object.
 *
 * Kinds: Jacobi (M = diag(A), or diag(|A|) for MINRES), IC(0) (zero-fill incomplete Cholesky
 * on the lower triangle, natural order, M = L Lᵀ), ILU(0) (zero-fill incomplete LU, natural
 * order, M = L U with unit L), AMG (one V-cycle of src/precond/amg.c through amg.h), user
 * (options.user_precond). A pivot that vanishes (ILU(0)), is not positive (IC(0)), or a zero
 * diagonal (Jacobi) fails the set-up with SLA_EBREAKDOWN naming the row and batch element.
 * Sources: Meijerink & van der Vorst 1977 (IC(0)/ILU(0)); Saad, Iterative Methods for Sparse
 * Linear Systems, 2nd ed. 2003, §10.3 (ILU(0), IKJ variant) and §11.6 (level scheduling).
 */
#ifndef SLA_PRECOND_PRECOND_H
#define SLA_PRECOND_PRECOND_H

#include "core/internal.h"

/* The interface (sla_pc, sla_pc_options, sla_pc_create, _update, _prepare, _apply, _inv_diag,
 * _threading, _describe, _free) is exported to backends: sla/backend.h. Set-up failures that
 * may give way to another preconditioner (method auto) return their reason as data: the class
 * writes it with sla_pc_fail(), the caller gets it in its reason buffer. */

/* ---- for the implementations (precond.c dispatches to one class per kind) ---- */

typedef struct sla_pc_class {
    sla_status (*setup)(sla_pc *pc, const sla_matrix *A);
    sla_status (*update)(sla_pc *pc, const sla_matrix *A);
    sla_status (*prepare)(sla_pc *pc, sla_op op);      /* NULL: nothing to prepare */
    sla_status (*apply)(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z);
    void (*destroy)(sla_pc *pc);
    sla_threading threading;
} sla_pc_class;

struct sla_pc {
    const sla_pc_class *cls;
    sla_pc_options opt;
    sla_dtype dtype;
    int64_t n, batch;
    void *impl;
    const void *inv_diag;        /* Jacobi: [batch][n] */
    char desc[200];
    char reason[SLA_PC_REASON_LEN];  /* why the last set-up or update failed ("" if it did not) */
};

/* A set-up failure of pc: the reason (printf-formatted) is kept as data in pc->reason, and the
 * message is "func: reason" or "func: reason; hint" (hint NULL: none). Returns status. */
sla_status sla_pc_fail(sla_pc *pc, sla_status status, const char *func, const char *hint,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

extern const sla_pc_class sla_pc_jacobi, sla_pc_ic0, sla_pc_ilu0, sla_pc_amg, sla_pc_user;

#endif
