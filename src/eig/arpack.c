/* ARPACK-ng (dsaupd/dseupd, implicitly restarted Lanczos; Lehoucq, Sorensen & Yang 1998) on the
 * same operators as the built-in Lanczos, through its reverse-communication C interface.
 * ARPACK keeps its state in Fortran SAVE variables, so it is not reentrant: runs are
 * serialized by a mutex and the batch elements run one after the other, each with its own
 * factorization of A_b − σI (no shared symbolic analysis). Its message levels are set to 0
 * before each run (ARPACK prints only when they are positive). The generalized problem runs in
 * ARPACK's mode 3 with bmat = G: OP = (A − σM)⁻¹M, B = M (dsaupd's own M-inner product). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "eig/eig_internal.h"

#if SLA_HAVE_ARPACK
#include <arpack/arpack.h>
#include <arpack/debug_c.h>

static pthread_mutex_t arpack_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct arpack_ws {
    double *resid, *V, *workd, *workl, *d, *Z;
    a_int *select;
} arpack_ws;

static void ws_free(arpack_ws *w)
{
    sla_free(w->resid); sla_free(w->V); sla_free(w->workd); sla_free(w->workl);
    sla_free(w->d); sla_free(w->Z); sla_free(w->select);
}

static const char *arpack_which(eig_want w)
{
    return w == EIG_WANT_LA ? "LA" : w == EIG_WANT_SA ? "SA" : "LM";
}

/* The k wanted Ritz vectors of the Lanczos factorization OP·V = V·H + f·e_mᵀ that dsaupd holds
 * when it returns: V, n × ncv (the Lanczos basis), and the symmetric tridiagonal H in workl at
 * ipntr[4] (ncv × 2, column-major: the subdiagonal in column 1 from row 2, the diagonal in
 * column 2), both documented outputs of dsaupd. Used when ARPACK stopped before all k pairs
 * converged (info = 1: maximum restarts; info = 3: no shifts could be applied): dseupd then
 * returns only the converged ones, and the header of sla_eigsh promises the best
 * approximations of all k (their true residuals are measured afterwards, eig_residuals).
 * Wanted as in `which` on the Ritz values θ of OP: LA the largest, SA the smallest, LM the
 * largest |θ|. X (n × k, column-major) = V·Y. */
static sla_status ritz_from_basis(int64_t n, int64_t ncv, int64_t k, eig_want want,
                                  const double *V, const double *H, double *X)
{
    double *T = sla_calloc((size_t)(ncv * ncv), sizeof(double), "ARPACK tridiagonal");
    double *theta = sla_malloc((size_t)ncv, sizeof(double), "ARPACK Ritz values");
    sla_status st = (T && theta) ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        for (int64_t i = 0; i < ncv; i++) {
            T[i + i * ncv] = H[ncv + i];
            if (i > 0) T[i + (i - 1) * ncv] = T[(i - 1) + i * ncv] = H[i];
        }
        st = eig_syev(ncv, T, theta);        /* ascending θ, eigenvectors in T */
    }
    for (int64_t j = 0; j < k && st == SLA_OK; j++) {
        int64_t c;                           /* the column of T of the j-th wanted θ */
        if (want == EIG_WANT_SA) {
            c = j;
        } else if (want == EIG_WANT_LA) {
            c = ncv - 1 - j;
        } else {                             /* LM: merge from both ends of the ascending θ */
            int64_t lo = 0, hi = ncv - 1;
            for (int64_t q = 0;; q++) {
                int take_hi = fabs(theta[hi]) >= fabs(theta[lo]);
                c = take_hi ? hi : lo;
                if (q == j) break;
                if (take_hi) hi--; else lo++;
            }
        }
        memset(X + j * n, 0, sizeof(double) * (size_t)n);
        eig_nn(n, ncv, 1, 1.0, V, T + c * ncv, ncv, X + j * n);
    }
    sla_free(T);
    sla_free(theta);
    return st;
}

/* One batch element: Pb has batch 1, op its operator (sigma: the shift of a shift-invert op,
 * NAN in regular mode). X (n × k) receives the eigenvectors: dseupd's when every wanted pair
 * converged, else the best Ritz vectors of ARPACK's last basis (ritz_from_basis). The
 * eigenvalues are the Rayleigh quotients computed afterwards for every method, so dseupd's
 * eigenvalues (σ + 1/θ, which assumes OP = (A − σI)⁻¹ and not the (σI − A)⁻¹ of LA) are not
 * used. */
/* Generalized problem (bmat = G, mode 3): op is (A − σM)⁻¹M, sop the solve alone (for ido = 1,
 * where ARPACK hands M·x over), and ido = 2 asks y = M x. gen NULL: standard (bmat = I). */
