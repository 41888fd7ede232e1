/* The distributed Krylov solver object (sla/mpi.h): create (method and preconditioner
 * resolved, preconditioner set up), solve, refactor, free. Every system of a batch and every
 * right-hand side is one sla_krylov_run() on the distributed space and operator, one after
 * another on the calling thread (collectives of several threads must not interleave on one
 * communicator). The VJP is solver_vjp.c, the choice of method auto solver_auto.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mpi/dsolver.h"
#include "core/kernels.h"

void sla_dist_solver_options_init(sla_dist_solver_options *o)
{
    *o = (sla_dist_solver_options){.method = SLA_METHOD_AUTO, .precond = SLA_DIST_PC_AUTO,
                                   .rtol = 1e-10, .atol = 0, .maxiter = SLA_MAXITER_DEFAULT,
                                   .restart = 50, .damp = 0, .initial_guess_nonzero = 0};
}

const char *sla_dist_precond_name(sla_dist_precond p)
{
    static const char *const names[SLA_DIST_PC_COUNT] = {
        "auto", "none", "jacobi", "bjacobi-ic0", "bjacobi-ilu0", "bjacobi-amg", "boomeramg"};
    return (int)p >= 0 && p < SLA_DIST_PC_COUNT ? names[p] : "invalid";
}

int sla_dist_have_boomeramg(void) { return dist_hypre_available(); }

/* the sla_precond reported in sla_solve_info */
static sla_precond info_precond(sla_dist_precond p)
{
    switch (p) {
    case SLA_DIST_PC_JACOBI: return SLA_PRECOND_JACOBI;
    case SLA_DIST_PC_BJACOBI_IC0: return SLA_PRECOND_IC0;
    case SLA_DIST_PC_BJACOBI_ILU0: return SLA_PRECOND_ILU0;
    case SLA_DIST_PC_BJACOBI_AMG:
    case SLA_DIST_PC_BOOMERAMG: return SLA_PRECOND_AMG;
    default: return SLA_PRECOND_NONE;
    }
}

/* local checks of the options (the same on every rank, or the agreement names the rank) */
static sla_status check_options(const char *func, const sla_dist_solver_options *o)
{
    SLA_CHECK_ARG_AS(func, o->method == SLA_METHOD_AUTO || sla_method_is_iterative(o->method),
                     "options.method %s is not available for distributed matrices (cg, bicgstab, "
                     "gmres, minres, lsqr or auto)", sla_method_name(o->method));
    SLA_CHECK_ARG_AS(func, (int)o->precond >= 0 && o->precond < SLA_DIST_PC_COUNT,
                     "options.precond = %d is not a sla_dist_precond", (int)o->precond);
    SLA_CHECK_ARG_AS(func, isfinite(o->rtol) && o->rtol >= 0 && isfinite(o->atol) && o->atol >= 0,
                     "options.rtol = %g and options.atol = %g must be finite and ≥ 0", o->rtol, o->atol);
    SLA_CHECK_ARG_AS(func, o->maxiter >= 1 || o->maxiter == SLA_MAXITER_DEFAULT,
                     "options.maxiter = %lld < 1", (long long)o->maxiter);
    SLA_CHECK_ARG_AS(func, o->restart >= 1, "options.restart = %lld < 1", (long long)o->restart);
    SLA_CHECK_ARG_AS(func, isfinite(o->damp) && o->damp >= 0, "options.damp = %g", o->damp);
    SLA_CHECK_ARG_AS(func, o->damp == 0 || o->method == SLA_METHOD_LSQR || o->method == SLA_METHOD_AUTO,
                     "options.damp = %g is for lsqr only", o->damp);
    return sla_check_flag(func, "options.initial_guess_nonzero", o->initial_guess_nonzero);
}

static void describe(sla_dist_solver *s, const char *why)
{
    char method[32], atol[48] = "";
    if (s->opt.method == SLA_METHOD_GMRES)
        snprintf(method, sizeof method, "gmres(%lld)", (long long)s->opt.restart);
    else
        snprintf(method, sizeof method, "%s", sla_method_name(s->opt.method));
    if (s->opt.atol > 0) snprintf(atol, sizeof atol, ", atol %g", s->opt.atol);
    snprintf(s->description, sizeof s->description,
             "%s + %s (libsla_mpi, %d ranks): rtol %g%s, maxiter %lld%s%s", method, s->pc.note,
             s->pattern->rows->size, s->opt.rtol, atol, (long long)s->opt.maxiter,
             why[0] ? "; " : "", why);
}

