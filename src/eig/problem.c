/* The eigenproblem in float64: promotion of float32 values, ‖A‖₁ and Gershgorin bounds, and
 * the batched operators the methods iterate with (SpMV, a solver, a callback). */
#include <math.h>
#include <string.h>

#include "core/kernels.h"
#include "eig/eig_internal.h"

static void gershgorin(const sla_matrix *X, int64_t n, double *lo, double *hi);

sla_status eig_problem_init(const sla_matrix *A, eig_problem *P)
{
    memset(P, 0, sizeof *P);
    P->p = A->pattern;
    P->n = sla_pattern_nrows(A->pattern);
    P->nnz = sla_pattern_nnz(A->pattern);
    P->batch = A->batch;
    P->Ad = *A;
    P->dtype = A->dtype;
    if (A->dtype == SLA_FLOAT32) {
        /* float32 is promoted once: every method then runs in float64 (documented in eig.h) */
        int64_t tot = P->batch * P->nnz;
        P->owned = sla_malloc((size_t)tot, sizeof(double), "float64 copy of the values");
        if (!P->owned) return SLA_ENOMEM;
        const float *v = A->values;
        for (int64_t s = 0; s < tot; s++) P->owned[s] = v[s];
        P->Ad.values = P->owned;
        P->Ad.dtype = SLA_FLOAT64;
    }
    P->norm1 = sla_malloc((size_t)(3 * P->batch), sizeof(double), "norms");
    if (!P->norm1) { eig_problem_free(P); return SLA_ENOMEM; }
    P->gersh_lo = P->norm1 + P->batch;
    P->gersh_hi = P->gersh_lo + P->batch;
    sla_status st = sla_matrix_norm(&P->Ad, '1', P->norm1);
    if (st != SLA_OK) { eig_problem_free(P); return st; }
    gershgorin(&P->Ad, P->n, P->gersh_lo, P->gersh_hi);
    return SLA_OK;
}

/* Gershgorin bounds of every batch element of the float64 matrix X (lo, hi [batch]). */
static void gershgorin(const sla_matrix *X, int64_t n, double *lo, double *hi)
{
    const int64_t *rp = sla_pattern_rowptr(X->pattern);
    const int32_t *ci = sla_pattern_colind(X->pattern);
    int64_t nnz = sla_pattern_nnz(X->pattern);
    for (int64_t b = 0; b < X->batch; b++) {
        const double *v = (const double *)X->values + b * nnz;
        double l = INFINITY, h = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            double d = 0, off = 0;
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                if (ci[s] == i) d += v[s];
                else off += fabs(v[s]);
            }
            l = fmin(l, d - off);
            h = fmax(h, d + off);
        }
        lo[b] = n ? l : 0;
        hi[b] = n ? h : 0;
    }
}

sla_status eig_problem_set_mass(eig_problem *P, const sla_matrix *M)
{
    P->pm = M->pattern;
    P->nnzm = sla_pattern_nnz(M->pattern);
    P->Md = *M;
    if (M->dtype == SLA_FLOAT32 || M->batch != P->batch) {
        /* float32 promoted, a batch-1 M copied per element: every kernel then sees A's batch */
        int64_t tot = P->batch * P->nnzm;
        P->mowned = sla_malloc((size_t)tot, sizeof(double), "float64 copy of M");
        if (!P->mowned) return SLA_ENOMEM;
        for (int64_t s = 0; s < tot; s++) {
            int64_t src = M->batch == 1 ? s % (P->nnzm ? P->nnzm : 1) : s;
            P->mowned[s] = M->dtype == SLA_FLOAT64 ? ((const double *)M->values)[src]
                                                   : ((const float *)M->values)[src];
        }
        P->Md.values = P->mowned;
        P->Md.dtype = SLA_FLOAT64;
        P->Md.batch = P->batch;
    }
    P->normM = sla_malloc((size_t)(3 * P->batch), sizeof(double), "norms of M");
    if (!P->normM) return SLA_ENOMEM;
    P->mgersh_lo = P->normM + P->batch;
    P->mgersh_hi = P->mgersh_lo + P->batch;
    P->has_M = 1;
    SLA_TRY(sla_matrix_norm(&P->Md, '1', P->normM));
    gershgorin(&P->Md, P->n, P->mgersh_lo, P->mgersh_hi);
    return SLA_OK;
}

