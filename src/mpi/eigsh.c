/* Distributed eigsh (sla_dist_eigsh; its VJP is eigsh_vjp.c).
 *
 * The method is libsla's own LOBPCG (src/eig/lobpcg.c) through sla_lobpcg_run: its blocks
 * hold this rank's rows, its Gram products and norms are reduced by the distributed space's
 * hook (sla_dist_allsum's fixed tree: the same bits on every rank, so every rank solves the
 * same small eigenproblems and takes the same branches), A·X and M·X are distributed SpMVs
 * with k columns (one halo exchange each), and the start block is the serial one restricted
 * to the owned rows (global indices). After it: the true residuals, Rayleigh quotients,
 * ascending order and sign convention of sla_eigsh, on distributed vectors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/deig.h"

#define FUNC "sla_dist_eigsh"

void sla_dist_eigsh_options_init(sla_dist_eigsh_options *o)
{
    memset(o, 0, sizeof *o);
    o->which = SLA_EIGSH_SA;
    o->tol = 1e-10;
    o->precond = SLA_DIST_PC_NONE;
    o->sigma = NAN;
}

/* ---- the block callbacks of sla_lobpcg_run ---- */

typedef struct dmat_ctx {
    const sla_dist_matrix *A;
    int64_t nnz;                /* local slots per batch element */
    double *xr, *yr;            /* row-major n × m copies */
    int64_t cap;                /* their capacity (doubles) */
} dmat_ctx;

/* Y = A_b X: column-major ↔ row-major around one distributed SpMV with m columns (batch-1
 * view; b is 0 for a batch-1 matrix serving every element). Collective, agreed inside. */
static sla_status block_spmv(void *ctx, int64_t b, int64_t n, int64_t m, const double *X,
                             double *Y)
{
    dmat_ctx *c = ctx;
    if (c->A->batch == 1) b = 0;
    sla_status st = SLA_OK;
    if (n * m + 1 > c->cap) {
        sla_free(c->xr);
        sla_free(c->yr);
        c->cap = n * m + 1;
        c->xr = sla_malloc((size_t)c->cap, sizeof(double), "eigsh block copy");
        c->yr = sla_malloc((size_t)c->cap, sizeof(double), "eigsh block copy");
        if (!c->xr || !c->yr) { c->cap = 0; st = SLA_ENOMEM; }
    }
    st = dist_agree(c->A->pattern->comm, FUNC, st);
    if (st != SLA_OK) return st;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) c->xr[i * m + j] = X[j * n + i];
    sla_dist_matrix v = sla_dist_matrix_view(c->A->pattern, SLA_FLOAT64, 1,
                                             (const double *)c->A->values + b * c->nnz);
    SLA_TRY(sla_dist_spmv(SLA_OP_N, 1.0, &v, c->xr, 0, m, 0.0, c->yr));
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < n; i++) Y[j * n + i] = c->yr[i * m + j];
    return SLA_OK;
}

/* Jacobi: z_i = r_i / a_ii in place (local). */
typedef struct jacobi_ctx { const double *inv; int64_t n; } jacobi_ctx;

static sla_status block_jacobi(void *ctx, int64_t b, int64_t n, int64_t m, const double *X,
                               double *Y)
{
    const jacobi_ctx *c = ctx;
    const double *d = c->inv + b * c->n;
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < n; i++) Y[j * n + i] = X[j * n + i] * d[i];
    return SLA_OK;
}

/* ---- checks ---- */

sla_status dist_eig_check_matrix(const char *func, const sla_dist_matrix *A, const char *name)
{
    if (!A || !A->pattern)
        return sla_error_set(SLA_EINVAL, func, "%s is NULL or has no pattern", name);
    const sla_dist_pattern *P = A->pattern;
    if (P->rows != P->cols && P->rows->N != P->cols->N)
        return sla_error_set(SLA_ESHAPE, func, "%s is %lld × %lld, not square", name,
                             (long long)P->rows->N, (long long)P->cols->N);
    if (A->dtype != SLA_FLOAT64)
        return sla_error_set(SLA_EDTYPE, func, "%s is %s: the distributed eigensolver takes "
                             "float64 (promote float32 values first)", name,
                             sla_dtype_name(A->dtype));
    return dist_matrix_check_local(func, A);
}

