/* Selected inverse of a Cholesky factor (supernodal or simplicial): the entries of (L Lᵀ)⁻¹ on the pattern of L
 * (Takahashi, Fagan & Chin 1973; Erisman & Tinney 1975), in the supernodal block form of SelInv
 * (Lin, Yang, Meza, Lu, Ying & E, ACM TOMS 37(4), 2011). Used for the gradient of log|det A|,
 * ∂ log|det A| / ∂a_ij = (A⁻¹)_ji, which needs A⁻¹ only where A has entries, all of which lie in
 * the pattern of L (after the fill-reducing permutation).
 *
 * With Z = (L Lᵀ)⁻¹, Z L = L⁻ᵀ is upper triangular. For a supernode with columns J and
 * off-diagonal rows R (L_{:,J} is nonzero only in rows J ∪ R), the block column J of Z L = L⁻ᵀ
 * gives, since (L⁻ᵀ)_RJ = 0 and (L⁻ᵀ)_JJ = L_JJ⁻ᵀ:
 *     Z_RJ = −Z_RR Y,   Z_JJ = (L_JJ L_JJᵀ)⁻¹ − Z_RJᵀ Y,   Y = L_RJ L_JJ⁻¹.
 * R is a clique of the filled graph, so Z_RR lies in the pattern of supernodes nearer the root,
 * computed before: the supernodes are processed from the last to the first. */
#include <cblas.h>
#include <lapack.h>
#include <string.h>

#include "direct/direct.h"

void sla_selinv_col2super(const sla_supernodal_llt *L, int64_t *col2super)
{
    for (int64_t k = 0; k < L->nsuper; k++)
        for (int64_t j = L->super[k]; j < L->super[k + 1]; j++) col2super[j] = k;
}

int64_t sla_supernodal_find(const sla_supernodal_llt *L, const int64_t *col2super, int64_t i,
                            int64_t j)
{
    int64_t lo = i < j ? i : j, hi = i < j ? j : i;
    int64_t k = col2super[lo], off = lo - L->super[k], nsrow = L->pi[k + 1] - L->pi[k];
    const int64_t *rows = L->s + L->pi[k];
    int64_t a = off, b = nsrow;          /* rows[off] = lo; rows ascending */
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (rows[m] < hi) a = m + 1; else b = m;
    }
    if (a == nsrow || rows[a] != hi) return -1;
    return L->px[k] + off * nsrow + a;
}

/* Z_RR (lower triangle, dense r × r, leading dimension r) from the supernodes that own the columns
 * of R; relpos[row] = position of row in R (−1 elsewhere). */
static sla_status gather_zrr(const sla_supernodal_llt *L, const int64_t *col2super,
                             const int64_t *relpos, const int64_t *R, int64_t r, const double *Z,
                             double *zrr)
{
    for (int64_t b = 0; b < r; b++) {
        int64_t q = R[b], t = col2super[q], off = q - L->super[t];
        int64_t nst = L->pi[t + 1] - L->pi[t];
        const int64_t *rt = L->s + L->pi[t];
        const double *zc = Z + L->px[t] + off * nst;
        int64_t found = 0;
        for (int64_t p = off; p < nst && found < r - b; p++) {
            int64_t a = relpos[rt[p]];
            if (a >= 0) { zrr[a + b * r] = zc[p]; found++; }
        }
        if (found != r - b)
            return SLA_FAIL(SLA_EINTERNAL, "rows of a supernode are not a clique of the factor "
                            "(column %lld: %lld of %lld found)", (long long)q, (long long)found,
                            (long long)(r - b));
    }
    return SLA_OK;
}

/* One supernode k: writes Z's block columns J = super[k] .. super[k+1]−1. */
static sla_status selinv_supernode(const sla_supernodal_llt *L, const int64_t *col2super,
                                   int64_t k, int64_t *relpos, double *zrr, double *y, double *w,
                                   double *Z)
{
    int64_t k1 = L->super[k], c = L->super[k + 1] - k1;
    int64_t nsrow = L->pi[k + 1] - L->pi[k], r = nsrow - c;
    const int64_t *R = L->s + L->pi[k] + c;
    const double *lb = L->x + L->px[k];
    double *zb = Z + L->px[k];
    /* diagonal block: lower triangle of L_JJ (upper set to 0 so every entry is defined) */
    for (int64_t j = 0; j < c; j++)
        for (int64_t i = 0; i < c; i++) zb[i + j * nsrow] = i >= j ? lb[i + j * nsrow] : 0;
    if (r > 0) {
        /* Y = L_RJ L_JJ⁻¹ */
        for (int64_t j = 0; j < c; j++) memcpy(y + j * r, lb + c + j * nsrow, (size_t)r * sizeof(double));
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, (int)r,
                    (int)c, 1.0, lb, (int)nsrow, y, (int)r);
        for (int64_t a = 0; a < r; a++) relpos[R[a]] = a;
        sla_status st = gather_zrr(L, col2super, relpos, R, r, Z, zrr);
        for (int64_t a = 0; a < r; a++) relpos[R[a]] = -1;
        if (st != SLA_OK) return st;
        /* W = Z_RJ = −Z_RR Y (Z_RR symmetric, lower triangle stored) */
        cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, (int)r, (int)c, -1.0, zrr, (int)r, y,
                    (int)r, 0.0, w, (int)r);
        for (int64_t j = 0; j < c; j++) memcpy(zb + c + j * nsrow, w + j * r, (size_t)r * sizeof(double));
    }
    /* Z_JJ = (L_JJ L_JJᵀ)⁻¹ − W ᵀ Y */
    lapack_int nc = (lapack_int)c, ld = (lapack_int)nsrow, info = 0;
    LAPACK_dpotri("L", &nc, zb, &ld, &info);
    if (info != 0)
        return SLA_FAIL(SLA_EINTERNAL, "dpotri of supernode %lld returned %d (zero pivot in a "
                        "factor that succeeded)", (long long)k, (int)info);
    if (r > 0)
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)c, (int)c, (int)r, -1.0, w,
                    (int)r, y, (int)r, 1.0, zb, (int)nsrow);
    return SLA_OK;
}

