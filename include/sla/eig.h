/* sla/eig.h: a few eigenpairs of sparse symmetric matrices (eigsh) and their adjoint (VJP).
 *
 *   sla_eigsh(A, k, options, eigenvalues, eigenvectors, info)     the forward
 *   sla_eigsh_vjp(A, k, eigenvalues, eigenvectors, gλ, gV, ...)    the backward
 *   options.M = &M: the generalized problem A v = λ M v with M SPD (finite-element mass
 *   matrices); sla_eigsh_generalized_vjp(A, M, ...) is its backward (eigenvalues and
 *   eigenvectors). See "Generalized problem" below.
 *
 * Methods (docs/eigsh.md has the measurements behind the defaults):
 *   LOBPCG      the extreme eigenvalues (which = SA, LA; LM from both ends), block size > k,
 *               optional preconditioner. Knyazev, SIAM J. Sci. Comput. 23 (2001); the
 *               orthonormal basis and the P update of Hetmaniuk & Lehoucq, J. Comput. Phys.
 *               218 (2006); rank-revealing orthonormalization with dropping after Duersch,
 *               Shao, Yang & Gu, SIAM J. Sci. Comput. 40 (2018).
 *   LANCZOS     block thick-restart Lanczos (Krylov–Schur restart, full reorthogonalization;
 *               Wu & Simon, SIAM J. Matrix Anal. Appl. 22 (2000); Stewart 2001) in shift-invert
 *               mode on (A − σI)⁻¹ from a direct factorization made with sla_solver_create:
 *               sigma → the eigenvalues nearest σ; SA / LA → a shift below / above the
 *               spectrum proved by a successful Cholesky factorization (σ = 0 for SPD A, else
 *               a Gershgorin bound), moved toward the spectrum while convergence is slow; SM →
 *               σ = 0. LM: regular mode on A.
 *   ARPACK      ARPACK-ng's dsaupd/dseupd (implicitly restarted Lanczos, Lehoucq, Sorensen &
 *               Yang 1998) on the same operators, for comparison (build with SLA_HAVE_ARPACK);
 *               stopped before convergence, the Ritz pairs of its last Lanczos basis.
 *   DENSE       LAPACK dsyevr on the dense matrix, for n ≤ SLA_EIGSH_DENSE_MAX_N.
 *
 * Convergence, for every method: an eigenpair (λ, v), ‖v‖₂ = 1, is converged when its true
 * residual ‖A v − λ v‖₂ ≤ tol·‖A‖₁ (‖A‖₁ = max column sum, an upper bound of ‖A‖₂ for
 * symmetric A). The residuals are recomputed with A at the end and reported in the info.
 *
 * Generalized problem A v = λ M v (options.M not NULL; M symmetric positive definite, n × n, the
 * dtype of A, its own pattern, batch 1 (shared by every element of A's batch) or A's batch):
 *   LANCZOS     shift-invert Lanczos on OP = (A − σM)⁻¹M, which is self-adjoint in the
 *               M-inner product ⟨x, y⟩_M = xᵀMy: the basis is kept M-orthonormal (every
 *               projection and SVQB Gram matrix uses M·x). Ericsson & Ruhe, Math. Comp. 35
 *               (1980); Grimes, Lewis & Simon, SIAM J. Matrix Anal. Appl. 15 (1994). The
 *               shifts are chosen as for the standard problem (σ = 0 for SPD A; a Cholesky
 *               factorization of sgn·(A − σM) proves the side of the spectrum). LM without
 *               sigma is LA for a Gershgorin-semidefinite A (SA for a negative one).
 *   LOBPCG      B = M as in Knyazev (2001): M-orthonormal basis with M·S kept beside it,
 *               residuals A x − θ M x (SA, LA, LM from both ends, SM of a semidefinite A).
 *   ARPACK      mode 3 with bmat = G (OP = (A − σM)⁻¹M, B = M) on the same factorization.
 *   DENSE       LAPACK dsygvd (itype 1) on dense copies of A and M.
 *   Method auto chooses as for the standard problem (dense for n ≤ 300; LOBPCG with a
 *   preconditioner or for LM of an indefinite A; else LANCZOS). Lanczos has no regular mode
 *   with M: method lanczos with LM without sigma of an indefinite A is SLA_EUNSUPPORTED.
 *   Before the iteration M is factored once by Cholesky (CHOLMOD) to prove it SPD; this counts
 *   in info.factorizations (method dense: dsygvd's own Cholesky factorization of M does). The eigenvectors are M-orthonormal (VᵀMV = I) with the same sign
 *   convention. Convergence: ‖A v − λ M v‖₂ ≤ tol·(‖A‖₁ + |λ|·‖M‖₁)·‖v‖₂, and the reported
 *   residuals are ‖A v − λ M v‖₂ / ((‖A‖₁ + |λ|·‖M‖₁)·‖v‖₂) (invariant under the scaling of v;
 *   with M = I they are the standard residuals relative to ‖A‖₁ + |λ| instead of ‖A‖₁).
 *
 * dtypes: float64 and float32. float32 input is promoted to float64 internally (one copy of
 * the values); the outputs are rounded to float32.
 * complex128 and complex64 (sla_eigsh and both VJPs): A (and M) Hermitian, A = Aᴴ to the
 * symmetry tolerance (else SLA_EINVAL naming the entry); the eigenvalues (and their cotangents)
 * are of the real dtype (float64 / float32), the eigenvectors (cotangents, gradients) complex,
 * each with its largest-magnitude entry real positive. Computed on the real symmetric form
 * [[Re A, −Im A], [Im A, Re A]] (2k eigenpairs, every option as above; LOBPCG preconditioners
 * are SLA_EUNSUPPORTED) and collapsed to k by a complex Rayleigh–Ritz step. Gradients in
 * PyTorch's convention (∂λ/∂a_rc = v_r·conj(v_c)); an eigenvector cotangent g_i with
 * Im(v_iᴴ g_i) ≠ 0 (a loss that depends on the phase of v_i) is SLA_EINVAL.
 * docs/complex.md, "eigsh for Hermitian matrices".
 */
