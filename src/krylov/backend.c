/* The built-in Krylov backend ("krylov"): CG, BiCGStab, GMRES(m), MINRES, COCG with Jacobi, IC(0),
 * ILU(0), AMG or a user preconditioner, and LSQR (least squares, rectangular A, none), on CSR matrices or matrix-free operators, float64 and
 * float32 (and complex128 / complex64 on complex spaces: Jacobi, IC(0), ILU(0) and AMG, op N, T and C). Create sets the preconditioner up once (symbolic + numeric); refactor redoes the
 * numeric part; the adjoint (op = T) solve reuses it. See docs/krylov.md. */
#include <stdio.h>
#include <string.h>

#include "krylov/kbackend.h"

/* precond = auto for CG: AMG from this many unknowns on (when AMG is in the build). Measured
 * on 2D Poisson, one thread, set-up + solve to rtol 1e-8 (docs/krylov.md): IC(0) and AMG tie at
 * 64² (3 ms), AMG wins from 100² on (7 vs 9 ms) and by 3.6× at 256² (44 vs 157 ms). */
#define SLA_KRYLOV_AMG_MIN_N 5000

/* precond = auto: the candidates, best first. CG: AMG for large systems, else IC(0); MINRES:
 * Jacobi on |diag| (M must be SPD); GMRES and BiCGStab: ILU(0). A candidate whose set-up breaks
 * down (zero or non-positive pivot, zero diagonal, singular AMG coarse level) or is not in the
 * build gives way to the next; none is the last resort. */
static int auto_candidates(const sla_solver *s, sla_precond *c)
{
    int k = 0;
    if (sla_dtype_is_complex(s->dtype)) {        /* Jacobi, IC(0) and ILU(0) take complex values */
        if (s->opt.method == SLA_METHOD_CG) c[k++] = SLA_PRECOND_IC0;   /* LLᴴ, Hermitian PD A */
        if (s->opt.method == SLA_METHOD_GMRES || s->opt.method == SLA_METHOD_BICGSTAB ||
            s->opt.method == SLA_METHOD_COCG)
            c[k++] = SLA_PRECOND_ILU0;               /* complex symmetric A: incomplete LDLᵀ */
        if (s->opt.method != SLA_METHOD_LSQR) c[k++] = SLA_PRECOND_JACOBI;
        c[k++] = SLA_PRECOND_NONE;
        return k;
    }
    switch (s->opt.method) {
    case SLA_METHOD_CG:
        if (s->n >= SLA_KRYLOV_AMG_MIN_N) c[k++] = SLA_PRECOND_AMG;
        c[k++] = SLA_PRECOND_IC0;
        c[k++] = SLA_PRECOND_JACOBI;
        break;
    case SLA_METHOD_MINRES: c[k++] = SLA_PRECOND_JACOBI; break;
    case SLA_METHOD_LSQR: break;                 /* no preconditioner */
    default: c[k++] = SLA_PRECOND_ILU0; c[k++] = SLA_PRECOND_JACOBI; break;
    }
    c[k++] = SLA_PRECOND_NONE;
    return k;
}

/* set-up failures that make precond = auto try the next candidate */
static int gives_way(sla_status st)
{
    return st == SLA_EBREAKDOWN || st == SLA_EUNSUPPORTED || st == SLA_ESINGULAR ||
           st == SLA_ENOTSPD;
}

