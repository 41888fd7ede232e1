/* sla.h: differentiable sparse linear algebra.
 *
 * ============================================================================================
 * Conventions (they hold for every sla function unless its comment says otherwise)
 * ============================================================================================
 * Names      sla_<object>_<verb>: sla_pattern_from_coo, sla_solver_solve. Objects created by
 *            *_create / *_from_* are released by *_free(&p), which sets p to NULL.
 * Arguments  inputs first, then in/out, then outputs (pointers), then workspace.
 * Status     every function that can fail returns sla_status: 0 = SLA_OK, negative = error
 *            (outputs are untouched or NULL; nothing leaks; info structs say converged = 0),
 *            positive = warning (outputs valid, e.g. SLA_NOT_CONVERGED). sla_last_error()
 *            gives a thread-local message that starts with the public function called and
 *            names the argument and the offending index or line. sla never prints, aborts or
 *            exits, and never modifies its inputs.
 * Indices    0-based. Row pointers int64; column indices int32 inside a pattern (so
 *            ncols ≤ 2^31 − 1); COO indices handed in are int64 (torch's index dtype).
 * Sparse     a pattern is CSR with sorted, unique column indices per row, plus a map from the
 *            caller's COO entry order to CSR slots (duplicates summed; each duplicate receives
 *            its slot's gradient).
 * Values     [batch][nnz] in CSR order: a batch of B ≥ 1 matrices sharing one pattern.
 * Dense      row-major, batch outermost: a vector is [n], a block [n][k], a batched block
 *            [batch][n][k] (the layout of a contiguous torch tensor of shape (B, n, k)).
 * Dtypes     chosen at run time (sla_dtype): float64, float32, complex128 and complex64.
 *            Values, vectors and outputs of one call share the dtype of the matrix; scalars
 *            (alpha, beta, rtol, norms) are double. A function that does not take complex
 *            values yet returns SLA_EDTYPE naming itself (docs/complex.md lists those that do).
 * Complex    interleaved (re, im) pairs, the layout of C99 double complex / float complex and
 *            of torch's complex tensors. A scalar parameter of type double is real for every
 *            dtype; where a scalar may be complex it is passed as const double[2] = {re, im}
 *            (sla_spmv_c's alpha and beta). Norms, tolerances and residuals are real. The
 *            sign of a determinant is a unit-modulus phase det/|det|, returned as double[2]
 *            per batch element ({±1, 0} for real matrices handed as complex; {0, 0} when
 *            singular). Inner products are conjugated in the first argument, xᴴy (Krylov
 *            vector spaces included). op = SLA_OP_C is the conjugate transpose Aᴴ (= Aᵀ
 *            for real dtypes). Gradients follow PyTorch: for a real loss L the cotangent of
 *            a complex z is the conjugate Wirtinger derivative ∂L/∂z̄ (up to torch's factor
 *            2, the same linear rule), so x = A⁻¹b gives ∂b = A⁻ᴴg, ∂a_rc = −(A⁻ᴴg)_r·conj(x_c).
 * Ownership  views (sla_matrix) and arrays passed in are borrowed for the call only (copied if
 *            kept); objects returned through **out are owned by the caller; pointers returned
 *            by accessors are borrowed from their object and live as long as it does. The one
 *            exception, named *_borrow_*: sla_pattern_borrow_csr keeps the caller's int32
 *            column indices (and int64 row pointers, where given) for the pattern's lifetime,
 *            without a copy; the caller keeps them alive and unchanged until the pattern's last
 *            reference goes, which its release(owner) callback reports.
 * Threads    OpenMP; kernels use static schedules with rows split by nonzeros, so results are
 *            bit-identical run to run for a given thread count. SpMV (and its VJP) is also
 *            identical across thread counts (each row is summed in a fixed order); Krylov
 *            and AMG results may differ between thread counts (per-thread sums, smoother
 *            blocks, threaded BLAS), and iteration counts with them, by a few per cent or more
 *            near the attainable accuracy (measurements: docs/krylov.md, "Threads").
 *            Distinct objects may be used from distinct threads; one solver object must not be
 *            used by two threads at once.
 * Aliasing   outputs must not overlap inputs (nor each other) unless a function says so; SpMV,
 *            the value functions and the solver functions check it (SLA_EINVAL naming both
 *            arrays) before anything is written.
 * Adjoints   every differentiable operation has a *_vjp (or *_grad) function next to it that
 *            takes the upstream gradient g = ∂L/∂output and returns ∂L/∂inputs at O(n + nnz)
 *            memory. Gradients with respect to values are [batch][nnz] in CSR order; use
 *            sla_values_scatter() for the caller's COO order.
 * ============================================================================================
 */
#ifndef SLA_SLA_H
#define SLA_SLA_H

#include "sla/base.h"
#include "sla/pattern.h"
#include "sla/matrix.h"
#include "sla/spmv.h"
#include "sla/io.h"
#include "sla/solver.h"
#include "sla/eig.h"
#include "sla/precond.h"
#include "sla/nonlinear.h"
#include "sla/gallery.h"
#include "sla/spgemm.h"
#include "sla/logdet.h"
#include "sla/eigs.h"

#endif
