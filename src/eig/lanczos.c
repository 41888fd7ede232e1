/* Block thick-restart Lanczos (symmetric Krylov–Schur) with full reorthogonalization.
 *
 * Keeps an orthonormal basis V (j columns) and the relation  OP·V = V·H + Rb·E  with H = VᵀOP V
 * (j × j, symmetric), Rb the next block (p orthonormal columns ⊥ V) and E its coupling (p × j).
 * A step applies OP to Rb, orthogonalizes the result against [V, Rb] twice (classical
 * Gram–Schmidt twice) and orthonormalizes it with rank detection (a vanishing direction is an
 * invariant subspace: it is replaced by a random one and gets zero coupling, which is how the
 * other copies of a repeated eigenvalue enter the basis). The Ritz pairs (θ, V y) of H have
 * residuals ‖OP V y − θ V y‖ = ‖E y‖. When the basis is full (ncv), the thick restart keeps the
 * kk best Ritz vectors: V ← V·Y_kk, H ← diag(θ_kk), E ← E·Y_kk (Wu & Simon 2000; Stewart 2001).
 * A block of p > 1 vectors finds eigenvalues of multiplicity up to p without relying on
 * rounding errors. OP is A (regular mode) or (A − σI)⁻¹ (shift-invert, λ = σ + 1/θ).
 * Generalized problem: OP = (A − σM)⁻¹M, self-adjoint in ⟨x, y⟩_M = xᵀMy, so the same recurrence
 * runs with M-inner products (V M-orthonormal, H = VᵀM·OP·V; Ericsson & Ruhe 1980, Grimes, Lewis
 * & Simon 1994): every projection and Gram matrix multiplies by M first.
 * The batch advances together: one batched operator application per step. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eig/eig_internal.h"

#define DROP 1e-12

typedef struct ks_elem {
    double *V;          /* n × (ncv + p) */
    double *H;          /* ncv × ncv (ld ncv) */
    double *E;          /* p × ncv (ld p) */
    double *Y, *theta;  /* ncv × ncv eigenvectors of H, ncv values */
    double *h, *Bm;     /* (ncv + p) × p projections, p × p */
    double *tmp;        /* n × ncv restart product */
    int64_t *order;     /* ncv: Ritz indices, best first */
    double *Z;          /* n × (ncv + p): M·V (generalized problem), else NULL */
    const sla_matrix *Mb; /* float64 view of M_b for the M-inner product, or NULL */
    sla_matrix mview;
    double *est;        /* ncv: residual estimates (relative, ‖A x − λ x‖/‖A‖₁) */
    int64_t j;
    double tight;       /* factor on the tolerance after a failed true-residual check */
    int done;
    uint64_t seed;
} ks_elem;

static void ks_free(ks_elem *e)
{
    sla_free(e->V); sla_free(e->H); sla_free(e->E); sla_free(e->Y); sla_free(e->theta);
    sla_free(e->h); sla_free(e->Bm); sla_free(e->tmp); sla_free(e->order); sla_free(e->est);
    sla_free(e->Z);
    memset(e, 0, sizeof *e);
}

static sla_status ks_alloc(ks_elem *e, const eig_problem *P, int64_t ncv, int64_t p, int64_t b)
{
    int64_t n = P->n;
    memset(e, 0, sizeof *e);
    if (P->has_M) {
        e->mview = eig_mass_view(P, b);
        e->Mb = &e->mview;
        e->Z = sla_malloc((size_t)(n * (ncv + p)), sizeof(double), "M times basis");
        if (!e->Z) return SLA_ENOMEM;
    }
    e->V = sla_malloc((size_t)(n * (ncv + p)), sizeof(double), "Lanczos basis");
    e->H = sla_calloc((size_t)(ncv * ncv), sizeof(double), "projected matrix");
    e->E = sla_calloc((size_t)(p * ncv), sizeof(double), "coupling");
    e->Y = sla_malloc((size_t)(ncv * ncv), sizeof(double), "Ritz vectors");
    e->theta = sla_malloc((size_t)ncv, sizeof(double), "Ritz values");
    e->h = sla_malloc((size_t)((ncv + p) * p), sizeof(double), "projections");
    e->Bm = sla_malloc((size_t)(p * p), sizeof(double), "block coupling");
    e->tmp = sla_malloc((size_t)(n * ncv), sizeof(double), "restart product");
    e->order = sla_malloc((size_t)ncv, sizeof(int64_t), "Ritz order");
    e->est = sla_malloc((size_t)ncv, sizeof(double), "residual estimates");
    e->seed = eig_seed(b);
    e->tight = 1.0;
    if (!e->V || !e->H || !e->E || !e->Y || !e->theta || !e->h || !e->Bm || !e->tmp ||
        !e->order || !e->est) {
        ks_free(e);
        return SLA_ENOMEM;
    }
    return SLA_OK;
}

