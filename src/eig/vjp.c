/* sla_eigsh_vjp: the adjoint of (Λ, V) = eigsh(A).
 *
 * Eigenvalues (Hellmann–Feynman): ∂λ_i/∂a_s = v_i[r_s]·v_i[c_s], one sla_pattern_outer_add with
 * the columns of V scaled by gλ.
 * Eigenvectors: with a unit eigenvector of a simple eigenvalue, dv_i = −(A − λ_i I)⁺ dA v_i, so
 * ∂L/∂a_s = −w_i[r_s]·v_i[c_s] with w_i = (A − λ_i I)⁺ g_i. The part of w_i inside the computed
 * block is explicit, Σ_{j≠i} v_j (v_jᵀg_i)/(λ_j − λ_i); the part outside is Q (A − λ_i I)⁻¹ Q g_i
 * (Q = I − V Vᵀ), from a direct factorization of A − λ_i I: λ_i is an eigenvalue to working
 * accuracy, so the solve's error lies along the near-null vectors (the mechanism of inverse
 * iteration), which are inside the block and removed by Q (an eigenvalue outside the block tied
 * with λ_i is found, refused or removed in vjp_tie.c). One symbolic analysis serves every
 * i: the solver object is refactored with the values of A − λ_i I (batched: all elements at
 * once). Everything runs in float64.
 * Generalized problem A v = λ M v (M-normalized v): dv_i = Σ_{j≠i} v_j v_jᵀ(dλ_i M − dA + λ_i dM)v_i
 * /(λ_j − λ_i) − ½ (v_iᵀ dM v_i) v_i, so with the same w_i (now V(Λ − λ_i)⁺Vᵀ g_i, its outside
 * part Q (A − λ_i M)⁻¹ Qᵀ g_i, Q = I − V VᵀM): ∂L/∂A = −Σ w_i v_iᵀ as above and
 * ∂L/∂M = Σ_i (λ_i w_i − ½ (g_iᵀ v_i) v_i) v_iᵀ − Σ_i gλ_i λ_i v_i v_iᵀ. */
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

static double ld(sla_dtype t, const void *p, int64_t i)
{
    return t == SLA_FLOAT64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* Factorization of A − λ_b I: LDLᵀ, else LU, else whatever auto finds (first call), then
 * refactored. Numerically singular by design (inverse iteration: the solves use it as is); only
 * an exactly singular one (a zero pivot) moves λ, by 1e-13·‖A‖₁ (see eig_factor). */
static sla_status factor(const eig_problem *P, eig_shifted *S, const double *shift, sla_solver **s,
                         double *used)
{
    static const sla_method order[] = {SLA_METHOD_LDLT, SLA_METHOD_LU, SLA_METHOD_AUTO};
    sla_status st = SLA_EUNSUPPORTED;
    for (int t = 0; t < 3 && st == SLA_EUNSUPPORTED; t++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = order[t];
        st = eig_factor(P, S, shift, 1.0, *s ? NULL : &o, EIG_SHIFT_EIGENVALUE, s, used, 1e-13);
        if (*s) break;
    }
    return st;
}

/* The in-block part of w_i for every i of batch element b, with the degeneracy check
 * (sla/backend.h: libsla_mpi's distributed VJP runs this same rule on its rows).
 * M = VᵀG (k × k, M[j + i·k] = v_jᵀ g_i). W row-major n × k. */
double sla_eig_vjp_tie(sla_dtype dtype)
{
    return dtype == SLA_FLOAT32 ? SLA_EIG_DEGENERATE_F32 : SLA_EIG_DEGENERATE;
}

sla_status sla_eig_vjp_in_block(const char *api, const double *lam, const double *V,
                                const double *M, int64_t n, int64_t k, double normA, double tie,
                                const double *gnorm, int64_t b, double *W)
{
    for (int64_t i = 0; i < k; i++) {
        if (gnorm[i] == 0) continue;
        for (int64_t j = 0; j < k; j++) {
            if (j == i) continue;
            double d = lam[j] - lam[i];
            if (fabs(d) <= tie * normA) {
                double asym = fabs(M[j + i * k] - M[i + j * k]);
                if (asym <= tie * (gnorm[i] + gnorm[j])) continue;
                return sla_error_set(SLA_EINVAL, api, "eigenvector gradient undefined for the repeated "
                                "eigenvalue λ_%lld = λ_%lld = %.17g (batch %lld): the loss depends "
                                "on the choice of basis of the eigenspace (v_%lldᵀg_%lld − "
                                "v_%lldᵀg_%lld = %.3g ≠ 0)", (long long)i, (long long)j, lam[i],
                                (long long)b, (long long)j, (long long)i, (long long)i,
                                (long long)j, M[j + i * k] - M[i + j * k]);
            }
            double c = M[j + i * k] / d;
            for (int64_t r = 0; r < n; r++) W[r * k + i] += c * V[r * k + j];
        }
    }
    return SLA_OK;
}

/* Q x is (Vl, Vr) = (V, V) for the standard problem; with M, Q = I − V VᵀM is (V, MV) and
 * Qᵀ = I − M V Vᵀ is (MV, V). */
void eig_project_out(const double *Vl, const double *Vr, int64_t n, int64_t k, double *x, double *c)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t j = 0; j < k; j++) c[j] = 0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < k; j++) c[j] += Vr[r * k + j] * x[r];
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < k; j++) x[r] -= Vl[r * k + j] * c[j];
    }
}

