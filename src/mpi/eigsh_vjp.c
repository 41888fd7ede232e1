/* sla_dist_eigsh_vjp: the adjoint of (Λ, V) = sla_dist_eigsh(A[, M]) — the math of the serial
 * sla_eigsh_vjp / sla_eigsh_generalized_vjp (src/eig/vjp.c) on distributed vectors.
 *
 * Eigenvalues (Hellmann–Feynman): ∂λ_i/∂a_s = v_i[r_s]·v_i[c_s].
 * Eigenvectors: ∂L/∂a_s = −w_i[r_s]·v_i[c_s] with w_i = (A − λ_i M)⁺ g_i. Its part inside the
 * computed block is explicit, Σ_{j≠i} v_j (v_jᵀg_i)/(λ_j − λ_i), with the serial tie rule
 * (sla_eig_vjp_in_block: one source); the part outside is y_i = Q (A − λ_i M)⁻¹ Qᵀ g_i with
 * Q = I − V VᵀM. The serial VJP takes it from a direct factorization of the numerically
 * singular A − λ_i M (inverse iteration's mechanism); here it is MINRES (libsla's one source
 * through sla_krylov_run on the distributed space) on the symmetric projected operator
 *   H_i = Qᵀ (A − λ_i M) Q,   H_i x = Qᵀ g_i / ‖Qᵀ g_i‖,   y_i = Q x ‖Qᵀ g_i‖,
 * which is nonsingular on the complement of the block unless an uncomputed eigenvalue μ ties
 * with λ_i (its null space is span V plus the partners' eigenvectors; the right-hand side is
 * orthogonal to span V, so that part is consistent and removed by Q).
 * Ties with an eigenvalue outside the block (serial: inverse iteration, vjp_tie.c) show here as
 *  - a solve that cannot converge: g_i has a component along an exact partner u, the system is
 *    inconsistent (MINRES's residual stalls at |uᵀh|). eigsh computes the k extreme
 *    eigenvalues, so a partner outside can tie only with an end of the block: a solve for such
 *    a λ_i that does not converge is refused with SLA_EINVAL (the serial error); any other one
 *    returns SLA_NOT_CONVERGED (a warning; the gradient from MINRES's best iterate);
 *  - a converged solve with ‖(A − λ_i M) y‖/‖M y‖ = 1/‖M Q x‖ ≤ tie·scale (a near tie the
 *    solve resolved): the unit right-hand side needed a solution that large, so some μ outside
 *    the block has |μ − λ_i| ≤ tie·scale and the loss sees its eigenvector: SLA_EINVAL, as the
 *    serial VJP.
 * Both read reduced values only: the same status and message on every rank. A partner the loss
 * does not see (g_i ⊥ u) leaves the system consistent and MINRES, started at 0, does not build
 * its component: the serial result (which removes it).
 * With M: ∂L/∂M = Σ_i (λ_i w_i − ½ (g_iᵀ v_i) v_i − gλ_i λ_i v_i) v_iᵀ on M's pattern.
 * Every pattern outer product is local with the ghost values of V (sla_dist_spmv_vjp: one
 * forward halo exchange). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mpi/deig.h"

#define VJP "sla_dist_eigsh_vjp"

/* MINRES's target: the unit right-hand side to 1e-13 (the serial direct solve is exact to
 * rounding, and the gradients must agree to 1e-10) */
#define SOLVE_RTOL 1e-13
#define MAXITER_CAP 100000

/* The data of one batch element. */
typedef struct elem {
    MPI_Comm comm;
    int has_M;
    int64_t n, N, k;
    const double *lam;          /* [k] */
    const double *V, *MV, *G;   /* [n][k] row-major; MV = M V (V without M) */
    const double *gnorm;        /* [k] */
    double scale, tie;          /* the tie bound is tie·scale */
} elem;

/* ---- the projected operator H_i = Qᵀ (A − λ_i M) Q ---- */

typedef struct proj_op {
    sla_operator op;
    dist_space space;
    dist_operator a, m;         /* A_b and M_b (m only with M) */
    const elem *e;
    double lambda;
    double *t, *u, *c;          /* [n], [n], [2k] */
} proj_op;

