/* Template (see core/instantiate.h; real and complex instances): one row of the zero-fill incomplete LU factorization,
 * IKJ variant (Saad 2003, Algorithm 10.4), computed in the split storage L (strict lower,
 * unit diagonal implied), U (strict upper) and 1/u_ii. Rows read only earlier rows named by
 * their L columns, so rows of one level of L can run in parallel. Returns 1 if the pivot u_ii
 * is zero or not finite. Complex: the same recurrence in complex arithmetic (sums in double
 * complex); on a complex symmetric A (symmetric pattern) it gives U = D Lᵀ, so M = L D Lᵀ is
 * the incomplete LDLᵀ without conjugation that COCG needs. */
#if SLA_COMPLEX
#define TACC double complex
#define TFINITE(z) (isfinite(RE(z)) && isfinite(IM(z)))
#else
#define TACC double
#define TFINITE(z) isfinite(z)
#endif
static int FN(ilu0_row)(const ilu0_t *F, const ENTRY *a, ENTRY *l, ENTRY *u, ENTRY *dinv, int64_t i,
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
    TACC d = F->dslot[i] >= 0 ? (TACC)a[F->dslot[i]] : 0.0;
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) {
        int64_t c = L->colind[k];
        ENTRY lik = (ENTRY)((TACC)l[k] * (TACC)dinv[c]);
        l[k] = lik;
        for (int64_t t = U->rowptr[c]; t < U->rowptr[c + 1]; t++) {
            int64_t pos = w[U->colind[t]];
            if (pos < 0) continue;                /* outside the pattern: dropped (zero fill) */
            ENTRY v = lik * u[t];
            if (pos == diag_pos) d -= (TACC)v;
            else if (pos < L->nnz) l[pos] -= v;
            else u[pos - L->nnz] -= v;
        }
    }
    for (int64_t k = L->rowptr[i]; k < L->rowptr[i + 1]; k++) w[L->colind[k]] = -1;
    for (int64_t t = U->rowptr[i]; t < U->rowptr[i + 1]; t++) w[U->colind[t]] = -1;
    w[i] = -1;
    ENTRY dr = (ENTRY)d;
    dinv[i] = (ENTRY)(1.0 / (TACC)dr);
    return dr == 0 || !TFINITE(dinv[i]) || !TFINITE(dr);
}
#undef TACC
#undef TFINITE
