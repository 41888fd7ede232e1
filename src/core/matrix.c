/* The matrix view: validation, symmetry, diagonal, norms, dense conversion. */
#include <math.h>
#include <string.h>

#include "core/internal.h"

/* max(r, x) that propagates NaN (fmax drops it, which would hide a NaN entry behind a finite
 * norm); used by the norms of t_props.h */
static double max_nan(double r, double x)
{
    return isnan(r) ? r : (x > r || isnan(x)) ? x : r;
}

#define SLA_TEMPLATE "core/t_props.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

sla_matrix sla_matrix_view(const sla_pattern *p, sla_dtype dtype, int64_t batch, const void *values)
{
    return (sla_matrix){p, dtype, batch, values, SLA_MEM_HOST};
}

/* Every host function that takes a view checks it here: a device view is refused by name, so
 * that host code never dereferences a device pointer (the mixed-space error of matrix.h). */
sla_status sla_matrix_check_for(const char *func, const char *name, const sla_matrix *A,
                                int check_finite)
{
    if (A && A->space == SLA_MEM_DEVICE)
        return sla_error_set(SLA_EINVAL, func, "%s is in device memory (space = device); %s "
                             "reads host memory (a device view goes to sla_solver_create with "
                             "a device backend such as \"cuda\")", name, func);
    return sla_matrix_check_space(func, name, A, check_finite);
}

sla_status sla_matrix_check_space(const char *func, const char *name, const sla_matrix *A,
                                  int check_finite)
{
    if (!A) return sla_error_set(SLA_EINVAL, func, "%s is NULL", name);
    if (!A->pattern) return sla_error_set(SLA_EINVAL, func, "%s->pattern is NULL", name);
    if (sla_dtype_is_complex(A->dtype) && !(check_finite & SLA_CHECK_COMPLEX_OK))
        return sla_error_set(SLA_EDTYPE, func, "%s: dtype %s is not supported here yet (complex "
                             "values: docs/complex.md lists the functions that take them)", name,
                             sla_dtype_name(A->dtype));
    if (A->dtype != SLA_FLOAT64 && A->dtype != SLA_FLOAT32 && !sla_dtype_is_complex(A->dtype))
        return sla_error_set(SLA_EDTYPE, func, "%s: dtype %d is not float64, float32, "
                             "complex128 or complex64", name, (int)A->dtype);
    if (A->space != SLA_MEM_HOST && A->space != SLA_MEM_DEVICE)
        return sla_error_set(SLA_EINVAL, func, "%s->space = %d is not host (0) or device (1)",
                             name, (int)A->space);
    check_finite &= 1;
    if (A->batch < 1)
        return sla_error_set(SLA_EINVAL, func, "%s->batch = %lld < 1", name, (long long)A->batch);
    int64_t nnz = sla_pattern_nnz(A->pattern), total;
    if (__builtin_mul_overflow(A->batch, nnz, &total) ||
        total > INT64_MAX / (int64_t)sla_dtype_size(A->dtype))
        return sla_error_set(SLA_EINVAL, func, "%s: batch %lld × nnz %lld values overflow", name,
                             (long long)A->batch, (long long)nnz);
    if (!A->values && nnz > 0)
        return sla_error_set(SLA_EINVAL, func, "%s->values is NULL (expected [%lld][%lld] values)",
                             name, (long long)A->batch, (long long)nnz);
    int64_t bad;
    /* device values are checked on the device by the backend that takes them */
    if (check_finite && A->space == SLA_MEM_HOST && !sla_all_finite(A->dtype, A->values, total, &bad)) {
        int64_t s = bad % nnz;
        const int64_t *ri = sla_pattern_rowind(A->pattern);
        return sla_error_set(SLA_ENONFINITE, func, "%s: value at batch %lld, slot %lld (row %lld, "
                             "col %d) is not finite", name, (long long)(bad / nnz), (long long)s,
                             (long long)(ri ? ri[s] : -1), sla_pattern_colind(A->pattern)[s]);
    }
    return SLA_OK;
}

sla_status sla_matrix_check(const sla_matrix *A, int check_finite)
{
    return sla_matrix_check_for(__func__, "A", A, check_finite & 1);
}

static sla_status symmetric_test(const char *func, const sla_matrix *A, double rtol, double atol,
                                 int herm, int *result, int64_t *where)
{
    SLA_TRY(sla_matrix_check_for(func, "A", A, SLA_CHECK_COMPLEX_OK));
    if (!result) return sla_error_set(SLA_EINVAL, func, "is_symmetric is NULL");
    *result = 0;
    if (where) where[0] = where[1] = where[2] = -1;
    if (sla_pattern_nrows(A->pattern) != sla_pattern_ncols(A->pattern)) return SLA_OK;
    const sla_pattern *t;
    const int64_t *perm;
    sla_status st = sla_pattern_cached_transpose(A->pattern, &t, &perm);
    if (st < 0) return sla_error_wrap(st, func, "transpose of A");
    int64_t w[3] = {-1, -1, -1};
    *result = SLA_DISPATCH_ALL(A->dtype, is_symmetric, (A->pattern, perm, A->batch, A->values,
                                                        rtol, atol, herm, w));
    if (where) memcpy(where, w, sizeof w);
    return SLA_OK;
}

