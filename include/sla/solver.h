/* sla/solver.h: solver objects for A X = B (direct and iterative), their adjoints, and
 * log-determinants. One lifecycle for every method:
 *   sla_solver_create(A, options)   analysis + numeric set-up (factorization or preconditioner)
 *   sla_solver_solve(op, nrhs, B, X) as many times as needed, op = N or T (factors reused)
 *   sla_solver_refactor(values)     new values on the same pattern: numeric work only
 *   sla_solver_solve_vjp(...)       backward of a solve: one transposed solve on the same object
 *   sla_solver_free(&s)
 */
#ifndef SLA_SOLVER_H
#define SLA_SOLVER_H

#include "sla/base.h"
#include "sla/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The numerical-singularity threshold of every direct method (cholesky, ldlt, lu, klu):
 *  1000·ε of double, the value eigsh's shift-invert uses. A factorization whose reciprocal
 *  condition estimate (sla_solve_info.rcond, see there) is below it is numerically singular:
 *  see "Singular matrices" at sla_solver_create(). */
#define SLA_RCOND_SINGULAR 2.220446049250313e-13

/** Solution method. Direct methods factor A; iterative ones use a preconditioner. */
typedef enum sla_method {
    SLA_METHOD_AUTO = 0,     /**< chosen by the rules of src/solve/auto.c; see describe() */
    SLA_METHOD_CHOLESKY,     /**< CHOLMOD supernodal LLᵀ (SPD) */
    SLA_METHOD_LDLT,         /**< symmetric indefinite, pivoted (see the backend's docs) */
    SLA_METHOD_LU,           /**< UMFPACK LU with partial pivoting */
    SLA_METHOD_KLU,          /**< KLU (BTF + LU), for circuit matrices */
    SLA_METHOD_CG,           /**< preconditioned conjugate gradients (SPD) */
    SLA_METHOD_BICGSTAB,     /**< BiCGStab (van der Vorst 1992), right preconditioned */
    SLA_METHOD_GMRES,        /**< restarted GMRES(m) (Saad & Schultz 1986), right preconditioned */
    SLA_METHOD_MINRES,       /**< MINRES (Paige & Saunders 1975), SPD preconditioner */
    SLA_METHOD_LSQR,         /**< LSQR (Paige & Saunders 1982): least squares min ‖b − A x‖₂
                              *   (+ damp²‖x‖²) for A of any shape m × n; no preconditioner */
    SLA_METHOD_COCG,         /**< COCG (van der Vorst & Melissen 1990): complex symmetric A = Aᵀ
                              *   (unconjugated CG); on real A, CG without definiteness tests */
    SLA_METHOD_COUNT
} sla_method;

/** Preconditioner of an iterative method. */
typedef enum sla_precond {
    SLA_PRECOND_AUTO = 0,    /**< chosen from the method and the matrix */
    SLA_PRECOND_NONE,
    SLA_PRECOND_JACOBI,
    SLA_PRECOND_IC0,         /**< incomplete Cholesky, zero fill (SPD) */
    SLA_PRECOND_ILU0,        /**< incomplete LU, zero fill */
    SLA_PRECOND_AMG,         /**< algebraic multigrid V-cycle */
    SLA_PRECOND_USER,        /**< options.user_precond callback */
    SLA_PRECOND_COUNT
} sla_precond;

/** Fill-reducing ordering of a direct method. */
typedef enum sla_ordering {
    SLA_ORDERING_AUTO = 0,   /**< the backend's choice (see its docs) */
    SLA_ORDERING_NATURAL,
    SLA_ORDERING_AMD,        /**< AMD (symmetric) or COLAMD (unsymmetric) */
    SLA_ORDERING_METIS,      /**< METIS nested dissection */
    SLA_ORDERING_COUNT
} sla_ordering;

/** Why a solve stopped. */
typedef enum sla_reason {
    SLA_REASON_CONVERGED = 0,   /**< ‖b − A x‖₂ ≤ max(rtol·‖b‖₂, atol), or a direct solve */
    SLA_REASON_MAXITER,         /**< maxiter reached */
    SLA_REASON_BREAKDOWN,       /**< a scalar of the recurrence vanished */
    SLA_REASON_INDEFINITE,      /**< CG saw negative curvature, or MINRES an indefinite M */
    SLA_REASON_NONFINITE,       /**< NaN or Inf appeared */
    SLA_REASON_STAGNATION,      /**< no progress between restarts (GMRES) */
    SLA_REASON_ERROR,           /**< the call returned an error status (< 0): nothing converged;
                                 *   see the status and sla_last_error() */
    SLA_REASON_COUNT
} sla_reason;

