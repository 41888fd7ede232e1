/* Private helpers shared by the symmetric direct backends (CHOLMOD, MUMPS), the supernodal
 * selected inverse, and the symbolic analyses that method = auto decides from (predicted nnz of
 * the factor and flops, instead of a size threshold) and hands to the backend it chose. Not
 * installed. */
#ifndef SLA_DIRECT_H
#define SLA_DIRECT_H

#include "backend/solver_impl.h"

/* ------------------------------------------------------------------------------------------ */
/* Symbolic cost of a factorization (for method = auto)                                        */
/* ------------------------------------------------------------------------------------------ */

/** Predicted cost of a Cholesky factorization LLᵀ = P A Pᵀ from CHOLMOD's symbolic analysis of the
 *  pattern of A (values unused; A must be square). ordering as in sla_solver_options (AUTO: the
 *  rule of cholmod.c, see docs/direct.md).
 *  @param[out] nnz_L  entries of L (simplicial count, diagonal included);
 *  @param[out] flops  floating-point operations of the numeric factorization (CHOLMOD's fl).
 *  Either output may be NULL. Cost: one ordering + symbolic analysis (no numeric work).
 *  @return SLA_OK; SLA_ESHAPE (not square); SLA_ENOMEM; SLA_EBACKEND (CHOLMOD failed). */
SLA_API sla_status sla_cholmod_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                            double *flops);

/** The same from MUMPS's analysis (JOB = 1, SYM = 2) of the lower triangle of A ∪ Aᵀ: predicted
 *  entries of the LDLᵀ factors (INFOG(20)) and flops of the elimination (RINFOG(1)), before any
 *  delayed pivots. ordering AUTO gives AMD's cost (the first step of the AUTO rule).
 *  SLA_EUNSUPPORTED when MUMPS is not compiled in. */
SLA_API sla_status sla_mumps_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                  double *flops);

/** Predicted cost of a Cholesky factorization of the symmetric pattern (rowptr, colind) of order
 *  n (both triangles or either one, unsorted rows allowed; the graph of P + Pᵀ is used) from AMD
 *  alone (Amestoy, Davis & Duff, SIAM J. Matrix Anal. Appl. 17(4), 1996; SuiteSparse's
 *  amd_l_order): no etree, column counts or supernodes, so about half the time of
 *  sla_cholmod_analyze_cost. method = auto runs it on a sampled subgraph (auto_facts.c).
 *  @param[out] nnz_L  entries of L with the diagonal (AMD's count for its ordering);
 *  @param[out] flops  NDIV + 2·NMULTSUBS_LDL, CHOLMOD's flop count of LLᵀ.
 *  @return SLA_OK; SLA_ENOMEM; SLA_EBACKEND (AMD refused the input). */
sla_status sla_amd_cost(int64_t n, const int64_t *rowptr, const int64_t *colind, double *nnz_L,
                        double *flops);

/* ------------------------------------------------------------------------------------------ */
/* A symbolic analysis handed from method = auto to the backend it chose                       */
/* ------------------------------------------------------------------------------------------ */

/* struct sla_analysis, sla_analysis_new / _free / _take: the backend tier (sla/backend.h). The
 * analyses below are made by each backend's own code (exactly the analysis its create runs,
 * with s->opt.ordering) and are its analyze slot. */

/** CHOLMOD's symbolic analysis of s->A as chol_create runs it (lower triangle of A ∪ Aᵀ,
 *  ordering s->opt.ordering): nnz_factor = nnz(L), flops = CHOLMOD's fl, bytes = 12·nnz(L)
 *  (8-byte value + amortized index). @return SLA_OK, SLA_ENOMEM, SLA_EBACKEND. */
sla_status sla_cholmod_analysis(const sla_solver *s, sla_analysis **out);

/** KLU's analysis (BTF + a fill-reducing ordering of each block, klu_l_analyze) of s->A as
 *  klu_create runs it: nnz_factor = nnz(L + U) + off-diagonal block entries (KLU's estimates,
 *  without pivoting), flops = KLU's est_flops, bytes = 16·nnz_factor (8-byte value + int64
 *  index). @return SLA_OK, SLA_ENOMEM, SLA_EBACKEND, SLA_EUNSUPPORTED (METIS not in the build). */
sla_status sla_klu_analysis(const sla_solver *s, sla_analysis **out);

