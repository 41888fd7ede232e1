/* Krylov methods written once against the operator table (sla/backend.h); private to libsla,
 * reached from outside through sla_krylov_run().
 *
 * Each method solves op(A) x = b for one right-hand side. It uses only the table (vectors are
 * opaque, scalars double, every call may fail), so the same code runs on float64 and float32
 * vectors, CSR and matrix-free operators, host, distributed and device spaces. Every method:
 *   - stops when ‖b − op(A) x‖₂ ≤ tol = max(rtol·‖b‖₂, atol) (right preconditioning, or CG's and
 *     MINRES's unpreconditioned residual recurrence, so the tested norm is the true one up to
 *     rounding); before reporting convergence it recomputes the true residual, and if that
 *     misses tol it restarts from it (residual replacement); a restart that does not at least
 *     halve the true residual of the previous one ends the solve with reason stagnation;
 *   - returns b = 0 as x = 0, converged, 0 iterations;
 *   - never reports breakdown, an indefinite operator or preconditioner, NaN/Inf or maxiter as
 *     converged;
 *   - keeps checkpoints: x₀, then x whenever its residual (the method's recurrence: CG's r,
 *     BiCGStab's s and r, MINRES's carried r, LSQR's ‖r̄‖ estimate; GMRES's true residual at
 *     each restart) falls below half that of the last checkpoint — at most log₂(‖r₀‖/‖r‖)
 *     copies, one extra vector (two with a given x₀). A solve that stops without converging
 *     returns, of x₀, the last checkpoint and the last iterate, the one with the smallest TRUE
 *     residual (ties to the earlier), and says so in res->kept_iteration; so x is never worse
 *     than x₀. (A recurrence residual can drift from the true one, so a checkpoint alone
 *     would not guarantee that: CG on a singular Laplacian, measured.)
 *   - calls the monitor at iteration 0 and every monitor_every iterations; a nonzero return
 *     stops it with SLA_ECALLBACK;
 *   - fills res->residual with the true ‖b − op(A) x‖₂ of the returned x.
 * Return value: SLA_OK whatever the reason (res says why), or an error (SLA_ENOMEM,
 * SLA_ECALLBACK from the monitor, the operator or the preconditioner, a space's error) with a
 * message.
 * Memory: a fixed number of vectors (CG 4–5, BiCGStab 6–8, MINRES 13, GMRES restart + 3,
 * LSQR 6; one more with a given x₀): O(n), independent of the iteration count.
 */
#ifndef SLA_KRYLOV_KRYLOV_H
#define SLA_KRYLOV_KRYLOV_H

#include "core/internal.h"

/* ---- the host kernels' helpers (host_space.c, csr_operator.c) ---- */

/* 1 if a kernel of h moving `bytes` bytes runs its chunks on the OpenMP team. */
int sla_host_par(const sla_host_space *h, double bytes);

/* V's reduce hook on count values, or nothing for a space without one. */
sla_status sla_space_reduce(const sla_space *V, sla_reduce_op op, double *values, int count);

/* Bytes one y = A x of a CSR operator moves (values, column indices, row pointers, x and y),
 * for elements of es bytes; the rule of sla_host_par() is applied to it. */
static inline double sla_csr_bytes(int64_t n, int64_t nnz, size_t es)
{
    return (double)nnz * (double)(es + 4) + (double)n * (double)(8 + 3 * es);
}

/* ---- complex scalars of the methods (GMRES, BiCGStab, COCG) ----
 * Those methods keep their scalars in double complex whatever the space: in a real space every
 * imaginary part stays 0 and these helpers call the real slots, so the real path gives the
 * bits it gave before (a product or quotient of reals with zero imaginary parts is exact). */
#include <complex.h>
#include <math.h>

static inline double complex sla_kcmplx(double re, double im)
{
    return __builtin_complex(re, im);
}

/* *xy = xᴴy (conj = 1) or xᵀy (conj = 0); the real dot in a real space */
static inline sla_status sla_kzdot(const sla_space *V, int conj, const void *x, const void *y,
                                   double complex *xy)
{
    if (V->zdot) {
        double t[2];
        SLA_TRY(V->zdot(V, conj, x, y, t));
        *xy = sla_kcmplx(t[0], t[1]);
        return SLA_OK;
    }
    double t;
    SLA_TRY(V->dot(V, x, y, &t));
    *xy = t;
    return SLA_OK;
}