void sla_dist_solver_free(sla_dist_solver **ps)
{
    sla_dist_solver *s = ps ? *ps : NULL;
    if (!s) return;
    dist_pc_free(&s->pc);
    sla_dist_pattern_free(&s->pattern);
    sla_free(s);
    *ps = NULL;
}

sla_status sla_dist_solver_create(const sla_dist_matrix *A, const sla_dist_solver_options *opt,
                                  sla_dist_solver **out)
{
    const char *func = __func__;
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(A && A->pattern, "%s is NULL", A ? "A->pattern" : "A");
    const sla_dist_pattern *P = A->pattern;
    sla_dist_solver_options o;
    if (opt) o = *opt;
    else sla_dist_solver_options_init(&o);
    sla_status st = check_options(func, &o);
    st = dist_agree(P->comm, func, st);
    if (st == SLA_OK) st = sla_error_attribute(sla_dist_matrix_check(A, 1), func);
    SLA_TRY(st);
    int64_t M = sla_dist_layout_size(P->rows), N = sla_dist_layout_size(P->cols);
    int same = P->rows == P->cols;
    if (!same) SLA_TRY(dist_layouts_same(P->rows, P->cols, func, &same));
    if (o.method != SLA_METHOD_LSQR && o.method != SLA_METHOD_AUTO) {
        if (M != N)
            return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld: method %s needs a square matrix "
                            "(lsqr solves least squares)", (long long)M, (long long)N,
                            sla_method_name(o.method));
        if (!same)
            return SLA_FAIL(SLA_EINVAL, "method %s needs the rows and columns of A distributed "
                            "alike (x and b on one layout): build the pattern with the same "
                            "layout twice", sla_method_name(o.method));
    }
    sla_dist_solver *s = sla_calloc(1, sizeof *s, "distributed solver");
    SLA_TRY(dist_agree(P->comm, func, s ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func)));
    s->pattern = sla_dist_pattern_retain((sla_dist_pattern *)P);
    s->A = *A;
    s->comm = P->comm;
    s->opt = o;
    s->square = M == N && same;
    if (s->opt.maxiter == SLA_MAXITER_DEFAULT) s->opt.maxiter = 10 * (M > N ? M : N) + 100;
    char why[600] = "";
    st = dist_solver_choose(s, func, why, sizeof why);
    if (st < 0) {
        sla_dist_solver_free(&s);
        return st;
    }
    describe(s, why);
    *out = s;
    return SLA_OK;
}

sla_status sla_dist_solver_refactor(sla_dist_solver *s, const void *values)
{
    SLA_CHECK_ARG(s, "solver is NULL");
    const char *func = __func__;
    sla_dist_matrix A = s->A;
    A.values = values;
    sla_status st = values ? SLA_OK : SLA_FAIL(SLA_EINVAL, "values is NULL");
    st = dist_agree(s->comm, func, st);
    if (st == SLA_OK) st = sla_error_attribute(sla_dist_matrix_check(&A, 1), func);
    SLA_TRY(st);
    s->A.values = values;
    if (s->have_facts) SLA_TRY(dist_facts_measure(&s->A, func, &s->facts));
    st = dist_pc_update(&s->pc, &s->A, func);
    s->broken = st < 0;
    if (st < 0) snprintf(s->broken_msg, sizeof s->broken_msg, "%s", sla_last_error());
    return st;
}

const char *sla_dist_solver_describe(const sla_dist_solver *s) { return s ? s->description : ""; }
sla_method sla_dist_solver_method(const sla_dist_solver *s) { return s ? s->opt.method : SLA_METHOD_AUTO; }
sla_dist_precond sla_dist_solver_precond(const sla_dist_solver *s)
{
    return s ? s->pc.kind : SLA_DIST_PC_AUTO;
}