double eig_res_scale(const eig_problem *P, int64_t b, double lambda)
{
    double s = P->norm1[b] + (P->has_M ? fabs(lambda) * P->normM[b] : 0.0);
    return s > 0 ? s : 1.0;
}

sla_matrix eig_mass_view(const eig_problem *P, int64_t b)
{
    return sla_matrix_view(P->pm, SLA_FLOAT64, 1, (const double *)P->Md.values + b * P->nnzm);
}

void eig_problem_free(eig_problem *P)
{
    sla_free(P->owned);
    sla_free(P->norm1);
    sla_free(P->mowned);
    sla_free(P->normM);
    memset(P, 0, sizeof *P);
}

/* Packs the active column-major blocks into row-major [batch][n][mmax] (zeros elsewhere). */
static sla_status pack(eig_op *op, const int64_t *m, double *const *X, int64_t *mmax)
{
    int64_t mm = 0;
    for (int64_t b = 0; b < op->batch; b++) if (X[b] && m[b] > mm) mm = m[b];
    *mmax = mm;
    if (mm == 0) return SLA_OK;
    int64_t need = op->batch * op->n * mm;
    if (need > op->cap) {
        sla_free(op->in);
        sla_free(op->out);
        op->in = sla_malloc((size_t)need, sizeof(double), "operator input");
        op->out = sla_malloc((size_t)need, sizeof(double), "operator output");
        op->cap = (op->in && op->out) ? need : 0;
        if (!op->cap) return SLA_ENOMEM;
    }
    int64_t n = op->n;
    for (int64_t b = 0; b < op->batch; b++) {
        double *dst = op->in + b * n * mm;
        if (!X[b]) { memset(dst, 0, sizeof(double) * (size_t)(n * mm)); continue; }
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < mm; j++) dst[i * mm + j] = j < m[b] ? X[b][j * n + i] : 0.0;
        op->count += m[b];
    }
    return SLA_OK;
}

static void unpack(eig_op *op, const int64_t *m, double *const *X, double *const *Y, int64_t mm)
{
    int64_t n = op->n;
    for (int64_t b = 0; b < op->batch; b++) {
        if (!X[b]) continue;
        const double *src = op->out + b * n * mm;
        for (int64_t j = 0; j < m[b]; j++)
            for (int64_t i = 0; i < n; i++) Y[b][j * n + i] = src[i * mm + j];
    }
}

sla_status eig_op_apply(eig_op *op, const int64_t *m, double *const *X, double *const *Y)
{
    return op->apply(op, m, X, Y);
}

void eig_op_free(eig_op *op)
{
    sla_free(op->in);
    sla_free(op->out);
    op->in = op->out = NULL;
    op->cap = 0;
}

static sla_status apply_spmv(eig_op *op, const int64_t *m, double *const *X, double *const *Y)
{
    const eig_spmv_ctx *c = op->ctx;
    int64_t mm;
    SLA_TRY(pack(op, m, X, &mm));
    if (mm == 0) return SLA_OK;
    SLA_TRY(sla_spmv(SLA_OP_N, c->scale, &c->P->Ad, op->in, 1, mm, 0.0, op->out));
    unpack(op, m, X, Y, mm);
    return SLA_OK;
}

static void op_init(eig_op *op, int64_t n, int64_t batch, void *ctx,
                    sla_status (*apply)(eig_op *, const int64_t *, double *const *, double *const *))
{
    memset(op, 0, sizeof *op);
    op->n = n;
    op->batch = batch;
    op->ctx = ctx;
    op->apply = apply;
}

void eig_op_spmv(eig_op *op, eig_spmv_ctx *ctx)
{
    op_init(op, ctx->P->n, ctx->P->batch, ctx, apply_spmv);
}

/* A solver of the batch of the operator: one batched solve. A solver of batch 1 serving a
 * larger batch (a shared preconditioner): one solve per active element. */
