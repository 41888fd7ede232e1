/* Private to src/eig: the problem (A promoted to float64), batched operators, the shifted
 * matrix A − σI, small dense helpers and the method drivers. Blocks inside src/eig are
 * column-major n × m (vector j at X + j·n); the public API is row-major [batch][n][k]. */
#ifndef SLA_EIG_INTERNAL_H
#define SLA_EIG_INTERNAL_H

#include "core/internal.h"
#include "core/kernels.h"
#include "sla/eig.h"

/* Errors raised anywhere inside the eigensolver are sla_eigsh's: the message starts with the
 * public function the caller used (sla.h's convention), not with an internal helper's name.
 * The VJPs name themselves (vjp.c, vjp_gen.c). */
#define EIG_FAIL(...) SLA_FAIL_AS("sla_eigsh", __VA_ARGS__)
#define EIG_CHECK_ARG(...) SLA_CHECK_ARG_AS("sla_eigsh", __VA_ARGS__)

/* How far (× ‖A‖₁) a shift-invert shift stays from an eigenvalue it would otherwise sit on: the
 * Gershgorin bound of SA/LA (which a graph Laplacian's λ = 0 attains) and a σ found singular.
 * At 1e-13 the operator's largest |θ| was ~1e12 × the other wanted ones, and orthogonalizing
 * against its vector cancelled ~12 digits of theirs: Lanczos stalled at residuals 1e-1 (2D
 * grid Laplacian, sigma = 0 or SM). At 1e-7 the ratio is ~1e4 and the "nearest σ" order can
 * only change between eigenvalues equidistant from σ to 1e-7·‖A‖₁. */
#define SLA_EIG_SHIFT_MARGIN 1e-7

/* The matrix in float64 with the facts every method needs. */
typedef struct eig_problem {
    const sla_pattern *p;
    int64_t n, nnz, batch;
    sla_matrix Ad;              /* float64 view: A itself or a promoted copy */
    sla_dtype dtype;            /* the caller's dtype */
    double *owned;              /* the promoted copy (float32 input), else NULL */
    double *norm1;              /* [batch] ‖A_b‖₁ */
    double *gersh_lo, *gersh_hi;/* [batch] Gershgorin bounds of the spectrum */
    /* Generalized problem A v = λ M v (has_M): M in float64 with A's batch (a batch-1 M is
     * copied per element), ‖M_b‖₁ and M's Gershgorin bounds. */
    int has_M;
    const sla_pattern *pm;
    int64_t nnzm;
    sla_matrix Md;
    double *mowned;
    double *normM, *mgersh_lo, *mgersh_hi;  /* [batch] each */
} eig_problem;

sla_status eig_problem_init(const sla_matrix *A, eig_problem *P);
/* Adds the mass matrix M (checked by the caller: n × n, dtype of A, batch 1 or A's). */
sla_status eig_problem_set_mass(eig_problem *P, const sla_matrix *M);
/* The scale of the residual ‖A x − λ M x‖₂/‖x‖₂ of batch element b: ‖A‖₁, or ‖A‖₁ + |λ|‖M‖₁
 * with M (a zero scale counts as 1). */
double eig_res_scale(const eig_problem *P, int64_t b, double lambda);
/* Float64 view of batch element b of M (has_M only). */
sla_matrix eig_mass_view(const eig_problem *P, int64_t b);
void eig_problem_free(eig_problem *P);


/* A batched operator Y_b = OP_b X_b on column-major blocks. X[b] == NULL marks batch element b
 * inactive (Y[b] untouched); m[b] columns per element. count accumulates applied vectors. */
typedef struct eig_op {
    int64_t n, batch;
    sla_status (*apply)(struct eig_op *op, const int64_t *m, double *const *X, double *const *Y);
    void *ctx;
    int64_t count;
    double *in, *out;           /* packing buffers [batch][n][mmax] */
    int64_t cap;                /* their capacity in doubles */
} eig_op;