/** sla_matrix_check(A) and square: the prologue of the analyze_cost functions.
 *  @return SLA_OK, SLA_EINVAL, SLA_ESHAPE naming the shape. */
sla_status sla_direct_check_square(const sla_matrix *A);

/* ------------------------------------------------------------------------------------------ */
/* Numerical singularity (condest.c): the one rule of every direct backend                     */
/* ------------------------------------------------------------------------------------------ */

/** Y = op(A_b)⁻¹ Y in place (Y column-major n × k doubles, k ≤ 3, or 3 + kx for
 *  sla_direct_rcond_first) on the backend's factors of
 *  batch element b, without refinement; ctx is the backend's. For a complex s->dtype, Y is
 *  n × k double complex ((re, im) pairs, 2n doubles a column) and op is N or C (Aᴴ). Returns SLA_OK or an error status
 *  (no message needed: the caller reports). Called from the thread that factored element b. */
typedef sla_status (*sla_factor_solve_fn)(void *ctx, int64_t b, sla_op op, int64_t k, double *y);

/** Doubles of workspace per unknown that sla_direct_rcond needs (10 for complex dtypes: the
 *  estimator's vectors are double complex; 6 would do for real ones). */
#define SLA_RCOND_WORK 10

/** Reciprocal condition estimate of batch element b of s->A (any dtype),
 *    rcond = 1 / (‖RA‖₁ · est ‖(RA)⁻¹‖₁),  R = diag(1 / max_j |a_ij|)  (row equilibration),
 *  est from Higham's 1-norm estimator (LAPACK's dlacn2; zlacn2's complex sign vectors for
 *  complex dtypes, whose transposed solves are op C) on solves with fn: 3 calls with op N
 *  and T (C) typically (the first with k = 2 columns), at most 10. est never exceeds the true norm,
 *  so rcond is never below the true reciprocal condition number. rcond = 0 for a zero row or
 *  non-finite solves, 1 for n = 0. A factorization is numerically singular when
 *  rcond < SLA_RCOND_SINGULAR (solver.h). work [SLA_RCOND_WORK·n] doubles.
 *  *hint (in/out, one per batch element, −1 at first): the column of (RA)⁻¹ that gave the last
 *  estimate; passing it back at the next factorization of the same element (a refactor) adds it
 *  as a start vector, which usually saves a call (2 instead of 3: values that change little keep
 *  their largest column).
 *  @return SLA_OK or fn's status. */
sla_status sla_direct_rcond(const sla_solver *s, int64_t b, sla_factor_solve_fn fn, void *ctx,
                            double *work, int64_t *hint, double *rcond);

/** sla_direct_rcond, whose first solve call (op N, 2–3 columns) also solves the caller's kx
 *  columns x (n × kx column-major, doubles or double complex as fn's Y; x = A_b⁻¹ x in place,
 *  without the row scaling): for backends whose solve reads the factors once per call
 *  (MUMPS), the right-hand sides of sla_solver_create_for come at the price of one call fewer.
 *  *x_solved (may be NULL) = 1 when x was solved (0: a zero row or n = 0 ended the estimate
 *  before any solve, or kx = 0). fn must take k + kx columns.
 *  @return SLA_OK or fn's status (SLA_ENOMEM for the joined block). */
sla_status sla_direct_rcond_first(const sla_solver *s, int64_t b, sla_factor_solve_fn fn,
                                  void *ctx, double *work, int64_t *hint, double *rcond,
                                  int64_t kx, double *x, int *x_solved);

/** 1 if a factorization of s with reciprocal condition estimate rcond is numerically singular
 *  (solve, logdet_grad refused; logdet sign 0): n > 0 and rcond < SLA_RCOND_SINGULAR, unless
 *  options.allow_singular, which leaves only exactly singular factors (zero or null pivots,
 *  each backend's own test) refused. */
static inline int sla_direct_numerically_singular(const sla_solver *s, double rcond)
{
    return s->n > 0 && !s->opt.allow_singular && rcond < SLA_RCOND_SINGULAR;
}

/** The suffix of describe() for a valid factorization whose smallest rcond over the batch is
 *  s->rcond: "" when it is not below SLA_RCOND_SINGULAR, else ", numerically singular" (refused)
 *  or ", numerically singular (options.allow_singular)" (used). */
