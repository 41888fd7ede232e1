/* LOBPCG for the m smallest eigenvalues of B = s·A (s = +1: SA, s = −1: LA), block size m > k.
 *
 * Knyazev (2001) with the orthonormal basis S = [X | P | W] of Hetmaniuk & Lehoucq (2006): W
 * (preconditioned residuals of the unconverged columns) is projected against [X, P] and
 * orthonormalized with SVQB, dropping numerically dependent directions (Duersch, Shao, Yang &
 * Gu 2018), so the Rayleigh–Ritz problem is a standard symmetric eigenproblem of size
 * nb = m + |P| + |W| ≤ 3m. The new P spans the non-X part of the Ritz vectors, made orthonormal
 * and orthogonal to the new X in the small space (Z − Y·YᵀZ, then SVQB), so P needs no extra
 * operator application. Converged columns are soft-locked (kept in X, no W column).
 * The batch advances together: each iteration is one batched SpMV (and one batched
 * preconditioner application) over the still active batch elements.
 * Generalized problem A v = λ M v: Knyazev's B = M. S is kept M-orthonormal with M·S stored
 * beside it (updated by the same coefficients), the residuals are A x − θ M x, and W is
 * M-orthogonalized against [X, P] (eig_orth_m with the stored M·S); the Rayleigh–Ritz problem
 * stays a standard one.
 * Distributed (sla_lobpcg_run, opts R): the blocks hold this process's rows; every reduction
 * over the rows (Gram products, norms, residual norms) goes through the reduction hook R, so
 * the small dense problems are the same bits on every process and every branch is taken alike;
 * the operator and M are the caller's (opts op, mass). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eig/eig_internal.h"

#define DROP 1e-10       /* directions below this relative norm are numerically dependent */

typedef struct lob_elem {
    double *S, *AS;      /* n × 3m: [X (m) | P (np) | W (nw)] and B times it */
    double *Sn, *ASn;    /* n × 2m: the new [X | P] */
    double *MS, *MSn;    /* with M: M·S and M·Sn (S M-orthonormal), else NULL */
    const eig_mass *Mb;  /* M_b, or NULL */
    sla_matrix mview;
    eig_mass mass;       /* on mview */
    double *G;           /* (3m)² projected matrix, then its eigenvectors */
    double *theta;       /* 3m */
    double *YZ;          /* 3m × 2m: Ritz coefficients Y and P coefficients Z */
    double *res;         /* m residual norms */
    int64_t np, nw;
    int64_t *active;     /* m: the columns that get a W direction */
    int done;
    uint64_t seed;
} lob_elem;

static void elem_free(lob_elem *e)
{
    sla_free(e->S);
    sla_free(e->AS);
    sla_free(e->Sn);
    sla_free(e->ASn);
    sla_free(e->MS);
    sla_free(e->MSn);
    sla_free(e->G);
    sla_free(e->theta);
    sla_free(e->YZ);
    sla_free(e->res);
    sla_free(e->active);
    memset(e, 0, sizeof *e);
}

static sla_status elem_alloc(lob_elem *e, const eig_problem *P, const eig_lobpcg_opts *o,
                             int64_t m, int64_t b)
{
    int64_t n = P->n;
    memset(e, 0, sizeof *e);
    if (P->has_M) {
        if (o->mass) {
            e->Mb = &o->mass[b];
        } else {
            e->mview = eig_mass_view(P, b);
            e->mass = (eig_mass){&e->mview, NULL, NULL, b};
            e->Mb = &e->mass;
        }
        e->MS = sla_malloc((size_t)(3 * m * n), sizeof(double), "LOBPCG basis times M");
        e->MSn = sla_malloc((size_t)(2 * m * n), sizeof(double), "LOBPCG new block times M");
        if (!e->MS || !e->MSn) { elem_free(e); return SLA_ENOMEM; }
    }
    e->S = sla_malloc((size_t)(3 * m * n), sizeof(double), "LOBPCG basis");
    e->AS = sla_malloc((size_t)(3 * m * n), sizeof(double), "LOBPCG basis image");
    e->Sn = sla_malloc((size_t)(2 * m * n), sizeof(double), "LOBPCG new block");
    e->ASn = sla_malloc((size_t)(2 * m * n), sizeof(double), "LOBPCG new block image");
    e->G = sla_malloc((size_t)(9 * m * m), sizeof(double), "LOBPCG projected matrix");
    e->theta = sla_malloc((size_t)(3 * m), sizeof(double), "Ritz values");
    e->YZ = sla_malloc((size_t)(6 * m * m), sizeof(double), "Ritz coefficients");
    e->res = sla_malloc((size_t)m, sizeof(double), "residual norms");
    e->active = sla_malloc((size_t)m, sizeof(int64_t), "active columns");
    e->seed = eig_seed(b);
    if (!e->S || !e->AS || !e->Sn || !e->ASn || !e->G || !e->theta || !e->YZ || !e->res || !e->active) {
        elem_free(e);
        return SLA_ENOMEM;
    }
    return SLA_OK;
}