/** Progress callback: called every options.monitor_every iterations (and at the end) with the
 *  batch element, right-hand side column, iteration and current residual estimate ‖r‖₂.
 *  Return 0 to continue, nonzero to stop the solve (status SLA_ECALLBACK). */
typedef int (*sla_monitor_fn)(void *ctx, int64_t batch_index, int64_t rhs_index,
                              int64_t iteration, double residual_norm);

/** User preconditioner z = M⁻¹ r (op = N) or M⁻ᵀ r (op = T) for batch element b, on vectors of
 *  length n of the solver's dtype. Return 0 on success. Used when precond = SLA_PRECOND_USER. */
typedef int (*sla_precond_fn)(void *ctx, sla_op op, int64_t batch_index, const void *r, void *z);

/** Matrix-free operator y = op(A) x for batch element b, vectors of length n of dtype.
 *  Return 0 on success. */
typedef int (*sla_apply_fn)(void *ctx, sla_op op, int64_t batch_index, const void *x, void *y);

/** options.rtol and options.atol as sla_solver_options_init() leaves them: "no tolerance given"
 *  (see sla_solver_options). Any other negative tolerance is refused (SLA_EINVAL). */
#define SLA_TOL_DEFAULT (-1.0)
/** options.maxiter as sla_solver_options_init() leaves it: 10·max(m, n) + 100 at create. */
#define SLA_MAXITER_DEFAULT (-1)
/** Method auto's accuracy target when no tolerance is given: the normwise backward error
 *  ‖b − A x‖₂ / (‖A‖_F ‖x‖₂ + ‖b‖₂) of every column (float64; float32: ..._F32). */
#define SLA_AUTO_BACKWARD_ERROR 1e-12
#define SLA_AUTO_BACKWARD_ERROR_F32 1e-5

/** Options of sla_solver_create(). Fields are checked at create (SLA_EINVAL naming the field).
 *
 *  Tolerances. The stopping rule of an iterative solve is ‖b − A x‖₂ ≤ max(rtol·‖b‖₂, atol).
 *  rtol and atol are finite and ≥ 0, or SLA_TOL_DEFAULT, which sla_solver_options_init() writes
 *  into both:
 *    - both SLA_TOL_DEFAULT ("no tolerance given"): method auto delivers a normwise backward
 *      error ≤ SLA_AUTO_BACKWARD_ERROR (1e-12; float32 1e-5) in every column, whatever method it
 *      chooses (docs/auto.md: a direct solve, or an iterative one continued until the target
 *      is met, else SLA_NOT_CONVERGED); an explicit method uses rtol 1e-10, atol 0;
 *    - either one given: the rule above exactly, the other one at its classic default (rtol
 *      1e-10, atol 0), for auto as for an explicit method. */