static inline const char *sla_direct_singular_note(const sla_solver *s)
{
    if (!(s->n > 0 && s->rcond < SLA_RCOND_SINGULAR)) return "";
    return s->opt.allow_singular ? ", numerically singular (options.allow_singular)"
                                 : ", numerically singular";
}

/* ------------------------------------------------------------------------------------------ */
/* Symmetric input                                                                             */
/* ------------------------------------------------------------------------------------------ */

/** The lower triangle (j ≤ i) of the pattern of A ∪ Aᵀ in CSR order, which is also the upper
 *  triangle of the same matrix in CSC order (what CHOLMOD with stype = +1 and MUMPS with
 *  SYM = 2 read). Entry k stands for the pair {(i, j), (j, i)}: src[k] is the CSR slot of A whose
 *  value it takes (a_ij when (i, j) is stored, else its mirror a_ji), mirror[k] the slot of the
 *  other one (−1 if not stored; src[k] on the diagonal). Built once per pattern: O(nnz) time and
 *  memory; a pattern that is not structurally symmetric is merged with its cached transpose
 *  (sla_pattern_cached_transpose), a symmetric one needs none. */
typedef struct sla_symlower {
    const sla_pattern *pattern; /**< borrowed */
    int64_t n, nnz;
    int64_t *rowptr;   /**< [n + 1] */
    int64_t *colind;   /**< [nnz], sorted within each row, colind ≤ row */
    int64_t *src;      /**< [nnz] slot of A */
    int64_t *mirror;   /**< [nnz] slot of the mirror entry, or −1 */
} sla_symlower;

/** @return SLA_OK, SLA_ENOMEM. *out is zeroed on error. */
sla_status sla_symlower_build(const sla_pattern *p, sla_symlower *out);
void sla_symlower_free(sla_symlower *t);
/** out[k] = (double) values[src[k]] for one matrix (values of dtype, [nnz(A)]). */
void sla_symlower_gather(const sla_symlower *t, sla_dtype dtype, const void *values, double *out);

/** Checks that every matrix of the batch A (on t's pattern) is numerically symmetric:
 *    |a_ij − a_ji| ≤ 1000·ε·max(|a_ij|, |a_ji|) + ε·max_kl |a_kl|   (a missing mirror is 0),
 *  with ε of the dtype (1000·ε = 2.2e-13 for float64, 1.2e-4 for float32): rounding in
 *  assembly passes, a genuinely unsymmetric matrix does not. The symmetric backends read one
 *  triangle only, so an unsymmetric input would silently be solved as another matrix. One
 *  linear pass over the pairs (src, mirror) per batch element, no workspace: cheap enough for
 *  every refactor.
 *  @return SLA_OK; SLA_EINVAL naming the batch element, the entry pair and both values, and
 *          suggesting (A + Aᵀ)/2 or method lu. */
sla_status sla_symlower_check(const sla_symlower *t, const sla_matrix *A, const char *method);

/* ------------------------------------------------------------------------------------------ */
/* Errors from loops over a batch (parallel or not)                                            */
/* ------------------------------------------------------------------------------------------ */

/** The lowest failing batch element wins; its message is copied out of the worker thread (error
 *  messages are thread-local) and raised again by the calling thread. Initialize b = INT64_MAX. */
typedef struct sla_batch_error {
    int64_t b;
    sla_status st;
    char msg[400];
} sla_batch_error;

#define SLA_BATCH_ERROR_INIT {.b = INT64_MAX}
/** Records status st of batch element b with the calling thread's last error (thread-safe). */
void sla_batch_error_record(sla_batch_error *e, int64_t b, sla_status st);
/** 1 if an element failed. */
int sla_batch_error_failed(const sla_batch_error *e);
/** Raises the recorded error as "func: A[b]: message" and returns its status. */
sla_status sla_batch_error_raise(const sla_batch_error *e, const char *func);

/** Work on batch element b by thread slot t ∈ [0, nthreads). */
typedef sla_status (*sla_batch_fn)(void *ctx, int64_t b, int t);

/** Runs fn for b = 0 .. batch−1: in an OpenMP parallel loop over nthreads threads when
 *  nthreads > 1, else as a plain loop outside any parallel region. The plain loop matters:
 *  CHOLMOD opens its own parallel regions (CHOLMOD_OMP_NUM_THREADS = 4 in Debian's build) and,
 *  called from inside even a one-thread region, pays for nested teams on every supernode
 *  (measured 5–10× slower factorizations). Stops at nothing: every element runs; the lowest
 *  failing element's error is raised as "func: A[b]: message" (*err holds it). */
