/* Small dense kernels of the eigensolvers on column-major blocks: products with BLAS, the
 * symmetric eigensolver of the projected problems (LAPACK dsyevd), and the rank-revealing
 * orthonormalization of a block against a basis, in the Euclidean or an M-inner product
 * (projection twice + SVQB with dropping,
 * Stathopoulos & Wu 2002; Duersch, Shao, Yang & Gu 2018). Every reduction over the n rows (Gram
 * products, norms) goes through the reduction hook R (eig_internal.h): NULL here, a distributed
 * space's reduce in a distributed eigensolver. */
#include <cblas.h>
#include <lapacke.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

uint64_t eig_seed(int64_t b)
{
    return 0x5EED5EEDull + 0x9E3779B97F4A7C15ull * (uint64_t)(b + 1);
}

/* splitmix64 → uniform [-1, 1): deterministic start vectors, independent of threads. */
void eig_random(double *x, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        x[i] = (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    }
}

/* the partial sums of this process's rows into the global ones */
static sla_status reduce(const sla_space *R, double *v, int64_t count)
{
    if (!R || !R->reduce || count == 0) return SLA_OK;
    return R->reduce(R, SLA_REDUCE_SUM, v, (int)count);
}

sla_status eig_tn_r(const sla_space *R, int64_t n, int64_t a, int64_t b, const double *V,
                    const double *W, double *H)
{
    if (a == 0 || b == 0) return SLA_OK;
    eig_gram_f64(n, a, b, V, W, H);             /* the real instance of t_blockops.h */
    return reduce(R, H, a * b);
}

void eig_tn(int64_t n, int64_t a, int64_t b, const double *V, const double *W, double *H)
{
    eig_tn_r(NULL, n, a, b, V, W, H);          /* cannot fail without a hook */
}

void eig_nn(int64_t n, int64_t a, int64_t b, double alpha, const double *V, const double *H,
            int64_t ldh, double *W)
{
    eig_comb_f64(n, a, b, alpha, V, H, ldh, W);
}

sla_status eig_syev(int64_t m, double *G, double *w)
{
    if (m == 0) return SLA_OK;
    for (int64_t i = 0; i < m * m; i++)
        if (!isfinite(G[i]))
            return EIG_FAIL(SLA_EBREAKDOWN, "the projected %lld × %lld eigenproblem has a "
                            "non-finite entry", (long long)m, (long long)m);
    return eig_heev_f64(m, G, w, "projected problem");
}

sla_status eig_mass_apply(const sla_matrix *Mb, int64_t n, int64_t m, const double *X, double *Y)
{
    if (!Mb) {
        memcpy(Y, X, sizeof(double) * (size_t)(n * m));
        return SLA_OK;
    }
    if (m == 1) return sla_spmv(SLA_OP_N, 1.0, Mb, X, 0, 1, 0.0, Y);
    /* one SpMV with m right-hand sides (one pass over M, one parallel region) on row-major
     * copies */
    double *xr = sla_malloc((size_t)(2 * n * m), sizeof(double), "row-major block");
    if (!xr) return SLA_ENOMEM;
    double *yr = xr + n * m;
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < n; i++) xr[i * m + j] = X[j * n + i];
    sla_status st = sla_spmv(SLA_OP_N, 1.0, Mb, xr, 0, m, 0.0, yr);
    for (int64_t j = 0; st == SLA_OK && j < m; j++)
        for (int64_t i = 0; i < n; i++) Y[j * n + i] = yr[i * m + j];
    sla_free(xr);
    return st;
}

sla_status eig_mass_do(const eig_mass *M, int64_t n, int64_t m, const double *X, double *Y)
{
    if (M && M->apply) return M->apply(M, n, m, X, Y);
    return eig_mass_apply(M ? M->Mb : NULL, n, m, X, Y);
}

