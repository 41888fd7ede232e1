/* sla_eigsh for complex Hermitian A (complex128, complex64): real eigenvalues, complex
 * eigenvectors. The eigensolver runs unchanged on the real symmetric form K of A (realify.c),
 * whose spectrum is A's with every eigenvalue twice (eigenvectors R(v) and R(iv)): 2k
 * eigenpairs of K with every method, shift and option of the real path (the shift-invert
 * factorizations are of K − σI). The 2k real eigenvectors are then collapsed into k complex
 * ones: their complex images W = C(U) span the computed invariant subspace of A (complex
 * dimension k), taken as the k dominant eigenvectors of the Gram matrix WᴴMW (a pair u, Ju
 * gives w and iw: Gram eigenvalues 2 and 0), followed by a complex Rayleigh–Ritz step on that
 * subspace (LAPACK zhbevd, eig_heev_c128). Residuals are recomputed with A (K R(v) = R(A v)). */
#include <cblas.h>
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eig/eig_internal.h"

/* The facts of one complex call. */
typedef struct herm {
    const sla_matrix *A, *M;
    int64_t n, k, batch;
    eig_real_form K, KM;        /* KM: M's form (has_M) */
    int has_M;
    double *normA, *normM;      /* [batch] ‖A_b‖₁, ‖M_b‖₁ (moduli) */
    double tol;
} herm;

/* The first entry with |a_ij − conj(a_ji)| > rtol·max(|a_ij|, |a_ji|), for the message. */
static sla_status hermitian_error(const char *name, const sla_matrix *X, double rtol)
{
    const int64_t *rp = sla_pattern_rowptr(X->pattern);
    const int32_t *ci = sla_pattern_colind(X->pattern);
    int64_t n = sla_pattern_nrows(X->pattern), nnz = sla_pattern_nnz(X->pattern);
    int sym = 0;
    SLA_TRY(sla_matrix_is_symmetric(X, rtol, 0, &sym));
    const char *hint = sym ? "; it is complex symmetric (Aᵀ = A), whose eigenvalues are complex: "
                             "eigsh needs A = Aᴴ" : " (eigsh needs a Hermitian matrix, A = Aᴴ)";
    for (int64_t b = 0; b < X->batch; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                int64_t t = sla_pattern_find(X->pattern, ci[s], i);
                double complex a = eig_centry(X->dtype, X->values, b * nnz + s);
                double complex at = t >= 0 ? conj(eig_centry(X->dtype, X->values, b * nnz + t)) : 0;
                if (cabs(a - at) > rtol * fmax(cabs(a), cabs(at)))
                    return EIG_FAIL(SLA_EINVAL, "%s is not Hermitian: batch %lld, %s[%lld][%d] = "
                                    "%.17g%+.17gi but conj(%s[%d][%lld]) = %.17g%+.17gi%s", name,
                                    (long long)b, name, (long long)i, ci[s], creal(a), cimag(a),
                                    name, ci[s], (long long)i, creal(at), cimag(at), hint);
            }
    return EIG_FAIL(SLA_EINVAL, "%s is not Hermitian%s", name, hint);
}

static sla_status check_hermitian(const char *name, const sla_matrix *X)
{
    double rtol = X->dtype == SLA_COMPLEX128 ? 1e-10 : 1e-5;
    int h = 0;
    SLA_TRY(sla_matrix_is_hermitian(X, rtol, 0, &h));
    return h ? SLA_OK : hermitian_error(name, X, rtol);
}

