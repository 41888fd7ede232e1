/* Template (see core/instantiate.h; the AMG hierarchy uses the double and double complex
 * instances): the Gershgorin bound max_i Σ_j |a_ij| / |a_ii| of ρ(D⁻¹A), and the Lanczos steps on
 * S = |D|^(−1/2) A |D|^(−1/2) with the inner product Re(xᴴy) (amg_spectral.c). */
static inline double FN(amg_rho_bound)(const amg_csr *A, const ENTRY *diag)
{
    double rho = 0;
    int64_t n = A->nrows;
    const ENTRY *v = (const ENTRY *)A->v;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) reduction(max : rho) if (n > AMG_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) s += ABS(v[k]);
        s /= ABS(diag[i]);
        if (s > rho) rho = s;
    }
    return rho;
}

/* Re Σ conj(x_i) y_i with partial sums per block added in block order (the imaginary term is an
 * exact +0 in the real instance: the bits of Σ x_i y_i) */
static inline double FN(block_dot)(const amg_blocks *blk, const ENTRY *x, const ENTRY *y,
                                   double *part)
{
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (blk->n > 1)
    for (int t = 0; t < blk->n; t++) {
        double s = 0;
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
            s += RE(x[i]) * RE(y[i]) + IM(x[i]) * IM(y[i]);
        part[t] = s;
    }
    double s = 0;
    for (int t = 0; t < blk->n; t++) s += part[t];
    return s;
}

/* w = S v − β v_prev, S = s A s with s = |D|^(−1/2). */
static inline void FN(apply_s)(const amg_csr *A, const amg_blocks *blk, const double *s,
                               const ENTRY *v, double beta, const ENTRY *vprev, ENTRY *w)
{
    const ENTRY *av = (const ENTRY *)A->v;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (blk->n > 1)
    for (int t = 0; t < blk->n; t++)
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++) {
            ENTRY acc = 0;
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
                acc += av[k] * s[A->ci[k]] * v[A->ci[k]];
            w[i] = s[i] * acc - beta * vprev[i];
        }
}

/* Up to `steps` Lanczos steps from the start vector of start_value(); α, β of the tridiagonal
 * into alpha, beta; returns the step count. */
static inline int FN(lanczos)(const amg_csr *A, const amg_blocks *blk, const ENTRY *diag,
                              int steps, const lanczos_work *lw, double *alpha, double *beta)
{
    int64_t n = A->nrows;
    double *s = lw->s;
    ENTRY *v = (ENTRY *)lw->v, *vp = (ENTRY *)lw->vp, *w = (ENTRY *)lw->w;
    for (int64_t i = 0; i < n; i++) {
        s[i] = 1.0 / sqrt(ABS(diag[i]));
        v[i] = start_value((uint64_t)i);
    }
    double nv = sqrt(FN(block_dot)(blk, v, v, lw->part));
    for (int64_t i = 0; i < n; i++) v[i] /= nv;
    int k = 0;
    double b = 0;
    for (; k < steps; k++) {
        FN(apply_s)(A, blk, s, v, b, vp, w);
        double a = FN(block_dot)(blk, w, v, lw->part);
        for (int64_t i = 0; i < n; i++) w[i] -= a * v[i];
        alpha[k] = a;
        b = sqrt(FN(block_dot)(blk, w, w, lw->part));
        beta[k] = b;
        if (!(b > 1e-12 * fabs(a))) { k++; break; }   /* invariant subspace (or NaN) */
        ENTRY *t = vp;
        vp = v;
        v = t;
        for (int64_t i = 0; i < n; i++) v[i] = w[i] / b;
    }
    return k;
}