typedef struct sla_solver_options {
    sla_method method;           /**< default SLA_METHOD_AUTO */
    sla_precond precond;         /**< default SLA_PRECOND_AUTO */
    sla_ordering ordering;       /**< default SLA_ORDERING_AUTO */
    const char *backend;         /**< NULL or "auto": by priority; else a registered name (method
                                  *   auto then chooses among that backend's methods only); ""
                                  *   is refused */
    double rtol;                 /**< default SLA_TOL_DEFAULT (see Tolerances above) */
    double atol;                 /**< default SLA_TOL_DEFAULT */
    int64_t maxiter;             /**< ≥ 1, default SLA_MAXITER_DEFAULT: 10·max(m, n) + 100
                                  *   (iterative) */
    int64_t restart;             /**< GMRES restart length ≥ 1, default 50 */
    int initial_guess_nonzero;   /**< 1: X holds the initial guess on entry (default 0: zero) */
    sla_monitor_fn monitor;      /**< NULL for none */
    void *monitor_ctx;
    int64_t monitor_every;       /**< ≥ 1, default 1 */
    sla_precond_fn user_precond; /**< for SLA_PRECOND_USER */
    void *user_precond_ctx;
    double memory_budget;        /**< bytes a direct factorization may use; ≤ 0: half of RAM */
    double flop_budget;          /**< flops a direct factorization may take; ≤ 0: the default of
                                  *   src/solve/auto.c (SLA_AUTO_FLOP_BUDGET, docs/auto.md) */
    int need_determinant;        /**< 1: the caller will ask for sla_solver_logdet(), so method
                                  *   auto considers only direct methods (default 0); with a
                                  *   rectangular A (SLA_ESHAPE) or damp > 0 (SLA_EINVAL) an
                                  *   error, since no determinant exists */
    double damp;                 /**< LSQR only: minimise ‖b − A x‖₂² + damp²‖x‖₂² (Tikhonov);
                                  *   default 0; must be finite and ≥ 0 */
    int allow_singular;          /**< 0 (default) or 1. Direct methods: 1 turns off the
                                  *   numerical-singularity rule ("Singular matrices" at
                                  *   sla_solver_create()) for a factorization with no exactly
                                  *   zero pivot, for callers that solve with A − σI at an
                                  *   eigenvalue σ on purpose (inverse iteration, shift-invert):
                                  *   solve, the VJPs, logdet and logdet_grad then use the
                                  *   factors as computed, info.rcond still reports the
                                  *   estimate (below SLA_RCOND_SINGULAR: X is the backward-
                                  *   stable solve whose residual info reports, its forward
                                  *   error bounded only by that residual / rcond, typically
                                  *   dominated by the near-null vectors), and describe() says
                                  *   "numerically singular (options.allow_singular)". Exactly
                                  *   singular factors (a zero pivot of lu or klu, MUMPS's null
                                  *   pivots for ldlt, a non-positive one for cholesky) are
                                  *   refused as without it. Iterative methods ignore it. */
} sla_solver_options;

/** What a solve did. For batches and several right-hand sides: the worst case over them.
 *  Always written by sla_solver_solve() and sla_solver_solve_vjp(), also on error: a call that
 *  returns an error status (< 0) leaves converged = 0 and reason = SLA_REASON_ERROR (never the
 *  "converged" of an earlier call), with residuals NaN unless they were measured. */
typedef struct sla_solve_info {
    sla_method method;           /**< the method actually used */
    sla_precond precond;         /**< its preconditioner (SLA_PRECOND_NONE for direct) */
    int converged;               /**< 1 if every system met the stopping rule (direct methods:
                                  *   the factorization solved it; method auto with no tolerance
                                  *   given: the backward-error target); 0 on any error */
    sla_reason reason;           /**< worst reason over the batch; SLA_REASON_ERROR on error */
    int64_t iterations;          /**< max over batch and columns (0 for direct) */
    double residual_norm;        /**< max true ‖b − op(A) x‖₂ over batch and columns, for every
                                  *   method, of the X returned (float32: the rounded X, summed
                                  *   in double by the direct backends): iterative methods
                                  *   recompute it at the end; for
                                  *   direct methods whose backend does not report it (cholesky,
                                  *   ldlt) the generic layer computes it after the solve with
                                  *   one SpMV over all right-hand sides (2–10 % of the solve on
                                  *   10⁴–10⁵ unknowns, up to ~25 % on small matrices with cheap
                                  *   factors: docs/core.md) — only when the caller passes an
                                  *   info (info = NULL skips it); NaN if it could not be
                                  *   measured */
    double relative_residual;    /**< max ‖b − op(A) x‖₂ / ‖b‖₂ (0 when b = 0 and x = 0) */
    double rcond;                /**< direct methods: reciprocal condition estimate of the
                                  *   row-equilibrated A, 1/(‖RA‖₁·est‖(RA)⁻¹‖₁) with R =
                                  *   diag(1/max_j |a_ij|) and Higham's 1-norm estimator on the
                                  *   factors (never below the true value; min over the batch;
                                  *   0 with a zero pivot); below SLA_RCOND_SINGULAR the matrix
                                  *   is numerically singular. NaN for iterative methods */
    double normal_residual;      /**< LSQR: max true ‖op(A)ᵀ r − damp²x‖₂ over batch and columns
                                  *   (the gradient of the least-squares objective, 0 at its
                                  *   minimum); NaN for the other methods */
    char description[SLA_DESCRIPTION_LEN];       /**< one line: method, backend, ordering and why */
    int64_t peak_bytes;          /**< peak resident set size of the process up to the end of this
                                  *   call, bytes (sla_peak_rss_bytes(): getrusage ru_maxrss), so
                                  *   the matrix build and the solver set-up are included; -1 if
                                  *   unknown. Divide by the unknowns for bytes per unknown */
} sla_solve_info;