static sla_status check_args(const sla_matrix *A, int64_t k, const sla_eigsh_options *o,
                             const void *eigenvalues, const void *eigenvectors)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    if (sla_pattern_ncols(A->pattern) != n)
        return EIG_FAIL(SLA_ESHAPE, "A is %lld × %lld; eigsh needs a square matrix", (long long)n,
                        (long long)sla_pattern_ncols(A->pattern));
    EIG_CHECK_ARG(k >= 1 && k <= n, "k = %lld is not in [1, n] = [1, %lld]", (long long)k, (long long)n);
    EIG_CHECK_ARG(eigenvalues, "eigenvalues is NULL");
    EIG_CHECK_ARG(!o->v0 || o->nv0 >= 1, "options.v0 is given but options.nv0 = %lld < 1",
                  (long long)o->nv0);
    if (o->precond || o->precond_solver)
        return EIG_FAIL(SLA_EUNSUPPORTED, "options.precond / options.precond_solver with a %s A: "
                        "LOBPCG preconditioners are real only (give none)",
                        sla_dtype_name(A->dtype));
    if (o->M) {
        SLA_TRY(sla_matrix_check_for("sla_eigsh", "options.M", o->M, 1 | SLA_CHECK_COMPLEX_OK));
        if (sla_pattern_nrows(o->M->pattern) != n || sla_pattern_ncols(o->M->pattern) != n)
            return EIG_FAIL(SLA_ESHAPE, "options.M is %lld × %lld but A is %lld × %lld: the mass "
                            "matrix must have A's size", (long long)sla_pattern_nrows(o->M->pattern),
                            (long long)sla_pattern_ncols(o->M->pattern), (long long)n, (long long)n);
        if (o->M->dtype != A->dtype)
            return EIG_FAIL(SLA_EDTYPE, "options.M is %s but A is %s: the mass matrix must have "
                            "A's dtype", sla_dtype_name(o->M->dtype), sla_dtype_name(A->dtype));
        EIG_CHECK_ARG(o->M->batch == 1 || o->M->batch == A->batch, "options.M has batch %lld; it "
                      "must be 1 or A's batch %lld", (long long)o->M->batch, (long long)A->batch);
    }
    size_t es = sla_dtype_size(A->dtype), rs = sla_dtype_size(sla_dtype_real(A->dtype));
    size_t nb = (size_t)A->batch;
    const sla_buf out[] = {
        {"eigenvalues", eigenvalues, nb * (size_t)k * rs},
        {"eigenvectors", eigenvectors, nb * (size_t)(n * k) * es},
        {"options.residuals", o->residuals, nb * (size_t)k * sizeof(double)}};
    const sla_buf in[] = {
        {"A's values", A->values, nb * (size_t)sla_pattern_nnz(A->pattern) * es},
        {"options.v0", o->v0, nb * (size_t)(n * o->nv0) * es},
        {"M's values", o->M ? o->M->values : NULL,
         o->M ? (size_t)o->M->batch * (size_t)sla_pattern_nnz(o->M->pattern) * es : 0}};
    SLA_TRY(sla_check_aliasing("sla_eigsh", out, 3, in, 3));
    int64_t bad;
    if (o->v0 && !sla_all_finite(A->dtype, o->v0, A->batch * n * o->nv0, &bad))
        return EIG_FAIL(SLA_ENONFINITE, "options.v0 entry %lld is not finite", (long long)bad);
    SLA_TRY(check_hermitian("A", A));
    if (o->M) SLA_TRY(check_hermitian("M", o->M));
    return SLA_OK;
}

/* The start block of the real form (float64) from m complex start vectors v0 (dtype dt,
 * [batch][n][m]): columns R(v_j), R(i v_j) of each, so that the block is closed under the
 * map J: R(z) ↦ R(iz) that commutes with K. A Krylov space (and LOBPCG's basis) grown from a
 * J-closed block stays J-closed: every real step then is one complex step, and both copies of
 * each eigenvalue converge together. */
static double *real_v0(const herm *h, sla_dtype dt, const void *v0, int64_t m)
{
    int64_t n = h->n, m2 = 2 * m;
    double *x = sla_malloc((size_t)(h->batch * 2 * n * m2), sizeof(double), "start block");
    if (!x) return NULL;
    for (int64_t b = 0; b < h->batch; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < m; j++) {
                double complex z = eig_centry(dt, v0, (b * n + i) * m + j);
                int64_t r0 = (b * 2 * n + 2 * i) * m2 + 2 * j, r1 = r0 + m2;
                x[r0] = creal(z);
                x[r1] = cimag(z);
                x[r0 + 1] = -cimag(z);
                x[r1 + 1] = creal(z);
            }
    return x;
}