/* x ← x − Vl (Vrᵀ x), twice (as the serial eig_project_out): Q is (V, MV), Qᵀ is (MV, V).
 * Collective: one sum of k values per pass. */
static sla_status project(const elem *e, const double *Vl, const double *Vr, double *x,
                          double *c)
{
    int64_t n = e->n, k = e->k;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t j = 0; j < k; j++) c[j] = 0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < k; j++) c[j] += Vr[r * k + j] * x[r];
        SLA_TRY(sla_dist_allsum(e->comm, (int)k, c, c + k));
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < k; j++) x[r] -= Vl[r * k + j] * c[k + j];
    }
    return SLA_OK;
}

/* y = Qᵀ (A − λ M) Q x. Every rank runs the same collectives; errors of the SpMVs are agreed
 * inside them. */
static sla_status proj_apply(const sla_operator *A, sla_op op, const void *xv, void *yv)
{
    (void)op;                   /* symmetric */
    proj_op *p = A->ctx;
    const elem *e = p->e;
    double *y = yv;
    memcpy(p->t, xv, sizeof(double) * (size_t)e->n);
    SLA_TRY(project(e, e->V, e->MV, p->t, p->c));
    SLA_TRY(p->a.op.apply(&p->a.op, SLA_OP_N, p->t, p->u));
    if (e->has_M) SLA_TRY(p->m.op.apply(&p->m.op, SLA_OP_N, p->t, y));
    else memcpy(y, p->t, sizeof(double) * (size_t)e->n);
    for (int64_t r = 0; r < e->n; r++) y[r] = p->u[r] - p->lambda * y[r];
    return project(e, e->MV, e->V, y, p->c);
}

static void proj_free(proj_op *p)
{
    dist_operator_free(&p->a);
    if (p->e && p->e->has_M) dist_operator_free(&p->m);
    sla_free(p->t);
    sla_free(p->u);
    sla_free(p->c);
}

/* Builds H for batch element b (bm: M's element). Collective (agreed). */
static sla_status proj_init(proj_op *p, const elem *e, const sla_dist_matrix *A, int64_t b,
                            const sla_dist_matrix *M, int64_t bm)
{
    memset(p, 0, sizeof *p);
    p->e = e;
    dist_space_init(&p->space, e->comm, e->n, SLA_FLOAT64, 16.0 * (double)e->n);
    p->op.domain = p->op.range = &p->space.V;
    p->op.ctx = p;
    p->op.apply = proj_apply;
    p->op.threading = SLA_THREADS_CALLER;
    p->t = sla_malloc((size_t)(e->n + 1), sizeof(double), "projected vector");
    p->u = sla_malloc((size_t)(e->n + 1), sizeof(double), "projected product");
    p->c = sla_malloc((size_t)(2 * e->k), sizeof(double), "projections");
    sla_status st = (p->t && p->u && p->c) ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) st = dist_operator_init(&p->a, A, b, 0, VJP);
    if (st == SLA_OK && M) st = dist_operator_init(&p->m, M, bm, 0, VJP);
    st = dist_agree(e->comm, VJP, st);
    if (st != SLA_OK) proj_free(p);
    return st;
}

/* ---- the out-of-block part ---- */

static sla_status norm2(const elem *e, const double *x, double *nrm)
{
    double s[2] = {0, 0};
    for (int64_t r = 0; r < e->n; r++) s[0] += x[r] * x[r];
    SLA_TRY(sla_dist_allsum(e->comm, 1, s, s + 1));
    *nrm = sqrt(s[1]);
    return SLA_OK;
}

static sla_status tie_error(const elem *e, int64_t i, int64_t b, double rho)
{
    return sla_error_set(SLA_EINVAL, VJP, "eigenvector gradient undefined for the repeated "
                         "eigenvalue λ_%lld = %.17g (batch %lld), whose partner is not among the "
                         "k = %lld computed eigenpairs (the projected solve's solution z has "
                         "‖(A − λ_%lld %s)z‖/‖%sz‖ = %.3g ≤ %.3g, and the loss depends on it): the "
                         "loss depends on the choice of basis of the eigenspace; compute the "
                         "whole eigenspace (a larger k) or use a loss of the eigenvalues only",
                         (long long)i, e->lam[i], (long long)b, (long long)e->k, (long long)i,
                         e->has_M ? "M" : "I", e->has_M ? "M" : "", rho, e->tie * e->scale);
}