/* Rows and columns on one layout (the operator maps the owned rows to themselves). */
static sla_status check_layouts(const char *func, const sla_dist_matrix *A, const char *name,
                                const sla_dist_layout *rows)
{
    int same = 0;
    SLA_TRY(dist_layouts_same(A->pattern->rows, A->pattern->cols, func, &same));
    if (!same)
        return sla_error_set(SLA_EINVAL, func, "%s: rows and columns must be distributed alike "
                             "(one layout)", name);
    if (rows && rows != A->pattern->rows) {
        SLA_TRY(dist_layouts_same(A->pattern->rows, rows, func, &same));
        if (!same)
            return sla_error_set(SLA_EINVAL, func, "%s's rows are distributed unlike A's", name);
    }
    return SLA_OK;
}

/* Collective: shapes, dtype, finiteness (naming rank and entry), layouts and symmetry of A
 * (and M), agreed. */
static sla_status check_all(const sla_dist_matrix *A, const sla_dist_matrix *M, int64_t k,
                            const sla_dist_eigsh_options *o, MPI_Comm comm)
{
    sla_status st = dist_eig_check_matrix(FUNC, A, "A");
    if (st == SLA_OK && M) st = dist_eig_check_matrix(FUNC, M, "options.M");
    if (st == SLA_OK && (k < 1 || k > A->pattern->rows->N))
        st = sla_error_set(SLA_EINVAL, FUNC, "k = %lld must be in [1, n = %lld]", (long long)k,
                           (long long)A->pattern->rows->N);
    if (st == SLA_OK && isnan(o->sigma) && o->which != SLA_EIGSH_SA && o->which != SLA_EIGSH_LA)
        st = sla_error_set(SLA_EINVAL, FUNC, "options.which = %s: the distributed LOBPCG "
                           "computes SA or LA", sla_eigsh_which_name(o->which));
    if (st == SLA_OK && o->precond != SLA_DIST_PC_NONE && o->precond != SLA_DIST_PC_JACOBI)
        st = sla_error_set(SLA_EINVAL, FUNC, "options.precond = %s: none or jacobi",
                           sla_dist_precond_name(o->precond));
    if (st == SLA_OK && M && M->batch != 1 && M->batch != A->batch)
        st = sla_error_set(SLA_EINVAL, FUNC, "options.M has batch %lld: 1 or A's %lld",
                           (long long)M->batch, (long long)A->batch);
    if (st == SLA_OK && !(o->tol >= 0))
        st = sla_error_set(SLA_EINVAL, FUNC, "options.tol = %g < 0", o->tol);
    int sinv = !isnan(o->sigma);
    if (st == SLA_OK && sinv && !isfinite(o->sigma))
        st = sla_error_set(SLA_EINVAL, FUNC, "options.sigma = %g: finite, or NAN for off",
                           o->sigma);
    if (st == SLA_OK && sinv && o->precond != SLA_DIST_PC_NONE)
        st = sla_error_set(SLA_EINVAL, FUNC, "options.precond = %s with options.sigma: the "
                           "shift-invert operator takes none", sla_dist_precond_name(o->precond));
    int64_t sbits = 0;
    if (sinv) memcpy(&sbits, &o->sigma, sizeof sbits);
    int64_t same[4] = {k, o->which, M != NULL, sbits};
    const char *names[4] = {"k", "options.which", "options.M given", "options.sigma"};
    SLA_TRY(dist_agree_same(comm, FUNC, st, 4, same, names));
    SLA_TRY(sla_dist_matrix_check(A, 1));
    if (M) SLA_TRY(sla_dist_matrix_check(M, 1));
    SLA_TRY(dist_agree(comm, FUNC, check_layouts(FUNC, A, "A", NULL)));
    if (M) SLA_TRY(dist_agree(comm, FUNC, check_layouts(FUNC, M, "options.M", A->pattern->rows)));
    dist_facts f;
    SLA_TRY(dist_facts_measure(A, FUNC, &f));
    if (!f.symmetric)
        return sla_error_set(SLA_EINVAL, FUNC, "A is not symmetric (to 1000ε relative): "
                             "eigsh is for symmetric matrices");
    if (M) {
        SLA_TRY(dist_facts_measure(M, FUNC, &f));
        if (!f.symmetric)
            return sla_error_set(SLA_EINVAL, FUNC, "options.M is not symmetric (to 1000ε "
                                 "relative)");
        if (!f.posdiag)
            return sla_error_set(SLA_ENOTSPD, FUNC, "options.M has a diagonal entry ≤ 0 or "
                                 "missing: not positive definite");
    }
    return SLA_OK;
}

