/* sla/backend.h: the backend tier of libsla — what a library that plugs into sla implements
 * and calls. This is NOT the user API (that is <sla/sla.h>): it is for libsla_mpi (distributed
 * vectors and matrices), a CUDA backend, a matrix-free Newton–Krylov layer, or a user's own
 * solver backend, built as separate libraries that link libsla. libCEED's include/ceed/backend.h
 * plays the same role. The design notes, for engineers plugging in: docs/krylov.md, "The
 * operator table".
 *
 * ============================================================================================
 * Five pieces
 * ============================================================================================
 * 1. Vector spaces (sla_space). A table of kernels on opaque vectors: create/free, dot, norm,
 *    axpby, CG's two fused updates, and the elementwise checks of the solver layer. Every slot
 *    returns sla_status, so a failing MPI call or CUDA launch has a way out. Reductions (dot,
 *    norm, the fused updates' ‖r‖²) may be collective (MPI_Allreduce) or run on a device. The
 *    host space (sla_host_space_init) gives the kernels of local host arrays, split into a fixed
 *    number of chunks summed in chunk order (bit-identical run to run), and calls the space's
 *    `reduce` hook on its partial sums when one is set: a distributed space is a host space of
 *    the locally owned entries plus a reduce hook that calls MPI_Allreduce.
 * 2. Operators (sla_operator). y = op(A) x from a domain space to a range space (different for
 *    LSQR's rectangular A), y = A x fused with xᵀy (CG's pᵀAp), and an optional preconditioner
 *    z = M⁻¹ r. The preconditioner is a separate slot from apply, so M may be built from another
 *    matrix than the one applied (PETSc's Amat/Pmat split: a matrix-free Jacobian as `apply`,
 *    an ILU(0) of an assembled approximation from sla_pc_create() as `precond`). Two kinds are
 *    provided: CSR (sla_csr_operator_init) and a callback (sla_fn_operator_init).
 * 3. The Krylov methods on them: sla_krylov_run() runs CG, BiCGStab, GMRES, MINRES or LSQR on
 *    one system; sla_krylov_solve_batch() runs batch × nrhs systems with the threading rule and
 *    the error collection of the built-in backend. The methods are ONE source each (src/krylov)
 *    and see only the table: a distributed or device space runs the very code the serial
 *    solvers run. Per-solve parameters are an argument (sla_krylov_params), never state.
 * 4. Preconditioners (sla_pc_*): Jacobi, IC(0), ILU(0), AMG and user callbacks, built from a
 *    local CSR matrix (for a distributed matrix: its diagonal block, i.e. block Jacobi), bound
 *    to an operator with sla_operator_set_pc(). A set-up that fails returns its reason as data.
 * 5. Solver backends (sla_backend) registered by name, methods, dtypes and priority with
 *    sla_backend_register(); sla_solver_create() then finds them like the built-in ones. The
 *    solver object stays opaque: a backend reads it through the accessors below.
 *
 * Threads. A space says whether solves on it may run on several OpenMP threads at once
 * (`concurrent`): a distributed space must not, since MPI forbids interleaving collectives of
 * several threads on one communicator, so batched and multi-RHS solves on it run one system
 * after another. An operator says how far it is reentrant (`threading`).
 *
 * Scalars crossing the tables are double whatever the dtype of the vectors (dots and norms are
 * accumulated in double); a complex scalar is a double[2] (re, im), in the two complex slots of
 * a complex space only. Vectors are void pointers the space alone interprets (host arrays of
 * n elements for the host space; a device pointer for a device space).
 *
 * Stability: this tier may change between minor versions (it tracks what the backends need);
 * the user API of <sla/sla.h> does not.
 */
#ifndef SLA_BACKEND_H
#define SLA_BACKEND_H

#include "sla/sla.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Errors, for backends: the thread-local message of sla_last_error()
 * ============================================================================================ */

/** Sets "func: message" as the calling thread's last error and returns status (SLA_FAIL fills
 *  func). Messages name the argument, index, batch element or rank. */
