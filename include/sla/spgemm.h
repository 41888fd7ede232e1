/* sla/spgemm.h: sparse × sparse products C = A·B (SpGEMM) and their VJP. */
#ifndef SLA_SPGEMM_H
#define SLA_SPGEMM_H

#include "sla/base.h"
#include "sla/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The pattern of C = A·B (m × n for A m × k, B k × n): (i, j) is stored when some k has
 *  a_ik and b_kj stored (structural: products that cancel numerically are kept). Gustavson's
 *  row-wise algorithm (ACM TOMS 4 (1978) 250–269), columns sorted per row; the new pattern's
 *  input order is its CSR order.
 *  @return SLA_OK; SLA_ESHAPE (inner dimensions differ); SLA_EINVAL (NULL, C's columns beyond
 *          int32); SLA_ENOMEM. Not collective. */
SLA_API sla_status sla_spgemm_pattern(const sla_pattern *A, const sla_pattern *B,
                                      sla_pattern **C);

/** Values of C = A·B on pattern C (from sla_spgemm_pattern of A's and B's patterns, or any
 *  pattern containing it: entries outside it would be dropped, so a smaller one is refused):
 *  c_values [batch][nnz(C)] in CSR order, batch = max(A->batch, B->batch) (a batch of 1
 *  broadcasts); A, B of one dtype (float64 or float32; sums in that dtype). Rows in parallel
 *  (OpenMP), each row's sums in a fixed order: results do not depend on the thread count.
 *  @return SLA_OK; SLA_EINVAL (NULL, batches that are neither equal nor 1, C not containing
 *          the product's pattern, overlapping output); SLA_ESHAPE; SLA_EDTYPE. */
SLA_API sla_status sla_spgemm(const sla_matrix *A, const sla_matrix *B, const sla_pattern *C,
                              void *c_values);

/** VJP of c = sla_spgemm(A, B): given g [batch][nnz(C)] (∂L/∂c on C's pattern),
 *  ∂a_ik = Σ_j g_ij b_kj on A's pattern and ∂b_kj = Σ_i a_ik g_ij on B's pattern, i.e.
 *  (G Bᵀ) and (Aᵀ G) sampled on the operands' patterns. dA [A->batch][nnz(A)] and dB
 *  [B->batch][nnz(B)] are overwritten (summed over the batch for an operand of batch 1);
 *  either may be NULL. Rows of A in parallel for dA; dB accumulated serially (deterministic).
 *  @return as sla_spgemm(). */
SLA_API sla_status sla_spgemm_vjp(const sla_matrix *A, const sla_matrix *B,
                                  const sla_pattern *C, const void *g, void *dA, void *dB);

#ifdef __cplusplus
}
#endif
#endif