static double want_key(eig_want w, double theta)
{
    return w == EIG_WANT_LA ? theta : w == EIG_WANT_SA ? -theta : fabs(theta);
}

/* Ritz indices best first (insertion sort: j ≤ ncv is small; ties keep index order). */
static void order_ritz(eig_want w, const double *theta, int64_t j, int64_t *order)
{
    for (int64_t i = 0; i < j; i++) {
        int64_t q = i;
        while (q > 0 && want_key(w, theta[order[q - 1]]) < want_key(w, theta[i])) {
            order[q] = order[q - 1];
            q--;
        }
        order[q] = i;
    }
}

/* Ritz pairs of H (j × j), ordered best first, with residual estimates relative to ‖A‖₁
 * (‖A‖₁ + |λ|‖M‖₁ with M); si NULL in regular mode. */
static sla_status ritz(ks_elem *e, eig_want want, int64_t j, int64_t ncv, int64_t p,
                       const eig_problem *P, int64_t b, const eig_si *si)
{
    double normA = P->norm1[b];
    double sig = si ? fabs(si->sigma[b]) * (P->has_M ? P->normM[b] : 1.0) : -1.0;
    for (int64_t c = 0; c < j; c++) memcpy(e->Y + c * j, e->H + c * ncv, sizeof(double) * (size_t)j);
    SLA_TRY(eig_syev(j, e->Y, e->theta));
    order_ritz(want, e->theta, j, e->order);
    for (int64_t q = 0; q < j; q++) {
        int64_t i = e->order[q];
        double r = 0;
        for (int64_t row = 0; row < p; row++) {
            double t = 0;
            for (int64_t c = 0; c < j; c++) t += e->E[row + c * p] * e->Y[c + i * j];
            r += t * t;
        }
        r = sqrt(r);
        /* shift-invert: ‖A x − λ M x‖ = ‖(A − σM) r‖/|θ| ≤ (‖A‖₁ + |σ|‖M‖₁)·‖E y‖/|θ| (the
         * M-norm of r stands for its 2-norm: an estimate, checked by verify) */
        if (sig >= 0) r = fabs(e->theta[i]) > 0 ? (normA + sig) * r / fabs(e->theta[i]) : INFINITY;
        double lam = si ? si->sigma[b] + si->sgn / e->theta[i] : e->theta[i];
        e->est[q] = P->has_M ? r / eig_res_scale(P, b, lam) : normA > 0 ? r / normA : r;
    }
    return SLA_OK;
}

/* The eigenvalue of A for the Ritz value θ of OP. */
static double to_lambda(const eig_si *si, int64_t b, double theta)
{
    return si ? si->sigma[b] + si->sgn / theta : theta;
}

/* The best k Ritz vectors into X (n × k) and their eigenvalues (lambda may be NULL). */
static void extract(const ks_elem *e, const eig_si *si, int64_t b, int64_t n, int64_t j, int64_t k,
                    double *X, double *lambda)
{
    memset(X, 0, sizeof(double) * (size_t)(n * k));
    for (int64_t q = 0; q < k; q++) {
        int64_t i = e->order[q];
        eig_nn(n, j, 1, 1.0, e->V, e->Y + i * j, j, X + q * n);
        if (lambda) lambda[q] = to_lambda(si, b, e->theta[i]);
    }
}

