/* The backward of a least-squares solve x = op(A)⁺ b (method lsqr): sla_solver_lstsq_vjp().
 *
 * Derivation (A for op(A), one column; docs/krylov.md gives it in full). The derivative of the
 * pseudo-inverse (Golub & Pereyra 1973, SIAM J. Numer. Anal. 10(2), eq. 4.12), where the rank
 * of A is locally constant:
 *   dA⁺ = −A⁺ dA A⁺ + A⁺A⁺ᵀ dAᵀ (I − AA⁺) + (I − A⁺A) dAᵀ A⁺ᵀA⁺,
 * so with r = b − Ax, dx = dA⁺ b + A⁺ db and g = ∂L/∂x:
 *   gᵀdx = −(A⁺ᵀg)ᵀ dA x + (A⁺A⁺ᵀg)ᵀ dAᵀ r + ((I − A⁺A)g)ᵀ dAᵀ (A⁺ᵀx) + (A⁺ᵀg)ᵀ db,
 * i.e. with c = A⁺ᵀg, λ = A⁺c, w = g − Aᵀc (= (I − A⁺A)g) and z = A⁺ᵀx:
 *   ∂b = c,  ∂A = r λᵀ − c xᵀ + z wᵀ.
 * Each pseudo-inverse product is the minimum-norm least-squares solution LSQR returns from
 * x₀ = 0: c = argmin ‖Aᵀc − g‖, λ = argmin ‖Aλ − c‖, z = argmin ‖Aᵀz − x‖. For full column rank
 * w = 0 (the z solve is skipped when ‖w‖ ≤ rtol‖g‖: the term is then below the solves'
 * tolerance), λ = (AᵀA)⁻¹g and Aλ = c: ∂A = r λᵀ − (Aλ) xᵀ. Each solve sees the conditioning
 * of A, not that of AᵀA (CG on the normal equations would).
 * Complex A (torch's convention, g = ∂L/∂Re x + i ∂L/∂Im x, dL = Re(gᴴdx)): the same formula
 * with conjugate transposes (Golub & Pereyra's derivation holds over ℂ with ᴴ): c = A⁺ᴴg,
 * λ = A⁺c, w = g − Aᴴc, z = A⁺ᴴx, ∂b = c, ∂A = r λᴴ − c xᴴ + z wᴴ; op C is the conjugate
 * transpose of that (op T of a complex A is refused: its adjoint conj(A) is no op). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/kernels.h"
#include "solve/backend.h"

typedef struct {
    sla_op op;
    int64_t nrhs, nb, nx;        /* rows of B and of X */
    int64_t tb, tx;              /* entries of B and of X */
} lstsq_shape;

static sla_status lstsq_check(const char *func, sla_solver *s, const lstsq_shape *q,
                              const void *B, const void *X, const void *G, void *dB,
                              void *dvalues)
{
    ARG_CHECK(s && s->backend, "solver is NULL");
    if (s->opt.method != SLA_METHOD_LSQR)
        return sla_error_set(SLA_EUNSUPPORTED, func, "method %s: the least-squares VJP needs "
                             "method lsqr (use sla_solver_solve_vjp)",
                             sla_method_name(s->opt.method));
    if (s->opt.damp != 0)
        return sla_error_set(SLA_EUNSUPPORTED, func, "options.damp = %g: only the undamped "
                             "least-squares problem has its VJP", s->opt.damp);
    ARG_CHECK(!dvalues || s->pattern, "dvalues requested from a matrix-free solver");
    int64_t t;
    SLA_TRY(sla_solver_block_size(func, s, "G", G, q->nx, q->nrhs, &t));
    if (dvalues) {
        SLA_TRY(sla_solver_block_size(func, s, "B (needed for dvalues)", B, q->nb, q->nrhs, &t));
        SLA_TRY(sla_solver_block_size(func, s, "X (needed for dvalues)", X, q->nx, q->nrhs, &t));
    }
    size_t es = sla_dtype_size(s->dtype), bb = (size_t)q->tb * es, xb = (size_t)q->tx * es;
    size_t vb = s->pattern ? (size_t)(s->batch * sla_pattern_nnz(s->pattern)) * es : 0;
    const sla_buf out[] = {{"dvalues", dvalues, vb}, {"dB", dB, bb}};
    const sla_buf in[] = {{"B", B, bb}, {"X", X, xb}, {"G", G, xb},
                          {"the matrix values", s->A.values, vb}};
    SLA_TRY(sla_check_aliasing(func, out, 2, in, 4));
    SLA_TRY(sla_solver_block_finite(func, s, "G", G, q->nx, q->nrhs, q->tx));
    if (dvalues) {
        SLA_TRY(sla_solver_block_finite(func, s, "B", B, q->nb, q->nrhs, q->tb));
        SLA_TRY(sla_solver_block_finite(func, s, "X", X, q->nx, q->nrhs, q->tx));
    }
    return SLA_OK;
}