/* y = Q x: the solve's solution taken into the complement, and the tie test on it. M y is
 * formed in p->u (the standard problem: y itself). */
static sla_status finish_solution(proj_op *p, double *x, double *rho)
{
    const elem *e = p->e;
    SLA_TRY(project(e, e->V, e->MV, x, p->c));
    const double *my = x;
    if (e->has_M) {
        SLA_TRY(p->m.op.apply(&p->m.op, SLA_OP_N, x, p->u));
        my = p->u;
    }
    double nm;
    SLA_TRY(norm2(e, my, &nm));
    *rho = nm > 0 ? 1.0 / nm : INFINITY;
    return SLA_OK;
}

/* W[:, i] += y_i for every i with a nonzero cotangent; *warn = SLA_NOT_CONVERGED (with its
 * message) when a solve stopped short. */
static sla_status out_of_block(proj_op *p, int64_t b, double *W, sla_status *warn)
{
    const elem *e = p->e;
    int64_t n = e->n, k = e->k;
    double *h = sla_malloc((size_t)(n + 1), sizeof(double), "right-hand side");
    double *x = sla_malloc((size_t)(n + 1), sizeof(double), "solution");
    sla_status st = dist_agree(e->comm, VJP, (h && x) ? SLA_OK : SLA_ENOMEM);
    sla_krylov_params kp;
    memset(&kp, 0, sizeof kp);
    kp.rtol = SOLVE_RTOL;
    /* exact arithmetic needs N − k + 1 steps, rounding (Lanczos' lost orthogonality) more; the
     * cap bounds what a tie with an uncomputed eigenvalue (a solve that cannot converge) costs */
    kp.maxiter = e->N < MAXITER_CAP / 10 ? 10 * e->N + 100 : MAXITER_CAP;
    kp.monitor_every = 1;
    kp.batch_index = b;
    for (int64_t i = 0; i < k && st == SLA_OK; i++) {
        if (e->gnorm[i] == 0) continue;
        for (int64_t q = 0; q < n; q++) h[q] = e->G[q * k + i];
        st = project(e, e->MV, e->V, h, p->c);                  /* h = Qᵀ g_i */
        double nh = 0;
        if (st == SLA_OK) st = norm2(e, h, &nh);
        if (st != SLA_OK || !(nh > 0)) continue;
        for (int64_t q = 0; q < n; q++) h[q] /= nh;
        p->lambda = e->lam[i];
        kp.rhs_index = i;
        sla_krylov_result res;
        st = sla_krylov_run(SLA_METHOD_MINRES, &p->op, SLA_OP_N, &kp, h, x, &res);
        if (st != SLA_OK) {
            st = sla_error_wrap(st, VJP, "MINRES with Qᵀ(A − λ_%lld %s)Q (batch %lld)",
                                (long long)i, e->has_M ? "M" : "I", (long long)b);
            break;
        }
        double rho;
        if (res.reason != SLA_REASON_CONVERGED) {
            /* an uncomputed eigenvalue can tie only with an end of the block (eigsh computes
             * the k extreme ones), and then the system is inconsistent: refuse; elsewhere the
             * solve was merely slow: warn */
            double lo = e->lam[0], hi = e->lam[k - 1], bound = e->tie * e->scale;
            if (fabs(e->lam[i] - lo) <= bound || fabs(e->lam[i] - hi) <= bound) {
                st = sla_error_set(SLA_EINVAL, VJP, "eigenvector gradient undefined for "
                                   "λ_%lld = %.17g (batch %lld): the projected solve with "
                                   "A − λ_%lld %s on the complement of the k = %lld computed "
                                   "eigenvectors did not converge (%s after %lld iterations, "
                                   "relative residual %.3g): it is inconsistent when an "
                                   "eigenvalue tied with λ_%lld is not among the k computed "
                                   "(λ_%lld is at an end of the block) and the loss depends on "
                                   "its eigenvector; compute the whole eigenspace (a larger k) "
                                   "or use a loss of the eigenvalues only", (long long)i,
                                   e->lam[i], (long long)b, (long long)i, e->has_M ? "M" : "I",
                                   (long long)k, sla_reason_name(res.reason),
                                   (long long)res.iterations, res.residual, (long long)i,
                                   (long long)i);
                break;
            }
            if (*warn == SLA_OK)
                *warn = sla_error_set(SLA_NOT_CONVERGED, VJP, "MINRES with Qᵀ(A − λ_%lld %s)Q "
                                      "(batch %lld) stopped (%s) after %lld iterations at "
                                      "relative residual %.3g > %.0e: the eigenvector gradient "
                                      "is that of its best iterate", (long long)i,
                                      e->has_M ? "M" : "I", (long long)b,
                                      sla_reason_name(res.reason), (long long)res.iterations,
                                      res.residual, SOLVE_RTOL);
        }
        st = finish_solution(p, x, &rho);
        if (st == SLA_OK && res.reason == SLA_REASON_CONVERGED && rho <= e->tie * e->scale)
            st = tie_error(e, i, b, rho);
        for (int64_t q = 0; q < n && st == SLA_OK; q++) W[q * k + i] += nh * x[q];
    }
    sla_free(h);
    sla_free(x);
    return st;
}