sla_status eig_op_apply(eig_op *op, const int64_t *m, double *const *X, double *const *Y);
void eig_op_free(eig_op *op);
/* OP = scale·A (SpMV); ctx is the caller's and must outlive op. */
typedef struct eig_spmv_ctx { const eig_problem *P; double scale; } eig_spmv_ctx;
void eig_op_spmv(eig_op *op, eig_spmv_ctx *ctx);
/* OP = the solver: solve with s (OP ≈ A⁻¹ or (A − σI)⁻¹); warnings of iterative solvers are
 * ignored (preconditioner use). A solver of batch 1 may serve every batch element. */
void eig_op_solver(eig_op *op, int64_t n, int64_t batch, sla_solver *s);
/* OP = (A − σM)⁻¹ M: the batched SpMV with M, then the solve with s (generalized shift-invert;
 * P must have M and outlive op). */
typedef struct eig_massinv_ctx { const eig_problem *P; sla_solver *s; } eig_massinv_ctx;
void eig_op_solver_mass(eig_op *op, eig_massinv_ctx *ctx);
/* OP = a user preconditioner callback, per batch element and vector. */
typedef struct eig_cb_ctx { sla_precond_fn fn; void *ctx; sla_dtype dtype; } eig_cb_ctx;
void eig_op_callback(eig_op *op, int64_t n, int64_t batch, eig_cb_ctx *cb);

/* A − σ_b I (or A − σ_b M) on a pattern that holds the whole diagonal (and M's pattern). */
typedef struct eig_shifted {
    sla_pattern *pd;            /* A's pattern (retained) or A's plus the missing diagonal
                                 * (plus M's pattern with M) */
    int64_t nnz;
    int64_t *diag;              /* [n] slot of (i, i) in pd */
    int64_t *slot;              /* [nnz of A] slot in pd of A's slot s; NULL if pd == A's */
    int64_t *mslot;             /* [nnz of M] slot in pd of M's slot t; NULL without M */
    double *values;             /* [batch][nnz] */
} eig_shifted;

sla_status eig_shifted_init(const eig_problem *P, eig_shifted *S);
/* values = sgn·(A_b − shift[b]·I), or sgn·(A_b − shift[b]·M_b) with M (shift [batch]). */
void eig_shifted_set(const eig_problem *P, eig_shifted *S, double sgn, const double *shift);
void eig_shifted_free(eig_shifted *S);
/* What a factorization of A − σI is for (eig_factor). All three solve with A − σI when it is
 * numerically singular (options.allow_singular): that is the mechanism of inverse iteration.
 *  EIG_SHIFT            shift-invert at a σ of the caller's: a factorization that is singular
 *                       (a zero pivot) or numerically singular (rcond < SLA_RCOND_SINGULAR: σ
 *                       an eigenvalue to working accuracy, whose huge Ritz value would swamp the
 *                       others) moves σ;
 *  EIG_SHIFT_VERIFIED   shift-invert at a σ off the spectrum, proved by Cholesky (SLA_ENOTSPD
 *                       otherwise); never moved;
 *  EIG_SHIFT_EIGENVALUE σ is an eigenvalue on purpose (the eigenvector adjoint, vjp.c): moved
 *                       only when the factorization is exactly singular (a zero pivot leaves
 *                       nothing to solve with). */
typedef enum eig_shift_kind { EIG_SHIFT, EIG_SHIFT_VERIFIED, EIG_SHIFT_EIGENVALUE } eig_shift_kind;

/* Factors sgn·(A_b − σ_b I) into *s for kind: created on the first call (fopt, NULL: auto;
 * EIG_SHIFT_VERIFIED forces Cholesky, whose success proves sgn·(A − σI) SPD, and returns
 * SLA_ENOTSPD otherwise), refactored on later calls (symbolic analysis reused). Where kind
 * moves σ (see there), it is retried at σ + step·‖A‖₁, then ×100, three times; a numerically
 * singular factorization still so after the last is kept (an ill-conditioned A or M).
 * sigma_used [batch] receives the shifts factored. */
