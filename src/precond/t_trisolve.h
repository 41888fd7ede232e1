/* Template (see core/instantiate.h): sparse triangular solves of precond/trifactor.h. */

/* row i of the substitution: out_i = (rhs_i − Σ t_ij out_j)·inv_diag_i */
static inline void FN(tri_row)(const int64_t *rp, const int32_t *ci, const REAL *t,
                               const REAL *dinv, const REAL *rhs, REAL *out, int64_t i)
{
    double s = rhs[i];
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) s -= (double)t[k] * (double)out[ci[k]];
    out[i] = dinv ? (REAL)(s * (double)dinv[i]) : (REAL)s;
}

static void FN(tri_solve)(const sla_tri *T, const REAL *t, const REAL *dinv, const REAL *rhs,
                          REAL *out)
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

static void FN(tri_gather)(int64_t count, const int64_t *idx, const REAL *src, REAL *dst)
{
    for (int64_t k = 0; k < count; k++) dst[k] = src[idx[k]];
}