/* The out-of-block parts: for each i, one refactorization and one batched solve with two
 * right-hand sides, the cotangent and the first probe for partners of λ_i outside the block
 * (vjp_tie.c). B->MV = M·V with M (Q (A − λ_i M)⁻¹ Qᵀ g_i). */
static sla_status out_of_block(const eig_vjp_block *B, double *W)
{
    const eig_problem *P = B->P;
    int64_t n = P->n, batch = P->batch, k = B->k;
    const double *V = B->V, *MV = B->MV;
    eig_shifted S;
    SLA_TRY(eig_shifted_init(P, &S));
    sla_solver *s = NULL;
    eig_tie_ws *ws = NULL;
    double *shift = sla_malloc((size_t)batch, sizeof(double), "shifts");
    double *rhs = sla_malloc((size_t)(2 * batch * n), sizeof(double), "right-hand sides");
    double *y = sla_malloc((size_t)(2 * batch * n), sizeof(double), "solutions");
    double *yz = sla_malloc((size_t)(2 * batch * n), sizeof(double), "solutions");
    double *c = sla_malloc((size_t)k, sizeof(double), "projections");
    double *scale = sla_malloc((size_t)batch, sizeof(double), "scales");
    double *used = sla_malloc((size_t)batch, sizeof(double), "shifts");
    int *on = sla_malloc((size_t)batch, sizeof(int), "active elements");
    sla_status st = (shift && rhs && y && yz && c && scale && used && on) ? SLA_OK : SLA_ENOMEM;
    for (int64_t i = 0; i < k && st == SLA_OK; i++) {
        int any = 0;
        for (int64_t b = 0; b < batch; b++) {
            double *r = y + b * n;                      /* y holds the cotangents for now */
            const double *Vb = V + b * n * k, *Gb = B->G + b * n * k;
            const double *MVb = MV ? MV + b * n * k : Vb;
            for (int64_t q = 0; q < n; q++) r[q] = Gb[q * k + i];
            if (B->gnorm[b * k + i] > 0) eig_project_out(MVb, Vb, n, k, r, c);
            /* unit right-hand side so that tiny cotangents do not underflow in the solver */
            double nr = 0;
            for (int64_t q = 0; q < n; q++) nr += r[q] * r[q];
            nr = sqrt(nr);
            scale[b] = nr;
            on[b] = nr > 0;
            if (nr > 0) { for (int64_t q = 0; q < n; q++) r[q] /= nr; any = 1; }
            shift[b] = B->lam[b * k + i];
        }
        if (!any) continue;
        const double *probe;
        st = eig_vjp_probe_start(B, i, on, &ws, &probe);
        if (st < 0) break;
        int64_t nrhs = probe ? 2 : 1;
        /* [batch][n][nrhs]: the cotangent, then the probe */
        for (int64_t q = 0; q < batch * n; q++) {
            rhs[q * nrhs] = y[q];
            if (probe) rhs[q * nrhs + 1] = probe[q];
        }
        st = factor(P, &S, shift, &s, used);
        if (st < 0) {
            st = sla_error_wrap(st, B->api, "factorizing A − λ_%lld %s", (long long)i,
                                MV ? "M" : "I");
            break;
        }
        st = sla_solver_solve(s, SLA_OP_N, nrhs, rhs, yz, NULL);
        if (st < 0) break;
        int64_t bad;
        if (!sla_all_finite(SLA_FLOAT64, yz, nrhs * batch * n, &bad)) {
            st = sla_error_set(SLA_ENONFINITE, B->api, "the solve with A − λ_%lld %s is not finite "
                               "(batch %lld)", (long long)i, MV ? "M" : "I",
                               (long long)(bad / (nrhs * n)));
            break;
        }
        for (int64_t q = 0; q < batch * n; q++) {
            y[q] = yz[q * nrhs];
            if (probe) y[batch * n + q] = yz[q * nrhs + 1];
        }
        for (int64_t b = 0; b < batch; b++)
            if (on[b]) eig_project_out(V + b * n * k, MV ? MV + b * n * k : V + b * n * k, n, k,
                                       y + b * n, c);
        st = eig_vjp_partners(B, i, s, on, probe ? y + batch * n : NULL, y, ws);
        for (int64_t b = 0; b < batch && st >= 0; b++) {
            if (!on[b]) continue;
            const double *yb = y + b * n;
            for (int64_t q = 0; q < n; q++) W[(b * n + q) * k + i] += scale[b] * yb[q];
        }
        if (st >= 0) st = SLA_OK;
    }
    eig_vjp_partners_free(&ws);
    sla_solver_free(&s);
    eig_shifted_free(&S);
    sla_free(shift);
    sla_free(rhs);
    sla_free(y);
    sla_free(yz);
    sla_free(c);
    sla_free(scale);
    sla_free(used);
    sla_free(on);
    return st;
}