static sla_status apply_solver(eig_op *op, const int64_t *m, double *const *X, double *const *Y)
{
    sla_solver *s = op->ctx;
    int64_t mm;
    SLA_TRY(pack(op, m, X, &mm));
    if (mm == 0) return SLA_OK;
    sla_status st = SLA_OK;
    int64_t blk = op->n * mm, tot = op->batch * blk;
    /* a float32 solver (a preconditioner made for a float32 A) works on float copies */
    float *fin = NULL, *fout = NULL;
    void *in = op->in, *out = op->out;
    size_t es = sizeof(double);
    if (sla_solver_dtype(s) == SLA_FLOAT32) {
        fin = sla_malloc((size_t)tot, sizeof(float), "float32 block");
        fout = sla_malloc((size_t)tot, sizeof(float), "float32 block");
        if (!fin || !fout) { sla_free(fin); sla_free(fout); return SLA_ENOMEM; }
        for (int64_t q = 0; q < tot; q++) fin[q] = (float)op->in[q];
        in = fin;
        out = fout;
        es = sizeof(float);
    }
    if (sla_solver_batch(s) == op->batch) {
        st = sla_solver_solve(s, SLA_OP_N, mm, in, out, NULL);
    } else {
        for (int64_t b = 0; b < op->batch && st >= 0; b++)
            if (X[b]) st = sla_solver_solve(s, SLA_OP_N, mm, (char *)in + (size_t)(b * blk) * es,
                                            (char *)out + (size_t)(b * blk) * es, NULL);
    }
    if (fout && st >= 0) for (int64_t q = 0; q < tot; q++) op->out[q] = fout[q];
    sla_free(fin);
    sla_free(fout);
    if (st < 0) return st;
    unpack(op, m, X, Y, mm);
    return SLA_OK;
}

void eig_op_solver(eig_op *op, int64_t n, int64_t batch, sla_solver *s)
{
    op_init(op, n, batch, s, apply_solver);
}

/* (A − σM)⁻¹ M X: the batched SpMV with M into out, moved to in, then the batched solve. */
static sla_status apply_solver_mass(eig_op *op, const int64_t *m, double *const *X, double *const *Y)
{
    eig_massinv_ctx *c = op->ctx;
    int64_t mm;
    SLA_TRY(pack(op, m, X, &mm));
    if (mm == 0) return SLA_OK;
    SLA_TRY(sla_spmv(SLA_OP_N, 1.0, &c->P->Md, op->in, 1, mm, 0.0, op->out));
    memcpy(op->in, op->out, sizeof(double) * (size_t)(op->batch * op->n * mm));
    sla_status st = sla_solver_solve(c->s, SLA_OP_N, mm, op->in, op->out, NULL);
    if (st < 0) return st;
    unpack(op, m, X, Y, mm);
    return SLA_OK;
}

void eig_op_solver_mass(eig_op *op, eig_massinv_ctx *ctx)
{
    op_init(op, ctx->P->n, ctx->P->batch, ctx, apply_solver_mass);
}

static sla_status apply_callback(eig_op *op, const int64_t *m, double *const *X, double *const *Y)
{
    eig_cb_ctx *cb = op->ctx;
    int64_t n = op->n;
    float *xf = NULL, *yf = NULL;
    if (cb->dtype == SLA_FLOAT32) {
        xf = sla_malloc((size_t)n, sizeof(float), "float32 vector");
        yf = sla_malloc((size_t)n, sizeof(float), "float32 vector");
        if (!xf || !yf) { sla_free(xf); sla_free(yf); return SLA_ENOMEM; }
    }
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < op->batch && st == SLA_OK; b++) {
        if (!X[b]) continue;
        for (int64_t j = 0; j < m[b] && st == SLA_OK; j++) {
            const double *x = X[b] + j * n;
            double *y = Y[b] + j * n;
            int rc;
            if (xf) {
                for (int64_t i = 0; i < n; i++) xf[i] = (float)x[i];
                rc = cb->fn(cb->ctx, SLA_OP_N, b, xf, yf);
                for (int64_t i = 0; i < n; i++) y[i] = yf[i];
            } else {
                rc = cb->fn(cb->ctx, SLA_OP_N, b, x, y);
            }
            if (rc) st = EIG_FAIL(SLA_ECALLBACK, "the preconditioner callback returned %d "
                                  "(batch %lld, vector %lld)", rc, (long long)b, (long long)j);
            op->count++;
        }
    }
    sla_free(xf);
    sla_free(yf);
    return st;
}

void eig_op_callback(eig_op *op, int64_t n, int64_t batch, eig_cb_ctx *cb)
{
    op_init(op, n, batch, cb, apply_callback);
}
