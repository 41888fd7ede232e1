/* The backward of a solve, sla_solver_solve_vjp(): λ = op(A)⁻ᵀ G on the forward's solver object
 * (factors or preconditioner reused), then ∂b = λ and ∂a by the pattern outer product. The
 * least-squares backward is lstsq.c. */
#include <math.h>
#include <string.h>

#include "core/kernels.h"
#include "solve/backend.h"

/* Checks of sla_solver_solve_vjp, all before anything is written: sizes, NULLs, finite G (and X
 * when dvalues is wanted), and no output overlapping an input or the other output. */
static sla_status vjp_check(const char *func, sla_solver *s, sla_op op, int64_t nrhs,
                            const void *X, const void *G, void *dB, void *dvalues, int64_t *total)
{
    ARG_CHECK(s && s->backend, "solver is NULL");
    ARG_CHECK(op == SLA_OP_N || op == SLA_OP_T || op == SLA_OP_C, "op = %d is not N, T or C",
              (int)op);
    ARG_CHECK(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    ARG_CHECK(!dvalues || s->pattern, "dvalues requested from a matrix-free solver");
    if (s->m != s->n)
        return sla_error_set(SLA_EUNSUPPORTED, func, "A is %lld × %lld: the backward of a "
                             "least-squares solve needs B (the residual); use "
                             "sla_solver_lstsq_vjp", (long long)s->m, (long long)s->n);
    if (s->opt.damp != 0)
        return sla_error_set(SLA_EUNSUPPORTED, func, "options.damp = %g: x is not A⁻¹b; use "
                             "sla_solver_lstsq_vjp (damp = 0)", s->opt.damp);
    SLA_TRY(sla_solver_block_size(func, s, "G", G, s->n, nrhs, total));
    if (dvalues) SLA_TRY(sla_solver_block_size(func, s, "X (needed for dvalues)", X, s->n, nrhs, total));
    size_t es = sla_dtype_size(s->dtype), bytes = (size_t)*total * es;
    size_t vbytes = s->pattern ? (size_t)(s->batch * sla_pattern_nnz(s->pattern)) * es : 0;
    const sla_buf out[] = {{"dvalues", dvalues, vbytes}, {"dB", dB, bytes}};
    const sla_buf in[] = {{"X", X, bytes}, {"G", G, bytes},
                          {"the matrix values", s->A.values, sla_solver_values_bytes(s)}};
    SLA_TRY(sla_check_aliasing(func, out, 2, in, 3));
    SLA_TRY(sla_solver_block_finite(func, s, "G", G, s->n, nrhs, *total));
    if (dvalues) SLA_TRY(sla_solver_block_finite(func, s, "X", X, s->n, nrhs, *total));
    return SLA_OK;
}

/* λ = op(A)⁻ᴴ G into lam (total entries; op(A)⁻ᵀ for real dtypes; complex op = T:
 * (Aᵀ)⁻ᴴ = conj(A)⁻¹, so λ = conj(A⁻¹ conj(G))), solved on G·2^−e with 2^e ≥ ‖G‖∞ > 2^(e−1): the
 * scaled right-hand side is exact and of unit size, so that tiny cotangents (float32, or
 * subnormal ones whose reciprocal norm overflows) neither underflow inside the solver nor
 * make it overflow; atol is scaled alike so the stopping rule is unchanged (a per-solve
 * parameter: the solver's options stay as they are). lam is scaled back. */
static sla_status adjoint_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *G,
                                int64_t total, void *lam, sla_solve_info *info, int want_residual)
{
    double gmax;
    SLA_TRY(sla_solver_block_amax(s, G, total, &gmax));
    if (gmax == 0) {
        sla_solver_info_init(s, info);
        info->residual_norm = info->relative_residual = 0;
        return sla_solver_block_zero(s, lam, total);
    }
    int e;
    frexp(gmax, &e);
    void *rhs;      /* in the block space: device memory for a device backend */
    SLA_TRY(sla_solver_block_alloc(s, total, &rhs));
    sla_solve_params p = sla_solve_params_of(s);
    p.atol = ldexp(p.atol, -e);
    p.x0_nonzero = 0;
    sla_status st = sla_solver_block_scale(s, -e, G, total, rhs);
    int cj = op == SLA_OP_T && sla_dtype_is_complex(s->dtype);
    if (cj) sla_conj(s->dtype, total, rhs, rhs);
    if (st >= 0)
        st = sla_solver_run(s, op != SLA_OP_N ? SLA_OP_N
                               : sla_dtype_is_complex(s->dtype) ? SLA_OP_C : SLA_OP_T,
                            nrhs, rhs, lam, total, &p, info, want_residual);
    sla_solver_block_free(s, total, rhs);
    if (st >= 0 && cj) sla_conj(s->dtype, total, lam, lam);
    if (st >= 0) {
        sla_status sc = sla_solver_block_scale(s, e, lam, total, lam);
        if (sc < 0) return sc;
        info->residual_norm = ldexp(info->residual_norm, e);
    }
    return st;
}

