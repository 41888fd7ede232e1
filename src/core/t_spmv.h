/* Template (see core/instantiate.h; real and complex): CSR row gathers
 * y_i = alpha·Σ_s a_s·x[c_s] + beta·y_i. Every y_i is summed by one thread in CSR order, so
 * results do not depend on the thread count. With perm = NULL the values are read in CSR order
 * (op = N); otherwise a_s = va[perm[s]], which applies Aᵀ by gathering over the cached transpose
 * pattern (op = T, no atomics); cj = 1 conjugates a_s on the way (op = C, Aᴴ; a no-op for the
 * real instances). */

/* Rows [r0, r1) for a vector x (k = 1): the hot loop of the library. Always inlined with a
 * constant perm and a constant choice of row pointers (rp32 non-NULL: the int32 ones, half the
 * row-pointer traffic), so that op = N compiles to load index, load value, load x[index],
 * multiply-add. */
static inline __attribute__((always_inline)) void
FN(gather1)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict rp32,
            const int32_t *restrict ci, const int64_t *restrict perm, int cj,
            const ENTRY *restrict va, const ENTRY *restrict x, ENTRY alpha, ENTRY beta,
            ENTRY *restrict y)
{
    for (int64_t i = r0; i < r1; i++) {
        ENTRY sum = 0;
        int64_t s0 = rp32 ? rp32[i] : rp[i], end = rp32 ? rp32[i + 1] : rp[i + 1];
        for (int64_t s = s0; s < end; s++) {
            ENTRY a = perm ? va[perm[s]] : va[s];
            sum += MUL(cj ? CONJ(a) : a, x[ci[s]]);
        }
        y[i] = beta == 0 ? alpha * sum : alpha * sum + beta * y[i];
    }
}

/* Rows [r0, r1) for a block x [n][k]: the columns are taken SLA_SPMV_KBLOCK at a time into a
 * local accumulator, so each row of A is read once per column block and y once. */
static inline __attribute__((always_inline)) void
FN(gatherk)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict ci,
            const int64_t *restrict perm, int cj, const ENTRY *restrict va,
            const ENTRY *restrict x, int64_t k, ENTRY alpha, ENTRY beta, ENTRY *restrict y)
{
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j0 = 0; j0 < k; j0 += SLA_SPMV_KBLOCK) {
            int64_t w = k - j0 < SLA_SPMV_KBLOCK ? k - j0 : SLA_SPMV_KBLOCK;
            ENTRY acc[SLA_SPMV_KBLOCK] = {0};
            for (int64_t s = rp[i], end = rp[i + 1]; s < end; s++) {
                ENTRY a = perm ? va[perm[s]] : va[s];
                if (cj) a = CONJ(a);
                const ENTRY *xs = x + (int64_t)ci[s] * k + j0;
                for (int64_t j = 0; j < w; j++) acc[j] += MUL(a, xs[j]);
            }
            ENTRY *yi = y + i * k + j0;
            for (int64_t j = 0; j < w; j++)
                yi[j] = beta == 0 ? alpha * acc[j] : alpha * acc[j] + beta * yi[j];
        }
}

/* sla_rows_fn: rows [r0, r1) of batch element b. */
static void FN(spmv_rows)(const void *arg, int64_t b, int64_t r0, int64_t r1)
{
    const spmv_ctx *c = arg;
    const ENTRY *va = (const ENTRY *)c->values + b * c->nnz;
    const ENTRY *x = (const ENTRY *)c->x + b * c->x_stride;
    ENTRY *y = (ENTRY *)c->y + b * c->y_stride;
    ENTRY alpha = TO_C(c->alpha), beta = TO_C(c->beta);
    int cj = SLA_COMPLEX && c->conj;
    const int32_t *rp32 = c->rowptr32;
    if (c->k == 1 && !c->perm && !cj && rp32)
        FN(gather1)(r0, r1, NULL, rp32, c->colind, NULL, 0, va, x, alpha, beta, y);
    else if (c->k == 1 && !c->perm && !cj)
        FN(gather1)(r0, r1, c->rowptr, NULL, c->colind, NULL, 0, va, x, alpha, beta, y);
    else if (c->k == 1 && !cj && rp32)
        FN(gather1)(r0, r1, NULL, rp32, c->colind, c->perm, 0, va, x, alpha, beta, y);
    else if (c->k == 1 && !cj)
        FN(gather1)(r0, r1, c->rowptr, NULL, c->colind, c->perm, 0, va, x, alpha, beta, y);
    else if (c->k == 1)
        FN(gather1)(r0, r1, c->rowptr, NULL, c->colind, c->perm, 1, va, x, alpha, beta, y);
    else if (!c->perm && !cj)
        FN(gatherk)(r0, r1, c->rowptr, c->colind, NULL, 0, va, x, c->k, alpha, beta, y);
    else
        FN(gatherk)(r0, r1, c->rowptr, c->colind, c->perm, cj, va, x, c->k, alpha, beta, y);
}

/* sla_rows_fn for alpha = 0: y = beta·y, A and x not read (the BLAS convention, so that NaN in
 * an unused x does not leak into y); beta = 0 writes zeros without reading y. */
static void FN(scale_rows)(const void *arg, int64_t b, int64_t r0, int64_t r1)
{
    const spmv_ctx *c = arg;
    ENTRY *y = (ENTRY *)c->y + b * c->y_stride;
    ENTRY beta = TO_C(c->beta);
    for (int64_t i = r0 * c->k; i < r1 * c->k; i++) y[i] = beta == 0 ? 0 : beta * y[i];
}
