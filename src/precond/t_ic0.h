/* Template (see core/instantiate.h): one row of the zero-fill incomplete Cholesky
 * factorization A ≈ L Lᵀ, row-oriented ("left-looking by rows"): for each k < i in row i of L,
 *   l_ik = (a_ik − Σ_{j<k} l_ij l_kj) / l_kk,     then   l_ii = sqrt(a_ii − Σ_k l_ik²),
 * the sums running over the pattern only. Row i reads the finished rows k of its own columns,
 * so rows of one level of L can run in parallel. Returns 1 if a_ii − Σ l_ik² is not positive
 * and finite (breakdown); *pivot gets that value. */
static int FN(ic0_row)(const ic0_t *F, const REAL *a, REAL *l, REAL *dinv, int64_t i, int64_t *w,
                       double *pivot)
{
    const sla_tri *L = &F->L;
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
        w[L->colind[k]] = k;
        l[k] = a[F->Lslot[k]];
    }
    double d = F->dslot[i] >= 0 ? (double)a[F->dslot[i]] : 0.0;
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
        int64_t c = L->colind[k];
        double s = l[k];
        for (int64_t t = L->rowptr[c]; t < L->rowptr[c + 1]; t++) {
            int64_t pos = w[L->colind[t]];     /* l_ij with j < c: already final */
            if (pos >= 0) s -= (double)l[pos] * (double)l[t];
        }
        REAL lik = (REAL)(s * (double)dinv[c]);
        l[k] = lik;
        d -= (double)lik * (double)lik;
    }
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) w[L->colind[k]] = -1;
    *pivot = d;
    if (!(d > 0) || !isfinite(d)) {
        dinv[i] = 0;
        return 1;
    }
    dinv[i] = (REAL)(1.0 / sqrt(d));
    return !(dinv[i] > 0) || !isfinite(dinv[i]);
}
