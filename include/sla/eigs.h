/* sla/eigs.h: a few eigenvalues of a general (non-symmetric) sparse matrix. */
#ifndef SLA_EIGS_H
#define SLA_EIGS_H

#include "sla/base.h"
#include "sla/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which eigenvalues sla_eigs looks for: largest / smallest magnitude, real part, imaginary
 *  part (ARPACK's LM, SM, LR, SR, LI, SI). */
typedef enum sla_eigs_which {
    SLA_EIGS_LM = 0, SLA_EIGS_SM = 1, SLA_EIGS_LR = 2, SLA_EIGS_SR = 3, SLA_EIGS_LI = 4,
    SLA_EIGS_SI = 5
} sla_eigs_which;

/** k eigenpairs of a square float64 matrix (batch 1) by ARPACK-ng's implicitly restarted
 *  Arnoldi method in regular mode, OP = A (dnaupd/dneupd; Lehoucq, Sorensen & Yang, "ARPACK
 *  Users' Guide", SIAM 1998). Complex eigenvalues come in conjugate pairs.
 *  @param[in]  k        1 ≤ k ≤ n − 2 (ARPACK's limit; use a dense method below that).
 *  @param[in]  tol      relative accuracy of the Ritz values (≤ 0: machine precision).
 *  @param[in]  maxiter  restarts (≤ 0: max(300, 10·n)); ncv: basis size (≤ 0: min(n,
 *                       max(2k + 1, 20))), k + 2 ≤ ncv ≤ n.
 *  @param[out] wr, wi   [k] real and imaginary parts, in ARPACK's order.
 *  @param[out] V        NULL, or [n][k] row-major: the eigenvector of a real eigenvalue in
 *                       its column; for a pair wr_j ± i·wi_j (wi_j > 0 first) columns j and
 *                       j + 1 hold the real and imaginary parts of the eigenvector of
 *                       wr_j + i·wi_j (its conjugate belongs to the other). Unit 2-norm.
 *  @param[out] nconv    converged pairs (< k: SLA_NOT_CONVERGED is returned, outputs hold
 *                       what ARPACK delivered).
 *  @return SLA_OK; SLA_NOT_CONVERGED; SLA_EINVAL (k, ncv, NULL); SLA_ESHAPE; SLA_EDTYPE
 *          (not float64); SLA_ENONFINITE; SLA_EUNSUPPORTED (built without ARPACK); SLA_EBACKEND
 *          naming ARPACK's info. Serialized (ARPACK keeps state between calls). */
SLA_API sla_status sla_eigs(const sla_matrix *A, int64_t k, sla_eigs_which which, double tol,
                            int64_t maxiter, int64_t ncv, double *wr, double *wi, double *V,
                            int64_t *nconv);

#ifdef __cplusplus
}
#endif
#endif
