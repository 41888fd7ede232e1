/* Template (see core/instantiate.h): dtype-dependent helpers of the direct backends. */

/* First entry pair of matrix a (one batch element) that breaks symmetry, walking row i of A and
 * row i of Aᵀ together (both sorted); returns 1 and the pair if found. */
static int FN(asymmetric_pair)(const sla_pattern *p, const sla_pattern *t, const int64_t *perm,
                               const REAL *a, double rtol, double eps, int64_t *pi, int64_t *pj, double *x,
                               double *y)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p), *trp = sla_pattern_rowptr(t);
    const int32_t *ci = sla_pattern_colind(p), *tci = sla_pattern_colind(t);
    double amax = 0;
    for (int64_t s = 0; s < nnz; s++) amax = fmax(amax, fabs((double)a[s]));
    for (int64_t i = 0; i < n; i++) {
        int64_t s = rp[i], q = trp[i];
        while (s < rp[i + 1] || q < trp[i + 1]) {
            int64_t cs = s < rp[i + 1] ? ci[s] : INT64_MAX;
            int64_t cq = q < trp[i + 1] ? tci[q] : INT64_MAX;
            double u = 0, v = 0;
            if (cs <= cq) u = a[s++];
            if (cq <= cs) v = a[perm[q++]];
            if (!(fabs(u - v) <= rtol * fmax(fabs(u), fabs(v)) + eps * amax)) {
                *pi = i; *pj = cs < cq ? cs : cq; *x = u; *y = v;
                return 1;
            }
        }
    }
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
