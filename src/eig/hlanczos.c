/* Native complex Hermitian shift-invert: block thick-restart Lanczos (Krylov–Schur restart, full
 * reorthogonalization; Wu & Simon 2000, Stewart 2001) in complex arithmetic on
 * OP = (sgn·(A − σI))⁻¹, factored through sla_solver_create: CHOLMOD complex Cholesky for a
 * Hermitian positive definite sgn·(A − σI), which also proves the shift outside the spectrum;
 * for an indefinite one (σ inside the spectrum) by default the real 2n × 2n form K − σI of
 * realify.c, whose symmetric LDLᵀ (method auto: MUMPS) is faster than the complex LU that is
 * the only complex choice (no library factors a Hermitian indefinite matrix as LDLᴴ; zmumps
 * SYM = 2 is complex symmetric): (K − σI)⁻¹R(z) = R((A − σI)⁻¹z), one real solve per complex
 * vector, the iteration stays complex. With options.factor_options the complex A − σI is
 * factored as asked (UMFPACK complex LU for method lu).
 * The recurrence is the real one of lanczos.c with conjugated inner products: OP V = V H + R E,
 * H = Vᴴ OP V Hermitian (real Ritz values θ, λ = σ + sgn/θ), the Ritz residual ‖OP x − θ x‖ =
 * ‖E y‖. The block kernels (Gram products, SVQB, the small Hermitian eigensolver) are the c128
 * instance of t_blockops.h. Against the real 2n × 2n form (hermitian.c) every eigenvalue is
 * found once instead of twice: half the basis, half the solves' right-hand sides, and a complex
 * n × n factorization instead of a real 2n × 2n one.
 * The multiplicity rule of sla_eigsh holds here too (hl_certify): c ≥ p copies of one eigenvalue
 * are confirmed by a further run with block c + 1, else the call reports not converged.
 * Batch elements run one after the other, each with its own factorization. Not handled here
 * (eig_hermitian falls back to the real form): a mass matrix, LM without σ, explicit methods
 * other than lanczos, and small n (auto's dense rule). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/cmplx.h"
#include "eig/eig_internal.h"

#define DROP 1e-12

/* One batch element's problem and state. */
typedef struct hl {
    sla_matrix A;               /* complex128 view of element b (batch 1) */
    int64_t n, k, p, ncv, maxiter;
    double normA, tol;
    eig_want want;
    /* shift-invert */
    eig_shifted S;              /* pattern with the diagonal, slot maps (values unused) */
    double complex *sv;         /* [nnz of S] values of sgn·(A − σI) */
    sla_solver *solver;
    eig_real_form KF;           /* real form of sgn·(A − σI) when the solver factors it (realf) */
    int realf;
    const sla_solver_options *fopt;
    double sigma, sgn;
    int verified;
    int64_t factorizations;
    /* Lanczos */
    double complex *V, *H, *E, *Y, *acc, *Bm, *tmp, *pack;
    double *theta, *est;
    int64_t *order;
    int64_t j, steps, restarts, opapps, spmv, moves;
    int64_t runs, p0, ncv0;     /* multiplicity rule: further runs, the first block and ncv */
    double tight;
    uint64_t seed;
} hl;

/* The Lanczos arrays (sized by p and ncv: hl_alloc). */
static void hl_free_basis(hl *h)
{
    sla_free(h->V); sla_free(h->H); sla_free(h->E); sla_free(h->Y);
    sla_free(h->acc); sla_free(h->Bm); sla_free(h->tmp); sla_free(h->pack);
    sla_free(h->theta); sla_free(h->est); sla_free(h->order);
    h->V = h->H = h->E = h->Y = h->acc = h->Bm = h->tmp = h->pack = NULL;
    h->theta = h->est = NULL;
    h->order = NULL;
}

static void hl_free(hl *h)
{
    eig_shifted_free(&h->S);
    sla_solver_free(&h->solver);
    eig_real_form_free(&h->KF);
    sla_free(h->sv);
    hl_free_basis(h);
}

static sla_status hl_alloc(hl *h)
{
    int64_t n = h->n, ncv = h->ncv, p = h->p;
    h->V = sla_malloc((size_t)(n * (ncv + p)), sizeof(double complex), "Lanczos basis");
    h->H = sla_calloc((size_t)(ncv * ncv), sizeof(double complex), "projected matrix");
    h->E = sla_calloc((size_t)(p * ncv), sizeof(double complex), "coupling");
    h->Y = sla_malloc((size_t)(ncv * ncv), sizeof(double complex), "Ritz vectors");
    h->acc = sla_malloc((size_t)((ncv + p) * p), sizeof(double complex), "projections");
    h->Bm = sla_malloc((size_t)(p * p), sizeof(double complex), "block coupling");
    h->tmp = sla_malloc((size_t)(n * (ncv > 2 * p ? ncv : 2 * p)), sizeof(double complex), "restart product");
    h->pack = sla_malloc((size_t)(2 * n * p), sizeof(double complex), "row-major blocks");
    h->theta = sla_malloc((size_t)ncv, sizeof(double), "Ritz values");
    h->est = sla_malloc((size_t)ncv, sizeof(double), "residual estimates");
    h->order = sla_malloc((size_t)ncv, sizeof(int64_t), "Ritz order");
    return h->V && h->H && h->E && h->Y && h->acc && h->Bm && h->tmp && h->pack && h->theta &&
           h->est && h->order ? SLA_OK : SLA_ENOMEM;
}