sla_status sla_direct_for_each(int64_t batch, int nthreads, sla_batch_fn fn, void *ctx,
                               const char *func, sla_batch_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Dense blocks                                                                                */
/* ------------------------------------------------------------------------------------------ */

/** out (column-major n × k, double, leading dimension n) = in (row-major [n][k] of dtype). */
void sla_dense_to_colmajor(sla_dtype dtype, int64_t n, int64_t k, const void *in, double *out);
/** out (row-major [n][k] of dtype) = in (column-major n × k double, leading dimension ld). */
void sla_dense_from_colmajor(sla_dtype dtype, int64_t n, int64_t k, const double *in, int64_t ld,
                             void *out);
/** info->residual_norm = max ‖B − op(A) X‖₂ and relative_residual = max of it over ‖B‖₂, over the
 *  batch and the columns of B, X [batch][n][nrhs] of s's dtype, summed in double: the residual of
 *  the X returned, for the symmetric backends' float32 solves (factored in double, X rounded to
 *  float; the generic layer's SpMV would sum in float32). r [n] doubles of workspace. */
void sla_direct_residuals(const sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                          const void *X, double *r, sla_solve_info *info);

/** out[s] = g · z[pos[s]] (pos NULL: z[s]) for s < nnz, written as dtype (the log-determinant
 *  gradient from selected inverse entries z). */
void sla_direct_scatter_scaled(sla_dtype dtype, int64_t nnz, double g, const double *z,
                               const int64_t *pos, void *out);

/* ------------------------------------------------------------------------------------------ */
/* Selected inverse of a supernodal Cholesky factor (selinv.c)                                 */
/* ------------------------------------------------------------------------------------------ */

/** A supernodal LLᵀ factor in CHOLMOD's layout (all arrays borrowed). Supernode k holds columns
 *  super[k] .. super[k+1]−1; its row indices are s[pi[k] .. pi[k+1]) (ascending; the first nscol
 *  are its own columns), its values the column-major nsrow × nscol block x[px[k] ..], of which
 *  the upper triangle of the leading nscol × nscol block is not referenced. */
typedef struct sla_supernodal_llt {
    int64_t n, nsuper;
    const int64_t *super, *pi, *px, *s;
    const double *x;
} sla_supernodal_llt;

/** Position in x (and in the selected inverse Z) of entry (max(i,j), min(i,j)) of the factor's
 *  pattern, or −1 if it is not in the pattern. Binary search in one supernode's rows.
 *  col2super [n] maps a column to its supernode (sla_selinv_col2super). */
int64_t sla_supernodal_find(const sla_supernodal_llt *L, const int64_t *col2super, int64_t i,
                            int64_t j);
/** col2super[j] = supernode of column j, [n]. */
void sla_selinv_col2super(const sla_supernodal_llt *L, int64_t *col2super);

/** What a supernodal LLᵀ refactorization on a fixed pattern needs besides the numbers
 *  (supernodal_llt.c): where each entry of the lower triangle of A lands in L->x, and each
 *  supernode's update runs into its ancestors with their relative row indices. Built once. */
/** The cholmod backend factorizes with the own kernels below rather than CHOLMOD's numeric
 *  factorization when the symbolic flop count (CHOLMOD's cm->fl) is at most
 *  SLA_SNODE_OWN_MAX_FLOPS and flops/nnz(L) at least SLA_SNODE_OWN_MIN_DENSITY: sparser
 *  factors stay simplicial (CHOLMOD's up-looking kernel has no per-supernode overhead), larger
 *  ones go to CHOLMOD's BLAS-3 supernodal kernel (measured: docs/direct.md). */
#define SLA_SNODE_OWN_MAX_FLOPS 1e8
#define SLA_SNODE_OWN_MIN_DENSITY 20

typedef struct sla_snode_plan {
    int64_t nnz_a;         /**< entries of the sla_symlower the plan was built on */
    int64_t *apos;         /**< [nnz_a] position in L->x of each of them */
    int64_t *run_ptr;      /**< [nsuper + 1] runs of each supernode */
    int64_t *run_target;   /**< [nruns][4]: ancestor, first and end off-diagonal row, rel offset */
    int32_t *rel;          /**< local rows in the ancestor */
    int64_t nruns, maxrow; /**< maxrow: the tallest supernode (workspace of the factorization) */
} sla_snode_plan;

/** Builds plan for the symbolic supernodal factor L (CHOLMOD layout; perm = L->Perm, P A Pᵀ =
 *  L Lᵀ) and the lower triangle low of A ∪ Aᵀ. @return SLA_OK, SLA_ENOMEM, SLA_EINTERNAL. */
sla_status sla_snode_plan_build(const sla_supernodal_llt *L, const int64_t *perm,
                                const sla_symlower *low, sla_snode_plan *plan);
void sla_snode_plan_free(sla_snode_plan *plan);

/** Numeric LLᵀ into x [xsize] (L's layout; L->x is not read) from the gathered values a
 *  [plan->nnz_a] of the lower triangle, and dinv [n] = 1 / L_jj (the solves multiply by it: a
 *  division per column is the latency of a triangular solve); u [plan->maxrow] workspace.
 *  @return −1, or the first elimination step whose pivot is not positive (x then holds a
 *  partial factor). */
int64_t sla_snode_factorize(const sla_supernodal_llt *L, const sla_snode_plan *plan,
                            const double *a, size_t xsize, double *x, double *dinv, double *u);

/** X = A⁻¹ B with A = Pᵀ L Lᵀ P (perm = L->Perm) for nrhs columns, column-major n × nrhs
 *  blocks (leading dimension n), dinv from sla_snode_factorize; B and X may alias; w [nrhs·n + maxrow] workspace (maxrow: the
 *  tallest supernode, sla_snode_plan). */
void sla_snode_solve(const sla_supernodal_llt *L, const double *dinv, const int64_t *perm,
                     int64_t nrhs, const double *b, double *x, double *w);

/** Selected inverse: Z = (L Lᵀ)⁻¹ restricted to the pattern of L (lower triangle), written in
 *  the layout of L->x (Z has as many entries as x; upper triangles of diagonal blocks are
 *  unspecified). Method: the Takahashi / Erisman–Tinney recurrences (Takahashi, Fagan & Chin
 *  1973; Erisman & Tinney 1975) in supernodal block form (as in SelInv, Lin et al. 2011): for
 *  each supernode from the root down, with J its columns and R its off-diagonal rows,
 *    Y = L_RJ L_JJ⁻¹,  Z_RJ = −Z_RR Y,  Z_JJ = (L_JJ L_JJᵀ)⁻¹ − Z_RJᵀ Y,
 *  where Z_RR (already computed: R is a clique of the filled graph) is gathered into a dense
 *  block. Flops about twice those of the factorization (O(Σ_j |L_{:,j}|²)); memory the size of
 *  x plus max_k r_k² + r_k·c_k + n doubles of workspace.
 *  @return SLA_OK, SLA_ENOMEM, SLA_EINTERNAL (a pattern that is not a filled graph). */
sla_status sla_selinv_llt(const sla_supernodal_llt *L, double *Z);

/** A simplicial LLᵀ factor in CHOLMOD's layout (borrowed): column j holds rows i[p[j] ..
 *  p[j] + nz[j]) (ascending, the diagonal first) and values x at the same positions. */
typedef struct sla_simplicial_llt {
    int64_t n;
    const int64_t *p, *i, *nz;
    const double *x;
} sla_simplicial_llt;

/** Position in x (and Z) of entry (max(i,j), min(i,j)) of the factor's pattern, or −1. */
int64_t sla_simplicial_find(const sla_simplicial_llt *L, int64_t i, int64_t j);

/** Selected inverse Z = (L Lᵀ)⁻¹ on the pattern of a simplicial factor, written in the layout of
 *  L->x: the same recurrences column by column (Takahashi et al. 1973): with column j's
 *  off-diagonal rows r_1 < … < r_m and l_t = L_{r_t j} / L_jj,
 *    Z_{r_t j} = −Σ_s l_s Z_{r_t r_s},   Z_jj = 1/L_jj² − Σ_t l_t Z_{r_t j},
 *  the Z_{r_t r_s} read in one pass over each column r_s through a map row → t. Cost
 *  O(Σ_j Σ_{r ∈ L_{:,j}} |L_{:,r}|) scalar flops (what a simplicial factor is chosen for: few
 *  flops per entry); memory: as many doubles as x, plus 2n workspace.
 *  @return SLA_OK, SLA_ENOMEM, SLA_EINTERNAL (not a filled pattern). */
sla_status sla_selinv_llt_simplicial(const sla_simplicial_llt *L, double *Z);

/* ------------------------------------------------------------------------------------------ */
/* Complex LU (umfpack_z.c): the hooks of sla_backend_umfpack for complex128 / complex64         */
/* ------------------------------------------------------------------------------------------ */

/** The backend hooks (sla_backend) of method lu for complex dtypes, UMFPACK's umfpack_zl_*;
 *  umfpack.c calls them when s->dtype is complex. logdet's sign is [batch][2] (a phase). */
sla_status sla_umfpack_z_create(sla_solver *s);
sla_status sla_umfpack_z_refactor(sla_solver *s);
sla_status sla_umfpack_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                               const sla_solve_params *p, sla_solve_info *info);
sla_status sla_umfpack_z_logdet(sla_solver *s, double *sign, double *logabsdet);
sla_status sla_umfpack_z_logdet_grad(sla_solver *s, const double *g, void *dvalues);
void sla_umfpack_z_destroy(sla_solver *s);

