/* The AMG hierarchy is double; float32 matrices and vectors are converted at its boundary. */
#include "precond/amg_internal.h"

#define SLA_TEMPLATE "precond/t_amg_convert.h"
#include "core/instantiate.h"

void amg_to_double(sla_dtype dtype, const void *src, int64_t offset, int64_t n, double *dst)
{
    if (dtype == SLA_FLOAT64) amg_load_f64((const double *)src + offset, n, dst);
    else amg_load_f32((const float *)src + offset, n, dst);
}

void amg_from_double(sla_dtype dtype, const double *src, int64_t n, void *dst)
{
    SLA_DISPATCH(dtype, amg_store, (src, n, dst));
}