/* sv = sgn·(A − σI) on S's pattern */
static void shifted_values(hl *h, double sigma)
{
    const double complex *a = h->A.values;
    int64_t nnz = sla_pattern_nnz(h->A.pattern);
    if (h->S.slot) {
        memset(h->sv, 0, sizeof(double complex) * (size_t)h->S.nnz);
        for (int64_t s = 0; s < nnz; s++) h->sv[h->S.slot[s]] += h->sgn * a[s];
    } else {
        for (int64_t s = 0; s < nnz; s++) h->sv[s] = h->sgn * a[s];
    }
    for (int64_t i = 0; i < h->n; i++) h->sv[h->S.diag[i]] -= h->sgn * sigma;
}

/* Factors sgn·(A − σI). verified: Cholesky, whose success proves sgn·(A − σI) positive definite
 * (SLA_ENOTSPD otherwise, error cleared). Otherwise a direct method; a singular or numerically
 * singular factorization (σ an eigenvalue to working accuracy) moves σ by 1e-7·‖A‖₁, ×100, up
 * to three times, as eig_factor does for real matrices. */
static sla_status hl_factor(hl *h, double sigma, int verified)
{
    sla_solver_options o;
    if (h->fopt) o = *h->fopt;
    else sla_solver_options_init(&o);
    if (verified) o.method = SLA_METHOD_CHOLESKY;
    if (o.method == SLA_METHOD_AUTO) o.need_determinant = 1;
    o.allow_singular = 1;
    double step = SLA_EIG_SHIFT_MARGIN * (h->normA > 0 ? h->normA : 1.0), s = sigma;
    sla_status st = SLA_OK;
    for (int attempt = 0; attempt < 4; attempt++) {
        shifted_values(h, s);
        sla_solver_free(&h->solver);
        sla_matrix M = sla_matrix_view(h->S.pd, SLA_COMPLEX128, 1, h->sv);
        h->realf = !verified && !h->fopt;
        eig_real_form_free(&h->KF);
        st = h->realf ? eig_real_form_init(&M, &h->KF) : SLA_OK;
        if (st == SLA_OK) st = sla_solver_create(h->realf ? &h->KF.Kd : &M, &o, &h->solver);
        h->factorizations++;
        if (verified) break;
        int tiny = st == SLA_OK && sla_solver_rcond(h->solver) < SLA_RCOND_SINGULAR;
        if ((st != SLA_ESINGULAR && !tiny) || (tiny && attempt == 3)) break;
        if (st == SLA_ESINGULAR) sla_clear_error();
        s = sigma + step;
        step *= 100;
    }
    h->sigma = s;
    h->verified = verified && st == SLA_OK;
    if (verified && st == SLA_ENOTSPD) {
        sla_clear_error();
        sla_solver_free(&h->solver);
        return SLA_ENOTSPD;
    }
    if (st < 0)
        return sla_error_wrap(st, "sla_eigsh", "factorizing the complex A − σI at σ = %.17g", s);
    return SLA_OK;
}

/* Gershgorin bounds of the Hermitian A: a_ii ∓ Σ_{j≠i} |a_ij|. */
static void gershgorin(const hl *h, double *lo, double *hi)
{
    const int64_t *rp = sla_pattern_rowptr(h->A.pattern);
    const int32_t *ci = sla_pattern_colind(h->A.pattern);
    const double complex *a = h->A.values;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < h->n; i++) {
        double d = 0, r = 0;
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            if (ci[s] == i) d = creal(a[s]);
            else r += cabs(a[s]);
        }
        *lo = fmin(*lo, d - r);
        *hi = fmax(*hi, d + r);
    }
}

/* The shift and operator for which/sigma (eigsh.c's rules for real A): sigma → plain
 * shift-invert at σ; SA / LA → a Cholesky-proved shift below / above the spectrum (σ = 0 when
 * ±A is positive definite, else the Gershgorin bound ∓ 1e-7·‖A‖₁); SM → σ = 0, proved when ±A
 * is definite. Sets want, sgn, sigma and *why (for the description). */
