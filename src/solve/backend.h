/* What a solver backend implements (the backend tier of the headers, private to libsla).
 *
 * A backend serves some methods (bitmask over sla_method) for some dtypes. The generic layer
 * (solver.c) validates every argument before calling it, so a backend may assume:
 *   - s->A is a valid square matrix view (finite values) or s->apply is set (matrix-free);
 *     only the lsqr method gets rectangular matrices (s->m ≠ s->n);
 *   - B is finite with op(A)'s row count of rows, X has room for op(A)'s column count
 *     ([batch][n][nrhs] when square), nrhs ≥ 1, op is N or T;
 *   - s->opt has its method resolved (never SLA_METHOD_AUTO) and defaults filled in.
 * A backend keeps its state in s->impl, writes s->description in create, and reports errors
 * with SLA_FAIL (message naming the column / batch element). */
#ifndef SLA_SOLVE_BACKEND_H
#define SLA_SOLVE_BACKEND_H

#include "core/internal.h"

struct sla_solver {
    sla_matrix A;                /* borrowed values; A.pattern is `pattern` below */
    sla_pattern *pattern;        /* retained; NULL for a matrix-free operator */
    int64_t m, n, batch;         /* A is m × n (m = n except for lsqr) */
    sla_dtype dtype;
    sla_apply_fn apply;          /* matrix-free operator, or NULL */
    void *apply_ctx;
    sla_solver_options opt;      /* method resolved, defaults filled */
    const struct sla_backend *backend;
    void *impl;                  /* backend state */
    double rcond;                /* reciprocal condition estimate (NaN if unknown) */
    char description[SLA_DESCRIPTION_LEN];       /* one line, written by the backend (and by auto) */
    char why[512];               /* why this method was chosen (auto), or "" */
    int is_auto;                 /* created with method = auto: may fall back once at solve */
    int default_tol;             /* no tolerance given (options rtol and atol SLA_TOL_DEFAULT;
                                  * opt holds the classic defaults): auto's accuracy target */
    int fallbacks;               /* fallbacks taken so far */
    sla_precond user_precond;    /* the preconditioner the caller asked for (auto fallbacks) */
    struct sla_analysis *analysis; /* a symbolic analysis auto ran, for the backend it chose to
                                    * take instead of analysing again (direct/direct.h); NULL */
    struct sla_auto_state *auto_state; /* method auto: what the choice rests on (solve/auto.h) */
};

typedef struct sla_analysis sla_analysis;

typedef struct sla_backend {
    sla_backend_info info;
    /* Symbolic analysis + numeric set-up for every batch element. */
    sla_status (*create)(sla_solver *s);
    /* Numeric set-up again after s->A.values changed (same pattern). */
    sla_status (*refactor)(sla_solver *s);
    /* op(A_b) X_b = B_b for every batch element; fills info's iterations/residual/converged/
     * reason/rcond (the generic layer fills method, precond, description). info arrives with
     * residual_norm = relative_residual = −1: a backend that measures the residuals takes its
     * maxima from there; one that leaves −1 gets the true residual computed by the generic
     * layer (one SpMV). On an error return the generic layer sets converged = 0, reason error. */
    sla_status (*solve)(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                        sla_solve_info *info);
    /* Optional (NULL: SLA_EUNSUPPORTED): sign and log|det| per batch element. */
    sla_status (*logdet)(sla_solver *s, double *sign, double *logabsdet);
    /* Optional: dvalues[b][s] = g[b]·(A_b⁻ᵀ)[r_s, c_s]; g never NULL here. */
    sla_status (*logdet_grad)(sla_solver *s, const double *g, void *dvalues);
    void (*destroy)(sla_solver *s);
} sla_backend;

/* The registry (registry.c): every backend, compiled in or not, by decreasing priority. */
extern const sla_backend sla_backend_cholmod;
extern const sla_backend sla_backend_umfpack;
extern const sla_backend sla_backend_klu;
extern const sla_backend sla_backend_mumps;
extern const sla_backend sla_backend_krylov;

/* First available backend serving (method, dtype), or the one named `name` (NULL/"auto": any).
 * On failure returns NULL with an SLA_EUNSUPPORTED message naming what was asked. */
