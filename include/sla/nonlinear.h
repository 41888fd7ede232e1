/* sla/nonlinear.h: nonlinear systems F(u) = 0, u ∈ ℝⁿ, by Newton, Newton–Krylov, Picard and
 * Anderson, and the adjoint of their solution.
 *
 *   sla_nonlinear_create(problem, options)   checks; nothing is evaluated yet
 *   sla_nonlinear_solve(u0 → u, info)        as many times as needed (the linear solver's
 *                                            symbolic analysis is kept across solves)
 *   sla_nonlinear_vjp(g → λ, ∂L/∂θ)          backward of the last solve: one adjoint solve
 *   sla_nonlinear_free(&nl)
 *
 * The problem is a residual callback F(u) and some of: the Jacobian J = ∂F/∂u as values on a
 * fixed sparse pattern (so that the linear solver is created once and only refactored, every
 * Newton step reusing its symbolic analysis or preconditioner structure); a Jacobian–vector
 * product callback J v, Jᵀ v (matrix-free Newton–Krylov and adjoints); a linearization A(u) ≈ J
 * on the same pattern (Picard's matrix, Newton–Krylov's preconditioning matrix); and the
 * vector–Jacobian product of F with respect to the caller's parameters θ, for the adjoint.
 *
 * Stopping rule (every method): converged when ‖F(u)‖₂ ≤ max(rtol·‖F(u0)‖₂, atol) for the
 * returned u, and never otherwise. The step-size test (‖u_{k+1} − u_k‖₂ ≤ stol·‖u_{k+1}‖₂), the
 * stagnation test (no new smallest ‖F‖ by a factor 1 − 1e-3 in stagnation_window iterations),
 * the divergence test (‖F‖ > dtol·‖F(u0)‖) and max_iter stop an iteration that cannot meet it,
 * with the reason in the info and the status SLA_NOT_CONVERGED.
 *
 * Adjoint (implicit function theorem): at a solution u*(θ) of F(u, θ) = 0, for a loss L(u*),
 *   J(u*)ᵀ λ = g = ∂L/∂u*,      ∂L/∂θ = −(∂F/∂θ)ᵀ λ,
 * one linear solve whatever the number of iterations the forward took; memory O(n + nnz).
 * docs/nonlinear.md derives it and lists the sources.
 *
 * Every function here is local to the calling process (not collective). Callbacks return 0 on
 * success; anything else stops the call with SLA_ECALLBACK and a message
 * naming the callback, its return value and where it was called (iteration, line-search
 * trial), followed by sla_last_error() if the callback left a message there (e.g. from an sla
 * call that failed inside it). Callbacks are only ever called from the calling thread, one at
 * a time; vectors handed to them are [n] of the problem's dtype and valid only during the call.
 */
#ifndef SLA_NONLINEAR_H
#define SLA_NONLINEAR_H

#include "sla/base.h"
#include "sla/pattern.h"
#include "sla/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/** F = F(u): u [n] (read only), F [n] (written). Return 0 on success. */
typedef int (*sla_residual_fn)(void *ctx, const void *u, void *F);

/** Values [nnz] of a matrix at u on the problem's pattern, in CSR order (sla_pattern_rowptr /
 *  sla_pattern_colind): the Jacobian ∂F/∂u (problem.jacobian) or a linearization A(u)
 *  (problem.linearization). Every slot must be written. Return 0 on success. */
typedef int (*sla_jacobian_fn)(void *ctx, const void *u, void *values);

/** y = J(u) v (op = N) or J(u)ᵀ v (op = T), J = ∂F/∂u at u; u, v, y [n]. Return 0 on success. */
typedef int (*sla_jacobian_apply_fn)(void *ctx, sla_op op, const void *u, const void *v,
                                     void *y);

/** Parameter VJP of the adjoint: given u* and w = −λ ([n] each), the callback computes
 *  (∂F/∂θ)(u*, θ)ᵀ w — which is ∂L/∂θ — into storage of its own (θ's layout is the caller's).
 *  Return 0 on success. */
typedef int (*sla_param_vjp_fn)(void *ctx, const void *u, const void *w);

/** The system F(u) = 0. Which callbacks each method needs:
 *    newton          residual, pattern + jacobian
 *    newton_krylov   residual; jacobian_apply (op N) or, without it, finite differences of F
 *                    (J v ≈ (F(u + h v) − F(u))/h, h = √ε·max(1, ‖u‖₂)/‖v‖₂); optionally
 *                    pattern + linearization, the preconditioning matrix (options.linear.precond)
 *    picard          residual; optionally pattern + linearization: u ← u − ω A(u)⁻¹ F(u), the
 *                    classical Picard iteration A(u_k) u_{k+1} = b(u_k) for F(u) = A(u)u − b(u);
 *                    without it u ← u − ω F(u) (a fixed point u = G(u) written F = u − G(u))
 *    anderson        residual; optionally pattern + linearization: Anderson acceleration of the
 *                    map of picard above
 *  The adjoint (sla_nonlinear_vjp) needs pattern + jacobian, or jacobian_apply with op = T. */