sla_status eig_factor(const eig_problem *P, eig_shifted *S, const double *sigma, double sgn,
                      const sla_solver_options *fopt, eig_shift_kind kind, sla_solver **s,
                      double *sigma_used, double step);

/* Small dense helpers (blockops.c). */
uint64_t eig_seed(int64_t b);
void eig_random(double *x, int64_t n, uint64_t *state);
/* H (a × b) = Vᵀ W for V n × a, W n × b. */
void eig_tn(int64_t n, int64_t a, int64_t b, const double *V, const double *W, double *H);
/* W (n × b) += alpha · V (n × a) · H (a × b, leading dimension ldh). */
void eig_nn(int64_t n, int64_t a, int64_t b, double alpha, const double *V, const double *H,
            int64_t ldh, double *W);
/* Eigenvalues ascending (w) and orthonormal eigenvectors (overwriting G, m × m, ld m). */
sla_status eig_syev(int64_t m, double *G, double *w);
/* A start block of m orthonormal columns: the first min(nv0, m) columns of v0 (n × nv0, may be
 * NULL), then pseudo-random ones. */
sla_status eig_start_block(int64_t n, int64_t m, const double *v0, int64_t nv0, double *X,
                           uint64_t *state);
/* The same, M-orthonormal (Mb as in eig_orth_m). */
sla_status eig_start_block_m(int64_t n, const sla_matrix *Mb, int64_t m, const double *v0,
                             int64_t nv0, double *X, uint64_t *state);
/* The mass matrix of one batch element as the block kernels apply it: a float64 batch-1
 * matrix on this process (Mb), or a callback (apply, e.g. a distributed SpMV on the local rows
 * of M) when apply is not NULL. */
typedef struct eig_mass {
    const sla_matrix *Mb;
    sla_status (*apply)(const struct eig_mass *M, int64_t n, int64_t m, const double *X,
                        double *Y);
    void *ctx;
    int64_t b;                  /* the batch element, for apply */
} eig_mass;
/* Y (n × m) = M·X, column-major. */
sla_status eig_mass_do(const eig_mass *M, int64_t n, int64_t m, const double *X, double *Y);

/* The reduction hook of the block kernels: R is NULL (one process) or a space of the n local
 * rows whose reduce hook sums the partial Gram products and squared norms across processes
 * (sla/backend.h), so that a distributed LOBPCG runs these kernels on its local rows. The
 * functions without _r are these with R = NULL (and M as a matrix). */
sla_status eig_tn_r(const sla_space *R, int64_t n, int64_t a, int64_t b, const double *V,
                    const double *W, double *H);
sla_status eig_orth_mr(const sla_space *R, int64_t n, const eig_mass *M, const double *V,
                       const double *Z, int64_t nv, double *W, int64_t nw, double drop, int fill,
                       uint64_t *state, double *B, int64_t *nkept);
/* global [n]: the global row index of each local row of a distributed block (NULL: the rows
 * are 0..n−1, N = n): the pseudo-random columns are then those of the serial start block of
 * N rows, restricted to these rows (entry (g, j) is the (j·N + g)-th number of the stream). */
sla_status eig_start_block_mr(const sla_space *R, int64_t n, const eig_mass *M, int64_t m,
                              const double *v0, int64_t nv0, double *X, uint64_t *state,
                              const int64_t *global, int64_t N);
/* Orthonormalizes the nw columns of W against the nv orthonormal columns of V and among
 * themselves (two passes of projection + SVQB). Directions whose norm after projection falls
 * below drop·(their norm before) are numerically dependent: dropped (fill = 0, the kept columns
 * are compacted to the front) or replaced by random directions (fill = 1, state used).
 * If B is not NULL (nw × nw, column-major), W_in = V·C + W_out·B with B's rows of replaced
 * directions zero (only with fill = 1). Returns the number of columns kept in *nkept. */
