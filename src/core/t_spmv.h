/* Template (see core/instantiate.h): CSR row gathers y_i = alpha·Σ_s a_s·x[c_s] + beta·y_i.
 * Every y_i is summed by one thread in CSR order, so results do not depend on the thread count.
 * With perm = NULL the values are read in CSR order (op = N); otherwise a_s = va[perm[s]], which
 * applies Aᵀ by gathering over the cached transpose pattern (op = T, no atomics). */

/* Rows [r0, r1) for a vector x (k = 1): the hot loop of the library. Always inlined with a
 * constant perm, so that op = N compiles to load index, load value, load x[index], multiply-add. */
static inline __attribute__((always_inline)) void
FN(gather1)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict ci,
            const int64_t *restrict perm, const REAL *restrict va, const REAL *restrict x,
            REAL alpha, REAL beta, REAL *restrict y)
{
    for (int64_t i = r0; i < r1; i++) {
        REAL sum = 0;
        for (int64_t s = rp[i], end = rp[i + 1]; s < end; s++)
            sum += (perm ? va[perm[s]] : va[s]) * x[ci[s]];
        y[i] = beta == 0 ? alpha * sum : alpha * sum + beta * y[i];
    }
}

/* Rows [r0, r1) for a block x [n][k]: the columns are taken SLA_SPMV_KBLOCK at a time into a
 * local accumulator, so each row of A is read once per column block and y once. */
static inline __attribute__((always_inline)) void
FN(gatherk)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict ci,
            const int64_t *restrict perm, const REAL *restrict va, const REAL *restrict x,
            int64_t k, REAL alpha, REAL beta, REAL *restrict y)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j0 = 0; j0 < k; j0 += SLA_SPMV_KBLOCK) {
            int64_t w = k - j0 < SLA_SPMV_KBLOCK ? k - j0 : SLA_SPMV_KBLOCK;
            REAL acc[SLA_SPMV_KBLOCK] = {0};
            for (int64_t s = rp[i], end = rp[i + 1]; s < end; s++) {
                REAL a = perm ? va[perm[s]] : va[s];
                const REAL *xs = x + (int64_t)ci[s] * k + j0;
                for (int64_t j = 0; j < w; j++) acc[j] += a * xs[j];
            }
            REAL *yi = y + i * k + j0;
            for (int64_t j = 0; j < w; j++)
                yi[j] = beta == 0 ? alpha * acc[j] : alpha * acc[j] + beta * yi[j];
        }
}

/* sla_rows_fn: rows [r0, r1) of batch element b. */
static void FN(spmv_rows)(const void *arg, int64_t b, int64_t r0, int64_t r1)
{
    const spmv_ctx *c = arg;
    const REAL *va = (const REAL *)c->values + b * c->nnz;
    const REAL *x = (const REAL *)c->x + b * c->x_stride;
    REAL *y = (REAL *)c->y + b * c->y_stride;
    REAL alpha = (REAL)c->alpha, beta = (REAL)c->beta;
    if (c->k == 1 && !c->perm)
        FN(gather1)(r0, r1, c->rowptr, c->colind, NULL, va, x, alpha, beta, y);
    else if (c->k == 1)
        FN(gather1)(r0, r1, c->rowptr, c->colind, c->perm, va, x, alpha, beta, y);
    else if (!c->perm)
        FN(gatherk)(r0, r1, c->rowptr, c->colind, NULL, va, x, c->k, alpha, beta, y);
    else
        FN(gatherk)(r0, r1, c->rowptr, c->colind, c->perm, va, x, c->k, alpha, beta, y);
}

/* sla_rows_fn for alpha = 0: y = beta·y, A and x not read (the BLAS convention, so that NaN in
 * an unused x does not leak into y); beta = 0 writes zeros without reading y. */
static void FN(scale_rows)(const void *arg, int64_t b, int64_t r0, int64_t r1)
{
    const spmv_ctx *c = arg;
    REAL *y = (REAL *)c->y + b * c->y_stride;
    REAL beta = (REAL)c->beta;
    for (int64_t i = r0 * c->k; i < r1 * c->k; i++) y[i] = beta == 0 ? 0 : beta * y[i];
}