typedef struct sla_nonlinear_problem {
    int64_t n;                         /**< unknowns (≥ 0) */
    sla_dtype dtype;                   /**< of u, F, the vectors of the callbacks and the values */
    sla_residual_fn residual;          /**< required */
    const sla_pattern *pattern;        /**< n × n pattern of jacobian and linearization; retained
                                        *   by create (the caller may free its reference) */
    sla_jacobian_fn jacobian;          /**< ∂F/∂u on pattern, or NULL */
    sla_jacobian_fn linearization;     /**< A(u) ≈ ∂F/∂u on pattern, or NULL */
    sla_jacobian_apply_fn jacobian_apply;  /**< J v and Jᵀ v, or NULL */
    sla_param_vjp_fn param_vjp;        /**< for sla_nonlinear_vjp, or NULL (then only λ) */
    void *ctx;                         /**< passed to every callback */
} sla_nonlinear_problem;

/** Nonlinear method. */
typedef enum sla_nonlinear_method {
    SLA_NONLINEAR_NEWTON = 0,          /**< Newton with Armijo backtracking; linear solves by an
                                        *   sla solver object on the Jacobian (any method) */
    SLA_NONLINEAR_NEWTON_KRYLOV,       /**< inexact Newton: Krylov on J v with Eisenstat–Walker
                                        *   forcing terms (choice 2, safeguarded), Armijo */
    SLA_NONLINEAR_PICARD,              /**< fixed point with a user linearization (or damping) */
    SLA_NONLINEAR_ANDERSON,            /**< Anderson acceleration, depth m (Walker & Ni 2011) */
    SLA_NONLINEAR_METHOD_COUNT
} sla_nonlinear_method;

/** Why a nonlinear solve stopped. Only SLA_NONLINEAR_CONVERGED means converged. */
typedef enum sla_nonlinear_reason {
    SLA_NONLINEAR_CONVERGED = 0,       /**< ‖F(u)‖ ≤ max(rtol·‖F(u0)‖, atol) */
    SLA_NONLINEAR_MAXITER,             /**< max_iter iterations */
    SLA_NONLINEAR_LINE_SEARCH,         /**< no step length met the Armijo condition in
                                        *   max_backtracks halvings (u is the last iterate) */
    SLA_NONLINEAR_DIVERGED,            /**< ‖F(u)‖ > dtol·‖F(u0)‖, or ‖F‖ grew at every step of a
                                        *   stagnation window, to over twice its value */
    SLA_NONLINEAR_NONFINITE,           /**< F or a step became NaN/Inf (u: the last finite one) */
    SLA_NONLINEAR_STAGNATION,          /**< step below stol, or no progress in the window */
    SLA_NONLINEAR_LINEAR_SOLVER,       /**< a linear solve failed (see info.linear, the status) */
    SLA_NONLINEAR_CALLBACK,            /**< a callback returned nonzero (status SLA_ECALLBACK) */
    SLA_NONLINEAR_ERROR,               /**< another error (arguments, memory): see the status */
    SLA_NONLINEAR_REASON_COUNT
} sla_nonlinear_reason;

