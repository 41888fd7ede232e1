/* Own numeric supernodal Cholesky LLᵀ and triangular solves on CHOLMOD's symbolic supernodal
 * factor (its super / pi / px / s arrays and its L->x layout), for small factors that are
 * refactorized many times (a training loop).
 *
 * Why. CHOLMOD's supernodal numeric factorization calls BLAS (dsyrk, dgemm, dtrsm, dpotrf) once
 * per supernode pair; on a factor of a few Mflop the calls' overhead dominates (2D Poisson 62²,
 * 3844 unknowns, nnz(L) 62k, 2.3 Mflop: 3.5 ms supernodal, 1.3 ms simplicial). Here everything
 * that depends only on the pattern — where each entry of A lands in L->x, and for each supernode
 * which ancestor columns its update touches and at which local rows — is computed once
 * (sla_snode_plan_build), and the numeric factorization is the flops alone: a right-looking
 * (fan-out) supernodal LLᵀ whose inner loops are contiguous axpys (vectorized by the compiler),
 * then scatters by precomputed relative indices.
 *
 * Method. For each supernode s in order (its descendants' updates already subtracted): the
 * column Cholesky of its nsrow × nscol panel (left-looking inside the panel), then for each
 * later column j among its off-diagonal rows R, the update column u_i = Σ_k B_ik B_jk (i ≥ j,
 * B = the panel's off-diagonal rows) subtracted from column R_j of the ancestor supernode at
 * the local rows of R_i. The result is a CHOLMOD supernodal LLᵀ factor (cholmod_solve2,
 * the selected inverse and the log-determinant read it as theirs). References: Ng & Peyton,
 * "Block sparse Cholesky algorithms on advanced uniprocessor computers", SIAM J. Sci. Comput.
 * 14(5), 1993 (supernodal fan-out with relative indices); Davis, "Direct Methods for Sparse
 * Linear Systems", SIAM 2006, ch. 4 and 9.
 */
#include <math.h>
#include <string.h>

#include "direct/direct.h"

/* The numeric kernels are built twice on x86-64, for AVX2 + FMA (x86-64-v3) and for the
 * baseline, and the loader picks one per CPU (GCC function multiversioning); the helpers are
 * inlined into each clone. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(SLA_NO_CLONES)
#define SNODE_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#define SNODE_INLINE static inline __attribute__((always_inline))
#else
#define SNODE_KERNEL
#define SNODE_INLINE static inline
#endif

/* Position of each entry of the lower triangle of the permuted A in L->x, and the update runs:
 * for supernode d, run r covers its off-diagonal rows j1 ≤ j < j2 that are columns of one
 * ancestor t; rel[rel_off + i − j1] (j1 ≤ i < nrow) is the local row of R_i in t. */