/* Rayleigh–Ritz on the orthonormal basis S (nb columns): X ← S·Y (m smallest Ritz vectors),
 * P ← S·Z (orthonormal, orthogonal to X, spanning the non-X part of Y). */
static sla_status rayleigh_ritz(lob_elem *e, const sla_space *R, int64_t n, int64_t m, int64_t nb,
                                int with_p)
{
    double *G = e->G;
    SLA_TRY(eig_tn_r(R, n, nb, nb, e->S, e->AS, G));
    for (int64_t j = 0; j < nb; j++)
        for (int64_t i = 0; i < j; i++) {
            double a = 0.5 * (G[i + j * nb] + G[j + i * nb]);
            G[i + j * nb] = G[j + i * nb] = a;
        }
    SLA_TRY(eig_syev(nb, G, e->theta));
    double *Y = e->YZ, *Z = e->YZ + nb * m;
    memcpy(Y, G, sizeof(double) * (size_t)(nb * m));
    int64_t np = 0;
    if (with_p && nb > m) {
        /* Z = Y without its X rows, then orthonormal and orthogonal to Y in the small space */
        memcpy(Z, Y, sizeof(double) * (size_t)(nb * m));
        for (int64_t j = 0; j < m; j++) memset(Z + j * nb, 0, sizeof(double) * (size_t)m);
        SLA_TRY(eig_orth(nb, Y, m, Z, m, DROP, 0, &e->seed, NULL, &np));
    }
    int64_t nc = m + np;
    memset(e->Sn, 0, sizeof(double) * (size_t)(n * nc));
    memset(e->ASn, 0, sizeof(double) * (size_t)(n * nc));
    eig_nn(n, nb, nc, 1.0, e->S, e->YZ, nb, e->Sn);
    eig_nn(n, nb, nc, 1.0, e->AS, e->YZ, nb, e->ASn);
    memcpy(e->S, e->Sn, sizeof(double) * (size_t)(n * nc));
    memcpy(e->AS, e->ASn, sizeof(double) * (size_t)(n * nc));
    if (e->MS) {
        /* M·S follows S (the coefficients of an M-orthonormal basis) */
        memset(e->MSn, 0, sizeof(double) * (size_t)(n * nc));
        eig_nn(n, nb, nc, 1.0, e->MS, e->YZ, nb, e->MSn);
        memcpy(e->MS, e->MSn, sizeof(double) * (size_t)(n * nc));
    }
    e->np = np;
    return SLA_OK;
}

/* R = AX − MX·diag(θ) (M = I without a mass matrix) into the W slot for the active columns;
 * residual norms of all m; converged: ‖r_j‖ ≤ tol·scale(θ_j)·‖x_j‖ (eig_res_scale). The sums
 * of squares of the local rows are reduced through R (ss: workspace [2m]). */
static sla_status residuals(lob_elem *e, const eig_problem *P, const sla_space *R, int64_t b,
                            int64_t m, int64_t k, double tol, double *ss, int64_t *nconv_out)
{
    int64_t n = P->n;
    double *W = e->S + (m + e->np) * n;
    int64_t na = 0, nconv = 0;
    for (int64_t j = 0; j < m; j++) {
        const double *x = e->S + j * n, *ax = e->AS + j * n, *mx = e->MS ? e->MS + j * n : x;
        double r = 0, nx = 0;
        for (int64_t i = 0; i < n; i++) {
            double d = ax[i] - e->theta[j] * mx[i];
            r += d * d;
            nx += x[i] * x[i];
        }
        ss[j] = r;
        ss[m + j] = nx;
    }
    if (R && R->reduce) SLA_TRY(R->reduce(R, SLA_REDUCE_SUM, ss, (int)(2 * m)));
    for (int64_t j = 0; j < m; j++) {
        double r = ss[j], nx = ss[m + j];
        e->res[j] = sqrt(r);
        double thresh = tol * eig_res_scale(P, b, e->theta[j]) * (e->MS ? sqrt(nx) : 1.0);
        if (j < k && e->res[j] <= thresh) nconv++;
        if (e->res[j] > thresh) e->active[na++] = j;
    }
    for (int64_t a = 0; a < na; a++) {
        int64_t j = e->active[a];
        const double *x = e->S + j * n, *ax = e->AS + j * n, *mx = e->MS ? e->MS + j * n : x;
        double *w = W + a * n;
        for (int64_t i = 0; i < n; i++) w[i] = ax[i] - e->theta[j] * mx[i];
    }
    e->nw = nconv == k ? 0 : na;
    *nconv_out = nconv;
    return SLA_OK;
}