typedef struct arpack_gen { eig_op *sop; sla_matrix Mb; } arpack_gen;

/* One reverse-communication request of dsaupd: y = OP x, OP (M x) from M x, or M x. */
static sla_status reverse(a_int ido, const a_int *ipntr, double *workd, eig_op *op,
                          const arpack_gen *gen)
{
    double *x = workd + ipntr[0] - 1, *y = workd + ipntr[1] - 1;
    int64_t one = 1;
    if (gen && ido == 1) {
        double *mx = workd + ipntr[2] - 1;
        return eig_op_apply(gen->sop, &one, &mx, &y);
    }
    if (gen && ido == 2) return sla_spmv(SLA_OP_N, 1.0, &gen->Mb, x, 0, 1, 0.0, y);
    return eig_op_apply(op, &one, &x, &y);
}

static sla_status run_one(const eig_problem *Pb, eig_op *op, const arpack_gen *gen,
                          const eig_lanczos_opts *o, double sigma, int64_t k, const double *v0,
                          double *X, int64_t *nconv, int64_t *iters, uint64_t seed)
{
    a_int n = (a_int)Pb->n, nev = (a_int)k, ncv = (a_int)o->ncv;
    a_int lworkl = ncv * (ncv + 8);
    arpack_ws w = {0};
    w.resid = sla_malloc((size_t)n, sizeof(double), "ARPACK residual");
    w.V = sla_malloc((size_t)n * (size_t)ncv, sizeof(double), "ARPACK basis");
    w.workd = sla_malloc((size_t)(3 * n), sizeof(double), "ARPACK workd");
    w.workl = sla_malloc((size_t)lworkl, sizeof(double), "ARPACK workl");
    w.d = sla_malloc((size_t)nev, sizeof(double), "ARPACK eigenvalues");
    w.Z = sla_malloc((size_t)n * (size_t)nev, sizeof(double), "ARPACK eigenvectors");
    w.select = sla_malloc((size_t)ncv, sizeof(a_int), "ARPACK select");
    if (!w.resid || !w.V || !w.workd || !w.workl || !w.d || !w.Z || !w.select) {
        ws_free(&w);
        return SLA_ENOMEM;
    }
    if (v0) memcpy(w.resid, v0, sizeof(double) * (size_t)n);
    else eig_random(w.resid, n, &seed);
    /* ARPACK's test ‖r‖ ≤ tol·|θ| on OP; shift-invert: ‖A x − λ x‖ ≤ ‖A − σI‖·‖r‖/|θ|, so
     * tol·‖A‖₁/(‖A‖₁ + |σ|) gives the same true-residual target as the built-in Lanczos */
    double normA = Pb->norm1[0], ns = fabs(sigma) * (gen ? Pb->normM[0] : 1.0);
    int si = !isnan(sigma);
    double tol = si && normA + ns > 0 ? o->tol * normA / (normA + ns) : o->tol;
    const char *bmat = gen ? "G" : "I";
    a_int iparam[11] = {0}, ipntr[14] = {0}, ido = 0, info = 1;
    iparam[0] = 1;                       /* exact shifts */
    iparam[2] = (a_int)o->maxiter;
    iparam[3] = 1;
    iparam[6] = si ? 3 : 1;
    const char *which = arpack_which(o->want);
    sla_status st = SLA_OK;
    debug_c(6, -3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    for (;;) {
        dsaupd_c(&ido, bmat, n, which, nev, tol, w.resid, ncv, w.V, n, iparam, ipntr, w.workd,
                 w.workl, lworkl, &info);
        /* bmat = I: ido = 2 (B·x) never comes; −1 and 1 both ask y = OP x */
        if (ido != -1 && ido != 1 && !(gen && ido == 2)) break;
        st = reverse(ido, ipntr, w.workd, op, gen);
        if (st != SLA_OK) break;
    }
    *iters = iparam[2];
    *nconv = 0;
    if (st == SLA_OK && info < 0)
        st = EIG_FAIL(SLA_EBACKEND, "ARPACK dsaupd returned info = %d", (int)info);
    if (st == SLA_OK && iparam[4] >= nev) {
        a_int ierr = 0;
        dseupd_c(1, "A", w.select, w.d, w.Z, n, si ? sigma : 0.0, bmat, n, which, nev, tol, w.resid, ncv,
                 w.V, n, iparam, ipntr, w.workd, w.workl, lworkl, &ierr);
        if (ierr != 0) st = EIG_FAIL(SLA_EBACKEND, "ARPACK dseupd returned info = %d", (int)ierr);
        if (st == SLA_OK) memcpy(X, w.Z, sizeof(double) * (size_t)n * (size_t)nev);
        *nconv = nev;
    } else if (st == SLA_OK) {
        /* stopped early (info 1 or 3): the best approximations, converged or not */
        st = ritz_from_basis(n, ncv, k, o->want, w.V, w.workl + ipntr[4] - 1, X);
        *nconv = iparam[4];
    }
    ws_free(&w);
    return st;
}

sla_status eig_arpack(const eig_problem *P, const eig_lanczos_opts *o, const eig_si *sit,
                      eig_result *R)
{
    int64_t n = P->n, k = R->k;
    if (o->ncv <= k || o->ncv > n)
        return EIG_FAIL(SLA_EINVAL, "ARPACK needs k < ncv ≤ n (k = %lld, ncv = %lld, n = %lld)",
                        (long long)k, (long long)o->ncv, (long long)n);
    sla_status st = SLA_OK;
    pthread_mutex_lock(&arpack_lock);
    for (int64_t b = 0; b < P->batch && st == SLA_OK; b++) {
        eig_problem Pb = *P;
        Pb.batch = 1;
        Pb.Ad = sla_matrix_view(P->p, SLA_FLOAT64, 1, (const double *)P->Ad.values + b * P->nnz);
        Pb.owned = NULL;
        Pb.norm1 = P->norm1 + b;
        Pb.gersh_lo = P->gersh_lo + b;
        Pb.gersh_hi = P->gersh_hi + b;
        if (P->has_M) {
            Pb.Md = eig_mass_view(P, b);
            Pb.mowned = NULL;
            Pb.normM = P->normM + b;
            Pb.mgersh_lo = P->mgersh_lo + b;
            Pb.mgersh_hi = P->mgersh_hi + b;
        }
        eig_op op, sop = {0};
        eig_massinv_ctx mc = {&Pb, NULL};
        arpack_gen gen = {&sop, P->has_M ? Pb.Md : (sla_matrix){0}};
        eig_spmv_ctx sc = {&Pb, 1.0};
        eig_shifted S = {0};
        sla_solver *s = NULL;
        double sigma = NAN;
        if (sit && P->batch == 1) {
            /* the plan's factorization is this element's */
            sigma = sit->sigma[0];
            mc.s = sit->solver;
        } else if (sit) {
            st = eig_shifted_init(&Pb, &S);
            if (st == SLA_OK)
                st = eig_factor(&Pb, &S, sit->sigma + b, sit->sgn, sit->fopt,
                                sit->verified ? EIG_SHIFT_VERIFIED : EIG_SHIFT, &s, &sigma,
                                SLA_EIG_SHIFT_MARGIN);
            if (st == SLA_OK) R->factorizations++;
            mc.s = s;
        } else {
            eig_op_spmv(&op, &sc);
        }
        if (sit && P->has_M) {
            eig_op_solver_mass(&op, &mc);
            eig_op_solver(&sop, n, 1, mc.s);
        } else if (sit) {
            eig_op_solver(&op, n, 1, mc.s);
        }
        int64_t iters = 0;
        if (st == SLA_OK)
            st = run_one(&Pb, &op, sit && P->has_M ? &gen : NULL, o, sigma, k,
                         o->v0 ? o->v0 + b * n * o->nv0 : NULL, R->X + b * k * n, &R->nconv[b],
                         &iters, eig_seed(b));
        R->op_apps += op.count + sop.count;
        if (iters > R->restarts) R->restarts = iters;
        eig_op_free(&op);
        eig_op_free(&sop);
        sla_solver_free(&s);
        eig_shifted_free(&S);
    }
    pthread_mutex_unlock(&arpack_lock);
    R->iterations = R->restarts;
    if (st == SLA_OK)
        snprintf(R->what, sizeof R->what, "ARPACK dsaupd (ncv %lld, mode %d) on %s%s",
                 (long long)o->ncv, sit ? 3 : 1,
                 !sit ? "A" : P->has_M ? (sit->sgn > 0 ? "(A − σM)⁻¹M, bmat G" : "(σM − A)⁻¹M, bmat G")
                                       : sit->sgn > 0 ? "(A − σI)⁻¹" : "(σI − A)⁻¹",
                 P->batch > 1 ? ", batch elements one by one" : "");
    return st;
}
#else
sla_status eig_arpack(const eig_problem *P, const eig_lanczos_opts *o, const eig_si *sit,
                      eig_result *R)
{
    return EIG_FAIL(SLA_EUNSUPPORTED, "method arpack: this build of sla has no ARPACK "
                    "(install libarpack2-dev and reconfigure)");
}
#endif