/* ---- the terms on the patterns ---- */

/* d[s] (+)= Σ_j U[r_s][j]·V[c_s][j] on this rank's slots of element bm of A (ghost rows of V by
 * one halo exchange); add: accumulate into d, else overwrite. t: [nnz] workspace. */
static sla_status outer(const sla_dist_matrix *A, int64_t bm, int64_t k, const double *U,
                        const double *V, int add, double *t, double *d)
{
    int64_t nnz = A->pattern->nnz_diag + A->pattern->nnz_offd;
    sla_dist_matrix v = sla_dist_matrix_view(A->pattern, SLA_FLOAT64, 1,
                                             (const double *)A->values + bm * nnz);
    SLA_TRY(sla_dist_spmv_vjp(SLA_OP_N, 1.0, &v, V, 0, k, U, NULL, t));
    for (int64_t s = 0; s < nnz; s++) d[s] = (add ? d[s] : 0) + t[s];
    return SLA_OK;
}

/* The tie scale of the serial VJP: ‖A_b‖₁; with M max |λ| of the block (‖A‖₁/‖M‖₁ for a block
 * of zeros). */
static double tie_scale(const double *lam, int64_t k, int has_M, double normA, double normM)
{
    if (!has_M) return normA;
    double s = 0;
    for (int64_t i = 0; i < k; i++) s = fmax(s, fabs(lam[i]));
    if (s == 0 && normM > 0) s = normA / normM;
    return s;
}

typedef struct vjp_args {
    const sla_dist_matrix *A, *M;
    int64_t k;
    const double *lam, *V, *gl, *G;
    double *dA, *dM;
} vjp_args;

/* W = [w_i] of element b (in-block part, then the solves); VtG and gnorm filled. */
static sla_status eigvec_terms(const vjp_args *a, elem *e, int64_t b, const double *normA,
                               const double *normM, double *VtG, double *gnorm, double *W,
                               sla_status *warn)
{
    int64_t n = e->n, k = e->k;
    double *loc = sla_calloc((size_t)(k * k + k), sizeof(double), "VᵀG");
    SLA_TRY(dist_agree(e->comm, VJP, loc ? SLA_OK : SLA_ENOMEM));
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < k; i++) {
            double g = e->G[r * k + i];
            loc[k * k + i] += g * g;
            for (int64_t j = 0; j < k; j++) loc[j + i * k] += e->V[r * k + j] * g;
        }
    sla_status st = sla_dist_allsum(e->comm, (int)(k * k + k), loc, VtG);
    sla_free(loc);
    SLA_TRY(st);
    for (int64_t i = 0; i < k; i++) gnorm[i] = sqrt(VtG[k * k + i]);
    e->gnorm = gnorm;
    e->scale = tie_scale(e->lam, k, e->has_M, normA[b], e->has_M ? normM[b] : 0);
    memset(W, 0, sizeof(double) * (size_t)(n * k));
    SLA_TRY(sla_eig_vjp_in_block(VJP, e->lam, e->V, VtG, n, k, e->scale, e->tie, gnorm, b, W));
    if (k >= e->N) return SLA_OK;                   /* no complement */
    proj_op p;
    int64_t bm = a->M && a->M->batch == 1 ? 0 : b;
    SLA_TRY(proj_init(&p, e, a->A, b, a->M, bm));
    st = out_of_block(&p, b, W, warn);
    proj_free(&p);
    return st;
}