const sla_backend *sla_backend_find(sla_method method, sla_dtype dtype, const char *name);

/* The methods (bit mask over sla_method) that the available backends named `name` (NULL or
 * "auto": all) serve for dtype; 0 if none. */
uint32_t sla_backend_methods(const char *name, sla_dtype dtype);

/* Method selection for SLA_METHOD_AUTO (auto.c): resolves s->opt.method (and precond), picks the
 * backend, runs its create, falling back when a trial fails (e.g. Cholesky not SPD), and writes
 * s->why. Keeps what the choice rests on in s->auto_state. */
sla_status sla_auto_create(sla_solver *s);

/* sla_solver_refactor() of a solver created by method auto (auto_refactor.c): re-checks the facts
 * the choice rests on against the new values (s->A) and decides again when they no longer hold
 * or the backend's numeric work fails (e.g. Cholesky not SPD); else the backend's refactor.
 * describe() keeps saying what was chosen and why. */
sla_status sla_auto_refactor(sla_solver *s);

/* method = auto with no tolerance given (s->default_tol), after an iterative solve
 * (auto_accuracy.c): measures the normwise backward error of every column and continues the
 * solve from X until it is ≤ SLA_AUTO_BACKWARD_ERROR(_F32); sets info's converged, reason and
 * iterations. Returns the status of the solve (SLA_OK or SLA_NOT_CONVERGED) or an error. */
sla_status sla_auto_accuracy(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             int64_t total, sla_solve_info *info);

/* Frees s->auto_state (NULL allowed). */
void sla_auto_free(sla_solver *s);

/* method = auto, at solve time: when the iterative method chosen by auto stopped with reason
 * indefinite, breakdown or stagnation, switch once to the next method (cg → minres → gmres →
 * bicgstab) and say so in s->description. Returns 1 if the solver switched (solve again), 0 if
 * not (the result stands), or a negative status if the new method could not be created. */
int sla_auto_fallback(sla_solver *s, const sla_solve_info *info);

/* Helpers of solver.c shared with lstsq.c (the least-squares VJP). */
/* rows of B (rhs = 1) or of X (rhs = 0) for op: op(A)'s row or column count */
int64_t sla_solver_block_rows(const sla_solver *s, sla_op op, int rhs);
/* entries of the block `name` [batch][rows][nrhs] into *total (SLA_EINVAL naming it if NULL
 * while not empty, or on overflow) */
sla_status sla_solver_block_size(const char *func, const sla_solver *s, const char *name,
                                 const void *ptr, int64_t rows, int64_t nrhs, int64_t *total);
/* SLA_ENONFINITE naming name[b][i][j] unless every entry is finite */
sla_status sla_solver_block_finite(const char *func, const sla_solver *s, const char *name,
                                   const void *x, int64_t rows, int64_t nrhs, int64_t total);
/* the solve proper (arguments checked; total = entries of B > 0): backend, auto fallback,
 * true residual when the backend did not measure it and want_residual */
sla_status sla_solver_run(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                          int64_t total, sla_solve_info *info, int want_residual);
/* max |x_i| over n entries; y = x·2^e entrywise (y may be x) */
double sla_max_abs(sla_dtype dtype, const void *x, int64_t n);
void sla_ldexp_into(sla_dtype dtype, const void *x, int e, int64_t n, void *y);

/* sla_solver_lstsq_vjp() after info_enter (lstsq.c): checks, three LSQR solves, gradient. */
sla_status sla_lstsq_vjp_checked(sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                                 const void *X, const void *G, void *dB, void *dvalues,
                                 sla_solve_info *info, int want_residual);

/* Runs the backend's create for the already-resolved s->opt.method. */
sla_status sla_solver_create_with(sla_solver *s, sla_method method);

#define SLA_METHOD_BIT(m) (1u << (unsigned)(m))
#define SLA_DTYPE_BIT(d) (1u << (unsigned)(d))
#define SLA_BOTH_DTYPES (SLA_DTYPE_BIT(SLA_FLOAT64) | SLA_DTYPE_BIT(SLA_FLOAT32))

#endif
