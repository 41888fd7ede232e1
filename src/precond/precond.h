/* Preconditioners of the Krylov layer (private to libsla): one interface for all of them.
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

typedef struct sla_pc sla_pc;

typedef struct sla_pc_options {
    sla_precond kind;            /* JACOBI, IC0, ILU0, AMG or USER */
    int absolute_diagonal;       /* Jacobi: M = diag(|a_ii|), SPD for indefinite A (MINRES) */
    sla_precond_fn user;         /* USER */
    void *user_ctx;
} sla_pc_options;

/* Set-up for every batch element of the square matrix A (finite values, checked by the
 * caller). Jacobi, IC(0) and ILU(0) keep copies of what they need; AMG may borrow float64
 * values (amg.h), under the same contract as the solver object: A's values stay valid and
 * unchanged until the next update or free.
 * @return SLA_OK; SLA_EBREAKDOWN (pivot, naming row and batch element); SLA_EUNSUPPORTED (AMG
 *         not in this build); SLA_EINVAL; SLA_ENOMEM. *out NULL on error. */
sla_status sla_pc_create(const sla_matrix *A, const sla_pc_options *o, sla_pc **out);

/* For a matrix-free operator of size n: only the user kind (SLA_EINVAL otherwise). */
sla_status sla_pc_create_matrix_free(int64_t n, sla_dtype dtype, int64_t batch,
                                     const sla_pc_options *o, sla_pc **out);

/* New values of A (same pattern, dtype, batch): numeric set-up only. On failure the object
 * keeps no usable values for the failing element (the caller must not apply it). */
sla_status sla_pc_update(sla_pc *pc, const sla_matrix *A);

/* Makes applies with op possible (ILU(0) op = T builds Uᵀ and Lᵀ once). Not thread-safe. */
sla_status sla_pc_prepare(sla_pc *pc, sla_op op);

/* z = M_b⁻¹ r (op = N) or M_b⁻ᵀ r (op = T); r, z [n] of the matrix dtype, z ≠ r.
 * @return SLA_OK or SLA_ECALLBACK (user kind) or an AMG error. */
sla_status sla_pc_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z);

/* [n] of dtype: 1/a_ii (or 1/|a_ii|) when the kind is Jacobi, else NULL. */
const void *sla_pc_inv_diag(const sla_pc *pc, int64_t b);

/* 1 if two threads may apply the same batch element at once (not AMG, not user). */
int sla_pc_reentrant(const sla_pc *pc);

/* "ic0", "ilu0", "jacobi", "jacobi(|diag|)", "user", or AMG's own description. */
const char *sla_pc_describe(const sla_pc *pc);

void sla_pc_free(sla_pc **pc);

/* ---- for the implementations (precond.c dispatches to one class per kind) ---- */

typedef struct sla_pc_class {
    sla_status (*setup)(sla_pc *pc, const sla_matrix *A);
    sla_status (*update)(sla_pc *pc, const sla_matrix *A);
    sla_status (*prepare)(sla_pc *pc, sla_op op);      /* NULL: nothing to prepare */
    sla_status (*apply)(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z);
    void (*destroy)(sla_pc *pc);
    int reentrant;
} sla_pc_class;

struct sla_pc {
    const sla_pc_class *cls;
    sla_pc_options opt;
    sla_dtype dtype;
    int64_t n, batch;
    void *impl;
    const void *inv_diag;        /* Jacobi: [batch][n] */
    char desc[200];
};

extern const sla_pc_class sla_pc_jacobi, sla_pc_ic0, sla_pc_ilu0, sla_pc_amg, sla_pc_user;

#endif