sla_status eig_orth(int64_t n, const double *V, int64_t nv, double *W, int64_t nw, double drop,
                    int fill, uint64_t *state, double *B, int64_t *nkept);
/* The same in the M-inner product xᵀMy (Mb: a float64 n × n matrix of batch 1; NULL: eig_orth):
 * V and the result are M-orthonormal. Z = M·V (n × nv) if the caller keeps it (the projections
 * then need no product with M), else NULL. */
sla_status eig_orth_m(int64_t n, const sla_matrix *Mb, const double *V, const double *Z, int64_t nv,
                      double *W, int64_t nw, double drop, int fill, uint64_t *state, double *B,
                      int64_t *nkept);
/* Y (n × m) = Mb·X (n × m), column-major; Mb NULL: copy. */
sla_status eig_mass_apply(const sla_matrix *Mb, int64_t n, int64_t m, const double *X, double *Y);

/* Block and basis sizes of the iterative methods (sizes.c, rules in eig.h): m the LOBPCG block,
 * p the Lanczos block, ncv the Lanczos/ARPACK basis. */
typedef struct eig_sizes { int64_t m, p, ncv; } eig_sizes;
/* The defaults, fitted to n. */
void eig_default_sizes(int64_t n, int64_t k, eig_sizes *s);
/* 1 if method m can run with s (LOBPCG: k ≤ m, 3m ≤ n; Lanczos: k + p ≤ ncv ≤ n − p). */
int eig_sizes_fit(int64_t n, int64_t k, const eig_sizes *s, sla_eigsh_method m);
/* The sizes method m runs with: options.block_size / options.ncv as given (> 0), else the
 * defaults; a value given that m cannot use is SLA_EINVAL naming the field. */
sla_status eig_sizes_for(const sla_eigsh_options *o, int64_t n, int64_t k, sla_eigsh_method m,
                         eig_sizes *s);

/* What a driver returns for every batch element. */
typedef struct eig_result {
    int64_t k;
    double *lambda;             /* [batch][k] */
    double *X;                  /* [batch] blocks n × k, column-major */
    int64_t *nconv;             /* [batch] */
    int64_t iterations, restarts, op_apps, prec_apps, spmv, factorizations;
    double sigma;               /* NAN if none */
    char what[200];             /* what the driver did (method details) */
    /* the multiplicity rule (eigsh.c) could not confirm every copy of a repeated eigenvalue:
     * that many pairs of each batch element (at most) are not counted as converged, and note
     * says why (the message of the SLA_NOT_CONVERGED returned) */
    int64_t uncertain;
    char note[240];
} eig_result;

sla_status eig_result_init(eig_result *R, int64_t n, int64_t batch, int64_t k);
/* SLA_OK when nconv ≥ k, else SLA_NOT_CONVERGED with sla_eigsh's message (counts, the largest
 * residual and tol). */
sla_status eig_converged_status(int64_t nconv, int64_t k, int has_M, double maxres, double tol);
void eig_result_free(eig_result *R);

/* True residuals ‖A x_i − λ_i x_i‖₂ for the k columns of every batch element; also replaces
 * λ_i by the Rayleigh quotient x_iᵀ A x_i (x_i normalized first). res [batch][k].
 * With M: x_i is M-normalized (x_iᵀ M x_i = 1), λ_i = x_iᵀ A x_i and res = ‖A x_i − λ_i M x_i‖₂
 * / ‖x_i‖₂. */
sla_status eig_residuals(const eig_problem *P, eig_result *R, double *res);