/* m pseudo-random complex start vectors per batch element ([batch][n][m], deterministic). */
static double complex *random_v0(const herm *h, int64_t m)
{
    int64_t n = h->n;
    double complex *z = sla_malloc((size_t)(h->batch * n * m), sizeof(double complex), "start block");
    if (!z) return NULL;
    for (int64_t b = 0; b < h->batch; b++) {
        uint64_t state = eig_seed(b);
        eig_random((double *)(z + b * n * m), 2 * n * m, &state);
    }
    return z;
}

/* Scale factor of the tolerance handed to the real solve: its residuals (those of the complex
 * vectors, R being an isometry) are relative to ‖K‖₁, which is up to √2·‖A‖₁. */
static sla_status tol_factor(const herm *h, double *f)
{
    double *nk = sla_malloc((size_t)(2 * h->batch), sizeof(double), "norms");
    if (!nk) return SLA_ENOMEM;
    *f = 1.0;
    sla_status st = sla_matrix_norm(&h->K.Kd, '1', nk);
    for (int64_t b = 0; st == SLA_OK && b < h->batch; b++)
        if (nk[b] > 0 && h->normA[b] > 0) *f = fmin(*f, h->normA[b] / nk[b]);
    if (st == SLA_OK && h->has_M) {
        st = sla_matrix_norm(&h->KM.Kd, '1', nk);
        for (int64_t b = 0; st == SLA_OK && b < h->KM.batch; b++)
            if (nk[b] > 0 && h->normM[b] > 0) *f = fmin(*f, h->normM[b] / nk[b]);
    }
    sla_free(nk);
    return st;
}

/* Column j of V multiplied by the phase that makes its largest-magnitude entry real positive:
 * the complex counterpart of the real sign convention. Of entries within 1e-12 (relative) of the
 * largest magnitude, the first: the rotation changes magnitudes by rounding, so an exact-tie rule
 * could name another entry after it than before (a repeated eigenvalue's basis vectors, spread
 * evenly over a grid, have such near ties). */
void eig_fix_phase(int64_t n, double complex *v)
{
    double mx = 0;
    for (int64_t i = 0; i < n; i++) mx = fmax(mx, cabs(v[i]));
    if (!(mx > 0)) return;
    int64_t p = 0;
    while (cabs(v[p]) < (1 - 1e-12) * mx) p++;
    double a = cabs(v[p]);
    if (!(a > 0)) return;
    double complex ph = conj(v[p]) / a;
    for (int64_t i = 0; i < n; i++) v[i] *= ph;
    v[p] = a;
}

/* Workspace of collapse (complex blocks column-major n × 2k unless noted). */
typedef struct coll_ws {
    double complex *W, *MW, *G, *Q, *AQ, *S;
    double *theta, *real;       /* real: 4·n·2k doubles for the products through K */
} coll_ws;

/* M·Z (copy without M) for m columns of batch element b. */
static sla_status mass(const herm *h, int64_t b, int64_t m, const double complex *Z,
                       double complex *Y, double *work)
{
    if (!h->has_M) {
        memcpy(Y, Z, sizeof(double complex) * (size_t)(h->n * m));
        return SLA_OK;
    }
    return eig_real_form_apply(&h->KM, b, h->n, m, Z, Y, work);
}

/* k complex eigenpairs (lam ascending, V n × k column-major, res) of batch element b from the
 * 2k real ones U ([2n][2k] row-major float64). */
