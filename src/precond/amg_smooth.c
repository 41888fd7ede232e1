/* Smoothers and the matrix kernels of the V-cycle.
 *
 * Default smoother: l1 hybrid Gauss–Seidel (Baker, Falgout, Kolev & Yang, "Multigrid smoothers for
 * ultraparallel computing", SIAM J. Sci. Comput. 33 (2011) 2864–2887, section 6): rows are split
 * into one block per thread; inside a block a sweep is Gauss–Seidel, across blocks it reads the
 * values of the previous sweep (Jacobi), and the diagonal of row i is enlarged by the l1 norm of
 * its entries outside the block, which makes the smoother convergent for any SPD A. The forward
 * sweep is M = blockdiag(D₁ + L), the backward sweep Mᵀ = blockdiag(D₁ + U) for symmetric A, so
 * pre = forward and post = backward give a symmetric V-cycle. Results depend on the block count
 * (fixed at create), never on scheduling.
 * Alternative: damped Jacobi with weight 4/(3 ρ(D⁻¹A)), symmetric with equal sweep counts. */
#include <math.h>
#include <string.h>

#include "precond/amg_internal.h"

sla_status amg_blocks_build(const amg_csr *A, int nblocks, amg_blocks *blk)
{
    memset(blk, 0, sizeof *blk);
    nblocks = sla_par_parts(amg_sweep_bytes(A), nblocks);   /* 1 for small levels */
    blk->bounds = sla_malloc((size_t)nblocks + 1, sizeof(int64_t), "AMG smoother blocks");
    if (!blk->bounds) return SLA_ENOMEM;
    blk->n = nblocks;
    sla_partition_rows(A->rp, A->nrows, nblocks, blk->bounds);
    return amg_blocks_halo(A, blk);
}

/* Row i of block [lo, hi) reads only its own block (columns are sorted). */
static inline int row_inside(const amg_csr *A, int64_t i, int64_t lo, int64_t hi)
{
    int64_t k0 = A->rp[i], k1 = A->rp[i + 1];
    return k0 == k1 || (A->ci[k0] >= lo && A->ci[k1 - 1] < hi);
}

/* The columns read across block boundaries (halo) and the rows that read them (brows). Only rows
 * whose first or last column leaves the block are scanned. */
sla_status amg_blocks_halo(const amg_csr *A, amg_blocks *blk)
{
    sla_free(blk->halo);
    sla_free(blk->brows);
    blk->halo = blk->brows = NULL;
    blk->nhalo = blk->nbrows = 0;
    if (blk->n <= 1) return SLA_OK;
    int64_t n = A->ncols, nb = 0, nh = 0;
    unsigned char *mark = sla_calloc((size_t)n, 1, "AMG halo marks");
    if (!mark) return SLA_ENOMEM;
    for (int t = 0; t < blk->n; t++) {
        int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1];
        for (int64_t i = lo; i < hi; i++) {
            if (row_inside(A, i, lo, hi)) continue;
            nb++;
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
                int64_t j = A->ci[k];
                if ((j < lo || j >= hi) && !mark[j]) { mark[j] = 1; nh++; }
            }
        }
    }
    blk->halo = sla_malloc((size_t)nh, sizeof(int32_t), "AMG halo");
    blk->brows = sla_malloc((size_t)nb, sizeof(int32_t), "AMG block boundary rows");
    if (!blk->halo || !blk->brows) { sla_free(mark); return SLA_ENOMEM; }
    for (int64_t j = 0, h = 0; j < n; j++)
        if (mark[j]) blk->halo[h++] = (int32_t)j;
    for (int t = 0; t < blk->n; t++) {
        int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1];
        for (int64_t i = lo; i < hi; i++)
            if (!row_inside(A, i, lo, hi)) blk->brows[blk->nbrows++] = (int32_t)i;
    }
    blk->nhalo = nh;
    sla_free(mark);
    return SLA_OK;
}

void amg_blocks_free(amg_blocks *blk)
{
    sla_free(blk->bounds);
    sla_free(blk->halo);
    sla_free(blk->brows);
    sla_free(blk->bdinv);
    memset(blk, 0, sizeof *blk);
}

int64_t amg_diagonal(const amg_csr *A, double *diag)
{
    int64_t n = A->nrows, bad = n;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) reduction(min : bad) if (n > AMG_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        double d = 0;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
            if (A->ci[k] == i) { d = A->v[k]; break; }
        diag[i] = d;
        if (d == 0 && i < bad) bad = i;
    }
    return bad < n ? bad : -1;
}

