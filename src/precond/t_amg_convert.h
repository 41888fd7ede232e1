/* Template (see core/instantiate.h): conversions between the caller's dtype and the double
 * precision of the AMG hierarchy. */

static void FN(amg_load)(const REAL *src, int64_t n, double *dst)
{
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par((8.0 + sizeof(REAL)) * (double)n))
    for (int64_t i = 0; i < n; i++) dst[i] = (double)src[i];
}

static void FN(amg_store)(const double *src, int64_t n, REAL *dst)
{
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par((8.0 + sizeof(REAL)) * (double)n))
    for (int64_t i = 0; i < n; i++) dst[i] = (REAL)src[i];
}