sla_status sla_snode_plan_build(const sla_supernodal_llt *L, const int64_t *perm,
                                const sla_symlower *low, sla_snode_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    int64_t n = L->n, ns = L->nsuper;
    int64_t *pinv = sla_malloc((size_t)(n > 0 ? n : 1), sizeof(int64_t), "inverse permutation");
    int64_t *c2s = sla_malloc((size_t)(n > 0 ? n : 1), sizeof(int64_t), "column to supernode");
    int64_t *map = sla_malloc((size_t)(n > 0 ? n : 1), sizeof(int64_t), "row map");
    plan->apos = sla_malloc((size_t)(low->nnz > 0 ? low->nnz : 1), sizeof(int64_t),
                            "entry positions");
    plan->run_ptr = sla_malloc((size_t)ns + 1, sizeof(int64_t), "update runs");
    sla_status st = pinv && c2s && map && plan->apos && plan->run_ptr ? SLA_OK : SLA_ENOMEM;
    if (st != SLA_OK) goto done;
    for (int64_t k = 0; k < n; k++) pinv[perm[k]] = k;
    sla_selinv_col2super(L, c2s);
    for (int64_t r = 0; r < n; r++)
        for (int64_t q = low->rowptr[r]; q < low->rowptr[r + 1]; q++) {
            plan->apos[q] = sla_supernodal_find(L, c2s, pinv[r], pinv[low->colind[q]]);
            if (plan->apos[q] < 0) {
                st = SLA_FAIL(SLA_EINTERNAL, "entry (%lld, %lld) of A is not in the pattern of L",
                              (long long)r, (long long)low->colind[q]);
                goto done;
            }
        }
    /* count runs and relative indices */
    int64_t nruns = 0, nrel = 0, maxrow = 1;
    for (int64_t d = 0; d < ns; d++) {
        int64_t nscol = L->super[d + 1] - L->super[d], nsrow = L->pi[d + 1] - L->pi[d];
        const int64_t *R = L->s + L->pi[d] + nscol;
        int64_t nrow = nsrow - nscol;
        maxrow = nsrow > maxrow ? nsrow : maxrow;
        for (int64_t j = 0; j < nrow;) {
            int64_t t = c2s[R[j]], j2 = j;
            while (j2 < nrow && c2s[R[j2]] == t) j2++;
            nruns++;
            nrel += nrow - j;
            j = j2;
        }
    }
    plan->nruns = nruns;
    plan->nnz_a = low->nnz;
    plan->maxrow = maxrow;
    plan->run_target = sla_malloc((size_t)(nruns ? nruns : 1), 4 * sizeof(int64_t), "update runs");
    plan->rel = sla_malloc((size_t)(nrel ? nrel : 1), sizeof(int32_t), "relative indices");
    if (!plan->run_target || !plan->rel) { st = SLA_ENOMEM; goto done; }
    int64_t r = 0, off = 0;
    for (int64_t d = 0; d < ns; d++) {
        int64_t nscol = L->super[d + 1] - L->super[d], nsrow = L->pi[d + 1] - L->pi[d];
        const int64_t *R = L->s + L->pi[d] + nscol;
        int64_t nrow = nsrow - nscol;
        plan->run_ptr[d] = r;
        for (int64_t j = 0; j < nrow;) {
            int64_t t = c2s[R[j]], j2 = j;
            while (j2 < nrow && c2s[R[j2]] == t) j2++;
            for (int64_t q = L->pi[t]; q < L->pi[t + 1]; q++) map[L->s[q]] = q - L->pi[t];
            int64_t *run = plan->run_target + 4 * r;
            run[0] = t; run[1] = j; run[2] = j2; run[3] = off;
            for (int64_t i = j; i < nrow; i++) plan->rel[off++] = (int32_t)map[R[i]];
            r++;
            j = j2;
        }
    }
    plan->run_ptr[ns] = r;
done:
    sla_free(pinv);
    sla_free(c2s);
    sla_free(map);
    if (st != SLA_OK) sla_snode_plan_free(plan);
    return st;
}

void sla_snode_plan_free(sla_snode_plan *plan)
{
    sla_free(plan->apos);
    sla_free(plan->run_ptr);
    sla_free(plan->run_target);
    sla_free(plan->rel);
    memset(plan, 0, sizeof *plan);
}

/* y[i] += sign · Σ_{m<4} c_m[i] c_m[j] for j ≤ i < end, c_m = c + m·ld: four columns per pass
 * so that y is loaded and stored once per four multiply-adds (the loops are memory-bound on y
 * otherwise). */
SNODE_INLINE void axpy4(double *restrict y, const double *restrict c, int64_t ld, int64_t j,
                         int64_t end, double sign)
{
    const double *c0 = c, *c1 = c + ld, *c2 = c + 2 * ld, *c3 = c + 3 * ld;
    double a0 = sign * c0[j], a1 = sign * c1[j], a2 = sign * c2[j], a3 = sign * c3[j];
    for (int64_t i = j; i < end; i++) y[i] += c0[i] * a0 + c1[i] * a1 + c2[i] * a2 + c3[i] * a3;
}

/* Column Cholesky of the nsrow × nscol panel p (column-major, leading dimension nsrow) in place;
 * the first nscol rows are the diagonal block. Returns the first column whose pivot is not
 * positive, or −1. */
SNODE_INLINE int64_t panel_llt(double *p, int64_t nsrow, int64_t nscol, double *dinv)
{
    for (int64_t j = 0; j < nscol; j++) {
        double *cj = p + j * nsrow;
        int64_t k = 0;
        for (; k + 4 <= j; k += 4)
            axpy4(cj, p + k * nsrow, nsrow, j, nsrow, -1);
        for (; k < j; k++) {
            const double *ck = p + k * nsrow;
            double ljk = ck[j];
            for (int64_t i = j; i < nsrow; i++) cj[i] -= ck[i] * ljk;
        }
        double d = cj[j];
        if (!(d > 0)) return j;
        d = sqrt(d);
        cj[j] = d;
        double inv = 1 / d;
        dinv[j] = inv;
        for (int64_t i = j + 1; i < nsrow; i++) cj[i] *= inv;
    }
    return -1;
}