sla_status amg_diagonal_error(const amg_csr *A, int level, int64_t bad)
{
    int stored = 0;
    for (int64_t k = A->rp[bad]; k < A->rp[bad + 1]; k++) stored |= A->ci[k] == bad;
    if (level == 0)
        return SLA_FAIL(SLA_EINVAL, "row %lld of A has %s diagonal entry: the AMG smoother "
                        "divides by the diagonal", (long long)bad, stored ? "a zero" : "no stored");
    return SLA_FAIL(SLA_EINVAL, "AMG level %d, row %lld: zero diagonal in the Galerkin coarse "
                    "operator (is A indefinite?)", level, (long long)bad);
}

/* First index of the ascending a[0..n) whose value is ≥ x (binary search). */
static int64_t lower_bound32(const int32_t *a, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Index of row i in blk->brows (ascending), i a boundary row. */
static int64_t brow_index(const amg_blocks *blk, int64_t i)
{
    return lower_bound32(blk->brows, blk->nbrows, i);
}

/* The l1 Gauss–Seidel factor 1 / (a_ii + sign(a_ii) Σ_{j outside the block} |a_ij|) of row i of
 * block [lo, hi): stored (dinv), or formed: a row inside its block has l1 = 0, so the factor is
 * 1 / a_ii (a_ii + ±0 = a_ii: the stored value's bits), found from slot kfrom on; a boundary
 * row's is kept in blk->bdinv. */
static inline double row_dinv(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                              int64_t i, int64_t lo, int64_t hi, int64_t kfrom)
{
    if (dinv) return dinv[i];
    int64_t k0 = A->rp[i], k1 = A->rp[i + 1];
    if (k0 < k1 && (A->ci[k0] < lo || A->ci[k1 - 1] >= hi)) return blk->bdinv[brow_index(blk, i)];
    for (int64_t k = kfrom; k < k1; k++)
        if (A->ci[k] == i) return 1.0 / A->v[k];
    return 1.0 / 0.0;   /* no diagonal: never smoothed (create checks) */
}

sla_status amg_smoother_setup(const amg_csr *A, amg_blocks *blk, const double *diag, double rho,
                              sla_amg_smoother smoother, double *dinv)
{
    if (smoother == SLA_AMG_SMOOTHER_JACOBI) {
        double w = 4.0 / (3.0 * rho);
        #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(24.0 * (double)A->nrows))
        for (int64_t i = 0; i < A->nrows; i++) dinv[i] = w / diag[i];
        return SLA_OK;
    }
    /* Gauss–Seidel: only the boundary rows' factors are stored (8 bytes per unknown saved) */
    if (!blk->bdinv && blk->nbrows > 0) {
        blk->bdinv = sla_malloc((size_t)blk->nbrows, sizeof(double), "AMG smoother boundary");
        if (!blk->bdinv) return SLA_ENOMEM;
    }
    for (int t = 0, q = 0; t < blk->n; t++) {
        int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1];
        for (; q < blk->nbrows && blk->brows[q] < hi; q++) {
            int64_t i = blk->brows[q];
            double l1 = 0;
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
                if (A->ci[k] < lo || A->ci[k] >= hi) l1 += fabs(A->v[k]);
            blk->bdinv[q] = 1.0 / (diag[i] + copysign(l1, diag[i]));
        }
    }
    return SLA_OK;
}

void amg_gs_full_dinv(const amg_csr *A, const amg_blocks *blk, double *dinv)
{
    for (int t = 0; t < blk->n; t++)
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
            dinv[i] = row_dinv(A, blk, NULL, i, blk->bounds[t], blk->bounds[t + 1], A->rp[i]);
}

/* x_i = (b_i − Σ_{lo ≤ j < i} a_ij x_j) / d₁_i: the first forward sweep from x = 0 reads only the
 * strictly lower in-block part of each row (columns are sorted: stop at the diagonal). */
