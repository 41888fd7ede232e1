/* Gather of COO-ordered values into CSR order, scatter back, and elementwise updates. */
#include <string.h>

#include "core/kernels.h"

#define SLA_TEMPLATE "core/t_values.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

static sla_status check_dtype(const char *func, sla_dtype dtype)
{
    if (sla_dtype_size(dtype) == 0)
        return sla_error_set(SLA_EDTYPE, func, "dtype %d is not float64, float32, complex128 or "
                             "complex64", (int)dtype);
    return SLA_OK;
}

/* in [batch][nin] and out [batch][nout] of dtype: non-NULL when not empty, sizes within int64,
 * and not overlapping (a gather into its own input would read sums it has already written) */
static sla_status check_values(const char *func, const sla_pattern *p, sla_dtype dtype,
                               int64_t batch, const char *in_name, const void *in, int64_t nin,
                               const char *out_name, const void *out, int64_t nout)
{
    if (!p) return sla_error_set(SLA_EINVAL, func, "pattern is NULL");
    SLA_TRY(check_dtype(func, dtype));
    if (batch < 1) return sla_error_set(SLA_EINVAL, func, "batch = %lld < 1", (long long)batch);
    int64_t ni, no, es = (int64_t)sla_dtype_size(dtype);
    SLA_TRY(sla_check_block(func, in_name, in, batch, nin, 1, &ni));
    SLA_TRY(sla_check_block(func, out_name, out, batch, nout, 1, &no));
    if (ni > INT64_MAX / es || no > INT64_MAX / es)
        return sla_error_set(SLA_EINVAL, func, "batch = %lld: the values overflow int64 bytes",
                             (long long)batch);
    return sla_check_overlap(func, out_name, out, (size_t)(no * es), in_name, in,
                             (size_t)(ni * es));
}

sla_status sla_values_gather(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                             const void *coo_values, void *csr_values)
{
    SLA_TRY(check_values(__func__, p, dtype, batch, "coo_values", coo_values,
                         p ? sla_pattern_nnz_input(p) : 0, "csr_values", csr_values,
                         p ? sla_pattern_nnz(p) : 0));
    SLA_DISPATCH_ALL(dtype, gather, (p, batch, coo_values, csr_values));
    return SLA_OK;
}

sla_status sla_values_scatter(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                              const void *csr_values, void *coo_values)
{
    SLA_TRY(check_values(__func__, p, dtype, batch, "csr_values", csr_values,
                         p ? sla_pattern_nnz(p) : 0, "coo_values", coo_values,
                         p ? sla_pattern_nnz_input(p) : 0));
    SLA_DISPATCH_ALL(dtype, scatter, (p, batch, csr_values, coo_values));
    return SLA_OK;
}

/* bytes of A's values */
static size_t values_bytes(const sla_matrix *A)
{
    return (size_t)(A->batch * sla_pattern_nnz(A->pattern)) * sla_dtype_size(A->dtype);
}

/* out may be exactly in (elementwise, in place) but must not overlap it partially */
static sla_status check_inplace(const char *func, const void *out, const char *in_name,
                                const void *in, size_t bytes)
{
    if (out == in) return SLA_OK;
    return sla_check_overlap(func, "out", out, bytes, in_name, in, bytes);
}

sla_status sla_matrix_transpose_values(const sla_matrix *A, void *out)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, SLA_CHECK_COMPLEX_OK));
    SLA_CHECK_ARG(out || sla_pattern_nnz(A->pattern) == 0, "out is NULL");
    SLA_TRY(sla_check_overlap(__func__, "out", out, values_bytes(A), "A->values", A->values,
                              values_bytes(A)));
    const sla_pattern *t;
    const int64_t *perm;
    SLA_TRY(sla_pattern_cached_transpose(A->pattern, &t, &perm));
    SLA_DISPATCH_ALL(A->dtype, permute, (A->batch, sla_pattern_nnz(A->pattern), perm, A->values, out));
    return SLA_OK;
}

sla_status sla_matrix_scale(const sla_matrix *A, double alpha, const void *row_scale,
                            const void *col_scale, void *out)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, SLA_CHECK_COMPLEX_OK));
    SLA_CHECK_ARG(out || sla_pattern_nnz(A->pattern) == 0, "out is NULL");
    size_t es = sla_dtype_size(A->dtype);
    SLA_TRY(check_inplace(__func__, out, "A->values", A->values, values_bytes(A)));
    SLA_TRY(sla_check_overlap(__func__, "out", out, values_bytes(A), "row_scale", row_scale,
                              (size_t)sla_pattern_nrows(A->pattern) * es));
    SLA_TRY(sla_check_overlap(__func__, "out", out, values_bytes(A), "col_scale", col_scale,
                              (size_t)sla_pattern_ncols(A->pattern) * es));
    SLA_DISPATCH_ALL(A->dtype, scale, (A->pattern, A->batch, alpha, row_scale, col_scale, A->values, out));
    return SLA_OK;
}

sla_status sla_matrix_add(double alpha, const sla_matrix *A, double beta, const sla_matrix *B,
                          void *out)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, SLA_CHECK_COMPLEX_OK));
    SLA_TRY(sla_matrix_check_for(__func__, "B", B, SLA_CHECK_COMPLEX_OK));
    if (A->pattern != B->pattern)
        return SLA_FAIL(SLA_ESHAPE, "A and B must share one pattern object");
    if (A->dtype != B->dtype || A->batch != B->batch)
        return SLA_FAIL(SLA_ESHAPE, "A (%s, batch %lld) and B (%s, batch %lld) differ",
                        sla_dtype_name(A->dtype), (long long)A->batch, sla_dtype_name(B->dtype),
                        (long long)B->batch);
    SLA_CHECK_ARG(out || sla_pattern_nnz(A->pattern) == 0, "out is NULL");
    SLA_TRY(check_inplace(__func__, out, "A->values", A->values, values_bytes(A)));
    SLA_TRY(check_inplace(__func__, out, "B->values", B->values, values_bytes(B)));
    SLA_DISPATCH_ALL(A->dtype, axpby, (A->batch * sla_pattern_nnz(A->pattern), alpha, A->values, beta,
                                   B->values, out));
    return SLA_OK;
}

void sla_conj(sla_dtype dtype, int64_t n, const void *x, void *y)
{
    if (x != y) memcpy(y, x, (size_t)n * sla_dtype_size(dtype));
    if (dtype == SLA_COMPLEX128)
        for (int64_t i = 0; i < n; i++) ((double *)y)[2 * i + 1] = -((double *)y)[2 * i + 1];
    else if (dtype == SLA_COMPLEX64)
        for (int64_t i = 0; i < n; i++) ((float *)y)[2 * i + 1] = -((float *)y)[2 * i + 1];
}