/** Opaque solver object. */
typedef struct sla_solver sla_solver;

/** Fills *opt with the defaults above. */
SLA_API void sla_solver_options_init(sla_solver_options *opt);

/** Creates a solver for the matrices A (batch B ≥ 1 on one pattern): validates A (finite values),
 *  runs the symbolic analysis once and the numeric set-up for each batch element (in parallel
 *  over the batch). A must be square, except for method lsqr and auto (which chooses lsqr for
 *  a rectangular A): an m × n A with m ≠ n and any other method gives SLA_ESHAPE naming the
 *  method. For lsqr, sla_solver_solve() solves the least-squares problem (see SLA_METHOD_LSQR
 *  and docs/krylov.md); its B is [batch][m][nrhs] and X [batch][n][nrhs] (op = N), or B
 *  [batch][n][nrhs] and X [batch][m][nrhs] (op = T, the problem min ‖b − Aᵀx‖).
 *  A->values are borrowed: they must stay valid and unchanged until the next
 *  sla_solver_refactor() or sla_solver_free(). Iterative methods read them at every solve; direct
 *  methods read them at every solve too, to report the true residual in the info. The pattern is
 *  retained.
 *  Singular matrices. One rule for every direct method (cholesky, ldlt, lu, klu), applied after
 *  every factorization (create and refactor): A_b is singular when a pivot is exactly zero
 *  (lu, klu; MUMPS's null pivots for ldlt) or when it is numerically singular, i.e. its
 *  reciprocal condition estimate (sla_solve_info.rcond: Higham's 1-norm estimate for the
 *  row-equilibrated A, a few solves on the factors; never below the true value, so a refusal
 *  is always justified) is below SLA_RCOND_SINGULAR = 2.2e-13 (docs/direct.md). Then:
 *    - create and refactor return SLA_OK and keep the factors; describe() says "singular" or
 *      "numerically singular" and names the batch element (and, for lu/klu, the column of the
 *      zero or smallest pivot);
 *    - sla_solver_logdet() gives sign 0 and log|det| = −inf for that element (not an error);
 *    - sla_solver_solve() (and the VJPs) and sla_solver_logdet_grad() return SLA_ESINGULAR
 *      naming the batch element: never a huge X reported as converged.
 *    cholesky  may instead refuse at create or refactor with SLA_ENOTSPD, when a pivot of the
 *              singular matrix comes out ≤ 0: the message names the batch element and the
 *              column whose pivot is not positive.
 *    options.allow_singular = 1 keeps only the exact cases (zero pivots) singular: a
 *              numerically singular factorization is then used (see there).
 *    cg, bicgstab, gmres, minres  do not detect singularity: create succeeds, and solve returns
 *              SLA_NOT_CONVERGED with the reason (indefinite, breakdown, stagnation, max
 *              iterations) unless b lies in the range of A and the iteration converges.
 *  Symmetric methods (cholesky, ldlt) read one triangle and refuse a matrix that is not
 *  numerically symmetric with SLA_EINVAL.
 *  @param[in] opt  NULL for defaults.
 *  @return SLA_OK; SLA_EINVAL / SLA_ESHAPE / SLA_EDTYPE / SLA_ENONFINITE naming the argument;
 *          SLA_ENOTSPD naming the column (cholesky); SLA_EUNSUPPORTED (method or backend not in
 *          this build); SLA_ENOMEM. *out NULL on error. Messages start with "sla_solver_create:"
 *          followed by the backend's own words. */
SLA_API sla_status sla_solver_create(const sla_matrix *A, const sla_solver_options *opt,
                                     sla_solver **out);

/** Creates an iterative solver on a matrix-free operator of size n × n (batch B, dtype); lsqr
 *  is accepted too (least squares on a square operator).
 *  opt->method must be an iterative method; precond NONE, JACOBI is refused (no diagonal), USER
 *  allowed. apply must support op = T for transposed solves and VJPs. */
SLA_API sla_status sla_solver_create_operator(int64_t n, sla_dtype dtype, int64_t batch,
                                              sla_apply_fn apply, void *apply_ctx,
                                              const sla_solver_options *opt, sla_solver **out);

