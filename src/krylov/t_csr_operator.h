/* Template (see core/instantiate.h): y = A x for one CSR matrix, fused with the dot xᵀy.
 * Rows are split into chunks of equal nonzero count (static schedule, one chunk per thread);
 * each row is summed in its stored order and the dot's partials added in chunk order, so the
 * result is bit-identical run to run. Row sums are accumulated in double. */

/* Rows [i0, i1) with their dot partial; always inlined with a constant choice of row pointers
 * (rp32 non-NULL: the int32 ones, half the row-pointer traffic). */
static inline __attribute__((always_inline)) double
FN(csr_rows_dot)(int64_t i0, int64_t i1, const int64_t *rp, const int32_t *rp32,
                 const int32_t *ci, const REAL *a, const REAL *x, REAL *y, int dot)
{
    double d = 0;
    for (int64_t i = i0; i < i1; i++) {
        double s = 0;
        int64_t k0 = rp32 ? rp32[i] : rp[i], k1 = rp32 ? rp32[i + 1] : rp[i + 1];
        for (int64_t k = k0; k < k1; k++) s += (double)a[k] * (double)x[ci[k]];
        y[i] = (REAL)s;
        if (dot) d += (double)x[i] * (double)y[i];   /* square A only: x[i] needs i < ncols */
    }
    return d;
}

/* rp32: the int32 copy of rp (sla_pattern_rowptr32), or NULL */
static void FN(csr_spmv_dot)(int nc, int par, const int64_t *bd, const int64_t *rp,
                             const int32_t *rp32, const int32_t *ci, const REAL *a,
                             const REAL *x, REAL *y, double *xy)
{
    double part[SLA_HOST_MAX_CHUNKS];
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        double d = rp32 ? FN(csr_rows_dot)(bd[c], bd[c + 1], NULL, rp32, ci, a, x, y, xy != NULL)
                        : FN(csr_rows_dot)(bd[c], bd[c + 1], rp, NULL, ci, a, x, y, xy != NULL);
        part[c] = d;
    }
    if (xy) {
        double s = 0;
        for (int c = 0; c < nc; c++) s += part[c];
        *xy = s;
    }
}