/* Subtracts supernode d's updates (its panel p already factorized) from its ancestors in x;
 * u [maxrow] workspace. */
SNODE_INLINE void fan_out(const sla_supernodal_llt *L, const sla_snode_plan *plan, int64_t d,
                    double *x, double *u)
{
    int64_t nscol = L->super[d + 1] - L->super[d], nsrow = L->pi[d + 1] - L->pi[d];
    int64_t nrow = nsrow - nscol;
    const int64_t *R = L->s + L->pi[d] + nscol;
    const double *B = x + L->px[d] + nscol;       /* B_ik = B[i + k·nsrow] */
    for (int64_t r = plan->run_ptr[d]; r < plan->run_ptr[d + 1]; r++) {
        const int64_t *run = plan->run_target + 4 * r;
        int64_t t = run[0], j1 = run[1], j2 = run[2];
        const int32_t *rel = plan->rel + run[3];
        int64_t tsrow = L->pi[t + 1] - L->pi[t], t0 = L->super[t];
        for (int64_t j = j1; j < j2; j++) {
            for (int64_t i = j; i < nrow; i++) u[i] = 0;
            int64_t k = 0;
            for (; k + 4 <= nscol; k += 4) axpy4(u, B + k * nsrow, nsrow, j, nrow, 1);
            for (; k < nscol; k++) {
                const double *bk = B + k * nsrow;
                double bjk = bk[j];
                for (int64_t i = j; i < nrow; i++) u[i] += bk[i] * bjk;
            }
            double *col = x + L->px[t] + (R[j] - t0) * tsrow;
            const int32_t *rj = rel + (j - j1);
            for (int64_t i = j; i < nrow; i++) col[rj[i - j]] -= u[i];
        }
    }
}

SNODE_KERNEL
int64_t sla_snode_factorize(const sla_supernodal_llt *L, const sla_snode_plan *plan,
                            const double *a, size_t xsize, double *x, double *dinv, double *u)
{
    memset(x, 0, xsize * sizeof *x);
    int64_t nnz = plan->nnz_a;
    for (int64_t q = 0; q < nnz; q++) x[plan->apos[q]] += a[q];
    for (int64_t s = 0; s < L->nsuper; s++) {
        int64_t nscol = L->super[s + 1] - L->super[s], nsrow = L->pi[s + 1] - L->pi[s];
        int64_t bad = panel_llt(x + L->px[s], nsrow, nscol, dinv + L->super[s]);
        if (bad >= 0) return L->super[s] + bad;
        fan_out(L, plan, s, x, u);
    }
    return -1;
}

/* d_m = Σ_{lo ≤ i < hi} c_m[i] t[i] for four columns c_m = c + m·ld at once: four independent
 * sums (a single running sum is bound by the add latency) */
SNODE_INLINE void dot4(const double *restrict c, int64_t ld, const double *restrict t, int64_t lo,
                        int64_t hi, double *d)
{
    const double *c0 = c, *c1 = c + ld, *c2 = c + 2 * ld, *c3 = c + 3 * ld;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t i = lo; i < hi; i++) {
        double ti = t[i];
        s0 += c0[i] * ti; s1 += c1[i] * ti; s2 += c2[i] * ti; s3 += c3[i] * ti;
    }
    d[0] = s0; d[1] = s1; d[2] = s2; d[3] = s3;
}

SNODE_INLINE double dot1(const double *restrict c, const double *restrict t, int64_t lo,
                          int64_t hi)
{
    double s0 = 0, s1 = 0;
    int64_t i = lo;
    for (; i + 2 <= hi; i += 2) { s0 += c[i] * t[i]; s1 += c[i + 1] * t[i + 1]; }
    if (i < hi) s0 += c[i] * t[i];
    return s0 + s1;
}

/* y ← L_s⁻¹ y for supernode s's columns (forward substitution, permuted space); t [maxrow]
 * workspace: the supernode's off-diagonal part of y, scattered once per supernode rather than
 * once per column. The dense triangle first, then the rectangle in four-column passes. */
