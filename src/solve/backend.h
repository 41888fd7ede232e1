/* The solve layer's private declarations: method = auto (auto.c), and the helpers the solver
 * files (solver.c, solve.c, vjp.c, lstsq.c) share. The backend tier itself — struct sla_solver,
 * sla_backend, the analysis handover, the registry — lives below: sla/backend.h (installed, for
 * external backends) and backend/solver_impl.h (the fields, for the in-tree ones). */
#ifndef SLA_SOLVE_BACKEND_H
#define SLA_SOLVE_BACKEND_H

#include "backend/solver_impl.h"

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
                             int64_t total, const sla_solve_params *p, sla_solve_info *info);

/* Frees s->auto_state (NULL allowed). */
void sla_auto_free(sla_solver *s);

/* method = auto, at solve time: when the iterative method chosen by auto stopped with reason
 * indefinite, breakdown or stagnation, switch once to the next method (cg → minres → gmres →
 * bicgstab) and say so in s->description. Returns 1 if the solver switched (solve again), 0 if
 * not (the result stands), or a negative status if the new method could not be created. */
int sla_auto_fallback(sla_solver *s, const sla_solve_info *info);

/* Runs the backend's create for the already-resolved s->opt.method. */
sla_status sla_solver_create_with(sla_solver *s, sla_method method);

/* ---- shared by the solve and VJP files ---- */

/* SLA_CHECK_ARG on behalf of the public function `func` (a variable in scope): checks done in
 * helpers still name the function the caller called */
#define ARG_CHECK(cond, ...) \
    do { if (!(cond)) return sla_error_set(SLA_EINVAL, func, __VA_ARGS__); } while (0)

/* rows of B (rhs = 1) or of X (rhs = 0) for op: op(A)'s row or column count */
int64_t sla_solver_block_rows(const sla_solver *s, sla_op op, int rhs);
/* entries of the block `name` [batch][rows][nrhs] into *total (SLA_EINVAL naming it if NULL
 * while not empty, or on overflow) */
sla_status sla_solver_block_size(const char *func, const sla_solver *s, const char *name,
                                 const void *ptr, int64_t rows, int64_t nrhs, int64_t *total);
/* bytes of the solver's matrix values (0 for a matrix-free operator) */
size_t sla_solver_values_bytes(const sla_solver *s);

/* The space of a block of `count` entries of the solver's dtype (the backend's block_space, or
 * host memory): the generic layer's checks and scalings go through it. */
sla_status sla_solver_block_space(const sla_solver *s, int64_t count, sla_space *V,
                                  sla_host_space *host);
/* SLA_ENONFINITE naming name[b][i][j] unless every entry is finite */
sla_status sla_solver_block_finite(const char *func, const sla_solver *s, const char *name,
                                   const void *x, int64_t rows, int64_t nrhs, int64_t total);
/* max |x_i| over `total` entries and y = x·2^e (y may be x), through the block space */
sla_status sla_solver_block_amax(const sla_solver *s, const void *x, int64_t total, double *m);
sla_status sla_solver_block_scale(const sla_solver *s, int e, const void *x, int64_t total,
                                  void *y);
/* x = 0, y = x, a new block of `total` entries (contents undefined) and its free, through the
 * block space: how the generic layer zeroes, copies and allocates blocks that may be in device
 * memory (sla_backend.memory) */
sla_status sla_solver_block_zero(const sla_solver *s, void *x, int64_t total);
sla_status sla_solver_block_copy(const sla_solver *s, const void *x, int64_t total, void *y);
sla_status sla_solver_block_alloc(const sla_solver *s, int64_t total, void **x);
void sla_solver_block_free(const sla_solver *s, int64_t total, void *x);
/* ‖x‖₂ over `total` entries (all columns together), through the block space */
sla_status sla_solver_block_norm(const sla_solver *s, const void *x, int64_t total, double *nrm);

/* info before the backend's solve (info_init) and after a failed call (converged = 0, reason
 * error, residuals NaN unless measured) */
void sla_solver_info_init(const sla_solver *s, sla_solve_info *info);
void sla_solver_info_failed(sla_solve_info *info);
/* the first thing a solve or VJP does with a caller's info: an argument error returns with
 * converged = 0 and reason error, never with a previous call's "converged" */
void sla_solver_info_enter(const sla_solver *s, sla_solve_info *info);

/* the solve proper (arguments checked; total = entries of B > 0) with per-solve parameters p:
 * backend, auto fallback, true residual when the backend did not measure it and want_residual */
sla_status sla_solver_run(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                          int64_t total, const sla_solve_params *p, sla_solve_info *info,
                          int want_residual);

/* sla_solver_lstsq_vjp() after info_enter (lstsq.c): checks, three LSQR solves, gradient. */
sla_status sla_lstsq_vjp_checked(sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                                 const void *X, const void *G, void *dB, void *dvalues,
                                 sla_solve_info *info, int want_residual);

#endif
