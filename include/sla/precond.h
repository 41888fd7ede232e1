/* sla/precond.h: a preconditioner as an object of its own, M ≈ A built from a sparse matrix and
 * applied as z = M⁻¹ r or M⁻ᵀ r. It is what a matrix-free operator needs for its preconditioner
 * when the matrix of the operator is not available but an approximation of it is (the
 * Amat/Pmat split of PETSc's KSPSetOperators): pass sla_preconditioner_apply() (through a
 * small adapter) as options.user_precond of sla_solver_create_operator(). Newton–Krylov
 * (sla/nonlinear.h) uses it that way, on an approximate Jacobian.
 *   sla_preconditioner_create(P, kind)   symbolic + numeric set-up
 *   sla_preconditioner_update(values)    numeric set-up only, same pattern
 *   sla_preconditioner_apply(op, b, r, z)
 *   sla_preconditioner_free(&M)
 * The kinds are those of the iterative solvers (sla/solver.h, docs/krylov.md): Jacobi, IC(0),
 * ILU(0), AMG; the same code serves both. */
#ifndef SLA_PRECOND_H
#define SLA_PRECOND_H

#include "sla/base.h"
#include "sla/matrix.h"
#include "sla/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque preconditioner object. */
typedef struct sla_preconditioner sla_preconditioner;

/** Builds the preconditioner `kind` (SLA_PRECOND_JACOBI, IC0, ILU0 or AMG) of every matrix of
 *  the batch P (square, finite values, float64, float32, complex128 or complex64: every kind
 *  has complex kernels, docs/complex.md). P->values are borrowed under the
 *  contract of sla_solver_create(): valid and unchanged until the next update or free (AMG
 *  reads them at set-up). The pattern is retained. Not collective.
 *  @return SLA_OK; SLA_EINVAL (NULL, kind AUTO, NONE or USER: "kind ... is not a
 *          preconditioner built from a matrix"); SLA_ESHAPE (not square); SLA_ENONFINITE
 *          naming batch element, slot, row and column; SLA_EBREAKDOWN (a zero or non-positive
 *          pivot, a zero diagonal: the message names row and batch element); SLA_EUNSUPPORTED
 *          (AMG not in this build); SLA_ENOMEM. *out NULL on error. Messages start with
 *          "sla_preconditioner_create:". */
SLA_API sla_status sla_preconditioner_create(const sla_matrix *P, sla_precond kind,
                                             sla_preconditioner **out);

/** New values [batch][nnz] (CSR order, same pattern, dtype and batch), borrowed like at
 *  create; numeric work only. Values are checked first (SLA_EINVAL, SLA_ENONFINITE: the object
 *  is unchanged); a failure of the numeric set-up itself (SLA_EBREAKDOWN, ...) leaves the object
 *  refusing to apply until an update succeeds. */
SLA_API sla_status sla_preconditioner_update(sla_preconditioner *M, const void *values);

/** z = M_b⁻¹ r (op = N), M_b⁻ᵀ r (op = T) or, complex dtypes, M_b⁻ᴴ r (op = C) for batch
 *  element b; r and z [n] of the matrix's
 *  dtype, distinct and not overlapping. The first op = T apply builds what the transpose needs
 *  (ILU(0): Uᵀ and Lᵀ), so one object must not be applied from two threads at once.
 *  @return SLA_OK; SLA_EINVAL (NULL, bad op or batch index, overlap, a failed update). */
SLA_API sla_status sla_preconditioner_apply(sla_preconditioner *M, sla_op op,
                                            int64_t batch_index, const void *r, void *z);

/** One line: the kind and its parameters (AMG: levels, operator complexity). Owned by M. */
SLA_API const char *sla_preconditioner_describe(const sla_preconditioner *M);

/** Frees M and sets *M to NULL (NULL allowed). */
SLA_API void sla_preconditioner_free(sla_preconditioner **M);

#ifdef __cplusplus
}
#endif
#endif
