/* sla_eigsh_vjp and sla_eigsh_generalized_vjp for complex Hermitian A (and M): the real VJP on
 * the real form K (realify.c) with the eigenpairs of K that the complex ones stand for, then
 * the chain rule back to A's entries in PyTorch's convention.
 *  - Eigenpair (λ_i, v_i) of A is the pair (λ_i, R(v_i)), (λ_i, R(i v_i)) of K, an exact tie.
 *  - The eigenvalue cotangent gλ_i is split evenly over the two copies (λ_i is their mean),
 *    the eigenvector cotangent g_i (∂L/∂Re v + i ∂L/∂Im v) is R(g_i) on R(v_i) and zero on
 *    R(i v_i): the real cotangent of the real function u ↦ L(C(u)).
 *  - A loss of an eigenvector is defined only if it does not depend on its phase (v is an
 *    eigenvector up to e^{iφ}): d/dφ L(e^{iφ}v) = Im(v_iᴴ g_i) must vanish. That is exactly the
 *    real VJP's condition for the tie of the pair (R(iv)ᵀR(g) = Im vᴴg), under which the pair
 *    contributes nothing; it is checked here first (clear message, as torch.linalg.eigh's
 *    backward raises), and the rounding-size remainder is projected out.
 *  - dK at the four slots (2r + u, 2c + w) of the block [[a, −b], [b, a]] of entry a + ib gives
 *    ∂L/∂a + i ∂L/∂b = (g₀₀ + g₁₁) + i (g₁₀ − g₀₁). For the eigenvalue term this is
 *    gλ_i·v_i[r]·conj(v_i[c]): ∂λ/∂A = v vᴴ on the pattern, the conjugate Wirtinger gradient. */
#include "core/cmplx.h"
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

static sla_status check_args(const char *api, const sla_matrix *A, const sla_matrix *M, int64_t k,
                             const void *lam, const void *V, const void *glam, const void *gV,
                             const void *dA, const void *dM)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    if (sla_pattern_ncols(A->pattern) != n)
        return SLA_FAIL_AS(api, SLA_ESHAPE, "A is %lld × %lld; eigsh needs a square matrix",
                           (long long)n, (long long)sla_pattern_ncols(A->pattern));
    SLA_CHECK_ARG_AS(api, k >= 1 && k <= n, "k = %lld is not in [1, n] = [1, %lld]", (long long)k,
                     (long long)n);
    SLA_CHECK_ARG_AS(api, lam && V, "%s is NULL (the outputs of sla_eigsh are needed)",
                     lam ? "eigenvectors" : "eigenvalues");
    SLA_CHECK_ARG_AS(api, M || dA || nnz == 0, "dvalues is NULL");
    sla_dtype dt = A->dtype, rdt = sla_dtype_real(dt);
    size_t es = sla_dtype_size(dt), rs = sla_dtype_size(rdt), nb = (size_t)A->batch;
    int64_t nk = A->batch * n * k, nnzm = M ? sla_pattern_nnz(M->pattern) : 0, bad;
    const sla_buf out[] = {
        {M ? "dA" : "dvalues", dA, nb * (size_t)nnz * es},
        {"dM", dM, M ? (size_t)(M->batch * nnzm) * es : 0}};
    const sla_buf in[] = {
        {"A's values", A->values, nb * (size_t)nnz * es},
        {"M's values", M ? M->values : NULL, M ? (size_t)(M->batch * nnzm) * es : 0},
        {"eigenvalues", lam, nb * (size_t)k * rs},
        {"eigenvectors", V, (size_t)nk * es},
        {"g_eigenvalues", glam, nb * (size_t)k * rs},
        {"g_eigenvectors", gV, (size_t)nk * es}};
    SLA_TRY(sla_check_aliasing(api, out, 2, in, 6));
    if (!sla_all_finite(rdt, lam, A->batch * k, &bad))
        return SLA_FAIL_AS(api, SLA_ENONFINITE, "eigenvalues[%lld] is not finite", (long long)bad);
    if (!sla_all_finite(dt, V, nk, &bad))
        return SLA_FAIL_AS(api, SLA_ENONFINITE, "eigenvectors entry %lld is not finite",
                           (long long)bad);
    if (glam && !sla_all_finite(rdt, glam, A->batch * k, &bad))
        return SLA_FAIL_AS(api, SLA_ENONFINITE, "g_eigenvalues[%lld] is not finite",
                           (long long)bad);
    if (gV && !sla_all_finite(dt, gV, nk, &bad))
        return SLA_FAIL_AS(api, SLA_ENONFINITE, "g_eigenvectors entry %lld is not finite",
                           (long long)bad);
    return SLA_OK;
}

