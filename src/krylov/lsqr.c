/* LSQR (Paige & Saunders 1982, ACM TOMS 8(1) 43–71, Algorithm LSQR with the damped variant of
 * its section 2) against the operator table: min ‖b − op(A) x‖₂² + damp²‖x‖₂² for an m × n
 * operator of any shape, by Golub–Kahan bidiagonalisation
 *     β₁u₁ = b,  α₁v₁ = op(A)ᵀu₁,  β_{k+1}u_{k+1} = op(A)v_k − α_k u_k,
 *     α_{k+1}v_{k+1} = op(A)ᵀu_{k+1} − β_{k+1}v_k,
 * and the QR factorisation of the lower bidiagonal B_k by Givens rotations (one more rotation per
 * step eliminates damp). The recurrences give, at no extra cost, the estimates of the paper:
 * ‖r̄_k‖ (φ̄ with the damping part ψ), ‖Āᵀr̄_k‖ = α_{k+1}|c_k φ̄_k|, ‖A‖ ≈ ‖B_k‖_F (grows towards
 * ‖A‖_F), ‖x_k‖ (the paper's section 5.3 recurrence, as in Saunders' lsqr.f).
 *
 * Stopping rules (sla's rtol and atol; the paper's ATOL = BTOL = rtol):
 *   S1  ‖r‖ ≤ rtol·(‖A‖·‖x‖ + ‖b‖)  or ‖r‖ ≤ atol          (consistent systems)
 *   S2  ‖op(A)ᵀr − damp²x‖ ≤ rtol·‖A‖·‖r‖                  (least squares, inconsistent)
 * with r = b − op(A)x (and, with damp, ‖r‖ the norm of the augmented residual [r; −damp·x]).
 * When the estimates meet S1 or S2 the true r and op(A)ᵀr are computed; if they miss both rules
 * the solve stops with reason stagnation (LSQR has no restart: the estimates went below what
 * the arithmetic attains). x₀ ≠ 0 solves for the correction from r₀ = b − op(A)x₀.
 *
 * Complex operators (complex spaces): the same recurrences with the adjoint op(A)ᴴ in place of
 * op(A)ᵀ (op N ↔ C). Every scalar of the bidiagonalisation is real (α, β are norms), so the
 * rotations and estimates are unchanged and the real slots of the space (Re xᴴy, axpby with
 * real scalars) are all it needs; op T of a complex operator is refused by sla_krylov_run (its
 * adjoint conj(A) is no op of the table).
 *
 * Vector spaces: A maps its domain (length n) to its range (length m); for op = N x lives in the
 * domain and b in the range, for op = T the other way. Memory: 6 vectors, 2 of b's length and 4
 * of x's (one the checkpoint of the rule in krylov.h, by LSQR's estimate of ‖r̄‖; at a stop
 * without convergence the checkpoint is returned when its true ‖r̄‖ is not larger).
 * u and v are kept unnormalised (u_k = u/‖u‖, v_k = v/‖v‖): the scalings fold into the next
 * axpby, which saves one pass over each per iteration (a sixth of the vector traffic). */
#include <math.h>

#include "krylov/krylov.h"

/* the op of the adjoint of op(A): ᵀ for real operators, ᴴ for complex ones (op N or C) */
static sla_op adjoint_op(const sla_operator *A, sla_op op)
{
    if (op != SLA_OP_N) return SLA_OP_N;
    return sla_dtype_is_complex(A->domain->dtype) ? SLA_OP_C : SLA_OP_T;
}

/* r = b − op(A)x into r, and t = op(A)ᵀr − damp²x into t; ‖r‖ and ‖t‖ into *rn, *tn */
static sla_status true_norms(const sla_operator *A, const sla_space *Kb, const sla_space *Kx,
                             sla_op op, double damp, const void *b, const void *x, void *r,
                             void *t, double *rn, double *tn)
{
    sla_op opt = adjoint_op(A, op);
    SLA_TRY(A->apply(A, op, x, r));
    SLA_TRY(Kb->axpby(Kb, 1.0, b, -1.0, r));
    SLA_TRY(Kb->norm(Kb, r, rn));
    SLA_TRY(A->apply(A, opt, r, t));
    if (damp != 0) SLA_TRY(Kx->axpby(Kx, -damp * damp, x, 1.0, t));
    return Kx->norm(Kx, t, tn);
}