static inline void forward_from_zero(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                                     const double *b, double *x, int64_t lo, int64_t hi,
                                     int64_t from, int64_t to)
{
    const int64_t *rp = A->rp;
    const int32_t *ci = A->ci;
    const double *v = A->v;
    for (int64_t i = from; i < to; i++) {
        double s = b[i];
        int64_t k = rp[i];
        for (; k < rp[i + 1]; k++) {
            int64_t j = ci[k];
            if (j >= i) break;
            if (j >= lo) s -= v[k] * x[j];
        }
        x[i] = s * row_dinv(A, blk, dinv, i, lo, hi, k);   /* the diagonal is at k */
    }
}

/* x_i += (b_i − Σ_j a_ij x_j) / d₁_i, with x_j from the snapshot xold outside [lo, hi). */
static inline void gs_row(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                          const double *b, double *x, const double *xold, int64_t lo, int64_t hi,
                          int64_t i)
{
    int64_t k0 = A->rp[i], k1 = A->rp[i + 1];
    const int32_t *ci = A->ci;
    const double *v = A->v;
    double s = b[i];
    if (k0 == k1) return;
    if (ci[k0] >= lo && ci[k1 - 1] < hi) {
        for (int64_t k = k0; k < k1; k++) s -= v[k] * x[ci[k]];
    } else {
        for (int64_t k = k0; k < k1; k++) {
            int64_t j = ci[k];
            s -= v[k] * ((j >= lo && j < hi) ? x[j] : xold[j]);
        }
    }
    x[i] += s * row_dinv(A, blk, dinv, i, lo, hi, k0);
}

void amg_gs_sweep(const amg_csr *A, const amg_blocks *blk, const double *dinv, const double *b,
                  double *x, double *xold, int reverse, int zero_guess)
{
    if (zero_guess && reverse) {   /* not used by the cycle; kept general */
        memset(x, 0, sizeof(double) * (size_t)A->nrows);
        zero_guess = 0;
    }
    if (!zero_guess)
        for (int64_t h = 0; h < blk->nhalo; h++) xold[blk->halo[h]] = x[blk->halo[h]];
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (blk->n > 1)
    for (int t = 0; t < blk->n; t++) {
        int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1];
        if (zero_guess)
            forward_from_zero(A, blk, dinv, b, x, lo, hi, lo, hi);
        else if (!reverse)
            for (int64_t i = lo; i < hi; i++) gs_row(A, blk, dinv, b, x, xold, lo, hi, i);
        else
            for (int64_t i = hi - 1; i >= lo; i--) gs_row(A, blk, dinv, b, x, xold, lo, hi, i);
    }
}

static inline double row_residual(const amg_csr *A, const double *b, const double *x, int64_t i)
{
    double s = b[i];
    for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) s -= A->v[k] * x[A->ci[k]];
    return s;
}

/* Where a row's residual goes: r[j], or (r = NULL) straight into the restriction b_c = Pᵀ r. */
typedef struct resid_out {
    double *r;
    const amg_csr *P;
    const amg_restrict *rs;
    double *bc;
} resid_out;

/* Index of row j in the restriction's shared rows, from the cursor *q (rows met ascending). */
static inline int64_t shared_row(const amg_restrict *rs, int64_t j, int64_t *q)
{
    while (*q < rs->nrows && rs->rows[*q] < j) (*q)++;
    return *q < rs->nrows && rs->rows[*q] == j ? *q : -1;
}

/* First shared row ≥ j. */
static int64_t shared_lower(const amg_restrict *rs, int64_t j)
{
    return lower_bound32(rs->rows, rs->nrows, j);
}

/* Row j's residual rj: stored, or added to the coarse entries no other block feeds (rows of a
 * block arrive ascending: the order of R = Pᵀ's rows); a row feeding a shared entry keeps rj
 * for the ordered pass of finish_restrict. */
static inline void put(const resid_out *o, int64_t j, double rj, int64_t *q)
{
    if (o->r) {
        o->r[j] = rj;
        return;
    }
    const amg_csr *P = o->P;
    const unsigned char *sh = o->rs->shared;
    for (int64_t s = P->rp[j]; s < P->rp[j + 1]; s++)
        if (!sh || !sh[P->ci[s]]) o->bc[P->ci[s]] += P->v[s] * rj;
    if (sh) {
        int64_t k = shared_row(o->rs, j, q);
        if (k >= 0) o->rs->rv[k] = rj;
    }
}