/* y = a·x + b·y; real scalars take the real slot (also in a complex space) */
static inline sla_status sla_kzaxpby(const sla_space *V, double complex a, const void *x,
                                     double complex b, void *y)
{
    if (V->zaxpby && (cimag(a) != 0 || cimag(b) != 0)) {
        double ca[2] = {creal(a), cimag(a)}, cb[2] = {creal(b), cimag(b)};
        return V->zaxpby(V, ca, x, cb, y);
    }
    return V->axpby(V, creal(a), x, creal(b), y);
}

/* a / b: a real b divides the parts (exact as in real arithmetic), else Smith's algorithm
 * (no overflow for large |b|; independent of the compiler's complex-division flags) */
static inline double complex sla_kzdiv(double complex a, double complex b)
{
    double c = creal(b), d = cimag(b);
    if (d == 0) return sla_kcmplx(creal(a) / c, cimag(a) / c);
    if (fabs(c) >= fabs(d)) {
        double t = d / c, den = c + d * t;
        return sla_kcmplx((creal(a) + cimag(a) * t) / den, (cimag(a) - creal(a) * t) / den);
    }
    double t = c / d, den = c * t + d;
    return sla_kcmplx((creal(a) * t + cimag(a)) / den, (cimag(a) * t - creal(a)) / den);
}

/* ---- the methods ---- */

typedef sla_status (*sla_kmethod)(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                                  const void *b, void *x, sla_krylov_result *res);

/* Preconditioned conjugate gradients (Hestenes & Stiefel 1952), SPD A and M, with CG's fused
 * kernels (pᵀAp inside the SpMV; x, r updates with ‖r‖² and, for Jacobi, rᵀM⁻¹r in one pass).
 * pᵀAp ≤ 0 gives reason indefinite, rᵀM⁻¹r ≤ 0 for r ≠ 0 too (M not SPD). */
sla_status sla_krylov_cg(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                         const void *b, void *x, sla_krylov_result *res);

/* BiCGStab (van der Vorst 1992), right preconditioned: op(A) M⁻¹ y = b, x = M⁻¹ y (with op = T
 * both A and M are transposed). r̂ᵀr, r̂ᵀv or tᵀs at rounding level relative to the norms of
 * their vectors (|xᵀy| ≤ 16 ε ‖x‖‖y‖) is a breakdown: the solve restarts from the true residual
 * with r̂ = r, and a second breakdown before that residual has been halved gives reason
 * breakdown. */
sla_status sla_krylov_bicgstab(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                               const void *b, void *x, sla_krylov_result *res);

/* Restarted GMRES(m) (Saad & Schultz 1986), right preconditioned, modified Gram–Schmidt
 * Arnoldi, Givens rotations on the Hessenberg matrix. The true residual is recomputed at each
 * restart; a cycle that does not reduce it gives reason stagnation. */
sla_status sla_krylov_gmres(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                            const void *b, void *x, sla_krylov_result *res);

/* MINRES (Paige & Saunders 1975; the recurrences of Choi, Paige & Saunders' minres.m) for
 * symmetric, possibly indefinite A with an SPD preconditioner M. rᵀM⁻¹r < 0 (or = 0 for r ≠ 0)
 * gives reason indefinite. The unpreconditioned residual is carried by its own recurrence so
 * the stopping rule is in the 2-norm. */
sla_status sla_krylov_minres(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                             const void *b, void *x, sla_krylov_result *res);

/* COCG, conjugate orthogonal conjugate gradients (van der Vorst & Melissen 1990), for complex
 * symmetric A = Aᵀ (not Hermitian: Helmholtz with absorbing boundaries) with a complex symmetric
 * preconditioner M: CG with the unconjugated bilinear form xᵀy in place of xᴴy, one SpMV and
 * short recurrences like CG. On a real symmetric A it is CG without CG's definiteness test.
 * pᵀAp or rᵀM⁻¹r at rounding level relative to the norms of its vectors is a breakdown
 * (reason breakdown; the bilinear form can vanish for r ≠ 0, unlike an inner product). */
