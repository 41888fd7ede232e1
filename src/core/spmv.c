/* y = alpha·op(A)·x + beta·y (op = N, T or C) and its vector–Jacobian product.
 * The kernels (core/t_spmv.h) are row gathers run by sla_rows_parallel(); op = T gathers over
 * the pattern's cached transpose, reading values through its permutation, so Aᵀ·x needs no
 * atomics and no scratch and is as deterministic as A·x. The VJP is one SpMV with the other op
 * (∂x) and one restricted outer product (∂values, sla_pattern_outer_run). */
#include <complex.h>

#include "core/kernels.h"

/* Dense columns per accumulator block of the k > 1 kernel: 8 doubles fill one cache line. */
#define SLA_SPMV_KBLOCK 8

/* One SpMV as the kernels see it: the CSR structure gathered over (A's, or Aᵀ's with perm) and
 * per-batch-element strides (x_stride = 0 broadcasts x). */
typedef struct spmv_ctx {
    const int64_t *rowptr;
    const int32_t *rowptr32; /* the same as int32, or NULL (sla_pattern_rowptr32) */
    const int32_t *colind;
    const int64_t *perm;     /* NULL for op = N */
    int conj;                /* 1: conjugate the values (op = C; complex dtypes only) */
    int64_t nrows;           /* rows of op(A) */
    const void *values;
    int64_t nnz;
    const void *x;
    int64_t x_stride;
    void *y;
    int64_t y_stride;
    int64_t k;
    double complex alpha, beta;
} spmv_ctx;

#define SLA_TEMPLATE "core/t_spmv.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

/* Shape (m, n) of op(A). */
static void op_shape(sla_op op, const sla_pattern *p, int64_t *m, int64_t *n)
{
    *m = op == SLA_OP_N ? sla_pattern_nrows(p) : sla_pattern_ncols(p);
    *n = op == SLA_OP_N ? sla_pattern_ncols(p) : sla_pattern_nrows(p);
}

/* Fills the gather structure of A (transpose = 0) or Aᵀ (1), conjugating the values when conj
 * (building Aᵀ on the first transpose: may fail, SLA_ENOMEM). op(A) is (op ≠ N, op = C). */
static sla_status gather_setup(const char *func, int transpose, int conj, const sla_pattern *p,
                               spmv_ctx *c)
{
    const sla_pattern *g = p;
    c->perm = NULL;
    c->conj = conj;
    if (transpose) {
        sla_status st = sla_pattern_cached_transpose(p, &g, &c->perm);
        if (st < 0) return sla_error_wrap(st, func, "transpose of A");
    }
    c->rowptr = sla_pattern_rowptr(g);
    c->rowptr32 = c->k == 1 ? sla_pattern_rowptr32(g) : NULL;   /* the k = 1 loops read it */
    c->colind = sla_pattern_colind(g);
    c->nrows = sla_pattern_nrows(g);
    c->nnz = sla_pattern_nnz(p);
    return SLA_OK;
}

/* Runs a prepared SpMV over `batch` matrices whose values start at `values`. */
static void spmv_run(spmv_ctx *c, sla_dtype dtype, int64_t batch)
{
    static const sla_rows_fn scale[] = {scale_rows_f64, scale_rows_f32, scale_rows_c128,
                                        scale_rows_c64};
    static const sla_rows_fn rows[] = {spmv_rows_f64, spmv_rows_f32, spmv_rows_c128,
                                       spmv_rows_c64};
    sla_rows_fn fn = c->alpha == 0 ? scale[dtype] : rows[dtype];
    sla_rows_parallel(c->rowptr, c->nrows, batch, c->k, fn, c);
}

/* Checks shared by sla_spmv and sla_spmv_vjp: the matrix, op, k and x_batched. */
static sla_status check_op(const char *func, sla_op op, const sla_matrix *A, int x_batched,
                           int64_t k)
{
    SLA_TRY(sla_matrix_check_for(func, "A", A, SLA_CHECK_COMPLEX_OK));
    if (op != SLA_OP_N && op != SLA_OP_T && op != SLA_OP_C)
        return sla_error_set(SLA_EINVAL, func, "op = %d is not SLA_OP_N, SLA_OP_T or SLA_OP_C",
                             (int)op);
    if (k < 1) return sla_error_set(SLA_EINVAL, func, "k = %lld < 1", (long long)k);
    return sla_check_flag(func, "x_batched", x_batched);
}

/* Bytes of A's values, for overlap checks. */
static size_t values_bytes(const sla_matrix *A)
{
    return (size_t)(A->batch * sla_pattern_nnz(A->pattern)) * sla_dtype_size(A->dtype);
}

static sla_status spmv_checked(const char *func, sla_op op, double complex alpha,
                               const sla_matrix *A, const void *x, int x_batched, int64_t k,
                               double complex beta, void *y)
{
    SLA_TRY(check_op(func, op, A, x_batched, k));
    if (!sla_dtype_is_complex(A->dtype) && (cimag(alpha) != 0 || cimag(beta) != 0))
        return sla_error_set(SLA_EDTYPE, func, "alpha = %g%+gi, beta = %g%+gi: complex scalars "
                             "need a complex A (A is %s)", creal(alpha), cimag(alpha),
                             creal(beta), cimag(beta), sla_dtype_name(A->dtype));
    int64_t m, n, nx, ny;
    size_t es = sla_dtype_size(A->dtype);
    op_shape(op, A->pattern, &m, &n);
    SLA_TRY(sla_check_block(func, "x", x, x_batched ? A->batch : 1, n, k, &nx));
    SLA_TRY(sla_check_block(func, "y", y, A->batch, m, k, &ny));
    SLA_TRY(sla_check_overlap(func, "y", y, (size_t)ny * es, "x", x, (size_t)nx * es));
    SLA_TRY(sla_check_overlap(func, "y", y, (size_t)ny * es, "A's values", A->values,
                              values_bytes(A)));
    spmv_ctx c = {.values = A->values, .x = x, .x_stride = x_batched ? n * k : 0, .y = y,
                  .y_stride = m * k, .k = k, .alpha = alpha, .beta = beta};
    SLA_TRY(gather_setup(func, op != SLA_OP_N, op == SLA_OP_C, A->pattern, &c));
    spmv_run(&c, A->dtype, A->batch);
    return SLA_OK;
}