static sla_status hl_shift(hl *h, const sla_eigsh_options *o, const char **why)
{
    double margin = SLA_EIG_SHIFT_MARGIN * (h->normA > 0 ? h->normA : 1.0), lo, hi;
    h->sgn = 1;
    if (!isnan(o->sigma)) {
        h->want = EIG_WANT_LM;
        *why = "sigma: the eigenvalues nearest σ";
        return hl_factor(h, o->sigma, 0);
    }
    gershgorin(h, &lo, &hi);
    h->want = EIG_WANT_LA;
    if (o->which == SLA_EIGSH_SA || o->which == SLA_EIGSH_LA) {
        h->sgn = o->which == SLA_EIGSH_SA ? 1 : -1;
        *why = o->which == SLA_EIGSH_SA ? "SA: a shift below the spectrum, proved by a Cholesky "
                                          "factorization"
                                        : "LA: a shift above the spectrum, proved by a Cholesky "
                                          "factorization";
        sla_status st = hl_factor(h, 0.0, 1);
        if (st != SLA_ENOTSPD) return st;
        st = hl_factor(h, h->sgn > 0 ? lo - margin : hi + margin, 1);
        if (st == SLA_ENOTSPD)
            return EIG_FAIL(SLA_EBREAKDOWN, "the Cholesky factorization at the Gershgorin bound "
                            "σ = %.17g failed: A is not numerically Hermitian", h->sigma);
        return st;
    }
    /* SM: σ = 0, on one side of the spectrum if ±A is definite */
    *why = "SM: σ = 0";
    for (int s = 0; s < 2; s++) {
        h->sgn = s ? -1 : 1;
        sla_status st = hl_factor(h, 0.0, 1);
        if (st != SLA_ENOTSPD) return st;
    }
    h->sgn = 1;
    h->want = EIG_WANT_LM;
    return hl_factor(h, 0.0, 0);
}

/* Y = OP X for p columns (column-major n × p), one solve with p right-hand sides. */
static sla_status hl_apply(hl *h, const double complex *X, double complex *Y)
{
    int64_t n = h->n, p = h->p;
    if (h->realf) {
        /* (K − σI)⁻¹ R(z) = R((A − σI)⁻¹ z): one real solve of 2n rows per complex vector */
        double *xd = (double *)h->pack, *yd = xd + 2 * n * p;
        eig_to_real_rows(n, p, X, xd);
        SLA_TRY(sla_solver_solve(h->solver, SLA_OP_N, p, xd, yd, NULL));
        eig_from_real_rows(n, p, yd, Y);
        h->opapps += p;
        return SLA_OK;
    }
    double complex *xr = h->pack, *yr = h->pack + n * p;
    for (int64_t c = 0; c < p; c++)
        for (int64_t i = 0; i < n; i++) xr[i * p + c] = X[c * n + i];
    /* no info: the solve then skips its residual check (a direct factorization) */
    SLA_TRY(sla_solver_solve(h->solver, SLA_OP_N, p, xr, yr, NULL));
    for (int64_t c = 0; c < p; c++)
        for (int64_t i = 0; i < n; i++) Y[c * n + i] = yr[i * p + c];
    h->opapps += p;
    return SLA_OK;
}

static double want_key(eig_want w, double theta)
{
    return w == EIG_WANT_LA ? theta : w == EIG_WANT_SA ? -theta : fabs(theta);
}

/* Ritz pairs of H (j × j) best first, with residual estimates relative to ‖A‖₁:
 * ‖A x − λ x‖ = ‖(A − σI)(OP x − θ x)‖/|θ| ≤ (‖A‖₁ + |σ|)·‖E y‖/|θ|. */
static sla_status hl_ritz(hl *h)
{
    int64_t j = h->j, ncv = h->ncv, p = h->p;
    for (int64_t c = 0; c < j; c++)
        memcpy(h->Y + c * j, h->H + c * ncv, sizeof(double complex) * (size_t)j);
    SLA_TRY(eig_heev_c128(j, h->Y, h->theta, "projected matrix"));
    for (int64_t i = 0; i < j; i++) {
        int64_t q = i;
        while (q > 0 && want_key(h->want, h->theta[h->order[q - 1]]) < want_key(h->want, h->theta[i])) {
            h->order[q] = h->order[q - 1];
            q--;
        }
        h->order[q] = i;
    }
    double scale = h->normA > 0 ? h->normA : 1.0;
    for (int64_t q = 0; q < j; q++) {
        int64_t i = h->order[q];
        double r = 0;
        for (int64_t row = 0; row < p; row++) {
            double complex t = 0;
            for (int64_t c = 0; c < j; c++) t += h->E[row + c * p] * h->Y[c + i * j];
            r += creal(t) * creal(t) + cimag(t) * cimag(t);
        }
        double th = fabs(h->theta[i]);
        h->est[q] = th > 0 ? (h->normA + fabs(h->sigma)) * sqrt(r) / th / scale : INFINITY;
    }
    return SLA_OK;
}