void sla_solve_info_merge_scaled(sla_solve_info *info, const sla_solve_info *one, int e)
{
    info->iterations += one->iterations;
    if (!one->converged) info->converged = 0;
    if (info->reason == SLA_REASON_CONVERGED) info->reason = one->reason;
    double r = ldexp(one->residual_norm, e), nr = ldexp(one->normal_residual, e);
    if (r > info->residual_norm || isnan(r)) info->residual_norm = r;
    if (one->relative_residual > info->relative_residual || isnan(one->relative_residual))
        info->relative_residual = one->relative_residual;
    if (nr > info->normal_residual || isnan(nr)) info->normal_residual = nr;
}

/* The solves and the gradient, on work arrays: C (B's size) and Lam (X's), and for dvalues
 * R = B − op(A)X, W = G − op(A)ᵀC and, when W ≠ 0, Z = op(A)⁺ᵀX. Gs = G·2^−e; p are the
 * per-solve parameters of the scaled solves (atol·2^−e, x₀ = 0 for minimum-norm solutions). */
static sla_status lstsq_run(sla_solver *s, const lstsq_shape *q, const void *B, const void *X,
                            const void *Gs, int e, const sla_solve_params *p, void *dB,
                            void *dvalues, void **work, sla_solve_info *info, int want_residual)
{
    sla_op op = q->op;
    sla_op opt = op != SLA_OP_N ? SLA_OP_N : sla_dtype_is_complex(s->dtype) ? SLA_OP_C : SLA_OP_T;
    size_t es = sla_dtype_size(s->dtype);
    void *C = work[0], *Lam = work[1], *R = work[2], *W = work[3], *Z = work[4];
    sla_solve_info one;
    sla_status st = sla_solver_run(s, opt, q->nrhs, Gs, C, q->tx, p, &one, want_residual);
    if (st < 0) return st;
    sla_solve_info_merge_scaled(info, &one, e);
    if (dvalues) {
        st = sla_solver_run(s, op, q->nrhs, C, Lam, q->tb, p, &one, want_residual);
        if (st < 0) return st;
        sla_solve_info_merge_scaled(info, &one, e);
        sla_matrix A = s->A;
        A.pattern = s->pattern;
        memcpy(R, B, (size_t)q->tb * es);
        SLA_TRY(sla_spmv(op, -1.0, &A, X, 1, q->nrhs, 1.0, R));
        memcpy(W, Gs, (size_t)q->tx * es);
        SLA_TRY(sla_spmv(opt, -1.0, &A, C, 1, q->nrhs, 1.0, W));
        double wn, gn;
        SLA_TRY(sla_solver_block_norm(s, W, q->tx, &wn));
        SLA_TRY(sla_solver_block_norm(s, Gs, q->tx, &gn));
        int rank_deficient = wn > p->rtol * gn;
        double scale = ldexp(1.0, e);
        /* op = N: ∂a_s = Σ_j r[r_s]λ[c_s] − c[r_s]x[c_s] + z[r_s]w[c_s]; op = T: transposed.
         * Complex (op N or C, ᴴ for ᵀ): ∂A = r λᴴ − c xᴴ + z wᴴ, the outer kernel's u·vᴴ; op C:
         * its conjugate transpose, λ rᴴ − x cᴴ + w zᴴ */
        int n = op == SLA_OP_N;
        sla_pattern_outer_run(s->pattern, s->dtype, s->batch, scale, n ? R : Lam, 1,
                              n ? Lam : R, 1, q->nrhs, 1, dvalues);
        sla_pattern_outer_run(s->pattern, s->dtype, s->batch, -scale, n ? C : X, 1,
                              n ? X : C, 1, q->nrhs, 0, dvalues);
        if (rank_deficient && q->tb > 0) {
            sla_solve_params pz = *p;
            pz.atol = ldexp(p->atol, e);         /* x is not scaled: the caller's atol */
            st = sla_solver_run(s, opt, q->nrhs, X, Z, q->tx, &pz, &one, want_residual);
            if (st < 0) return st;
            sla_solve_info_merge_scaled(info, &one, 0);
            sla_pattern_outer_run(s->pattern, s->dtype, s->batch, scale, n ? Z : W, 1,
                                  n ? W : Z, 1, q->nrhs, 0, dvalues);
        }
    }
    if (dB) SLA_TRY(sla_solver_block_scale(s, e, C, q->tb, dB));
    return info->converged ? SLA_OK : SLA_NOT_CONVERGED;
}

