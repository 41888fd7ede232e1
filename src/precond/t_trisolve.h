/* Template (see core/instantiate.h; real and complex instances): sparse triangular solves of
 * precond/trifactor.h. Sums in double (double complex for the complex dtypes). */
#if SLA_COMPLEX
#define TACC double complex
#else
#define TACC double
#endif

/* row i of the substitution: out_i = (rhs_i − Σ t_ij out_j)·inv_diag_i */
static inline void FN(tri_row)(const int64_t *rp, const int32_t *ci, const ENTRY *t,
                               const ENTRY *dinv, const ENTRY *rhs, ENTRY *out, int64_t i)
{
    TACC s = rhs[i];
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) s -= (TACC)t[k] * (TACC)out[ci[k]];
    out[i] = dinv ? (ENTRY)(s * (TACC)dinv[i]) : (ENTRY)s;
}

static void FN(tri_solve)(const sla_tri *T, const ENTRY *t, const ENTRY *dinv, const ENTRY *rhs,
                          ENTRY *out)
{
    const int64_t *rp = T->rowptr;
    const int32_t *ci = T->colind;
    if (T->nlevels == 0 || omp_in_parallel()) {
        if (T->upper)
            for (int64_t i = T->n - 1; i >= 0; i--) FN(tri_row)(rp, ci, t, dinv, rhs, out, i);
        else
            for (int64_t i = 0; i < T->n; i++) FN(tri_row)(rp, ci, t, dinv, rhs, out, i);
        return;
    }
    const int64_t *lp = T->levptr;
    const int32_t *lr = T->levrows;
    #pragma omp parallel num_threads(sla_threads())
    for (int64_t l = 0; l < T->nlevels; l++) {
        #pragma omp for schedule(static)
        for (int64_t q = lp[l]; q < lp[l + 1]; q++) FN(tri_row)(rp, ci, t, dinv, rhs, out, lr[q]);
    }
}

static void FN(tri_gather)(int64_t count, const int64_t *idx, const ENTRY *src, ENTRY *dst)
{
    for (int64_t k = 0; k < count; k++) dst[k] = src[idx[k]];
}

#undef TACC
