/* sla_lobpcg_run: libsla's LOBPCG (lobpcg.c) on rows spread over processes. The caller's
 * block callbacks become the driver's batched operator, mass matrix and preconditioner, and
 * the space's reduce hook its reduction hook; the problem it sees is a shell holding the sizes
 * and the residual scales only. */
#include <string.h>

#include "eig/eig_internal.h"

#define RUN_FAIL(...) SLA_FAIL_AS("sla_lobpcg_run", __VA_ARGS__)

typedef struct run_op { sla_block_fn fn; void *ctx; double scale; } run_op;

/* every active element, one callback each (ascending b: the same order on every process) */
static sla_status apply_blocks(eig_op *op, const int64_t *m, double *const *X, double *const *Y)
{
    const run_op *r = op->ctx;
    for (int64_t b = 0; b < op->batch; b++) {
        if (!X[b]) continue;
        SLA_TRY(r->fn(r->ctx, b, op->n, m[b], X[b], Y[b]));
        op->count += m[b];
        if (r->scale != 1.0)
            for (int64_t i = 0; i < op->n * m[b]; i++) Y[b][i] *= r->scale;
    }
    return SLA_OK;
}

static sla_status apply_mass(const eig_mass *M, int64_t n, int64_t m, const double *X, double *Y)
{
    const sla_lobpcg_problem *pb = M->ctx;
    return pb->apply_M(pb->M_ctx, M->b, n, m, X, Y);
}

static void op_set(eig_op *op, int64_t n, int64_t batch, run_op *r)
{
    memset(op, 0, sizeof *op);
    op->n = n;
    op->batch = batch;
    op->ctx = r;
    op->apply = apply_blocks;
}

static sla_status check(const sla_lobpcg_problem *pb, int64_t k, const double *lambda,
                        const double *X, const int64_t *nconv)
{
    if (!pb || !lambda || !nconv || (!X && pb->n > 0))
        return RUN_FAIL(SLA_EINVAL, "NULL argument");
    if (pb->n < 0 || pb->N < 1 || pb->n > pb->N || pb->batch < 1 || k < 1 || k > pb->N)
        return RUN_FAIL(SLA_EINVAL, "sizes n = %lld, N = %lld, batch = %lld, k = %lld out of range",
                        (long long)pb->n, (long long)pb->N, (long long)pb->batch, (long long)k);
    if (!pb->apply_A || !pb->norm_A || (pb->apply_M && !pb->norm_M) || (!pb->global && pb->n != pb->N))
        return RUN_FAIL(SLA_EINVAL, "apply_A, norm_A (norm_M with apply_M) and global (n < N) "
                        "are required");
    return SLA_OK;
}

sla_status sla_lobpcg_run(const sla_lobpcg_problem *pb, int largest, int64_t k, int64_t block,
                          int64_t maxiter, double tol, double *lambda, double *X, int64_t *nconv,
                          int64_t *stats)
{
    SLA_TRY(check(pb, k, lambda, X, nconv));
    int64_t n = pb->n, batch = pb->batch;
    eig_problem P;
    memset(&P, 0, sizeof P);
    P.n = n;
    P.batch = batch;
    P.dtype = SLA_FLOAT64;
    P.norm1 = (double *)pb->norm_A;          /* read only */
    P.has_M = pb->apply_M != NULL;
    P.normM = (double *)pb->norm_M;
    eig_mass *mass = P.has_M ? sla_calloc((size_t)batch, sizeof *mass, "mass hooks") : NULL;
    eig_result R;
    sla_status st = (P.has_M && !mass) ? SLA_ENOMEM : eig_result_init(&R, n, batch, k);
    if (st != SLA_OK) {
        sla_free(mass);
        return st;
    }
    for (int64_t b = 0; mass && b < batch; b++)
        mass[b] = (eig_mass){NULL, apply_mass, (void *)pb, b};
    run_op ra = {pb->apply_A, pb->A_ctx, largest ? -1.0 : 1.0}, rp = {pb->precond, pb->P_ctx, 1.0};
    eig_op op, pop;
    op_set(&op, n, batch, &ra);
    op_set(&pop, n, batch, &rp);
    eig_lobpcg_opts o = {largest != 0, block, maxiter, tol, NULL, 0, pb->precond ? &pop : NULL,
                         pb->space, pb->N, pb->global, &op, mass};
    st = eig_lobpcg(&P, &o, &R);
    if (st == SLA_OK) {
        memcpy(lambda, R.lambda, sizeof(double) * (size_t)(batch * k));
        if (n) memcpy(X, R.X, sizeof(double) * (size_t)(batch * k * n));
        memcpy(nconv, R.nconv, sizeof(int64_t) * (size_t)batch);
        if (stats) {
            stats[0] = R.iterations;
            stats[1] = R.op_apps;
            stats[2] = R.prec_apps;
        }
    }
    eig_result_free(&R);
    sla_free(mass);
    return st;
}
