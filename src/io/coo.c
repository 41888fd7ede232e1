/* COO matrices of the readers: building them (shared by the Matrix Market and Rutherford–Boeing
 * readers), and COO -> pattern + CSR values. */
#include "io/mm_internal.h"

sla_status mm_coo_create(int64_t nrows, int64_t ncols, sla_mm_field field,
                         sla_mm_symmetry symmetry, int64_t cap, sla_coo **out)
{
    sla_coo *a = sla_calloc(1, sizeof *a, "the COO matrix");
    if (!a) return SLA_ENOMEM;
    a->nrows = nrows;
    a->ncols = ncols;
    a->field = field;
    a->symmetry = symmetry;
    size_t nv = field == SLA_MM_COMPLEX ? 2 : 1;
    a->row = sla_malloc((size_t)cap, sizeof(int64_t), "COO row indices");
    a->col = a->row ? sla_malloc((size_t)cap, sizeof(int64_t), "COO column indices") : NULL;
    a->values = a->col ? sla_malloc((size_t)cap, nv * sizeof(double), "COO values") : NULL;
    if (!a->values) {
        sla_coo_free(&a);
        return SLA_ENOMEM;
    }
    *out = a;
    return SLA_OK;
}

static void push(sla_coo *a, int nv, int64_t i, int64_t j, const double v[2])
{
    int64_t k = a->nnz++;
    a->row[k] = i;
    a->col[k] = j;
    a->values[k * nv] = v[0];
    if (nv == 2) a->values[k * nv + 1] = v[1];
}

sla_status mm_coo_store(const mm_cursor *c, int64_t line, sla_coo *a, int64_t i, int64_t j,
                        const double v[2])
{
    int nv = a->field == SLA_MM_COMPLEX ? 2 : 1;
    if (i == j && a->symmetry == SLA_MM_SKEW_SYMMETRIC && (v[0] != 0 || v[1] != 0))
        return mm_fail(c, line, "diagonal entry (%lld, %lld) of a skew-symmetric matrix must be 0",
                       (long long)i + 1, (long long)j + 1);
    if (i == j && a->symmetry == SLA_MM_HERMITIAN && v[1] != 0)
        return mm_fail(c, line, "diagonal entry (%lld, %lld) of a Hermitian matrix has imaginary "
                                "part %g (must be 0)", (long long)i + 1, (long long)j + 1, v[1]);
    push(a, nv, i, j, v);
    a->nnz_stored++;
    if (i == j || a->symmetry == SLA_MM_GENERAL) return SLA_OK;
    double w[2] = {v[0], v[1]};
    if (a->symmetry == SLA_MM_SKEW_SYMMETRIC) { w[0] = -v[0]; w[1] = -v[1]; }
    if (a->symmetry == SLA_MM_HERMITIAN) w[1] = -v[1];
    push(a, nv, j, i, w);
    return SLA_OK;
}

/* Duplicates are summed in double (complex double) before a float32 (complex64) result is
 * rounded, so float32 values are the rounded sums rather than sums of rounded entries. A real
 * file into a complex dtype gets zero imaginary parts; a complex file into a real dtype is
 * refused (its imaginary parts would be dropped). */
sla_status sla_coo_to_matrix(const sla_coo *coo, sla_dtype dtype, sla_pattern **pattern, void **values)
{
    SLA_CHECK_ARG(pattern && values, "%s is NULL", pattern ? "values" : "pattern");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(coo, "coo is NULL");
    if (sla_dtype_size(dtype) == 0)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not SLA_FLOAT64, SLA_FLOAT32, SLA_COMPLEX128 or "
                        "SLA_COMPLEX64", (int)dtype);
    int cfile = coo->field == SLA_MM_COMPLEX, cdt = sla_dtype_is_complex(dtype);
    if (cfile && !cdt)
        return SLA_FAIL(SLA_EDTYPE, "the matrix is complex but dtype %s is real (read it as "
                        "complex128 or complex64)", sla_dtype_name(dtype));
    sla_pattern *p = NULL;
    SLA_TRY(sla_error_attribute(sla_pattern_from_coo(coo->nrows, coo->ncols, coo->nnz, coo->row,
                                                     coo->col, &p), __func__));
    int64_t nnz = sla_pattern_nnz(p), parts = cdt ? 2 : 1;
    double *csr = sla_malloc((size_t)(parts * nnz), sizeof(double), "CSR values");
    int narrow = sla_dtype_real(dtype) == SLA_FLOAT32;
    float *csr32 = csr && narrow ? sla_malloc((size_t)(parts * nnz), sizeof(float), "CSR values")
                                 : NULL;
    if (!csr || (narrow && !csr32)) {
        sla_free(csr);
        sla_pattern_free(&p);
        return sla_error_attribute(SLA_ENOMEM, __func__);
    }
    if (cfile) {
        sla_values_gather(p, SLA_COMPLEX128, 1, coo->values, csr);   /* arguments are valid */
    } else {
        sla_values_gather(p, SLA_FLOAT64, 1, coo->values, csr);
        if (cdt)                                     /* widen in place, last entry first */
            for (int64_t s = nnz - 1; s >= 0; s--) { csr[2 * s] = csr[s]; csr[2 * s + 1] = 0; }
    }
    if (narrow) {
        for (int64_t s = 0; s < parts * nnz; s++) csr32[s] = (float)csr[s];   /* overflow: ±inf */
        sla_free(csr);
    }
    *pattern = p;
    *values = narrow ? (void *)csr32 : (void *)csr;
    return SLA_OK;
}
