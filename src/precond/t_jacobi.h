/* Template (see core/instantiate.h; real and complex instances): Jacobi preconditioner
 * kernels. */

/* d ← 1/d (or 1/|d|) in place over count entries; returns the first zero or non-finite
 * reciprocal's index, or −1. */
static int64_t FN(jacobi_invert)(int64_t count, int absolute, ENTRY *d)
{
    int64_t bad = -1;
    for (int64_t k = 0; k < count; k++) {
#if SLA_COMPLEX
        ENTRY v = absolute ? (ENTRY)ABS(d[k]) : d[k];
        ENTRY r = (ENTRY)(1.0 / (double complex)v);
        int ok = v != 0 && isfinite(RE(r)) && isfinite(IM(r));
#else
        REAL v = absolute ? (REAL)fabs((double)d[k]) : d[k];
        REAL r = (REAL)(1.0 / (double)v);
        int ok = !(v == 0 || !isfinite(r));
#endif
        if (!ok && bad < 0) bad = k;
        d[k] = r;
    }
    return bad;
}

/* z = diag(dinv) r, or diag(conj(dinv)) r when cj (op = C: M⁻ᴴ) */
static void FN(jacobi_apply)(int64_t n, int cj, const ENTRY *dinv, const ENTRY *r, ENTRY *z)
{
    (void)cj;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(3.0 * (double)n * sizeof(ENTRY)))
    for (int64_t i = 0; i < n; i++) z[i] = MUL(SLA_COMPLEX && cj ? CONJ(dinv[i]) : dinv[i], r[i]);
}
