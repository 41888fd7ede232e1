/* Private to src/nonlinear: the solver object, the callback wrappers, the stopping tests, the
 * linear solver on a pattern, the line search and the method drivers.
 *
 * The drivers work in float64 (u, F, steps: arrays of double); vectors cross to the caller's
 * dtype only at the callbacks and the linear solves (nl_put / nl_get), so that every method is
 * written once for both dtypes. */
#ifndef SLA_NL_INTERNAL_H
#define SLA_NL_INTERNAL_H

#include "core/internal.h"
#include "sla/nonlinear.h"
#include "sla/precond.h"

/* Errors raised inside a solve name sla_nonlinear_solve, those of the adjoint sla_nonlinear_vjp. */
#define NL_SOLVE "sla_nonlinear_solve"
#define NL_VJP "sla_nonlinear_vjp"

/* A linear solver object on matrices of the pattern (Newton: J(u); Picard: A(u); the adjoint:
 * J(u*)): created at the first values, refactored afterwards. It borrows vals[cur]; the other
 * buffer receives the next values when the current ones must stay (the adjoint). */
typedef struct nl_linear {
    sla_solver *s;
    void *vals[2];               /* [nnz] of the dtype each */
    int cur;                     /* the buffer s borrows */
    int64_t creates, refactors;
} nl_linear;

struct sla_nonlinear {
    sla_nonlinear_problem P;
    sla_pattern *pattern;        /* retained, or NULL */
    sla_nonlinear_options opt;
    int64_t n, nnz;
    size_t es;                   /* bytes per entry of the dtype */

    /* iteration state (float64) */
    double *u, *F, *d, *ut, *Ft; /* iterate, F(u), step, trial point, F(trial) */
    double *w;                   /* [n] scratch */
    void *tx, *ty;               /* [n] of the dtype: the callbacks' u and F */
    void *tb, *tsol;             /* [n] of the dtype: right-hand side and solution of solves */
    void *tu;                    /* [n] of the dtype: the iterate of a Jacobian product */

    nl_linear lin;               /* newton: on J; picard, anderson: on A */
    int lin_is_jacobian;         /* lin's matrices are Jacobians (newton) */
    int lin_at_solution;         /* lin holds the matrix at the returned u */
    nl_linear adj;               /* the adjoint's solver on J(u*) when lin is not a Jacobian */

    /* newton_krylov */
    sla_preconditioner *pc;      /* on the linearization, or NULL */
    void *pvals;                 /* [nnz] its values */
    sla_precond pc_kind;         /* kind in use (NONE: no preconditioner) */
    int pc_tried;                /* its set-up was tried (auto may have found none) */
    char pc_note[256];           /* auto's fallbacks */
    double *fd;                  /* [n] FD products: F(u + h v) */

    /* anderson: circular histories of differences, [m][n] each */
    double *dX, *dG, *f_prev, *g_prev, *lsq, *gamma;

    /* adjoint bookkeeping: solves counts sla_nonlinear_solve calls; adj_solve is the solve whose
     * u* adj's solver holds, jstar_solve the one whose J(u*) sits in lin's other buffer,
     * jkrylov_solve the one whose J(u*) sits in adj.vals[0] for the Krylov adjoint */
    int64_t solves, adj_solve, jstar_solve, jkrylov_solve;

    /* results */
    double *history;             /* [max_iter + 1] */
    int have_solution;           /* u holds the last iterate of a solve */
    int converged;               /* ... and it converged */
    sla_nonlinear_info *info;    /* of the solve in progress (never NULL inside a solve) */
    sla_nonlinear_info scratch_info;
    int64_t iter;                /* current iteration, for messages */
};

/* ---- dtype boundary (nl_vec.c) ---- */
void nl_put(sla_dtype dtype, const double *x, void *y, int64_t n);   /* y = (dtype) x */
void nl_get(sla_dtype dtype, const void *x, double *y, int64_t n);   /* y = (double) x */
double nl_norm2(const double *x, int64_t n);
double nl_dot(const double *x, const double *y, int64_t n);
/* y = a·x + b·y */
void nl_axpby(double a, const double *x, double b, double *y, int64_t n);
/* z = x + a·y */
void nl_waxpy(const double *x, double a, const double *y, double *z, int64_t n);
int nl_finite(const double *x, int64_t n);

/* ---- callbacks (nl_callback.c): counted, errors formatted as documented in nonlinear.h ---- */
/* F = F(u); `where` says where in the iteration ("at u0", "at the line-search trial ..."). */
sla_status nl_residual(sla_nonlinear *nl, const double *u, double *F, const char *where);
/* values = jacobian or linearization at u (fn is one of them, named `what`) */
sla_status nl_matrix(sla_nonlinear *nl, const char *func, sla_jacobian_fn fn, const char *what,
                     const double *u, void *values);