sla_status sla_selinv_llt(const sla_supernodal_llt *L, double *Z)
{
    int64_t n = L->n, maxr = 0, maxc = 0;
    for (int64_t k = 0; k < L->nsuper; k++) {
        int64_t c = L->super[k + 1] - L->super[k], r = L->pi[k + 1] - L->pi[k] - c;
        if (r > maxr) maxr = r;
        if (c > maxc) maxc = c;
    }
    int64_t *col2super = sla_malloc((size_t)n, sizeof(int64_t), "selected inverse: col2super");
    int64_t *relpos = sla_malloc((size_t)n, sizeof(int64_t), "selected inverse: positions");
    double *zrr = sla_malloc((size_t)(maxr * maxr), sizeof(double), "selected inverse: Z_RR");
    double *y = sla_malloc((size_t)(2 * maxr * maxc), sizeof(double), "selected inverse: Y, W");
    sla_status st = col2super && relpos && zrr && y ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        sla_selinv_col2super(L, col2super);
        for (int64_t i = 0; i < n; i++) relpos[i] = -1;
        for (int64_t k = L->nsuper - 1; k >= 0 && st == SLA_OK; k--)
            st = selinv_supernode(L, col2super, k, relpos, zrr, y, y + maxr * maxc, Z);
    }
    sla_free(col2super);
    sla_free(relpos);
    sla_free(zrr);
    sla_free(y);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Simplicial factors                                                                        */
/* ---------------------------------------------------------------------------------------- */

int64_t sla_simplicial_find(const sla_simplicial_llt *L, int64_t i, int64_t j)
{
    int64_t lo = i < j ? i : j, hi = i < j ? j : i;
    int64_t a = L->p[lo], b = L->p[lo] + L->nz[lo];   /* rows ascending, diagonal first */
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (L->i[m] < hi) a = m + 1; else b = m;
    }
    return a < L->p[lo] + L->nz[lo] && L->i[a] == hi ? a : -1;
}

/* Column j of Z: w[t] accumulates Z_{r_t j}; relpos[row] = t for the rows of column j. */
static sla_status selinv_column(const sla_simplicial_llt *L, int64_t j, int64_t *relpos,
                                double *w, double *Z)
{
    int64_t p0 = L->p[j], m = L->nz[j] - 1;    /* off-diagonal rows at p0 + 1 .. p0 + m */
    const int64_t *R = L->i + p0 + 1;
    const double *l = L->x + p0 + 1;
    double d = L->x[p0];
    for (int64_t t = 0; t < m; t++) { relpos[R[t]] = t; w[t] = 0; }
    for (int64_t s = 0; s < m; s++) {
        int64_t q = R[s], found = 0;
        double ls = l[s] / d;
        /* column q of Z: rows ≥ q; those in R give Z_{r_t r_s} for t ≥ s */
        for (int64_t k = L->p[q]; k < L->p[q] + L->nz[q]; k++) {
            int64_t t = relpos[L->i[k]];
            if (t < 0) continue;
            double z = Z[k];
            w[t] -= ls * z;                                   /* Z_{r_t j} -= l_s Z_{r_t r_s} */
            if (t > s) w[s] -= l[t] / d * z;                  /* Z_{r_s j} -= l_t Z_{r_s r_t} */
            found++;
        }
        if (found != m - s) {
            for (int64_t t = 0; t < m; t++) relpos[R[t]] = -1;
            return SLA_FAIL(SLA_EINTERNAL, "rows of column %lld are not a clique of the factor",
                            (long long)j);
        }
    }
    double zjj = 1 / (d * d);
    for (int64_t t = 0; t < m; t++) {
        Z[p0 + 1 + t] = w[t];
        zjj -= l[t] / d * w[t];
        relpos[R[t]] = -1;
    }
    Z[p0] = zjj;
    return SLA_OK;
}

sla_status sla_selinv_llt_simplicial(const sla_simplicial_llt *L, double *Z)
{
    int64_t n = L->n;
    int64_t *relpos = sla_malloc((size_t)n, sizeof(int64_t), "selected inverse: positions");
    double *w = sla_malloc((size_t)n, sizeof(double), "selected inverse: column");
    sla_status st = relpos && w ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        for (int64_t i = 0; i < n; i++) relpos[i] = -1;
        for (int64_t j = n - 1; j >= 0 && st == SLA_OK; j--) st = selinv_column(L, j, relpos, w, Z);
    }
    sla_free(relpos);
    sla_free(w);
    return st;
}
