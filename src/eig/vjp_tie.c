/* Ties of λ_i with eigenvalues outside the computed block, for sla_eigsh_vjp and
 * sla_eigsh_generalized_vjp.
 *
 * The eigenvector term w_i = (A − λ_i I)⁺ g_i divides by λ_j − λ_i for every j ≠ i. vjp.c checks
 * the pairs inside the block. An eigenvalue μ outside it equal to λ_i (a multiplet split by k)
 * would leave the out-of-block solve Q (A − λ_i I)⁻¹ Q g_i with a component (uᵀg_i)/(μ − λ_i)
 * along its eigenvector u (‖∂L/∂A‖ ~ 1e17 on a 6 × 6 grid Laplacian, with a success status).
 * Such partners are found by inverse iteration in the complement of the block, on the
 * factorization of A − λ_i I that the solve has just used: z = Q (A − λ_i I)⁻¹ Q r for a
 * pseudo-random r, normalized, with the residual ρ = ‖(A − λ_i I) z‖₂.
 *  - Every unit z ⊥ V has ρ ≥ min_{j outside} |λ_j − λ_i|, so ρ ≤ tie·scale (vjp.c: 1e-8·‖A‖₁,
 *    float32 1e-5·‖A‖₁) proves an eigenvalue that close: no false alarm at a near-tie.
 *  - Conversely such an eigenvalue dominates z after one step (amplified by 1/|μ − λ_i| against
 *    1/gap for the others): ρ ≈ |μ − λ_i|·‖r‖/|uᵀr|.
 * A partner found is refined by a second step and then treated as a computed eigenvector with a
 * zero cotangent is inside the block: the loss must not depend on it (|zᵀg_i| ≤ tie·‖z‖₂‖g_i‖,
 * else SLA_EINVAL, the error of a tie inside the block), and its component, which is the solve's
 * error, is removed from the solution. The search goes on in the complement of the partners
 * found (a random z there falls in the rest of the eigenspace), up to MAX_PARTNERS.
 * With M (A v = λ M v): the same in the M-inner product, z = Q (A − λ_i M)⁻¹ Qᵀ r with
 * Q = I − V VᵀM, M-normalized, ρ = ‖A z − λ_i M z‖₂ / ‖M z‖₂ (|μ − λ_i| for an eigenvector of
 * the pencil).
 * Cost per eigenvalue with an eigenvector cotangent: a second right-hand side in the solve of
 * the cotangent (vjp.c) and two SpMVs (with M three); two more solves per partner. */
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

#define MAX_PARTNERS 8

struct eig_tie_ws {
    int64_t n, batch;
    double *r, *z, *t, *mz;     /* [batch][n] each */
    double *rho;                /* [batch] */
    int *probe;                 /* [batch] elements still searched */
    int64_t *np;                /* [batch] partners found */
    double *Z, *MZ;             /* [batch][MAX_PARTNERS][n], allocated with the first partner
                                 * (MZ = M·Z with M, else Z's alias) */
    double *c;                  /* [max(k, MAX_PARTNERS)] */
};

void eig_vjp_partners_free(eig_tie_ws **ws)
{
    eig_tie_ws *w = *ws;
    if (!w) return;
    sla_free(w->r);
    sla_free(w->z);
    sla_free(w->t);
    sla_free(w->mz);
    sla_free(w->rho);
    sla_free(w->probe);
    sla_free(w->np);
    if (w->MZ != w->Z) sla_free(w->MZ);
    sla_free(w->Z);
    sla_free(w->c);
    sla_free(w);
    *ws = NULL;
}