#ifndef SLA_EIG_H
#define SLA_EIG_H

#include "sla/base.h"
#include "sla/matrix.h"
#include "sla/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest n that the dense path (and method = auto's dense choice) accepts: 4096 (a dense
 *  copy of 128 MiB and about 10 s of dsyevr). */
#define SLA_EIGSH_DENSE_MAX_N 4096

/** Which eigenvalues. With options.sigma set, only LM is accepted and means "nearest sigma". */
typedef enum sla_eigsh_which {
    SLA_EIGSH_LM = 0,        /**< largest magnitude |λ| (default, as in SciPy and ARPACK) */
    SLA_EIGSH_SM,            /**< smallest magnitude |λ| (shift-invert at σ = 0) */
    SLA_EIGSH_LA,            /**< largest algebraic λ */
    SLA_EIGSH_SA,            /**< smallest algebraic λ */
    SLA_EIGSH_WHICH_COUNT
} sla_eigsh_which;

/** Method. AUTO's rules are in src/eig/eigsh.c (choose_method) and described in the info. */
typedef enum sla_eigsh_method {
    SLA_EIGSH_AUTO = 0,
    SLA_EIGSH_LOBPCG,        /**< extreme eigenvalues: SA, LA, LM (both ends), SM of a
                              *   semidefinite matrix (Gershgorin); no sigma */
    SLA_EIGSH_LANCZOS,       /**< thick-restart block Lanczos; shift-invert except for LM */
    SLA_EIGSH_ARPACK,        /**< ARPACK dsaupd on the same operator as LANCZOS */
    SLA_EIGSH_DENSE,         /**< LAPACK dsyevr, n ≤ SLA_EIGSH_DENSE_MAX_N */
    SLA_EIGSH_METHOD_COUNT
} sla_eigsh_method;

