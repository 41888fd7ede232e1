/* Template (see core/instantiate.h; real and complex instances): one row of the zero-fill
 * incomplete Cholesky factorization A ≈ L Lᴴ (L Lᵀ for the real dtypes), row-oriented
 * ("left-looking by rows"): for each k < i in row i of L,
 *   l_ik = (a_ik − Σ_{j<k} l_ij conj(l_kj)) / l_kk,     then   l_ii = sqrt(a_ii − Σ_k |l_ik|²),
 * the sums running over the pattern only (in double, double complex for the complex dtypes).
 * l_ii is real; for a Hermitian A only Re a_ii is read (its imaginary part is zero). Row i
 * reads the finished rows k of its own columns, so rows of one level of L can run in parallel.
 * Returns 1 if a_ii − Σ |l_ik|² is not positive and finite (breakdown); *pivot gets that value. */
#if SLA_COMPLEX
#define TACC double complex
#else
#define TACC double
#endif
static int FN(ic0_row)(const ic0_t *F, const ENTRY *a, ENTRY *l, ENTRY *dinv, int64_t i,
                       int64_t *w, double *pivot)
{
    const sla_tri *L = &F->L;
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
        w[L->colind[k]] = k;
        l[k] = a[F->Lslot[k]];
    }
    double d = F->dslot[i] >= 0 ? (double)RE(a[F->dslot[i]]) : 0.0;
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
        int64_t c = L->colind[k];
        TACC s = l[k];
        for (int64_t t = L->rowptr[c]; t < L->rowptr[c + 1]; t++) {
            int64_t pos = w[L->colind[t]];     /* l_ij with j < c: already final */
            if (pos >= 0) s -= (TACC)l[pos] * (TACC)CONJ(l[t]);
        }
        ENTRY lik = (ENTRY)(s * (double)RE(dinv[c]));
        l[k] = lik;
        /* |l_ik|²; the imaginary term is an exact +0 for the real dtypes (same bits as before) */
        d -= (double)RE(lik) * (double)RE(lik) + (double)IM(lik) * (double)IM(lik);
    }
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) w[L->colind[k]] = -1;
    *pivot = d;
    if (!(d > 0) || !isfinite(d)) {
        dinv[i] = 0;
        return 1;
    }
    REAL di = (REAL)(1.0 / sqrt(d));
    dinv[i] = di;
    return !(di > 0) || !isfinite(di);
}
#undef TACC