/* True residuals of the extracted pairs of one batch element (k SpMVs, 2k with M): ok counts
 * the pairs with ‖A x − λ M x‖ ≤ tol·scale(λ)·‖x‖. y, z: n each. */
static sla_status verify(const eig_problem *P, int64_t b, const double *X, const double *lambda,
                         int64_t k, double tol, double *y, double *z, int64_t *ok)
{
    int64_t n = P->n;
    sla_matrix Ab = sla_matrix_view(P->p, SLA_FLOAT64, 1, (const double *)P->Ad.values + b * P->nnz);
    *ok = 0;
    for (int64_t q = 0; q < k; q++) {
        SLA_TRY(sla_spmv(SLA_OP_N, 1.0, &Ab, X + q * n, 0, 1, 0.0, y));
        const double *mx = X + q * n;
        if (P->has_M) {
            sla_matrix Mb = eig_mass_view(P, b);
            SLA_TRY(sla_spmv(SLA_OP_N, 1.0, &Mb, X + q * n, 0, 1, 0.0, z));
            mx = z;
        }
        double r = 0, nx = 0, thresh = tol * eig_res_scale(P, b, lambda[q]);
        for (int64_t i = 0; i < n; i++) {
            double d = y[i] - lambda[q] * mx[i];
            r += d * d;
            nx += X[q * n + i] * X[q * n + i];
        }
        if (sqrt(r) <= thresh * sqrt(nx)) (*ok)++;
    }
    return SLA_OK;
}

/* One step: W = OP·Rb already in V[:, j+p .. j+2p); orthogonalize and extend H and E. */
static sla_status expand(ks_elem *e, int64_t n, int64_t ncv, int64_t p)
{
    int64_t j = e->j, jp = j + p;
    double *W = e->V + jp * n;
    double *h = e->h;
    /* classical Gram–Schmidt twice; the coefficients are summed */
    double *acc = e->tmp;   /* jp × p scratch (tmp is n × ncv ≥ jp × p) */
    memset(acc, 0, sizeof(double) * (size_t)(jp * p));
    for (int pass = 0; pass < 2; pass++) {
        /* M-inner product with M: h = Vᵀ (M W) = (M V)ᵀ W = Zᵀ W */
        eig_tn(n, jp, p, e->Mb ? e->Z : e->V, W, h);
        eig_nn(n, jp, p, -1.0, e->V, h, jp, W);
        for (int64_t q = 0; q < jp * p; q++) acc[q] += h[q];
    }
    for (int64_t c = 0; c < p; c++) {
        for (int64_t r = 0; r < j; r++) {
            e->H[r + (j + c) * ncv] = acc[r + c * jp];
            e->H[(j + c) + r * ncv] = acc[r + c * jp];
        }
        for (int64_t r = 0; r < p; r++) {
            double a = 0.5 * (acc[(j + r) + c * jp] + acc[(j + c) + r * jp]);
            e->H[(j + r) + (j + c) * ncv] = a;
        }
    }
    int64_t kept;
    SLA_TRY(eig_orth_m(n, e->Mb, e->V, e->Z, jp, W, p, DROP, 1, &e->seed, e->Bm, &kept));
    if (e->Mb) SLA_TRY(eig_mass_apply(e->Mb, n, p, W, e->Z + jp * n));
    memset(e->E, 0, sizeof(double) * (size_t)(p * ncv));
    for (int64_t c = 0; c < p; c++)
        for (int64_t r = 0; r < p; r++) e->E[r + (j + c) * p] = e->Bm[r + c * p];
    e->j = jp;
    return SLA_OK;
}