/** Options of sla_eigsh. Fill with sla_eigsh_options_init() and change what you need. */
typedef struct sla_eigsh_options {
    sla_eigsh_which which;       /**< default SLA_EIGSH_LM */
    double sigma;                /**< shift-invert mode: the k eigenvalues nearest sigma.
                                  *   NAN (default): no shift */
    double tol;                  /**< relative residual ‖A v − λ v‖₂ / ‖A‖₁, default 1e-10;
                                  *   0 means 1e-14 */
    int64_t maxiter;             /**< LOBPCG iterations (default 2000), Lanczos restarts
                                  *   (default 300), ARPACK restarts (default max(300, 10·n) as
                                  *   SciPy: ARPACK cannot move its shift toward a cluster);
                                  *   ≤ 0: default */
    sla_eigsh_method method;     /**< default SLA_EIGSH_AUTO */
    const void *v0;              /**< optional start block [batch][n][nv0] (row-major, dtype of
                                  *   A), or NULL (deterministic pseudo-random start). LOBPCG
                                  *   uses up to block columns, Lanczos block, ARPACK one. Must
                                  *   not overlap the outputs (warm starts: pass a copy) */
    int64_t nv0;                 /**< columns of v0, ≥ 1; columns beyond those the method
                                  *   uses (see v0) are ignored, dependent ones are replaced
                                  *   by random directions */
    int64_t block_size;          /**< ≤ 0: the default. LOBPCG block: default max(2k, k + 4),
                                  *   lowered to ⌊n/3⌋ (not below k) for small n; a value given
                                  *   must satisfy k ≤ block_size ≤ n/3. Lanczos block: default
                                  *   2 (docs/eigsh.md); a value given must leave
                                  *   k + block_size ≤ ncv ≤ n − block_size. Not read by ARPACK
                                  *   (one vector) nor by the dense path. */
    int64_t ncv;                 /**< ≤ 0: the default. Lanczos/ARPACK basis size: default
                                  *   max(2k + 2, 20), raised to k + block and lowered to
                                  *   n − block (block 2 for ARPACK's default) for small n; a
                                  *   value given must satisfy k + block ≤ ncv ≤ n − block
                                  *   (Lanczos) or k < ncv ≤ n (ARPACK). Not read by LOBPCG nor
                                  *   by the dense path. A value given that the method run
                                  *   (also the one method auto picks) cannot use is SLA_EINVAL
                                  *   naming the field; sizes given are never changed. */
    /** LOBPCG preconditioner T ≈ A⁻¹ (SA; for LA it is applied to −A's residuals as given).
     *  Either a solver object, applied with sla_solver_solve (any method; warnings such as
     *  SLA_NOT_CONVERGED of a deliberately loose iterative solve are ignored; batch 1 or the
     *  batch of A), or a callback (per batch element and vector, op = SLA_OP_N, vectors of the
     *  dtype of A). NULL: none. */
    sla_solver *precond_solver;
    sla_precond_fn precond;
    void *precond_ctx;
    /** Options of the factorization of A − σI in shift-invert mode (NULL: method auto with
     *  need_determinant = 1, i.e. direct methods only: Cholesky, then LDLᵀ, then LU; method auto
     *  given here is restricted to direct methods too). */
    const sla_solver_options *factor_options;
    /** Optional output [batch][k] (double): ‖A v_i − λ_i v_i‖₂ / ‖A‖₁ per eigenpair (must not
     *  overlap A's values, v0 or the other outputs); with M, the generalized residual
     *  ‖A v − λ M v‖₂ / ((‖A‖₁ + |λ|‖M‖₁)‖v‖₂). */
    double *residuals;
    /** Optional mass matrix of the generalized problem A v = λ M v (NULL, the default: the
     *  standard problem). Symmetric positive definite, n × n, the dtype of A, any pattern,
     *  batch 1 or the batch of A; borrowed for the call. Every method. */
    const sla_matrix *M;
} sla_eigsh_options;