/** One column of a complex direct solve: x = op(A_b)⁻¹ rhs, rhs and x [n] double complex (rhs
 *  may be overwritten); an error status with its message. (_Complex: this header does not
 *  include <complex.h>, whose macro I would clash with the real backends' names.) */
typedef sla_status (*sla_zcolumn_fn)(sla_solver *s, void *ctx, int64_t b, sla_op op,
                                     double _Complex *rhs, double _Complex *x);

/** Every batch element and column of op(A) X = B ([batch][n][nrhs] of the complex dtype)
 *  through fn (complex_util.c). */
sla_status sla_zdirect_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             sla_zcolumn_fn fn, void *ctx);

/** Columns j0 … j0 + k − 1 of batch element b of the block B [batch][n][nrhs] (row-major,
 *  complex128 or complex64 `dtype`) into w [n × k] column-major double complex (MUMPS's dense
 *  right-hand side layout), and back into X. */
void sla_zblock_gather(sla_dtype dtype, const void *B, int64_t b, int64_t n, int64_t nrhs,
                       int64_t j0, int64_t k, double _Complex *w);
void sla_zblock_scatter(sla_dtype dtype, const double _Complex *w, int64_t b, int64_t n,
                        int64_t nrhs, int64_t j0, int64_t k, void *X);