/* One step: W = OP·Rb is in V[:, j+p .. j+2p); orthonormalize it against V[:, :j+p] and
 * extend H (Hermitian) and E. */
static sla_status hl_expand(hl *h)
{
    int64_t n = h->n, j = h->j, p = h->p, jp = j + p, ncv = h->ncv;
    double complex *acc = h->acc;
    SLA_TRY(eig_orth_fill_c128(n, h->V, jp, h->V + jp * n, p, DROP, &h->seed, acc, h->Bm));
    for (int64_t c = 0; c < p; c++) {
        for (int64_t r = 0; r < j; r++) {
            h->H[r + (j + c) * ncv] = acc[r + c * jp];
            h->H[(j + c) + r * ncv] = conj(acc[r + c * jp]);
        }
        for (int64_t r = 0; r < p; r++)
            h->H[(j + r) + (j + c) * ncv] = 0.5 * (acc[(j + r) + c * jp] + conj(acc[(j + c) + r * jp]));
    }
    memset(h->E, 0, sizeof(double complex) * (size_t)(p * ncv));
    for (int64_t c = 0; c < p; c++)
        for (int64_t r = 0; r < p; r++) h->E[r + (j + c) * p] = h->Bm[r + c * p];
    h->j = jp;
    return SLA_OK;
}

/* Thick restart: keep the kk best Ritz vectors, the residual block behind them. */
static sla_status hl_restart(hl *h, int64_t kk)
{
    int64_t n = h->n, j = h->j, p = h->p, ncv = h->ncv;
    double complex *Ysel = sla_malloc((size_t)(j * kk + p * kk), sizeof(double complex), "kept Ritz vectors");
    if (!Ysel) return SLA_ENOMEM;
    double complex *En = Ysel + j * kk;
    for (int64_t q = 0; q < kk; q++)
        memcpy(Ysel + q * j, h->Y + h->order[q] * j, sizeof(double complex) * (size_t)j);
    memset(h->tmp, 0, sizeof(double complex) * (size_t)(n * kk));
    eig_comb_c128(n, j, kk, 1, h->V, Ysel, j, h->tmp);
    memcpy(h->V, h->tmp, sizeof(double complex) * (size_t)(n * kk));
    memmove(h->V + kk * n, h->V + j * n, sizeof(double complex) * (size_t)(n * p));
    for (int64_t q = 0; q < kk; q++)
        for (int64_t r = 0; r < p; r++) {
            double complex t = 0;
            for (int64_t c = 0; c < j; c++) t += h->E[r + c * p] * Ysel[c + q * j];
            En[r + q * p] = t;
        }
    memset(h->H, 0, sizeof(double complex) * (size_t)(ncv * ncv));
    memset(h->E, 0, sizeof(double complex) * (size_t)(p * ncv));
    for (int64_t q = 0; q < kk; q++) h->H[q + q * ncv] = h->theta[h->order[q]];
    memcpy(h->E, En, sizeof(double complex) * (size_t)(p * kk));
    h->j = kk;
    sla_free(Ysel);
    return SLA_OK;
}

/* The best k Ritz vectors (X, n × k) with λ = σ + sgn/θ. */
static void hl_extract(const hl *h, double complex *X, double *lam)
{
    int64_t n = h->n, j = h->j;
    memset(X, 0, sizeof(double complex) * (size_t)(n * h->k));
    for (int64_t q = 0; q < h->k; q++) {
        int64_t i = h->order[q];
        eig_comb_c128(n, j, 1, 1, h->V, h->Y + i * j, j, X + q * n);
        lam[q] = h->sigma + h->sgn / h->theta[i];
    }
}

/* True relative residuals ‖A x − λ x‖/(‖A‖₁‖x‖) of the k columns of X; with rq, λ is first
 * replaced by the Rayleigh quotient xᴴAx/xᴴx. AX: n × k workspace (k SpMVs). */
static sla_status hl_residuals(hl *h, const double complex *X, double *lam, int rq,
                               double complex *AX, double *res)
{
    int64_t n = h->n;
    double complex *xr = h->tmp, *yr = h->tmp + n;   /* tmp holds ≥ 2n */
    for (int64_t q = 0; q < h->k; q++) {
        memcpy(xr, X + q * n, sizeof(double complex) * (size_t)n);
        SLA_TRY(sla_spmv(SLA_OP_N, 1.0, &h->A, xr, 0, 1, 0.0, yr));
        memcpy(AX + q * n, yr, sizeof(double complex) * (size_t)n);
        h->spmv++;
        double complex xax = 0;
        double xx = 0;
        for (int64_t i = 0; i < n; i++) {
            xax += conj(xr[i]) * yr[i];
            xx += creal(xr[i]) * creal(xr[i]) + cimag(xr[i]) * cimag(xr[i]);
        }
        if (rq && xx > 0) lam[q] = creal(xax) / xx;
        double r = 0;
        for (int64_t i = 0; i < n; i++) {
            double complex d = yr[i] - lam[q] * xr[i];
            r += creal(d) * creal(d) + cimag(d) * cimag(d);
        }
        res[q] = sqrt(r) / ((h->normA > 0 ? h->normA : 1.0) * (xx > 0 ? sqrt(xx) : 1.0));
    }
    return SLA_OK;
}