/** What sla_eigsh did. Counts are totals over the batch; residuals are maxima. */
typedef struct sla_eigsh_info {
    sla_eigsh_method method;     /**< the method used */
    sla_eigsh_which which;       /**< as requested */
    double sigma;                /**< shift of the factorized A − σI (batch element 0's; the
                                  *   elements' shifts may differ after moves); NAN if none */
    int64_t iterations;          /**< LOBPCG iterations / Lanczos block steps, max over batch */
    int64_t restarts;            /**< Lanczos/ARPACK restarts, max over batch */
    int64_t operator_applications; /**< vectors the iteration operator was applied to:
                                  *   A·x (LOBPCG, regular Lanczos) or (A − σI)⁻¹x */
    int64_t precond_applications;/**< LOBPCG preconditioner applications (vectors) */
    int64_t spmv;                /**< extra A·x products for the true residuals (vectors) */
    int64_t factorizations;      /**< numeric factorizations of A − σI (per batch element) */
    int64_t converged;           /**< converged wanted eigenpairs, min over the batch */
    double max_residual;         /**< max ‖A v − λ v‖₂ / ‖A‖₁ over batch and pairs (with M:
                                  *   ‖A v − λ M v‖₂ / ((‖A‖₁ + |λ|‖M‖₁)‖v‖₂)) */
    double norm_A;               /**< max ‖A_b‖₁ over the batch */
    double norm_M;               /**< max ‖M_b‖₁ over the batch; 0 without M */
    char description[SLA_DESCRIPTION_LEN];       /**< one line: method, operator, factorization and
                                  *   why, made of whole clauses (the factorization's own
                                  *   description is shortened by clauses when room is short) */
} sla_eigsh_info;

/** Fills *opt with the defaults above. */
SLA_API void sla_eigsh_options_init(sla_eigsh_options *opt);

/** k eigenpairs of each symmetric matrix of the batch A_b (square, n × n, numerically
 *  symmetric: |a_ij − a_ji| ≤ 1e-10·max(|a_ij|, |a_ji|) for float64, 1e-5 for float32).
 *
 *  @param[in]  A             batch of B matrices on one pattern, float64 or float32, finite.
 *  @param[in]  k             1 ≤ k ≤ n eigenpairs per batch element.
 *  @param[in]  opt           NULL for the defaults (which = LM, no shift, method auto).
 *  @param[out] eigenvalues   [batch][k] of the dtype of A, ascending within each batch element.
 *  @param[out] eigenvectors  [batch][n][k] row-major (column i is the unit eigenvector of
 *                            eigenvalue i; with options.M, M-normalized: vᵀMv = 1), or NULL to
 *                            skip. Sign convention: the component of largest magnitude (the
 *                            first one among exact ties) is positive. Vectors of a repeated
 *                            eigenvalue are an orthonormal (with M: M-orthonormal) basis of its
 *                            computed eigenspace.
 *  @param[out] info          may be NULL.
 *  Batches: every batch element is solved; LOBPCG and Lanczos advance all elements together, so
 *  that each operator application is one batched SpMV or one batched solve (the factorization
 *  of A − σI shares one symbolic analysis through the solver's batch support). ARPACK, which is
 *  not reentrant, runs the batch elements one after the other (serialized across threads).
 *  Repeated eigenvalues: every copy among the k is returned, or the status is not SLA_OK. A
 *  Krylov result (Lanczos, ARPACK) with an eigenvalue of block-size or more copies is confirmed
 *  by a block Lanczos run with a larger block (its cost is in the info; docs/eigsh.md,
 *  "Multiplicity rule").
 *  @return SLA_OK; SLA_NOT_CONVERGED (warning: outputs hold the best approximations, the info
 *          and options.residuals say how far each pair is; also when the copies of a repeated
 *          eigenvalue could not be confirmed, or ARPACK's differ from the confirming run's,
 *          with a message saying so); SLA_EINVAL (NULL, k out of
 *          [1, n], which/method/option invalid, options.block_size or options.ncv out of the
 *          range above for the method run, which ≠ LM with sigma, method not able to
 *          compute the requested eigenvalues); SLA_ESHAPE (not square); SLA_EDTYPE;
 *          SLA_ENONFINITE; SLA_EINVAL naming the first entry that breaks symmetry;
 *          SLA_EINVAL naming both arrays when an output (eigenvalues, eigenvectors,
 *          options.residuals) overlaps A's values, options.v0 or another output (checked
 *          before anything is written);
 *          SLA_EUNSUPPORTED (ARPACK not in this build; n too large for the dense path when it
 *          is the only way; method lanczos or arpack, LM without sigma, an indefinite A and
 *          options.M; SA / LA with options.M for an indefinite A when M's Gershgorin lower
 *          bound is not positive (no shift outside the spectrum is known: give sigma));
 *          with options.M: SLA_ESHAPE (M not n × n), SLA_EDTYPE (M's dtype ≠ A's), SLA_EINVAL
 *          (M's batch neither 1 nor A's; M not symmetric, naming the entry), SLA_ENOTSPD (M not
 *          positive definite: the message of the Cholesky factorization names the column); errors of the factorization (SLA_ESINGULAR when σ is an eigenvalue
 *          even after perturbation); SLA_ECALLBACK; SLA_ENOMEM. */