sla_status sla_matrix_is_symmetric(const sla_matrix *A, double rtol, double atol, int *is_symmetric)
{
    return symmetric_test(__func__, A, rtol, atol, 0, is_symmetric, NULL);
}

sla_status sla_matrix_is_hermitian(const sla_matrix *A, double rtol, double atol, int *is_hermitian)
{
    return symmetric_test(__func__, A, rtol, atol, 1, is_hermitian, NULL);
}

sla_status sla_matrix_symmetry_defect(const sla_matrix *A, double rtol, double atol, int herm,
                                      int *ok, int64_t where[3])
{
    return symmetric_test(__func__, A, rtol, atol, herm, ok, where);
}

sla_status sla_matrix_diag_info(const sla_matrix *A, sla_diag_info *info)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, 0));          /* sign counts: real only */
    SLA_CHECK_ARG(info, "info is NULL");
    SLA_DISPATCH(A->dtype, diag, (A->pattern, A->batch, A->values, NULL, info));
    return SLA_OK;
}

sla_status sla_matrix_diagonal(const sla_matrix *A, void *diag)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, SLA_CHECK_COMPLEX_OK));
    SLA_CHECK_ARG(diag, "diag is NULL");
    SLA_DISPATCH_ALL(A->dtype, diag, (A->pattern, A->batch, A->values, diag, NULL));
    return SLA_OK;
}

sla_status sla_matrix_norm(const sla_matrix *A, char which, double *norms)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, SLA_CHECK_COMPLEX_OK));
    SLA_CHECK_ARG(norms, "norms is NULL");
    if (which == 'f') which = 'F';
    if (which == 'i') which = 'I';
    if (which == 'm') which = 'M';
    if (which != 'F' && which != '1' && which != 'I' && which != 'M')
        return SLA_FAIL(SLA_EINVAL, "which = '%c' is not 'F', '1', 'I' or 'M'", which);
    double *colsum = NULL;
    if (which == '1') {
        colsum = sla_malloc((size_t)sla_pattern_ncols(A->pattern), sizeof(double), "column sums");
        if (!colsum) return SLA_ENOMEM;
    }
    SLA_DISPATCH_ALL(A->dtype, norm, (A->pattern, A->batch, A->values, which, norms, colsum));
    sla_free(colsum);
    return SLA_OK;
}

#define SLA_DENSE_MAX ((int64_t)1 << 31)

sla_status sla_matrix_to_dense(const sla_matrix *A, void *dense)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, SLA_CHECK_COMPLEX_OK));
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    if (n > 0 && m > SLA_DENSE_MAX / n)
        return SLA_FAIL(SLA_ESHAPE, "%lld × %lld is too large for a dense matrix", (long long)m,
                        (long long)n);
    SLA_CHECK_ARG(dense || m * n == 0, "dense is NULL");
    SLA_DISPATCH_ALL(A->dtype, to_dense, (A->pattern, A->batch, A->values, dense));
    return SLA_OK;
}

sla_status sla_matrix_from_dense(int64_t nrows, int64_t ncols, sla_dtype dtype, int64_t batch,
                                 const void *dense, double drop_tol, sla_pattern **pattern,
                                 void **values)
{
    SLA_CHECK_ARG(pattern && values, "pattern or values is NULL");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(nrows >= 0 && ncols >= 0, "negative shape %lld × %lld", (long long)nrows,
                  (long long)ncols);
    SLA_CHECK_ARG(batch >= 1, "batch = %lld < 1", (long long)batch);
    if (sla_dtype_size(dtype) == 0)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64, float32, complex128 or complex64",
                        (int)dtype);
    if (ncols > 0 && nrows > SLA_DENSE_MAX / ncols)
        return SLA_FAIL(SLA_ESHAPE, "%lld × %lld is too large for a dense matrix",
                        (long long)nrows, (long long)ncols);
    SLA_CHECK_ARG(dense || nrows * ncols == 0, "dense is NULL");
    int64_t nnz = SLA_DISPATCH_ALL(dtype, dense_keep, (nrows, ncols, batch, dense, drop_tol, NULL, NULL));
    int64_t *rows = sla_malloc((size_t)nnz, sizeof(int64_t), "rows");
    int64_t *cols = sla_malloc((size_t)nnz, sizeof(int64_t), "cols");
    void *v = sla_malloc((size_t)(batch * nnz), sla_dtype_size(dtype), "values");
    sla_status st = (rows && cols && v) ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        SLA_DISPATCH_ALL(dtype, dense_keep, (nrows, ncols, batch, dense, drop_tol, rows, cols));
        SLA_DISPATCH_ALL(dtype, dense_pick, (nrows, ncols, batch, dense, nnz, rows, cols, v));
        /* row-major traversal is already CSR order, so the map is the identity */
        st = sla_pattern_from_coo(nrows, ncols, nnz, rows, cols, pattern);
    }
    sla_free(rows);
    sla_free(cols);
    if (st != SLA_OK) { sla_free(v); return st; }
    *values = v;
    return SLA_OK;
}