/* Thick restart: keep the kk best Ritz vectors and move the residual block behind them. */
static sla_status restart(ks_elem *e, int64_t n, int64_t ncv, int64_t p, int64_t kk)
{
    int64_t j = e->j;
    double *Ysel = sla_malloc((size_t)(j * kk), sizeof(double), "kept Ritz vectors");
    double *En = sla_malloc((size_t)(p * kk), sizeof(double), "coupling");
    if (!Ysel || !En) { sla_free(Ysel); sla_free(En); return SLA_ENOMEM; }
    memset(e->tmp, 0, sizeof(double) * (size_t)(n * kk));
    for (int64_t q = 0; q < kk; q++)
        memcpy(Ysel + q * j, e->Y + e->order[q] * j, sizeof(double) * (size_t)j);
    eig_nn(n, j, kk, 1.0, e->V, Ysel, j, e->tmp);
    memcpy(e->V, e->tmp, sizeof(double) * (size_t)(n * kk));
    memmove(e->V + kk * n, e->V + j * n, sizeof(double) * (size_t)(n * p));
    if (e->Z) {
        /* Z = M V follows V: the same combinations */
        memset(e->tmp, 0, sizeof(double) * (size_t)(n * kk));
        eig_nn(n, j, kk, 1.0, e->Z, Ysel, j, e->tmp);
        memcpy(e->Z, e->tmp, sizeof(double) * (size_t)(n * kk));
        memmove(e->Z + kk * n, e->Z + j * n, sizeof(double) * (size_t)(n * p));
    }
    for (int64_t q = 0; q < kk; q++)
        for (int64_t r = 0; r < p; r++) {
            double t = 0;
            for (int64_t c = 0; c < j; c++) t += e->E[r + c * p] * Ysel[c + q * j];
            En[r + q * p] = t;
        }
    memset(e->H, 0, sizeof(double) * (size_t)(ncv * ncv));
    memset(e->E, 0, sizeof(double) * (size_t)(p * ncv));
    for (int64_t q = 0; q < kk; q++) e->H[q + q * ncv] = e->theta[e->order[q]];
    memcpy(e->E, En, sizeof(double) * (size_t)(p * kk));
    e->j = kk;
    sla_free(Ysel);
    sla_free(En);
    return SLA_OK;
}

/* Starts element e again from the first p columns of V (after a restart: its best Ritz
 * vectors for the old operator). */
static sla_status reset(ks_elem *e, int64_t n, int64_t ncv, int64_t p)
{
    int64_t kept;
    SLA_TRY(eig_orth_m(n, e->Mb, NULL, NULL, 0, e->V, p, DROP, 1, &e->seed, NULL, &kept));
    if (e->Mb) SLA_TRY(eig_mass_apply(e->Mb, n, p, e->V, e->Z));
    memset(e->H, 0, sizeof(double) * (size_t)(ncv * ncv));
    memset(e->E, 0, sizeof(double) * (size_t)(p * ncv));
    e->j = 0;
    e->tight = 1.0;
    return SLA_OK;
}

/* Moving a verified shift toward the wanted end of the spectrum (only when the factorization
 * proved sgn·(A − σI) SPD, so that every wanted eigenvalue lies on one side of σ and the
 * Ritz values λ̂ are bounds: λ̂_1 ≥ λ_1 for SA). The new shift sits below λ̂_1 by the spread of
 * the wanted Ritz values (at least a tenth of the gap to the next one), so that the convergence
 * ratio (λ_k − σ)/(λ_{k+1} − σ) improves; it is tried only when that ratio exceeds 0.9 (slow
 * convergence: the restart from scratch costs a basis) and accepted only if it at least halves the
 * distance and a new Cholesky factorization proves it still below the spectrum (else it backs
 * off ×4, three times). Elements whose shift moved restart from their p best Ritz vectors.
 * Called right after the thick restart (V starts with the kept Ritz vectors, best first). */
