/* The Krylov backend's solve: every batch element and right-hand side column is one system
 * with its own convergence test.
 *
 * Threads: when there are at least as many systems (batch × nrhs) as threads, the systems run
 * in parallel, one per thread, with single-threaded kernels; otherwise they run one after the
 * other with OpenMP inside the kernels (SpMV, vector updates, level-scheduled triangular
 * solves) that move enough bytes to pay for a parallel region (sla_par(), core/internal.h). A
 * preconditioner that is not reentrant (AMG) is parallel over batch elements only, and
 * callbacks (matrix-free operator, user preconditioner, monitor) are only ever called from the
 * calling thread. Either way, results are the same run to run for a given thread count. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "krylov/kbackend.h"
#include "krylov/krylov.h"

typedef struct kpc_ctx {
    const sla_pc *pc;
    int64_t b;
} kpc_ctx;

static sla_status kop_precond(const sla_kop *K, sla_op op, const void *r, void *z)
{
    const kpc_ctx *c = K->pctx;
    return sla_pc_apply(c->pc, op, c->b, r, z);
}

/* Column j of a row-major [n][k] block to/from a contiguous vector. */
static void column_get(size_t es, int64_t n, int64_t k, int64_t j, const void *M, void *v)
{
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)v + (size_t)i * es, (const char *)M + (size_t)(i * k + j) * es, es);
}

static void column_put(size_t es, int64_t n, int64_t k, int64_t j, const void *v, void *M)
{
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)M + (size_t)(i * k + j) * es, (const char *)v + (size_t)i * es, es);
}

typedef struct solve_job {
    sla_solver *s;
    sla_op op;
    int64_t nrhs;
    const void *B;
    void *X;
    sla_kresult *res;            /* [batch·nrhs] */
    int nchunks;                 /* per-system kernel parallelism */
    /* first error, by system index (deterministic), with its message */
    int64_t err_sys;
    sla_status err;
    char err_msg[1024];
} solve_job;

static void record_error(solve_job *J, int64_t sys, sla_status st)
{
    #pragma omp critical(sla_krylov_error)
    if (J->err_sys < 0 || sys < J->err_sys) {
        J->err_sys = sys;
        J->err = st;
        strncpy(J->err_msg, sla_last_error(), sizeof J->err_msg - 1);
        J->err_msg[sizeof J->err_msg - 1] = '\0';
    }
}

/* Solves system (b, j) with workspace bcol, xcol ([n] each, used when nrhs > 1). */
static sla_status solve_one(solve_job *J, int64_t b, int64_t j, void *bcol, void *xcol)
{
    sla_solver *s = J->s;
    sla_krylov_impl *impl = s->impl;
    size_t es = sla_dtype_size(s->dtype);
    /* b has op(A)'s row count, x its column count (both n unless LSQR on a rectangular A) */
    int64_t nb = J->op == SLA_OP_N ? s->m : s->n, nx = J->op == SLA_OP_N ? s->n : s->m;
    int64_t k = J->nrhs;
    const char *Bb = (const char *)J->B + (size_t)(b * nb * k) * es;
    char *Xb = (char *)J->X + (size_t)(b * nx * k) * es;
    const void *rhs = Bb;
    void *x = Xb;
    if (k > 1) {
        column_get(es, nb, k, j, Bb, bcol);
        if (s->opt.initial_guess_nonzero) column_get(es, nx, k, j, Xb, xcol);
        rhs = bcol;
        x = xcol;
    }
    sla_kop K, Kc;
    sla_kop_csr_ctx cctx;
    sla_kop_fn_ctx fctx;
    kpc_ctx pctx = {impl->pc, b};
    if (s->apply)
        sla_kop_fn_init(&K, &fctx, s->m, s->dtype, s->apply, s->apply_ctx, b, J->nchunks);
    else
        sla_kop_csr_init(&K, &cctx, &s->A, b, J->nchunks);
    if (impl->pc) {
        K.pctx = &pctx;
        K.precond = kop_precond;
        K.inv_diag = sla_pc_inv_diag(impl->pc, b);
    }
    sla_kparams P = {.rtol = s->opt.rtol, .atol = s->opt.atol, .maxiter = s->opt.maxiter,
                     .restart = s->opt.restart, .damp = s->opt.damp,
                     .x0_nonzero = s->opt.initial_guess_nonzero,
                     .monitor = s->opt.monitor, .monitor_ctx = s->opt.monitor_ctx,
                     .monitor_every = s->opt.monitor_every, .batch_index = b, .rhs_index = j};
    sla_kresult *res = &J->res[b * k + j];
    sla_status st;
    if (s->opt.method == SLA_METHOD_LSQR) {
        sla_kvec_init(&Kc, s->n, s->dtype, J->nchunks, NULL);   /* the space of columns */
        st = sla_krylov_lsqr(&K, &Kc, J->op, &P, rhs, x, res);
    } else {
        st = sla_krylov_method(s->opt.method)(&K, J->op, &P, rhs, x, res);
        res->normal_residual = NAN;
    }
    if (st >= 0 && P.monitor && res->iterations % P.monitor_every != 0) {
        int rc = P.monitor(P.monitor_ctx, b, j, res->iterations, res->residual);
        if (rc != 0)
            st = SLA_FAIL(SLA_ECALLBACK, "the monitor returned %d at the end (iteration %lld, "
                          "batch element %lld, right-hand side %lld)", rc,
                          (long long)res->iterations, (long long)b, (long long)j);
    }
    if (k > 1) column_put(es, nx, k, j, xcol, Xb);
    return st;
}