/* y = op(J(u)) v on vectors of the dtype, u given in the dtype */
sla_status nl_jacobian_apply(sla_nonlinear *nl, const char *func, sla_op op, const void *u,
                             const void *v, void *y);

/* ---- stopping tests, history, info (nl_stop.c) ---- */
/* Starts a solve: info reset, u = u0, F(u0) (finite, else SLA_ENONFINITE naming the entry),
 * history[0], tolerance. */
sla_status nl_begin(sla_nonlinear *nl, const void *u0);
/* After an accepted step to u (F = F(u), step = ‖u − u_prev‖): records it and applies the tests
 * in order converged, non-finite, diverged, step size, stagnation, max_iter. Returns 1 (stop,
 * info->reason set) or 0 (continue). */
int nl_after_step(sla_nonlinear *nl, double step);
/* Ends a solve with `reason` (if not already set by nl_after_step) and status st; writes u,
 * the info's description; returns the status of the call. */
sla_status nl_finish(sla_nonlinear *nl, sla_status st, sla_nonlinear_reason reason, void *u);
/* ‖F‖ of the current iterate */
double nl_fnorm(const sla_nonlinear *nl);
/* the linear info into the nonlinear one (counts) */
void nl_count_linear(sla_nonlinear *nl, const sla_solve_info *li);

/* ---- linear solver on the pattern (nl_linear.c) ---- */
/* Both value buffers of lin (SLA_ENOMEM with the message of sla_calloc) */
sla_status nl_linear_alloc(sla_nonlinear *nl, nl_linear *lin);
/* Puts the values of lin->vals[which] into lin's solver (create or refactor; a failed refactor
 * of method auto creates the solver again). */
sla_status nl_linear_set(sla_nonlinear *nl, nl_linear *lin, int which, const char *func);
/* x = op(M)⁻¹ b in float64 (through the dtype buffers), info into li */
sla_status nl_linear_solve(sla_nonlinear *nl, nl_linear *lin, sla_op op, const double *b,
                           double *x, sla_solve_info *li);
void nl_linear_free(nl_linear *lin);

/* ---- line search (nl_linesearch.c) ---- */
/* Armijo backtracking along d from (u, F): on return ut, Ft hold the accepted point and
 * *alpha its step length; nonfinite trials count as failures. Returns SLA_OK, or
 * SLA_NOT_CONVERGED (no acceptable α: reason line search), or a callback error. */
sla_status nl_line_search(sla_nonlinear *nl, double fnorm, double *alpha);
/* Accepts the trial point: u ↔ ut, F ↔ Ft (pointer swap), returns ‖Δu‖. */
double nl_accept(sla_nonlinear *nl, double alpha);

/* ---- methods ---- */
/* Stops a method because of the linear solver (reason linear solver): an error status passes
 * through, with "iteration k: what: " in front of its message when what is not NULL; st ≥ 0 (a
 * step that is not finite) gives SLA_NOT_CONVERGED. */
sla_status nl_linear_failed(sla_nonlinear *nl, sla_status st, const char *what);
sla_status nl_newton(sla_nonlinear *nl);
sla_status nl_newton_krylov(sla_nonlinear *nl);
sla_status nl_picard(sla_nonlinear *nl);
sla_status nl_anderson(sla_nonlinear *nl);
/* Picard's direction d = −A(u)⁻¹F(u) (with a linearization) or −F(u) (shared by anderson) */
sla_status nl_picard_direction(sla_nonlinear *nl, const double *u, const double *F, double *d);
/* Moves to the trial point ut if it and F(ut) (into Ft) are finite: SLA_OK and *step =
 * ‖ut − u‖; else SLA_NOT_CONVERGED with reason non-finite, u unchanged (picard, anderson) */
sla_status nl_take_step(sla_nonlinear *nl, double *step);
/* newton_krylov's preconditioner on the linearization at u (create or update); the adjoint
 * reuses it */
sla_status nl_nk_precond_update(sla_nonlinear *nl, const double *u);
/* the operator solver of newton_krylov and of the Krylov adjoint: op(J) x = b by a Krylov
 * method with the preconditioner pc (or Picard's factors of A, or none), J·v from matrix
 * (values on the pattern, by SpMV) if not NULL, else from finite differences (use_fd) or
 * jacobian_apply at tu */
sla_status nl_krylov_solve(sla_nonlinear *nl, const char *func, sla_op op, double rtol,
                           double atol, int64_t maxiter, int use_fd, const void *matrix,
                           const double *b, double *x, sla_solve_info *li);

#endif
