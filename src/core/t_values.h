/* Template (see core/instantiate.h; real and complex): value gather/scatter and elementwise
 * matrix updates (the scalings alpha are real). */

static void FN(gather)(const sla_pattern *p, int64_t batch, const ENTRY *coo, ENTRY *csr)
{
    int64_t nnz = sla_pattern_nnz(p), nin = sla_pattern_nnz_input(p);
    const int64_t *map = sla_pattern_map(p);
    for (int64_t b = 0; b < batch; b++) {
        ENTRY *dst = csr + b * nnz;
        const ENTRY *src = coo + b * nin;
        /* start at −0 (the additive identity: −0 + x = x for every x, −0 included), then sum
         * duplicates in the order the caller gave them */
        for (int64_t s = 0; s < nnz; s++) dst[s] = ENTRY_OF(-0.0, -0.0);
        for (int64_t k = 0; k < nin; k++) dst[map[k]] += src[k];
    }
}

static void FN(scatter)(const sla_pattern *p, int64_t batch, const ENTRY *csr, ENTRY *coo)
{
    int64_t nnz = sla_pattern_nnz(p), nin = sla_pattern_nnz_input(p);
    const int64_t *map = sla_pattern_map(p);
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < batch; b++)
        for (int64_t k = 0; k < nin; k++) coo[b * nin + k] = csr[b * nnz + map[k]];
}

static void FN(permute)(int64_t batch, int64_t nnz, const int64_t *perm, const ENTRY *in, ENTRY *out)
{
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < nnz; j++) out[b * nnz + j] = in[b * nnz + perm[j]];
}

static void FN(scale)(const sla_pattern *p, int64_t batch, double alpha, const ENTRY *rs,
                      const ENTRY *cs, const ENTRY *in, ENTRY *out)
{
    int64_t m = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    #pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++) {
            ENTRY r = (REAL)alpha * (rs ? rs[i] : (ENTRY)1);
            for (int64_t s = rp[i]; s < rp[i + 1]; s++)
                out[b * nnz + s] = MUL(MUL(r, in[b * nnz + s]), cs ? cs[ci[s]] : (ENTRY)1);
        }
}

static void FN(axpby)(int64_t n, double alpha, const ENTRY *x, double beta, const ENTRY *y,
                      ENTRY *out)
{
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) out[i] = (REAL)alpha * x[i] + (REAL)beta * y[i];
}
