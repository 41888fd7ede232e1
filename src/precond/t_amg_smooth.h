/* Template (see core/instantiate.h; the AMG hierarchy uses the double and double complex
 * instances): the value kernels of the smoothers and the V-cycle (amg_smooth.c). Values and
 * vectors are ENTRY arrays behind the double pointers of amg_internal.h. Complex: the same
 * sweeps in complex arithmetic; the l1 factor is 1 / (a_ii + (a_ii/|a_ii|) Σ_out |a_ij|) (the
 * real sign(a_ii) generalised), and the restriction multiplies by conj(P) when P->conj_r. */
#if SLA_COMPLEX
#define RCOEF(P, p) ((P)->conj_r ? CONJ(p) : (p))
#else
#define RCOEF(P, p) (p)
#endif

static inline int64_t FN(amg_diagonal)(const amg_csr *A, ENTRY *diag)
{
    int64_t n = A->nrows, bad = n;
    const ENTRY *v = (const ENTRY *)A->v;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) reduction(min : bad) if (n > AMG_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        ENTRY d = 0;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
            if (A->ci[k] == i) { d = v[k]; break; }
        diag[i] = d;
        if (d == 0 && i < bad) bad = i;
    }
    return bad < n ? bad : -1;
}

/* The l1 Gauss–Seidel factor of row i of block [lo, hi): see row_dinv in amg_smooth.c */
static inline ENTRY FN(row_dinv)(const amg_csr *A, const amg_blocks *blk, const ENTRY *dinv,
                                 int64_t i, int64_t lo, int64_t hi, int64_t kfrom)
{
    if (dinv) return dinv[i];
    int64_t k0 = A->rp[i], k1 = A->rp[i + 1];
    if (k0 < k1 && (A->ci[k0] < lo || A->ci[k1 - 1] >= hi))
        return ((const ENTRY *)blk->bdinv)[brow_index(blk, i)];
    const ENTRY *v = (const ENTRY *)A->v;
    for (int64_t k = kfrom; k < k1; k++)
        if (A->ci[k] == i) return 1.0 / v[k];
    return 1.0 / 0.0;   /* no diagonal: never smoothed (create checks) */
}

static inline void FN(amg_smoother_setup)(const amg_csr *A, amg_blocks *blk, const ENTRY *diag,
                                          double rho, sla_amg_smoother smoother, ENTRY *dinv)
{
    if (smoother == SLA_AMG_SMOOTHER_JACOBI) {
        double w = 4.0 / (3.0 * rho);
        #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(24.0 * (double)A->nrows))
        for (int64_t i = 0; i < A->nrows; i++) dinv[i] = w / diag[i];
        return;
    }
    const ENTRY *v = (const ENTRY *)A->v;
    ENTRY *bd = (ENTRY *)blk->bdinv;
    for (int t = 0, q = 0; t < blk->n; t++) {
        int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1];
        for (; q < blk->nbrows && blk->brows[q] < hi; q++) {
            int64_t i = blk->brows[q];
            double l1 = 0;
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
                if (A->ci[k] < lo || A->ci[k] >= hi) l1 += ABS(v[k]);
#if SLA_COMPLEX
            bd[q] = 1.0 / (diag[i] + diag[i] / ABS(diag[i]) * l1);
#else
            bd[q] = 1.0 / (diag[i] + copysign(l1, diag[i]));
#endif
        }
    }
}

static inline void FN(amg_gs_full_dinv)(const amg_csr *A, const amg_blocks *blk, ENTRY *dinv)
{
    for (int t = 0; t < blk->n; t++)
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
            dinv[i] = FN(row_dinv)(A, blk, NULL, i, blk->bounds[t], blk->bounds[t + 1], A->rp[i]);
}

/* x_i = (b_i − Σ_{lo ≤ j < i} a_ij x_j) / d₁_i: the first forward sweep from x = 0 reads only the
 * strictly lower in-block part of each row (columns are sorted: stop at the diagonal). */