/* The terms of M (P->has_M): dmval += −Σ_i gλ_i λ_i v_i v_iᵀ + Σ_i λ_i w_i v_iᵀ
 * − ½ Σ_i (g_iᵀ v_i) v_i v_iᵀ on M's pattern (W = [w_i], zero without eigenvector cotangents). */
static sla_status mass_terms(const eig_problem *P, sla_dtype dt, int64_t k, const double *lam,
                             const double *V, const double *W, const double *G, const void *gl,
                             double *U, double *dmval)
{
    int64_t n = P->n, batch = P->batch;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < k; i++) {
            double c = gl ? -ld(dt, gl, b * k + i) * lam[b * k + i] : 0.0, gv = 0;
            for (int64_t r = 0; G && r < n; r++) gv += G[(b * n + r) * k + i] * V[(b * n + r) * k + i];
            c -= 0.5 * gv;
            for (int64_t r = 0; r < n; r++) {
                double w = W ? lam[b * k + i] * W[(b * n + r) * k + i] : 0.0;
                U[(b * n + r) * k + i] = c * V[(b * n + r) * k + i] + w;
            }
        }
    return sla_pattern_outer_add(P->pm, SLA_FLOAT64, batch, 1.0, U, 1, V, 1, k, dmval);
}

sla_status eig_vjp(const eig_problem *P, sla_dtype dt, int64_t k, const void *eigenvalues,
                   const void *eigenvectors, const void *gl, const void *gv, double *dval,
                   double *dmval)
{
    int64_t n = P->n, batch = P->batch, nk = batch * n * k;
    double *lam = sla_malloc((size_t)(batch * k), sizeof(double), "eigenvalues");
    double *V = sla_malloc((size_t)nk, sizeof(double), "eigenvectors");
    double *U = sla_calloc((size_t)nk, sizeof(double), "weighted eigenvectors");
    double *G = gv ? sla_malloc((size_t)nk, sizeof(double), "eigenvector cotangents") : NULL;
    double *M = sla_malloc((size_t)(k * k), sizeof(double), "VᵀG");
    double *gnorm = sla_calloc((size_t)(batch * k), sizeof(double), "cotangent norms");
    double *MV = P->has_M ? sla_malloc((size_t)nk, sizeof(double), "M times eigenvectors") : NULL;
    double *U2 = P->has_M ? sla_malloc((size_t)nk, sizeof(double), "weighted eigenvectors") : NULL;
    double *tscale = sla_malloc((size_t)batch, sizeof(double), "scales");
    sla_status st = (lam && V && U && (G || !gv) && M && gnorm && tscale &&
                     (!P->has_M || (MV && U2))) ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        for (int64_t q = 0; q < batch * k; q++) lam[q] = ld(dt, eigenvalues, q);
        for (int64_t q = 0; q < nk; q++) V[q] = ld(dt, eigenvectors, q);
        if (G) for (int64_t q = 0; q < nk; q++) G[q] = ld(dt, gv, q);
        if (MV) st = sla_spmv(SLA_OP_N, 1.0, &P->Md, V, 1, k, 0.0, MV);
    }
    if (st == SLA_OK && gl) {
        /* Hellmann–Feynman: U = V·diag(gλ), dval += U ∘ V on the pattern */
        for (int64_t b = 0; b < batch; b++)
            for (int64_t r = 0; r < n; r++)
                for (int64_t i = 0; i < k; i++)
                    U[(b * n + r) * k + i] = V[(b * n + r) * k + i] * ld(dt, gl, b * k + i);
        st = sla_pattern_outer_add(P->p, SLA_FLOAT64, batch, 1.0, U, 1, V, 1, k, dval);
    }
    const char *api = P->has_M ? "sla_eigsh_generalized_vjp" : "sla_eigsh_vjp";
    double tie = sla_eig_vjp_tie(dt);
    if (st == SLA_OK && G) {
        memset(U, 0, sizeof(double) * (size_t)nk);      /* U becomes W */
        for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
            const double *Vb = V + b * n * k, *Gb = G + b * n * k;
            memset(M, 0, sizeof(double) * (size_t)(k * k));
            for (int64_t r = 0; r < n; r++)
                for (int64_t i = 0; i < k; i++) {
                    gnorm[b * k + i] += Gb[r * k + i] * Gb[r * k + i];
                    for (int64_t j = 0; j < k; j++) M[j + i * k] += Vb[r * k + j] * Gb[r * k + i];
                }
            for (int64_t i = 0; i < k; i++) gnorm[b * k + i] = sqrt(gnorm[b * k + i]);
            /* repeated: |λ_i − λ_j| ≤ tie·‖A‖₁, or tie·max|λ| of the block with M (the scale of
             * λ is ‖A‖/‖M‖ there; ‖A‖₁/‖M‖₁ for a block of zeros) */
            double scale = P->norm1[b];
            if (P->has_M) {
                scale = 0;
                for (int64_t i = 0; i < k; i++) scale = fmax(scale, fabs(lam[b * k + i]));
                if (scale == 0 && P->normM[b] > 0) scale = P->norm1[b] / P->normM[b];
            }
            tscale[b] = scale;
            st = sla_eig_vjp_in_block(api, lam + b * k, Vb, M, n, k, scale, tie, gnorm + b * k,
                                      b, U + b * n * k);
        }
        const eig_vjp_block B = {P, api, k, lam, V, MV, G, gnorm, tscale, tie};
        if (st == SLA_OK) st = out_of_block(&B, U);
        if (st == SLA_OK) st = sla_pattern_outer_add(P->p, SLA_FLOAT64, batch, -1.0, U, 1, V, 1, k, dval);
    }
    if (st == SLA_OK && P->has_M && (gl || G))
        st = mass_terms(P, dt, k, lam, V, G ? U : NULL, G, gl, U2, dmval);
    sla_free(lam);
    sla_free(V);
    sla_free(U);
    sla_free(G);
    sla_free(M);
    sla_free(gnorm);
    sla_free(MV);
    sla_free(U2);
    sla_free(tscale);
    return st;
}