static double rget(sla_dtype rdt, const void *x, int64_t q)
{
    return rdt == SLA_FLOAT64 ? ((const double *)x)[q] : (double)((const float *)x)[q];
}

static void rset(sla_dtype rdt, void *x, int64_t q, double v)
{
    if (rdt == SLA_FLOAT64) ((double *)x)[q] = v;
    else ((float *)x)[q] = (float)v;
}

/* The phase test of eigenvector cotangent i of batch element b and the cleaned cotangent
 * g − i v·Im(vᴴg)/‖v‖² into gc (n). */
static sla_status phase_check(const char *api, sla_dtype dt, int64_t n, int64_t k, int64_t b,
                              int64_t i, const void *V, const void *gV, double complex *gc)
{
    double complex c = 0;
    double gg = 0, vv = 0;
    for (int64_t r = 0; r < n; r++) {
        double complex v = eig_centry(dt, V, (b * n + r) * k + i);
        double complex g = eig_centry(dt, gV, (b * n + r) * k + i);
        gc[r] = g;
        c += conj(v) * g;
        gg += creal(g) * creal(g) + cimag(g) * cimag(g);
        vv += creal(v) * creal(v) + cimag(v) * cimag(v);
    }
    double tie = dt == SLA_COMPLEX128 ? SLA_EIG_DEGENERATE : SLA_EIG_DEGENERATE_F32;
    if (fabs(cimag(c)) > tie * sqrt(gg * vv))
        return SLA_FAIL_AS(api, SLA_EINVAL, "the loss depends on the phase of eigenvector %lld "
                           "(batch %lld): Im(v_iᴴ g_i) = %.3g, relative %.3g > %g; eigenvectors "
                           "of a Hermitian matrix are defined only up to a factor e^{iφ}, so "
                           "only phase-invariant losses (|v|², v vᴴ, …) have a gradient",
                           (long long)i, (long long)b, cimag(c), fabs(cimag(c)) / sqrt(gg * vv),
                           tie);
    double complex d = vv > 0 ? I * cimag(c) / vv : 0;
    for (int64_t r = 0; r < n; r++) gc[r] -= d * eig_centry(dt, V, (b * n + r) * k + i);
    return SLA_OK;
}

/* The real-form eigenpairs and cotangents (dtype rdt): lam2 [batch][2k], U, G2 [batch][2n][2k]
 * (G2 NULL without gV), glam2 [batch][2k] (NULL without glam). */
static sla_status real_inputs(const char *api, const sla_matrix *A, int64_t k, const void *lam,
                              const void *V, const void *glam, const void *gV, void *lam2,
                              void *U, void *glam2, void *G2, double complex *gc)
{
    sla_dtype dt = A->dtype, rdt = sla_dtype_real(dt);
    int64_t n = sla_pattern_nrows(A->pattern), k2 = 2 * k;
    for (int64_t b = 0; b < A->batch; b++)
        for (int64_t i = 0; i < k; i++) {
            for (int u = 0; u < 2; u++) {
                rset(rdt, lam2, b * k2 + 2 * i + u, rget(rdt, lam, b * k + i));
                if (glam2) rset(rdt, glam2, b * k2 + 2 * i + u, 0.5 * rget(rdt, glam, b * k + i));
            }
            if (G2) SLA_TRY(phase_check(api, dt, n, k, b, i, V, gV, gc));
            for (int64_t r = 0; r < n; r++) {
                double complex v = eig_centry(dt, V, (b * n + r) * k + i);
                int64_t q0 = (b * 2 * n + 2 * r) * k2 + 2 * i, q1 = q0 + k2;
                rset(rdt, U, q0, creal(v));
                rset(rdt, U, q1, cimag(v));
                rset(rdt, U, q0 + 1, -cimag(v));
                rset(rdt, U, q1 + 1, creal(v));
                if (!G2) continue;
                rset(rdt, G2, q0, creal(gc[r]));
                rset(rdt, G2, q1, cimag(gc[r]));
                rset(rdt, G2, q0 + 1, 0.0);
                rset(rdt, G2, q1 + 1, 0.0);
            }
        }
    return SLA_OK;
}