/* ---- facts of the values ---- */

sla_status dist_eig_norm1(const sla_dist_matrix *A, const char *func, double *norm)
{
    const sla_dist_pattern *P = A->pattern;
    int64_t n = P->rows->n, nd = P->nnz_diag, nnz = nd + P->nnz_offd;
    const int64_t *rd = sla_pattern_rowptr(P->diag), *ro = sla_pattern_rowptr(P->offd);
    for (int64_t b = 0; b < A->batch; b++) {
        const double *v = (const double *)A->values + b * nnz;
        double mx = 0;
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int64_t q = rd[i]; q < rd[i + 1]; q++) s += fabs(v[q]);
            for (int64_t q = ro[i]; q < ro[i + 1]; q++) s += fabs(v[nd + q]);
            mx = fmax(mx, s);
        }
        norm[b] = mx;
    }
    int rc = MPI_Allreduce(MPI_IN_PLACE, norm, (int)A->batch, MPI_DOUBLE, MPI_MAX, P->comm);
    return rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error(func, "MPI_Allreduce", rc);
}

/* inv[b][i] = 1 / a_ii; SLA_EINVAL (agreed) naming the global row of a zero or missing
 * diagonal. */
static sla_status jacobi_inv(const sla_dist_matrix *A, MPI_Comm comm, double *inv)
{
    const sla_dist_pattern *P = A->pattern;
    int64_t n = P->rows->n, nnz = P->nnz_diag + P->nnz_offd;
    const int64_t *rd = sla_pattern_rowptr(P->diag);
    const int32_t *cd = sla_pattern_colind(P->diag);
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < A->batch && st == SLA_OK; b++)
        for (int64_t i = 0; i < n && st == SLA_OK; i++) {
            double d = 0;
            for (int64_t q = rd[i]; q < rd[i + 1]; q++)
                if (cd[q] == i) d = ((const double *)A->values)[b * nnz + q];
            if (d == 0)
                st = sla_error_set(SLA_EINVAL, FUNC, "options.precond = jacobi: A[%lld] has no "
                                   "nonzero diagonal entry in row %lld", (long long)b,
                                   (long long)P->rows->global[i]);
            inv[b * n + i] = 1.0 / d;
        }
    return dist_agree(comm, FUNC, st);
}

/* ---- post-processing (as sla_eigsh's eig_residuals and finish, on distributed vectors) ---- */

typedef struct pp_pair { double lambda, res; int64_t j; } pp_pair;

static int by_lambda(const void *a, const void *b)
{
    const pp_pair *x = a, *y = b;
    if (x->lambda != y->lambda) return x->lambda < y->lambda ? -1 : 1;
    return x->j < y->j ? -1 : (x->j > y->j);
}

typedef struct pp {
    const sla_dist_matrix *A, *M;
    dmat_ctx *ac, *mc;
    const sla_space *R;
    MPI_Comm comm;
    int64_t n, k, batch;
    const double *normA, *normM;
    double tol;
} pp;

/* For each batch element: columns normalized (M-normalized with M), λ = Rayleigh quotient,
 * res = ‖A x − λ M x‖ / (scale·‖x‖); sorted ascending, the largest-magnitude component
 * (lowest global index among exact ties) made positive; outputs row-major [n][k]. */
