/* Sparse inverse subset of an unsymmetric LU factorization (private to libsla).
 *
 * The LU backends (umfpack.c, klu.c) factor Aᵀ, whose CSC arrays are the CSR arrays of A:
 *     M = S·P·Aᵀ·Q = L·U,   M[k][l] = s[P[k]] · Aᵀ[P[k]][Q[l]] = s[P[k]] · A[Q[l]][P[k]],
 * with S = diag(s) a row scaling of Aᵀ, P and Q permutation vectors, L unit lower triangular
 * and U upper triangular. M may be block upper triangular (KLU's BTF form): L and U are then
 * the block-diagonal factors of its diagonal blocks and the off-diagonal blocks are not needed.
 *
 * Method: Z = M⁻¹ = U⁻¹L⁻¹ satisfies (Takahashi, Fagan & Chin 1973; Erisman & Tinney 1975), with
 * U = D·Û (Û unit upper triangular),
 *     Z = Û⁻¹D⁻¹ + Z(I − L)   →  Z[i][j] = −Σ_{k>j} Z[i][k]·L[k][j]          (i > j)
 *     Z = D⁻¹L⁻¹ + (I − Û)Z   →  Z[j][i] = −Σ_{k>j} Û[j][k]·Z[k][i]          (i > j)
 *                                 Z[j][j] = 1/d_j − Σ_{k>j} Û[j][k]·Z[k][j]
 * computed for j = n−1 … 0 on the positions of the transposed filled pattern F = struct(L + U).
 * Step j reads only Z[Uj][Lj] with Uj = struct(Û[j][>j]), Lj = struct(L[>j][j]); by the fill
 * rule of elimination every such position is in Fᵀ, so the subset is closed. UMFPACK and KLU
 * drop exact zeros from their factors, which can break that closure, so the module first
 * recomputes the symbolic fill of struct(L + U) ∪ struct(M) (a left-looking reach per column,
 * Gilbert & Peierls 1988) and treats the added positions as stored zeros.
 * Cost: the symbolic pass and the numeric pass each take
 *     Σ_j ( Σ_{m∈Lj} |Û[m][>m]| + Σ_{m∈Uj} |L[>m][m]| )
 * operations, of the order of the factorization's flop count (no dense blocks, no BLAS), and
 * O(nnz(L + U)) memory for Z. */
#ifndef SLA_DIRECT_SELINV_LU_H
#define SLA_DIRECT_SELINV_LU_H

#include "core/internal.h"

/** The LU factors of M = S·P·Aᵀ·Q, all arrays borrowed, 0-based, n × n. Values (Lx, Ux, d)
 *  are double, or double complex ((re, im) pairs) when cplx = 1 (complex A: the recurrences are
 *  the same algebra, without conjugation). */
typedef struct sla_lu_factors {
    int64_t n;
    int cplx;                 /**< 0: the values are double; 1: double complex */
    const int64_t *Lp, *Li;   /**< L in CSC; entries on or above the diagonal are ignored */
    const void *Lx;
    const int64_t *Up, *Ui;   /**< U in CSC; entries on or below the diagonal are ignored */
    const void *Ux;
    const void *d;            /**< [n] diagonal of U, all nonzero */
    const int64_t *P, *Q;     /**< [n] row and column permutations as above */
    const double *s;          /**< [n] row scale of Aᵀ as above (multiplier), NULL for ones */
    int64_t nblocks;          /**< diagonal blocks of M (≥ 1); blocks NULL means one block */
    const int64_t *blocks;    /**< [nblocks + 1] block boundaries, blocks[0] = 0 */
} sla_lu_factors;

/** For every CSR slot t = (r, c) of the pattern of A (n × n):
 *      out[t] = alpha · conj((A⁻¹)[c][r]) = alpha · (A⁻ᴴ)[r][c]
 *  (= alpha · ∂ log|det A| / ∂a_rc for real A; for complex A the gradient of log|det A| in
 *  torch's convention, docs/complex.md). out [nnz] of dtype, overwritten: float64 or float32
 *  when f->cplx = 0, complex128 or complex64 when f->cplx = 1. Entries of A in an off-diagonal block of M get 0.
 *  Not thread-safe with itself only through its arguments (no global state): callers run one
 *  call per batch element in parallel.
 *  @return SLA_OK; SLA_ENOMEM; SLA_ESINGULAR if some d_j = 0; SLA_EINTERNAL if a permutation is
 *          invalid. No error message is set (the caller may run in a worker thread). */
sla_status sla_lu_selinv_transpose(const sla_lu_factors *f, const sla_pattern *A, double alpha,
                                   sla_dtype dtype, void *out);

#endif