/** Replaces the values (same pattern, dtype and batch) and redoes only the numeric work
 *  (factorization or preconditioner values). values [batch][nnz] is borrowed like in create.
 *  Values are checked first (an error there leaves the solver as it was: SLA_EINVAL
 *  "values is NULL", SLA_ENONFINITE naming batch element, slot, row and column); if the numeric
 *  work itself fails (e.g. SLA_ENOMEM, SLA_ENOTSPD), a direct solver refuses to solve until a
 *  refactor succeeds. Singular values behave as at create (see sla_solver_create()).
 *  Method auto (created with SLA_METHOD_AUTO): the facts the choice rests on (symmetry, positive
 *  diagonal, sign pattern, diagonal dominance, definiteness evidence such as a Cholesky that
 *  succeeds) are measured again from the new values (one O(nnz) pass); when one changed, or when
 *  the chosen backend's numeric work fails for a reason of the values (SLA_ENOTSPD,
 *  SLA_EBREAKDOWN, ...), auto decides again as create would (sla_solver_method() may change;
 *  describe() says "decided again at refactor k (what changed)"). If no method can be chosen,
 *  the error is returned and the solver refuses (SLA_EINVAL) until a refactor succeeds. */
SLA_API sla_status sla_solver_refactor(sla_solver *s, const void *values);

/** sla_solver_create() and sla_solver_refactor() told the right-hand side of the solve that
 *  follows: a backend whose condition estimate runs solves anyway (MUMPS, method ldlt) solves
 *  op(A) X = B in the estimate's first call, and the next sla_solver_solve() on this solver
 *  with the same op, nrhs and B contents (compared bytewise; B may be another buffer) returns
 *  that X instead of solving again: one triangular solve fewer, the same X as a separate
 *  solve up to rounding (about 0.9 s of 11 s on the 2D complex Helmholtz 1000²,
 *  docs/complex.md). Any other solve, a new factorization or its failure drops the stored X
 *  (a refactor refused before factoring keeps the old factors and their X); a backend without
 *  the feature, or A in device memory, simply ignores B. B [batch][rows][nrhs] (rows: n), row-major, of A's
 *  dtype, is read during the call only and never modified; op N, T or C, nrhs ≥ 1.
 *  A B that is not finite is not passed on (the solve reports it). Not collective.
 *  @return as sla_solver_create() / sla_solver_refactor(), and SLA_EINVAL naming op, nrhs or
 *          B (NULL while not empty, or its size overflowing int64). */
SLA_API sla_status sla_solver_create_for(const sla_matrix *A, const sla_solver_options *opt,
                                         sla_op op, int64_t nrhs, const void *B,
                                         sla_solver **out);
SLA_API sla_status sla_solver_refactor_for(sla_solver *s, const void *values, sla_op op,
                                           int64_t nrhs, const void *B);

/** Solves op(A_b) X_b = B_b for every batch element b (method lsqr: X_b = argmin
 *  ‖B_b − op(A_b) X_b‖ column by column, for A of shape m × n).
 *  @param[in]  B  [batch][n][nrhs] row-major, dtype of the solver; must be finite (lsqr: op(A)'s
 *                 row count instead of n, i.e. m for op = N).
 *  @param[in,out] X  [batch][n][nrhs] (lsqr: op(A)'s column count, n for op = N); initial guess
 *                 on entry if initial_guess_nonzero, never read otherwise. X must
 *                 not overlap B or the matrix values (checked: SLA_EINVAL).
 *  @param[out] info  may be NULL; always written (see sla_solve_info).
 *  Results are bit-identical run to run for a given number of OpenMP threads. Krylov methods
 *  (cg, bicgstab, gmres, minres) take dot products whose summation order follows the thread
 *  split, so their iterates and iteration counts may differ in the last digits between thread
 *  counts (SpMV itself is identical across thread counts).
 *  @return SLA_OK; SLA_NOT_CONVERGED (warning: X holds the last iterate, info says why);
 *          SLA_ENONFINITE naming the entry of B; SLA_ESINGULAR (a singular matrix factored by
 *          lu, klu or ldlt: the message names the batch element and column); SLA_EINVAL (NULL
 *          or overlapping arrays, sizes overflowing int64, bad op or nrhs: all checked before
 *          anything is written); SLA_ECALLBACK; SLA_ENOMEM. */
SLA_API sla_status sla_solver_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                                    sla_solve_info *info);