/* The metric of eig_orth_m: Mb (NULL: Euclidean), a scratch block mw (n × nw) for M·W, and
 * Z = M·V when the caller keeps it (else NULL); R the reduction hook. */
typedef struct metric {
    const eig_mass *Mb;
    double *mw;
    const double *Z;
    const sla_space *R;
} metric;

/* nrm[j] = ‖column j‖₂ of the nw columns of W (dnrm2's scaled sum on one process; with a hook,
 * √ of the reduced sums of squares) */
static sla_status norms2(const metric *g, int64_t n, const double *W, int64_t nw, double *nrm)
{
    if (!g->R || !g->R->reduce) {
        for (int64_t j = 0; j < nw; j++) nrm[j] = n ? cblas_dnrm2((int)n, W + j * n, 1) : 0.0;
        return SLA_OK;
    }
    for (int64_t j = 0; j < nw; j++) nrm[j] = n ? cblas_ddot((int)n, W + j * n, 1, W + j * n, 1) : 0.0;
    SLA_TRY(reduce(g->R, nrm, nw));
    for (int64_t j = 0; j < nw; j++) nrm[j] = sqrt(nrm[j]);
    return SLA_OK;
}

/* The pointer to M·X for the m columns of X (X itself without M). */
static sla_status mtimes(const metric *g, int64_t n, int64_t m, const double *X, const double **MX)
{
    *MX = X;
    if (!g->Mb) return SLA_OK;
    SLA_TRY(eig_mass_do(g->Mb, n, m, X, g->mw));
    *MX = g->mw;
    return SLA_OK;
}

/* ‖x‖_M (‖x‖₂ without M). */
static sla_status mnorm(const metric *g, const double *x, int64_t n, double *nrm)
{
    const double *mx;
    SLA_TRY(mtimes(g, n, 1, x, &mx));
    if (!g->Mb) return norms2(g, n, x, 1, nrm);
    double d = n ? cblas_ddot((int)n, x, 1, mx, 1) : 0.0;
    SLA_TRY(reduce(g->R, &d, 1));
    *nrm = d > 0 ? sqrt(d) : 0.0;
    return SLA_OK;
}

/* W ← W − V (Vᵀ M W) with the projection coefficients in h (nv × nw); Z = M V (n × nv) when
 * known: then h = Zᵀ W costs no product with M. */
static sla_status project(const metric *g, int64_t n, const double *V, const double *Z, int64_t nv,
                          double *W, int64_t nw, double *h)
{
    if (nv == 0 || nw == 0) return SLA_OK;
    if (Z) {
        SLA_TRY(eig_tn_r(g->R, n, nv, nw, Z, W, h));
    } else {
        const double *mw;
        SLA_TRY(mtimes(g, n, nw, W, &mw));
        SLA_TRY(eig_tn_r(g->R, n, nv, nw, V, mw, h));
    }
    eig_nn(n, nv, nw, -1.0, V, h, nv, W);
    return SLA_OK;
}

/* One SVQB pass on the nw columns of W (already projected): W ← W·D·U·Θ^(-1/2) over the kept
 * directions, with the Gram matrix WᵀMW; returns the kept count and, in T (nw × nw), the map
 * W_in = W_out·T (rows of dropped directions zero). Directions with Θ ≤ drop²·max(Θ) are
 * numerical noise. */
