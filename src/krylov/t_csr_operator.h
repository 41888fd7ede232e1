/* Template (see core/instantiate.h): y = A x for one CSR matrix, fused with the dot xᵀy.
 * Rows are split into chunks of equal nonzero count (static schedule, one chunk per thread);
 * each row is summed in its stored order and the dot's partials added in chunk order, so the
 * result is bit-identical run to run. Row sums are accumulated in double. */
static void FN(csr_spmv_dot)(int nc, int par, const int64_t *bd, const int64_t *rp,
                             const int32_t *ci, const REAL *a, const REAL *x, REAL *y,
                             double *xy)
{
    double part[SLA_HOST_MAX_CHUNKS];
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        double d = 0;
        for (int64_t i = bd[c]; i < bd[c + 1]; i++) {
            double s = 0;
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) s += (double)a[k] * (double)x[ci[k]];
            y[i] = (REAL)s;
            if (xy) d += (double)x[i] * (double)y[i];   /* square A only: x[i] needs i < ncols */
        }
        part[c] = d;
    }
    if (xy) {
        double s = 0;
        for (int c = 0; c < nc; c++) s += part[c];
        *xy = s;
    }
}
