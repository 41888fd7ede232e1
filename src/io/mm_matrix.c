/* A Matrix Market file straight into a pattern and CSR-ordered values (sla_coo_to_matrix). */
#include "io/mm_internal.h"

sla_status sla_mm_read_matrix(const char *path, sla_dtype dtype, sla_pattern **pattern,
                              void **values, sla_mm_field *field, sla_mm_symmetry *symmetry)
{
    SLA_CHECK_ARG(pattern && values, "%s is NULL", pattern ? "values" : "pattern");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(path, "path is NULL");
    if (sla_dtype_size(dtype) == 0)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not SLA_FLOAT64, SLA_FLOAT32, SLA_COMPLEX128 or "
                        "SLA_COMPLEX64", (int)dtype);
    sla_coo *a = NULL;
    SLA_TRY(mm_read_path(path, __func__, &a));
    sla_status st;
    if (a->field == SLA_MM_COMPLEX && !sla_dtype_is_complex(dtype))
        st = SLA_FAIL(SLA_EDTYPE, "%s: the field is 'complex' but dtype %s is real (read it as "
                      "complex128 or complex64)", path, sla_dtype_name(dtype));
    else if ((st = sla_coo_to_matrix(a, dtype, pattern, values)) != SLA_OK)
        sla_error_wrap(st, "sla_mm_read_matrix", "%s", path);
    if (st == SLA_OK) {
        if (field) *field = a->field;
        if (symmetry) *symmetry = a->symmetry;
    }
    sla_coo_free(&a);
    return st;
}
