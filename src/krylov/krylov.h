/* Krylov methods written once against the operator table (krylov/operator.h); private to libsla.
 *
 * Each method solves op(A) x = b for one right-hand side. It uses only the table (vectors are
 * opaque, scalars double), so the same code runs on float64 and float32 vectors, CSR and
 * matrix-free operators. Every method:
 *   - stops when ‖b − op(A) x‖₂ ≤ tol = max(rtol·‖b‖₂, atol) (right preconditioning, or CG's and
 *     MINRES's unpreconditioned residual recurrence, so the tested norm is the true one up to
 *     rounding); before reporting convergence it recomputes the true residual, and if that
 *     misses tol it restarts from it (residual replacement); a restart that does not at least
 *     halve the true residual of the previous one ends the solve with reason stagnation;
 *   - returns b = 0 as x = 0, converged, 0 iterations;
 *   - never reports breakdown, an indefinite operator or preconditioner, NaN/Inf or maxiter as
 *     converged; x then holds the last (finite) iterate;
 *   - calls the monitor at iteration 0 and every monitor_every iterations; a nonzero return
 *     stops it with SLA_ECALLBACK;
 *   - fills res->residual with the true ‖b − op(A) x‖₂ of the returned x.
 * Return value: SLA_OK whatever the reason (res says why), or an error (SLA_ENOMEM,
 * SLA_ECALLBACK from the monitor, the operator or the preconditioner) with a message.
 * Memory: a fixed number of vectors (CG 4, BiCGStab 8, MINRES 12, GMRES restart + 3): O(n),
 * independent of the iteration count.
 */
#ifndef SLA_KRYLOV_KRYLOV_H
#define SLA_KRYLOV_KRYLOV_H

#include "krylov/operator.h"

typedef struct sla_kparams {
    double rtol, atol;
    int64_t maxiter;
    int64_t restart;             /* GMRES */
    double damp;                 /* LSQR */
    int x0_nonzero;              /* x holds the initial guess on entry */
    sla_monitor_fn monitor;      /* may be NULL */
    void *monitor_ctx;
    int64_t monitor_every;       /* ≥ 1 */
    int64_t batch_index, rhs_index;  /* passed to the monitor */
} sla_kparams;

typedef struct sla_kresult {
    int64_t iterations;
    sla_reason reason;
    double bnorm;                /* ‖b‖₂ */
    double residual;             /* true ‖b − op(A) x‖₂ at the returned x */
    double normal_residual;      /* LSQR: true ‖op(A)ᵀr − damp²x‖₂; else NaN */
} sla_kresult;

typedef sla_status (*sla_kmethod)(const sla_kop *K, sla_op op, const sla_kparams *P,
                                  const void *b, void *x, sla_kresult *res);

/* Preconditioned conjugate gradients (Hestenes & Stiefel 1952), SPD A and M, with CG's fused
 * kernels (pᵀAp inside the SpMV; x, r updates with ‖r‖² and, for Jacobi, rᵀM⁻¹r in one pass).
 * pᵀAp ≤ 0 gives reason indefinite, rᵀM⁻¹r ≤ 0 for r ≠ 0 too (M not SPD). */
sla_status sla_krylov_cg(const sla_kop *K, sla_op op, const sla_kparams *P, const void *b,
                         void *x, sla_kresult *res);

/* BiCGStab (van der Vorst 1992), right preconditioned: op(A) M⁻¹ y = b, x = M⁻¹ y (with op = T
 * both A and M are transposed). r̂ᵀr, r̂ᵀv or tᵀs at rounding level relative to the norms of
 * their vectors (|xᵀy| ≤ 16 ε ‖x‖‖y‖) is a breakdown: the solve restarts from the true residual
 * with r̂ = r, and a second breakdown before that residual has been halved gives reason
 * breakdown. */
sla_status sla_krylov_bicgstab(const sla_kop *K, sla_op op, const sla_kparams *P, const void *b,
                               void *x, sla_kresult *res);

/* Restarted GMRES(m) (Saad & Schultz 1986), right preconditioned, modified Gram–Schmidt
 * Arnoldi, Givens rotations on the Hessenberg matrix. The true residual is recomputed at each
 * restart; a cycle that does not reduce it gives reason stagnation. */
sla_status sla_krylov_gmres(const sla_kop *K, sla_op op, const sla_kparams *P, const void *b,
                            void *x, sla_kresult *res);

/* MINRES (Paige & Saunders 1975; the recurrences of Choi, Paige & Saunders' minres.m) for
 * symmetric, possibly indefinite A with an SPD preconditioner M. rᵀM⁻¹r < 0 (or = 0 for r ≠ 0)
 * gives reason indefinite. The unpreconditioned residual is carried by its own recurrence so
 * the stopping rule is in the 2-norm. */
sla_status sla_krylov_minres(const sla_kop *K, sla_op op, const sla_kparams *P, const void *b,
                             void *x, sla_kresult *res);

/* LSQR (Paige & Saunders 1982) for min ‖b − op(A)x‖₂² + P->damp²‖x‖₂², A of any shape m × n:
 * Kr is the operator with the vector space of length m, Kc the vector space of length n (no
 * operator needed). No preconditioner. Stopping rules, true-residual check and memory: lsqr.c.
 * Fills res->residual = ‖b − op(A)x‖₂ and res->normal_residual. */
sla_status sla_krylov_lsqr(const sla_kop *Kr, const sla_kop *Kc, sla_op op, const sla_kparams *P,
                           const void *b, void *x, sla_kresult *res);

/* The method for an sla_method (NULL if not iterative, and for LSQR, which has its own
 * signature). */
sla_kmethod sla_krylov_method(sla_method m);

/* ---- helpers shared by the methods (kcommon.c) ---- */

/* State of one solve common to all methods. */
typedef struct sla_kstate {
    const sla_kop *K;
    sla_op op;
    const sla_kparams *P;
    const void *b;
    double tol;                  /* max(rtol·‖b‖, atol) */
    double last_replaced;        /* true residual at the last residual replacement */
    sla_kresult *res;
} sla_kstate;

/* Starts a solve: ‖b‖, tol, and r = b − op(A)x (x0 given) or x = 0, r = b. *done = 1 when
 * nothing is left to do (b = 0: x = 0; or ‖r‖ ≤ tol; or b not finite), with res filled.
 * Calls the monitor at iteration 0. */
sla_status sla_kstart(sla_kstate *S, const sla_kop *K, sla_op op, const sla_kparams *P,
                      const void *b, void *x, void *r, sla_kresult *res, double *rnorm,
                      int *done);

/* Monitor call at iteration it if it is a multiple of monitor_every. */
sla_status sla_kmonitor(const sla_kstate *S, int64_t it, double rnorm);

/* r = b − op(A)x and ‖r‖ into res->residual. */
sla_status sla_ktrue_residual(const sla_kstate *S, const void *x, void *r);

/* Called when a recurrence says ‖r‖ ≤ tol: recomputes r = b − op(A)x (into r). Sets *action
 * to 0 = converged (res->reason = converged), 1 = restart from r, 2 = stop (stagnation). */
sla_status sla_kverify(sla_kstate *S, const void *x, void *r, int *action);

/* Ends a solve with `reason`: the true residual of x into res->residual (w is workspace). */
sla_status sla_kfinish(sla_kstate *S, sla_reason reason, const void *x, void *w);

/* Allocates count vectors into v[]; on failure frees those made and returns SLA_ENOMEM. */
sla_status sla_kvecs_create(const sla_kop *K, int count, void **v);
void sla_kvecs_free(const sla_kop *K, int count, void **v);

#endif