/* Drivers. */
typedef struct eig_lobpcg_opts {
    int largest;                /* 1: LA (runs on −A), 0: SA */
    int64_t block, maxiter;
    double tol;                 /* on ‖A x − λ x‖ / ‖A‖₁ */
    const double *v0;           /* [batch] blocks n × nv0, column-major, or NULL */
    int64_t nv0;
    eig_op *precond;            /* NULL: none */
    /* Distributed runs (sla_lobpcg_run; all zero / NULL on one process): P->n is then the
     * local row count and only P's batch, norm1, has_M and normM are read. */
    const sla_space *R;         /* the reduction hook of the Gram products and norms */
    int64_t N;                  /* global rows (0: P->n) */
    const int64_t *global;      /* [n] global index of each local row (start block) */
    eig_op *op;                 /* the operator B = s·A (NULL: P's SpMV) */
    const eig_mass *mass;       /* [batch] M of each element (NULL: P's M, if any) */
} eig_lobpcg_opts;
sla_status eig_lobpcg(const eig_problem *P, const eig_lobpcg_opts *o, eig_result *R);

typedef enum eig_want { EIG_WANT_LA, EIG_WANT_SA, EIG_WANT_LM } eig_want;

/* Shift-invert state: OP = (sgn·(A − σ_b I))⁻¹ from the factorization in solver, so that
 * λ = σ_b + sgn/θ for a Ritz value θ of OP. verified: the factorization is a Cholesky one, which
 * proves sgn·(A − σI) SPD: every eigenvalue lies on one side of σ (σ may then move closer). */
typedef struct eig_si {
    eig_shifted S;
    sla_solver *solver;
    const sla_solver_options *fopt;
    double sgn;
    int verified;
    double *sigma;              /* [batch] */
    int64_t factorizations;     /* numeric factorizations (each of the whole batch) */
} eig_si;

typedef struct eig_lanczos_opts {
    eig_want want;              /* order of the Ritz values θ of OP */
    int64_t block, ncv, maxiter;
    double tol;
    const double *v0;
    int64_t nv0;
    int adaptive;               /* move a verified shift toward the spectrum */
} eig_lanczos_opts;
/* si NULL: regular mode on OP = op (SpMV). */
sla_status eig_lanczos(const eig_problem *P, eig_op *op, eig_si *si, const eig_lanczos_opts *o,
                       eig_result *R);
/* ARPACK on the same modes: si_template gives sgn, verified (Cholesky) and the shifts; ARPACK
 * factors each batch element itself (NULL: regular mode). */
sla_status eig_arpack(const eig_problem *P, const eig_lanczos_opts *o, const eig_si *si_template,
                      eig_result *R);

/* Eigenvalues closer than this (× the scale of vjp.c: ‖A‖₁, with M max|λ| of the block) count as
 * one repeated eigenvalue in the VJPs, inside the block (vjp.c) and with an eigenvalue outside it
 * (vjp_tie.c); the same relative bound says when a loss does not depend on a pair. float32
 * eigenpairs carry rounding errors of ~1e-7 relative (a tie then shows residuals of 5e-7·‖A‖₁),
 * hence the larger float32 bound. docs/eigsh.md, "Repeated eigenvalues", has the measurements. */
#define SLA_EIG_DEGENERATE 1e-8
#define SLA_EIG_DEGENERATE_F32 1e-5

/* x ← x − Vl (Vrᵀ x), twice (k ≥ 1 columns; c: workspace [k]); Vl, Vr row-major n × k. */
void eig_project_out(const double *Vl, const double *Vr, int64_t n, int64_t k, double *x,
                     double *c);

/* The inputs of the eigenvector VJP, shared by vjp.c and vjp_tie.c. */
typedef struct eig_vjp_block {
    const eig_problem *P;
    const char *api;            /* the public function, for messages */
    int64_t k;
    const double *lam;          /* [batch][k] */
    const double *V, *MV, *G;   /* [batch][n][k] row-major: eigenvectors, M·V (NULL without M),
                                 * eigenvector cotangents */
    const double *gnorm;        /* [batch][k] ‖g_i‖₂ */
    const double *scale;        /* [batch] the scale of the tie bound */
    double tie;                 /* SLA_EIG_DEGENERATE, or _F32 for float32 eigenpairs */
} eig_vjp_block;