static sla_status make_pc(sla_solver *s, sla_precond kind, sla_pc **pc, char *reason)
{
    *pc = NULL;
    reason[0] = '\0';
    if (kind == SLA_PRECOND_NONE) return SLA_OK;
    if (sla_dtype_is_complex(s->dtype) && !s->apply && kind != SLA_PRECOND_JACOBI &&
        kind != SLA_PRECOND_ILU0 && kind != SLA_PRECOND_IC0 && kind != SLA_PRECOND_AMG &&
        kind != SLA_PRECOND_USER)
        return SLA_FAIL(SLA_EDTYPE, "preconditioner %s does not take %s values yet (jacobi, "
                        "ic0, ilu0, amg, user and none do)", sla_precond_name(kind), sla_dtype_name(s->dtype));
    if (s->opt.method == SLA_METHOD_LSQR)
        return SLA_FAIL(SLA_EINVAL, "method lsqr takes no preconditioner (precond = %s; use none "
                        "or auto)", sla_precond_name(kind));
    /* complex AMG of a non-Hermitian A is a complex symmetric cycle (R = Pᵀ): not the Hermitian
     * PD operator CG and MINRES need, so the pairing is refused rather than left to stagnate */
    if (kind == SLA_PRECOND_AMG && sla_dtype_is_complex(s->dtype) && !s->apply &&
        (s->opt.method == SLA_METHOD_CG || s->opt.method == SLA_METHOD_MINRES)) {
        double eps = s->dtype == SLA_COMPLEX128 ? 2.220446049250313e-16 : 1.1920929e-07;
        int herm = 0;
        SLA_TRY(sla_matrix_is_hermitian(&s->A, 1000 * eps, 0, &herm));
        if (!herm)
            return SLA_FAIL(SLA_EINVAL, "precond amg with method %s needs a Hermitian A (the "
                            "cycle of a complex symmetric or general A is not Hermitian); use "
                            "cocg (A = Aᵀ) or gmres", sla_method_name(s->opt.method));
    }
    sla_pc_options o = {.kind = kind, .user = s->opt.user_precond, .user_ctx = s->opt.user_precond_ctx,
                        .absolute_diagonal = s->opt.method == SLA_METHOD_MINRES};
    if (s->apply) return sla_pc_create_matrix_free(s->n, s->dtype, s->batch, &o, pc);
    return sla_pc_create(&s->A, &o, pc, reason);
}

static void describe(sla_solver *s, const sla_krylov_impl *K)
{
    char method[32];
    if (s->opt.method == SLA_METHOD_GMRES)
        snprintf(method, sizeof method, "gmres(%lld)", (long long)s->opt.restart);
    else
        snprintf(method, sizeof method, "%s", sla_method_name(s->opt.method));
    char atol[80] = "";
    if (s->opt.atol > 0) snprintf(atol, sizeof atol, ", atol %g", s->opt.atol);
    if (s->opt.damp > 0)
        snprintf(atol + strlen(atol), sizeof atol - strlen(atol), ", damp %g", s->opt.damp);
    if (s->m != s->n)
        snprintf(atol + strlen(atol), sizeof atol - strlen(atol), ", %lld × %lld",
                 (long long)s->m, (long long)s->n);
    char note[64];
    snprintf(note, sizeof note, "%s%s%s", K->kind->note,
             sla_dtype_is_complex(s->dtype) ? ", " : "",
             sla_dtype_is_complex(s->dtype) ? sla_dtype_name(s->dtype) : "");
    snprintf(s->description, sizeof s->description, "%s + %s (krylov%s): rtol %g%s, maxiter %lld%s%s",
             method, K->pc ? sla_pc_describe(K->pc) : "none", note,
             s->opt.rtol, atol, (long long)s->opt.maxiter, K->auto_note[0] ? "; " : "", K->auto_note);
}

static void krylov_destroy(sla_solver *s)
{
    sla_krylov_impl *K = s->impl;
    if (!K) return;
    sla_pc_free(&K->pc);
    sla_free(K);
    s->impl = NULL;
}