/* Moves a verified shift toward the wanted end (lanczos.c's rule for real matrices, called
 * right after a thick restart, V starting with the kept Ritz vectors best first): when
 * convergence is slow ((λ̂_k − σ)/(λ̂_{k+1} − σ) > 0.9), σ moves to λ̂_1 − sgn·max(spread of the
 * wanted Ritz values, 0.1·gap to the next) if that at least halves the distance and a Cholesky
 * factorization proves it still outside the spectrum (else it backs off ×4, three times). The
 * iteration then starts again from the p best Ritz vectors. *moved: 1 if σ moved. */
static sla_status hl_reshift(hl *h, int *moved)
{
    int64_t k = h->k;
    *moved = 0;
    double s0 = h->sigma;
    double l0 = s0 + h->sgn / h->theta[h->order[0]];
    double lk = s0 + h->sgn / h->theta[h->order[k - 1]];
    double lk1 = s0 + h->sgn / h->theta[h->order[k]];
    double d = fmax(fmax(fabs(lk - l0), 0.1 * fabs(lk1 - l0)), 1e-12 * h->normA);
    if (!(fabs(lk - s0) > 0.9 * fabs(lk1 - s0))) return SLA_OK;
    sla_status st = SLA_OK;
    for (int attempt = 0; attempt < 4 && d < 0.5 * fabs(l0 - s0); attempt++, d *= 4) {
        st = hl_factor(h, l0 - h->sgn * d, 1);
        if (st == SLA_OK) {
            *moved = 1;
            break;
        }
        if (st != SLA_ENOTSPD) return st;
        st = SLA_OK;
    }
    if (!*moved) {
        /* every attempt crossed the spectrum (or none was worth it): the old shift again */
        if (h->sigma != s0 || !h->solver) st = hl_factor(h, s0, 1);
        return st == SLA_ENOTSPD ? EIG_FAIL(SLA_EBREAKDOWN, "the verified shift σ = %.17g no "
                                            "longer factors by Cholesky", s0) : st;
    }
    /* restart from the p best Ritz vectors (orthonormal: columns of a unitary combination) */
    memset(h->H, 0, sizeof(double complex) * (size_t)(h->ncv * h->ncv));
    memset(h->E, 0, sizeof(double complex) * (size_t)(h->p * h->ncv));
    h->j = 0;
    h->tight = 1;
    h->moves++;
    return SLA_OK;
}

/* The Lanczos iteration of one element; X, lam: the k best pairs on return; *nconv. */
static sla_status hl_run(hl *h, const double complex *v0, int64_t nv0, double complex *X,
                         double *lam, double *res, int64_t *nconv)
{
    int64_t n = h->n, p = h->p, k = h->k, ncv = h->ncv;
    int64_t kk = k + (ncv - k) / 2;
    if (kk > ncv - p) kk = ncv - p;
    int64_t nv = v0 ? (nv0 < p ? nv0 : p) : 0;
    if (nv) memcpy(h->V, v0, sizeof(double complex) * (size_t)(n * nv));
    eig_random_block_c128(h->V + nv * n, n * (p - nv), &h->seed);
    SLA_TRY(eig_orth_fill_c128(n, NULL, 0, h->V, p, 1e-10, &h->seed, NULL, NULL));
    h->j = 0;
    h->tight = 1;
    h->restarts = 0;
    *nconv = 0;
    double complex *AX = sla_malloc((size_t)(n * k), sizeof(double complex), "A times Ritz vectors");
    if (!AX) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    for (;;) {
        st = hl_apply(h, h->V + h->j * n, h->V + (h->j + p) * n);
        h->steps++;
        if (st == SLA_OK) st = hl_expand(h);
        if (st == SLA_OK) st = hl_ritz(h);
        if (st != SLA_OK) break;
        int64_t nc = 0;
        if (h->j >= k)
            for (int64_t q = 0; q < k; q++) nc += h->est[q] <= h->tol * h->tight;
        if (nc == k) {
            /* the estimates say converged: check the true residuals once */
            hl_extract(h, X, lam);
            st = hl_residuals(h, X, lam, 0, AX, res);
            if (st != SLA_OK) break;
            int64_t ok = 0;
            for (int64_t q = 0; q < k; q++) ok += res[q] <= h->tol;
            if (ok == k) { *nconv = k; break; }
            h->tight *= 0.01;
        }
        if (h->j + p > ncv) {
            if (h->restarts >= h->maxiter) break;
            st = hl_restart(h, kk);
            h->restarts++;
            int moved = 0;
            if (st == SLA_OK && h->verified && h->moves < 10) st = hl_reshift(h, &moved);
            if (st != SLA_OK) break;
        }
    }
    if (st == SLA_OK && *nconv < k) hl_extract(h, X, lam);
    sla_free(AX);
    return st;
}

