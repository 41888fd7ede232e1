/* COO matrices read from files -> pattern + CSR values. */
#include <string.h>

#include "core/internal.h"

sla_status sla_coo_to_matrix(const sla_coo *coo, sla_dtype dtype, sla_pattern **pattern, void **values)
{
    SLA_CHECK_ARG(pattern && values, "pattern or values is NULL");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(coo, "coo is NULL");
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64 or float32", (int)dtype);
    if (coo->field == SLA_MM_COMPLEX)
        return SLA_FAIL(SLA_EDTYPE, "complex matrices are not supported yet (dtypes: float64, float32)");
    sla_pattern *p = NULL;
    SLA_TRY(sla_pattern_from_coo(coo->nrows, coo->ncols, coo->nnz, coo->row, coo->col, &p));
    void *in = NULL, *v = sla_malloc((size_t)sla_pattern_nnz(p), sla_dtype_size(dtype), "values");
    sla_status st = v ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK && dtype == SLA_FLOAT32) {
        /* narrow once, then gather in the target dtype */
        float *f = sla_malloc((size_t)coo->nnz, sizeof(float), "float32 values");
        if (f) for (int64_t k = 0; k < coo->nnz; k++) f[k] = (float)coo->values[k];
        in = f;
        st = f ? SLA_OK : SLA_ENOMEM;
    }
    if (st == SLA_OK)
        st = sla_values_gather(p, dtype, 1, dtype == SLA_FLOAT32 ? in : (void *)coo->values, v);
    sla_free(in);
    if (st != SLA_OK) { sla_free(v); sla_pattern_free(&p); return st; }
    *pattern = p;
    *values = v;
    return SLA_OK;
}