static sla_status krylov_create(sla_solver *s)
{
    sla_krylov_impl *K = sla_calloc(1, sizeof *K, "Krylov solver");
    if (!K) return SLA_ENOMEM;
    s->impl = K;
    K->kind = s->apply ? &sla_krylov_kind_fn : &sla_krylov_kind_csr;
    char reason[SLA_PC_REASON_LEN];
    if (s->opt.precond != SLA_PRECOND_AUTO) {
        sla_status st = make_pc(s, s->opt.precond, &K->pc, reason);
        if (st < 0) return st;
        describe(s, K);
        return SLA_OK;
    }
    sla_precond cand[5];
    int nc = auto_candidates(s, cand);
    char failed[320] = "";
    for (int c = 0; c < nc; c++) {
        sla_status st = make_pc(s, cand[c], &K->pc, reason);
        if (st == SLA_OK) {
            s->opt.precond = cand[c];
            snprintf(K->auto_note, sizeof K->auto_note, "precond auto → %s%s%s%s",
                     sla_precond_name(cand[c]), failed[0] ? " (" : "", failed, failed[0] ? ")" : "");
            break;
        }
        if (!gives_way(st)) return st;
        /* keep the reason the set-up returned, try the next candidate */
        char what[200];
        if (strlen(reason) > 120) strcpy(reason + sla_utf8_prefix(reason, 120), "…");
        if (st == SLA_EUNSUPPORTED)
            snprintf(what, sizeof what, "%s not in this build", sla_precond_name(cand[c]));
        else
            snprintf(what, sizeof what, "%s failed: %s", sla_precond_name(cand[c]), reason);
        sla_text_append(failed, sizeof failed, failed[0] ? "; " : "", what);
    }
    sla_clear_error();
    describe(s, K);
    return SLA_OK;
}

static sla_status krylov_refactor(sla_solver *s)
{
    sla_krylov_impl *K = s->impl;
    if (!K->pc) return SLA_OK;
    sla_status st = sla_pc_update(K->pc, &s->A, NULL);
    /* a failed numeric update leaves the preconditioner half-built: refuse to solve with it
     * until a refactor succeeds */
    K->pc_broken = st < 0;
    if (st < 0) snprintf(K->pc_error, sizeof K->pc_error, "%s", sla_last_error());
    return st;
}

/* every batch element and column by the batch runner (batch.c), on the operators of the kind */
static sla_status krylov_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                               const sla_solve_params *p, sla_solve_info *info)
{
    sla_krylov_impl *K = s->impl;
    if (K->pc_broken)
        return SLA_FAIL(SLA_EINVAL, "the preconditioner could not be updated by the last "
                        "refactor (%s); refactor with values it accepts first", K->pc_error);
    if (K->pc) SLA_TRY(sla_pc_prepare(K->pc, op));
    sla_krylov_batch J = {
        .method = s->opt.method, .op = op, .batch = s->batch, .nrhs = nrhs,
        .nb = op == SLA_OP_N ? s->m : s->n, .nx = op == SLA_OP_N ? s->n : s->m,
        .dtype = s->dtype, .B = B, .X = X,
        .params = {.rtol = p->rtol, .atol = p->atol, .maxiter = p->maxiter,
                   .restart = s->opt.restart, .damp = s->opt.damp, .x0_nonzero = p->x0_nonzero,
                   .monitor = s->opt.monitor, .monitor_ctx = s->opt.monitor_ctx,
                   .monitor_every = s->opt.monitor_every},
        .kernel_bytes = K->kind->kernel_bytes(s), .operator_for = K->kind->operator_for,
        .storage_bytes = K->kind->storage_bytes, .ctx = s};
    return sla_krylov_solve_batch(&J, info);
}

const sla_backend sla_backend_krylov = {
    .info = {.name = "krylov",
             .description = "built-in Krylov methods (CG, BiCGStab, GMRES, MINRES) with Jacobi, "
                            "IC(0), ILU(0), AMG or user preconditioners; LSQR (least squares)",
             .methods = SLA_METHOD_BIT(SLA_METHOD_CG) | SLA_METHOD_BIT(SLA_METHOD_BICGSTAB) |
                        SLA_METHOD_BIT(SLA_METHOD_GMRES) | SLA_METHOD_BIT(SLA_METHOD_MINRES) |
                        SLA_METHOD_BIT(SLA_METHOD_LSQR) | SLA_METHOD_BIT(SLA_METHOD_COCG),
             .dtypes = SLA_BOTH_DTYPES | SLA_DTYPE_BIT(SLA_COMPLEX128) |
                       SLA_DTYPE_BIT(SLA_COMPLEX64),   /* complex: jacobi, ic0, ilu0, amg */
             .priority = 10,
             .available = 1},
    .create = krylov_create,
    .refactor = krylov_refactor,
    .solve = krylov_solve,
    .destroy = krylov_destroy,
};