/* Everything of element b: dA_b, and dM's element (a batch-1 M: added into dM[0]). */
static sla_status element(const vjp_args *a, int64_t b, const double *normA, const double *normM,
                          double *ws, double *tA, double *tM, sla_status *warn)
{
    const sla_dist_matrix *A = a->A, *M = a->M;
    MPI_Comm comm = A->pattern->comm;
    int64_t n = A->pattern->rows->n, N = A->pattern->rows->N, k = a->k;
    int64_t nnzA = A->pattern->nnz_diag + A->pattern->nnz_offd;
    int64_t nnzM = M ? M->pattern->nnz_diag + M->pattern->nnz_offd : 0;
    int64_t bm = M && M->batch == 1 ? 0 : b;
    const double *Vb = a->V + b * n * k, *lam = a->lam + b * k;
    const double *gl = a->gl ? a->gl + b * k : NULL;
    double *MV = ws, *W = ws + n * k, *U = ws + 2 * n * k, *VtG = ws + 3 * n * k;
    double *gnorm = VtG + k * k + k;
    if (M) {
        sla_dist_matrix mv = sla_dist_matrix_view(M->pattern, SLA_FLOAT64, 1,
                                                  (const double *)M->values + bm * nnzM);
        SLA_TRY(sla_dist_spmv(SLA_OP_N, 1.0, &mv, Vb, 0, k, 0.0, MV));
    }
    elem e = {comm, M != NULL, n, N, k, lam, Vb, M ? MV : Vb, a->G ? a->G + b * n * k : NULL,
              NULL, 0, sla_eig_vjp_tie(SLA_FLOAT64)};
    if (e.G) SLA_TRY(eigvec_terms(a, &e, b, normA, normM, VtG, gnorm, W, warn));
    /* dA: U = V·diag(gλ) − W */
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < k; i++)
            U[r * k + i] = (gl ? gl[i] * Vb[r * k + i] : 0) - (e.G ? W[r * k + i] : 0);
    if (a->dA) SLA_TRY(outer(A, A->batch == 1 ? 0 : b, k, U, Vb, 0, tA, a->dA + b * nnzA));
    if (!M || !a->dM) return SLA_OK;
    /* dM: U = V·diag(−gλ_i λ_i − ½ g_iᵀv_i) + W·diag(λ) */
    for (int64_t r = 0; r < n; r++)
        for (int64_t i = 0; i < k; i++) {
            double c = (gl ? -gl[i] * lam[i] : 0) - (e.G ? 0.5 * VtG[i + i * k] : 0);
            U[r * k + i] = c * Vb[r * k + i] + (e.G ? lam[i] * W[r * k + i] : 0);
        }
    return outer(M, bm, k, U, Vb, M->batch == 1 && b > 0, tM, a->dM + bm * nnzM);
}