/** Backward of X = op(A)⁻¹ B. Given X (the forward's solution) and G = ∂L/∂X, both
 *  [batch][n][nrhs]:  λ = op(A)⁻ᵀ G (one solve on the same object, factors or preconditioner
 *  reused),
 *    dB = λ                              [batch][n][nrhs], overwritten, NULL to skip;
 *    dvalues: ∂a_s = −Σ_j λ[r_s][j]·X[c_s][j] (op = N) or −Σ_j X[r_s][j]·λ[c_s][j] (op = T),
 *             [batch][nnz] CSR order, overwritten, NULL to skip (not available for operators).
 *  The adjoint solve runs on G·2⁻ᵉ with 2ᵉ⁻¹ ≤ ‖G‖∞ < 2ᵉ (a power of two, so the scaling is
 *  exact) and λ is scaled back: tiny cotangents, subnormal ones included, neither underflow in
 *  the solver nor make the scaling overflow; atol is scaled alike. G = 0 gives λ = 0 at once.
 *  X is needed (and must be finite) only when dvalues is requested.
 *  Aliasing: dB and dvalues must not overlap X, G, the matrix values or each other. All checks
 *  (NULLs, sizes, overlaps, finite G and X) come before anything is written, and dB and dvalues
 *  are written only when the solve succeeded (λ goes through a work array of the size of G).
 *  @return as sla_solver_solve(); SLA_ENONFINITE names the entry ("G[b][i][j]", "X[b][i][j]");
 *          messages start with "sla_solver_solve_vjp:". */
SLA_API sla_status sla_solver_solve_vjp(sla_solver *s, sla_op op, int64_t nrhs, const void *X,
                                        const void *G, void *dB, void *dvalues,
                                        sla_solve_info *info);

/** Backward of the least-squares solution X = argmin ‖B − op(A) X‖ (method lsqr, damp = 0), for
 *  A of any shape, x = A⁺b (the minimum-norm solution when A is rank deficient). With
 *  r = b − op(A)x and g = ∂L/∂x for each column, three least-squares solves on the same solver
 *  (LSQR on op(A)ᵀ, then op(A), then op(A)ᵀ; minimum-norm solutions from x₀ = 0):
 *    c = argmin ‖op(A)ᵀc − g‖   (= op(A)⁺ᵀ g)          → dB = c
 *    λ = argmin ‖op(A) λ − c‖   (= (op(A)ᵀop(A))⁺ g; op(A) λ = c)
 *    w = g − op(A)ᵀc            (0 when op(A) has full column rank)
 *    z = argmin ‖op(A)ᵀz − x‖   (= op(A)⁺ᵀ x), solved only when ‖w‖₂ > rtol·‖g‖₂
 *    ∂op(A) = r λᵀ − c xᵀ + z wᵀ, restricted to the pattern: for op = N
 *      ∂a_s = Σ_j r[r_s] λ[c_s] − c[r_s] x[c_s] + z[r_s] w[c_s]; for op = T the transpose.
 *  For full column rank (tall A) this is ∂A = r λᵀ − (Aλ) xᵀ with (AᵀA) λ = g, and for a square
 *  nonsingular A the solve VJP (r = 0, c = A⁻ᵀg). The third term is the derivative of the
 *  minimum-norm solution along the null space of A (Golub & Pereyra 1973); like any gradient of
 *  a pseudo-inverse it holds where the rank of A is locally constant.
 *  Memory O(batch·nrhs·(m + n)) + the solves' O(m + n), whatever the iteration count.
 *  @param[in] B  [batch][m][nrhs] (op = N; [n] for op = T): the forward's right-hand side.
 *  @param[in] X  the forward's solution [batch][n][nrhs] (op = N; [m] for op = T).
 *  @param[in] G  ∂L/∂X, shape of X.
 *  @param[out] dB  shape of B, overwritten, NULL to skip. dvalues [batch][nnz], overwritten,
 *              NULL to skip (not for matrix-free solvers).
 *  @param[out] info  worst case over the solves (iterations summed over the three).
 *  G is scaled by a power of two near 1/‖G‖∞ before the solves, as in sla_solver_solve_vjp.
 *  @return as sla_solver_solve_vjp(); SLA_EUNSUPPORTED if the solver's method is not lsqr or
 *          options.damp ≠ 0. Messages start with "sla_solver_lstsq_vjp:". */
SLA_API sla_status sla_solver_lstsq_vjp(sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                                        const void *X, const void *G, void *dB, void *dvalues,
                                        sla_solve_info *info);

