/* TEMPORARY simple version (serial) until the SpMV work lands. */
#include "core/internal.h"

static double ld(sla_dtype t, const void *p, int64_t i)
{
    return t == SLA_FLOAT64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

sla_status sla_spmv(sla_op op, double alpha, const sla_matrix *A, const void *x, int x_batched,
                    int64_t k, double beta, void *y)
{
    SLA_TRY(sla_matrix_check(A, 0));
    const sla_pattern *p = A->pattern;
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p), nnz = sla_pattern_nnz(p);
    int64_t mo = op == SLA_OP_N ? m : n, no = op == SLA_OP_N ? n : m;
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *acc = sla_calloc((size_t)(mo * k), sizeof(double), "acc");
    if (!acc) return SLA_ENOMEM;
    for (int64_t b = 0; b < A->batch; b++) {
        for (int64_t q = 0; q < mo * k; q++) acc[q] = 0;
        int64_t xo = x_batched ? b * no * k : 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                double a = ld(A->dtype, A->values, b * nnz + s);
                for (int64_t j = 0; j < k; j++) {
                    if (op == SLA_OP_N) acc[i * k + j] += a * ld(A->dtype, x, xo + ci[s] * k + j);
                    else acc[ci[s] * k + j] += a * ld(A->dtype, x, xo + i * k + j);
                }
            }
        for (int64_t q = 0; q < mo * k; q++) {
            int64_t o = b * mo * k + q;
            double old = beta == 0 ? 0 : beta * ld(A->dtype, y, o);
            if (A->dtype == SLA_FLOAT64) ((double *)y)[o] = alpha * acc[q] + old;
            else ((float *)y)[o] = (float)(alpha * acc[q] + old);
        }
    }
    sla_free(acc);
    return SLA_OK;
}