void dist_solver_info_init(const sla_dist_solver *s, sla_solve_info *info)
{
    memset(info, 0, sizeof *info);
    info->method = s->opt.method;
    info->precond = info_precond(s->pc.kind);
    info->converged = 1;
    info->reason = SLA_REASON_CONVERGED;
    info->residual_norm = info->relative_residual = 0;
    info->rcond = NAN;
    info->normal_residual = s->opt.method == SLA_METHOD_LSQR ? 0 : NAN;
    snprintf(info->description, sizeof info->description, "%s", s->description);
}

static void info_failed(sla_solve_info *info)
{
    info->converged = 0;
    info->reason = SLA_REASON_ERROR;
}

/* column j of block b of X [batch][n][k] to/from a vector */
static void column_get(size_t es, int64_t n, int64_t k, const void *X, int64_t b, int64_t j, void *v)
{
    const char *x = (const char *)X + (size_t)(b * n * k) * es;
    for (int64_t i = 0; i < n; i++) memcpy((char *)v + (size_t)i * es, x + (size_t)(i * k + j) * es, es);
}

static void column_put(size_t es, int64_t n, int64_t k, const void *v, void *X, int64_t b, int64_t j)
{
    char *x = (char *)X + (size_t)(b * n * k) * es;
    for (int64_t i = 0; i < n; i++) memcpy(x + (size_t)(i * k + j) * es, (const char *)v + (size_t)i * es, es);
}

/* first non-finite entry of a block [batch][n][k] on this rank, as an error naming it */
sla_status dist_block_finite(const char *func, const sla_dist_layout *L, const char *name,
                             sla_dtype dtype, int64_t batch, int64_t k, const void *X)
{
    int64_t n = sla_dist_layout_local_size(L), bad;
    if (sla_all_finite(dtype, X, batch * n * k, &bad)) return SLA_OK;
    int64_t b = bad / (n * k), i = bad / k % n, j = bad % k;
    return sla_error_set(SLA_ENONFINITE, func, "%s[%lld][%lld][%lld] (global row %lld) is not "
                         "finite", name, (long long)b, (long long)i, (long long)j,
                         (long long)sla_dist_layout_global(L)[i]);
}

/* the systems, one after another; arguments checked and agreed */
sla_status dist_solver_run(sla_dist_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                           double atol, int x0_nonzero, sla_solve_info *info)
{
    const char *func = "sla_dist_solver_solve";
    const sla_dist_pattern *P = s->pattern;
    int64_t nb = op == SLA_OP_N ? P->rows->n : P->cols->n;
    int64_t nx = op == SLA_OP_N ? P->cols->n : P->rows->n;
    size_t es = sla_dtype_size(s->A.dtype);
    dist_operator o;
    void *bv = NULL, *xv = NULL;
    sla_status st = SLA_OK;
    if (nrhs > 1) {
        bv = sla_malloc((size_t)(nb ? nb : 1), es, "right-hand side");
        xv = sla_malloc((size_t)(nx ? nx : 1), es, "solution");
        if (!bv || !xv) st = sla_error_attribute(SLA_ENOMEM, func);
    }
    sla_krylov_params prm = {.rtol = s->opt.rtol, .atol = atol, .maxiter = s->opt.maxiter,
                             .restart = s->opt.restart, .damp = s->opt.damp,
                             .x0_nonzero = x0_nonzero, .monitor_every = 1};
    dist_solver_info_init(s, info);
    for (int64_t b = 0; b < s->A.batch && st >= 0; b++) {
        sla_status so = dist_operator_init(&o, &s->A, b,
                                           op == SLA_OP_T || s->opt.method == SLA_METHOD_LSQR, func);
        if (so == SLA_OK) so = dist_pc_bind(&s->pc, &o, b, op);
        st = dist_agree(s->comm, func, so);
        for (int64_t j = 0; j < nrhs && st >= 0; j++) {
            const void *bj = (const char *)B + (size_t)(b * nb * nrhs) * es;
            void *xj = (char *)X + (size_t)(b * nx * nrhs) * es;
            if (nrhs > 1) {
                column_get(es, nb, nrhs, B, b, j, bv);
                if (x0_nonzero) column_get(es, nx, nrhs, X, b, j, xv);
                bj = bv;
                xj = xv;
            }
            prm.batch_index = b;
            prm.rhs_index = j;
            sla_krylov_result r;
            st = sla_krylov_run(s->opt.method, &o.op, op, &prm, bj, xj, &r);
            /* a local failure inside a method (an MPI error) is every rank's */
            st = dist_agree(s->comm, func, st);
            if (st < 0) break;
            sla_krylov_result_merge(info, &r);
            if (nrhs > 1) column_put(es, nx, nrhs, xv, X, b, j);
        }
        dist_operator_free(&o);
    }
    sla_free(bv);
    sla_free(xv);
    if (st < 0) return st;
    return info->converged ? SLA_OK : SLA_NOT_CONVERGED;
}