static sla_status ws_create(const eig_vjp_block *B, eig_tie_ws **ws)
{
    int64_t n = B->P->n, batch = B->P->batch;
    eig_tie_ws *w = sla_calloc(1, sizeof *w, "tie search workspace");
    if (!w) return SLA_ENOMEM;
    *ws = w;
    w->n = n;
    w->batch = batch;
    w->r = sla_malloc((size_t)(batch * n), sizeof(double), "probe vectors");
    w->z = sla_malloc((size_t)(batch * n), sizeof(double), "probe vectors");
    w->t = sla_malloc((size_t)(batch * n), sizeof(double), "probe residuals");
    w->mz = B->P->has_M ? sla_malloc((size_t)(batch * n), sizeof(double), "M times probes") : NULL;
    w->rho = sla_malloc((size_t)batch, sizeof(double), "probe residual norms");
    w->probe = sla_malloc((size_t)batch, sizeof(int), "probe flags");
    w->np = sla_malloc((size_t)batch, sizeof(int64_t), "partner counts");
    w->c = sla_malloc((size_t)(B->k > MAX_PARTNERS ? B->k : MAX_PARTNERS), sizeof(double),
                      "projections");
    if (w->r && w->z && w->t && (w->mz || !B->P->has_M) && w->rho && w->probe && w->np && w->c)
        return SLA_OK;
    eig_vjp_partners_free(ws);
    return SLA_ENOMEM;
}

/* x ← x − Σ_j Zl_j (Zr_jᵀ x) over the m partner vectors (contiguous, stride n), twice. */
static void project_partners(const double *Zl, const double *Zr, int64_t n, int64_t m, double *x)
{
    for (int pass = 0; pass < 2 && m > 0; pass++)
        for (int64_t j = 0; j < m; j++) {
            double c = 0;
            for (int64_t q = 0; q < n; q++) c += Zr[j * n + q] * x[q];
            for (int64_t q = 0; q < n; q++) x[q] -= c * Zl[j * n + q];
        }
}

static double dot(int64_t n, const double *x, const double *y)
{
    double s = 0;
    for (int64_t q = 0; q < n; q++) s += x[q] * y[q];
    return s;
}

/* The right-hand sides of a step of inverse iteration for the elements with w->probe[b], from
 * their w->r (any vector): Q_Zᵀ r normalized, Q_Z the projection out of the block and the
 * partners found; zero for the others. An element whose r vanishes (nothing left outside the
 * block) stops probing. */
static void probe_prepare(const eig_vjp_block *B, eig_tie_ws *w)
{
    int64_t n = B->P->n, k = B->k;
    for (int64_t b = 0; b < w->batch; b++) {
        double *r = w->r + b * n;
        if (!w->probe[b]) { memset(r, 0, sizeof(double) * (size_t)n); continue; }
        const double *Vb = B->V + b * n * k, *MVb = B->MV ? B->MV + b * n * k : Vb;
        eig_project_out(MVb, Vb, n, k, r, w->c);
        if (w->Z) project_partners(w->MZ + b * MAX_PARTNERS * n, w->Z + b * MAX_PARTNERS * n, n,
                                   w->np[b], r);
        double nr = sqrt(dot(n, r, r));
        if (!(nr > 0)) { w->probe[b] = 0; memset(r, 0, sizeof(double) * (size_t)n); continue; }
        for (int64_t q = 0; q < n; q++) r[q] /= nr;
    }
}

/* The rest of the step, from w->z = (A − λ_i M)⁻¹ r: z ← Q_Z z, M-normalized (w->mz = M z), and
 * w->rho[b] = ‖A z − λ_i M z‖₂ / ‖M z‖₂. */