static sla_status finish(const pp *c, double *X, double *lambda, double *eigvals, double *eigvecs,
                         double *residuals, int64_t *nconv_min, double *maxres)
{
    int64_t n = c->n, k = c->k;
    int size;
    MPI_Comm_size(c->comm, &size);
    double *AX = sla_malloc((size_t)(n * k + 1), sizeof(double), "A times eigenvectors");
    double *MX = sla_malloc((size_t)(n * k + 1), sizeof(double), "M times eigenvectors");
    double *red = sla_malloc((size_t)(3 * k), sizeof(double), "eigsh sums");
    double *loc = sla_malloc((size_t)(3 * k), sizeof(double), "eigsh sign candidates");
    double *all = sla_malloc((size_t)(3 * k * size), sizeof(double), "eigsh sign candidates");
    pp_pair *pr = sla_malloc((size_t)k, sizeof *pr, "pairs");
    sla_status st = (AX && MX && red && loc && all && pr) ? SLA_OK : SLA_ENOMEM;
    st = dist_agree(c->comm, FUNC, st);
    *nconv_min = k;
    *maxres = 0;
    for (int64_t b = 0; b < c->batch && st == SLA_OK; b++) {
        double *Xb = X + b * n * k;
        /* unit columns (against overflow before the M-norm), then M-normalized */
        for (int64_t j = 0; j < k; j++) {
            double s = 0;
            for (int64_t i = 0; i < n; i++) s += Xb[j * n + i] * Xb[j * n + i];
            red[j] = s;
        }
        st = c->R->reduce(c->R, SLA_REDUCE_SUM, red, (int)k);
        for (int64_t j = 0; j < k && st == SLA_OK; j++) {
            double s = red[j] > 0 ? 1.0 / sqrt(red[j]) : 0.0;
            for (int64_t i = 0; i < n; i++) Xb[j * n + i] *= s;
        }
        if (st == SLA_OK && c->M) {
            st = block_spmv(c->mc, b, n, k, Xb, MX);
            for (int64_t j = 0; j < k && st == SLA_OK; j++) {
                double s = 0;
                for (int64_t i = 0; i < n; i++) s += Xb[j * n + i] * MX[j * n + i];
                red[j] = s;
            }
            if (st == SLA_OK) st = c->R->reduce(c->R, SLA_REDUCE_SUM, red, (int)k);
            for (int64_t j = 0; j < k && st == SLA_OK; j++) {
                double s = red[j] > 0 ? 1.0 / sqrt(red[j]) : 0.0;
                for (int64_t i = 0; i < n; i++) {
                    Xb[j * n + i] *= s;
                    MX[j * n + i] *= s;
                }
            }
        } else if (st == SLA_OK) {
            memcpy(MX, Xb, sizeof(double) * (size_t)(n * k));
        }
        if (st == SLA_OK) st = block_spmv(c->ac, b, n, k, Xb, AX);
        if (st != SLA_OK) break;
        for (int64_t j = 0; j < k; j++) {
            double q = 0;
            for (int64_t i = 0; i < n; i++) q += Xb[j * n + i] * AX[j * n + i];
            red[j] = q;
        }
        SLA_TRY(c->R->reduce(c->R, SLA_REDUCE_SUM, red, (int)k));
        for (int64_t j = 0; j < k; j++) {
            double r = 0, nx = 0, q = red[j];
            for (int64_t i = 0; i < n; i++) {
                double d = AX[j * n + i] - q * MX[j * n + i];
                r += d * d;
                nx += Xb[j * n + i] * Xb[j * n + i];
            }
            lambda[b * k + j] = q;
            red[k + j] = r;
            red[2 * k + j] = nx;
        }
        SLA_TRY(c->R->reduce(c->R, SLA_REDUCE_SUM, red + k, (int)(2 * k)));
        for (int64_t j = 0; j < k; j++) {
            double lam = lambda[b * k + j];
            double scale = c->normA[b] + (c->M ? fabs(lam) * c->normM[b] : 0.0);
            if (!(scale > 0)) scale = 1.0;
            double nx = red[2 * k + j];
            double res = nx > 0 ? sqrt(red[k + j]) / sqrt(nx) / scale : INFINITY;
            pr[j] = (pp_pair){lam, res, j};
        }
        qsort(pr, (size_t)k, sizeof *pr, by_lambda);
        /* sign: this rank's candidate (|x|, global index, x) per column, then all ranks' */
        for (int64_t q = 0; q < k; q++) {
            const double *x = Xb + pr[q].j * n;
            int64_t im = -1;
            for (int64_t i = 0; i < n; i++)
                if (im < 0 || fabs(x[i]) > fabs(x[im])) im = i;
            loc[3 * q] = im < 0 ? -1.0 : fabs(x[im]);
            loc[3 * q + 1] = im < 0 ? 0.0 : (double)c->A->pattern->rows->global[im];
            loc[3 * q + 2] = im < 0 ? 0.0 : x[im];
        }
        int rc = MPI_Allgather(loc, (int)(3 * k), MPI_DOUBLE, all, (int)(3 * k), MPI_DOUBLE, c->comm);
        if (rc != MPI_SUCCESS) return dist_mpi_error(FUNC, "MPI_Allgather", rc);
        int64_t nc = 0;
        for (int64_t q = 0; q < k; q++) {
            double best = -1, bg = 0, bx = 0;
            for (int r = 0; r < size; r++) {
                const double *t = all + 3 * (r * k + q);
                if (t[0] > best || (t[0] == best && t[1] < bg)) {
                    best = t[0];
                    bg = t[1];
                    bx = t[2];
                }
            }
            double sgn = bx < 0 ? -1.0 : 1.0;
            const double *x = Xb + pr[q].j * n;
            eigvals[b * k + q] = pr[q].lambda;
            if (eigvecs)
                for (int64_t i = 0; i < n; i++) eigvecs[(b * n + i) * k + q] = sgn * x[i];
            if (residuals) residuals[b * k + q] = pr[q].res;
            if (pr[q].res <= c->tol) nc++;
            if (!(pr[q].res <= *maxres)) *maxres = pr[q].res;
        }
        if (nc < *nconv_min) *nconv_min = nc;
    }
    sla_free(AX);
    sla_free(MX);
    sla_free(red);
    sla_free(loc);
    sla_free(all);
    sla_free(pr);
    return st;
}