static sla_status reshift(const eig_problem *P, eig_si *si, ks_elem *E, const int *want_move,
                          int64_t k, int64_t n, int64_t ncv, int64_t p, double *newsig,
                          int64_t *moved)
{
    int64_t batch = P->batch;
    double *dist = sla_malloc((size_t)batch, sizeof(double), "shift distances");
    double *used = sla_malloc((size_t)batch, sizeof(double), "shifts");
    if (!dist || !used) { sla_free(dist); sla_free(used); return SLA_ENOMEM; }
    int any = 0;
    for (int64_t b = 0; b < batch; b++) {
        ks_elem *e = &E[b];
        dist[b] = 0;
        newsig[b] = si->sigma[b];
        if (!want_move[b]) continue;
        double l0 = to_lambda(si, b, e->theta[e->order[0]]);
        double lk = to_lambda(si, b, e->theta[e->order[k - 1]]);
        double lk1 = to_lambda(si, b, e->theta[e->order[k]]);
        double d1 = fabs(l0 - si->sigma[b]);
        double d = fmax(fmax(fabs(lk - l0), 0.1 * fabs(lk1 - l0)), 1e-12 * P->norm1[b]);
        /* only when convergence is slow: (λ_k − σ)/(λ_{k+1} − σ) close to 1 */
        double ratio = fabs(lk - si->sigma[b]) / fabs(lk1 - si->sigma[b]);
        if (d < 0.5 * d1 && ratio > 0.9) { dist[b] = d; any = 1; }
    }
    sla_status st = SLA_OK;
    int tried = 0;
    *moved = 0;
    for (int attempt = 0; any && attempt < 4; attempt++) {
        any = 0;
        for (int64_t b = 0; b < batch; b++) {
            newsig[b] = si->sigma[b];
            if (dist[b] <= 0) continue;
            double l0 = to_lambda(si, b, E[b].theta[E[b].order[0]]);
            if (dist[b] >= 0.5 * fabs(l0 - si->sigma[b])) { dist[b] = 0; continue; }
            newsig[b] = l0 - si->sgn * dist[b];
            any = 1;
        }
        if (!any) break;
        tried = 1;
        st = eig_factor(P, &si->S, newsig, si->sgn, si->fopt, EIG_SHIFT_VERIFIED, &si->solver, used,
                        SLA_EIG_SHIFT_MARGIN);
        si->factorizations++;
        if (st == SLA_OK) {
            for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
                if (newsig[b] == si->sigma[b]) continue;
                si->sigma[b] = newsig[b];
                st = reset(&E[b], n, ncv, p);
                (*moved)++;
            }
            break;
        }
        if (st != SLA_ENOTSPD) break;
        sla_clear_error();
        st = SLA_OK;
        for (int64_t b = 0; b < batch; b++) dist[b] *= 4;
    }
    if (st == SLA_OK && tried && *moved == 0) {
        /* every attempt crossed the spectrum: factor the old shifts again */
        st = eig_factor(P, &si->S, si->sigma, si->sgn, si->fopt, EIG_SHIFT_VERIFIED, &si->solver, used,
                        SLA_EIG_SHIFT_MARGIN);
        si->factorizations++;
    }
    sla_free(dist);
    sla_free(used);
    return st;
}