sla_status sla_lstsq_vjp_checked(sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                                 const void *X, const void *G, void *dB, void *dvalues,
                                 sla_solve_info *info, int want_residual)
{
    const char *func = "sla_solver_lstsq_vjp";
    ARG_CHECK(s && s->backend, "solver is NULL");
    if (op == SLA_OP_C && !sla_dtype_is_complex(s->dtype)) op = SLA_OP_T;   /* Aᴴ = Aᵀ */
    ARG_CHECK(op == SLA_OP_N || op == SLA_OP_T || op == SLA_OP_C, "op = %d is not N, T or C",
              (int)op);
    if (op == SLA_OP_T && sla_dtype_is_complex(s->dtype))
        return sla_error_set(SLA_EUNSUPPORTED, func, "op T with %s values: the least-squares "
                             "VJP takes op N or C", sla_dtype_name(s->dtype));
    ARG_CHECK(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    lstsq_shape q = {.op = op, .nrhs = nrhs, .nb = sla_solver_block_rows(s, op, 1),
                     .nx = sla_solver_block_rows(s, op, 0)};
    /* sizes only (B and X may be NULL when dvalues is not wanted): a non-NULL stand-in */
    SLA_TRY(sla_solver_block_size(func, s, "B", &q, q.nb, nrhs, &q.tb));
    SLA_TRY(sla_solver_block_size(func, s, "X", &q, q.nx, nrhs, &q.tx));
    SLA_TRY(lstsq_check(func, s, &q, B, X, G, dB, dvalues));
    size_t es = sla_dtype_size(s->dtype);
    memset(info, 0, sizeof *info);
    info->method = s->opt.method;
    info->precond = SLA_PRECOND_NONE;
    info->converged = 1;
    info->reason = SLA_REASON_CONVERGED;
    info->rcond = NAN;
    snprintf(info->description, sizeof info->description, "%s", s->description);
    double gmax;
    SLA_TRY(sla_solver_block_amax(s, G, q.tx, &gmax));
    if (gmax == 0 || q.tb == 0) {                /* g = 0 (or no rows): every term vanishes */
        if (dB) memset(dB, 0, (size_t)q.tb * es);
        if (dvalues) memset(dvalues, 0, (size_t)(s->batch * sla_pattern_nnz(s->pattern)) * es);
        return SLA_OK;
    }
    int e;
    frexp(gmax, &e);
    /* work: C, R, Z of B's size; Lam, W, Gs of X's size */
    void *work[6] = {0};
    int64_t sizes[6] = {q.tb, q.tx, q.tb, q.tx, q.tb, q.tx};
    sla_status st = SLA_OK;
    for (int i = 0; i < 6 && st == SLA_OK; i++)
        if (!(work[i] = sla_malloc((size_t)sizes[i], es, "least-squares VJP work"))) st = SLA_ENOMEM;
    if (st == SLA_OK) st = sla_solver_block_scale(s, -e, G, q.tx, work[5]);
    if (st == SLA_OK) {
        sla_solve_params p = sla_solve_params_of(s);
        p.atol = ldexp(p.atol, -e);
        p.x0_nonzero = 0;                       /* minimum-norm solutions need x₀ = 0 */
        st = lstsq_run(s, &q, B, X, work[5], e, &p, dB, dvalues, work, info, want_residual);
    }
    for (int i = 0; i < 6; i++) sla_free(work[i]);
    return sla_error_attribute(st, func);
}