/** The sla_factor_solve_fn of a complex backend from its one-column solve: the k columns of y
 *  (n × k double complex, as doubles) in place, y_j = op(A_b)⁻¹ y_j through fn. */
sla_status sla_zdirect_inverse_columns(sla_solver *s, int64_t b, sla_op op, int64_t k, double *y,
                                       sla_zcolumn_fn fn, void *ctx);

/** The hooks of method ldlt for complex dtypes (mumps_z.c: MUMPS's zmumps, SYM = 2, LDLᵀ of a
 *  complex symmetric A = Aᵀ); mumps.c calls them when s->dtype is complex. */
sla_status sla_mumps_z_create(sla_solver *s);
sla_status sla_mumps_z_refactor(sla_solver *s);
sla_status sla_mumps_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             const sla_solve_params *p, sla_solve_info *info);
sla_status sla_mumps_z_logdet(sla_solver *s, double *sign, double *logabsdet);
sla_status sla_mumps_z_logdet_grad(sla_solver *s, const double *g, void *dvalues);
void sla_mumps_z_destroy(sla_solver *s);
/** The process-wide lock around every MUMPS call, real and complex (mumps.c: MUMPS instances
 *  share Fortran module state). */
void sla_mumps_lock(void);
void sla_mumps_unlock(void);
/** MUMPS's INFOG(1) = e < 0 (INFOG(2) = i2) as a status and a message naming routine
 *  ("dmumps_c", "zmumps_c") and phase (MUMPS user guide, "Error diagnostics"): allocation and
 *  work-array failures SLA_ENOMEM, structural/numerical singularity SLA_ESINGULAR, n out of range
 *  SLA_EINVAL, the rest SLA_EBACKEND. Shared by the real and complex backends. */
