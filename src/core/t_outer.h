/* Template (see core/instantiate.h; real and complex): the outer product u·vᴴ restricted to a
 * pattern, dv_s (+)= alpha·Σ_j u[r_s][j]·conj(v[c_s][j]) (or, cj = 1, its conjugate
 * alpha·Σ_j conj(u[r_s][j])·v[c_s][j]), row by row. Each slot is written by the one thread
 * that owns its row, so the result does not depend on the thread count. */

/* Rows [r0, r1) for vectors (k = 1). */
static inline __attribute__((always_inline)) void
FN(outer1)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict ci,
           const ENTRY *restrict u, const ENTRY *restrict v, REAL alpha, int overwrite, int cj,
           ENTRY *restrict dv)
{
    for (int64_t i = r0; i < r1; i++) {
        ENTRY a = alpha * (cj ? CONJ(u[i]) : u[i]);
        for (int64_t s = rp[i], end = rp[i + 1]; s < end; s++) {
            ENTRY t = cj ? MUL(a, v[ci[s]]) : MULC(a, v[ci[s]]);
            dv[s] = overwrite ? t : dv[s] + t;
        }
    }
}

/* Rows [r0, r1) for blocks u [nrows][k], v [ncols][k]: one dot product of length k per slot. */
static inline __attribute__((always_inline)) void
FN(outerk)(int64_t r0, int64_t r1, const int64_t *restrict rp, const int32_t *restrict ci,
           const ENTRY *restrict u, const ENTRY *restrict v, int64_t k, REAL alpha,
           int overwrite, int cj, ENTRY *restrict dv)
{
    for (int64_t i = r0; i < r1; i++) {
        const ENTRY *ui = u + i * k;
        for (int64_t s = rp[i], end = rp[i + 1]; s < end; s++) {
            const ENTRY *vs = v + (int64_t)ci[s] * k;
            ENTRY d = 0;
            for (int64_t j = 0; j < k; j++) d += MULC(ui[j], vs[j]);
            if (cj) d = CONJ(d);
            dv[s] = overwrite ? alpha * d : dv[s] + alpha * d;
        }
    }
}

/* sla_rows_fn: rows [r0, r1) of batch element b. */
static void FN(outer_rows)(const void *arg, int64_t b, int64_t r0, int64_t r1)
{
    const outer_ctx *c = arg;
    const ENTRY *u = (const ENTRY *)c->u + b * c->u_stride;
    const ENTRY *v = (const ENTRY *)c->v + b * c->v_stride;
    ENTRY *dv = (ENTRY *)c->dvalues + b * c->nnz;
    int cj = SLA_COMPLEX && c->conj;
    if (c->k == 1 && !cj)
        FN(outer1)(r0, r1, c->rowptr, c->colind, u, v, (REAL)c->alpha, c->overwrite, 0, dv);
    else if (c->k == 1)
        FN(outer1)(r0, r1, c->rowptr, c->colind, u, v, (REAL)c->alpha, c->overwrite, 1, dv);
    else
        FN(outerk)(r0, r1, c->rowptr, c->colind, u, v, c->k, (REAL)c->alpha, c->overwrite, cj,
                   dv);
}
