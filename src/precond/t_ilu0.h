/* Template (see core/instantiate.h): one row of the zero-fill incomplete LU factorization,
 * IKJ variant (Saad 2003, Algorithm 10.4), computed in the split storage L (strict lower,
 * unit diagonal implied), U (strict upper) and 1/u_ii. Rows read only earlier rows named by
 * their L columns, so rows of one level of L can run in parallel. Returns 1 if the pivot u_ii
 * is zero or not finite. */
static int FN(ilu0_row)(const ilu0_t *F, const REAL *a, REAL *l, REAL *u, REAL *dinv, int64_t i,
                        int64_t *w)
{
    const sla_tri *L = &F->L, *U = &F->U;
    const int64_t diag_pos = L->nnz + U->nnz;
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
        w[L->colind[k]] = k;
        l[k] = a[F->Lslot[k]];
    }
    for (int64_t t = U->rowptr[i]; t < U->rowptr[i + 1]; t++) {
        w[U->colind[t]] = L->nnz + t;
        u[t] = a[F->Uslot[t]];
    }
    w[i] = diag_pos;
    double d = F->dslot[i] >= 0 ? (double)a[F->dslot[i]] : 0.0;
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
        int64_t c = L->colind[k];
        REAL lik = (REAL)((double)l[k] * (double)dinv[c]);
        l[k] = lik;
        for (int64_t t = U->rowptr[c]; t < U->rowptr[c + 1]; t++) {
            int64_t pos = w[U->colind[t]];
            if (pos < 0) continue;                /* outside the pattern: dropped (zero fill) */
            REAL v = lik * u[t];
            if (pos == diag_pos) d -= (double)v;
            else if (pos < L->nnz) l[pos] -= v;
            else u[pos - L->nnz] -= v;
        }
    }
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) w[L->colind[k]] = -1;
    for (int64_t t = U->rowptr[i]; t < U->rowptr[i + 1]; t++) w[U->colind[t]] = -1;
    w[i] = -1;
    REAL dr = (REAL)d;
    dinv[i] = (REAL)(1.0 / (double)dr);
    return dr == 0 || !isfinite(dinv[i]) || !isfinite(dr);
}