/* ‖[r; −damp·x]‖ from ‖r‖ and x */
static sla_status augmented(const sla_space *Kx, double damp, double rn, const void *x,
                            double *out)
{
    double xx = 0;
    if (damp != 0) SLA_TRY(Kx->dot(Kx, x, x, &xx));
    *out = sqrt(rn * rn + damp * damp * xx);
    return SLA_OK;
}

/* The checkpoint rule of krylov.h for LSQR, by the true ‖r̄‖: of x₀ (‖r̄₀‖ in S->r0), the last
 * checkpoint and x, the smallest (ties to the earlier) becomes x (tb, tx workspace). */
static sla_status keep_best(sla_kstate *S, const sla_space *Kb, const sla_space *Kx, double damp,
                            void *x, void *tb, void *tx)
{
    sla_krylov_result *res = S->res;
    if (!S->xbest || (S->best_it == 0 && S->best_current)) return SLA_OK;   /* x is x₀ */
    double rb, nb, last, cb, best;
    SLA_TRY(augmented(Kx, damp, res->residual, x, &last));
    best = isnan(last) ? INFINITY : last;
    int64_t choice = -1;
    if (S->best_it > 0 && !S->best_current) {
        SLA_TRY(true_norms(S->A, Kb, Kx, S->op, damp, S->b, S->xbest, tb, tx, &rb, &nb));
        SLA_TRY(augmented(Kx, damp, rb, S->xbest, &cb));
        if (cb <= best) { best = cb; choice = S->best_it; }
    }
    if (S->r0 <= best) choice = 0;
    if (choice < 0) return SLA_OK;
    res->kept_iteration = choice;
    res->last_residual = res->residual;
    if (choice > 0) {
        res->residual = rb;
        res->normal_residual = nb;
        return Kx->axpby(Kx, 1.0, S->xbest, 0.0, x);
    }
    SLA_TRY(sla_kreturn_x0(S, x));
    return true_norms(S->A, Kb, Kx, S->op, damp, S->b, x, tb, tx, &res->residual,
                      &res->normal_residual);
}

/* The state of the bidiagonalisation and of the QR of B_k. */
typedef struct {
    double alpha, beta, rhobar, phibar;
    double anorm, res2, xxnorm, z, cs2, sn2, xnorm;
    double rnorm, arnorm;
} lsqr_rec;

/* One step of the QR of the damped bidiagonal (paper section 4, eqs. 4.12–4.13, and the norm
 * estimates of section 5): updates x and w in place, given the new β in L and α_new, with
 * v_{k+1} = vscale·v. */
static sla_status lsqr_rotate(const sla_space *Kx, lsqr_rec *L, double damp, const void *v,
                              double vscale, void *w, void *x, double alpha_new)
{
    /* damping: eliminate damp from the augmented bidiagonal (a rotation on rows k and n + k) */
    double rhobar1 = hypot(L->rhobar, damp);
    double cs1 = L->rhobar / rhobar1, sn1 = damp / rhobar1;
    double psi = sn1 * L->phibar;
    L->phibar *= cs1;
    /* the rotation that eliminates β_{k+1} */
    double rho = hypot(rhobar1, L->beta);
    double cs = rhobar1 / rho, sn = L->beta / rho;
    double theta = sn * alpha_new;
    L->rhobar = -cs * alpha_new;
    double phi = cs * L->phibar;
    L->phibar *= sn;
    double tau = sn * phi;
    /* x += (φ/ρ) w;  w = v_{k+1} − (θ/ρ) w */
    SLA_TRY(Kx->axpby(Kx, phi / rho, w, 1.0, x));
    SLA_TRY(Kx->axpby(Kx, vscale, v, -theta / rho, w));
    /* ‖x‖ by the recurrence of section 5.3 (a plane rotation on the lower bidiagonal R_kᵀ) */
    double delta = L->sn2 * rho, gambar = -L->cs2 * rho, rhs = phi - delta * L->z;
    double zbar = gambar != 0 ? rhs / gambar : 0;
    L->xnorm = sqrt(L->xxnorm + zbar * zbar);
    double gamma = hypot(gambar, theta);
    if (gamma == 0) {                          /* a zero column of R_kᵀ: keep the estimate */
        L->cs2 = 1;
        L->sn2 = 0;
        L->z = 0;
        return SLA_OK;
    }
    L->cs2 = gambar / gamma;
    L->sn2 = theta / gamma;
    L->z = rhs / gamma;
    L->xxnorm += L->z * L->z;
    /* ‖r̄‖ = √(φ̄² + Σψ²) and ‖Āᵀr̄‖ = α|τ| (section 5.1, 5.2) */
    L->res2 += psi * psi;
    L->rnorm = sqrt(L->phibar * L->phibar + L->res2);
    L->arnorm = alpha_new * fabs(tau);
    return SLA_OK;
}