static sla_status collapse(const herm *h, int64_t b, const double *U, coll_ws *w, double *lam,
                           double complex *V, double *res)
{
    int64_t n = h->n, k = h->k, k2 = 2 * k;
    const double complex one = 1, zero = 0;
    eig_from_real_rows(n, k2, U, w->W);
    SLA_TRY(mass(h, b, k2, w->W, w->MW, w->real));
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)k2, (int)k2, (int)n, &one, w->W,
                (int)n, w->MW, (int)n, &zero, w->G, (int)k2);
    SLA_TRY(eig_heev_c128(k2, w->G, w->theta, "Gram matrix of the complex images"));
    /* the k dominant directions (Gram eigenvalues ≈ 2 for complete pairs) */
    double tmax = w->theta[k2 - 1];
    if (!(w->theta[k] > 1e-8 * tmax))
        return EIG_FAIL(SLA_EBREAKDOWN, "the 2k = %lld real eigenvectors span only a complex "
                        "subspace of dimension < k = %lld (Gram eigenvalue %.3g of %.3g, batch "
                        "%lld)", (long long)k2, (long long)k, w->theta[k], tmax, (long long)b);
    for (int64_t j = 0; j < k; j++) {
        double complex *y = w->G + (k + j) * k2;
        double s = 1.0 / sqrt(w->theta[k + j]);
        for (int64_t i = 0; i < k2; i++) y[i] *= s;
    }
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k, (int)k2, &one, w->W,
                (int)n, w->G + k * k2, (int)k2, &zero, w->Q, (int)n);
    /* Rayleigh–Ritz on span(Q), QᴴMQ = I */
    SLA_TRY(eig_real_form_apply(&h->K, b, n, k, w->Q, w->AQ, w->real));
    cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, (int)k, (int)k, (int)n, &one, w->Q,
                (int)n, w->AQ, (int)n, &zero, w->S, (int)k);
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i <= j; i++) {
            double complex s = 0.5 * (w->S[i + j * k] + conj(w->S[j + i * k]));
            w->S[i + j * k] = s;
            w->S[j + i * k] = conj(s);
        }
    SLA_TRY(eig_heev_c128(k, w->S, lam, "Rayleigh–Ritz matrix"));
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k, (int)k, &one, w->Q,
                (int)n, w->S, (int)k, &zero, V, (int)n);
    for (int64_t j = 0; j < k; j++) eig_fix_phase(n, V + j * n);
    /* true residuals with A (and M): W, MW reused as A·V, M·V */
    SLA_TRY(eig_real_form_apply(&h->K, b, n, k, V, w->W, w->real));
    SLA_TRY(mass(h, b, k, V, w->MW, w->real));
    for (int64_t j = 0; j < k; j++) {
        double r2 = 0, v2 = 0;
        for (int64_t i = 0; i < n; i++) {
            double complex d = w->W[i + j * n] - lam[j] * w->MW[i + j * n];
            r2 += creal(d) * creal(d) + cimag(d) * cimag(d);
            v2 += creal(V[i + j * n]) * creal(V[i + j * n]) + cimag(V[i + j * n]) * cimag(V[i + j * n]);
        }
        double mb = h->has_M ? h->normM[h->KM.batch == 1 ? 0 : b] : 0;
        double scale = h->has_M ? (h->normA[b] + fabs(lam[j]) * mb) * sqrt(v2) : h->normA[b];
        res[j] = sqrt(r2) / (scale > 0 ? scale : 1.0);
    }
    return SLA_OK;
}

/* Collapses every batch element and writes the outputs; *nconv_min, *maxres as in eigsh.c. */
static sla_status finish(const herm *h, const sla_eigsh_options *o, const double *vec2,
                         void *eigenvalues, void *eigenvectors, int64_t *nconv_min, double *maxres)
{
    int64_t n = h->n, k = h->k, k2 = 2 * k;
    sla_dtype dt = h->A->dtype, rdt = sla_dtype_real(dt);
    coll_ws w = {0};
    double *lam = sla_malloc((size_t)(2 * k), sizeof(double), "eigenvalues");
    double complex *V = sla_malloc((size_t)(n * k), sizeof(double complex), "eigenvectors");
    w.W = sla_malloc((size_t)(2 * n * k2 + k2 * k2 + 2 * n * k + k * k), sizeof(double complex),
                     "complex blocks");
    w.theta = sla_malloc((size_t)k2, sizeof(double), "Gram eigenvalues");
    w.real = sla_malloc((size_t)(4 * n * k2), sizeof(double), "real blocks");
    sla_status st = lam && V && w.W && w.theta && w.real ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        w.MW = w.W + n * k2;
        w.G = w.MW + n * k2;
        w.Q = w.G + k2 * k2;
        w.AQ = w.Q + n * k;
        w.S = w.AQ + n * k;
    }
    double *res = lam ? lam + k : NULL;
    *nconv_min = k;
    *maxres = 0;
    for (int64_t b = 0; st == SLA_OK && b < h->batch; b++) {
        st = collapse(h, b, (const double *)vec2 + b * 2 * n * k2, &w, lam, V, res);
        int64_t nc = 0;
        for (int64_t j = 0; st == SLA_OK && j < k; j++) {
            if (rdt == SLA_FLOAT64) ((double *)eigenvalues)[b * k + j] = lam[j];
            else ((float *)eigenvalues)[b * k + j] = (float)lam[j];
            for (int64_t i = 0; eigenvectors && i < n; i++)
                eig_cstore(dt, eigenvectors, (b * n + i) * k + j, V[i + j * n]);
            if (o->residuals) o->residuals[b * k + j] = res[j];
            if (res[j] <= h->tol) nc++;
            if (!(res[j] <= *maxres)) *maxres = res[j];
        }
        if (nc < *nconv_min) *nconv_min = nc;
    }
    sla_free(lam);
    sla_free(V);
    sla_free(w.W);
    sla_free(w.theta);
    sla_free(w.real);
    return st;
}