static sla_status vjp_checked(sla_solver *s, sla_op op, int64_t nrhs, const void *X,
                              const void *G, void *dB, void *dvalues, sla_solve_info *info,
                              int want_residual)
{
    const char *func = "sla_solver_solve_vjp";
    int64_t total = 0;
    if (op == SLA_OP_C && s && !sla_dtype_is_complex(s->dtype)) op = SLA_OP_T;   /* Aᴴ = Aᵀ */
    SLA_TRY(vjp_check(func, s, op, nrhs, X, G, dB, dvalues, &total));
    /* λ goes to a work array (of the block space), so that dB and dvalues are written only once
     * the solve succeeded */
    void *lam = NULL;
    if (total > 0) SLA_TRY(sla_error_attribute(sla_solver_block_alloc(s, total, &lam), func));
    sla_status st = total > 0 ? adjoint_solve(s, op, nrhs, G, total, lam, info, want_residual)
                              : SLA_OK;
    if (total == 0) {
        sla_solver_info_init(s, info);
        info->residual_norm = info->relative_residual = 0;
    }
    if (st >= 0 && dvalues) {
        /* op = N: ∂a_rc = −λ_r conj(x_c) (λ = A⁻ᴴg); op = C (Aᴴx = b, λ = A⁻¹g):
         * ∂a_rc = −x_r conj(λ_c); op = T (Aᵀx = b, λ = conj(A)⁻¹g): ∂a_rc = −conj(x_r) λ_c, the
         * conjugate of op C's term. For real dtypes conj is the identity (T = C). */
        const void *u = op == SLA_OP_N ? lam : X, *v = op == SLA_OP_N ? X : lam;
        if (s->backend->pattern_outer) {     /* a device backend's (real dtypes only) */
            sla_status so = s->backend->pattern_outer(s, -1.0, u, v, nrhs, dvalues);
            if (so < 0) st = so;
        } else {
            sla_pattern_outer_run(s->pattern, s->dtype, s->batch, -1.0, u, 1, v, 1, nrhs,
                                  1 | (op == SLA_OP_T ? SLA_OUTER_CONJ : 0), dvalues);
        }
    }
    if (st >= 0 && dB && total > 0) {
        sla_status sc = sla_solver_block_copy(s, lam, total, dB);
        if (sc < 0) st = sc;
    }
    sla_solver_block_free(s, total, lam);
    return sla_error_attribute(st, func);
}

sla_status sla_solver_solve_vjp(sla_solver *s, sla_op op, int64_t nrhs, const void *X,
                                const void *G, void *dB, void *dvalues, sla_solve_info *info)
{
    sla_solve_info local;
    int want_residual = info != NULL;
    if (!info) info = &local;
    sla_solver_info_enter(s, info);
    sla_status st = vjp_checked(s, op, nrhs, X, G, dB, dvalues, info, want_residual);
    if (st < 0) sla_solver_info_failed(info);
    return st;
}

sla_status sla_solver_lstsq_vjp(sla_solver *s, sla_op op, int64_t nrhs, const void *B,
                                const void *X, const void *G, void *dB, void *dvalues,
                                sla_solve_info *info)
{
    sla_solve_info local;
    int want_residual = info != NULL;
    if (!info) info = &local;
    sla_solver_info_enter(s, info);
    sla_status st = sla_lstsq_vjp_checked(s, op, nrhs, B, X, G, dB, dvalues, info, want_residual);
    if (st < 0) sla_solver_info_failed(info);
    return st;
}