typedef struct sla_nonlinear_options {
    sla_nonlinear_method method;       /**< default SLA_NONLINEAR_NEWTON */
    double rtol;                       /**< default 1e-8 */
    double atol;                       /**< default 0 */
    double stol;                       /**< step-size test, default 1e-14 (0: off) */
    double dtol;                       /**< divergence test, default 1e10 (0: off) */
    int64_t max_iter;                  /**< default 50 (newton, newton_krylov), 500 (picard,
                                        *   anderson): see sla_nonlinear_options_init() */
    int64_t stagnation_window;         /**< default 10 iterations (0: off) */
    int line_search;                   /**< Armijo backtracking for newton and newton_krylov,
                                        *   default 1; 0 takes full steps */
    double armijo_c;                   /**< sufficient decrease ‖F(u + αδ)‖ ≤ (1 − c α)‖F(u)‖,
                                        *   default 1e-4 */
    int64_t max_backtracks;            /**< default 20 (α down to ~1e-6 at least) */
    sla_solver_options linear;         /**< linear solves of newton and picard and of the adjoint
                                        *   (defaults of sla_solver_options_init: method auto).
                                        *   newton_krylov: linear.method is the Krylov method
                                        *   (auto: gmres), linear.precond the preconditioner
                                        *   built on the linearization (auto: ilu0, falling
                                        *   back to jacobi, then none; none without a
                                        *   linearization), linear.restart and linear.maxiter
                                        *   as for a linear solve; rtol is the forcing term */
    double eta0;                       /**< newton_krylov: first forcing term, default 0.5 */
    double eta_max;                    /**< newton_krylov: largest forcing term, default 0.9 */
    double ew_gamma;                   /**< Eisenstat–Walker choice 2 γ, default 0.9 */
    double ew_alpha;                   /**< Eisenstat–Walker choice 2 α, default 2 */
    double damping;                    /**< picard ω, anderson β ∈ (0, 1], default 1 */
    int64_t anderson_depth;            /**< anderson m ≥ 1, default 5 */
    double adjoint_rtol;               /**< sla_nonlinear_vjp: ‖g − Jᵀλ‖ ≤ max(adjoint_rtol·‖g‖,
                                        *   adjoint_atol), default 1e-10 */
    double adjoint_atol;               /**< default 0 */
    int64_t adjoint_max_iter;          /**< refinement steps (direct/pattern path) or Krylov
                                        *   iterations (matrix-free path); default 20 / 10n+100 */
} sla_nonlinear_options;

/** What a nonlinear solve did; always written by sla_nonlinear_solve(), also on error. */
typedef struct sla_nonlinear_info {
    sla_nonlinear_method method;
    int converged;                     /**< 1 only if the stopping rule holds for the returned u */
    sla_nonlinear_reason reason;
    int64_t iterations;                /**< nonlinear iterations (steps taken) */
    int64_t residual_evaluations;      /**< calls of problem.residual (FD products included) */
    int64_t jacobian_evaluations;      /**< calls of jacobian and linearization */
    int64_t jacobian_products;         /**< calls of jacobian_apply (or FD products) */
    int64_t linear_solves;
    int64_t linear_iterations;         /**< summed over the linear solves (0 for direct) */
    int64_t backtracks;                /**< line-search step reductions, summed */
    double residual_norm;              /**< ‖F(u)‖₂ at the returned u (NaN if never evaluated) */
    double initial_residual_norm;      /**< ‖F(u0)‖₂ */
    double tolerance;                  /**< max(rtol·‖F(u0)‖₂, atol) */
    double step_norm;                  /**< ‖u_k − u_{k−1}‖₂ of the last step (0 if none) */
    const double *history;             /**< [iterations + 1]: ‖F(u_k)‖₂, k = 0..iterations;
                                        *   borrowed from the object until its next solve */
    sla_solve_info linear;             /**< the last linear solve */
    char description[SLA_DESCRIPTION_LEN]; /**< method, linear solver, why it stopped */
} sla_nonlinear_info;

/** Opaque nonlinear solver. */
typedef struct sla_nonlinear sla_nonlinear;

/** Fills *opt with the defaults above (max_iter 50; call sla_nonlinear_options_init_for() for
 *  the defaults of another method). */
SLA_API void sla_nonlinear_options_init(sla_nonlinear_options *opt);

/** The defaults of sla_nonlinear_options_init() with method set and max_iter 500 for picard
 *  and anderson, which converge linearly. */
SLA_API void sla_nonlinear_options_init_for(sla_nonlinear_options *opt,
                                            sla_nonlinear_method method);

/** Checks the problem and the options and allocates the work space (O(n + nnz); Anderson
 *  O(n·m) more). Nothing is evaluated. The problem struct is copied; the pattern retained.
 *  @return SLA_OK; SLA_EINVAL naming the field (NULL residual, a method without the callbacks
 *          it needs, options out of range); SLA_ESHAPE (pattern not n × n); SLA_EDTYPE;
 *          SLA_ENOMEM. Messages start with "sla_nonlinear_create:". */
SLA_API sla_status sla_nonlinear_create(const sla_nonlinear_problem *problem,
                                        const sla_nonlinear_options *opt, sla_nonlinear **out);

/** Solves F(u) = 0 from u0 ([n], finite; not modified) into u ([n], must not overlap u0).
 *  Linear solves go through an sla solver object (options.linear; method auto decides once, at
 *  the first Jacobian, and refactor reuses its analysis for every later step and solve; a
 *  refactor that fails — e.g. auto chose Cholesky and the Jacobian became indefinite — creates
 *  the solver again once). Not collective.
 *  @param[out] info  may be NULL; always written (converged = 0 on any error).
 *  @return SLA_OK (converged); SLA_NOT_CONVERGED (warning: u is the last iterate, info.reason
 *          says why: max iterations, line search, diverged, non-finite, stagnation);
 *          SLA_ENONFINITE (u0 or F(u0) not finite: the message names the entry);
 *          SLA_ECALLBACK (reason callback); the linear solver's error status (reason linear
 *          solver, e.g. SLA_ESINGULAR for a singular Jacobian, the message names the iteration
 *          and carries the solver's words); SLA_EINVAL; SLA_ENOMEM. On an error u is untouched;
 *          the last iterate is still available from sla_nonlinear_solution(). */
