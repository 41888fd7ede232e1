/* Small dense kernels of the eigensolvers on column-major blocks: products with BLAS, the
 * symmetric eigensolver of the projected problems (LAPACK dsyevd), and the rank-revealing
 * orthonormalization of a block against a basis (projection twice + SVQB with dropping,
 * Stathopoulos & Wu 2002; Duersch, Shao, Yang & Gu 2018). */
#include <cblas.h>
#include <lapacke.h>
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

void eig_tn(int64_t n, int64_t a, int64_t b, const double *V, const double *W, double *H)
{
    if (a == 0 || b == 0) return;
    if (n == 0) { memset(H, 0, sizeof(double) * (size_t)(a * b)); return; }
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)a, (int)b, (int)n, 1.0, V, (int)n,
                W, (int)n, 0.0, H, (int)a);
}

void eig_nn(int64_t n, int64_t a, int64_t b, double alpha, const double *V, const double *H,
            int64_t ldh, double *W)
{
    if (a == 0 || b == 0 || n == 0) return;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)b, (int)a, alpha, V,
                (int)n, H, (int)ldh, 1.0, W, (int)n);
}

sla_status eig_syev(int64_t m, double *G, double *w)
{
    if (m == 0) return SLA_OK;
    for (int64_t i = 0; i < m * m; i++)
        if (!isfinite(G[i]))
            return SLA_FAIL(SLA_EBREAKDOWN, "the projected %lld × %lld eigenproblem has a "
                            "non-finite entry", (long long)m, (long long)m);
    lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', (lapack_int)m, G, (lapack_int)m, w);
    if (info != 0)
        return SLA_FAIL(info < 0 ? SLA_EINTERNAL : SLA_EBREAKDOWN,
                        "LAPACK dsyevd on the projected %lld × %lld problem returned info = %d",
                        (long long)m, (long long)m, (int)info);
    return SLA_OK;
}

static double norm2(const double *x, int64_t n)
{
    return n ? cblas_dnrm2((int)n, x, 1) : 0.0;
}

/* W ← W − V (Vᵀ W); C += Vᵀ W if C (nv × nw) is given. */
static void project(int64_t n, const double *V, int64_t nv, double *W, int64_t nw, double *h)
{
    if (nv == 0 || nw == 0) return;
    eig_tn(n, nv, nw, V, W, h);
    eig_nn(n, nv, nw, -1.0, V, h, nv, W);
}

/* One SVQB pass on the nw columns of W (already projected): W ← W·D·U·Θ^(-1/2) over the kept
 * directions; returns the kept count and, in T (nw × nw), the map W_in = W_out·T (rows of
 * dropped directions zero). Directions with Θ ≤ drop²·max(Θ) are numerical noise. */
static sla_status svqb(int64_t n, double *W, int64_t nw, double drop, double *T, int64_t *nkept,
                       double *work /* 2·nw² + 4·nw + n·nw */)
{
    double *G = work, *theta = G + nw * nw, *Wt = theta + nw, *Tt = Wt + n * nw;
    eig_tn(n, nw, nw, W, W, G);
    double *d = Tt + nw * nw;   /* nw */
    for (int64_t i = 0; i < nw; i++) {
        double g = G[i + i * nw];
        d[i] = g > 0 ? 1.0 / sqrt(g) : 0.0;
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
        if (!(tmax > 0) || theta[l] <= drop * drop * tmax) break;
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

sla_status eig_orth(int64_t n, const double *V, int64_t nv, double *W, int64_t nw, double drop,
                    int fill, uint64_t *state, double *B, int64_t *nkept)
{
    *nkept = 0;
    if (nw == 0) return SLA_OK;
    int64_t nh = (nv > nw ? nv : nw) * nw;
    double *work = sla_malloc((size_t)(2 * nw * nw + 4 * nw + n * nw), sizeof(double), "SVQB workspace");
    double *h = sla_malloc((size_t)nh, sizeof(double), "projection coefficients");
    double *T = sla_malloc((size_t)(nw * nw), sizeof(double), "SVQB map");
    double *Tx = sla_malloc((size_t)(2 * nw * nw), sizeof(double), "SVQB map");
    double *orig = sla_malloc((size_t)nw, sizeof(double), "column norms");
    sla_status st = (work && h && T && Tx && orig) ? SLA_OK : SLA_ENOMEM;
    if (B && st == SLA_OK) {
        memset(B, 0, sizeof(double) * (size_t)(nw * nw));
        for (int64_t i = 0; i < nw; i++) B[i + i * nw] = 1.0;
    }
    int64_t keep = nw;
    for (int pass = 0; pass < 2 && st == SLA_OK && keep > 0; pass++) {
        for (int64_t j = 0; j < keep; j++) orig[j] = norm2(W + j * n, n);
        project(n, V, nv, W, keep, h);
        project(n, V, nv, W, keep, h);
        /* directions that were (almost) inside span(V): zero them so SVQB drops them */
        for (int64_t j = 0; j < keep; j++)
            if (norm2(W + j * n, n) <= drop * orig[j])
                memset(W + j * n, 0, sizeof(double) * (size_t)n);
        int64_t kept = 0;
        st = svqb(n, W, keep, drop, T, &kept, work);
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
        for (int64_t j = keep; j < nw && st == SLA_OK; j++) {
            for (int tries = 0;; tries++) {
                eig_random(W + j * n, n, state);
                double before = norm2(W + j * n, n);
                for (int pass = 0; pass < 2; pass++) {
                    project(n, V, nv, W + j * n, 1, h);
                    project(n, W, j, W + j * n, 1, h);
                }
                double after = norm2(W + j * n, n);
                if (after > 1e-3 * before) {
                    cblas_dscal((int)n, 1.0 / after, W + j * n, 1);
                    break;
                }
                if (tries == 9) {
                    st = SLA_FAIL(SLA_EBREAKDOWN, "no direction left orthogonal to the basis "
                                  "(%lld columns in %lld dimensions)", (long long)(nv + j),
                                  (long long)n);
                    break;
                }
            }
            if (B) for (int64_t c = 0; c < nw; c++) B[j + c * nw] = 0.0;
        }
        if (st == SLA_OK) keep = nw;
    }
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
    int64_t nv = v0 ? (nv0 < m ? nv0 : m) : 0;
    if (nv) memcpy(X, v0, sizeof(double) * (size_t)(n * nv));
    eig_random(X + nv * n, n * (m - nv), state);
    int64_t kept;
    /* dependent columns of v0 are replaced by random ones */
    return eig_orth(n, NULL, 0, X, m, 1e-10, 1, state, NULL, &kept);
}