/** sign(det A_b) ∈ {−1, 0, +1} and log|det A_b| from the factorization, per batch element
 *  (arrays [batch]). A singular matrix gives sign 0 and −INFINITY (not an error). Direct
 *  methods only (SLA_EUNSUPPORTED otherwise). */
SLA_API sla_status sla_solver_logdet(sla_solver *s, double *sign, double *logabsdet);

/** Gradient of L = Σ_b g[b]·log|det A_b|: dvalues[b][s] = g[b]·(A_b⁻ᵀ)[r_s, c_s] = g[b]·(A_b⁻¹)[c_s, r_s],
 *  [batch][nnz] CSR order, overwritten. g NULL means ones. Computed from the factors as the
 *  entries of A⁻¹ on the pattern (sparse inverse subset), never by n dense solves; the
 *  backend's docs give the method and its cost. SLA_ESINGULAR if some A_b is singular (the
 *  gradient of log|det| does not exist there); SLA_EINVAL if dvalues overlaps g or the matrix
 *  values (checked before anything is written). */
SLA_API sla_status sla_solver_logdet_grad(sla_solver *s, const double *g, void *dvalues);

/** One line saying which method, backend, ordering and preconditioner were used and, for
 *  method auto, why ("<backend's words>; auto: <why>"), also after refactors. Owned by the
 *  solver. */
SLA_API const char *sla_solver_describe(const sla_solver *s);

/** The method the solver uses (never SLA_METHOD_AUTO: auto is resolved at create). */
SLA_API sla_method sla_solver_method(const sla_solver *s);

/** Reciprocal condition estimate of the factorization (direct methods that report one: the
 *  value info.rcond gives), NaN if unknown or s is NULL. */
SLA_API double sla_solver_rcond(const sla_solver *s);
/** The dtype of the solver's matrix or operator (SLA_FLOAT64 for NULL). */
SLA_API sla_dtype sla_solver_dtype(const sla_solver *s);
/** The batch count B (0 for NULL). */
SLA_API int64_t sla_solver_batch(const sla_solver *s);
/** A is rows × cols (equal except for lsqr on a rectangular A; 0 for NULL). */
SLA_API int64_t sla_solver_rows(const sla_solver *s);
SLA_API int64_t sla_solver_cols(const sla_solver *s);

/** Frees the solver and sets *s to NULL (NULL allowed). Releases its pattern reference. */
SLA_API void sla_solver_free(sla_solver **s);

/** Names: "auto", "cholesky", "ldlt", "lu", "klu", "cg", "bicgstab", "gmres", "minres", "lsqr", "cocg". */
SLA_API const char *sla_method_name(sla_method m);
SLA_API sla_status sla_method_from_name(const char *name, sla_method *m);
/** Names: "auto", "none", "jacobi", "ic0", "ilu0", "amg", "user". */
SLA_API const char *sla_precond_name(sla_precond p);
SLA_API sla_status sla_precond_from_name(const char *name, sla_precond *p);
/** Names: "auto", "natural", "amd", "metis". */
SLA_API const char *sla_ordering_name(sla_ordering o);
SLA_API sla_status sla_ordering_from_name(const char *name, sla_ordering *o);
/** Names: "converged", "max iterations", "breakdown", "indefinite", "non-finite", "stagnation",
 *  "error". */
SLA_API const char *sla_reason_name(sla_reason r);
/** 1 for CG, BiCGStab, GMRES, MINRES, LSQR. */
SLA_API int sla_method_is_iterative(sla_method m);

/** A registered backend, as listed by sla_backend_get(). */
typedef struct sla_backend_info {
    const char *name;          /**< "cholmod", "umfpack", "klu", "mumps", "krylov", ... */
    const char *description;   /**< one line: library and version, what it does */
    uint32_t methods;          /**< bit (1u << m) set for each sla_method m it serves */
    uint32_t dtypes;           /**< bit (1u << d) set for each sla_dtype d it serves */
    int priority;              /**< higher is tried first among backends serving a method */
    int available;             /**< 0 if not compiled into this build */
    const char *unavailable_reason; /**< why not, when available = 0; else NULL */
} sla_backend_info;

/** Number of registered backends (compiled in or not). */
SLA_API int64_t sla_backend_count(void);
/** Fills *info for backend i in [0, sla_backend_count()). @return SLA_OK, SLA_EINVAL. */
SLA_API sla_status sla_backend_get(int64_t i, sla_backend_info *info);

#ifdef __cplusplus
}
#endif
#endif