static inline void FN(forward_from_zero)(const amg_csr *A, const amg_blocks *blk, const ENTRY *dinv,
                                         const ENTRY *b, ENTRY *x, int64_t lo, int64_t hi,
                                         int64_t from, int64_t to)
{
    const int64_t *rp = A->rp;
    const int32_t *ci = A->ci;
    const ENTRY *v = (const ENTRY *)A->v;
    for (int64_t i = from; i < to; i++) {
        ENTRY s = b[i];
        int64_t k = rp[i];
        for (; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j >= i) break;
            if (j >= lo) s -= v[k] * x[j];
        }
        x[i] = s * FN(row_dinv)(A, blk, dinv, i, lo, hi, k);   /* the diagonal is at k */
    }
}

/* x_i += (b_i − Σ_j a_ij x_j) / d₁_i, with x_j from the snapshot xold outside [lo, hi). */
static inline void FN(gs_row)(const amg_csr *A, const amg_blocks *blk, const ENTRY *dinv,
                              const ENTRY *b, ENTRY *x, const ENTRY *xold, int64_t lo, int64_t hi,
                              int64_t i)
{
    int64_t k0 = A->rp[i], k1 = A->rp[i + 1];
    const int32_t *ci = A->ci;
    const ENTRY *v = (const ENTRY *)A->v;
    ENTRY s = b[i];
    if (k0 == k1) return;
    if (ci[k0] >= lo && ci[k1 - 1] < hi) {
        for (int64_t k = k0; k < k1; k++) s -= v[k] * x[ci[k]];
    } else {
        for (int64_t k = k0; k < k1; k++) {
            int64_t j = ci[k];
            s -= v[k] * ((j >= lo && j < hi) ? x[j] : xold[j]);
        }
    }
    x[i] += s * FN(row_dinv)(A, blk, dinv, i, lo, hi, k0);
}

static inline void FN(amg_gs_sweep)(const amg_csr *A, const amg_blocks *blk, const ENTRY *dinv,
                                    const ENTRY *b, ENTRY *x, ENTRY *xold, int reverse,
                                    int zero_guess)
{
    if (zero_guess && reverse) {   /* not used by the cycle; kept general */
        memset(x, 0, sizeof(ENTRY) * (size_t)A->nrows);
        zero_guess = 0;
    }
    if (!zero_guess)
        for (int64_t h = 0; h < blk->nhalo; h++) xold[blk->halo[h]] = x[blk->halo[h]];
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (blk->n > 1)
    for (int t = 0; t < blk->n; t++) {
        int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1];
        if (zero_guess)
            FN(forward_from_zero)(A, blk, dinv, b, x, lo, hi, lo, hi);
        else if (!reverse)
            for (int64_t i = lo; i < hi; i++) FN(gs_row)(A, blk, dinv, b, x, xold, lo, hi, i);
        else
            for (int64_t i = hi - 1; i >= lo; i--) FN(gs_row)(A, blk, dinv, b, x, xold, lo, hi, i);
    }
}

static inline ENTRY FN(row_residual)(const amg_csr *A, const ENTRY *b, const ENTRY *x, int64_t i)
{
    const ENTRY *v = (const ENTRY *)A->v;
    ENTRY s = b[i];
    for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) s -= v[k] * x[A->ci[k]];
    return s;
}

/* Row j's residual rj: stored, or added to the coarse entries no other block feeds (rows of a
 * block arrive ascending: the order of R = Pᵀ's rows); a row feeding a shared entry keeps rj
 * for the ordered pass of finish_restrict. */
static inline void FN(put)(const resid_out *o, int64_t j, ENTRY rj, int64_t *q)
{
    if (o->r) {
        ((ENTRY *)o->r)[j] = rj;
        return;
    }
    const amg_csr *P = o->P;
    const ENTRY *pv = (const ENTRY *)P->v;
    ENTRY *bc = (ENTRY *)o->bc;
    const unsigned char *sh = o->rs->shared;
    for (int64_t s = P->rp[j]; s < P->rp[j + 1]; s++)
        if (!sh || !sh[P->ci[s]]) bc[P->ci[s]] += RCOEF(P, pv[s]) * rj;
    if (sh) {
        int64_t k = shared_row(o->rs, j, q);
        if (k >= 0) ((ENTRY *)o->rs->rv)[k] = rj;
    }
}