sla_status sla_krylov_cocg(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                           const void *b, void *x, sla_krylov_result *res);

/* LSQR (Paige & Saunders 1982) for min ‖b − op(A)x‖₂² + P->damp²‖x‖₂², A: domain → range of any
 * shape; b lives in op(A)'s range, x in its domain. No preconditioner. Stopping rules,
 * true-residual check and memory: lsqr.c. Fills res->residual = ‖b − op(A)x‖₂ and
 * res->normal_residual. */
sla_status sla_krylov_lsqr(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                           const void *b, void *x, sla_krylov_result *res);

/* The method for an sla_method (NULL if not iterative). */
sla_kmethod sla_krylov_method(sla_method m);

/* ---- helpers shared by the methods (kcommon.c) ---- */

/* Ends a method's step on an error: `st` in scope, cleanup at `out`. */
#define SLA_KCALL(expr) do { if ((st = (expr)) < 0) goto out; } while (0)

/* State of one solve common to all methods. */
typedef struct sla_kstate {
    const sla_operator *A;
    const sla_space *V;          /* the space of x (and of b for the square methods) */
    sla_op op;
    const sla_krylov_params *P;
    const void *b;
    double tol;                  /* max(rtol·‖b‖, atol) */
    double last_replaced;        /* true residual at the last residual replacement */
    sla_krylov_result *res;
    /* the checkpoints (see the top of this file) */
    void *x0;                    /* a copy of x₀, NULL when x₀ = 0 */
    double r0;                   /* the true residual of x₀ */
    void *xbest;                 /* the last checkpoint after x₀, NULL until the solve starts */
    int64_t best_it;             /* its iteration; 0: none yet (x₀ is the checkpoint) */
    int best_current;            /* x has not moved since the checkpoint was taken */
    double best_rec;             /* the residual it was taken at */
} sla_kstate;

/* Starts a solve: ‖b‖, tol, and r = b − op(A)x (x0 given) or x = 0, r = b; the first
 * checkpoint (x₀). *done = 1 when nothing is left to do (b = 0: x = 0; or ‖r‖ ≤ tol; or b not
 * finite), with res filled. Calls the monitor at iteration 0. Always pair with sla_kend(). */
sla_status sla_kstart(sla_kstate *S, const sla_operator *A, sla_op op, const sla_krylov_params *P,
                      const void *b, void *x, void *r, sla_krylov_result *res, double *rnorm,
                      int *done);

/* Frees what sla_kstart allocated (S may be zeroed). */
void sla_kend(sla_kstate *S);

/* Monitor call at iteration it if it is a multiple of monitor_every. */
sla_status sla_kmonitor(const sla_kstate *S, int64_t it, double rnorm);

/* r = b − op(A)x and ‖r‖ into res->residual. */
sla_status sla_ktrue_residual(const sla_kstate *S, const void *x, void *r);

/* After every change of x: a new checkpoint when rnorm < half the last one's. */
sla_status sla_kcheckpoint(sla_kstate *S, double rnorm, const void *x);
/* x = x₀ (0 when no x₀ was given). */
sla_status sla_kreturn_x0(const sla_kstate *S, void *x);
/* x moved without a checkpoint call (GMRES's cycle end before its true residual). */
static inline void sla_kmoved(sla_kstate *S) { S->best_current = 0; }

/* Called when a recurrence says ‖r‖ ≤ tol: recomputes r = b − op(A)x (into r). Sets *action
 * to 0 = converged (res->reason = converged), 1 = restart from r, 2 = stop (stagnation or
 * non-finite; the checkpoint rule applied, r clobbered). */
sla_status sla_kverify(sla_kstate *S, void *x, void *r, int *action);

/* Ends a solve with `reason`: the true residual of x into res->residual (w is workspace), then
 * the checkpoint rule for a reason other than converged. */
sla_status sla_kfinish(sla_kstate *S, sla_reason reason, void *x, void *w);

/* Allocates count vectors of V into v[]; on failure frees those made and returns the error. */
sla_status sla_kvecs_create(const sla_space *V, int count, void **v);
void sla_kvecs_free(const sla_space *V, int count, void **v);

#endif
