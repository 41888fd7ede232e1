/* Gallery matrices built directly in CSR form: structured-grid stencils (each row's columns
 * are generated in increasing order: neighbours below along the slowest axis first, the
 * diagonal, then neighbours above) and graph Laplacians (rows filled after a counting pass;
 * the pattern sorts each row and sums repeated edges). */
#include <math.h>
#include <string.h>

#include "core/internal.h"

sla_status sla_gallery_grid(int ndim, const int64_t *dims, double diag, const double *lower,
                            const double *upper, sla_pattern **pattern, double **values)
{
    SLA_CHECK_ARG(pattern && values, "pattern or values is NULL");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(ndim >= 1 && ndim <= SLA_GALLERY_MAX_DIMS, "ndim = %d must be in [1, %d]",
                  ndim, SLA_GALLERY_MAX_DIMS);
    SLA_CHECK_ARG(dims && lower && upper, "dims, lower or upper is NULL");
    int64_t n = 1, stride[SLA_GALLERY_MAX_DIMS];
    for (int a = 0; a < ndim; a++) {
        SLA_CHECK_ARG(dims[a] >= 1, "dims[%d] = %lld must be ≥ 1", a, (long long)dims[a]);
        SLA_CHECK_ARG(n <= INT32_MAX / dims[a], "the grid has more than INT32_MAX nodes "
                      "(dims[%d] = %lld)", a, (long long)dims[a]);
        n *= dims[a];
    }
    for (int a = ndim - 1, s = 1; a >= 0; a--) { stride[a] = s; s *= (int)dims[a]; }
    int64_t nnz = n;
    for (int a = 0; a < ndim; a++) nnz += 2 * (n / dims[a]) * (dims[a] - 1);
    /* written straight into the pattern's own arrays (rows come out sorted): no COO, no copy */
    int64_t *rowptr = sla_malloc((size_t)n + 1, sizeof *rowptr, "row pointers");
    int32_t *col = sla_malloc((size_t)nnz, sizeof *col, "column indices");
    double *val = sla_malloc((size_t)nnz, sizeof *val, "values");
    sla_status st = rowptr && col && val ? SLA_OK : SLA_ENOMEM;
    int64_t k = 0;
    if (st == SLA_OK) rowptr[0] = 0;
    for (int64_t p = 0; st == SLA_OK && p < n; p++) {
        for (int a = 0; a < ndim; a++)                  /* below: slowest axis first */
            if ((p / stride[a]) % dims[a] > 0) { col[k] = (int32_t)(p - stride[a]); val[k++] = lower[a]; }
        col[k] = (int32_t)p;
        val[k++] = diag;
        for (int a = ndim - 1; a >= 0; a--)             /* above: fastest axis first */
            if ((p / stride[a]) % dims[a] < dims[a] - 1) { col[k] = (int32_t)(p + stride[a]); val[k++] = upper[a]; }
        rowptr[p + 1] = k;
    }
    if (st != SLA_OK) {
        sla_free(rowptr); sla_free(col); sla_free(val);
        return sla_error_attribute(st, __func__);
    }
    st = sla_pattern_adopt_csr(n, n, rowptr, col, pattern);     /* takes rowptr and col */
    if (st != SLA_OK) { sla_free(val); return sla_error_attribute(st, __func__); }
    *values = val;
    return SLA_OK;
}

/* *p replaced by a pattern of the same structure whose input order is its CSR order */
static sla_status recompact(sla_pattern **p)
{
    int64_t nnz = sla_pattern_nnz(*p);
    const int32_t *c32 = sla_pattern_colind(*p);
    int64_t *c64 = sla_malloc((size_t)nnz, sizeof *c64, "column indices");
    if (!c64) return SLA_ENOMEM;
    for (int64_t k = 0; k < nnz; k++) c64[k] = c32[k];
    sla_pattern *q = NULL;
    sla_status st = sla_pattern_from_csr(sla_pattern_nrows(*p), sla_pattern_ncols(*p),
                                         sla_pattern_rowptr(*p), c64, &q);
    sla_free(c64);
    if (st != SLA_OK) return st;
    sla_pattern_free(p);
    *p = q;
    return SLA_OK;
}