/* Final Rayleigh–Ritz on span(X) (orthonormal n × k): the Ritz vectors of A itself, so that
 * eigenvalues are Rayleigh quotients and eigenvectors of a repeated eigenvalue an orthonormal
 * basis; then ascending order, phase, true residuals. */
static sla_status hl_finish(hl *h, double complex *X, double *lam, double *res)
{
    int64_t n = h->n, k = h->k;
    double complex *AX = sla_malloc((size_t)(2 * n * k + k * k), sizeof(double complex), "Ritz blocks");
    if (!AX) return SLA_ENOMEM;
    double complex *Xn = AX + n * k, *S = Xn + n * k;
    sla_status st = eig_orth_fill_c128(n, NULL, 0, X, k, 1e-10, &h->seed, NULL, NULL);
    if (st == SLA_OK) st = hl_residuals(h, X, lam, 0, AX, res);
    if (st == SLA_OK) {
        eig_gram_c128(n, k, k, X, AX, S);
        for (int64_t j = 0; j < k; j++)
            for (int64_t i = 0; i <= j; i++) {
                double complex s = 0.5 * (S[i + j * k] + conj(S[j + i * k]));
                S[i + j * k] = s;
                S[j + i * k] = conj(s);
            }
        st = eig_heev_c128(k, S, lam, "final Rayleigh–Ritz matrix");
    }
    if (st == SLA_OK) {
        memset(Xn, 0, sizeof(double complex) * (size_t)(n * k));
        eig_comb_c128(n, k, k, 1, X, S, k, Xn);
        memcpy(X, Xn, sizeof(double complex) * (size_t)(n * k));
        for (int64_t j = 0; j < k; j++) eig_fix_phase(n, X + j * n);
        st = hl_residuals(h, X, lam, 1, AX, res);
    }
    sla_free(AX);
    return st;
}

int eig_hermitian_native_applies(const sla_matrix *A, int64_t k, const sla_eigsh_options *o)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    if (o->M || o->precond || o->precond_solver) return 0;
    if (o->method != SLA_EIGSH_AUTO && o->method != SLA_EIGSH_LANCZOS) return 0;
    if (o->method == SLA_EIGSH_AUTO && 2 * n <= 300) return 0;      /* auto's dense rule */
    if (isnan(o->sigma) && o->which == SLA_EIGSH_LM) return 0;       /* no shift-invert */
    /* sizes that do not fit: auto falls back (the real form's dense path), an explicit lanczos
     * gets the real form's refusal naming the field */
    eig_sizes sz;
    if (eig_sizes_for(o, n, k, SLA_EIGSH_LANCZOS, &sz) != SLA_OK) {
        sla_clear_error();
        return 0;
    }
    /* defaults computed is not enough: clipped to n they may not fit (n = 1, 2) */
    return eig_sizes_fit(n, k, &sz, SLA_EIGSH_LANCZOS);
}

/* One run (iteration and final Rayleigh–Ritz) from v0 (or random); *nc: pairs whose true
 * residual meets the tolerance. */
static sla_status hl_solve(hl *h, const double complex *v0, int64_t nv0, double complex *X,
                           double *lam, double *res, int64_t *nc)
{
    SLA_TRY(hl_run(h, v0, nv0, X, lam, res, nc));
    SLA_TRY(hl_finish(h, X, lam, res));
    *nc = 0;
    for (int64_t q = 0; q < h->k; q++) *nc += res[q] <= h->tol;
    return SLA_OK;
}

/* The most copies of one eigenvalue among lam (ascending, hl_finish): values closer than
 * multiplicity.c's gap, 4× the largest true residual (res is relative to ‖A‖₁) or 1e-12‖A‖₁. */
static int64_t hl_copies(const hl *h, const double *lam, const double *res, double *where)
{
    double rmax = 0, scale = h->normA > 0 ? h->normA : 1.0;
    for (int64_t q = 0; q < h->k; q++) rmax = fmax(rmax, res[q]);
    double gap = fmax(4 * rmax, 1e-12) * scale;
    int64_t cmax = 0;
    for (int64_t i = 0, run = 1; i < h->k; i++, run++) {
        if (i > 0 && !(lam[i] - lam[i - 1] <= gap)) run = 1;
        if (run > cmax) { cmax = run; *where = lam[i]; }
    }
    return cmax;
}

