/* Template (core/instantiate.h, every dtype) of the block kernels of the Krylov eigensolvers on
 * column-major blocks n × m of ENTRY: the Gram product Vᴴ W, the combination W += α V H, the
 * Hermitian (real: symmetric) eigensolver of the small projected problems, and the
 * orthonormalization of a block against an orthonormal basis (classical Gram–Schmidt twice,
 * then SVQB with rank detection: Stathopoulos & Wu 2002; Duersch, Shao, Yang & Gu 2018). The
 * including file provides FN(blas_gemm) and FN(lapack_heev) (blockops_t.c). In the complex
 * instances every inner product is conjugated (xᴴy), so the kernels are those of a Hermitian
 * problem; in the real ones they are the real kernels of blockops.c. */

/* H (a × b, ld a) = Vᴴ W for V n × a, W n × b. */
void FN(eig_gram)(int64_t n, int64_t a, int64_t b, const ENTRY *V, const ENTRY *W, ENTRY *H)
{
    if (a == 0 || b == 0) return;
    if (n == 0) {
        memset(H, 0, sizeof(ENTRY) * (size_t)(a * b));
        return;
    }
    FN(blas_gemm)(1, a, b, n, (ENTRY)1, V, n, W, n, (ENTRY)0, H, a);
}

/* W (n × b) += alpha · V (n × a) · H (a × b, leading dimension ldh). */
void FN(eig_comb)(int64_t n, int64_t a, int64_t b, ENTRY alpha, const ENTRY *V, const ENTRY *H,
                  int64_t ldh, ENTRY *W)
{
    if (a == 0 || b == 0 || n == 0) return;
    FN(blas_gemm)(0, n, b, a, alpha, V, n, H, ldh, (ENTRY)1, W, n);
}

/* Eigenvalues ascending (w) and orthonormal eigenvectors (overwriting G, m × m, ld m; the upper
 * triangle is read) of a small Hermitian matrix. */
sla_status FN(eig_heev)(int64_t m, ENTRY *G, REAL *w, const char *what)
{
    if (m == 0) return SLA_OK;
    for (int64_t i = 0; i < m * m; i++)
        if (!isfinite(RE(G[i])) || !isfinite(IM(G[i])))
            return EIG_FAIL(SLA_EBREAKDOWN, "the %s (%lld × %lld) has a non-finite entry", what,
                            (long long)m, (long long)m);
    return FN(lapack_heev)(m, G, w, what);
}

/* pseudo-random entries (real and imaginary parts uniform in [-1, 1)) from eig_random's stream */
void FN(eig_random_block)(ENTRY *x, int64_t len, uint64_t *state)
{
    double t[2] = {0, 0};
    for (int64_t i = 0; i < len; i++) {
        eig_random(t, SLA_COMPLEX ? 2 : 1, state);
        x[i] = ENTRY_OF(t[0], t[1]);
    }
}

/* ‖column‖₂ */
static REAL FN(colnorm)(int64_t n, const ENTRY *x)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)ABS2(x[i]);
    return (REAL)sqrt(s);
}

/* W ← W − V (Vᴴ W), the coefficients added to acc (nv × nw) when it is not NULL */
static void FN(project)(int64_t n, const ENTRY *V, int64_t nv, ENTRY *W, int64_t nw, ENTRY *h,
                        ENTRY *acc)
{
    if (nv == 0 || nw == 0) return;
    FN(eig_gram)(n, nv, nw, V, W, h);
    FN(eig_comb)(n, nv, nw, (ENTRY)-1, V, h, nv, W);
    for (int64_t q = 0; acc && q < nv * nw; q++) acc[q] += h[q];
}

/* One SVQB pass on the nw (projected) columns of W: W ← W·D·U·Θ^(-1/2) over the directions with
 * Θ > max(drop², 64ε)·max Θ, most independent first; T (nw × nw) receives the map
 * W_in = W_out·T (rows of dropped directions zero). work: 2·nw² + 3·nw + n·nw entries. */
static sla_status FN(svqb)(int64_t n, ENTRY *W, int64_t nw, double drop, ENTRY *T, int64_t *nkept,
                           ENTRY *work, REAL *theta)
{
    ENTRY *G = work, *Wt = G + nw * nw, *coef = Wt + n * nw, *d = coef + nw;
    FN(eig_gram)(n, nw, nw, W, W, G);
    for (int64_t i = 0; i < nw; i++) {
        REAL gi = RE(G[i + i * nw]);
        d[i] = gi > 0 ? (ENTRY)(1 / sqrt((double)gi)) : (ENTRY)0;
    }
    for (int64_t j = 0; j < nw; j++)
        for (int64_t i = 0; i < nw; i++) G[i + j * nw] *= d[i] * d[j];
    SLA_TRY(FN(eig_heev)(nw, G, theta, "Gram matrix of the new block"));
    double tmax = theta[nw - 1], eps = sizeof(REAL) == sizeof(double) ? DBL_EPSILON : FLT_EPSILON;
    memset(T, 0, sizeof(ENTRY) * (size_t)(nw * nw));
    memcpy(Wt, W, sizeof(ENTRY) * (size_t)(n * nw));
    memset(W, 0, sizeof(ENTRY) * (size_t)(n * nw));
    int64_t keep = 0;
    for (int64_t l = nw - 1; l >= 0; l--) {
        /* a Gram eigenvalue is known to ~ε·θ_max only: below that its direction is noise */
        if (!(tmax > 0) || theta[l] <= fmax(drop * drop, 64 * eps) * tmax) break;
        double s = 1.0 / sqrt((double)theta[l]);
        const ENTRY *u = G + l * nw;
        for (int64_t i = 0; i < nw; i++) coef[i] = d[i] * u[i] * (REAL)s;
        FN(eig_comb)(n, nw, 1, (ENTRY)1, Wt, coef, nw, W + keep * n);
        /* row keep of T = √θ_l · u_lᴴ · D⁻¹ */
        for (int64_t i = 0; i < nw; i++)
            T[keep + i * nw] = RE(d[i]) > 0 ? (REAL)sqrt((double)theta[l]) * CONJ(u[i]) / d[i]
                                            : (ENTRY)0;
        keep++;
    }
    *nkept = keep;
    return SLA_OK;
}