/* Partners of λ_i outside the block (vjp_tie.c): eigenvalues μ of A (of the pencil (A, M)) not
 * among the k computed with |μ − λ_i| ≤ tie·scale, found by inverse iteration in the
 * complement of the block on s, the factorization of A − λ_i I (A − λ_i M) of the whole batch.
 * eig_vjp_probe_start gives in *r ([batch][n], workspace-owned; NULL when k = n) the first
 * probe's right-hand sides for the elements with on[b], to be solved together with the
 * cotangents; eig_vjp_partners takes their solutions z0 ([batch][n]) and, for those elements:
 * SLA_EINVAL if the cotangent g_i has a component along a partner; else removes the partners'
 * components from y_b ([batch][n], the out-of-block solution, Q-projected). ws: opaque
 * workspace, NULL before the first call, freed with eig_vjp_partners_free. */
typedef struct eig_tie_ws eig_tie_ws;
sla_status eig_vjp_probe_start(const eig_vjp_block *B, int64_t i, const int *on, eig_tie_ws **ws,
                               const double **r);
sla_status eig_vjp_partners(const eig_vjp_block *B, int64_t i, sla_solver *s, const int *on,
                            const double *z0, double *y, eig_tie_ws *ws);
void eig_vjp_partners_free(eig_tie_ws **ws);

/* The VJP of (Λ, V) (float64 accumulators dval [batch][nnz] and, with M, dmval [batch][nnz(M)],
 * added to): eigenvalue and eigenvector terms, standard or generalized (P->has_M). */
sla_status eig_vjp(const eig_problem *P, sla_dtype dt, int64_t k, const void *eigenvalues,
                   const void *eigenvectors, const void *gl, const void *gv, double *dval,
                   double *dmval);

/* Repeated eigenvalues in a result (multiplicity.c): eigenvalues of one batch element closer
 * than eig_cluster_gap (from the true residuals res [batch][k] of eig_residuals) are copies of
 * one. eig_max_cluster: the largest number of copies over the batch (*cmax) and that eigenvalue
 * (*where). eig_same_values: *b_bad = −1 if the sorted eigenvalues of R and T agree within the
 * gap in every element, else the first element that does not and the first pair that differs
 * (R's *got, T's *want). */
double eig_cluster_gap(const eig_problem *P, int64_t b, const double *lambda, const double *res,
                       int64_t k, double tol);
sla_status eig_max_cluster(const eig_problem *P, const eig_result *R, const double *res, double tol,
                           int64_t *cmax, double *where);
sla_status eig_same_values(const eig_problem *P, const eig_result *R, const double *rres,
                           const eig_result *T, const double *tres, double tol, int64_t *b_bad,
                           double *got, double *want);

/* Dense LAPACK: which/sigma as in the public options. */
sla_status eig_dense(const eig_problem *P, sla_eigsh_which which, double sigma, eig_result *R);

/* Complex Hermitian matrices (hermitian.c, hermitian_vjp.c) run on their real symmetric form
 * (realify.c): H = X + iY as K = [[X, −Y], [Y, X]] with the real and imaginary parts of each
 * row interleaved (rows 2r, 2r + 1), so that a complex vector's memory is its real image R(z)
 * and K R(z) = R(H z). Entry (r, c) = a + ib of H is the block [[a, −b], [b, a]] of K. */
typedef struct eig_real_form {
    sla_pattern *p;             /* 2n × 2n, 4 slots per slot of H (eig_real_slot) */
    int64_t batch;
    double *vd;                 /* [batch][4 nnz] float64 */
    float *vf;                  /* the float32 copy for complex64 H, else NULL */
    sla_matrix Kd;              /* float64 view */
    sla_matrix K;               /* in H's real dtype (the float32 copy for complex64) */
} eig_real_form;