SLA_API sla_status sla_mumps_error(const char *routine, int e, int i2, const char *phase);
/** 1 when INFOG(1) is a too-small work array that a larger relaxation cures (−8, −9, −14, −15,
 *  the user guide's advice), after growing *icntl14 (ICNTL(14) ← 2·ICNTL(14) + 20); else 0. */
SLA_API int sla_mumps_retry_workspace(int infog1, int *icntl14);
/** MUMPS's main work array S (factors and frontal matrices), provided by libsla (WK_USER) on
 *  transparent huge pages (sla_huge_alloc) instead of MUMPS's own ALLOCATE: its first touch
 *  is a third of a large factorization's time in 4 KiB page faults (mumps_error.c). */
typedef struct sla_mumps_ws {
    void *p;
    size_t bytes;
    sla_prefault pf;          /* a fresh block is prefaulted while MUMPS factorizes into it */
} sla_mumps_ws;
/** Sizes w for the next factorization from the analysis's INFO(8) (the minimum S in entries;
 *  negative: millions) relaxed by ICNTL(14) percent, entries of entry_size bytes; keeps a large
 *  enough block, else maps a new one. *lwk receives LWK_USER (entries, or minus millions above
 *  2³¹). Below 64 MiB w is left empty (w->p NULL, *lwk 0: MUMPS allocates S itself). The
 *  caller sets WK_USER = w->p. SLA_ENOMEM if the block cannot be mapped. */
sla_status sla_mumps_workspace(sla_mumps_ws *w, int info8, int icntl14, size_t entry_size,
                               int *lwk);
/** Ends the prefault of a freshly mapped w (call when JOB = 2 returns). */
void sla_mumps_workspace_settle(sla_mumps_ws *w);
void sla_mumps_workspace_free(sla_mumps_ws *w);

/** The right-hand side of sla_solver_create_for held by a MUMPS backend (mumps_first.c): b, a
 *  copy of B, and x, its solution from the condition estimate's first call ([batch][n][nrhs]
 *  of s->dtype each); NULL when none is held. conj: told op C. */
typedef struct sla_mumps_first {
    void *b, *x;
    int64_t nrhs;
    int conj;
} sla_mumps_first;
/** Columns beyond which the hint is not taken (the estimate's block stays ≤ 64 + 3 columns). */
#define SLA_MUMPS_FIRST_MAX 64
/** Inside create / refactor: drops what f held, then copies the hint's B for s (allocating x,
 *  and *w: the estimator's n × nrhs column block of entry_bytes entries, for the caller to
 *  sla_free); returns its nrhs, or 0 with *w NULL (no hint, too many columns, no memory:
 *  never an error). The backend
 *  fills f->x through sla_direct_rcond_first and drops f when a column was not solved or the
 *  factorization is refused as singular. */
int64_t sla_mumps_first_hold(const sla_solver *s, sla_mumps_first *f, size_t entry_bytes,
                             void **w);
/** At a solve: 1 and X = the held solution when op's class (C or not), nrhs and B's bytes
 *  match, else 0; f is dropped either way (the held X serves the first solve only). */
int sla_mumps_first_take(const sla_solver *s, sla_mumps_first *f, sla_op op, int64_t nrhs,
                         const void *B, void *X);
void sla_mumps_first_drop(sla_mumps_first *f);
/** METIS_NodeND on the graph of A ∪ Aᵀ (t's pattern, no diagonal): perm[i] = 1-based pivot
 *  position of variable i (MUMPS's PERM_IN; int = MUMPS_INT). Only with SLA_HAVE_METIS.
 *  @return SLA_OK, SLA_ENOMEM, SLA_EBACKEND. */
sla_status sla_mumps_metis_order(const sla_symlower *t, int *perm);

/** The hooks of method cholesky for complex dtypes (cholmod_z.c: CHOLMOD's complex LLᴴ of a
 *  Hermitian positive definite A); cholmod.c calls them when s->dtype is complex. */
sla_status sla_cholmod_z_create(sla_solver *s);
sla_status sla_cholmod_z_refactor(sla_solver *s);
sla_status sla_cholmod_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                               const sla_solve_params *p, sla_solve_info *info);
sla_status sla_cholmod_z_logdet(sla_solver *s, double *sign, double *logabsdet);
sla_status sla_cholmod_z_logdet_grad(sla_solver *s, const double *g, void *dvalues);
void sla_cholmod_z_destroy(sla_solver *s);

#endif