/* The shared coarse entries, over their rows ascending. */
static inline void FN(finish_restrict)(const resid_out *o)
{
    const amg_restrict *rs = o->rs;
    const amg_csr *P = o->P;
    const ENTRY *pv = (const ENTRY *)P->v, *rv = (const ENTRY *)rs->rv;
    ENTRY *bc = (ENTRY *)o->bc;
    for (int64_t q = 0; q < rs->nrows; q++) {
        int64_t i = rs->rows[q];
        for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++)
            if (rs->shared[P->ci[s]]) bc[P->ci[s]] += RCOEF(P, pv[s]) * rv[q];
    }
}

static inline void FN(forward_residual)(const amg_csr *A, const amg_blocks *blk, const ENTRY *dinv,
                                        const ENTRY *b, ENTRY *x, ENTRY *xold, const resid_out *o,
                                        int zero_guess)
{
    if (!zero_guess)
        for (int64_t h = 0; h < blk->nhalo; h++) xold[blk->halo[h]] = x[blk->halo[h]];
    #pragma omp parallel num_threads(sla_threads()) if (blk->n > 1)
    {
        if (!o->r) {
            ENTRY *bc = (ENTRY *)o->bc;
            #pragma omp for schedule(static)
            for (int64_t c = 0; c < o->P->ncols; c++) bc[c] = 0;
        }
        #pragma omp for schedule(static, 1)
        for (int t = 0; t < blk->n; t++) {
            int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1], j = lo;
            int64_t q = o->r || !o->rs->shared ? 0 : shared_lower(o->rs, lo);
            for (int64_t i = lo; i < hi; i++) {
                if (zero_guess) FN(forward_from_zero)(A, blk, dinv, b, x, lo, hi, i, i + 1);
                else FN(gs_row)(A, blk, dinv, b, x, xold, lo, hi, i);
                /* rows whose last column the sweep has passed are final: their residual now */
                for (; j <= i; j++) {
                    int64_t k0 = A->rp[j], k1 = A->rp[j + 1];
                    if (k0 < k1 && (A->ci[k0] < lo || A->ci[k1 - 1] >= hi)) continue;  /* later */
                    if (k0 < k1 && A->ci[k1 - 1] > i) break;
                    FN(put)(o, j, FN(row_residual)(A, b, x, j), &q);
                }
            }
            for (; j < hi; j++)
                if (row_inside(A, j, lo, hi)) FN(put)(o, j, FN(row_residual)(A, b, x, j), &q);
        }
        /* implicit barrier: every block's x is final. A row reading another block feeds only
         * shared coarse entries (amg_restrict_build), so its order does not matter here. */
        #pragma omp for schedule(static)
        for (int64_t k = 0; k < blk->nbrows; k++) {
            int64_t j = blk->brows[k];
            int64_t q = o->r ? 0 : shared_lower(o->rs, j);
            FN(put)(o, j, FN(row_residual)(A, b, x, j), &q);
        }
    }
    if (!o->r && o->rs->shared) FN(finish_restrict)(o);
}

static inline void FN(amg_residual)(const amg_csr *A, const amg_blocks *blk, const ENTRY *b,
                                    const ENTRY *x, ENTRY *r)
{
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (blk->n > 1)
    for (int t = 0; t < blk->n; t++)
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
            r[i] = FN(row_residual)(A, b, x, i);
}

static inline void FN(amg_jacobi_sweep)(const amg_csr *A, const amg_blocks *blk, const ENTRY *dinv,
                                        const ENTRY *b, ENTRY *x, ENTRY *r, int zero_guess)
{
    int64_t n = A->nrows;
    if (zero_guess) {
        #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(24.0 * (double)n))
        for (int64_t i = 0; i < n; i++) x[i] = dinv[i] * b[i];
        return;
    }
    FN(amg_residual)(A, blk, b, x, r);
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(32.0 * (double)n))
    for (int64_t i = 0; i < n; i++) x[i] += dinv[i] * r[i];
}

static inline void FN(amg_spmv)(const amg_csr *M, const ENTRY *x, ENTRY *y, int add)
{
    int64_t m = M->nrows;
    const ENTRY *v = (const ENTRY *)M->v;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(amg_sweep_bytes(M)))
    for (int64_t i = 0; i < m; i++) {
        ENTRY s = 0;
        for (int64_t k = M->rp[i]; k < M->rp[i + 1]; k++) s += v[k] * x[M->ci[k]];
        y[i] = add ? y[i] + s : s;
    }
}

#undef RCOEF