sla_status eig_real_form_init(const sla_matrix *A, eig_real_form *F);
void eig_real_form_free(eig_real_form *F);
/* Float64 view of batch element b (batch-1 forms serve every b). */
sla_matrix eig_real_form_view(const eig_real_form *F, int64_t b);
/* The slot of K's entry (2r + u, 2c + w) for H's slot s = (r, c) (rp: H's row pointers). */
int64_t eig_real_slot(const int64_t *rp, int64_t r, int64_t s, int u, int w);
/* Entry q of complex values of dtype dt as double _Complex, and the store back. */
double _Complex eig_centry(sla_dtype dt, const void *v, int64_t q);
void eig_cstore(sla_dtype dt, void *v, int64_t q, double _Complex z);
/* Z (n × k complex, column-major) ↔ X = R(Z) (2n × k real, row-major, the layout of sla_spmv). */
void eig_to_real_rows(int64_t n, int64_t k, const double _Complex *Z, double *X);
void eig_from_real_rows(int64_t n, int64_t k, const double *X, double _Complex *Z);
/* Y = H_b Z through K (n × k column-major complex blocks; work: 4·n·k doubles). */
sla_status eig_real_form_apply(const eig_real_form *F, int64_t b, int64_t n, int64_t k,
                               const double _Complex *Z, double _Complex *Y, double *work);
/* sla_eigsh and its VJPs for complex A (and M): A checked valid by the caller. */
sla_status eig_hermitian(const sla_matrix *A, int64_t k, const sla_eigsh_options *opt,
                         void *eigenvalues, void *eigenvectors, sla_eigsh_info *info);
sla_status eig_hermitian_vjp(const char *api, const sla_matrix *A, const sla_matrix *M, int64_t k,
                             const void *eigenvalues, const void *eigenvectors,
                             const void *g_eigenvalues, const void *g_eigenvectors, void *dA,
                             void *dM);

/* The block kernels of t_blockops.h (blockops_t.c), one instance per dtype: eig_gram_* (H = Vᴴ W),
 * eig_comb_* (W += α V H), eig_heev_* (small Hermitian / symmetric eigenproblem, eigenvalues
 * ascending; complex by zhbevd / chbevd, see blockops_t.c), eig_random_block_* and
 * eig_orth_fill_* (projection + SVQB twice, dependent directions replaced by random ones; acc
 * and B as documented in the template). Column-major blocks. */
#define EIG_BLOCKOPS_DECL(T, R, S)                                                               \
    void eig_gram_##S(int64_t n, int64_t a, int64_t b, const T *V, const T *W, T *H);            \
    void eig_comb_##S(int64_t n, int64_t a, int64_t b, T alpha, const T *V, const T *H,          \
                      int64_t ldh, T *W);                                                         \
    sla_status eig_heev_##S(int64_t m, T *G, R *w, const char *what);                            \
    void eig_random_block_##S(T *x, int64_t len, uint64_t *state);                               \
    sla_status eig_orth_fill_##S(int64_t n, const T *V, int64_t nv, T *W, int64_t nw,            \
                                 double drop, uint64_t *state, T *acc, T *B);
EIG_BLOCKOPS_DECL(double, double, f64)
EIG_BLOCKOPS_DECL(float, float, f32)
EIG_BLOCKOPS_DECL(double _Complex, double, c128)
EIG_BLOCKOPS_DECL(float _Complex, float, c64)
#undef EIG_BLOCKOPS_DECL

/* Column v (n entries) multiplied by the phase that makes its largest-magnitude entry (the first
 * within 1e-12 relative of the largest) real positive: the complex eigenvector convention
 * (hermitian.c). */
void eig_fix_phase(int64_t n, double _Complex *v);

/* Native complex Hermitian eigsh (hlanczos.c): shift-invert block Lanczos in complex arithmetic
 * on the complex factorizations. _applies says whether it serves the call (no M, method auto or
 * lanczos, a shift-invert mode, n beyond auto's dense rule, sizes that fit); A checked valid. */
int eig_hermitian_native_applies(const sla_matrix *A, int64_t k, const sla_eigsh_options *o);
sla_status eig_hermitian_native(const sla_matrix *A, int64_t k, const sla_eigsh_options *o,
                                void *eigenvalues, void *eigenvectors, sla_eigsh_info *info);

#endif
