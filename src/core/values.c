/* Gather of COO-ordered values into CSR order, scatter back, and elementwise updates. */
#include "core/internal.h"

#define SLA_TEMPLATE "core/t_values.h"
#include "core/instantiate.h"

static sla_status check_dtype(const char *func, sla_dtype dtype)
{
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return sla_error_set(SLA_EDTYPE, func, "dtype %d is not float64 or float32", (int)dtype);
    return SLA_OK;
}

static sla_status check_values(const char *func, const sla_pattern *p, sla_dtype dtype,
                               int64_t batch, const void *in, const void *out)
{
    if (!p) return sla_error_set(SLA_EINVAL, func, "pattern is NULL");
    SLA_TRY(check_dtype(func, dtype));
    if (batch < 1) return sla_error_set(SLA_EINVAL, func, "batch = %lld < 1", (long long)batch);
    if ((!in || !out) && (sla_pattern_nnz_input(p) > 0 || sla_pattern_nnz(p) > 0))
        return sla_error_set(SLA_EINVAL, func, "%s values are NULL", !in ? "input" : "output");
    return SLA_OK;
}

sla_status sla_values_gather(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                             const void *coo_values, void *csr_values)
{
    SLA_TRY(check_values(__func__, p, dtype, batch, coo_values, csr_values));
    SLA_DISPATCH(dtype, gather, (p, batch, coo_values, csr_values));
    return SLA_OK;
}

sla_status sla_values_scatter(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                              const void *csr_values, void *coo_values)
{
    SLA_TRY(check_values(__func__, p, dtype, batch, csr_values, coo_values));
    SLA_DISPATCH(dtype, scatter, (p, batch, csr_values, coo_values));
    return SLA_OK;
}

sla_status sla_matrix_transpose_values(const sla_matrix *A, void *out)
{
    SLA_TRY(sla_matrix_check(A, 0));
    SLA_CHECK_ARG(out || sla_pattern_nnz(A->pattern) == 0, "out is NULL");
    const sla_pattern *t;
    const int64_t *perm;
    SLA_TRY(sla_pattern_cached_transpose(A->pattern, &t, &perm));
    SLA_CHECK_ARG(out != A->values, "out must not alias A->values");
    SLA_DISPATCH(A->dtype, permute, (A->batch, sla_pattern_nnz(A->pattern), perm, A->values, out));
    return SLA_OK;
}

sla_status sla_matrix_scale(const sla_matrix *A, double alpha, const void *row_scale,
                            const void *col_scale, void *out)
{
    SLA_TRY(sla_matrix_check(A, 0));
    SLA_CHECK_ARG(out || sla_pattern_nnz(A->pattern) == 0, "out is NULL");
    SLA_DISPATCH(A->dtype, scale, (A->pattern, A->batch, alpha, row_scale, col_scale, A->values, out));
    return SLA_OK;
}

sla_status sla_matrix_add(double alpha, const sla_matrix *A, double beta, const sla_matrix *B,
                          void *out)
{
    SLA_TRY(sla_matrix_check(A, 0));
    SLA_TRY(sla_matrix_check(B, 0));
    if (A->pattern != B->pattern)
        return SLA_FAIL(SLA_ESHAPE, "A and B must share one pattern object");
    if (A->dtype != B->dtype || A->batch != B->batch)
        return SLA_FAIL(SLA_ESHAPE, "A (%s, batch %lld) and B (%s, batch %lld) differ",
                        sla_dtype_name(A->dtype), (long long)A->batch, sla_dtype_name(B->dtype),
                        (long long)B->batch);
    SLA_CHECK_ARG(out || sla_pattern_nnz(A->pattern) == 0, "out is NULL");
    SLA_DISPATCH(A->dtype, axpby, (A->batch * sla_pattern_nnz(A->pattern), alpha, A->values, beta,
                                   B->values, out));
    return SLA_OK;
}