/* the refusals of a solve: a broken preconditioner, BoomerAMG transposed on a nonsymmetric A */
sla_status dist_solver_ready(sla_dist_solver *s, sla_op op, const char *func)
{
    if (s->broken)
        return sla_error_set(SLA_EINVAL, func, "the preconditioner could not be updated by the "
                             "last refactor (%s); refactor with values it accepts first",
                             s->broken_msg);
    if (op == SLA_OP_T && s->pc.kind == SLA_DIST_PC_BOOMERAMG) {
        if (!s->have_facts) {
            SLA_TRY(dist_facts_measure(&s->A, func, &s->facts));
            s->have_facts = 1;
        }
        if (!s->facts.symmetric)
            return sla_error_set(SLA_EUNSUPPORTED, func, "precond boomeramg has no transposed "
                                 "application for a nonsymmetric A (its V-cycle is its own "
                                 "transpose only for symmetric A): op = T and the VJP's adjoint "
                                 "solve need a symmetric A, or jacobi or a block-Jacobi kind");
    }
    return SLA_OK;
}

sla_status sla_dist_solver_solve(sla_dist_solver *s, sla_op op, int64_t nrhs, const void *B,
                                 void *X, sla_solve_info *info)
{
    const char *func = __func__;
    sla_solve_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    info_failed(info);
    SLA_CHECK_ARG(s, "solver is NULL");
    const sla_dist_pattern *P = s->pattern;
    const sla_dist_layout *Lb = op == SLA_OP_T ? P->cols : P->rows;
    const sla_dist_layout *Lx = op == SLA_OP_T ? P->rows : P->cols;
    size_t es = sla_dtype_size(s->A.dtype);
    int64_t cb = 0, cx = 0;
    sla_status st = op == SLA_OP_N || op == SLA_OP_T
                        ? SLA_OK : SLA_FAIL(SLA_EINVAL, "op = %d is not N or T", (int)op);
    if (st == SLA_OK && nrhs < 1) st = SLA_FAIL(SLA_EINVAL, "nrhs = %lld < 1", (long long)nrhs);
    if (st == SLA_OK) st = sla_check_block(func, "B", B, s->A.batch, Lb->n, nrhs, &cb);
    if (st == SLA_OK) st = sla_check_block(func, "X", X, s->A.batch, Lx->n, nrhs, &cx);
    if (st == SLA_OK) {
        sla_buf outs[1] = {{"X", X, (size_t)cx * es}};
        sla_buf ins[2] = {{"B", B, (size_t)cb * es},
                          {"A's values", s->A.values,
                           (size_t)(s->A.batch * sla_dist_pattern_nnz(P)) * es}};
        st = sla_check_aliasing(func, outs, 1, ins, 2);
    }
    if (st == SLA_OK) st = dist_block_finite(func, Lb, "B", s->A.dtype, s->A.batch, nrhs, B);
    if (st == SLA_OK && s->opt.initial_guess_nonzero)
        st = dist_block_finite(func, Lx, "X (initial guess)", s->A.dtype, s->A.batch, nrhs, X);
    int64_t same[2] = {op, nrhs};
    static const char *const names[2] = {"op", "nrhs"};
    st = dist_agree_same(s->comm, func, st, 2, same, names);
    if (st == SLA_OK) st = dist_agree(s->comm, func, dist_solver_ready(s, op, func));
    if (st == SLA_OK)
        st = dist_solver_run(s, op, nrhs, B, X, s->opt.atol, s->opt.initial_guess_nonzero, info);
    if (st < 0) info_failed(info);
    return st;
}
