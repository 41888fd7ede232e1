/* TEMPORARY simple version (serial, float64/float32 via double) until the SpMV work lands. */
#include "core/internal.h"

static double ld(sla_dtype t, const void *p, int64_t i)
{
    return t == SLA_FLOAT64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

sla_status sla_pattern_outer_add(const sla_pattern *p, sla_dtype dtype, int64_t batch, double alpha,
                                 const void *u, int u_batched, const void *v, int v_batched,
                                 int64_t k, void *dvalues)
{
    SLA_CHECK_ARG(p && u && v && dvalues, "NULL argument");
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                double acc = 0;
                for (int64_t j = 0; j < k; j++)
                    acc += ld(dtype, u, (u_batched ? b * m * k : 0) + i * k + j) *
                           ld(dtype, v, (v_batched ? b * n * k : 0) + ci[s] * k + j);
                if (dtype == SLA_FLOAT64) ((double *)dvalues)[b * nnz + s] += alpha * acc;
                else ((float *)dvalues)[b * nnz + s] += (float)(alpha * acc);
            }
    return SLA_OK;
}
