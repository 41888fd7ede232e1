/* sla/spmv.h: sparse matrix–vector products and their adjoints (VJPs). */
#ifndef SLA_SPMV_H
#define SLA_SPMV_H

#include "sla/base.h"
#include "sla/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** y = alpha · op(A) · x + beta · y, for every matrix of the batch; op = N, T, or C (Aᴴ, the
 *  conjugate transpose: Aᵀ for real dtypes). Every dtype (complex ones with real alpha, beta;
 *  complex scalars: sla_spmv_c).
 *
 *  Shapes (row-major, dtype of A): with (m, n) = shape of op(A),
 *    x: [n][k] if x_batched = 0 (broadcast to every batch element), [batch][n][k] if 1;
 *    y: [batch][m][k].  k ≥ 1 (k = 1 is a plain vector).
 *  An empty array (a zero in its shape) may be NULL. y must not overlap x or A's values.
 *  beta = 0 overwrites y without reading it (NaN in y does not propagate); alpha = 0 gives
 *  y = beta · y without reading A or x (the BLAS conventions). Sums are accumulated in the
 *  dtype, in CSR order within each row.
 *  Threads: OpenMP over rows split into equal nonzero counts; each output entry is summed in a
 *  fixed order by one thread, so results are bit-identical run to run and across thread counts.
 *  op = T runs the same gather kernel on the pattern's cached transpose (no atomics).
 *  @return SLA_OK; SLA_EINVAL naming the argument (NULL array, k < 1, bad op or x_batched,
 *          overlapping arrays, sizes overflowing int64, invalid A); SLA_EDTYPE; SLA_ENOMEM or
 *          SLA_EINDEX (nrows > INT32_MAX) from the first op = T on a pattern, which builds its
 *          transpose. y is untouched on error. */
SLA_API sla_status sla_spmv(sla_op op, double alpha, const sla_matrix *A, const void *x,
                            int x_batched, int64_t k, double beta, void *y);

/** sla_spmv() with complex scalars alpha = {re, im}, beta = {re, im} (the conventions block of
 *  sla.h): y = alpha · op(A) · x + beta · y. A real A takes only real scalars (imaginary parts
 *  0, else SLA_EDTYPE). @return as sla_spmv(); SLA_EINVAL if alpha or beta is NULL. */
SLA_API sla_status sla_spmv_c(sla_op op, const double alpha[2], const sla_matrix *A,
                              const void *x, int x_batched, int64_t k, const double beta[2],
                              void *y);

/** Vector–Jacobian product of y = alpha · op(A) · x (the beta·y term has gradient beta·g, left
 *  to the caller). Given g = ∂L/∂y [batch][m][k]:
 *    dx = alpha · op(A)ᴴ · g, shape of x ([n][k] summed over the batch if x_batched = 0,
 *         [batch][n][k] otherwise); overwritten; pass NULL to skip;
 *    dvalues [batch][nnz] in CSR order: ∂a_s = alpha · Σ_j g[r_s][j]·conj(x[c_s][j]) for op = N,
 *         alpha · Σ_j conj(x[r_s][j])·g[c_s][j] for op = T and alpha · Σ_j x[r_s][j]·
 *         conj(g[c_s][j]) for op = C; overwritten; NULL to skip.
 *  Complex dtypes follow PyTorch's convention (g and the results are conjugate Wirtinger
 *  derivatives ∂L/∂z̄ of a real loss, what torch.autograd passes); for real dtypes every
 *  conj() is the identity and op = C is op = T.
 *  x is read only for dvalues (it may be NULL when dvalues is). Outputs must not overlap the
 *  inputs or each other. dx is one SpMV with the other op, dvalues one pass of the kernel of
 *  sla_pattern_outer_add(); both are deterministic like sla_spmv(). The sum over the batch of a
 *  broadcast x is taken in batch order. Use sla_values_scatter() to return dvalues in the
 *  caller's COO order.
 *  @return as sla_spmv(); outputs untouched on error. */
SLA_API sla_status sla_spmv_vjp(sla_op op, double alpha, const sla_matrix *A, const void *x,
                                int x_batched, int64_t k, const void *g, void *dx, void *dvalues);

/** The pattern primitive used by every adjoint: for each slot s = (r_s, c_s) of the pattern,
 *    dvalues[b][s] += alpha · Σ_{j<k} u[b][r_s][j] · conj(v[b][c_s][j])   (u·vᴴ on the pattern;
 *  conj is the identity for real dtypes; every dtype),
 *  with u [batch][nrows][k] (or [nrows][k] if u_batched = 0), v [batch][ncols][k] (or [ncols][k]),
 *  dvalues [batch][nnz] of dtype (accumulated into, not overwritten; must not overlap u or v).
 *  Row-parallel over the pattern; each slot is updated by one thread, so the result is
 *  bit-identical across runs and thread counts.
 *  @return SLA_OK, SLA_EINVAL (NULL pattern or array, batch < 1, k < 1, flags not 0/1,
 *          overlap), SLA_EDTYPE. dvalues is untouched on error. */
SLA_API sla_status sla_pattern_outer_add(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                         double alpha, const void *u, int u_batched,
                                         const void *v, int v_batched, int64_t k, void *dvalues);

#ifdef __cplusplus
}
#endif
#endif
