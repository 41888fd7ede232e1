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

/* Where a row's residual goes: r[j], or (r = NULL) straight into the restriction b_c = Pᵀ r. */
typedef struct resid_out {
    double *r;                   /* ENTRY arrays of the hierarchy's scalar type */
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

/* row_dinv (t_amg_smooth.h): the l1 Gauss–Seidel factor 1 / (a_ii + sign(a_ii) Σ_{j outside the block} |a_ij|) of row i of
 * block [lo, hi): stored (dinv), or formed: a row inside its block has l1 = 0, so the factor is
 * 1 / a_ii (a_ii + ±0 = a_ii: the stored value's bits), found from slot kfrom on; a boundary
 * row's is kept in blk->bdinv. */
#define SLA_TEMPLATE "precond/t_amg_smooth.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

/* The value kernels: the double or double complex instance by the level's matrix (vectors and
 * diagonals in the same scalar type, behind double pointers). */
int64_t amg_diagonal(const amg_csr *A, double *diag)
{
    return AMG_DISPATCH(A, amg_diagonal, (A, (void *)diag));
}

sla_status amg_smoother_setup(const amg_csr *A, amg_blocks *blk, const double *diag, double rho,
                              sla_amg_smoother smoother, double *dinv)
{
    /* Gauss–Seidel: only the boundary rows' factors are stored (8 bytes per unknown saved) */
    if (smoother != SLA_AMG_SMOOTHER_JACOBI && !blk->bdinv && blk->nbrows > 0) {
        blk->bdinv = sla_malloc((size_t)blk->nbrows * amg_es(A), sizeof(double),
                                "AMG smoother boundary");
        if (!blk->bdinv) return SLA_ENOMEM;
    }
    AMG_DISPATCH(A, amg_smoother_setup, (A, blk, (const void *)diag, rho, smoother, (void *)dinv));
    return SLA_OK;
}

void amg_gs_full_dinv(const amg_csr *A, const amg_blocks *blk, double *dinv)
{
    AMG_DISPATCH(A, amg_gs_full_dinv, (A, blk, (void *)dinv));
}

void amg_gs_sweep(const amg_csr *A, const amg_blocks *blk, const double *dinv, const double *b,
                  double *x, double *xold, int reverse, int zero_guess)
{
    AMG_DISPATCH(A, amg_gs_sweep, (A, blk, (const void *)dinv, (const void *)b, (void *)x,
                                   (void *)xold, reverse, zero_guess));
}

void amg_gs_forward_residual(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                             const double *b, double *x, double *xold, double *r, int zero_guess)
{
    resid_out o = {r, NULL, NULL, NULL};
    AMG_DISPATCH(A, forward_residual, (A, blk, (const void *)dinv, (const void *)b, (void *)x,
                                       (void *)xold, &o, zero_guess));
}

void amg_gs_forward_restrict(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                             const double *b, double *x, double *xold, const amg_csr *P,
                             const amg_restrict *rs, double *bc, int zero_guess)
{
    resid_out o = {NULL, P, rs, bc};
    AMG_DISPATCH(A, forward_residual, (A, blk, (const void *)dinv, (const void *)b, (void *)x,
                                       (void *)xold, &o, zero_guess));
}

void amg_residual(const amg_csr *A, const amg_blocks *blk, const double *b, const double *x,
                  double *r)
{
    AMG_DISPATCH(A, amg_residual, (A, blk, (const void *)b, (const void *)x, (void *)r));
}

void amg_jacobi_sweep(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                      const double *b, double *x, double *r, int zero_guess)
{
    AMG_DISPATCH(A, amg_jacobi_sweep, (A, blk, (const void *)dinv, (const void *)b, (void *)x,
                                       (void *)r, zero_guess));
}

void amg_spmv(const amg_csr *M, const double *x, double *y, int add)
{
    AMG_DISPATCH(M, amg_spmv, (M, (const void *)x, (void *)y, add));
}