static sla_status svqb(const metric *g, int64_t n, double *W, int64_t nw, double drop, double *T,
                       int64_t *nkept, const double *orig, double *work /* 2·nw² + 4·nw + n·nw */)
{
    double *G = work, *theta = G + nw * nw, *Wt = theta + nw, *Tt = Wt + n * nw;
    const double *mw;
    SLA_TRY(mtimes(g, n, nw, W, &mw));
    SLA_TRY(eig_tn_r(g->R, n, nw, nw, W, mw, G));
    /* with M, the test of eig_orth_m for directions inside span(V) reads the M-norms off the
     * Gram matrix (no extra product with M): such a column and its row and column of G are
     * zeroed, so that it is dropped */
    for (int64_t i = 0; orig && i < nw; i++) {
        if (sqrt(fmax(G[i + i * nw], 0.0)) > drop * orig[i]) continue;
        memset(W + i * n, 0, sizeof(double) * (size_t)n);
        for (int64_t j = 0; j < nw; j++) G[i + j * nw] = G[j + i * nw] = 0.0;
    }
    double *d = Tt + nw * nw;   /* nw */
    for (int64_t i = 0; i < nw; i++) {
        double gi = G[i + i * nw];
        d[i] = gi > 0 ? 1.0 / sqrt(gi) : 0.0;
    }
    for (int64_t j = 0; j < nw; j++)
        for (int64_t i = 0; i < nw; i++) G[i + j * nw] *= d[i] * d[j];
    SLA_TRY(eig_syev(nw, G, theta));
    double tmax = theta[nw - 1];
    int64_t keep = 0;
    /* eigenvalues ascending: keep the large ones, in descending order (most independent first) */
    memset(Tt, 0, sizeof(double) * (size_t)(nw * nw));
    memcpy(Wt, W, sizeof(double) * (size_t)(n * nw));
    memset(W, 0, sizeof(double) * (size_t)(n * nw));
    for (int64_t l = nw - 1; l >= 0; l--) {
        /* a Gram eigenvalue is known to ~ε·θ_max only (rounding in forming G): below that its
         * direction is noise, whatever drop asks (exact duplicate columns give θ ~ 1e-16·θ_max,
         * which drop² = 1e-20 would keep, as a non-orthonormal garbage column) */
        if (!(tmax > 0) || theta[l] <= fmax(drop * drop, 64 * DBL_EPSILON) * tmax) break;
        double s = 1.0 / sqrt(theta[l]);
        /* column keep of W = Wt · D · u_l · s */
        double *u = G + l * nw;
        double *coef = d + nw;  /* nw scratch after d */
        for (int64_t i = 0; i < nw; i++) coef[i] = d[i] * u[i] * s;
        eig_nn(n, nw, 1, 1.0, Wt, coef, nw, W + keep * n);
        /* W_in = W_out · T: row keep of T = sqrt(θ_l) · u_lᵀ · D⁻¹ */
        for (int64_t i = 0; i < nw; i++)
            Tt[keep + i * nw] = d[i] > 0 ? sqrt(theta[l]) * u[i] / d[i] : 0.0;
        keep++;
    }
    if (T) memcpy(T, Tt, sizeof(double) * (size_t)(nw * nw));
    *nkept = keep;
    return SLA_OK;
}

/* B ← T·B for nw × nw column-major matrices. */
static void left_mul(int64_t nw, const double *T, double *B, double *tmp)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)nw, (int)nw, (int)nw, 1.0, T,
                (int)nw, B, (int)nw, 0.0, tmp, (int)nw);
    memcpy(B, tmp, sizeof(double) * (size_t)(nw * nw));
}

/* Replaces the dropped columns keep..nw−1 of W by random directions M-orthogonal to V and the
 * columns before them, M-normalized (B's rows of those directions zeroed). */
static sla_status fill_random(const metric *g, int64_t n, const double *V, int64_t nv, double *W,
                              int64_t keep, int64_t nw, uint64_t *state, double *h, double *B)
{
    for (int64_t j = keep; j < nw; j++) {
        for (int tries = 0;; tries++) {
            eig_random(W + j * n, n, state);
            double before, after;
            SLA_TRY(mnorm(g, W + j * n, n, &before));
            for (int pass = 0; pass < 2; pass++) {
                SLA_TRY(project(g, n, V, g->Z, nv, W + j * n, 1, h));
                SLA_TRY(project(g, n, W, NULL, j, W + j * n, 1, h));
            }
            SLA_TRY(mnorm(g, W + j * n, n, &after));
            if (after > 1e-3 * before) {
                cblas_dscal((int)n, 1.0 / after, W + j * n, 1);
                break;
            }
            if (tries == 9)
                return EIG_FAIL(SLA_EBREAKDOWN, "no direction left orthogonal to the basis "
                                "(%lld columns in %lld dimensions)", (long long)(nv + j),
                                (long long)n);
        }
        if (B) for (int64_t c = 0; c < nw; c++) B[j + c * nw] = 0.0;
    }
    return SLA_OK;
}