static sla_status probe_finish(const eig_vjp_block *B, int64_t i, eig_tie_ws *w)
{
    const eig_problem *P = B->P;
    int64_t n = P->n, k = B->k, batch = P->batch;
    double *mz = P->has_M ? w->mz : w->z;
    for (int64_t b = 0; b < batch; b++) {
        double *z = w->z + b * n;
        if (!w->probe[b]) { memset(z, 0, sizeof(double) * (size_t)n); continue; }
        const double *Vb = B->V + b * n * k, *MVb = B->MV ? B->MV + b * n * k : Vb;
        eig_project_out(Vb, MVb, n, k, z, w->c);
        if (w->Z) project_partners(w->Z + b * MAX_PARTNERS * n, w->MZ + b * MAX_PARTNERS * n, n,
                                   w->np[b], z);
    }
    if (P->has_M) SLA_TRY(sla_spmv(SLA_OP_N, 1.0, &P->Md, w->z, 1, 1, 0.0, w->mz));
    for (int64_t b = 0; b < batch; b++) {
        if (!w->probe[b]) continue;
        double *z = w->z + b * n, *mzb = mz + b * n;
        double nz = sqrt(fabs(dot(n, z, mzb)));
        /* a non-finite step decides nothing: never "no partner" with a success status */
        if (!isfinite(nz))
            return sla_error_set(SLA_ENONFINITE, B->api, "the inverse-iteration step for "
                                 "partners of λ_%lld = %.17g (batch %lld) is not finite: A − λ_%lld "
                                 "%s cannot be solved with", (long long)i, B->lam[b * k + i],
                                 (long long)b, (long long)i, P->has_M ? "M" : "I");
        if (!(nz > 0)) { w->probe[b] = 0; continue; }
        for (int64_t q = 0; q < n; q++) z[q] /= nz;
        if (P->has_M) for (int64_t q = 0; q < n; q++) mzb[q] /= nz;
    }
    SLA_TRY(sla_spmv(SLA_OP_N, 1.0, &P->Ad, w->z, 1, 1, 0.0, w->t));
    for (int64_t b = 0; b < batch; b++) {
        if (!w->probe[b]) continue;
        const double *t = w->t + b * n, *mzb = mz + b * n;
        double lambda = B->lam[b * k + i], res = 0;
        for (int64_t q = 0; q < n; q++) res += (t[q] - lambda * mzb[q]) * (t[q] - lambda * mzb[q]);
        w->rho[b] = sqrt(res / dot(n, mzb, mzb));
    }
    return SLA_OK;
}

/* One whole step on the factorization s. */
static sla_status inverse_step(const eig_vjp_block *B, int64_t i, sla_solver *s, eig_tie_ws *w)
{
    probe_prepare(B, w);
    SLA_TRY(sla_solver_solve(s, SLA_OP_N, 1, w->r, w->z, NULL));
    return probe_finish(B, i, w);
}

static sla_status partner_error(const eig_vjp_block *B, int64_t i, int64_t b, double rho, double c,
                                int too_many)
{
    int has_M = B->P->has_M;
    double lambda = B->lam[b * B->k + i], thr = B->tie * B->scale[b];
    if (too_many)
        return sla_error_set(SLA_EINVAL, B->api, "eigenvector gradient undefined for the repeated "
                             "eigenvalue λ_%lld = %.17g (batch %lld): more than %d of its partners "
                             "are outside the k = %lld computed eigenpairs; compute the whole "
                             "eigenspace (a larger k)", (long long)i, lambda, (long long)b,
                             MAX_PARTNERS, (long long)B->k);
    return sla_error_set(SLA_EINVAL, B->api, "eigenvector gradient undefined for the repeated "
                         "eigenvalue λ_%lld = %.17g (batch %lld), whose partner is not among the "
                         "k = %lld computed eigenpairs (a vector z outside them has ‖A z − λ_%lld "
                         "%sz‖/‖%sz‖ = %.3g ≤ %.3g): the loss depends on the choice of basis of "
                         "the eigenspace (zᵀg_%lld/(‖z‖‖g_%lld‖) = %.3g ≠ 0); compute the whole "
                         "eigenspace (a larger k) or use a loss of the eigenvalues only",
                         (long long)i, lambda, (long long)b, (long long)B->k, (long long)i,
                         has_M ? "M" : "", has_M ? "M" : "", rho, thr, (long long)i, (long long)i,
                         c);
}

/* Records the probe z_b as partner np[b] of element b (allocating the partner blocks). */
static sla_status add_partner(const eig_vjp_block *B, eig_tie_ws *w, int64_t b)
{
    int64_t n = w->n, batch = w->batch;
    if (!w->Z) {
        w->Z = sla_malloc((size_t)(batch * MAX_PARTNERS * n), sizeof(double), "partner vectors");
        if (!w->Z) return SLA_ENOMEM;
        w->MZ = w->Z;
        if (B->P->has_M) {
            w->MZ = sla_malloc((size_t)(batch * MAX_PARTNERS * n), sizeof(double),
                               "M times partner vectors");
            if (!w->MZ) { w->MZ = w->Z; return SLA_ENOMEM; }
        }
    }
    int64_t j = w->np[b]++;
    memcpy(w->Z + (b * MAX_PARTNERS + j) * n, w->z + b * n, sizeof(double) * (size_t)n);
    if (B->P->has_M)
        memcpy(w->MZ + (b * MAX_PARTNERS + j) * n, w->mz + b * n, sizeof(double) * (size_t)n);
    return SLA_OK;
}

