/* Template (see core/instantiate.h): the outer product restricted to a pattern,
 * dv_s (+)= alpha·Σ_j u[r_s][j]·v[c_s][j], row by row. Each slot is written by the one thread
 * that owns its row, so the result does not depend on the thread count. */

/* Rows [r0, r1) for vectors (k = 1). */
static inline __attribute__((always_inline)) void
FN(outer1)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict ci,
           const REAL *restrict u, const REAL *restrict v, REAL alpha, int overwrite,
           REAL *restrict dv)
{
    for (int64_t i = r0; i < r1; i++) {
        REAL a = alpha * u[i];
        for (int64_t s = rp[i], end = rp[i + 1]; s < end; s++) {
            REAL t = a * v[ci[s]];
            dv[s] = overwrite ? t : dv[s] + t;
        }
    }
}

/* Rows [r0, r1) for blocks u [nrows][k], v [ncols][k]: one dot product of length k per slot. */
static inline __attribute__((always_inline)) void
FN(outerk)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict ci,
           const REAL *restrict u, const REAL *restrict v, int64_t k, REAL alpha, int overwrite,
           REAL *restrict dv)
{
    for (int64_t i = r0; i < r1; i++) {
        const REAL *ui = u + i * k;
        for (int64_t s = rp[i], end = rp[i + 1]; s < end; s++) {
            const REAL *vs = v + (int64_t)ci[s] * k;
            REAL d = 0;
            for (int64_t j = 0; j < k; j++) d += ui[j] * vs[j];
            dv[s] = overwrite ? alpha * d : dv[s] + alpha * d;
        }
    }
}

/* sla_rows_fn: rows [r0, r1) of batch element b. */
static void FN(outer_rows)(const void *arg, int64_t b, int64_t r0, int64_t r1)
{
    const outer_ctx *c = arg;
    const REAL *u = (const REAL *)c->u + b * c->u_stride;
    const REAL *v = (const REAL *)c->v + b * c->v_stride;
    REAL *dv = (REAL *)c->dvalues + b * c->nnz;
    if (c->k == 1)
        FN(outer1)(r0, r1, c->rowptr, c->colind, u, v, (REAL)c->alpha, c->overwrite, dv);
    else
        FN(outerk)(r0, r1, c->rowptr, c->colind, u, v, c->k, (REAL)c->alpha, c->overwrite, dv);
}