sla_status eig_lanczos(const eig_problem *P, eig_op *op, eig_si *si, const eig_lanczos_opts *o,
                       eig_result *R)
{
    int64_t n = P->n, batch = P->batch, k = R->k, p = o->block, ncv = o->ncv;
    if (p < 1 || ncv < k + p || ncv + p > n)
        return EIG_FAIL(SLA_EINVAL, "Lanczos needs k + block ≤ ncv ≤ n − block (k = %lld, block "
                        "= %lld, ncv = %lld, n = %lld); use the dense method for small n",
                        (long long)k, (long long)p, (long long)ncv, (long long)n);
    /* keep about half of the unwanted part at a restart (Wu & Simon's default) */
    int64_t kk = k + (ncv - k) / 2;
    if (kk > ncv - p) kk = ncv - p;
    ks_elem *E = sla_calloc((size_t)batch, sizeof *E, "Lanczos state");
    double **X = sla_calloc((size_t)(2 * batch), sizeof(double *), "block pointers");
    int64_t *cnt = sla_calloc((size_t)batch, sizeof(int64_t), "block widths");
    int64_t *restarts = sla_calloc((size_t)batch, sizeof(int64_t), "restart counts");
    int *move = sla_calloc((size_t)batch, sizeof(int), "shift requests");
    double *y = sla_malloc((size_t)(2 * n), sizeof(double), "residual vectors");
    double *newsig = sla_malloc((size_t)batch, sizeof(double), "shifts");
    sla_status st = (E && X && cnt && restarts && move && y && newsig) ? SLA_OK : SLA_ENOMEM;
    double **Y = X ? X + batch : NULL;
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) st = ks_alloc(&E[b], P, ncv, p, b);
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        ks_elem *e = &E[b];
        st = eig_start_block_m(n, e->Mb, p, o->v0 ? o->v0 + b * n * o->nv0 : NULL, o->nv0, e->V,
                               &e->seed);
        if (st == SLA_OK && e->Mb) st = eig_mass_apply(e->Mb, n, p, e->V, e->Z);
        e->j = 0;
    }
    int64_t steps = 0, nmoved = 0, maxrestarts = 0;
    while (st == SLA_OK) {
        int any = 0;
        for (int64_t b = 0; b < batch; b++) {
            ks_elem *e = &E[b];
            X[b] = Y[b] = NULL;
            if (e->done) continue;
            X[b] = e->V + e->j * n;
            Y[b] = e->V + (e->j + p) * n;
            cnt[b] = p;
            any = 1;
        }
        if (!any) break;
        st = eig_op_apply(op, cnt, X, Y);
        steps++;
        int ask = 0;
        for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
            ks_elem *e = &E[b];
            move[b] = 0;
            if (!X[b]) continue;
            st = expand(e, n, ncv, p);
            if (st == SLA_OK)
                st = ritz(e, o->want, e->j, ncv, p, P, b, si);
            if (st != SLA_OK) break;
            int64_t nc = 0;
            if (e->j >= k)
                for (int64_t q = 0; q < k; q++) nc += e->est[q] <= o->tol * e->tight;
            R->nconv[b] = nc;
            if (nc == k) {
                /* the estimates say converged: check the true residuals once */
                double *Xb = R->X + b * k * n, *lb = R->lambda + b * k;
                extract(e, si, b, n, e->j, k, Xb, lb);
                int64_t ok;
                st = verify(P, b, Xb, lb, k, o->tol, y, y + n, &ok);
                R->spmv += P->has_M ? 2 * k : k;
                if (st == SLA_OK && ok == k) { e->done = 1; continue; }
                e->tight *= 0.01;
            }
            if (e->j + p > ncv) {
                if (restarts[b] >= o->maxiter) { e->done = 1; continue; }
                /* a verified shift may move closer before the restart (at most 10 times) */
                move[b] = si && si->verified && o->adaptive && e->j > k && nmoved < 10 * batch;
                ask |= move[b];
                st = restart(e, n, ncv, p, kk);
                restarts[b]++;
                if (restarts[b] > maxrestarts) maxrestarts = restarts[b];
            }
        }
        if (st == SLA_OK && ask) {
            int64_t moved = 0;
            st = reshift(P, si, E, move, k, n, ncv, p, newsig, &moved);
            nmoved += moved;
        }
    }
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        ks_elem *e = &E[b];
        if (R->nconv[b] < k && e->j >= k)
            extract(e, si, b, n, e->j, k, R->X + b * k * n, R->lambda + b * k);
    }
    R->iterations = steps;
    R->restarts = maxrestarts;
    R->op_apps += op->count;
    if (st == SLA_OK)
        snprintf(R->what, sizeof R->what, "thick-restart Lanczos (block %lld, ncv %lld) on %s%s",
                 (long long)p, (long long)ncv,
                 !si ? "A" : P->has_M ? (si->sgn > 0 ? "(A − σM)⁻¹M" : "(σM − A)⁻¹M")
                                      : si->sgn > 0 ? "(A − σI)⁻¹" : "(σI − A)⁻¹",
                 nmoved ? ", shift moved" : "");
    for (int64_t b = 0; E && b < batch; b++) ks_free(&E[b]);
    sla_free(E);
    sla_free(X);
    sla_free(cnt);
    sla_free(restarts);
    sla_free(move);
    sla_free(y);
    sla_free(newsig);
    return st;
}