SLA_API sla_status sla_nonlinear_solve(sla_nonlinear *nl, const void *u0, void *u,
                                       sla_nonlinear_info *info);

/** Backward of the last sla_nonlinear_solve(), which must have converged: with u* its
 *  solution and g = ∂L/∂u* ([n], finite),
 *    λ = J(u*)⁻ᵀ g,   then problem.param_vjp(ctx, u*, −λ) (if set) for ∂L/∂θ.
 *  With pattern + jacobian: J(u*) is evaluated once, and λ is computed by iterative
 *  refinement with the solver object of the last Newton step (op = T on its factors or
 *  preconditioner, whose Jacobian was taken at the previous iterate, not at u*); residuals
 *  g − J(u*)ᵀλ by SpMV; if the refinement contracts by less than 1/2 a step, the solver is
 *  refactored at J(u*) (symbolic analysis kept). newton_krylov with a preconditioner: a Krylov
 *  solve on J(u*)ᵀ (by SpMV with J(u*) when jacobian is given, else jacobian_apply op = T)
 *  preconditioned by its last preconditioner, op = T. picard and anderson (and newton_krylov
 *  without a preconditioner) with jacobian: a solver on J(u*) (options.linear), then the same
 *  refinement. With jacobian_apply only: a Krylov solve on Jᵀ (options.linear.method, auto:
 *  gmres) preconditioned by Picard's factors of A (op = T) when there are some.
 *  g is scaled by a power of two near 1/‖g‖∞ first (exact), so that tiny cotangents do not
 *  underflow; g = 0 gives λ = 0 (and calls param_vjp with w = 0).
 *  @param[out] lambda  [n] (NULL to skip), written only on success or SLA_NOT_CONVERGED.
 *  @param[out] info    may be NULL: iterations (summed), residual_norm ‖g − J(u*)ᵀλ‖₂,
 *                      relative_residual, converged, reason, description.
 *  @return SLA_OK; SLA_NOT_CONVERGED (the refinement or Krylov solve stopped above the
 *          tolerance: λ is the best iterate); SLA_EINVAL (no solve yet, the last one did not
 *          converge, no Jᵀ available, NULL or overlapping arrays); SLA_ENONFINITE (g);
 *          SLA_ECALLBACK; a linear solver error. Messages start with "sla_nonlinear_vjp:". */
SLA_API sla_status sla_nonlinear_vjp(sla_nonlinear *nl, const void *g, void *lambda,
                                     sla_solve_info *info);

/** The last iterate of the last solve ([n] of the dtype, NULL before the first solve): after an
 *  error (e.g. a callback that failed at iteration 7) it is still there. The array belongs to
 *  nl and is valid until the next call on nl. */
SLA_API const void *sla_nonlinear_solution(const sla_nonlinear *nl);

/** Frees nl and sets *nl to NULL (NULL allowed). */
SLA_API void sla_nonlinear_free(sla_nonlinear **nl);

/** Names: "newton", "newton_krylov", "picard", "anderson". */
SLA_API const char *sla_nonlinear_method_name(sla_nonlinear_method m);
SLA_API sla_status sla_nonlinear_method_from_name(const char *name, sla_nonlinear_method *m);
/** Names: "converged", "max iterations", "line search failed", "diverged", "non-finite",
 *  "stagnation", "linear solver failed", "callback failed", "error". */
SLA_API const char *sla_nonlinear_reason_name(sla_nonlinear_reason r);

/** Distance-2 colouring of the columns of an m × n pattern (Curtis, Powell & Reid 1974; greedy
 *  in the largest-first order of Coleman & Moré 1983): two columns that share a row get
 *  different colours, so that the Jacobian on this pattern is recovered from ncolors products
 *  J·s_c, s_c = Σ_{color[j] = c} e_j: J[i][j] = (J s_{color[j]})[i] for every slot (i, j).
 *  @param[out] color   [n] int32 in [0, ncolors).
 *  @param[out] ncolors number of colours (≥ max row length; 0 for n = 0).
 *  @return SLA_OK; SLA_EINVAL (NULL); SLA_ENOMEM. Deterministic. */
SLA_API sla_status sla_pattern_color_columns(const sla_pattern *p, int32_t *color,
                                             int64_t *ncolors);

#ifdef __cplusplus
}
#endif
#endif