sla_status eig_lobpcg(const eig_problem *P, const eig_lobpcg_opts *o, eig_result *R)
{
    int64_t n = P->n, batch = P->batch, k = R->k, m = o->block, N = o->N > 0 ? o->N : n;
    double s = o->largest ? -1.0 : 1.0;
    const sla_space *Rs = o->R;
    if (m < k || 3 * m > N)
        return EIG_FAIL(SLA_EINVAL, "LOBPCG block size %lld must be in [k, n/3] = [%lld, %lld]",
                        (long long)m, (long long)k, (long long)(N / 3));
    eig_spmv_ctx sc = {P, s};
    eig_op own, *opp = o->op ? o->op : &own;
    if (!o->op) eig_op_spmv(&own, &sc);
    eig_op *op = opp;
    int64_t count0 = op->count;
    lob_elem *E = sla_calloc((size_t)batch, sizeof *E, "LOBPCG state");
    double **X = sla_calloc((size_t)(2 * batch), sizeof(double *), "block pointers");
    int64_t *cnt = sla_calloc((size_t)batch, sizeof(int64_t), "block widths");
    double *ss = sla_malloc((size_t)(2 * m), sizeof(double), "residual sums");
    sla_status st = (E && X && cnt && ss) ? SLA_OK : SLA_ENOMEM;
    double **Y = X ? X + batch : NULL;
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) st = elem_alloc(&E[b], P, o, m, b);

    /* start block: v0's columns, then random ones; orthonormal */
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        lob_elem *e = &E[b];
        st = eig_start_block_mr(Rs, n, e->Mb, m, o->v0 ? o->v0 + b * n * o->nv0 : NULL, o->nv0,
                                e->S, &e->seed, o->global, N);
        if (st == SLA_OK && e->Mb) st = eig_mass_do(e->Mb, n, m, e->S, e->MS);
        X[b] = e->S;
        Y[b] = e->AS;
        cnt[b] = m;
    }
    if (st == SLA_OK) st = eig_op_apply(op, cnt, X, Y);
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        E[b].np = 0;
        st = rayleigh_ritz(&E[b], Rs, n, m, m, 0);
    }

    int64_t it = 0;
    double thresh_scale = o->tol;
    for (; st == SLA_OK && it < o->maxiter; it++) {
        int any = 0;
        for (int64_t b = 0; b < batch; b++) {
            lob_elem *e = &E[b];
            X[b] = Y[b] = NULL;
            if (e->done) continue;
            st = residuals(e, P, Rs, b, m, k, thresh_scale, ss, &R->nconv[b]);
            if (st != SLA_OK) break;
            if (e->nw == 0) { e->done = 1; continue; }
            any = 1;
            X[b] = Y[b] = e->S + (m + e->np) * n;
            cnt[b] = e->nw;
        }
        if (st != SLA_OK || !any) break;
        if (o->precond) {
            int64_t before = o->precond->count;
            st = eig_op_apply(o->precond, cnt, X, Y);
            R->prec_apps += o->precond->count - before;
            if (st != SLA_OK) break;
        }
        for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
            lob_elem *e = &E[b];
            if (!X[b]) continue;
            int64_t kept;
            st = eig_orth_mr(Rs, n, e->Mb, e->S, e->MS, m + e->np, X[b], e->nw, DROP, 0, &e->seed,
                             NULL, &kept);
            if (st == SLA_OK && e->Mb && kept)
                st = eig_mass_do(e->Mb, n, kept, X[b], e->MS + (m + e->np) * n);
            e->nw = kept;
            cnt[b] = kept;
            Y[b] = e->AS + (m + e->np) * n;
            if (kept == 0) { e->done = 1; X[b] = Y[b] = NULL; }   /* stagnation */
        }
        if (st == SLA_OK) st = eig_op_apply(op, cnt, X, Y);
        for (int64_t b = 0; b < batch && st == SLA_OK; b++)
            if (X[b]) st = rayleigh_ritz(&E[b], Rs, n, m, m + E[b].np + E[b].nw, 1);
    }
    /* final residuals (for the elements stopped by maxiter) and the results */
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        lob_elem *e = &E[b];
        st = residuals(e, P, Rs, b, m, k, thresh_scale, ss, &R->nconv[b]);
        for (int64_t j = 0; j < k; j++) {
            R->lambda[b * k + j] = s * e->theta[j];
            memcpy(R->X + (b * k + j) * n, e->S + j * n, sizeof(double) * (size_t)n);
        }
    }
    R->iterations = it;
    R->op_apps += op->count - count0;
    if (st == SLA_OK)
        snprintf(R->what, sizeof R->what, "LOBPCG (%s, block %lld%s)", o->largest ? "LA" : "SA",
                 (long long)m, o->precond ? ", preconditioned" : "");
    for (int64_t b = 0; E && b < batch; b++) elem_free(&E[b]);
    sla_free(E);
    sla_free(X);
    sla_free(cnt);
    sla_free(ss);
    if (!o->op) eig_op_free(&own);
    return st;
}