/* The shared coarse entries, over their rows ascending. */
static void finish_restrict(const resid_out *o)
{
    const amg_restrict *rs = o->rs;
    const amg_csr *P = o->P;
    for (int64_t q = 0; q < rs->nrows; q++) {
        int64_t i = rs->rows[q];
        for (int64_t s = P->rp[i]; s < P->rp[i + 1]; s++)
            if (rs->shared[P->ci[s]]) o->bc[P->ci[s]] += P->v[s] * rs->rv[q];
    }
}

static void forward_residual(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                             const double *b, double *x, double *xold, const resid_out *o,
                             int zero_guess)
{
    if (!zero_guess)
        for (int64_t h = 0; h < blk->nhalo; h++) xold[blk->halo[h]] = x[blk->halo[h]];
    #pragma omp parallel num_threads(sla_threads()) if (blk->n > 1)
    {
        if (!o->r) {
            #pragma omp for schedule(static)
            for (int64_t c = 0; c < o->P->ncols; c++) o->bc[c] = 0;
        }
        #pragma omp for schedule(static, 1)
        for (int t = 0; t < blk->n; t++) {
            int64_t lo = blk->bounds[t], hi = blk->bounds[t + 1], j = lo;
            int64_t q = o->r || !o->rs->shared ? 0 : shared_lower(o->rs, lo);
            for (int64_t i = lo; i < hi; i++) {
                if (zero_guess) forward_from_zero(A, blk, dinv, b, x, lo, hi, i, i + 1);
                else gs_row(A, blk, dinv, b, x, xold, lo, hi, i);
                /* rows whose last column the sweep has passed are final: their residual now */
                for (; j <= i; j++) {
                    int64_t k0 = A->rp[j], k1 = A->rp[j + 1];
                    if (k0 < k1 && (A->ci[k0] < lo || A->ci[k1 - 1] >= hi)) continue;  /* later */
                    if (k0 < k1 && A->ci[k1 - 1] > i) break;
                    put(o, j, row_residual(A, b, x, j), &q);
                }
            }
            for (; j < hi; j++)
                if (row_inside(A, j, lo, hi)) put(o, j, row_residual(A, b, x, j), &q);
        }
        /* implicit barrier: every block's x is final. A row reading another block feeds only
         * shared coarse entries (amg_restrict_build), so its order does not matter here. */
        #pragma omp for schedule(static)
        for (int64_t k = 0; k < blk->nbrows; k++) {
            int64_t j = blk->brows[k];
            int64_t q = o->r ? 0 : shared_lower(o->rs, j);
            put(o, j, row_residual(A, b, x, j), &q);
        }
    }
    if (!o->r && o->rs->shared) finish_restrict(o);
}

void amg_gs_forward_residual(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                             const double *b, double *x, double *xold, double *r, int zero_guess)
{
    resid_out o = {r, NULL, NULL, NULL};
    forward_residual(A, blk, dinv, b, x, xold, &o, zero_guess);
}

void amg_gs_forward_restrict(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                             const double *b, double *x, double *xold, const amg_csr *P,
                             const amg_restrict *rs, double *bc, int zero_guess)
{
    resid_out o = {NULL, P, rs, bc};
    forward_residual(A, blk, dinv, b, x, xold, &o, zero_guess);
}

void amg_residual(const amg_csr *A, const amg_blocks *blk, const double *b, const double *x,
                  double *r)
{
    #pragma omp parallel for num_threads(sla_threads()) schedule(static, 1) if (blk->n > 1)
    for (int t = 0; t < blk->n; t++)
        for (int64_t i = blk->bounds[t]; i < blk->bounds[t + 1]; i++)
            r[i] = row_residual(A, b, x, i);
}

void amg_jacobi_sweep(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                      const double *b, double *x, double *r, int zero_guess)
{
    int64_t n = A->nrows;
    if (zero_guess) {
        #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(24.0 * (double)n))
        for (int64_t i = 0; i < n; i++) x[i] = dinv[i] * b[i];
        return;
    }
    amg_residual(A, blk, b, x, r);
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(32.0 * (double)n))
    for (int64_t i = 0; i < n; i++) x[i] += dinv[i] * r[i];
}

void amg_spmv(const amg_csr *M, const double *x, double *y, int add)
{
    int64_t m = M->nrows;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(amg_sweep_bytes(M)))
    for (int64_t i = 0; i < m; i++) {
        double s = 0;
        for (int64_t k = M->rp[i]; k < M->rp[i + 1]; k++) s += M->v[k] * x[M->ci[k]];
        y[i] = add ? y[i] + s : s;
    }
}
