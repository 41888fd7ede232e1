/* sla/logdet.h: a stochastic estimate of log det A for SPD matrices too large to factor. */
#ifndef SLA_LOGDET_H
#define SLA_LOGDET_H

#include "sla/base.h"
#include "sla/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** AN ESTIMATE of log det A = tr log A for symmetric positive definite A, by stochastic
 *  Lanczos quadrature (Ubaru, Chen & Saad, SIAM J. Matrix Anal. Appl. 38 (2017) 1075–1099):
 *  for each probe z_j (a column of Z: Rademacher ±1 or Gaussian, chosen by the caller),
 *  `steps` Lanczos steps on A from z_j/‖z_j‖ give the tridiagonal T_j; with T_j's eigenvalues
 *  θ_k and the first components τ_k of its eigenvectors, z_jᵀ log(A) z_j ≈ ‖z_j‖² Σ_k τ_k²
 *  log θ_k (Gauss quadrature), and log det A ≈ the mean over the probes (Hutchinson 1989).
 *  Only SpMVs (all probes at once, one [n][nprobe] block per step); no factorization, O(n·p)
 *  memory. No reorthogonalization (the quadrature tolerates Lanczos' loss of orthogonality).
 *  The error has two parts: the Monte-Carlo part (*std_error, the standard error of the mean
 *  over the probes: ~1/√nprobe) and the quadrature part (decays like exp(−2·steps/√κ)).
 *  @param[in]  A        float64, square, symmetric positive definite (not checked beyond
 *                       the Ritz values: a Ritz value ≤ 0 gives SLA_ENOTSPD), batch ≥ 1.
 *  @param[in]  nprobe   ≥ 1 (2 or more for a standard error).
 *  @param[in]  Z        [n][nprobe] row-major probes, shared by the batch.
 *  @param[in]  steps    Lanczos steps, ≥ 1 (stops early on an invariant subspace).
 *  @param[out] logdet, std_error  [batch] each (std_error may be NULL; NaN if nprobe = 1).
 *  @return SLA_OK; SLA_EINVAL (NULL, sizes); SLA_ESHAPE (not square); SLA_EDTYPE (not
 *          float64); SLA_ENOTSPD (a Ritz value ≤ 0, naming the probe); SLA_ENONFINITE;
 *          SLA_ENOMEM. Not collective. */
SLA_API sla_status sla_logdet_slq(const sla_matrix *A, int64_t nprobe, const double *Z,
                                  int64_t steps, double *logdet, double *std_error);

#ifdef __cplusplus
}
#endif
#endif