/* sla_eigsh's multiplicity rule (eigsh.c, certify_multiplicity) on the native path: a block-p
 * run from a generic start holds every copy of an eigenvalue with fewer than p copies; c ≥ p
 * copies may be p of more. Then the iteration runs again from a random start with block c + 1
 * (same factorization) until a run has fewer copies than its block; that result is returned.
 * A block that does not fit (k + p ≤ ncv ≤ n − p) leaves the copies unconfirmed: *uncertain = c
 * and note says why (the call then reports not converged). */
static sla_status hl_certify(hl *h, double complex *X, double *lam, double *res, int64_t *nc,
                             int64_t *uncertain, char *note, size_t nnote)
{
    int64_t n = h->n, k = h->k;
    double at = NAN;
    int64_t c = hl_copies(h, lam, res, &at);
    h->p0 = h->p;
    h->ncv0 = h->ncv;
    while (*nc == k && c >= h->p) {
        int64_t p = c + 1, ncv = h->ncv > 2 * (k + p) ? h->ncv : 2 * (k + p);
        if (ncv > n - p) ncv = n - p;
        if (ncv < k + p) {
            *uncertain = c;
            snprintf(note, nnote, "%lld copies of the eigenvalue %.12g with block %lld: there may "
                     "be more, and a confirming run with block %lld does not fit (k + block ≤ ncv "
                     "≤ n − block, k = %lld, n = %lld); use method dense or lobpcg", (long long)c,
                     at, (long long)h->p, (long long)p, (long long)k, (long long)n);
            return SLA_OK;
        }
        hl_free_basis(h);
        h->p = p;
        h->ncv = ncv;
        SLA_TRY(hl_alloc(h));
        h->runs++;
        SLA_TRY(hl_solve(h, NULL, 0, X, lam, res, nc));
        c = hl_copies(h, lam, res, &at);
    }
    return SLA_OK;
}

static void hl_describe(const hl *h, const char *why, sla_eigsh_info *info)
{
    char head[SLA_DESCRIPTION_LEN], sig[64];
    char mult[160] = "";
    if (h->runs)
        snprintf(mult, sizeof mult, ", multiplicity check: %lld more run%s (block %lld → %lld, ncv "
                 "%lld → %lld), whose result is returned", (long long)h->runs,
                 h->runs > 1 ? "s" : "", (long long)h->p0, (long long)h->p, (long long)h->ncv0,
                 (long long)h->ncv);
    snprintf(head, sizeof head, "complex Hermitian thick-restart Lanczos (block %lld, ncv %lld) "
             "on %s%s%s", (long long)h->p0, (long long)h->ncv0,
             h->sgn > 0 ? "(A − σI)⁻¹" : "(σI − A)⁻¹", h->moves ? ", shift moved" : "", mult);
    snprintf(sig, sizeof sig, "σ = %.6g", h->sigma);
    info->description[0] = '\0';
    sla_text_append(info->description, sizeof info->description, "", head);
    sla_text_append(info->description, sizeof info->description, ", ", sig);
    sla_text_append(info->description, sizeof info->description, "; ", why);
    const char *fd = sla_solver_describe(h->solver);
    if (fd) sla_text_append(info->description, sizeof info->description,
                            h->realf ? "; factor of the real 2n form of A − σI: " : "; factor: ", fd);
}