/* dA[b][s] = (g₀₀ + g₁₁) + i (g₁₀ − g₀₁) from the real form's gradient dK (dtype rdt). */
static void chain_back(const sla_matrix *X, int64_t batch, const void *dK, void *dX)
{
    sla_dtype dt = X->dtype, rdt = sla_dtype_real(dt);
    const int64_t *rp = sla_pattern_rowptr(X->pattern);
    int64_t n = sla_pattern_nrows(X->pattern), nnz = sla_pattern_nnz(X->pattern), nk = 4 * nnz;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t r = 0; r < n; r++)
            for (int64_t s = rp[r]; s < rp[r + 1]; s++) {
                double g[2][2];
                for (int u = 0; u < 2; u++)
                    for (int w = 0; w < 2; w++)
                        g[u][w] = rget(rdt, dK, b * nk + eig_real_slot(rp, r, s, u, w));
                eig_cstore(dt, dX, b * nnz + s, CMPLX(g[0][0] + g[1][1], g[1][0] - g[0][1]));
            }
}

sla_status eig_hermitian_vjp(const char *api, const sla_matrix *A, const sla_matrix *M, int64_t k,
                             const void *eigenvalues, const void *eigenvectors,
                             const void *g_eigenvalues, const void *g_eigenvectors, void *dA,
                             void *dM)
{
    SLA_TRY(check_args(api, A, M, k, eigenvalues, eigenvectors, g_eigenvalues, g_eigenvectors,
                       dA, dM));
    sla_dtype rdt = sla_dtype_real(A->dtype);
    size_t rs = sla_dtype_size(rdt);
    int64_t n = sla_pattern_nrows(A->pattern), k2 = 2 * k, nb = A->batch;
    int64_t nnz = sla_pattern_nnz(A->pattern), nnzm = M ? sla_pattern_nnz(M->pattern) : 0;
    eig_real_form K = {0}, KM = {0};
    void *lam2 = sla_malloc((size_t)(nb * k2), rs, "real eigenvalues");
    void *U = sla_malloc((size_t)(nb * 2 * n * k2), rs, "real eigenvectors");
    void *glam2 = g_eigenvalues ? sla_malloc((size_t)(nb * k2), rs, "real cotangents") : NULL;
    void *G2 = g_eigenvectors ? sla_malloc((size_t)(nb * 2 * n * k2), rs, "real cotangents") : NULL;
    double complex *gc = sla_malloc((size_t)n, sizeof(double complex), "cotangent");
    void *dK = sla_malloc((size_t)(nb * 4 * nnz), rs, "real form gradient");
    void *dKM = M ? sla_malloc((size_t)(M->batch * 4 * nnzm), rs, "real form gradient") : NULL;
    sla_status st = lam2 && U && gc && dK && (!g_eigenvalues || glam2) &&
                    (!g_eigenvectors || G2) && (!M || dKM) ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK)
        st = real_inputs(api, A, k, eigenvalues, eigenvectors, g_eigenvalues, g_eigenvectors,
                         lam2, U, glam2, G2, gc);
    if (st == SLA_OK) st = eig_real_form_init(A, &K);
    if (st == SLA_OK && M) st = eig_real_form_init(M, &KM);
    if (st == SLA_OK) {
        st = M ? sla_eigsh_generalized_vjp(&K.K, &KM.K, k2, lam2, U, glam2, G2, dK, dKM)
               : sla_eigsh_vjp(&K.K, k2, lam2, U, glam2, G2, dK);
        if (st < 0)
            st = sla_error_wrap(st, api, "on the real 2n × 2n form of the %s A (eigenpairs 2i, "
                                "2i + 1 there are eigenpair i here)", sla_dtype_name(A->dtype));
    }
    if (st == SLA_OK && dA) chain_back(A, nb, dK, dA);
    if (st == SLA_OK && M && dM) chain_back(M, M->batch, dKM, dM);
    eig_real_form_free(&K);
    eig_real_form_free(&KM);
    sla_free(lam2);
    sla_free(U);
    sla_free(glam2);
    sla_free(G2);
    sla_free(gc);
    sla_free(dK);
    sla_free(dKM);
    return st;
}