static void herm_free(herm *h)
{
    eig_real_form_free(&h->K);
    eig_real_form_free(&h->KM);
    sla_free(h->normA);
    sla_free(h->normM);
}

static sla_status herm_init(const sla_matrix *A, const sla_matrix *M, int64_t k, herm *h)
{
    memset(h, 0, sizeof *h);
    h->A = A;
    h->M = M;
    h->n = sla_pattern_nrows(A->pattern);
    h->k = k;
    h->batch = A->batch;
    h->has_M = M != NULL;
    h->normA = sla_malloc((size_t)A->batch, sizeof(double), "norms");
    h->normM = sla_malloc((size_t)(M ? M->batch : 1), sizeof(double), "norms");
    if (!h->normA || !h->normM) return SLA_ENOMEM;
    SLA_TRY(sla_matrix_norm(A, '1', h->normA));
    if (M) SLA_TRY(sla_matrix_norm(M, '1', h->normM));
    SLA_TRY(eig_real_form_init(A, &h->K));
    if (M) SLA_TRY(eig_real_form_init(M, &h->KM));
    return SLA_OK;
}

/* The complex default Lanczos/ARPACK basis (sizes.c's rule for n, k and block p), doubled for
 * the real form (the real default for 2k would be smaller: max(4k + 2, 20) real columns for
 * k complex pairs, measured 68 block steps against 26 on a 60² grid). 0 when it cannot fit. */
static int64_t real_ncv(int64_t n, int64_t k, int64_t p)
{
    int64_t ncv = 2 * k + 2 > 20 ? 2 * k + 2 : 20;
    if (ncv < k + p) ncv = k + p;
    if (ncv + p > n) ncv = n - p;
    return ncv >= k + p && ncv > k ? 2 * ncv : 0;
}

/* The options of the real run: sizes doubled (options given, else the complex defaults), the
 * tolerance scaled (tol_factor), a J-closed start block (real_v0; pseudo-random complex vectors
 * when none is given), the mass matrix in real form, no residual output (recomputed here). */
static sla_status real_options(herm *h, const sla_eigsh_options *o, sla_eigsh_options *ro,
                               double **v0)
{
    *ro = *o;
    double f;
    SLA_TRY(tol_factor(h, &f));
    ro->tol = h->tol * f;
    ro->residuals = NULL;
    eig_sizes sz;
    eig_default_sizes(h->n, h->k, &sz);
    if (o->block_size > 0) ro->block_size = 2 * o->block_size;
    ro->ncv = o->ncv > 0 ? 2 * o->ncv
                         : real_ncv(h->n, h->k, o->block_size > 0 ? o->block_size : sz.p);
    ro->M = h->has_M ? &h->KM.Kd : NULL;
    if (o->v0) {
        *v0 = real_v0(h, h->A->dtype, o->v0, o->nv0);
    } else {
        /* as many as the largest block a method may use (LOBPCG's) */
        int64_t m = o->block_size > sz.m ? o->block_size : sz.m;
        double complex *z = random_v0(h, m);
        *v0 = z ? real_v0(h, SLA_COMPLEX128, z, m) : NULL;
        sla_free(z);
        ro->nv0 = m;
    }
    if (!*v0) return SLA_ENOMEM;
    ro->v0 = *v0;
    ro->nv0 = 2 * (o->v0 ? o->nv0 : ro->nv0);
    return SLA_OK;
}

