/* Template (see core/instantiate.h; the AMG hierarchy uses the double and double complex
 * instances): the dense coarsest matrix and the tests before its factorization (amg_coarse.c). */
static inline void FN(to_dense)(const amg_csr *A, ENTRY *f)
{
    int64_t n = A->nrows;
    const ENTRY *v = (const ENTRY *)A->v;
    memset(f, 0, sizeof(ENTRY) * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) f[A->ci[k] * n + i] = v[k];
}

/* Hermitian (symmetric for the real dtypes) up to the rounding of the Galerkin products, with
 * finite entries (NaN/Inf, from unvalidated input, are not for LAPACK): 1 Hermitian, 0 not, −1
 * not finite. */
static inline int FN(coarse_class)(const ENTRY *f, int64_t n)
{
    double amax = 0;
    for (int64_t k = 0; k < n * n; k++) {
        if (!isfinite(RE(f[k])) || !isfinite(IM(f[k]))) return -1;
        amax = fmax(amax, ABS(f[k]));
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = j; i < n; i++)
            if (ABS(f[j * n + i] - CONJ(f[i * n + j])) > 1e-12 * amax) return 0;
    return 1;
}

/* min |u_ii| > 1e-13 max |u_ii| for the LU factor in f (else: numerically singular) */
static inline int FN(pivots_ok)(const ENTRY *f, int64_t n)
{
    double umax = 0, umin = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        umax = fmax(umax, ABS(f[i * n + i]));
        umin = fmin(umin, ABS(f[i * n + i]));
    }
    return umin > 1e-13 * umax;
}
