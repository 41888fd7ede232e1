/* Template (see core/instantiate.h): Jacobi preconditioner kernels. */

/* d ← 1/d (or 1/|d|) in place over count entries; returns the first zero or non-finite
 * reciprocal's index, or −1. */
static int64_t FN(jacobi_invert)(int64_t count, int absolute, REAL *d)
{
    int64_t bad = -1;
    for (int64_t k = 0; k < count; k++) {
        REAL v = absolute ? (REAL)fabs((double)d[k]) : d[k];
        REAL r = (REAL)(1.0 / (double)v);
        if ((v == 0 || !isfinite(r)) && bad < 0) bad = k;
        d[k] = r;
    }
    return bad;
}

static void FN(jacobi_apply)(int64_t n, const REAL *dinv, const REAL *r, REAL *z)
{
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(3.0 * (double)n * sizeof(REAL)))
    for (int64_t i = 0; i < n; i++) z[i] = dinv[i] * r[i];
}