sla_status sla_krylov_lsqr(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                           const void *b, void *x, sla_krylov_result *res)
{
    const sla_space *Kb = op == SLA_OP_N ? A->range : A->domain;
    const sla_space *Kx = op == SLA_OP_N ? A->domain : A->range;
    sla_op opt = adjoint_op(A, op);
    double damp = P->damp;
    void *vb[2] = {0}, *vx[3] = {0};
    SLA_TRY(sla_kvecs_create(Kb, 2, vb));
    sla_status st = sla_kvecs_create(Kx, 3, vx);
    if (st < 0) { sla_kvecs_free(Kb, 2, vb); return st; }
    void *u = vb[0], *tb = vb[1], *v = vx[0], *w = vx[1], *tx = vx[2];
    /* the monitor's and the checkpoint's state */
    sla_kstate S = {.A = A, .V = Kx, .op = op, .P = P, .b = b, .res = res};
    *res = (sla_krylov_result){.reason = SLA_REASON_CONVERGED, .kept_iteration = -1,
                               .last_residual = NAN};
    sla_reason stop = SLA_REASON_CONVERGED;
    lsqr_rec L = {0};
    int64_t it = 0;
    double x0norm = 0;

    SLA_KCALL(Kb->norm(Kb, b, &res->bnorm));
    if (!isfinite(res->bnorm)) {
        res->reason = SLA_REASON_NONFINITE;
        res->residual = res->normal_residual = res->bnorm;
        goto out;
    }
    if (res->bnorm == 0) {                     /* b = 0: x = 0 is the (minimum-norm) solution */
        SLA_KCALL(Kx->axpby(Kx, 0.0, v, 0.0, x));
        st = sla_kmonitor(&S, 0, 0.0);
        goto out;
    }
    /* β₁u₁ = b − op(A)x₀; u stays unnormalised: u_k = u/su with su = ‖u‖ (and v_k = v/sv) */
    if (P->x0_nonzero) {
        SLA_KCALL(A->apply(A, op, x, u));
        SLA_KCALL(Kb->axpby(Kb, 1.0, b, -1.0, u));
        SLA_KCALL(Kx->norm(Kx, x, &x0norm));
    } else {
        SLA_KCALL(Kb->axpby(Kb, 1.0, b, 0.0, u));
    }
    SLA_KCALL(Kb->norm(Kb, u, &L.beta));
    double su = L.beta, sv;
    if (!isfinite(L.beta)) { stop = SLA_REASON_NONFINITE; goto finish; }
    SLA_KCALL(sla_kmonitor(&S, 0, L.beta));
    /* α₁v₁ = op(A)ᵀu₁ = op(A)ᵀu/su (written before x is zeroed: x may hold NaN on entry, and
     * x = 0·v needs a finite v) */
    SLA_KCALL(A->apply(A, opt, u, v));
    if (!P->x0_nonzero) SLA_KCALL(Kx->axpby(Kx, 0.0, v, 0.0, x));
    if (L.beta <= P->atol) goto finish;
    SLA_KCALL(Kx->norm(Kx, v, &sv));
    L.alpha = sv / su;
    if (!isfinite(L.alpha)) { stop = SLA_REASON_NONFINITE; goto finish; }
    if (L.alpha == 0) goto finish;             /* op(A)ᵀb = 0: x₀ is a solution */
    /* the first checkpoint is x₀ (x = 0 needs no copy), at ‖r̄₀‖ */
    SLA_KCALL(Kx->vec_create(Kx, &S.xbest));
    if (P->x0_nonzero) {
        SLA_KCALL(Kx->vec_create(Kx, &S.x0));
        SLA_KCALL(Kx->axpby(Kx, 1.0, x, 0.0, S.x0));
    }
    S.r0 = S.best_rec = sqrt(L.beta * L.beta + damp * damp * x0norm * x0norm);
    S.best_current = 1;                        /* x is x₀ */
    SLA_KCALL(Kx->axpby(Kx, 1.0 / sv, v, 0.0, w));   /* w₁ = v₁ */
    L.rhobar = L.alpha;
    L.phibar = L.beta;
    L.rnorm = L.beta;
    L.cs2 = -1;
    for (;;) {
        if (it >= P->maxiter) { stop = SLA_REASON_MAXITER; break; }
        /* β u_{k+1} = op(A)v_k − α u_k = op(A)v/sv − (α/su) u */
        SLA_KCALL(A->apply(A, op, v, tb));
        SLA_KCALL(Kb->axpby(Kb, 1.0 / sv, tb, -L.alpha / su, u));
        SLA_KCALL(Kb->norm(Kb, u, &L.beta));
        su = L.beta;
        double alpha_new = 0;
        if (L.beta > 0 && isfinite(L.beta)) {
            L.anorm = sqrt(L.anorm * L.anorm + L.alpha * L.alpha + L.beta * L.beta + damp * damp);
            /* α v_{k+1} = op(A)ᵀu_{k+1} − β v_k = op(A)ᵀu/su − (β/sv) v */
            SLA_KCALL(A->apply(A, opt, u, tx));
            SLA_KCALL(Kx->axpby(Kx, 1.0 / su, tx, -L.beta / sv, v));
            SLA_KCALL(Kx->norm(Kx, v, &alpha_new));
            sv = alpha_new;
        } else {
            L.anorm = sqrt(L.anorm * L.anorm + L.alpha * L.alpha + damp * damp);
        }
        res->iterations = ++it;
        if (!isfinite(L.beta) || !isfinite(alpha_new)) { stop = SLA_REASON_NONFINITE; break; }
        SLA_KCALL(lsqr_rotate(Kx, &L, damp, v, alpha_new > 0 ? 1.0 / sv : 0.0, w, x, alpha_new));
        L.alpha = alpha_new;
        if (!isfinite(L.rnorm) || !isfinite(L.xnorm)) { stop = SLA_REASON_NONFINITE; break; }
        SLA_KCALL(sla_kcheckpoint(&S, L.rnorm, x));
        SLA_KCALL(sla_kmonitor(&S, it, L.rnorm));
        double xn = L.xnorm + x0norm;
        int s1 = L.rnorm <= P->rtol * (L.anorm * xn + res->bnorm) || L.rnorm <= P->atol;
        int s2 = L.arnorm <= P->rtol * L.anorm * L.rnorm;
        if (s1 || s2) break;
    }
finish:
    /* the true residuals decide: converged if they meet S1 or S2 (estimates can go below what
     * the arithmetic attains) */
    SLA_KCALL(true_norms(A, Kb, Kx, op, damp, b, x, tb, tx, &res->residual,
                         &res->normal_residual));
    if (!isfinite(res->residual) || !isfinite(res->normal_residual)) {
        stop = SLA_REASON_NONFINITE;
    } else if (stop == SLA_REASON_CONVERGED) {
        double xx, rn;
        SLA_KCALL(Kx->dot(Kx, x, x, &xx));
        double xn = sqrt(xx);
        rn = sqrt(res->residual * res->residual + damp * damp * xx);   /* ‖r̄‖ */
        double anorm = L.anorm > 0 ? L.anorm : L.alpha;   /* ‖op(A)ᵀu₁‖ ≤ ‖A‖ before step 1 */
        int s1 = rn <= P->rtol * (anorm * xn + res->bnorm) || rn <= P->atol;
        int s2 = res->normal_residual <= P->rtol * anorm * rn;
        if (!s1 && !s2) stop = SLA_REASON_STAGNATION;
    }
    res->reason = stop;
    if (stop != SLA_REASON_CONVERGED) SLA_KCALL(keep_best(&S, Kb, Kx, damp, x, tb, tx));
out:
    sla_kend(&S);
    sla_kvecs_free(Kb, 2, vb);
    sla_kvecs_free(Kx, 3, vx);
    return st;
}