static void describe(const herm *h, const sla_eigsh_info *ri, sla_eigsh_info *info)
{
    char head[SLA_DESCRIPTION_LEN];
    snprintf(head, sizeof head, "%s Hermitian A as its real symmetric %lld × %lld form "
             "[[Re A, −Im A], [Im A, Re A]] (2k = %lld eigenpairs, collapsed by complex "
             "Rayleigh–Ritz)", sla_dtype_name(h->A->dtype), (long long)(2 * h->n),
             (long long)(2 * h->n), (long long)(2 * h->k));
    info->description[0] = '\0';
    sla_text_append(info->description, sizeof info->description, "", head);
    sla_text_append(info->description, sizeof info->description, ": ", ri->description);
}

sla_status eig_hermitian(const sla_matrix *A, int64_t k, const sla_eigsh_options *opt,
                         void *eigenvalues, void *eigenvectors, sla_eigsh_info *info)
{
    sla_eigsh_options o;
    if (opt) o = *opt;
    else sla_eigsh_options_init(&o);
    SLA_TRY(check_args(A, k, &o, eigenvalues, eigenvectors));
    /* the native complex kernels where they apply (hlanczos.c), else the real form */
    if (eig_hermitian_native_applies(A, k, &o))
        return eig_hermitian_native(A, k, &o, eigenvalues, eigenvectors, info);
    herm h;
    sla_status st = herm_init(A, o.M, k, &h);
    h.tol = o.tol == 0 ? 1e-14 : o.tol;
    sla_eigsh_options ro;
    double *v0 = NULL, *lam2 = NULL, *vec2 = NULL;
    if (st == SLA_OK) st = real_options(&h, &o, &ro, &v0);
    size_t rs = sizeof(double);
    if (st == SLA_OK) {
        lam2 = sla_malloc((size_t)(A->batch * 2 * k), rs, "real eigenvalues");
        vec2 = sla_malloc((size_t)(A->batch * 4 * h.n * k), rs, "real eigenvectors");
        if (!lam2 || !vec2) st = SLA_ENOMEM;
    }
    sla_eigsh_info ri;
    if (st == SLA_OK) {
        /* on the float64 form (complex64 too, as the real float32 path promotes to float64):
         * the outputs are float64 and rounded once, after the collapse */
        st = sla_eigsh(&h.K.Kd, 2 * k, &ro, lam2, vec2, &ri);
        if (st < 0) st = sla_error_wrap(st, "sla_eigsh", "on the real 2n × 2n form of the %s A "
                                        "(sizes and counts there are doubled)",
                                        sla_dtype_name(A->dtype));
    }
    int64_t nconv = 0;
    double maxres = 0;
    if (st >= 0) st = finish(&h, &o, vec2, eigenvalues, eigenvectors, &nconv, &maxres);
    if (st == SLA_OK && info) {
        *info = ri;
        info->which = o.which;
        info->converged = nconv;
        info->max_residual = maxres;
        info->spmv = ri.spmv + A->batch * (2 * k + (h.has_M ? 3 * k : 0));
        info->norm_A = info->norm_M = 0;
        for (int64_t b = 0; b < A->batch; b++) info->norm_A = fmax(info->norm_A, h.normA[b]);
        for (int64_t b = 0; h.has_M && b < o.M->batch; b++)
            info->norm_M = fmax(info->norm_M, h.normM[b]);
        describe(&h, &ri, info);
    }
    herm_free(&h);
    sla_free(v0);
    sla_free(lam2);
    sla_free(vec2);
    if (st < 0) return st;
    return eig_converged_status(nconv, k, o.M != NULL, maxres, h.tol);
}
