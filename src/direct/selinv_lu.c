/* Sparse inverse subset of an unsymmetric LU factorization: the entries of A⁻¹ at the transposed
 * positions of the pattern of A, from the factors of Aᵀ (Takahashi, Fagan & Chin 1973; Erisman &
 * Tinney 1975). The method, its closure argument and its cost are described in selinv_lu.h. */
#include <complex.h>
#include <string.h>

#include "direct/selinv_lu.h"

/* A growable int64 array (the closed structure's size is known only after the reach). */
typedef struct ivec {
    int64_t *a;
    int64_t len, cap;
} ivec;

static int ivec_push(ivec *v, int64_t x)
{
    if (v->len == v->cap) {
        int64_t cap = v->cap < 64 ? 64 : v->cap + v->cap / 2;
        int64_t *a = sla_malloc((size_t)cap, sizeof *a, "selected inverse structure");
        if (!a) return 0;
        if (v->len) memcpy(a, v->a, (size_t)v->len * sizeof *a);
        sla_free(v->a);
        v->a = a;
        v->cap = cap;
    }
    v->a[v->len++] = x;
    return 1;
}

/* Work and results of one call. Coordinates are those of M (see selinv_lu.h).
 *   L*: closed strictly lower structure in CSC (Lsp, Lsi), values Lsx, and Zup: Zup[p] = Z[j][i]
 *       for the slot p of L*[i][j] (the strictly upper part of Z, at the transposed position);
 *   U*: closed strictly upper structure in CSC (Usp, Usi) and CSR (Urp, Urj), values Urx in
 *       CSR order, and Zlo: Zlo[q] = Z[i][j] for the CSR slot q of U*[j][i];
 *   Zd: the diagonal of Z. */
typedef struct selinv {
    const sla_lu_factors *f;
    int64_t n;
    int64_t *pinv, *qinv, *blk, *mark, *stack, *pos;
    int64_t *Lsp, *Usp, *Urp, *Urj, *Ucsr;
    ivec Lsi, Usi;
    size_t esz;               /* bytes per value: 8 (double) or 16 (double complex) */
    void *Lsx, *Urx, *Zup, *Zlo, *Zd;
    void *lcoef, *ucoef, *wacc, *vacc;
} selinv;

static void selinv_free(selinv *w)
{
    void *ptrs[] = {w->pinv, w->qinv, w->blk, w->mark, w->stack, w->pos, w->Lsp, w->Usp, w->Urp,
                    w->Urj, w->Ucsr, w->Lsi.a, w->Usi.a, w->Lsx, w->Urx, w->Zup, w->Zlo, w->Zd,
                    w->lcoef, w->ucoef, w->wacc, w->vacc};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) sla_free(ptrs[i]);
}

/* pinv = P⁻¹; 0 if P is not a permutation of [0, n). */
static int invert_perm(int64_t n, const int64_t *P, int64_t *pinv)
{
    for (int64_t i = 0; i < n; i++) pinv[i] = -1;
    for (int64_t k = 0; k < n; k++) {
        if (P[k] < 0 || P[k] >= n || pinv[P[k]] >= 0) return 0;
        pinv[P[k]] = k;
    }
    return 1;
}

static sla_status setup(selinv *w, const sla_lu_factors *f)
{
    int64_t n = f->n;
    w->f = f;
    w->n = n;
    int64_t **iarr[] = {&w->pinv, &w->qinv, &w->blk, &w->mark, &w->stack, &w->pos};
    for (size_t i = 0; i < sizeof iarr / sizeof iarr[0]; i++)
        if (!(*iarr[i] = sla_malloc((size_t)n, sizeof(int64_t), "selected inverse workspace")))
            return SLA_ENOMEM;
    w->esz = f->cplx ? 2 * sizeof(double) : sizeof(double);
    void **darr[] = {&w->Zd, &w->lcoef, &w->ucoef, &w->wacc, &w->vacc};
    for (size_t i = 0; i < sizeof darr / sizeof darr[0]; i++)
        if (!(*darr[i] = sla_malloc((size_t)n, w->esz, "selected inverse workspace")))
            return SLA_ENOMEM;
    w->Lsp = sla_malloc((size_t)n + 1, sizeof(int64_t), "selected inverse structure");
    w->Usp = sla_malloc((size_t)n + 1, sizeof(int64_t), "selected inverse structure");
    w->Urp = sla_malloc((size_t)n + 1, sizeof(int64_t), "selected inverse structure");
    if (!w->Lsp || !w->Usp || !w->Urp) return SLA_ENOMEM;
    if (!invert_perm(n, f->P, w->pinv) || !invert_perm(n, f->Q, w->qinv)) return SLA_EINTERNAL;
    for (int64_t b = 0, nb = f->blocks ? f->nblocks : 1; b < nb; b++) {
        int64_t lo = f->blocks ? f->blocks[b] : 0, hi = f->blocks ? f->blocks[b + 1] : n;
        for (int64_t k = lo; k < hi; k++) w->blk[k] = b;
    }
    for (int64_t i = 0; i < n; i++) w->mark[i] = -1;
    return SLA_OK;
}

/* Visits row i from column j of the reach: marks and pushes it once. */
static inline void visit(selinv *w, int64_t j, int64_t i, int64_t *top)
{
    if (w->mark[i] == j) return;
    w->mark[i] = j;
    w->stack[(*top)++] = i;
}

/* Symbolic closure: column j of the filled structure is the set of rows reachable from the
 * seeds of column j (L[:,j], U[:,j] and the positions M[k][j] of entries of A in the same
 * diagonal block) through the columns k < j of the already-closed L*. */
