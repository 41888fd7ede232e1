/* Structural properties of a pattern: symmetry, row statistics, bandwidth, diagonal. */
#include <math.h>

#include "core/internal.h"

int sla_pattern_is_structurally_symmetric(const sla_pattern *p)
{
    if (!p || sla_pattern_nrows(p) != sla_pattern_ncols(p)) return 0;
    const sla_pattern *t;
    if (sla_pattern_cached_transpose(p, &t, NULL) != SLA_OK) return 0;
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p), *trp = sla_pattern_rowptr(t);
    const int32_t *ci = sla_pattern_colind(p), *tci = sla_pattern_colind(t);
    for (int64_t i = 0; i <= n; i++)
        if (rp[i] != trp[i]) return 0;
    for (int64_t s = 0; s < nnz; s++)
        if (ci[s] != tci[s]) return 0;
    return 1;
}

sla_status sla_pattern_get_stats(const sla_pattern *p, sla_pattern_stats *st)
{
    SLA_CHECK_ARG(p && st, "NULL argument");
    *st = (sla_pattern_stats){0};
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    unsigned char *colseen = sla_calloc((size_t)n, 1, "column flags");
    if (!colseen) return SLA_ENOMEM;
    double sum = 0, sumsq = 0;
    st->min_row_nnz = m > 0 ? INT64_MAX : 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t len = rp[i + 1] - rp[i];
        if (len < st->min_row_nnz) st->min_row_nnz = len;
        if (len > st->max_row_nnz) st->max_row_nnz = len;
        if (len == 0) st->empty_rows++;
        sum += (double)len;
        sumsq += (double)len * (double)len;
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t j = ci[s];
            colseen[j] = 1;
            if (i - j > st->lower_bandwidth) st->lower_bandwidth = i - j;
            if (j - i > st->upper_bandwidth) st->upper_bandwidth = j - i;
            if (i == j) st->diag_present++;
        }
    }
    for (int64_t j = 0; j < n; j++) st->empty_cols += !colseen[j];
    sla_free(colseen);
    if (m > 0) {
        st->mean_row_nnz = sum / (double)m;
        st->std_row_nnz = sqrt(fmax(0.0, sumsq / (double)m - st->mean_row_nnz * st->mean_row_nnz));
    }
    return SLA_OK;
}