SLA_API sla_status sla_eigsh(const sla_matrix *A, int64_t k, const sla_eigsh_options *opt,
                             void *eigenvalues, void *eigenvectors, sla_eigsh_info *info);

/** Vector–Jacobian product of (Λ, V) = eigsh(A): given the forward's outputs and the upstream
 *  gradients, accumulates nothing but writes
 *    dvalues[b][s] = Σ_i gλ[b][i]·v_i[r_s]·v_i[c_s]  −  Σ_i w_i[r_s]·v_i[c_s],
 *  [batch][nnz] in CSR order (dtype of A; overwritten), where slot s holds entry (r_s, c_s) and
 *  w_i = (A − λ_i I)⁺ g_i is the eigenvector term (zero when gV is NULL):
 *    w_i = Σ_{j≠i, j<k} v_j (v_jᵀ g_i)/(λ_j − λ_i)  +  Q (A − λ_i I)⁻¹ Q g_i,   Q = I − V Vᵀ,
 *  the second part from one direct factorization of A − λ_i I per eigenvalue with a nonzero
 *  cotangent (one symbolic analysis for all, refactored per i; LDLᵀ, else LU). The first term
 *  is Hellmann–Feynman, ∂λ_i/∂a_s = v_i[r_s]·v_i[c_s].
 *  Convention: each stored entry is an independent variable (as in sla_solver_solve_vjp); for
 *  a symmetric parametrization a_ij = a_ji add the two slots (or symmetrize). The eigenvector
 *  gradient assumes the sign convention of sla_eigsh (it is locally smooth).
 *  Repeated eigenvalues (a tie: |λ_i − λ_j| ≤ 1e-8·‖A‖₁; 1e-5·‖A‖₁ for float32 eigenpairs):
 *  an eigenvector cotangent g_i is allowed only if the loss does not depend on the choice of
 *  basis of that eigenspace. Inside the block: v_jᵀg_i = v_iᵀg_j (to 1e-8 relative, float32
 *  1e-5); the pair then contributes nothing (the gradient is exact for symmetric
 *  perturbations). With an eigenvalue outside the block (a multiplet split by k): vᵀg_i = 0 for
 *  its eigenvector v (same tolerance), found by inverse iteration on the factorization of
 *  A − λ_i I (a second right-hand side in its solve and two SpMVs; a unit vector z
 *  outside the block with ‖A z − λ_i z‖ ≤ 1e-8·‖A‖₁ is a partner; up to 8 per eigenvalue).
 *  Otherwise SLA_EINVAL "eigenvector gradient undefined for the repeated eigenvalue ..."
 *  naming λ_i (and λ_j, or "whose partner is not among the k computed") and the batch element.
 *  A near-tie above the bound is a simple eigenvalue (relative gap 1e-6: gradients within
 *  1e-8 of the dense reference). Eigenvalue cotangents alone are always fine (the sum over a
 *  complete eigenspace is smooth). docs/eigsh.md, "Gradients".
 *  @param[in] eigenvalues   [batch][k], eigenvectors [batch][n][k]: the outputs of sla_eigsh.
 *  @param[in] g_eigenvalues [batch][k] or NULL; g_eigenvectors [batch][n][k] or NULL.
 *  @param[out] dvalues      [batch][nnz] of the dtype of A.
 *  @return SLA_OK; SLA_EINVAL (NULL, k, a tie as above, inside or outside the block; dvalues
 *          overlapping an input, naming both); SLA_EDTYPE; SLA_ESHAPE;
 *          errors of the factorization of A − λ_i I; SLA_ENOMEM. */