/* The start of probe `round` of element b for eigenvalue i: fixed, so that results do not
 * depend on thread counts or on the other elements. */
static void probe_start(eig_tie_ws *w, int64_t b, int64_t i, int64_t round)
{
    uint64_t state = eig_seed(b) ^ (0xD1B54A32D192ED03ull * (uint64_t)(i + 1)) ^
                     (0x9E3779B97F4A7C15ull * (uint64_t)round);
    eig_random(w->r + b * w->n, w->n, &state);
}

sla_status eig_vjp_probe_start(const eig_vjp_block *B, int64_t i, const int *on, eig_tie_ws **ws,
                               const double **r)
{
    *r = NULL;
    if (B->k >= B->P->n) return SLA_OK;             /* nothing outside the block */
    if (!*ws) SLA_TRY(ws_create(B, ws));
    eig_tie_ws *w = *ws;
    memset(w->np, 0, sizeof(int64_t) * (size_t)w->batch);
    for (int64_t b = 0; b < w->batch; b++) {
        w->probe[b] = on[b];
        if (on[b]) probe_start(w, b, i, 0);
    }
    probe_prepare(B, w);
    *r = w->r;
    return SLA_OK;
}

sla_status eig_vjp_partners(const eig_vjp_block *B, int64_t i, sla_solver *s, const int *on,
                            const double *z0, double *y, eig_tie_ws *w)
{
    const eig_problem *P = B->P;
    int64_t n = P->n, k = B->k, batch = P->batch;
    if (!w || !z0) return SLA_OK;                   /* k = n: no probe */
    memcpy(w->z, z0, sizeof(double) * (size_t)(batch * n));
    SLA_TRY(probe_finish(B, i, w));
    for (int64_t round = 1;; round++) {
        int found = 0;
        for (int64_t b = 0; b < batch; b++) {
            if (!w->probe[b]) continue;
            if (w->rho[b] > B->tie * B->scale[b]) { w->probe[b] = 0; continue; }
            found = 1;
            /* a partner: refine it by one more step from z (from M z with M) */
            memcpy(w->r + b * n, P->has_M ? w->mz + b * n : w->z + b * n,
                   sizeof(double) * (size_t)n);
        }
        if (!found) break;
        SLA_TRY(inverse_step(B, i, s, w));
        for (int64_t b = 0; b < batch; b++) {
            if (!w->probe[b]) continue;
            const double *z = w->z + b * n;
            double gz = 0;
            for (int64_t q = 0; q < n; q++) gz += z[q] * B->G[(b * n + q) * k + i];
            double c = gz / (sqrt(dot(n, z, z)) * B->gnorm[b * k + i]);
            if (!(fabs(c) <= B->tie)) return partner_error(B, i, b, w->rho[b], c, 0);
            if (w->np[b] == MAX_PARTNERS) return partner_error(B, i, b, 0, 0, 1);
            SLA_TRY(add_partner(B, w, b));
            if (w->np[b] == n - k) w->probe[b] = 0;     /* the whole complement is a partner */
            else probe_start(w, b, i, round);
        }
        /* the next probe, in the complement of the partners found */
        SLA_TRY(inverse_step(B, i, s, w));
    }
    /* the partners' components of y are the solve's error: remove them */
    for (int64_t b = 0; b < batch && w->Z; b++)
        if (on[b] && w->np[b] > 0)
            project_partners(w->Z + b * MAX_PARTNERS * n, w->MZ + b * MAX_PARTNERS * n, n,
                             w->np[b], y + b * n);
    return SLA_OK;
}
