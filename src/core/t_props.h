/* Template (see core/instantiate.h; real and complex): numerical properties of a matrix
 * batch. */

/* |a_ij − m(a_ji)| ≤ atol + rtol·max(|a_ij|, |a_ji|) with m the identity (symmetric) or conj
 * (herm = 1: Hermitian, a no-op for real dtypes), a missing mirror counting as 0; equal values
 * match, also when they are infinite, and NaN matches NaN, part by part (a diagonal entry is its
 * own mirror, and inf − inf = NaN would fail the test); a non-finite value matches nothing else. */
static int FN(is_symmetric)(const sla_pattern *p, const int64_t *perm, int64_t batch,
                            const ENTRY *v, double rtol, double atol, int herm, int64_t *where)
{
    int64_t nnz = sla_pattern_nnz(p);
    const sla_pattern *t;
    sla_pattern_cached_transpose(p, &t, NULL);
    const int64_t *rp = sla_pattern_rowptr(p), *trp = sla_pattern_rowptr(t);
    const int32_t *ci = sla_pattern_colind(p), *tci = sla_pattern_colind(t);
    int sym = 1;
    for (int64_t b = 0; b < batch && sym; b++) {
        const ENTRY *a = v + b * nnz;
        /* walk row i of A and row i of Aᵀ (= column i of A) together: both sorted */
        for (int64_t i = 0; i < sla_pattern_nrows(p) && sym; i++) {
            int64_t s = rp[i], q = trp[i];
            while ((s < rp[i + 1] || q < trp[i + 1]) && sym) {
                int64_t cs = s < rp[i + 1] ? ci[s] : INT64_MAX;
                int64_t cq = q < trp[i + 1] ? tci[q] : INT64_MAX;
                ENTRY x = 0, y = 0;
                if (cs <= cq) x = a[s++];
                if (cq <= cs) y = a[perm[q++]];
                if (herm) y = CONJ(y);
                /* equal part by part, NaN matching NaN (a NaN real part must not hide
                 * differing imaginary parts) */
                if ((RE(x) == RE(y) || (isnan(RE(x)) && isnan(RE(y)))) &&
                    (IM(x) == IM(y) || (isnan(IM(x)) && isnan(IM(y)))))
                    continue;
                /* a non-finite value matches only itself: |inf − 1| ≤ rtol·inf would pass */
                if (!isfinite((double)ABS(x)) || !isfinite((double)ABS(y)) ||
                    !((double)ABS(x - y) <= atol + rtol * fmax(ABS(x), ABS(y)))) {
                    sym = 0;
                    /* the first entry that fails: batch, row, column */
                    where[0] = b;
                    where[1] = i;
                    where[2] = cs <= cq ? cs : cq;
                }
            }
        }
    }
    return sym;
}

/* the diagonal; info (sign counts) for real dtypes only (complex callers pass NULL) */
static void FN(diag)(const sla_pattern *p, int64_t batch, const ENTRY *v, ENTRY *d,
                     sla_diag_info *info)
{
    int64_t nnz = sla_pattern_nnz(p);
    int64_t m = sla_pattern_nrows(p) < sla_pattern_ncols(p) ? sla_pattern_nrows(p)
                                                             : sla_pattern_ncols(p);
    if (info) *info = (sla_diag_info){0};
    for (int64_t i = 0; i < m; i++) {
        int64_t s = sla_pattern_find(p, i, i);
        if (info && s >= 0) info->present++;
        for (int64_t b = 0; b < batch; b++) {
            ENTRY x = s >= 0 ? v[b * nnz + s] : 0;
            if (d) d[b * m + i] = x;
            if (info && s >= 0) {
                REAL xr = RE(x);
                if (xr > 0) info->positive++;
                else if (xr < 0) info->negative++;
                else if (xr == 0) info->zero++;
                else info->nan++;
            }
        }
    }
    if (info) info->missing = m - info->present;
}

static void FN(norm)(const sla_pattern *p, int64_t batch, const ENTRY *v, char which,
                     double *out, double *colsum)
{
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t b = 0; b < batch; b++) {
        const ENTRY *a = v + b * nnz;
        double r = 0;
        if (which == 'F') {
            /* scaled sum of squares (LAPACK dlassq) avoids overflow for entries ~1e200; an
             * infinite entry makes the norm inf (inf/inf inside the scaling would give NaN),
             * and a NaN entry makes it NaN */
            double scale = 0, ssq = 1;
            int has_inf = 0, has_nan = 0;
            for (int64_t s = 0; s < nnz; s++) {
                double x = (double)ABS(a[s]);
                if (isnan(x)) { has_nan = 1; continue; }
                if (isinf(x)) { has_inf = 1; continue; }
                if (x == 0) continue;
                if (scale < x) { ssq = 1 + ssq * (scale / x) * (scale / x); scale = x; }
                else ssq += (x / scale) * (x / scale);
            }
            r = has_nan ? NAN : has_inf ? INFINITY : scale * sqrt(ssq);
        } else if (which == 'M') {
            for (int64_t s = 0; s < nnz; s++) r = max_nan(r, (double)ABS(a[s]));
        } else if (which == 'I') {
            for (int64_t i = 0; i < m; i++) {
                double t = 0;
                for (int64_t s = rp[i]; s < rp[i + 1]; s++) t += (double)ABS(a[s]);
                r = max_nan(r, t);
            }
        } else { /* '1' */
            for (int64_t j = 0; j < n; j++) colsum[j] = 0;
            for (int64_t s = 0; s < nnz; s++) colsum[ci[s]] += (double)ABS(a[s]);
            for (int64_t j = 0; j < n; j++) r = max_nan(r, colsum[j]);
        }
        out[b] = r;
    }
}

static void FN(to_dense)(const sla_pattern *p, int64_t batch, const ENTRY *v, ENTRY *dense)
{
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t b = 0; b < batch; b++) {
        ENTRY *d = dense + b * m * n;
        for (int64_t q = 0; q < m * n; q++) d[q] = 0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) d[i * n + ci[s]] = v[b * nnz + s];
    }
}

/* Counts entries kept (|a| > tol in some batch element; tol < 0 keeps all) and, when rows/cols
 * are given, records their coordinates in row-major order. */
static int64_t FN(dense_keep)(int64_t m, int64_t n, int64_t batch, const ENTRY *dense, double tol,
                              int64_t *rows, int64_t *cols)
{
    int64_t cnt = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int keep = tol < 0;
            for (int64_t b = 0; b < batch && !keep; b++)
                keep = (double)ABS(dense[(b * m + i) * n + j]) > tol;
            if (!keep) continue;
            if (rows) { rows[cnt] = i; cols[cnt] = j; }
            cnt++;
        }
    return cnt;
}

static void FN(dense_pick)(int64_t m, int64_t n, int64_t batch, const ENTRY *dense, int64_t nnz,
                           const int64_t *rows, const int64_t *cols, ENTRY *v)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t s = 0; s < nnz; s++) v[b * nnz + s] = dense[(b * m + rows[s]) * n + cols[s]];
}