SNODE_INLINE void forward_snode(const sla_supernodal_llt *L, const double *dinv, int64_t s,
                                double *y, double *t)
{
    int64_t k0 = L->super[s], nscol = L->super[s + 1] - k0, nsrow = L->pi[s + 1] - L->pi[s];
    const double *p = L->x + L->px[s];
    const int64_t *R = L->s + L->pi[s];
    double *ys = y + k0;
    for (int64_t j = 0; j < nscol; j++) {
        const double *cj = p + j * nsrow;
        double yj = ys[j] * dinv[k0 + j];
        ys[j] = yj;
        for (int64_t i = j + 1; i < nscol; i++) ys[i] -= cj[i] * yj;
    }
    if (nsrow == nscol) return;
    for (int64_t i = nscol; i < nsrow; i++) t[i] = 0;
    int64_t j = 0;
    for (; j + 4 <= nscol; j += 4) {
        const double *c0 = p + j * nsrow, *c1 = c0 + nsrow, *c2 = c1 + nsrow, *c3 = c2 + nsrow;
        double y0 = ys[j], y1 = ys[j + 1], y2 = ys[j + 2], y3 = ys[j + 3];
        for (int64_t i = nscol; i < nsrow; i++)
            t[i] += c0[i] * y0 + c1[i] * y1 + c2[i] * y2 + c3[i] * y3;
    }
    for (; j < nscol; j++) {
        const double *cj = p + j * nsrow;
        double yj = ys[j];
        for (int64_t i = nscol; i < nsrow; i++) t[i] += cj[i] * yj;
    }
    for (int64_t i = nscol; i < nsrow; i++) y[R[i]] -= t[i];
}

/* y ← L_s⁻ᵀ y for supernode s (back substitution), its off-diagonal rows gathered once */
SNODE_INLINE void backward_snode(const sla_supernodal_llt *L, const double *dinv, int64_t s,
                                 double *y, double *t)
{
    int64_t k0 = L->super[s], nscol = L->super[s + 1] - k0, nsrow = L->pi[s + 1] - L->pi[s];
    const double *p = L->x + L->px[s];
    const int64_t *R = L->s + L->pi[s];
    double *ys = y + k0;
    if (nsrow > nscol) {
        for (int64_t i = nscol; i < nsrow; i++) t[i] = y[R[i]];
        int64_t j = 0;
        double d[4];
        for (; j + 4 <= nscol; j += 4) {
            dot4(p + j * nsrow, nsrow, t, nscol, nsrow, d);
            for (int m = 0; m < 4; m++) ys[j + m] -= d[m];
        }
        for (; j < nscol; j++) ys[j] -= dot1(p + j * nsrow, t, nscol, nsrow);
    }
    for (int64_t j = nscol - 1; j >= 0; j--) {
        const double *cj = p + j * nsrow;
        ys[j] = (ys[j] - dot1(cj, ys, j + 1, nscol)) * dinv[k0 + j];
    }
}

/* The columns of a block are solved together supernode by supernode, each panel of L read
 * while it is in cache for all of them (the condition estimate's first call solves two or three
 * columns). Measured on the 62² grid's factor (~1 MB): as fast as column by column, not faster;
 * interleaving the columns inside the loops was slower (short inner loops). */
SNODE_KERNEL
void sla_snode_solve(const sla_supernodal_llt *L, const double *dinv, const int64_t *perm,
                     int64_t nrhs, const double *b, double *x, double *w)
{
    int64_t n = L->n;
    double *t = w + nrhs * n;
    for (int64_t r = 0; r < nrhs; r++)
        for (int64_t k = 0; k < n; k++) w[r * n + k] = b[r * n + perm[k]];
    for (int64_t s = 0; s < L->nsuper; s++)
        for (int64_t r = 0; r < nrhs; r++) forward_snode(L, dinv, s, w + r * n, t);
    for (int64_t s = L->nsuper - 1; s >= 0; s--)
        for (int64_t r = 0; r < nrhs; r++) backward_snode(L, dinv, s, w + r * n, t);
    for (int64_t r = 0; r < nrhs; r++)
        for (int64_t k = 0; k < n; k++) x[r * n + perm[k]] = w[r * n + k];
}
