/* sla_krylov_solve_batch (sla/backend.h): every batch element and right-hand side column is one
 * system with its own convergence test, run by sla_krylov_run on the operator the caller's
 * operator_for builds.
 *
 * Threads: when there are at least as many systems (batch × nrhs) as threads, and the spaces are
 * concurrent and the operator SLA_THREADS_ANY, the systems run in parallel, one per thread, with
 * single-threaded kernels; an operator that is SLA_THREADS_PER_BATCH (AMG) is parallel over batch
 * elements only; otherwise (callbacks, a monitor, a distributed or device space) the systems run
 * one after the other on the calling thread with OpenMP inside the kernels that move enough bytes
 * to pay for a parallel region (sla_par(), core/internal.h). Either way, results are the same run
 * to run for a given thread count. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "krylov/krylov.h"

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

typedef struct run {
    const sla_krylov_batch *J;
    sla_krylov_result *res;      /* [batch·nrhs] */
    int nchunks;                 /* per-system kernel parallelism */
    /* first error, by system index (deterministic), with its message */
    int64_t err_sys;
    sla_status err;
    char err_msg[1024];
} run;

static void record_error(run *R, int64_t sys, sla_status st)
{
    #pragma omp critical(sla_krylov_error)
    if (R->err_sys < 0 || sys < R->err_sys) {
        R->err_sys = sys;
        R->err = st;
        strncpy(R->err_msg, sla_last_error(), sizeof R->err_msg - 1);
        R->err_msg[sizeof R->err_msg - 1] = '\0';
    }
}

/* Solves system (b, j) with workspace bcol, xcol ([nb], [nx], used when nrhs > 1). */
static sla_status solve_one(run *R, int64_t b, int64_t j, void *storage, void *bcol, void *xcol)
{
    const sla_krylov_batch *J = R->J;
    size_t es = sla_dtype_size(J->dtype);
    int64_t k = J->nrhs;
    const char *Bb = (const char *)J->B + (size_t)(b * J->nb * k) * es;
    char *Xb = (char *)J->X + (size_t)(b * J->nx * k) * es;
    const void *rhs = Bb;
    void *x = Xb;
    if (k > 1) {
        column_get(es, J->nb, k, j, Bb, bcol);
        if (J->params.x0_nonzero) column_get(es, J->nx, k, j, Xb, xcol);
        rhs = bcol;
        x = xcol;
    }
    const sla_operator *A;
    SLA_TRY(J->operator_for(J->ctx, b, R->nchunks, storage, &A));
    sla_krylov_params P = J->params;
    P.batch_index = b;
    P.rhs_index = j;
    sla_status st = sla_krylov_run(J->method, A, J->op, &P, rhs, x, &R->res[b * k + j]);
    if (k > 1) column_put(es, J->nx, k, j, xcol, Xb);
    return st;
}