sla_status sla_spmv(sla_op op, double alpha, const sla_matrix *A, const void *x, int x_batched,
                    int64_t k, double beta, void *y)
{
    return spmv_checked(__func__, op, alpha, A, x, x_batched, k, beta, y);
}

sla_status sla_spmv_c(sla_op op, const double alpha[2], const sla_matrix *A, const void *x,
                      int x_batched, int64_t k, const double beta[2], void *y)
{
    SLA_CHECK_ARG(alpha && beta, "alpha or beta is NULL (pass {re, im})");
    return spmv_checked(__func__, op, CMPLX(alpha[0], alpha[1]), A, x, x_batched, k,
                        CMPLX(beta[0], beta[1]), y);
}

/* dx = alpha·op(A)ᴴ·g, summed over the batch when x was broadcast: batch element b then adds
 * into dx after the ones before it (beta = 1), a fixed order. */
static void vjp_dx(spmv_ctx *c, const sla_matrix *A, int x_batched)
{
    if (x_batched) { spmv_run(c, A->dtype, A->batch); return; }
    size_t vbytes = (size_t)c->nnz * sla_dtype_size(A->dtype);
    size_t gbytes = (size_t)c->x_stride * sla_dtype_size(A->dtype);
    const char *values = c->values, *g = c->x;
    c->x_stride = 0;
    for (int64_t b = 0; b < A->batch; b++) {
        c->values = values + (size_t)b * vbytes;
        c->x = g + (size_t)b * gbytes;
        c->beta = b == 0 ? 0.0 : 1.0;
        spmv_run(c, A->dtype, 1);
    }
}

/* Overlap checks of the VJP's outputs against its inputs and each other. */
static sla_status vjp_check_overlaps(const char *func, const sla_matrix *A, const void *x,
                                     size_t xbytes, const void *g, size_t gbytes, void *dx,
                                     void *dvalues)
{
    size_t vbytes = values_bytes(A);
    SLA_TRY(sla_check_overlap(func, "dx", dx, xbytes, "g", g, gbytes));
    SLA_TRY(sla_check_overlap(func, "dx", dx, xbytes, "x", x, xbytes));
    SLA_TRY(sla_check_overlap(func, "dx", dx, xbytes, "A's values", A->values, vbytes));
    SLA_TRY(sla_check_overlap(func, "dvalues", dvalues, vbytes, "g", g, gbytes));
    SLA_TRY(sla_check_overlap(func, "dvalues", dvalues, vbytes, "x", x, xbytes));
    SLA_TRY(sla_check_overlap(func, "dvalues", dvalues, vbytes, "A's values", A->values, vbytes));
    return sla_check_overlap(func, "dvalues", dvalues, vbytes, "dx", dx, xbytes);
}

sla_status sla_spmv_vjp(sla_op op, double alpha, const sla_matrix *A, const void *x,
                        int x_batched, int64_t k, const void *g, void *dx, void *dvalues)
{
    SLA_TRY(check_op(__func__, op, A, x_batched, k));
    int64_t m, n, nx = 0, ng, xbatch = x_batched ? A->batch : 1;
    size_t es = sla_dtype_size(A->dtype);
    op_shape(op, A->pattern, &m, &n);
    SLA_TRY(sla_check_block(__func__, "g", g, A->batch, m, k, &ng));
    /* x is read only for dvalues; dx has the shape of x */
    if (dvalues) SLA_TRY(sla_check_block(__func__, "x", x, xbatch, n, k, &nx));
    if (dx) SLA_TRY(sla_check_block(__func__, "dx", dx, xbatch, n, k, &nx));
    SLA_TRY(vjp_check_overlaps(__func__, A, x, (size_t)nx * es, g, (size_t)ng * es, dx, dvalues));
    if (dx) {
        /* op(A)ᴴ: op N → Aᴴ (transposed, conjugated), T → conj(A), C → A */
        spmv_ctx c = {.values = A->values, .x = g, .x_stride = m * k, .y = dx,
                      .y_stride = n * k, .k = k, .alpha = alpha, .beta = 0.0};
        SLA_TRY(gather_setup(__func__, op == SLA_OP_N, op != SLA_OP_C, A->pattern, &c));
        vjp_dx(&c, A, x_batched);
    }
    if (dvalues) {
        /* the conjugate Wirtinger derivative (torch's gradient) of ⟨g, y⟩: op = N:
         * ∂a_s = alpha·⟨g[r_s], x[c_s]⟩ (g xᴴ); T: alpha·conj(x[r_s]·conj(g[c_s])) (conj of
         * x gᴴ); C: alpha·x[r_s]·conj(g[c_s]) (x gᴴ). Real dtypes: T = C, no conjugation. */
        int n_op = op == SLA_OP_N;
        sla_pattern_outer_run(A->pattern, A->dtype, A->batch, alpha, n_op ? g : x,
                              n_op ? 1 : x_batched, n_op ? x : g, n_op ? x_batched : 1, k,
                              1 | (op == SLA_OP_T ? SLA_OUTER_CONJ : 0), dvalues);
    }
    return SLA_OK;
}