/* Random unit directions for the columns keep..nw−1 of W, orthogonal to V and the columns
 * before them (an invariant subspace was found: the Krylov space continues elsewhere). */
static sla_status FN(fill)(int64_t n, const ENTRY *V, int64_t nv, ENTRY *W, int64_t keep,
                           int64_t nw, uint64_t *state, ENTRY *h)
{
    for (int64_t j = keep; j < nw; j++)
        for (int tries = 0;; tries++) {
            FN(eig_random_block)(W + j * n, n, state);
            REAL before = FN(colnorm)(n, W + j * n);
            for (int pass = 0; pass < 2; pass++) {
                FN(project)(n, V, nv, W + j * n, 1, h, NULL);
                FN(project)(n, W, j, W + j * n, 1, h, NULL);
            }
            REAL after = FN(colnorm)(n, W + j * n);
            if (after > (REAL)1e-3 * before) {
                for (int64_t i = 0; i < n; i++) W[j * n + i] /= after;
                break;
            }
            if (tries == 9)
                return EIG_FAIL(SLA_EBREAKDOWN, "no direction left orthogonal to the basis "
                                "(%lld columns in %lld dimensions)", (long long)(nv + j),
                                (long long)n);
        }
    return SLA_OK;
}

/* The nw columns of W orthonormalized against the nv orthonormal columns of V and among
 * themselves: two passes of projection + SVQB; directions whose norm after projection falls
 * below drop·(their norm before) are numerically dependent and replaced by random ones (a
 * Krylov basis must keep its width). acc (nv × nw, or NULL) receives the summed projection
 * coefficients Vᴴ W_in; B (nw × nw, or NULL) the map W_in = V·acc + W_out·B, with zero rows for
 * the replaced directions. */
sla_status FN(eig_orth_fill)(int64_t n, const ENTRY *V, int64_t nv, ENTRY *W, int64_t nw,
                             double drop, uint64_t *state, ENTRY *acc, ENTRY *B)
{
    if (nw == 0) return SLA_OK;
    int64_t nh = (nv > nw ? nv : nw) * nw;
    ENTRY *work = sla_malloc((size_t)(2 * nw * nw + 3 * nw + n * nw + nh + 3 * nw * nw),
                             sizeof(ENTRY), "orthonormalization workspace");
    REAL *re = sla_malloc((size_t)(3 * nw), sizeof(REAL), "column norms");
    if (!work || !re) {
        sla_free(work);
        sla_free(re);
        return SLA_ENOMEM;
    }
    ENTRY *h = work + 2 * nw * nw + 3 * nw + n * nw, *T = h + nh, *Bt = T + nw * nw,
          *tmp = Bt + nw * nw;
    REAL *orig = re, *theta = re + nw, *after = re + 2 * nw;
    if (acc) memset(acc, 0, sizeof(ENTRY) * (size_t)(nv * nw));
    memset(Bt, 0, sizeof(ENTRY) * (size_t)(nw * nw));
    for (int64_t i = 0; i < nw; i++) Bt[i + i * nw] = 1;
    sla_status st = SLA_OK;
    int64_t keep = nw;
    for (int pass = 0; pass < 2 && st == SLA_OK && keep > 0; pass++) {
        for (int64_t j = 0; j < keep; j++) orig[j] = FN(colnorm)(n, W + j * n);
        /* the coefficients of the second pass are those of the first pass's output: the sum
         * of both is Vᴴ W_in up to the SVQB map, applied below */
        for (int rep = 0; rep < 2; rep++) {
            FN(eig_gram)(n, nv, keep, V, W, h);
            FN(eig_comb)(n, nv, keep, (ENTRY)-1, V, h, nv, W);
            /* acc += h · Bt (h refers to the current columns, Bt maps W_in to them) */
            if (acc && nv) FN(blas_gemm)(0, nv, nw, keep, (ENTRY)1, h, nv, Bt, nw, (ENTRY)1, acc, nv);
        }
        for (int64_t j = 0; j < keep; j++) {
            after[j] = FN(colnorm)(n, W + j * n);
            if (after[j] <= (REAL)drop * orig[j]) memset(W + j * n, 0, sizeof(ENTRY) * (size_t)n);
        }
        int64_t kept = 0;
        st = FN(svqb)(n, W, keep, drop, T, &kept, work, theta);
        if (st != SLA_OK) break;
        /* Bt ← T·Bt (T: kept × keep of the leading rows, embedded in nw × nw) */
        for (int64_t j = 0; j < nw; j++)
            for (int64_t i = 0; i < nw; i++) {
                ENTRY s = 0;
                for (int64_t l = 0; i < kept && l < keep; l++) s += T[i + l * keep] * Bt[l + j * nw];
                tmp[i + j * nw] = s;
            }
        memcpy(Bt, tmp, sizeof(ENTRY) * (size_t)(nw * nw));
        keep = kept;
    }
    if (st == SLA_OK) st = FN(fill)(n, V, nv, W, keep, nw, state, h);
    if (st == SLA_OK && B) memcpy(B, Bt, sizeof(ENTRY) * (size_t)(nw * nw));
    sla_free(work);
    sla_free(re);
    return st;
}