sla_status sla_gallery_graph_laplacian(int64_t n, int64_t nedges, const int64_t *src,
                                       const int64_t *dst, const double *weights, double shift,
                                       sla_pattern **pattern, double **values)
{
    SLA_CHECK_ARG(pattern && values, "pattern or values is NULL");
    *pattern = NULL;
    *values = NULL;
    SLA_CHECK_ARG(n >= 0 && n <= INT32_MAX && nedges >= 0, "n = %lld or nedges = %lld out of "
                  "range", (long long)n, (long long)nedges);
    SLA_CHECK_ARG(nedges == 0 || (src && dst), "src or dst is NULL");
    SLA_CHECK_ARG(isfinite(shift), "shift is not finite");
    for (int64_t e = 0; e < nedges; e++) {
        if (src[e] < 0 || src[e] >= n || dst[e] < 0 || dst[e] >= n)
            return SLA_FAIL(SLA_EINDEX, "edge %lld (%lld, %lld) has an endpoint outside [0, %lld)",
                            (long long)e, (long long)src[e], (long long)dst[e], (long long)n);
        if (weights && !isfinite(weights[e]))
            return SLA_FAIL(SLA_EINVAL, "weights[%lld] is not finite", (long long)e);
    }
    int64_t *rowptr = sla_calloc((size_t)n + 1, sizeof *rowptr, "row pointers");
    int64_t *fill = sla_malloc((size_t)n, sizeof *fill, "row fill");
    sla_status st = rowptr && fill ? SLA_OK : SLA_ENOMEM;
    for (int64_t i = 0; st == SLA_OK && i < n; i++) rowptr[i + 1] = 1;   /* the diagonal */
    for (int64_t e = 0; st == SLA_OK && e < nedges; e++)
        if (src[e] != dst[e]) { rowptr[src[e] + 1]++; rowptr[dst[e] + 1]++; }
    for (int64_t i = 0; st == SLA_OK && i < n; i++) rowptr[i + 1] += rowptr[i];
    int64_t nnz = st == SLA_OK ? rowptr[n] : 0;
    int64_t *col = st == SLA_OK ? sla_malloc((size_t)nnz, sizeof *col, "columns") : NULL;
    double *raw = st == SLA_OK ? sla_malloc((size_t)nnz, sizeof *raw, "row entries") : NULL;
    if (st == SLA_OK && (!col || !raw)) st = SLA_ENOMEM;
    for (int64_t i = 0; st == SLA_OK && i < n; i++) {
        col[rowptr[i]] = i;                                /* diagonal first in each row */
        raw[rowptr[i]] = shift;
        fill[i] = rowptr[i] + 1;
    }
    for (int64_t e = 0; st == SLA_OK && e < nedges; e++) {
        int64_t i = src[e], j = dst[e];
        double w = weights ? weights[e] : 1.0;
        if (i == j) continue;
        raw[rowptr[i]] += w;
        raw[rowptr[j]] += w;
        col[fill[i]] = j; raw[fill[i]++] = -w;
        col[fill[j]] = i; raw[fill[j]++] = -w;
    }
    if (st == SLA_OK) st = sla_pattern_from_csr(n, n, rowptr, col, pattern);
    double *val = NULL;
    if (st == SLA_OK) {
        val = sla_malloc((size_t)sla_pattern_nnz(*pattern), sizeof *val, "values");
        st = val ? sla_values_gather(*pattern, SLA_FLOAT64, 1, raw, val) : SLA_ENOMEM;
        /* the caller's entries are the CSR slots: rebuild the pattern from its own sorted,
         * duplicate-free rows so that its input order is the CSR order */
        if (st == SLA_OK) st = recompact(pattern);
        if (st != SLA_OK) sla_pattern_free(pattern);
    }
    sla_free(rowptr);
    sla_free(fill);
    sla_free(col);
    sla_free(raw);
    if (st != SLA_OK) { sla_free(val); return sla_error_attribute(st, __func__); }
    *values = val;
    return SLA_OK;
}