sla_status eig_orth(int64_t n, const double *V, int64_t nv, double *W, int64_t nw, double drop,
                    int fill, uint64_t *state, double *B, int64_t *nkept)
{
    return eig_orth_m(n, NULL, V, NULL, nv, W, nw, drop, fill, state, B, nkept);
}

/* M-norms of the nw columns of W: one product with M for the block. */
static sla_status mnorms(const metric *g, int64_t n, const double *W, int64_t nw, double *nrm)
{
    const double *mw;
    SLA_TRY(mtimes(g, n, nw, W, &mw));
    for (int64_t j = 0; j < nw; j++) nrm[j] = n ? cblas_ddot((int)n, W + j * n, 1, mw + j * n, 1) : 0.0;
    SLA_TRY(reduce(g->R, nrm, nw));
    for (int64_t j = 0; j < nw; j++) nrm[j] = nrm[j] > 0 ? sqrt(nrm[j]) : 0.0;
    return SLA_OK;
}

sla_status eig_orth_m(int64_t n, const sla_matrix *Mb, const double *V, const double *Z, int64_t nv,
                      double *W, int64_t nw, double drop, int fill, uint64_t *state, double *B,
                      int64_t *nkept)
{
    eig_mass M = {Mb, NULL, NULL, 0};
    return eig_orth_mr(NULL, n, Mb ? &M : NULL, V, Z, nv, W, nw, drop, fill, state, B, nkept);
}

sla_status eig_orth_mr(const sla_space *R, int64_t n, const eig_mass *Mb, const double *V,
                       const double *Z, int64_t nv, double *W, int64_t nw, double drop, int fill,
                       uint64_t *state, double *B, int64_t *nkept)
{
    *nkept = 0;
    if (nw == 0) return SLA_OK;
    int64_t nh = (nv > nw ? nv : nw) * nw;
    double *work = sla_malloc((size_t)(2 * nw * nw + 4 * nw + n * nw), sizeof(double), "SVQB workspace");
    double *h = sla_malloc((size_t)nh, sizeof(double), "projection coefficients");
    double *T = sla_malloc((size_t)(nw * nw), sizeof(double), "SVQB map");
    double *Tx = sla_malloc((size_t)(2 * nw * nw), sizeof(double), "SVQB map");
    double *orig = sla_malloc((size_t)(2 * nw), sizeof(double), "column norms");
    double *after = orig ? orig + nw : NULL;
    metric g = {Mb, Mb ? sla_malloc((size_t)(n * nw), sizeof(double), "M times block") : NULL,
                Mb ? Z : NULL, R};
    sla_status st = (work && h && T && Tx && orig && (!Mb || g.mw)) ? SLA_OK : SLA_ENOMEM;
    if (B && st == SLA_OK) {
        memset(B, 0, sizeof(double) * (size_t)(nw * nw));
        for (int64_t i = 0; i < nw; i++) B[i + i * nw] = 1.0;
    }
    int64_t keep = nw;
    for (int pass = 0; pass < 2 && st == SLA_OK && keep > 0; pass++) {
        if (!Mb) {
            st = norms2(&g, n, W, keep, orig);
        } else if (pass == 0) {
            st = mnorms(&g, n, W, keep, orig);
        } else {
            /* the kept columns of the first pass are M-orthonormal */
            for (int64_t j = 0; j < keep; j++) orig[j] = 1.0;
        }
        if (st == SLA_OK) st = project(&g, n, V, g.Z, nv, W, keep, h);
        if (st == SLA_OK) st = project(&g, n, V, g.Z, nv, W, keep, h);
        /* directions that were (almost) inside span(V): zero them so SVQB drops them (with M
         * the test is inside svqb, on its Gram matrix) */
        /* (the norms of all columns at once: one reduction with a hook, the same dnrm2 per
         * column without) */
        if (st == SLA_OK && !Mb) st = norms2(&g, n, W, keep, after);
        for (int64_t j = 0; j < keep && st == SLA_OK && !Mb; j++)
            if (after[j] <= drop * orig[j]) memset(W + j * n, 0, sizeof(double) * (size_t)n);
        int64_t kept = 0;
        if (st == SLA_OK) st = svqb(&g, n, W, keep, drop, T, &kept, Mb ? orig : NULL, work);
        if (st == SLA_OK && B) {
            /* this pass maps its keep inputs to kept outputs: B ← T·B (T embedded in nw × nw) */
            memset(Tx, 0, sizeof(double) * (size_t)(nw * nw));
            for (int64_t j = 0; j < keep; j++)
                for (int64_t i = 0; i < kept; i++) Tx[i + j * nw] = T[i + j * keep];
            left_mul(nw, Tx, B, Tx + nw * nw);
        }
        keep = kept;
    }
    if (st == SLA_OK && fill) {
        /* replace the dropped directions by random ones orthogonal to V and the kept columns */
        st = fill_random(&g, n, V, nv, W, keep, nw, state, h, B);
        if (st == SLA_OK) keep = nw;
    }
    sla_free(g.mw);
    sla_free(orig);
    sla_free(Tx);
    sla_free(T);
    sla_free(h);
    sla_free(work);
    *nkept = keep;
    return st;
}

