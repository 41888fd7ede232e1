/* Template (see core/instantiate.h): dtype-dependent helpers of the direct backends. */

/* First entry pair of matrix a (one batch element, values of A's slots) that breaks symmetry;
 * returns 1 and the pair if found. Each unordered pair {(i, j), (j, i)} is one entry k of the
 * lower triangle t of A ∪ Aᵀ, with its two slots src[k] and mirror[k] (−1: not stored, value 0):
 * one linear pass. max |a| (the absolute part of the tolerance) is computed only if a pair fails
 * the relative test. */
static int FN(asymmetric_pair)(const sla_symlower *t, int64_t nnz, const REAL *a, double rtol,
                               double eps, int64_t *pi, int64_t *pj, double *x, double *y)
{
    double amax = -1;
    for (int64_t i = 0; i < t->n; i++)
        for (int64_t k = t->rowptr[i]; k < t->rowptr[i + 1]; k++) {
            double u = (double)a[t->src[k]], v = t->mirror[k] >= 0 ? (double)a[t->mirror[k]] : 0;
            double d = fabs(u - v), tol = rtol * fmax(fabs(u), fabs(v));
            if (d <= tol) continue;
            if (amax < 0) {
                amax = 0;
                for (int64_t q = 0; q < nnz; q++) amax = fmax(amax, fabs((double)a[q]));
            }
            if (d <= tol + eps * amax) continue;
            /* name the stored entry first */
            int64_t j = t->colind[k];
            int lower_stored = t->src[k] == sla_pattern_find(t->pattern, i, j);
            *pi = lower_stored ? i : j; *pj = lower_stored ? j : i; *x = u; *y = v;
            return 1;
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

/* ‖B_j − op(A)·X_j‖₂ and ‖B_j‖₂ for column j of one batch element (B, X [n][k] of the dtype, a
 * the values), summed in double; r [n] is workspace. */
static void FN(residual_column)(const sla_pattern *p, const REAL *a, sla_op op, const REAL *B,
                                const REAL *X, int64_t k, int64_t j, double *r, double *rn,
                                double *bn)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double bs = 0, rs = 0;
    for (int64_t i = 0; i < n; i++) {
        r[i] = (double)B[i * k + j];
        bs += r[i] * r[i];
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t row = op == SLA_OP_N ? i : ci[s], col = op == SLA_OP_N ? ci[s] : i;
            r[row] -= (double)a[s] * (double)X[col * k + j];
        }
    for (int64_t i = 0; i < n; i++) rs += r[i] * r[i];
    *rn = sqrt(rs);
    *bn = sqrt(bs);
}