/* ---- shift-invert (options.sigma; the operator is eigsh_sinv.c) ---- */

/* the identity mass of the standard problem: LOBPCG's test becomes relative to |θ| */
static sla_status block_copy(void *ctx, int64_t b, int64_t n, int64_t m, const double *X,
                             double *Y)
{
    (void)ctx; (void)b;
    memcpy(Y, X, sizeof(double) * (size_t)(n * m));
    return SLA_OK;
}

typedef struct th_pick { double theta; int64_t j; } th_pick;

/* largest |θ| first; the lower index (the LA run) among exact ties */
static int by_abs_theta(const void *a, const void *b)
{
    const th_pick *x = a, *y = b;
    if (fabs(x->theta) != fabs(y->theta)) return fabs(x->theta) > fabs(y->theta) ? -1 : 1;
    return x->j < y->j ? -1 : (x->j > y->j);
}

/* LOBPCG on K twice (largest and smallest θ), then per batch element the k columns of largest
 * |θ| into X ([batch][k][n], column-major per element). stats accumulate both runs. */
static sla_status sinv_run(const sla_dist_matrix *A, const sla_dist_matrix *M, double sigma,
                           dmat_ctx *mc, const sla_space *V, int64_t k, int64_t m,
                           int64_t maxiter, double tol, const double *normA, const double *normM,
                           double *X, int64_t *stats)
{
    MPI_Comm comm = A->pattern->comm;
    const sla_dist_layout *L = A->pattern->rows;
    int64_t n = L->n, N = L->N, batch = A->batch;
    dist_sinv *S = NULL;
    SLA_TRY(dist_sinv_create(A, M, sigma, &S));
    double *zero = sla_calloc((size_t)batch, sizeof(double), "norms");
    double *one = sla_malloc((size_t)batch, sizeof(double), "norms");
    double *lam = sla_malloc((size_t)(2 * batch * k), sizeof(double), "Ritz values");
    double *Y = sla_malloc((size_t)(2 * batch * k * n + 1), sizeof(double), "Ritz vectors");
    int64_t *nconv = sla_malloc((size_t)batch, sizeof(int64_t), "converged counts");
    th_pick *pk = sla_malloc((size_t)(2 * k), sizeof *pk, "picks");
    sla_status st = zero && one && lam && Y && nconv && pk ? SLA_OK : SLA_ENOMEM;
    st = dist_agree(comm, FUNC, st);
    /* K's residual e = Kx − θMx maps to S x − M x/θ = −S M⁻¹e/θ (= −S e/θ without M): a test
     * relative to |θ| (scale 0 + |θ|·‖M‖) tightened by ‖A‖/(‖A‖ + |σ|‖M‖) ≥ ‖A‖/‖S‖; the
     * original residuals decide convergence (finish) */
    double tin = tol;
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        double nm = M ? normM[b] : 1.0, na = normA[b];
        one[b] = 1.0;
        if (na > 0) tin = fmin(tin, tol * na / (na + fabs(sigma) * nm));
    }
    tin = fmax(tin, 1e-14);
    sla_lobpcg_problem pb = {n, N, L->global, batch, V, dist_sinv_block, S,
                             M ? block_spmv : block_copy, mc, NULL, NULL, zero,
                             M ? normM : one};
    for (int run = 0; run < 2 && st == SLA_OK; run++) {
        int64_t s3[3] = {0, 0, 0};
        st = sla_lobpcg_run(&pb, run == 0, k, m, maxiter, tin, lam + run * batch * k,
                            Y + run * batch * k * n, nconv, s3);
        st = dist_agree(comm, FUNC, st);
        for (int q = 0; q < 3; q++) stats[q] += s3[q];
    }
    for (int64_t b = 0; b < batch && st == SLA_OK; b++) {
        for (int run = 0; run < 2; run++)
            for (int64_t j = 0; j < k; j++)
                pk[run * k + j] = (th_pick){lam[run * batch * k + b * k + j], run * k + j};
        qsort(pk, (size_t)(2 * k), sizeof *pk, by_abs_theta);
        for (int64_t q = 0; q < k; q++) {
            int64_t run = pk[q].j / k, j = pk[q].j % k;
            const double *src = Y + run * batch * k * n + (b * k + j) * n;
            if (n) memcpy(X + (b * k + q) * n, src, sizeof(double) * (size_t)n);
        }
    }
    dist_sinv_free(&S);
    sla_free(zero); sla_free(one); sla_free(lam); sla_free(Y); sla_free(nconv); sla_free(pk);
    return st;
}