static sla_status closure(selinv *w, const sla_pattern *A)
{
    const sla_lu_factors *f = w->f;
    const int64_t *rp = sla_pattern_rowptr(A);
    const int32_t *ci = sla_pattern_colind(A);
    w->Lsp[0] = w->Usp[0] = 0;
    for (int64_t j = 0; j < w->n; j++) {
        int64_t top = 0;
        w->mark[j] = j;                          /* the diagonal is implicit */
        for (int64_t p = f->Lp[j]; p < f->Lp[j + 1]; p++) visit(w, j, f->Li[p], &top);
        for (int64_t p = f->Up[j]; p < f->Up[j + 1]; p++) visit(w, j, f->Ui[p], &top);
        int64_t r = f->Q[j];                     /* column j of M holds row r of A */
        for (int64_t t = rp[r]; t < rp[r + 1]; t++) {
            int64_t k = w->pinv[ci[t]];
            if (w->blk[k] == w->blk[j]) visit(w, j, k, &top);
        }
        while (top > 0) {
            int64_t k = w->stack[--top];
            if (k > j) {
                if (!ivec_push(&w->Lsi, k)) return SLA_ENOMEM;
                continue;
            }
            if (!ivec_push(&w->Usi, k)) return SLA_ENOMEM;
            for (int64_t p = w->Lsp[k]; p < w->Lsp[k + 1]; p++) visit(w, j, w->Lsi.a[p], &top);
        }
        w->Lsp[j + 1] = w->Lsi.len;
        w->Usp[j + 1] = w->Usi.len;
    }
    return SLA_OK;
}

/* value k of an array of w->esz-byte values */
static inline void *at(const selinv *w, const void *x, int64_t k)
{
    return (char *)x + (size_t)k * w->esz;
}

/* Values of L* (CSC order) and U* (CSR order, built here by a counting transpose); positions
 * added by the closure hold zeros. Values are copied as bytes: the same code for both value
 * types. */
static sla_status place_values(selinv *w)
{
    const sla_lu_factors *f = w->f;
    int64_t n = w->n, nl = w->Lsi.len, nu = w->Usi.len;
    size_t e = w->esz;
    w->Lsx = sla_calloc((size_t)nl, e, "selected inverse values");
    w->Zup = sla_malloc((size_t)nl, e, "selected inverse values");
    w->Urj = sla_malloc((size_t)nu, sizeof(int64_t), "selected inverse structure");
    w->Ucsr = sla_malloc((size_t)nu, sizeof(int64_t), "selected inverse structure");
    w->Urx = sla_malloc((size_t)nu, e, "selected inverse values");
    w->Zlo = sla_malloc((size_t)nu, e, "selected inverse values");
    void *ucsc = sla_calloc((size_t)nu, e, "selected inverse values");
    if (!w->Lsx || !w->Zup || !w->Urj || !w->Ucsr || !w->Urx || !w->Zlo || !ucsc) {
        sla_free(ucsc);
        return SLA_ENOMEM;
    }
    for (int64_t i = 0; i < n; i++) w->mark[i] = -1;
    for (int64_t j = 0; j < n; j++) {
        for (int64_t p = w->Lsp[j]; p < w->Lsp[j + 1]; p++) {
            w->mark[w->Lsi.a[p]] = j;
            w->pos[w->Lsi.a[p]] = p;
        }
        for (int64_t p = w->Usp[j]; p < w->Usp[j + 1]; p++) {
            w->mark[w->Usi.a[p]] = j;
            w->pos[w->Usi.a[p]] = p;
        }
        for (int64_t p = f->Lp[j]; p < f->Lp[j + 1]; p++)
            if (f->Li[p] > j) memcpy(at(w, w->Lsx, w->pos[f->Li[p]]), at(w, f->Lx, p), e);
        for (int64_t p = f->Up[j]; p < f->Up[j + 1]; p++)
            if (f->Ui[p] < j) memcpy(at(w, ucsc, w->pos[f->Ui[p]]), at(w, f->Ux, p), e);
    }
    /* CSR of U*: row counts, prefix sums, then a stable scatter by columns */
    int64_t *next = w->pos;
    memset(next, 0, (size_t)n * sizeof *next);
    for (int64_t p = 0; p < nu; p++) next[w->Usi.a[p]]++;
    w->Urp[0] = 0;
    for (int64_t i = 0; i < n; i++) { w->Urp[i + 1] = w->Urp[i] + next[i]; next[i] = w->Urp[i]; }
    for (int64_t j = 0; j < n; j++)
        for (int64_t p = w->Usp[j]; p < w->Usp[j + 1]; p++) {
            int64_t q = next[w->Usi.a[p]]++;
            w->Urj[q] = j;
            memcpy(at(w, w->Urx, q), at(w, ucsc, p), e);
            w->Ucsr[p] = q;
        }
    sla_free(ucsc);
    return SLA_OK;
}

#define SLA_TEMPLATE "direct/t_selinv_lu.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

sla_status sla_lu_selinv_transpose(const sla_lu_factors *f, const sla_pattern *A, double alpha,
                                   sla_dtype dtype, void *out)
{
    for (int64_t j = 0; j < f->n; j++)
        if (f->cplx ? ((const double *)f->d)[2 * j] == 0 && ((const double *)f->d)[2 * j + 1] == 0
                    : ((const double *)f->d)[j] == 0)
            return SLA_ESINGULAR;
    selinv w;
    memset(&w, 0, sizeof w);
    sla_status st = setup(&w, f);
    if (st == SLA_OK) st = closure(&w, A);
    if (st == SLA_OK) st = place_values(&w);
    if (st == SLA_OK) {
        if (f->cplx) {
            takahashi_c128(&w);
            st = gather_c128(&w, A, alpha, dtype, out);
        } else {
            takahashi_f64(&w);
            st = gather_f64(&w, A, alpha, dtype, out);
        }
    }
    selinv_free(&w);
    return st;
}
