/* A Matrix Market file straight into a pattern and CSR-ordered values. Duplicates are summed
 * in double precision before a float32 result is rounded, so float32 values are the rounded
 * sums rather than sums of rounded entries. */
#include "io/mm_internal.h"

static sla_status build(const sla_coo *a, const char *path, sla_dtype dtype,
                        sla_pattern **pattern, void **values)
{
    sla_status st = sla_pattern_from_coo(a->nrows, a->ncols, a->nnz, a->row, a->col, pattern);
    if (st != SLA_OK) return sla_error_wrap(st, "sla_mm_read_matrix", "%s", path);
    int64_t nnz = sla_pattern_nnz(*pattern);
    double *csr = sla_malloc((size_t)nnz, sizeof(double), "CSR values");
    float *csr32 = csr && dtype == SLA_FLOAT32 ? sla_malloc((size_t)nnz, sizeof(float), "CSR values")
                                               : NULL;
    if (!csr || (dtype == SLA_FLOAT32 && !csr32)) {
        sla_free(csr);
        sla_pattern_free(pattern);
        return SLA_ENOMEM;
    }
    if (sla_pattern_has_duplicates(*pattern)) {
        sla_values_gather(*pattern, SLA_FLOAT64, 1, a->values, csr);   /* arguments are valid */
    } else {
        /* a plain permutation keeps every bit, -0.0 included (a sum starting at 0 would not) */
        const int64_t *map = sla_pattern_map(*pattern);
        for (int64_t k = 0; k < a->nnz; k++) csr[map[k]] = a->values[k];
    }
    if (dtype == SLA_FLOAT64) {
        *values = csr;
        return SLA_OK;
    }
    for (int64_t s = 0; s < nnz; s++) csr32[s] = (float)csr[s];   /* overflow gives ±inf */
    sla_free(csr);
    *values = csr32;
    return SLA_OK;
}

sla_status sla_mm_read_matrix(const char *path, sla_dtype dtype, sla_pattern **pattern,
                              void **values, sla_mm_field *field, sla_mm_symmetry *symmetry)
{
    SLA_CHECK_ARG(pattern && values, "%s is NULL", pattern ? "values" : "pattern");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(path, "path is NULL");
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not SLA_FLOAT64 or SLA_FLOAT32", (int)dtype);
    sla_coo *a = NULL;
    SLA_TRY(mm_read_path(path, __func__, &a));
    sla_status st;
    if (a->field == SLA_MM_COMPLEX)
        st = SLA_FAIL(SLA_EDTYPE, "%s: the field is 'complex', but complex dtypes are not supported "
                                  "yet (sla_mm_read() returns the complex entries)", path);
    else
        st = build(a, path, dtype, pattern, values);
    if (st == SLA_OK) {
        if (field) *field = a->field;
        if (symmetry) *symmetry = a->symmetry;
    }
    sla_coo_free(&a);
    return st;
}
