/* sla/spmv.h: sparse matrix–vector products and their adjoints (VJPs). */
#ifndef SLA_SPMV_H
#define SLA_SPMV_H

#include "sla/base.h"
#include "sla/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** y = alpha · op(A) · x + beta · y, for every matrix of the batch.
 *
 *  Shapes (row-major, dtype of A): with (m, n) = shape of op(A),
 *    x: [n][k] if x_batched = 0 (broadcast to every batch element), [batch][n][k] if 1;
 *    y: [batch][m][k].  k ≥ 1 (k = 1 is a plain vector).
 *  beta = 0 overwrites y without reading it (NaN in y does not propagate).
 *  Threads: OpenMP over rows split into equal nonzero counts; each output entry is summed in a
 *  fixed order, so results are bit-identical run to run (and across thread counts). op = T runs
 *  the same gather kernel on the pattern's cached transpose.
 *  @return SLA_OK; SLA_EINVAL (NULL, k < 1, bad op); SLA_EDTYPE; SLA_ENOMEM (first op = T on a
 *          pattern builds its transpose). */
SLA_API sla_status sla_spmv(sla_op op, double alpha, const sla_matrix *A, const void *x,
                            int x_batched, int64_t k, double beta, void *y);

/** Vector–Jacobian product of y = alpha · op(A) · x (the beta·y term has gradient beta·g, left
 *  to the caller). Given g = ∂L/∂y [batch][m][k]:
 *    dx = alpha · op(A)ᵀ · g, shape of x ([n][k] summed over the batch if x_batched = 0,
 *         [batch][n][k] otherwise); overwritten; pass NULL to skip;
 *    dvalues [batch][nnz] in CSR order: ∂a_s = alpha · Σ_j g[r_s][j]·x[c_s][j] for op = N and
 *         alpha · Σ_j x[r_s][j]·g[c_s][j] for op = T; overwritten; NULL to skip.
 *  Use sla_values_scatter() to return dvalues in the caller's COO order.
 *  @return as sla_spmv(). */
SLA_API sla_status sla_spmv_vjp(sla_op op, double alpha, const sla_matrix *A, const void *x,
                                int x_batched, int64_t k, const void *g, void *dx, void *dvalues);

/** The pattern primitive used by every adjoint: for each slot s = (r_s, c_s) of the pattern,
 *    dvalues[b][s] += alpha · Σ_{j<k} u[b][r_s][j] · v[b][c_s][j],
 *  with u [batch][nrows][k] (or [nrows][k] if u_batched = 0), v [batch][ncols][k] (or [ncols][k]),
 *  dvalues [batch][nnz] of dtype (accumulated into, not overwritten).
 *  @return SLA_OK, SLA_EINVAL, SLA_EDTYPE. */
SLA_API sla_status sla_pattern_outer_add(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                         double alpha, const void *u, int u_batched,
                                         const void *v, int v_batched, int64_t k, void *dvalues);

#ifdef __cplusplus
}
#endif
#endif