/* Systems [first, last) of the flattened (b, j) index, on one thread's workspace. */
static void solve_range(solve_job *J, int64_t first, int64_t last)
{
    size_t es = sla_dtype_size(J->s->dtype);
    void *bcol = NULL, *xcol = NULL;
    if (J->nrhs > 1) {
        int64_t len = J->s->m > J->s->n ? J->s->m : J->s->n;
        bcol = sla_malloc((size_t)len, es, "right-hand side column");
        xcol = sla_malloc((size_t)len, es, "solution column");
        if (!bcol || !xcol) {
            record_error(J, first, SLA_ENOMEM);
            sla_free(bcol);
            sla_free(xcol);
            return;
        }
    }
    for (int64_t q = first; q < last; q++) {
        sla_status st = solve_one(J, q / J->nrhs, q % J->nrhs, bcol, xcol);
        if (st < 0) {
            record_error(J, q, st);
            break;
        }
    }
    sla_free(bcol);
    sla_free(xcol);
}

static int severity(sla_reason r)
{
    switch (r) {
    case SLA_REASON_CONVERGED: return 0;
    case SLA_REASON_MAXITER: return 1;
    case SLA_REASON_STAGNATION: return 2;
    case SLA_REASON_BREAKDOWN: return 3;
    case SLA_REASON_INDEFINITE: return 4;
    default: return 5;
    }
}

sla_status sla_krylov_solve_all(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                                sla_solve_info *info)
{
    sla_krylov_impl *impl = s->impl;
    if (impl->pc) SLA_TRY(sla_pc_prepare(impl->pc, op));
    int64_t nsys = s->batch * nrhs;
    solve_job J = {.s = s, .op = op, .nrhs = nrhs, .B = B, .X = X, .err_sys = -1};
    J.res = sla_calloc((size_t)nsys, sizeof *J.res, "per-system results");
    if (!J.res) return SLA_ENOMEM;
    int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    int callbacks = s->apply || s->opt.monitor || s->opt.precond == SLA_PRECOND_USER;
    int reentrant = !impl->pc || sla_pc_reentrant(impl->pc);
    /* the largest kernel of a solve: the CSR SpMV, or CG's update (7 vectors) */
    size_t es = sla_dtype_size(s->dtype);
    double bytes = 7.0 * (double)s->n * (double)es;
    if (!s->apply) bytes = fmax(bytes, sla_kcsr_bytes(s->m, sla_pattern_nnz(s->pattern), es));
    if (nt > 1 && !callbacks && nsys >= nt && reentrant) {
        J.nchunks = 1;                          /* one system per thread */
        #pragma omp parallel for schedule(dynamic, 1)
        for (int64_t q = 0; q < nsys; q++) solve_range(&J, q, q + 1);
    } else if (nt > 1 && !callbacks && s->batch >= nt) {
        J.nchunks = 1;                          /* one batch element per thread */
        #pragma omp parallel for schedule(dynamic, 1)
        for (int64_t b = 0; b < s->batch; b++) solve_range(&J, b * nrhs, (b + 1) * nrhs);
    } else {
        J.nchunks = sla_kvec_nchunks(s->m < s->n ? s->m : s->n, bytes);
        solve_range(&J, 0, nsys);
    }
    sla_status st = SLA_OK;
    if (J.err_sys >= 0) {
        st = sla_error_set(J.err, "sla_solver_solve", "%s", J.err_msg);
    } else {
        for (int64_t q = 0; q < nsys; q++) {
            const sla_kresult *r = &J.res[q];
            if (r->iterations > info->iterations) info->iterations = r->iterations;
            if (r->residual > info->residual_norm || isnan(r->residual))
                info->residual_norm = r->residual;
            if (r->normal_residual > info->normal_residual || isnan(r->normal_residual))
                info->normal_residual = r->normal_residual;
            double rel = r->bnorm > 0 ? r->residual / r->bnorm : 0;
            if (rel > info->relative_residual || isnan(rel)) info->relative_residual = rel;
            if (r->reason != SLA_REASON_CONVERGED) info->converged = 0;
            if (severity(r->reason) > severity(info->reason)) info->reason = r->reason;
        }
    }
    sla_free(J.res);
    return st;
}