/* Systems [first, last) of the flattened (b, j) index, on one thread's workspace. */
static void solve_range(run *R, int64_t first, int64_t last)
{
    const sla_krylov_batch *J = R->J;
    size_t es = sla_dtype_size(J->dtype);
    void *bcol = NULL, *xcol = NULL, *storage = sla_malloc(1, J->storage_bytes, "operator");
    if (J->nrhs > 1) {
        bcol = sla_malloc((size_t)J->nb, es, "right-hand side column");
        xcol = sla_malloc((size_t)J->nx, es, "solution column");
    }
    if (!storage || (J->nrhs > 1 && (!bcol || !xcol))) {
        record_error(R, first, SLA_ENOMEM);
    } else {
        for (int64_t q = first; q < last; q++) {
            sla_status st = solve_one(R, q / J->nrhs, q % J->nrhs, storage, bcol, xcol);
            if (st < 0) {
                record_error(R, q, st);
                break;
            }
        }
    }
    sla_free(storage);
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

void sla_krylov_result_merge(sla_solve_info *info, const sla_krylov_result *r)
{
    if (r->iterations > info->iterations) info->iterations = r->iterations;
    if (r->residual > info->residual_norm || isnan(r->residual)) info->residual_norm = r->residual;
    if (r->normal_residual > info->normal_residual || isnan(r->normal_residual))
        info->normal_residual = r->normal_residual;
    double rel = r->bnorm > 0 ? r->residual / r->bnorm : 0;
    if (rel > info->relative_residual || isnan(rel)) info->relative_residual = rel;
    if (r->reason != SLA_REASON_CONVERGED) info->converged = 0;
    if (severity(r->reason) > severity(info->reason)) info->reason = r->reason;
}

/* "; returned <what> for batch element b, right-hand side j: true residual t, the last
 * iterate's l" for the first system that returned a checkpoint, and how many did */
static void note_kept(sla_solve_info *info, const sla_krylov_batch *J, const sla_krylov_result *res,
                      int64_t nsys)
{
    int64_t first = -1, count = 0;
    for (int64_t q = 0; q < nsys; q++)
        if (res[q].kept_iteration >= 0 && count++ == 0) first = q;
    if (first < 0) return;
    const sla_krylov_result *r = &res[first];
    char what[64] = "the initial guess", note[400], more[64] = "";
    if (r->kept_iteration > 0)
        snprintf(what, sizeof what, "the iterate of iteration %lld", (long long)r->kept_iteration);
    if (count > 1) snprintf(more, sizeof more, " (and %lld more systems)", (long long)(count - 1));
    snprintf(note, sizeof note, "returned %s for batch element %lld, right-hand side %lld%s: "
             "true residual %.3g, the last iterate's %.3g", what,
             (long long)(first / J->nrhs), (long long)(first % J->nrhs), more, r->residual,
             r->last_residual);
    sla_text_append(info->description, sizeof info->description, "; ", note);
}

/* The first call of operator_for, on the calling thread: how far the systems may run at once */
static sla_status probe(const sla_krylov_batch *J, sla_threading *t)
{
    void *storage = sla_malloc(1, J->storage_bytes, "operator");
    if (!storage) return SLA_ENOMEM;
    const sla_operator *A = NULL;
    sla_status st = J->operator_for(J->ctx, 0, 1, storage, &A);
    if (st >= 0) {
        *t = A->threading;
        if (!A->domain || !A->range || !A->domain->concurrent || !A->range->concurrent)
            *t = SLA_THREADS_CALLER;
        if (J->params.monitor) *t = SLA_THREADS_CALLER;     /* callbacks on the caller only */
    }
    sla_free(storage);
    return st;
}

sla_status sla_krylov_solve_batch(const sla_krylov_batch *J, sla_solve_info *info)
{
    SLA_CHECK_ARG(J && info && J->operator_for, "NULL argument");
    SLA_CHECK_ARG(J->batch >= 1 && J->nrhs >= 1, "batch = %lld and nrhs = %lld must be ≥ 1",
                  (long long)J->batch, (long long)J->nrhs);
    sla_threading threading = SLA_THREADS_CALLER;
    SLA_TRY(probe(J, &threading));
    int64_t nsys = J->batch * J->nrhs;
    run R = {.J = J, .err_sys = -1};
    R.res = sla_calloc((size_t)nsys, sizeof *R.res, "per-system results");
    if (!R.res) return SLA_ENOMEM;
    int nt = sla_threads();
    if (nt > 1 && nsys >= nt && threading == SLA_THREADS_ANY) {
        R.nchunks = 1;                          /* one system per thread */
        #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
        for (int64_t q = 0; q < nsys; q++) solve_range(&R, q, q + 1);
    } else if (nt > 1 && J->batch >= nt && threading >= SLA_THREADS_PER_BATCH) {
        R.nchunks = 1;                          /* one batch element per thread */
        #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
        for (int64_t b = 0; b < J->batch; b++) solve_range(&R, b * J->nrhs, (b + 1) * J->nrhs);
    } else {
        R.nchunks = sla_host_space_chunks(J->nb < J->nx ? J->nb : J->nx, J->kernel_bytes);
        solve_range(&R, 0, nsys);
    }
    sla_status st = SLA_OK;
    if (R.err_sys >= 0) {
        st = sla_error_set(R.err, "sla_solver_solve", "%s", R.err_msg);
    } else {
        for (int64_t q = 0; q < nsys; q++) sla_krylov_result_merge(info, &R.res[q]);
        note_kept(info, J, R.res, nsys);
    }
    sla_free(R.res);
    return st;
}