#define API "sla_eigsh_vjp"

static sla_status run(const sla_matrix *A, int64_t k, const void *eigenvalues,
                      const void *eigenvectors, const void *g_eigenvalues,
                      const void *g_eigenvectors, void *dvalues)
{
    SLA_TRY(sla_matrix_check_for(API, "A", A, 1 | SLA_CHECK_COMPLEX_OK));
    if (sla_dtype_is_complex(A->dtype))     /* Hermitian: hermitian_vjp.c */
        return eig_hermitian_vjp(API, A, NULL, k, eigenvalues, eigenvectors, g_eigenvalues,
                                 g_eigenvectors, dvalues, NULL);
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    if (sla_pattern_ncols(A->pattern) != n)
        return SLA_FAIL_AS(API, SLA_ESHAPE, "A is %lld × %lld; eigsh needs a square matrix",
                           (long long)n, (long long)sla_pattern_ncols(A->pattern));
    SLA_CHECK_ARG_AS(API, k >= 1 && k <= n, "k = %lld is not in [1, n] = [1, %lld]", (long long)k,
                     (long long)n);
    SLA_CHECK_ARG_AS(API, eigenvalues && eigenvectors, "%s is NULL (the outputs of sla_eigsh are "
                     "needed)", eigenvalues ? "eigenvectors" : "eigenvalues");
    SLA_CHECK_ARG_AS(API, dvalues || nnz == 0, "dvalues is NULL");
    int64_t bad, nk = A->batch * n * k;
    size_t es = sla_dtype_size(A->dtype), nb = (size_t)A->batch;
    const sla_buf out = {"dvalues", dvalues, nb * (size_t)nnz * es};
    const sla_buf in[] = {
        {"A's values", A->values, nb * (size_t)nnz * es},
        {"eigenvalues", eigenvalues, nb * (size_t)k * es},
        {"eigenvectors", eigenvectors, (size_t)nk * es},
        {"g_eigenvalues", g_eigenvalues, nb * (size_t)k * es},
        {"g_eigenvectors", g_eigenvectors, (size_t)nk * es}};
    SLA_TRY(sla_check_aliasing(API, &out, 1, in, 5));
    if (!sla_all_finite(A->dtype, eigenvalues, A->batch * k, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "eigenvalues[%lld] is not finite", (long long)bad);
    if (!sla_all_finite(A->dtype, eigenvectors, nk, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "eigenvectors entry %lld is not finite",
                           (long long)bad);
    if (g_eigenvalues && !sla_all_finite(A->dtype, g_eigenvalues, A->batch * k, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "g_eigenvalues[%lld] is not finite",
                           (long long)bad);
    if (g_eigenvectors && !sla_all_finite(A->dtype, g_eigenvectors, nk, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "g_eigenvectors entry %lld is not finite",
                           (long long)bad);
    eig_problem P;
    SLA_TRY(eig_problem_init(A, &P));
    double *dval = sla_calloc((size_t)(A->batch * nnz), sizeof(double), "gradient");
    sla_status st = dval ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK && (g_eigenvalues || g_eigenvectors))
        st = eig_vjp(&P, A->dtype, k, eigenvalues, eigenvectors, g_eigenvalues, g_eigenvectors, dval,
                     NULL);
    if (st == SLA_OK) {
        for (int64_t q = 0; q < A->batch * nnz; q++) {
            if (A->dtype == SLA_FLOAT64) ((double *)dvalues)[q] = dval[q];
            else ((float *)dvalues)[q] = (float)dval[q];
        }
    }
    sla_free(dval);
    eig_problem_free(&P);
    return st;
}

/* Errors from anything this calls (a factorization, an allocation) start with the public name. */
sla_status sla_eigsh_vjp(const sla_matrix *A, int64_t k, const void *eigenvalues,
                         const void *eigenvectors, const void *g_eigenvalues,
                         const void *g_eigenvectors, void *dvalues)
{
    return sla_error_attribute(run(A, k, eigenvalues, eigenvectors, g_eigenvalues, g_eigenvectors,
                                   dvalues), API);
}
