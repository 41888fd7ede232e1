/* Template (see core/instantiate.h): dtype-dependent helpers of the direct backends. */

/* First entry pair of matrix a (one batch element) that breaks symmetry; returns 1 and the pair
 * if found. One O(nnz) pass, no transposed pattern: rows are visited in increasing order i, and
 * cursor[j] walks the upper part of row j (columns > j, ascending), where the mirror (j, i) of a
 * lower entry (i, j) must be next. An upper entry the cursor steps over has no mirror (its row
 * has passed) and must be ~0, like a lower entry without one. max |a| (for the absolute part of
 * the tolerance) is computed only if a pair fails the relative test. *missing counts entries
 * without a mirror (0: structurally symmetric). cursor: [n] workspace. */
static int FN(asymmetric_pair)(const sla_pattern *p, const REAL *a, double rtol, double eps,
                               int64_t *cursor, int64_t *missing, int64_t *pi, int64_t *pj,
                               double *x, double *y)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double amax = -1;
    *missing = 0;
#define SLA_ASYM(u_, v_, i_, j_) \
    if (!(fabs((u_) - (v_)) <= rtol * fmax(fabs(u_), fabs(v_)))) { \
        if (amax < 0) { \
            amax = 0; \
            for (int64_t k_ = 0; k_ < nnz; k_++) amax = fmax(amax, fabs((double)a[k_])); \
        } \
        if (!(fabs((u_) - (v_)) <= rtol * fmax(fabs(u_), fabs(v_)) + eps * amax)) { \
            *pi = (i_); *pj = (j_); *x = (u_); *y = (v_); return 1; } }
    for (int64_t j = 0; j < n; j++) {
        int64_t s = rp[j];
        while (s < rp[j + 1] && ci[s] <= j) s++;
        cursor[j] = s;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1] && ci[s] < i; s++) {
            int64_t j = ci[s];
            for (; cursor[j] < rp[j + 1] && ci[cursor[j]] < i; cursor[j]++) {
                double u = (double)a[cursor[j]];
                (*missing)++;
                SLA_ASYM(u, 0.0, j, (int64_t)ci[cursor[j]]);
            }
            double u = (double)a[s], v = 0;
            if (cursor[j] < rp[j + 1] && ci[cursor[j]] == i) v = (double)a[cursor[j]++];
            else (*missing)++;
            SLA_ASYM(u, v, i, j);
        }
    for (int64_t j = 0; j < n; j++)
        for (; cursor[j] < rp[j + 1]; cursor[j]++) {
            double u = (double)a[cursor[j]];
            (*missing)++;
            SLA_ASYM(u, 0.0, j, (int64_t)ci[cursor[j]]);
        }
#undef SLA_ASYM
    return 0;
}

static void FN(gather_double)(int64_t nnz, const int64_t *src, const REAL *v, double *out)
{
    for (int64_t k = 0; k < nnz; k++) out[k] = (double)v[src[k]];
}

static void FN(to_colmajor)(int64_t n, int64_t k, const REAL *in, double *out)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) out[i + j * n] = (double)in[i * k + j];
}

static void FN(from_colmajor)(int64_t n, int64_t k, const double *in, int64_t ld, REAL *out)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) out[i * k + j] = (REAL)in[i + j * ld];
}

static void FN(scatter_scaled)(int64_t nnz, double g, const double *z, const int64_t *pos,
                               REAL *out)
{
    for (int64_t s = 0; s < nnz; s++) out[s] = (REAL)(g * z[pos ? pos[s] : s]);
}