/* One batch element: shift, iteration, final Rayleigh–Ritz; outputs written for element b. */
static sla_status hl_element(const sla_matrix *Ac, int64_t b, int64_t k, const sla_eigsh_options *o,
                             const double complex *v0, sla_dtype dt, void *eigenvalues,
                             void *eigenvectors, sla_eigsh_info *info, int64_t *nconv,
                             double *maxres, char *note, size_t nnote)
{
    hl h;
    memset(&h, 0, sizeof h);
    int64_t n = sla_pattern_nrows(Ac->pattern), nnz = sla_pattern_nnz(Ac->pattern);
    h.A = sla_matrix_view(Ac->pattern, SLA_COMPLEX128, 1, (const double complex *)Ac->values + b * nnz);
    h.n = n;
    h.k = k;
    eig_sizes sz;
    sla_status st = eig_sizes_for(o, n, k, SLA_EIGSH_LANCZOS, &sz);
    if (st != SLA_OK) return st;
    h.p = sz.p;
    h.ncv = sz.ncv;
    h.maxiter = o->maxiter > 0 ? o->maxiter : 300;
    h.tol = o->tol == 0 ? 1e-14 : o->tol;
    h.fopt = o->factor_options;
    h.seed = eig_seed(b);
    const char *why = "";
    st = sla_matrix_norm(&h.A, '1', &h.normA);
    eig_problem P = {0};
    P.p = Ac->pattern;
    P.n = n;
    P.nnz = nnz;
    P.batch = 1;
    if (st == SLA_OK) st = eig_shifted_init(&P, &h.S);
    if (st == SLA_OK) {
        h.sv = sla_malloc((size_t)h.S.nnz, sizeof(double complex), "shifted values");
        if (!h.sv) st = SLA_ENOMEM;
    }
    if (st == SLA_OK) st = hl_alloc(&h);
    if (st == SLA_OK) st = hl_shift(&h, o, &why);
    double complex *X = sla_malloc((size_t)(n * k), sizeof(double complex), "eigenvectors");
    double *lam = sla_malloc((size_t)(2 * k), sizeof(double), "eigenvalues");
    if (st == SLA_OK && (!X || !lam)) st = SLA_ENOMEM;
    double *res = lam ? lam + k : NULL;
    int64_t nc = 0;
    int64_t uncertain = 0;
    if (st == SLA_OK) st = hl_solve(&h, v0 ? v0 + b * n * o->nv0 : NULL, o->nv0, X, lam, res, &nc);
    if (st == SLA_OK) st = hl_certify(&h, X, lam, res, &nc, &uncertain, note, nnote);
    if (st == SLA_OK) {
        for (int64_t q = 0; q < k; q++) {
            if (!(res[q] <= *maxres)) *maxres = res[q];
            if (sla_dtype_real(dt) == SLA_FLOAT64) ((double *)eigenvalues)[b * k + q] = lam[q];
            else ((float *)eigenvalues)[b * k + q] = (float)lam[q];
            for (int64_t i = 0; eigenvectors && i < n; i++)
                eig_cstore(dt, eigenvectors, (b * n + i) * k + q, X[i + q * n]);
            if (o->residuals) o->residuals[b * k + q] = res[q];
        }
        /* pairs whose copies could not be confirmed do not count */
        nc = nc > uncertain ? nc - uncertain : 0;
        if (nc < *nconv) *nconv = nc;
        if (info) {
            if (b == 0) {
                info->sigma = h.sigma;
                hl_describe(&h, why, info);
            }
            if (h.steps > info->iterations) info->iterations = h.steps;
            if (h.restarts > info->restarts) info->restarts = h.restarts;
            info->operator_applications += h.opapps;
            info->spmv += h.spmv;
            info->factorizations += h.factorizations;
            if (h.normA > info->norm_A) info->norm_A = h.normA;
        }
    }
    sla_free(X);
    sla_free(lam);
    hl_free(&h);
    return st;
}

sla_status eig_hermitian_native(const sla_matrix *A, int64_t k, const sla_eigsh_options *o,
                                void *eigenvalues, void *eigenvectors, sla_eigsh_info *info)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    sla_dtype dt = A->dtype;
    /* complex64 is promoted to complex128 once (as float32 is to float64 on the real path) */
    double complex *av = NULL, *v0 = NULL;
    sla_matrix Ac = *A;
    if (dt == SLA_COMPLEX64) {
        av = sla_malloc((size_t)(A->batch * nnz), sizeof(double complex), "complex128 copy");
        if (!av) return SLA_ENOMEM;
        for (int64_t q = 0; q < A->batch * nnz; q++) av[q] = eig_centry(dt, A->values, q);
        Ac = sla_matrix_view(A->pattern, SLA_COMPLEX128, A->batch, av);
    }
    sla_status st = SLA_OK;
    if (o->v0) {
        /* [batch][n][nv0] row-major → column-major n × nv0 blocks */
        v0 = sla_malloc((size_t)(A->batch * n * o->nv0), sizeof(double complex), "start block");
        if (!v0) st = SLA_ENOMEM;
        for (int64_t b = 0; v0 && b < A->batch; b++)
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < o->nv0; j++)
                    v0[b * n * o->nv0 + j * n + i] = eig_centry(dt, o->v0, (b * n + i) * o->nv0 + j);
    }
    if (info) {
        memset(info, 0, sizeof *info);
        info->method = SLA_EIGSH_LANCZOS;
        info->which = o->which;
        info->sigma = NAN;
    }
    int64_t nconv = k;
    double maxres = 0;
    char note[400] = "";
    for (int64_t b = 0; st == SLA_OK && b < A->batch; b++)
        st = hl_element(&Ac, b, k, o, v0, dt, eigenvalues, eigenvectors, info, &nconv, &maxres,
                        note, sizeof note);
    if (info) {
        info->converged = nconv;
        info->max_residual = maxres;
    }
    sla_free(av);
    sla_free(v0);
    if (st < 0) return st;
    if (note[0]) return EIG_FAIL(SLA_NOT_CONVERGED, "%s", note);
    return eig_converged_status(nconv, k, 0, maxres, o->tol == 0 ? 1e-14 : o->tol);
}