/* ---- the driver ---- */

static int64_t default_block(int64_t N, int64_t k)
{
    int64_t m = 2 * k > k + 4 ? 2 * k : k + 4;
    if (3 * m > N && 3 * k <= N) m = N / 3;
    return m;
}

sla_status sla_dist_eigsh(const sla_dist_matrix *A, int64_t k, const sla_dist_eigsh_options *opt,
                          void *eigenvalues, void *eigenvectors, sla_eigsh_info *info)
{
    if (!A || !A->pattern)
        return sla_error_set(SLA_EINVAL, FUNC, "A is NULL or has no pattern (not collective)");
    MPI_Comm comm = A->pattern->comm;
    sla_dist_eigsh_options dflt;
    sla_dist_eigsh_options_init(&dflt);
    const sla_dist_eigsh_options *o = opt ? opt : &dflt;
    const sla_dist_matrix *M = o->M;
    const sla_dist_layout *L = A->pattern->rows;
    int64_t n = L->n, N = L->N, batch = A->batch;
    sla_status st = eigenvalues ? SLA_OK
                                : sla_error_set(SLA_EINVAL, FUNC, "eigenvalues is NULL");
    st = dist_agree(comm, FUNC, st);
    if (st == SLA_OK) st = check_all(A, M, k, o, comm);
    if (st != SLA_OK) return st;
    double tol = o->tol == 0 ? 1e-14 : o->tol;
    int64_t m = o->block_size > 0 ? o->block_size : default_block(N, k);
    if (m < k || 3 * m > N)
        return sla_error_set(SLA_EINVAL, FUNC, "options.block_size = %lld must be in [k, n/3] = "
                             "[%lld, %lld]", (long long)m, (long long)k, (long long)(N / 3));
    int64_t maxiter = o->maxiter > 0 ? o->maxiter : 2000;

    dmat_ctx ac = {A, A->pattern->nnz_diag + A->pattern->nnz_offd, NULL, NULL, 0};
    dmat_ctx mc = {M, M ? M->pattern->nnz_diag + M->pattern->nnz_offd : 0, NULL, NULL, 0};
    dist_space ds;
    dist_space_init(&ds, comm, n, SLA_FLOAT64, 0.0);
    double *normA = sla_calloc((size_t)batch, sizeof(double), "norms");
    double *normM = sla_calloc((size_t)batch, sizeof(double), "norms");
    double *inv = o->precond == SLA_DIST_PC_JACOBI
                      ? sla_malloc((size_t)(batch * n + 1), sizeof(double), "Jacobi") : NULL;
    double *lam = sla_malloc((size_t)(batch * k), sizeof(double), "Ritz values");
    double *X = sla_malloc((size_t)(batch * k * n + 1), sizeof(double), "Ritz vectors");
    int64_t *nconv = sla_malloc((size_t)batch, sizeof(int64_t), "converged counts");
    st = (normA && normM && lam && X && nconv && (inv || o->precond != SLA_DIST_PC_JACOBI))
             ? SLA_OK : SLA_ENOMEM;
    st = dist_agree(comm, FUNC, st);
    if (st == SLA_OK) st = dist_eig_norm1(A, FUNC, normA);
    if (st == SLA_OK && M) {
        double *nm = sla_calloc((size_t)M->batch, sizeof(double), "norms");
        st = dist_agree(comm, FUNC, nm ? SLA_OK : SLA_ENOMEM);
        if (st == SLA_OK) st = dist_eig_norm1(M, FUNC, nm);
        for (int64_t b = 0; st == SLA_OK && b < batch; b++) normM[b] = nm[M->batch == 1 ? 0 : b];
        sla_free(nm);
    }
    if (st == SLA_OK && inv) st = jacobi_inv(A, comm, inv);
    jacobi_ctx jc = {inv, n};
    sla_lobpcg_problem pb = {n, N, L->global, batch, &ds.V, block_spmv, &ac,
                             M ? block_spmv : NULL, &mc, inv ? block_jacobi : NULL, &jc, normA,
                             normM};
    int64_t stats[3] = {0, 0, 0};
    int largest = o->which == SLA_EIGSH_LA, sinv = !isnan(o->sigma);
    if (st == SLA_OK && sinv)
        st = sinv_run(A, M, o->sigma, &mc, &ds.V, k, m, maxiter, tol, normA, normM, X, stats);
    else if (st == SLA_OK)
        st = sla_lobpcg_run(&pb, largest, k, m, maxiter, tol, lam, X, nconv, stats);
    st = dist_agree(comm, FUNC, st);
    int64_t nconv_min = k;
    double maxres = 0;
    pp c = {A, M, &ac, &mc, &ds.V, comm, n, k, batch, normA, normM, tol};
    if (st == SLA_OK)
        st = finish(&c, X, lam, eigenvalues, eigenvectors, o->residuals, &nconv_min, &maxres);
    if (st == SLA_OK && info) {
        memset(info, 0, sizeof *info);
        info->method = SLA_EIGSH_LOBPCG;
        info->which = sinv ? SLA_EIGSH_LM : o->which;
        info->sigma = sinv ? o->sigma : NAN;
        info->iterations = stats[0];
        info->operator_applications = stats[1];
        info->precond_applications = stats[2];
        info->spmv = batch * k * (M ? 2 : 1);
        info->converged = nconv_min;
        info->max_residual = maxres;
        for (int64_t b = 0; b < batch; b++) {
            info->norm_A = fmax(info->norm_A, normA[b]);
            info->norm_M = fmax(info->norm_M, M ? normM[b] : 0.0);
        }
        int size;
        MPI_Comm_size(comm, &size);
        snprintf(info->description, sizeof info->description,
                 "distributed LOBPCG (%s, block %lld%s%s) on %d ranks: libsla's LOBPCG with "
                 "Gram products summed over the ranks",
                 sinv ? "shift-invert by SuperLU_DIST, nearest sigma" : largest ? "LA" : "SA",
                 (long long)m,
                 inv ? ", Jacobi" : "", M ? ", generalized" : "", size);
    }
    sla_free(ac.xr); sla_free(ac.yr); sla_free(mc.xr); sla_free(mc.yr);
    sla_free(normA); sla_free(normM); sla_free(inv); sla_free(lam); sla_free(X); sla_free(nconv);
    if (st == SLA_OK && nconv_min < k)
        return sla_error_set(SLA_NOT_CONVERGED, FUNC, "%lld of %lld eigenpairs converged to "
                             "tol = %g in %lld iterations (max residual %.3g)",
                             (long long)nconv_min, (long long)k, tol, (long long)stats[0], maxres);
    return st;
}
