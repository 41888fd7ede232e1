/* Template (see core/instantiate.h): the row-equilibrated 1-norm of condest.c. */

/* ‖RA‖₁ = max_j Σ_i w_i |a_ij| with w_i = 1 / max_j |a_ij| (w [n]) for one matrix a of the CSR
 * pattern p; colsum [n] is workspace. 0 if some row has no nonzero value (A is singular). */
static double FN(row_scaled_norm1)(const sla_pattern *p, const REAL *a, double *w, double *colsum)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t j = 0; j < n; j++) colsum[j] = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = 0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            double t = fabs((double)a[k]);
            m = t > m ? t : m;                   /* not fmax: a library call per entry */
        }
        if (!(m > 0)) return 0;
        w[i] = 1 / m;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) colsum[ci[k]] += fabs((double)a[k]) * w[i];
    }
    double norm = 0;
    for (int64_t j = 0; j < n; j++) norm = colsum[j] > norm ? colsum[j] : norm;
    return norm;
}