SLA_API sla_status sla_error_set(sla_status status, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** Puts "func: context: " in front of the current message. */
SLA_API sla_status sla_error_wrap(sla_status status, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/** For status < 0: makes the message start with "func: " (the public function called). */
SLA_API sla_status sla_error_attribute(sla_status status, const char *func);

#define SLA_FAIL(status, ...) sla_error_set((status), __func__, __VA_ARGS__)
/** Propagates an error (negative) status; warnings pass through. */
#define SLA_TRY(expr) \
    do { sla_status sla_try_st_ = (expr); if (sla_try_st_ < 0) return sla_try_st_; } while (0)

/* ============================================================================================
 * 1. Vector spaces
 * ============================================================================================ */

typedef struct sla_space sla_space;

/** Reductions of the reduce hook. */
typedef enum sla_reduce_op { SLA_REDUCE_SUM = 0, SLA_REDUCE_MAX = 1 } sla_reduce_op;

/** A vector space: vectors of `n` elements of `dtype` held by this process, and the kernels
 *  on them. Every slot is required unless marked optional; each returns SLA_OK or an error
 *  with a message (never prints or aborts). Aliasing: x and y may be the same vector only
 *  where a slot says so. Collective slots (marked C) must be called by every process of a
 *  distributed space in the same order, which the methods do. */
struct sla_space {
    int64_t n;                 /**< elements of a vector on this process */
    sla_dtype dtype;
    int concurrent;            /**< 1: solves on this space may run at once on several OpenMP
                                *   threads (process-local reductions, reentrant kernels);
                                *   0: one solve at a time, from the calling thread */
    void *ctx;                 /**< the implementation's (sla_host_space for host spaces) */
    /** *v = a new vector (contents undefined); SLA_ENOMEM with a message on failure. */
    sla_status (*vec_create)(const sla_space *V, void **v);
    void (*vec_free)(const sla_space *V, void *v);
    /** (C) *xy = xᵀy (x = y allowed). */
    sla_status (*dot)(const sla_space *V, const void *x, const void *y, double *xy);
    /** (C) *nrm = ‖x‖₂. The host space computes √(xᵀx) with the dot's summation order. */
    sla_status (*norm)(const sla_space *V, const void *x, double *nrm);
    /** y = a·x + b·y; b = 0 overwrites y without reading it; a = b = 0 sets y = 0 without
     *  reading x (a vector not yet written may hold NaN). */
    sla_status (*axpby)(const sla_space *V, double a, const void *x, double b, void *y);
    /** (C) CG's fused update, one pass: x += α·p; r −= α·q; *rr = rᵀr; *rz = rᵀ·diag(d)·r with
     *  d = inv_diag when non-NULL (Jacobi: z never stored), else *rz = *rr. inv_diag is a
     *  vector of this space. */
    sla_status (*cg_update)(const sla_space *V, double alpha, const void *p, const void *q,
                            void *x, void *r, const void *inv_diag, double *rr, double *rz);
    /** CG's new direction p = z + β·p, with z = diag(inv_diag)·r (given as z) when inv_diag. */
    sla_status (*cg_direction)(const sla_space *V, double beta, const void *z,
                               const void *inv_diag, void *p);
    /* ---- the checks and scalings of the solver layer (VJP scaling, finiteness), on blocks
     *      [batch][rows][nrhs] seen as vectors of the space ---- */
    /** (C) *m = max_i |x_i| (x finite). */
    sla_status (*amax)(const sla_space *V, const void *x, double *m);
    /** y = 2^e · x entrywise (exact unless it leaves the dtype's range); y may be x. */
    sla_status (*scale_pow2)(const sla_space *V, int e, const void *x, void *y);
    /** (C) SLA_OK when every entry of x is finite on every process; else SLA_ENONFINITE
     *  (no message) on every process, *bad = this process's first non-finite index or −1. */
    sla_status (*find_nonfinite)(const sla_space *V, const void *x, int64_t *bad);
    /** Optional (NULL: one process holds every entry). (C) Combines `count` doubles across
     *  the processes of the space, in place, in an order that does not depend on timing
     *  (MPI_Allreduce on a fixed communicator does not). The host space calls it on its
     *  partial sums; the methods never call it directly. */
    sla_status (*reduce)(const sla_space *V, sla_reduce_op op, double *values, int count);
    void *reduce_ctx;          /**< for the reduce hook */
    /* ---- complex spaces (complex128 / complex64 vectors) only; NULL in real spaces ----
     * In a complex space the real slots above keep their meaning on the 2n real parts: dot is
     * Re(xᴴy), norm the complex 2-norm, axpby and CG's kernels take real scalars (all a
     * Hermitian CG or MINRES needs: their α, β are real). Methods whose scalars are complex
     * (GMRES, BiCGStab, COCG) call these two, through sla_kzdot / sla_kzaxpby (src/krylov),
     * which fall back to the real slots in a real space: the real path is unchanged. */
    /** (C) xy[0] + i·xy[1] = xᴴy (conj = 1, the inner product) or xᵀy (conj = 0, the bilinear
     *  form of COCG); x = y allowed. */
    sla_status (*zdot)(const sla_space *V, int conj, const void *x, const void *y, double xy[2]);
    /** y = a·x + b·y for complex a = a[0] + i·a[1], b = b[0] + i·b[1], with axpby's rules for
     *  a = 0 and b = 0. */
    sla_status (*zaxpby)(const sla_space *V, const double a[2], const void *x, const double b[2],
                         void *y);
};

/** Chunks of a host space: at most one per thread, at most this many. */
#define SLA_HOST_MAX_CHUNKS 64

/** The context of a host space: a fixed partition of [0, n) into chunks. Each kernel runs chunk
 *  c on one thread (or every chunk on the calling thread for small kernels) and adds the
 *  partial sums in chunk order, so reductions depend only on the partition. */
typedef struct sla_host_space {
    int nchunks;
    int64_t bounds[SLA_HOST_MAX_CHUNKS + 1];   /**< chunk c is [bounds[c], bounds[c + 1]) */
} sla_host_space;

/** Fills V with the host kernels for vectors of n elements of dtype in host memory, split by
 *  `bounds` ([nchunks + 1], e.g. rows balanced by nonzeros) or, when bounds is NULL, into
 *  equal chunks; nchunks is clamped to [1, SLA_HOST_MAX_CHUNKS]. h is the context (V->ctx = h;
 *  it must outlive V). concurrent = 1, reduce = NULL: set V->reduce (and concurrent = 0) after
 *  this call for a distributed space of locally owned entries. */
SLA_API void sla_host_space_init(sla_space *V, sla_host_space *h, int64_t n, sla_dtype dtype,
                                 int nchunks, const int64_t *bounds);

/** Chunks for a host space of n elements whose largest kernel moves `bytes` bytes on the current
 *  thread count: 1 inside a parallel region or when no kernel is large enough to run in
 *  parallel (small problems then give the same bits on any thread count), else one per thread. */
SLA_API int sla_host_space_chunks(int64_t n, double bytes);

/* ============================================================================================
 * 2. Operators
 * ============================================================================================ */

typedef struct sla_operator sla_operator;

/** How far an operator (with its preconditioner) is reentrant. */
typedef enum sla_threading {
    SLA_THREADS_CALLER = 0,    /**< calls user code: only ever from the calling thread */
    SLA_THREADS_PER_BATCH = 1, /**< distinct batch elements may run at once (AMG) */
    SLA_THREADS_ANY = 2        /**< any systems may run at once */
} sla_threading;

/** y = op(A) x for A: domain → range (op = T maps range → domain), with an optional
 *  preconditioner for square A. The methods read nothing else. */
struct sla_operator {
    const sla_space *domain;   /**< the space of x in y = A x */
    const sla_space *range;    /**< the space of y; the same pointer as domain for a square
                                *   operator on one space (every method but LSQR needs that,
                                *   or at least equal n and dtype) */
    void *ctx;                 /**< the kind's */
    /** y = op(A)·x, y ≠ x. SLA_ECALLBACK (with a message) when user code failed. */
    sla_status (*apply)(const sla_operator *A, sla_op op, const void *x, void *y);
    /** Optional (NULL: apply, then domain->dot). Square A: y = op(A)·x and *xy = xᵀy in one
     *  pass (CG's pᵀAp). (C) */
    sla_status (*apply_dot)(const sla_operator *A, sla_op op, const void *x, void *y,
                            double *xy);
    /* ---- preconditioner (square A): z = M⁻¹ r (op = N) or M⁻ᵀ r (op = T) ---- */
    void *pctx;
    /** Optional (NULL: M = I). z ≠ r. */
    sla_status (*precond)(const sla_operator *A, sla_op op, const void *r, void *z);
    /** A vector of the domain when M⁻¹ = diag(inv_diag) (Jacobi; precond is then set too), so
     *  that CG fuses M⁻¹ into its updates; else NULL. */
    const void *inv_diag;
    sla_threading threading;   /**< of apply and precond together */
};

/** The CSR operator of batch element b of a matrix view, with its host spaces. The range space
 *  is chunked by rows balanced by nonzeros; it is also the domain of a square A unless
 *  own_domain, in which case (and always for a rectangular A) the domain is a space of its own
 *  of ncols elements in equal chunks. op = N runs the fused SpMV (+ dot) kernel; op = T the
 *  SpMV layer's transposed product. A complex matrix gives complex spaces and applies op = N,
 *  T or C by the complex SpMV (no fused dot). rowptr32 = 1: op = N reads the pattern's int32
 *  row pointers (built here on first use and kept with the pattern, 4 bytes per row, when
 *  nnz ≤ INT32_MAX; half the row-pointer traffic of the SpMV, ~10 % of its time measured on
 *  2D Poisson); 0: the int64 ones, no extra memory (a caller whose SpMV is a small part of an
 *  iteration, as under AMG, keeps the memory). The results are the same bits either way. The
 *  view must outlive the operator; copying the struct breaks its internal pointers (init it
 *  where it stays). */
typedef struct sla_csr_operator {
    sla_operator op;
    sla_space range, domain;
    sla_host_space hrange, hdomain;
    const sla_matrix *A;
    int64_t b;
    const int32_t *rowptr32;   /* int32 row pointers read by op = N, or NULL (int64) */
} sla_csr_operator;
SLA_API void sla_csr_operator_init(sla_csr_operator *c, const sla_matrix *A, int64_t b,
                                   int nchunks, int own_domain, int rowptr32);

/** A matrix-free operator y = op(A_b) x through the user's callback (square, n × n, host
 *  vectors in equal chunks). threading = SLA_THREADS_CALLER. */
typedef struct sla_fn_operator {
    sla_operator op;
    sla_space space;
    sla_host_space host;
    sla_apply_fn fn;
    void *fn_ctx;
    int64_t b;
} sla_fn_operator;
SLA_API void sla_fn_operator_init(sla_fn_operator *f, int64_t n, sla_dtype dtype,
                                  sla_apply_fn fn, void *fn_ctx, int64_t b, int nchunks);

/* ============================================================================================
 * 3. Krylov methods
 * ============================================================================================ */

/** Parameters of one solve (the solver object's options are never mutated to pass them). */
typedef struct sla_krylov_params {
    double rtol, atol;           /**< stop when ‖b − op(A)x‖₂ ≤ max(rtol·‖b‖₂, atol) */
    int64_t maxiter;             /**< ≥ 0 */
    int64_t restart;             /**< GMRES(m) */
    double damp;                 /**< LSQR */
    int x0_nonzero;              /**< x holds the initial guess on entry (else it is not read) */
    sla_monitor_fn monitor;      /**< may be NULL; called from the calling thread */
    void *monitor_ctx;
    int64_t monitor_every;       /**< ≥ 1 */
    int64_t batch_index, rhs_index;  /**< passed to the monitor and named in messages */
} sla_krylov_params;

/** What one solve did. */
typedef struct sla_krylov_result {
    int64_t iterations;
    sla_reason reason;
    double bnorm;                /**< ‖b‖₂ */
    double residual;             /**< true ‖b − op(A)x‖₂ of the returned x */
    double normal_residual;      /**< LSQR: true ‖op(A)ᵀr − damp²x‖₂; else NaN */
    /** −1 when x is the last iterate; else the iteration whose iterate was returned instead
     *  (0: the initial guess), because it has the smaller true residual (a solve that did not
     *  converge never returns something worse than its best checkpoint: docs/krylov.md) */
    int64_t kept_iteration;
    double last_residual;        /**< true residual of the last iterate when kept_iteration ≥ 0 */
} sla_krylov_result;

/** Solves op(A) x = b (least squares min ‖b − op(A)x‖² + damp²‖x‖² for LSQR) for one system by
 *  method CG, BiCGStab, GMRES, MINRES or LSQR, the one source of each method that the built-in
 *  backend runs. b is a vector of op(A)'s range (A->range for op = N), x of its domain.
 *  Collective over A's spaces. Checks: method iterative, the table complete (a NULL slot is
 *  named: "A->domain->cg_update is NULL"), square spaces for every method but LSQR, params in
 *  range. Converged or not, a finished solve returns SLA_OK with res->reason saying why it
 *  stopped; the monitor is also called at the end when the last iteration was not a multiple
 *  of monitor_every.
 *  @return SLA_OK; SLA_EINVAL; SLA_ENOMEM; SLA_ECALLBACK (monitor, operator, preconditioner);
 *          any error of a table slot. x then holds an unspecified iterate. */
SLA_API sla_status sla_krylov_run(sla_method method, const sla_operator *A, sla_op op,
                                  const sla_krylov_params *P, const void *b, void *x,
                                  sla_krylov_result *res);

/** A batched solve: batch × nrhs independent systems op(A_b) x = b_j, B [batch][nb][nrhs] and
 *  X [batch][nx][nrhs] row-major in host memory (column j of element b is copied into a
 *  contiguous vector when nrhs > 1). */
typedef struct sla_krylov_batch {
    sla_method method;
    sla_op op;
    int64_t batch, nrhs;
    int64_t nb, nx;              /**< rows of a right-hand side and of a solution */
    sla_dtype dtype;
    const void *B;
    void *X;
    sla_krylov_params params;    /**< batch_index and rhs_index are set per system */
    double kernel_bytes;         /**< bytes the largest kernel of one system moves */
    /** Builds in `storage` (storage_bytes, one per thread, reused) the operator of batch
     *  element b with host kernels in nchunks chunks, and points *A at it. Called from the
     *  thread that runs the system; first once for b = 0 with nchunks = 1 on the calling
     *  thread, to read the spaces' `concurrent` and the operator's `threading`. */
    sla_status (*operator_for)(void *ctx, int64_t b, int nchunks, void *storage,
                               const sla_operator **A);
    size_t storage_bytes;
    void *ctx;
} sla_krylov_batch;

/** Runs every system of J: in parallel over systems (one per thread, single-threaded kernels)
 *  when there are at least as many as threads and the spaces are concurrent and the operator
 *  is SLA_THREADS_ANY without monitor; over batch elements for SLA_THREADS_PER_BATCH; else one
 *  after another on the calling thread with threaded kernels. Results are the same run to run
 *  for a given thread count. Fills info with the maxima over the systems (iterations,
 *  residuals), the worst reason and converged; a system that returned a kept iterate is named
 *  in info->description. The first error by system index is raised.
 *  @return SLA_OK (info says whether every system converged) or the error. */
SLA_API sla_status sla_krylov_solve_batch(const sla_krylov_batch *J, sla_solve_info *info);

/* ============================================================================================
 * 4. Preconditioners
 * ============================================================================================ */

typedef struct sla_pc sla_pc;

typedef struct sla_pc_options {
    sla_precond kind;            /**< JACOBI, IC0, ILU0, AMG or USER */
    int absolute_diagonal;       /**< Jacobi: M = diag(|a_ii|), SPD for indefinite A (MINRES) */
    sla_precond_fn user;         /**< USER */
    void *user_ctx;
} sla_pc_options;

/** Room for the reason a set-up failed, as sla_pc_create() returns it. */
#define SLA_PC_REASON_LEN 160

/** Set-up (symbolic once, numeric per batch element) of a preconditioner of the square local
 *  CSR matrix P (finite values): the Pmat, which need not be the operator applied. AMG may
 *  borrow float64 values: they must stay valid until the next update or free.
 *  @param[out] reason  NULL, or SLA_PC_REASON_LEN bytes: on failure, why, as one clause without
 *                      the function name or hints ("Jacobi: zero or missing diagonal entry in
 *                      row 914 (batch element 0)"); "" on success.
 *  @return SLA_OK; SLA_EBREAKDOWN (a pivot or diagonal, naming row and batch element);
 *          SLA_EUNSUPPORTED (not in this build); SLA_EINVAL; SLA_ENOMEM. *out NULL on error. */
SLA_API sla_status sla_pc_create(const sla_matrix *P, const sla_pc_options *o, sla_pc **out,
                                 char *reason);
/** A preconditioner without a matrix (n unknowns): the user kind only. */
SLA_API sla_status sla_pc_create_matrix_free(int64_t n, sla_dtype dtype, int64_t batch,
                                             const sla_pc_options *o, sla_pc **out);
/** New values on the same pattern: numeric set-up only. On failure the preconditioner must not
 *  be applied until an update succeeds; reason as in sla_pc_create(). */
SLA_API sla_status sla_pc_update(sla_pc *pc, const sla_matrix *P, char *reason);
/** Before applies with op (ILU(0) builds its transposed factors for op = T). Not thread-safe. */
SLA_API sla_status sla_pc_prepare(sla_pc *pc, sla_op op);
/** z = M_b⁻¹ r (op = N) or M_b⁻ᵀ r (op = T), host arrays of P's rows, z ≠ r. */
SLA_API sla_status sla_pc_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z);
/** [n] of dtype: the inverse diagonal of the Jacobi kind for element b, else NULL. */
SLA_API const void *sla_pc_inv_diag(const sla_pc *pc, int64_t b);
/** SLA_THREADS_ANY (Jacobi, IC(0), ILU(0)), SLA_THREADS_PER_BATCH (AMG), SLA_THREADS_CALLER
 *  (user). */
SLA_API sla_threading sla_pc_threading(const sla_pc *pc);
/** "jacobi", "ic0", ... or AMG's own description; owned by pc. */
SLA_API const char *sla_pc_describe(const sla_pc *pc);
SLA_API void sla_pc_free(sla_pc **pc);

/** Where an operator's precond slot finds its preconditioner: storage the caller keeps. */
typedef struct sla_pc_binding {
    const sla_pc *pc;
    int64_t b;
} sla_pc_binding;
/** Binds batch element b of pc as A's preconditioner: precond, pctx = bind, inv_diag (the host
 *  array of the Jacobi kind: a vector of host spaces, the local one of a distributed space; a
 *  device space sets its own copy), and A->threading lowered to pc's. */
SLA_API void sla_operator_set_pc(sla_operator *A, sla_pc_binding *bind, const sla_pc *pc,
                                 int64_t b);

/* ============================================================================================
 * 5. Solver backends
 * ============================================================================================ */

/** Per-solve parameters handed to a backend's solve (from the options, or set by the generic
 *  layer for an adjoint solve: scaled atol, x0 = 0). Direct backends may ignore them. */
typedef struct sla_solve_params {
    double rtol, atol;
    int64_t maxiter;
    int x0_nonzero;              /**< X holds the initial guess on entry */
} sla_solve_params;

/** A symbolic analysis that method = auto ran and hands to the backend it chose, instead of
 *  letting it analyse the same pattern again (a backend's analyze slot makes it; its create
 *  takes it with sla_analysis_take()). */
typedef struct sla_analysis {
    const struct sla_backend *backend; /**< the backend whose create takes it */
    double nnz_factor;              /**< predicted entries of the factor(s) L (+ U) */
    double flops;                   /**< predicted flops of one numeric factorization */
    double bytes;                   /**< predicted memory of one numeric factorization */
    void *state;                    /**< backend-private */
    void (*free_state)(void *state);
} sla_analysis;

/** What a solver backend implements. The generic layer validates every argument first, so a
 *  backend may assume: the matrix (sla_solver_matrix) is a valid view with finite values and
 *  square unless the method is lsqr, or the solver is matrix-free; B is finite with op(A)'s row
 *  count of rows, X has room for its column count, nrhs ≥ 1, op is N or T; the options have the
 *  method resolved (never auto) and defaults filled in. A backend keeps its state with
 *  sla_solver_set_impl(), writes its description in create, and reports errors with a message
 *  naming the column or batch element. */
typedef struct sla_backend {
    sla_backend_info info;
    /** Symbolic analysis + numeric set-up for every batch element. */
    sla_status (*create)(sla_solver *s);
    /** Numeric set-up again after the matrix values changed (same pattern). */
    sla_status (*refactor)(sla_solver *s);
    /** op(A_b) X_b = B_b for every batch element; fills info's iterations, residual_norm,
     *  relative_residual, converged, reason, rcond (the generic layer fills method, precond,
     *  description). info arrives with residual_norm = relative_residual = −1: a backend that
     *  measures them takes maxima from there; one that leaves −1 gets the true residual from
     *  the generic layer (one host SpMV: a backend whose vectors are not in host memory must
     *  measure its own). On an error return the generic layer sets converged 0, reason error. */
    sla_status (*solve)(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                        const sla_solve_params *p, sla_solve_info *info);
    /** Optional (NULL: SLA_EUNSUPPORTED): sign and log|det| per batch element. */
    sla_status (*logdet)(sla_solver *s, double *sign, double *logabsdet);
    /** Optional: dvalues[b][s] = g[b]·(A_b⁻ᵀ)[r_s, c_s]; g never NULL here. */
    sla_status (*logdet_grad)(sla_solver *s, const double *g, void *dvalues);
    void (*destroy)(sla_solver *s);
    /** Optional: the symbolic analysis create would run (predicted factor entries, flops,
     *  bytes), for method = auto's cost rules; *out is handed over to create. */
    sla_status (*analyze)(const sla_solver *s, sla_analysis **out);
    /** Optional (NULL: host memory): the space the generic layer uses for its checks and
     *  scalings (finiteness, the VJP's power-of-two scaling, norms) of a block of `count`
     *  entries of the solver's dtype; host is storage for a host space's context. */
    sla_status (*block_space)(const sla_solver *s, int64_t count, sla_space *V,
                              sla_host_space *host);
    /** Where the backend's matrices and blocks live. SLA_MEM_HOST (0, the default of a struct
     *  filled without it): host views only. SLA_MEM_DEVICE: device views only (matrix.h):
     *  sla_solver_create() sends a device view to it (options.backend NULL or "auto": the
     *  backend named "cuda"), refuses a host view for it and a device view for any other; its
     *  solves take device blocks, so it must set block_space (a space of device vectors) and
     *  pattern_outer, and measure its own residuals. */
    sla_memspace memory;
    /** Optional (NULL: the host kernel): the solve VJP's pattern outer product on the backend's
     *  memory, dvalues[b][k] = alpha · Σ_j u[b][r_k][j] · v[b][c_k][j] over the nrhs columns of
     *  the [batch][n][nrhs] blocks u and v (overwritten, not accumulated). */
    sla_status (*pattern_outer)(const sla_solver *s, double alpha, const void *u, const void *v,
                                int64_t nrhs, void *dvalues);
} sla_backend;

#define SLA_METHOD_BIT(m) (1u << (unsigned)(m))
#define SLA_DTYPE_BIT(d) (1u << (unsigned)(d))
#define SLA_BOTH_DTYPES (SLA_DTYPE_BIT(SLA_FLOAT64) | SLA_DTYPE_BIT(SLA_FLOAT32))

/** Most backends registered at once besides the built-in ones. */
#define SLA_MAX_REGISTERED_BACKENDS 32

/** Adds backend b (borrowed: it must stay valid until unregistered) to the registry, after
 *  which sla_solver_create() finds it by name (options.backend) and, for method auto or an
 *  explicit method, by priority among the available backends serving (method, dtype).
 *  Thread-safe; call it once when the library loads.
 *  @return SLA_OK; SLA_EINVAL (NULL, no name, no create/solve/destroy, or the name is taken:
 *          the message names it); SLA_ENOMEM (registry full). */
SLA_API sla_status sla_backend_register(const sla_backend *b);
/** Removes the backend registered under `name` (after every solver using it was freed).
 *  @return SLA_OK; SLA_EINVAL (no registered backend of that name; built-ins cannot be removed). */
SLA_API sla_status sla_backend_unregister(const char *name);

/* ---- the solver object, for backends ---- */

/** The matrix view (pattern, dtype, batch, borrowed values); NULL for a matrix-free solver. */
SLA_API const sla_matrix *sla_solver_matrix(const sla_solver *s);
/** The matrix-free operator callback and its context (NULL when there is a matrix). */
SLA_API sla_apply_fn sla_solver_apply_fn(const sla_solver *s, void **ctx);
/** The options as resolved at create (method never auto, defaults filled). */
SLA_API const sla_solver_options *sla_solver_options_resolved(const sla_solver *s);
/** The backend's state. */
SLA_API void *sla_solver_impl(const sla_solver *s);
SLA_API void sla_solver_set_impl(sla_solver *s, void *impl);
/** Replaces the one-line description (cut at SLA_DESCRIPTION_LEN on a character boundary). */
SLA_API void sla_solver_set_description(sla_solver *s, const char *text);
/** Sets the reciprocal condition estimate reported by info and sla_solver_rcond(). */
SLA_API void sla_solver_set_rcond(sla_solver *s, double rcond);
/** The state of s's analysis if it was made for backend b (the caller then owns it and the
 *  analysis is freed), else NULL. */
SLA_API void *sla_analysis_take(sla_solver *s, const sla_backend *b);
/** A new analysis for backend b with a zeroed state of state_size bytes freed by free_state;
 *  NULL on allocation failure. */
SLA_API sla_analysis *sla_analysis_new(const sla_backend *b, size_t state_size,
                                       void (*free_state)(void *state));
/** Frees *a (state included) and sets it to NULL; NULL is a no-op. */
SLA_API void sla_analysis_free(sla_analysis **a);

/** info ← the worst of info and one system's result (maxima of iterations and residuals,
 *  worst reason, converged 0 unless converged): how a backend that runs its own systems
 *  reports them like sla_krylov_solve_batch(). info starts as the generic layer hands it. */
SLA_API void sla_krylov_result_merge(sla_solve_info *info, const sla_krylov_result *r);

/** info ← the worst of info and one solve's info `one` whose right-hand side was scaled by
 *  2^−e (its residuals are scaled back by 2^e); iterations add up: how a VJP made of several
 *  solves (the least-squares VJP, serial and distributed) reports them. */
SLA_API void sla_solve_info_merge_scaled(sla_solve_info *info, const sla_solve_info *one, int e);

/* ============================================================================================
 * LOBPCG on a vector space (distributed eigensolvers)
 * ============================================================================================ */

/** Y = OP_b · X for batch element b: X and Y column-major blocks of this process's n rows and
 *  m columns (vector j at X + j·n; Y never aliases X, except for the preconditioner, which
 *  is called with Y == X and works in place). Collective where the operator is. */
typedef sla_status (*sla_block_fn)(void *ctx, int64_t b, int64_t n, int64_t m, const double *X,
                                   double *Y);

/** The problem of sla_lobpcg_run(): the k extreme eigenpairs of A_b (or of the pencil
 *  (A_b, M_b)) whose rows are spread over processes. */
typedef struct sla_lobpcg_problem {
    int64_t n;                 /**< rows held by this process (0 allowed) */
    int64_t N;                 /**< global rows, the same on every process */
    const int64_t *global;     /**< [n] the global index of each local row, or NULL (n = N):
                                *   the start block is then the serial one, restricted */
    int64_t batch;             /**< ≥ 1 */
    const sla_space *space;    /**< its reduce hook sums the partial Gram products and norms
                                *   over the processes (the same bits on all); NULL: one
                                *   process */
    sla_block_fn apply_A;      /**< A_b (required) */
    void *A_ctx;
    sla_block_fn apply_M;      /**< M_b, SPD (NULL: the standard problem) */
    void *M_ctx;
    sla_block_fn precond;      /**< T ≈ A_b⁻¹ on residual blocks, in place (NULL: none) */
    void *P_ctx;
    const double *norm_A;      /**< [batch] ‖A_b‖₁: the residual scale */
    const double *norm_M;      /**< [batch] ‖M_b‖₁ (with M) */
} sla_lobpcg_problem;

/** Runs the LOBPCG of sla_eigsh (src/eig/lobpcg.c, Knyazev 2001 with Hetmaniuk–Lehoucq's basis
 *  and SVQB: the one source) on the problem above: largest = 0 gives the k smallest
 *  eigenvalues (SA), 1 the k largest (LA); block ≥ k with 3·block ≤ N; stops when every one of
 *  the k residuals ‖A x − θ M x‖₂ ≤ tol·(‖A‖₁ + |θ|‖M‖₁)·‖x‖₂ or after maxiter iterations.
 *  Every process must call it with the same arguments except n, global and the rows; every
 *  branch depends on reduced values only, so the processes make the same calls to the hooks.
 *  @param[out] lambda  [batch][k] Ritz values in the order LOBPCG holds them (ascending for
 *                      SA, descending for LA), the same on every process.
 *  @param[out] X       [batch] blocks n × k column-major: this process's rows of the Ritz
 *                      vectors (M-orthonormal with M).
 *  @param[out] nconv   [batch] converged wanted pairs; stats (may be NULL): [3] iterations,
 *                      operator applications (vectors), preconditioner applications.
 *  @return SLA_OK (also when not converged: see nconv); SLA_EINVAL (sizes); errors of the
 *          hooks; SLA_EBREAKDOWN; SLA_ENOMEM. Not a check of agreement: a local error of one
 *          process must be agreed by the caller's hooks (they are collective). */
SLA_API sla_status sla_lobpcg_run(const sla_lobpcg_problem *pb, int largest, int64_t k,
                                  int64_t block, int64_t maxiter, double tol, double *lambda,
                                  double *X, int64_t *nconv, int64_t *stats);

/* ============================================================================================
 * The eigenvector VJP's tie rule (distributed eigensolvers)
 * ============================================================================================ */

/** The tie bound of sla_eigsh_vjp and sla_eigsh_generalized_vjp: two eigenvalues closer than
 *  this × the scale (‖A‖₁; max |λ| of the block with M) are one repeated eigenvalue
 *  (1e-8 for float64 eigenpairs, 1e-5 for float32). */
SLA_API double sla_eig_vjp_tie(sla_dtype dtype);

/** The in-block part of w_i = (A − λ_i M)⁺ g_i for every i of one batch element, with the
 *  refusal of a loss that depends on the basis of a repeated eigenvalue inside the block: the
 *  rule of sla_eigsh_vjp (src/eig/vjp.c) on this process's n rows.
 *    W[r][i] += Σ_{j ≠ i, λ_j ≠ λ_i} V[r][j]·(v_jᵀg_i)/(λ_j − λ_i)     (row-major n × k),
 *  skipping the i with gnorm[i] = 0. A pair with |λ_j − λ_i| ≤ tie·scale is a tie: allowed
 *  only when |v_jᵀg_i − v_iᵀg_j| ≤ tie·(‖g_i‖ + ‖g_j‖) (the loss does not see the basis).
 *  @param[in] api    the public function named in the message.
 *  @param[in] lam    [k] eigenvalues; V [n][k] this process's rows of the eigenvectors.
 *  @param[in] VtG    [k·k], VtG[j + i·k] = v_jᵀg_i over ALL rows (reduced by the caller).
 *  @param[in] gnorm  [k] ‖g_i‖₂ over all rows.
 *  @param[in] batch  the batch element, for the message.
 *  @return SLA_OK; SLA_EINVAL naming the pair (the same on every process: it reads reduced
 *          values only). Local. */
SLA_API sla_status sla_eig_vjp_in_block(const char *api, const double *lam, const double *V,
                                        const double *VtG, int64_t n, int64_t k, double scale,
                                        double tie, const double *gnorm, int64_t batch,
                                        double *W);

#ifdef __cplusplus
}
#endif
#endif