SLA_API sla_status sla_eigsh_vjp(const sla_matrix *A, int64_t k, const void *eigenvalues,
                                 const void *eigenvectors, const void *g_eigenvalues,
                                 const void *g_eigenvectors, void *dvalues);

/** Vector–Jacobian product of (Λ, V) = eigsh(A, M) for the generalized problem A v = λ M v
 *  (options.M of sla_eigsh). With M-normalized eigenvectors (v_iᵀ M v_i = 1, as sla_eigsh
 *  returns them), ∂λ_i/∂A = v_i v_iᵀ and ∂λ_i/∂M = −λ_i v_i v_iᵀ (Hellmann–Feynman for the
 *  pencil); an eigenvector cotangent g_i enters through w_i = V(Λ − λ_i)⁺Vᵀ g_i (the in-block
 *  part explicit, the rest Q (A − λ_i M)⁻¹ Qᵀ g_i with Q = I − V VᵀM, one direct factorization
 *  of A − λ_i M per eigenvalue with a nonzero cotangent, as in sla_eigsh_vjp). Writes
 *    dA[b][s] = Σ_i gλ_i·v_i[r_s]·v_i[c_s] − Σ_i w_i[r_s]·v_i[c_s]          on A's pattern,
 *    dM[b][t] = −Σ_i (gλ_i·λ_i + ½ g_iᵀv_i)·v_i[r_t]·v_i[c_t] + Σ_i λ_i·w_i[r_t]·v_i[c_t]
 *                                                                          on M's own pattern,
 *  each with sla_pattern_outer_add (slot s = (r_s, c_s)). Each stored entry is an independent
 *  variable, as in sla_eigsh_vjp. A batch-1 M shared by A's batch gets the sum over the batch
 *  in dM[0]. Repeated eigenvalues, inside the block or with a partner outside it: as
 *  sla_eigsh_vjp, with |λ_i − λ_j| ≤ 1e-8·max|λ| of the block (float32 1e-5) and, outside, the
 *  residual ‖A z − λ_i M z‖₂/‖M z‖₂ of an M-normalized z M-orthogonal to the block (eigenvalue
 *  cotangents alone are always fine).
 *  @param[in]  A, M           as given to sla_eigsh (M batch 1 or A's batch; same dtype).
 *  @param[in]  eigenvalues    [batch][k]; eigenvectors [batch][n][k] row-major (dtype of A).
 *  @param[in]  g_eigenvalues  [batch][k] or NULL; g_eigenvectors [batch][n][k] or NULL.
 *  @param[out] dA             [batch][nnz(A)], dM [batch of M][nnz(M)], dtype of A, overwritten;
 *                             either may be NULL to skip.
 *  @return SLA_OK; SLA_EINVAL (NULL, k, M's batch, a tie as above, outputs overlapping inputs
 *          or each other); SLA_EDTYPE; SLA_ESHAPE; SLA_ENONFINITE; errors of the factorization
 *          of A − λ_i M; SLA_ENOMEM. */
SLA_API sla_status sla_eigsh_generalized_vjp(const sla_matrix *A, const sla_matrix *M, int64_t k,
                                             const void *eigenvalues, const void *eigenvectors,
                                             const void *g_eigenvalues, const void *g_eigenvectors,
                                             void *dA, void *dM);

/** Names: "LM", "SM", "LA", "SA" (case-insensitive on input). */
SLA_API const char *sla_eigsh_which_name(sla_eigsh_which w);
SLA_API sla_status sla_eigsh_which_from_name(const char *name, sla_eigsh_which *w);
/** Names: "auto", "lobpcg", "lanczos", "arpack", "dense". */
SLA_API const char *sla_eigsh_method_name(sla_eigsh_method m);
SLA_API sla_status sla_eigsh_method_from_name(const char *name, sla_eigsh_method *m);

#ifdef __cplusplus
}
#endif
#endif
