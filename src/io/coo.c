/* COO matrices read from files -> pattern + CSR values. */
#include "core/internal.h"

/* Duplicates are summed in double before a float32 result is rounded, so float32 values are
 * the rounded sums rather than sums of rounded entries. */
sla_status sla_coo_to_matrix(const sla_coo *coo, sla_dtype dtype, sla_pattern **pattern, void **values)
{
    SLA_CHECK_ARG(pattern && values, "%s is NULL", pattern ? "values" : "pattern");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(coo, "coo is NULL");
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not SLA_FLOAT64 or SLA_FLOAT32", (int)dtype);
    if (coo->field == SLA_MM_COMPLEX)
        return SLA_FAIL(SLA_EDTYPE, "the matrix is complex, but complex dtypes are not supported yet");
    sla_pattern *p = NULL;
    SLA_TRY(sla_error_attribute(sla_pattern_from_coo(coo->nrows, coo->ncols, coo->nnz, coo->row,
                                                     coo->col, &p), __func__));
    int64_t nnz = sla_pattern_nnz(p);
    double *csr = sla_malloc((size_t)nnz, sizeof(double), "CSR values");
    float *csr32 = csr && dtype == SLA_FLOAT32 ? sla_malloc((size_t)nnz, sizeof(float), "CSR values")
                                               : NULL;
    if (!csr || (dtype == SLA_FLOAT32 && !csr32)) {
        sla_free(csr);
        sla_pattern_free(&p);
        return sla_error_attribute(SLA_ENOMEM, __func__);
    }
    sla_values_gather(p, SLA_FLOAT64, 1, coo->values, csr);   /* arguments are valid */
    if (dtype == SLA_FLOAT32) {
        for (int64_t s = 0; s < nnz; s++) csr32[s] = (float)csr[s];   /* overflow gives ±inf */
        sla_free(csr);
    }
    *pattern = p;
    *values = dtype == SLA_FLOAT64 ? (void *)csr : (void *)csr32;
    return SLA_OK;
}