sla_status eig_start_block(int64_t n, int64_t m, const double *v0, int64_t nv0, double *X,
                           uint64_t *state)
{
    return eig_start_block_m(n, NULL, m, v0, nv0, X, state);
}

sla_status eig_start_block_m(int64_t n, const sla_matrix *Mb, int64_t m, const double *v0,
                             int64_t nv0, double *X, uint64_t *state)
{
    eig_mass M = {Mb, NULL, NULL, 0};
    return eig_start_block_mr(NULL, n, Mb ? &M : NULL, m, v0, nv0, X, state, NULL, n);
}

/* eig_random's stream at positions j·N + global[i] for the ncols columns of X (n × ncols),
 * state advanced past ncols·N numbers: a distributed block holds the rows of the serial one. */
static void random_rows(double *X, int64_t n, int64_t ncols, const int64_t *global, int64_t N,
                        uint64_t *state)
{
    if (!global) {
        eig_random(X, n * ncols, state);
        return;
    }
    for (int64_t j = 0; j < ncols; j++)
        for (int64_t i = 0; i < n; i++) {
            uint64_t z = *state + 0x9E3779B97F4A7C15ull * (uint64_t)(j * N + global[i] + 1);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            X[j * n + i] = (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        }
    *state += 0x9E3779B97F4A7C15ull * (uint64_t)(ncols * N);
}

sla_status eig_start_block_mr(const sla_space *R, int64_t n, const eig_mass *Mb, int64_t m,
                              const double *v0, int64_t nv0, double *X, uint64_t *state,
                              const int64_t *global, int64_t N)
{
    int64_t nv = v0 ? (nv0 < m ? nv0 : m) : 0;
    if (nv) memcpy(X, v0, sizeof(double) * (size_t)(n * nv));
    random_rows(X + nv * n, n, m - nv, global, N, state);
    int64_t kept;
    /* dependent columns of v0 are replaced by random ones */
    return eig_orth_mr(R, n, Mb, NULL, NULL, 0, X, m, 1e-10, 1, state, NULL, &kept);
}