/* Collective checks, agreed. */
static sla_status check(const vjp_args *a, MPI_Comm comm)
{
    const sla_dist_matrix *A = a->A, *M = a->M;
    int64_t n = A->pattern->rows->n, k = a->k, batch = A->batch;
    sla_status st = dist_eig_check_matrix(VJP, A, "A");
    if (st == SLA_OK && M) st = dist_eig_check_matrix(VJP, M, "M");
    if (st == SLA_OK && (k < 1 || k > A->pattern->rows->N))
        st = sla_error_set(SLA_EINVAL, VJP, "k = %lld out of [1, n]", (long long)k);
    if (st == SLA_OK && (!a->lam || (!a->V && n > 0)))
        st = sla_error_set(SLA_EINVAL, VJP, "eigenvalues or eigenvectors is NULL");
    if (st == SLA_OK && M && M->batch != 1 && M->batch != batch)
        st = sla_error_set(SLA_EINVAL, VJP, "M has batch %lld: 1 or A's %lld",
                           (long long)M->batch, (long long)batch);
    if (st == SLA_OK && M && M->pattern->rows != A->pattern->rows && M->pattern->rows->n != n)
        st = sla_error_set(SLA_EINVAL, VJP, "M's rows are distributed unlike A's");
    if (st == SLA_OK && a->G)
        st = dist_block_finite(VJP, A->pattern->rows, "g_eigenvectors", SLA_FLOAT64, batch, k,
                               a->G);
    if (st == SLA_OK && a->G)
        st = dist_block_finite(VJP, A->pattern->rows, "eigenvectors", SLA_FLOAT64, batch, k,
                               a->V);
    int64_t same[4] = {k, a->gl != NULL, M != NULL, a->G != NULL};
    const char *names[4] = {"k", "g_eigenvalues given", "M given", "g_eigenvectors given"};
    SLA_TRY(dist_agree_same(comm, VJP, st, 4, same, names));
    if (!a->G || !M) return SLA_OK;
    int same_layout = 0;
    SLA_TRY(dist_layouts_same(A->pattern->rows, M->pattern->rows, VJP, &same_layout));
    return same_layout ? SLA_OK
                       : sla_error_set(SLA_EINVAL, VJP, "M's rows are distributed unlike A's");
}

sla_status sla_dist_eigsh_vjp(const sla_dist_matrix *A, const sla_dist_matrix *M, int64_t k,
                              const void *eigenvalues, const void *eigenvectors,
                              const void *g_eigenvalues, const void *g_eigenvectors, void *dA,
                              void *dM)
{
    if (!A || !A->pattern)
        return sla_error_set(SLA_EINVAL, VJP, "A is NULL or has no pattern (not collective)");
    MPI_Comm comm = A->pattern->comm;
    vjp_args a = {A, M, k, eigenvalues, eigenvectors, g_eigenvalues, g_eigenvectors, dA, dM};
    SLA_TRY(check(&a, comm));
    int64_t n = A->pattern->rows->n, batch = A->batch;
    int64_t nnzA = A->pattern->nnz_diag + A->pattern->nnz_offd;
    int64_t nnzM = M ? M->pattern->nnz_diag + M->pattern->nnz_offd : 0;
    double *ws = sla_malloc((size_t)(3 * n * k + k * k + 2 * k + 1), sizeof(double),
                            "eigenvector VJP workspace");
    double *tA = sla_malloc((size_t)(nnzA + 1), sizeof(double), "gradient slots");
    double *tM = sla_malloc((size_t)(nnzM + 1), sizeof(double), "gradient slots");
    double *normA = sla_calloc((size_t)batch, sizeof(double), "norms");
    double *normM = sla_calloc((size_t)batch, sizeof(double), "norms");   /* M's batch ≤ A's */
    sla_status st = dist_agree(comm, VJP, (ws && tA && tM && normA && normM) ? SLA_OK
                                                                           : SLA_ENOMEM);
    if (st == SLA_OK && g_eigenvectors) st = dist_eig_norm1(A, VJP, normA);
    if (st == SLA_OK && g_eigenvectors && M) st = dist_eig_norm1(M, VJP, normM);
    for (int64_t b = 1; st == SLA_OK && M && M->batch == 1 && b < batch; b++) normM[b] = normM[0];
    /* the first warning's message, without the prefix that sla_error_set puts back */
    sla_status warn = SLA_OK;
    char msg[1024] = "";
    size_t pre = strlen(VJP ": ");
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        sla_status w0 = warn;
        st = element(&a, b, normA, normM, ws, tA, tM, &warn);
        if (warn != w0) {
            const char *m = sla_last_error();
            snprintf(msg, sizeof msg, "%s", strncmp(m, VJP ": ", pre) ? m : m + pre);
        }
    }
    sla_free(ws);
    sla_free(tA);
    sla_free(tM);
    sla_free(normA);
    sla_free(normM);
    if (st == SLA_OK && warn != SLA_OK) return sla_error_set(warn, VJP, "%s", msg);
    return st;
}
