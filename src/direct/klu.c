/* Method "klu": sparse LU by KLU (Davis & Palamadai Natarajan 2010, "Algorithm 907: KLU, a direct
 * sparse solver for circuit simulation problems", ACM TOMS 37(3)), SuiteSparse's klu_l_* (int64)
 * interface: a permutation to block triangular form (BTF), a fill-reducing ordering of each
 * diagonal block (AMD by default), and left-looking LU with partial pivoting of each block.
 *
 * Orientation: as in umfpack.c, the CSR arrays of A are the CSC arrays of B = Aᵀ, which KLU
 * factors; A x = b is solved by klu_l_tsolve and Aᵀx = b by klu_l_solve on the same factors.
 * Lifecycle: klu_l_analyze once; klu_l_factor per batch element in parallel (separate Numeric
 * objects and Common structs; the Symbolic object is read only); refactor uses klu_l_refactor,
 * which keeps the pivot order of the last factorization (the fast path of a training loop), and
 * falls back to a pivoting klu_l_factor when the refactored pivots are unusable: a zero or
 * non-finite pivot, or a reciprocal pivot growth (klu_l_rgrowth) more than 1000 times smaller
 * than the last pivoting factorization's. Several right-hand sides are solved in one KLU call
 * (column-major copy). float32 is widened to double as in umfpack.c.
 * Singular matrices keep their factorization (Common.halt_if_singular = 0): create and refactor
 * succeed, logdet gives sign 0 and −inf, solve and logdet_grad return SLA_ESINGULAR naming the
 * column of A at the first zero pivot, or, for a numerically singular matrix (the rcond estimate
 * of condest.c below SLA_RCOND_SINGULAR, checked after every factorization), at the smallest
 * pivot. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <klu.h>

#include "direct/klu_impl.h"
#include "direct/lu_util.h"
#include "direct/selinv_lu.h"
#if SLA_HAVE_METIS
#include <metis.h>
#endif

_Static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t), "KLU's l interface is int64");

/* Reciprocal pivot growth a refactor may lose against the last pivoting factorization before
 * it is redone with pivoting. */
#define KLU_RGROWTH_DROP 1e-3

/* KLU's part of a batch element (the shared part is lu_elem). */
typedef struct klu_elem {
    klu_l_numeric *numeric;
    int64_t status;         /* KLU status of the last factorization (KLU_OK, KLU_SINGULAR, < 0) */
    double rgrowth_pivoted; /* klu_l_rgrowth of the last pivoting factorization */
    int repivoted;          /* 1 if the last refactor had to pivot again */
} klu_elem;

typedef struct klu_impl {
    klu_l_symbolic *symbolic;
    klu_l_common common;    /* parameters; every call works on a copy (Common holds statistics) */
    int64_t *ai;            /* [nnz] column indices of A as int64 */
    int valid;              /* 0 while the factors are unusable (a refactor failed) */
    int64_t nfast, nrepivot;   /* refactors kept on the fast path / redone with pivoting */
    lu_elem *lu;            /* [batch] */
    klu_elem *e;            /* [batch] */
} klu_impl;

#if SLA_HAVE_METIS
/* Graph of C + Cᵀ without self loops and without repeated edges (METIS takes neither) for a
 * CSC pattern C (nk × nk): xadj [nk + 1], adj [2·nnz(C)]; mark [nk] is workspace. */
static void metis_graph(int64_t nk, const SuiteSparse_long *Cp, const SuiteSparse_long *Ci,
                        idx_t *xadj, idx_t *adj, int64_t *mark)
{
    memset(mark, 0, (size_t)nk * sizeof *mark);
    for (int64_t j = 0; j < nk; j++)                      /* degrees with repeats */
        for (int64_t p = Cp[j]; p < Cp[j + 1]; p++)
            if (Ci[p] != j) { mark[Ci[p]]++; mark[j]++; }
    xadj[0] = 0;
    for (int64_t i = 0; i < nk; i++) xadj[i + 1] = xadj[i] + (idx_t)mark[i];
    for (int64_t i = 0; i < nk; i++) mark[i] = xadj[i];
    for (int64_t j = 0; j < nk; j++)
        for (int64_t p = Cp[j]; p < Cp[j + 1]; p++)
            if (Ci[p] != j) { adj[mark[Ci[p]]++] = (idx_t)j; adj[mark[j]++] = (idx_t)Ci[p]; }
    for (int64_t i = 0; i < nk; i++) mark[i] = -1;        /* compact, dropping repeats */
    idx_t out = 0;
    for (int64_t i = 0; i < nk; i++) {
        idx_t start = xadj[i], end = xadj[i + 1];
        xadj[i] = out;
        for (idx_t p = start; p < end; p++)
            if (mark[adj[p]] != i) { mark[adj[p]] = i; adj[out++] = adj[p]; }
    }
    xadj[nk] = out;
}

/* KLU user ordering (Common.ordering = 3): METIS nested dissection (METIS_NodeND) of the graph
 * of C + Cᵀ for one diagonal block C. Perm[k] = the row/column placed k-th. Returns 0 on
 * failure, else a positive number (KLU's convention). */
static SuiteSparse_long metis_order(SuiteSparse_long nk, SuiteSparse_long *Cp, SuiteSparse_long *Ci,
                                    SuiteSparse_long *Perm, klu_l_common *Common)
{
    (void)Common;
    int64_t *mark = sla_malloc((size_t)nk, sizeof *mark, "METIS graph");
    idx_t *xadj = sla_malloc((size_t)nk + 1, sizeof *xadj, "METIS graph");
    idx_t *adj = sla_malloc((size_t)(2 * Cp[nk]) + 1, sizeof *adj, "METIS graph");
    idx_t *perm = sla_malloc((size_t)nk, sizeof *perm, "METIS ordering");
    idx_t *iperm = sla_malloc((size_t)nk, sizeof *iperm, "METIS ordering");
    SuiteSparse_long ok = 0;
    if (mark && xadj && adj && perm && iperm) {
        metis_graph(nk, Cp, Ci, xadj, adj, mark);
        idx_t nv = (idx_t)nk;
        if (xadj[nk] == 0) {                              /* no edges: any order is as good */
            for (int64_t k = 0; k < nk; k++) Perm[k] = k;
            ok = 1;
        } else if (METIS_NodeND(&nv, xadj, adj, NULL, NULL, perm, iperm) == METIS_OK) {
            /* perm[k] is the vertex placed k-th (the other array gives ~10× the fill of L + U
             * on a 2D grid, which is how the convention was checked) */
            for (int64_t k = 0; k < nk; k++) Perm[k] = perm[k];
            ok = 1;
        }
    }
    sla_free(mark); sla_free(xadj); sla_free(adj); sla_free(perm); sla_free(iperm);
    return ok;
}
#endif

static const char *ordering_name(const klu_l_symbolic *sym)
{
    switch ((int)sym->ordering) {
    case 0: return "AMD";
    case 1: return "COLAMD";
    case 2: return "natural";
    case 3: return "METIS";
    default: return "unknown";
    }
}

static void describe(sla_solver *s, const klu_impl *k)
{
    char fill[16] = "0", off[16] = "0", refac[96] = "", extra[128];
    lu_summary(s, k->lu, extra, sizeof extra);
    if (s->n > 0) {
        lu_format_count((double)(k->e[0].numeric->lnz + k->e[0].numeric->unz - s->n), fill);
        lu_format_count((double)k->symbolic->nzoff, off);
    }
    if (k->nfast + k->nrepivot > 0)
        snprintf(refac, sizeof refac, ", refactors: %lld kept the pivots, %lld re-pivoted",
                 (long long)k->nfast, (long long)k->nrepivot);
    snprintf(s->description, sizeof s->description,
             "klu (KLU %d.%d.%d, BTF %lld blocks, %s): nnz(L+U) %s, off-diagonal blocks %s, "
             "rcond %.1e", KLU_MAIN_VERSION, KLU_SUB_VERSION, KLU_SUBSUB_VERSION,
             (long long)(k->symbolic ? k->symbolic->nblocks : 0),
             k->symbolic ? ordering_name(k->symbolic) : "natural", fill, off, s->rcond);
    lu_append(s->description, sizeof s->description, extra);
    lu_append(s->description, sizeof s->description, refac);
}

/* Records the first zero (or non-finite) pivot U_kk: step k pivots on Aᵀ[Pnum[k]][Q[k]] =
 * A[Q[k]][Pnum[k]]. KLU's own status does not flag every exact zero pivot (a pivot that
 * cancels to 0 in the last column of a block passes as KLU_OK), so the diagonal is scanned. */
static void scan_pivots(const klu_impl *k, const klu_l_numeric *num, lu_elem *lu)
{
    const double *ud = num->Udiag;
    lu->zero_pivot = -1;
    for (int64_t i = 0; i < num->n; i++)
        if (ud[i] == 0 || !isfinite(ud[i])) {
            lu->zero_pivot = i;
            lu->sing_col = num->Pnum[i];
            lu->sing_row = k->symbolic->Q[i];
            lu->rcond = 0;
            return;
        }
}

/* (A_b)⁻¹ or (A_b)⁻ᵀ Y in place on element b's factors (of Aᵀ: A⁻¹ is klu_l_tsolve), for the
 * condition estimate; ctx is the klu_l_common of the calling task. */
static sla_status klu_inverse(void *ctx, int64_t b, sla_op op, int64_t nrhs, double *y)
{
    klu_l_common *c = ctx;
    const klu_impl *k = c->user_data;
    klu_l_numeric *num = k->e[b].numeric;
    int64_t n = k->symbolic->n;
    int ok = op == SLA_OP_N ? (int)klu_l_tsolve(k->symbolic, num, n, nrhs, y, c)
                            : (int)klu_l_solve(k->symbolic, num, n, nrhs, y, c);
    return ok ? SLA_OK : c->status == KLU_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND;
}

/* The singularity rule (condest.c) on element b's new factors; a numerically singular element
 * names its smallest pivot U_kk (step k pivots on A[Q[k]][Pnum[k]], as in scan_pivots). */
static sla_status check_condition(sla_solver *s, int64_t b, klu_l_common *c)
{
    klu_impl *k = s->impl;
    lu_elem *lu = &k->lu[b];
    c->user_data = k;
    SLA_TRY(lu_estimate_rcond(s, b, lu, klu_inverse, c));
    if (lu->small_pivot == -2) {
        const klu_l_numeric *num = k->e[b].numeric;
        lu_small_pivot(lu, num->n, num->Udiag, num->Pnum, k->symbolic->Q);
    }
    return SLA_OK;
}

/* 1 if the factors of element b, just refactored with the old pivot order, are usable: finite
 * nonzero pivots and a reciprocal pivot growth within KLU_RGROWTH_DROP of the last pivoting
 * factorization's. */
static int refactor_usable(klu_impl *k, int64_t b, SuiteSparse_long *ap, klu_l_common *c)
{
    klu_elem *e = &k->e[b];
    double *ax = k->lu[b].ax;
    if (!klu_l_refactor(ap, k->ai, ax, k->symbolic, e->numeric, c) || c->status != KLU_OK)
        return 0;
    if (!klu_l_rgrowth(ap, k->ai, ax, k->symbolic, e->numeric, c) ||
        !klu_l_rcond(k->symbolic, e->numeric, c))
        return 0;
    return isfinite(c->rgrowth) && c->rcond > 0 && c->rgrowth >= KLU_RGROWTH_DROP * e->rgrowth_pivoted;
}

typedef struct factor_ctx {
    sla_solver *s;
    int refactor;
} factor_ctx;

/* Factorization of batch element b (a task of lu_run_tasks): klu_l_refactor when asked and
 * usable, else klu_l_factor. KLU_SINGULAR keeps a usable Numeric object. */
static sla_status factor_task(void *ctx, int64_t b, int64_t *code)
{
    factor_ctx *fc = ctx;
    sla_solver *s = fc->s;
    klu_impl *k = s->impl;
    klu_elem *e = &k->e[b];
    lu_elem *lu = &k->lu[b];
    SuiteSparse_long *ap = (SuiteSparse_long *)sla_pattern_rowptr(s->pattern);
    klu_l_common c = k->common;
    lu_elem_load(s, b, lu);
    e->repivoted = 0;
    if (fc->refactor && e->numeric && lu->zero_pivot < 0 && e->status == KLU_OK) {
        if (refactor_usable(k, b, ap, &c)) {
            lu->zero_pivot = -1;
            *code = e->status = KLU_OK;
            return check_condition(s, b, &c);
        }
        e->repivoted = 1;
    }
    if (e->numeric) klu_l_free_numeric(&e->numeric, &c);
    c = k->common;
    e->numeric = klu_l_factor(ap, k->ai, lu->ax, k->symbolic, &c);
    *code = e->status = e->numeric ? c.status : c.status < 0 ? c.status : KLU_INVALID;
    if (!e->numeric) return *code == KLU_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND;
    klu_l_rgrowth(ap, k->ai, lu->ax, k->symbolic, e->numeric, &c);
    e->rgrowth_pivoted = c.rgrowth;
    scan_pivots(k, e->numeric, lu);
    return check_condition(s, b, &c);
}

static sla_status factor_all(sla_solver *s, klu_impl *k, int refactor)
{
    k->valid = 0;
    factor_ctx c = {.s = s, .refactor = refactor};
    if (s->n > 0) SLA_TRY(lu_run_tasks(s->batch, 1, factor_task, &c, "klu_l_factor"));
    for (int64_t b = 0; refactor && s->n > 0 && b < s->batch; b++) {
        if (k->e[b].repivoted) k->nrepivot++;
        else k->nfast++;
    }
    k->valid = 1;
    describe(s, k);
    return SLA_OK;
}

/* The analysis of klu_create (klu_impl.h; also klu_z.c's): klu_l_analyze (or _given) on the CSR arrays of A (= CSC of Aᵀ),
 * ai the column indices as int64; common is updated with the ordering used (METIS: KLU's user
 * ordering hook). */
sla_status sla_klu_analyze_pattern(const sla_solver *s, const int64_t *ai, klu_l_common *common,
                                   klu_l_symbolic **out)
{
    SuiteSparse_long *ap = (SuiteSparse_long *)sla_pattern_rowptr(s->pattern);
    SuiteSparse_long *aim = (SuiteSparse_long *)ai;   /* read only; KLU's prototype is not const */
    klu_l_common c = *common;
    switch (s->opt.ordering) {
    case SLA_ORDERING_NATURAL:
        *out = klu_l_analyze_given(s->n, ap, aim, NULL, NULL, &c);
        break;
    case SLA_ORDERING_METIS:
#if SLA_HAVE_METIS
        common->ordering = c.ordering = 3;
        common->user_order = c.user_order = metis_order;
        *out = klu_l_analyze(s->n, ap, aim, &c);
        break;
#else
        return SLA_FAIL(SLA_EUNSUPPORTED, "this build has no METIS; use ordering auto or amd");
#endif
    default:                               /* AUTO and AMD: KLU's default, AMD on each block */
        *out = klu_l_analyze(s->n, ap, aim, &c);
        break;
    }
    if (*out) return SLA_OK;
    if (c.status == KLU_OUT_OF_MEMORY)
        return SLA_FAIL(SLA_ENOMEM, "KLU ran out of memory in the analysis");
    return SLA_FAIL(SLA_EBACKEND, "klu_l_analyze failed with status %lld", (long long)c.status);
}

void sla_klu_common_defaults(klu_l_common *common)
{
    klu_l_defaults(common);
    common->halt_if_singular = 0;          /* keep singular factors: logdet gives sign 0 */
}

/* What method = auto hands to klu_create: the analysis, the int64 column indices it was run on
 * and the parameters (the ordering hook). */
typedef struct klu_analysis {
    klu_l_symbolic *symbolic;
    int64_t *ai;
    klu_l_common common;
} klu_analysis;

static void klu_analysis_free(void *state)
{
    klu_analysis *a = state;
    if (a->symbolic) klu_l_free_symbolic(&a->symbolic, &a->common);
    sla_free(a->ai);
    sla_free(a);
}

sla_status sla_klu_analysis(const sla_solver *s, sla_analysis **out)
{
    *out = NULL;
    sla_analysis *a = sla_analysis_new(&sla_backend_klu, sizeof(klu_analysis), klu_analysis_free);
    if (!a) return SLA_ENOMEM;
    klu_analysis *k = a->state;
    sla_klu_common_defaults(&k->common);
    k->ai = lu_colind64(s->pattern);
    sla_status st = k->ai ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK && s->n > 0) st = sla_klu_analyze_pattern(s, k->ai, &k->common, &k->symbolic);
    if (st != SLA_OK) { sla_analysis_free(&a); return st; }
    if (k->symbolic) {
        /* lnz and unz count the diagonal of each block (once in L, once in U) */
        const klu_l_symbolic *y = k->symbolic;
        a->nnz_factor = y->lnz + y->unz - (double)s->n + (double)y->nzoff;
        a->flops = y->est_flops;
    }
    a->bytes = 16 * a->nnz_factor;
    *out = a;
    return SLA_OK;
}

static sla_status klu_create(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_klu_z_create(s);
    klu_impl *k = sla_calloc(1, sizeof *k, "KLU solver");
    if (!k) return SLA_ENOMEM;
    s->impl = k;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    k->e = sla_calloc((size_t)s->batch, sizeof *k->e, "KLU factors");
    k->lu = lu_elems_create(s->batch, nnz);
    if (!k->e || !k->lu) return SLA_ENOMEM;
    /* the analysis method = auto ran to decide (sla_klu_analysis: the same calls), if handed */
    klu_analysis *given = sla_analysis_take(s, &sla_backend_klu);
    if (given) {
        k->symbolic = given->symbolic;
        k->ai = given->ai;
        k->common = given->common;
        sla_free(given);
        return factor_all(s, k, 0);
    }
    k->ai = lu_colind64(s->pattern);
    if (!k->ai) return SLA_ENOMEM;
    sla_klu_common_defaults(&k->common);
    if (s->n > 0) SLA_TRY(sla_klu_analyze_pattern(s, k->ai, &k->common, &k->symbolic));
    return factor_all(s, k, 0);
}

static sla_status klu_refactor_values(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_klu_z_refactor(s);
    return factor_all(s, s->impl, 1);
}

/* Iterative refinement of column x [n] of op(A) x = b, as UMFPACK does by default (its
 * Control[UMFPACK_IRSTEP] = 2 and its stopping rule): at most KLU_REFINE_STEPS steps
 * x += op(A)⁻¹ r, while the componentwise backward error ω (lu_backward_error) exceeds ε and
 * each step at least halves it. KLU itself does not refine; without it, KLU's answers on badly
 * scaled matrices were backward stable but up to 10⁴ times less accurate in ‖b − A x‖/‖b‖
 * than UMFPACK's (west0479: 3e-8 against 4e-12), which mattered once method = auto chose KLU
 * for every sparse factor (docs/auto.md). A well-scaled solve passes the first test and costs
 * one residual pass, which the solve info needs anyway. w [4n]: workspace. Returns
 * ‖b − op(A) x‖₂. */
#define KLU_REFINE_STEPS 2
static double refine(const klu_impl *k, klu_l_numeric *num, sla_solver *s, sla_op op,
                     const double *ax, double *x, const double *b, double *w, klu_l_common *cm)
{
    int64_t n = s->n;
    double *r = w, *den = w + n, *d = w + 2 * n, *xn = w + 3 * n;
    double omega = lu_backward_error(op, s->pattern, ax, x, b, r, den);
    for (int step = 0; step < KLU_REFINE_STEPS && omega > DBL_EPSILON; step++) {
        memcpy(d, r, (size_t)n * sizeof *d);
        int ok = op == SLA_OP_N ? (int)klu_l_tsolve(k->symbolic, num, n, 1, d, cm)
                                : (int)klu_l_solve(k->symbolic, num, n, 1, d, cm);
        if (!ok) break;
        for (int64_t i = 0; i < n; i++) xn[i] = x[i] + d[i];
        double o = lu_backward_error(op, s->pattern, ax, xn, b, d, den);
        if (!(o < omega)) break;
        memcpy(x, xn, (size_t)n * sizeof *x);
        memcpy(r, d, (size_t)n * sizeof *r);
        if (o > 0.5 * omega) break;
        omega = o;
    }
    return lu_norm2(r, n);
}

/* Solves every column of batch element b in one KLU call (a task of lu_solve_tasks; the solve
 * uses workspace inside the Numeric object, so one element's columns cannot run in parallel),
 * then refines each column (refine()). */
static sla_status solve_task(void *ctx, int64_t b, int64_t *code)
{
    lu_solve_ctx *c = ctx;
    sla_solver *s = c->s;
    klu_impl *k = s->impl;
    int64_t n = s->n, nrhs = c->nrhs;
    double *buf = sla_malloc((size_t)(n * nrhs), sizeof *buf, "KLU right-hand sides");
    double *bv = sla_malloc((size_t)(5 * n), sizeof *bv, "KLU refinement");
    if (!buf || !bv) { sla_free(buf); sla_free(bv); return SLA_ENOMEM; }
    for (int64_t j = 0; j < nrhs; j++) lu_load_column(s->dtype, c->B, n, nrhs, b, j, buf + j * n);
    klu_l_common cm = k->common;
    klu_l_numeric *num = k->e[b].numeric;
    /* the factors are of Aᵀ: A x = b is (Aᵀ)ᵀ x = b */
    int ok = c->op == SLA_OP_N ? (int)klu_l_tsolve(k->symbolic, num, n, nrhs, buf, &cm)
                               : (int)klu_l_solve(k->symbolic, num, n, nrhs, buf, &cm);
    for (int64_t j = 0; ok && j < nrhs; j++) {
        double *x = buf + j * n;
        lu_load_column(s->dtype, c->B, n, nrhs, b, j, bv);
        c->rn[b * nrhs + j] = refine(k, num, s, c->op, k->lu[b].ax, x, bv, bv + n, &cm);
        if (s->dtype != SLA_FLOAT64) {
            /* the residual of the X returned (rounded to float32), not of the double x */
            lu_round_to_dtype(s->dtype, x, n);
            c->rn[b * nrhs + j] = lu_residual(c->op, s->pattern, k->lu[b].ax, x, bv, bv + n);
        }
        c->bn[b * nrhs + j] = lu_norm2(bv, n);
        lu_store_column(s->dtype, x, n, nrhs, b, j, c->X);
    }
    sla_free(buf);
    sla_free(bv);
    *code = cm.status;
    return ok ? SLA_OK : cm.status == KLU_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND;
}

static sla_status klu_solve_rhs(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                                const sla_solve_params *params, sla_solve_info *info)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_klu_z_solve(s, op, nrhs, B, X, params, info);
    klu_impl *k = s->impl;
    return lu_solve_tasks(s, k->valid, k->lu, op, nrhs, B, X, info, 0, solve_task,
                          "klu_l_solve");
}

/* det Aᵀ = det A = sign(P)·sign(Q)·Π Rs_i·Π U_kk: KLU factors M = P·(R⁻¹Aᵀ)·Q = L·U restricted to
 * the diagonal blocks of its BTF form (the off-diagonal blocks do not change the determinant),
 * with R = diag(Rs) dividing the rows, L unit lower triangular, P = Pnum (BTF and partial
 * pivoting), Q (BTF and the fill-reducing ordering). */
static sla_status klu_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_klu_z_logdet(s, sign, logabsdet);
    klu_impl *k = s->impl;
    if (!k->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    int64_t n = s->n;
    unsigned char *seen = sla_malloc((size_t)n, 1, "permutation workspace");
    if (!seen) return SLA_ENOMEM;
    int qsign = n ? lu_perm_sign(n, k->symbolic->Q, seen) : 1;
    for (int64_t b = 0; b < s->batch; b++) {
        klu_l_numeric *num = k->e[b].numeric;
        const double *ud = n ? num->Udiag : NULL;
        double sg = n ? qsign * lu_perm_sign(n, num->Pnum, seen) : 1, la = 0;
        if (lu_singular(&k->lu[b])) sg = 0;
        for (int64_t i = 0; sg != 0 && i < n; i++) {
            if (ud[i] < 0) sg = -sg;
            la += log(fabs(ud[i])) + (num->Rs ? log(num->Rs[i]) : 0);
        }
        sign[b] = sg;
        logabsdet[b] = sg == 0 ? -INFINITY : la;
    }
    sla_free(seen);
    return SLA_OK;
}

/* dvalues_b = g_b·(A_b⁻ᵀ) on the pattern from the factors of element b (selinv_lu.h); entries
 * of A in off-diagonal blocks of the BTF form get 0 (the inverse is block upper triangular). */
static sla_status grad_task(void *ctx, int64_t b, int64_t *code)
{
    lu_grad_ctx *c = ctx;
    sla_solver *s = c->s;
    klu_impl *k = s->impl;
    klu_l_numeric *num = k->e[b].numeric;
    int64_t n = s->n, nb = k->symbolic->nblocks;
    int64_t lnz = num->lnz, unz = num->unz;
    /* L, U, P, Q, block boundaries as int64; L, U, Rs, row scale as double */
    int64_t *iw = sla_malloc((size_t)(2 * (n + 1) + lnz + unz + 2 * n + nb + 1), sizeof *iw, "factors");
    double *dw = sla_malloc((size_t)(lnz + unz + 2 * n), sizeof *dw, "factors");
    if (!iw || !dw) { sla_free(iw); sla_free(dw); return SLA_ENOMEM; }
    int64_t *Lp = iw, *Up = Lp + n + 1, *Li = Up + n + 1, *Ui = Li + lnz, *P = Ui + unz, *Q = P + n,
            *R = Q + n;
    double *Lx = dw, *Ux = Lx + lnz, *Rs = Ux + unz, *sc = Rs + n;
    klu_l_common cm = k->common;
    int ok = (int)klu_l_extract(num, k->symbolic, Lp, Li, Lx, Up, Ui, Ux, NULL, NULL, NULL, P, Q, Rs,
                                R, &cm);
    *code = cm.status;
    sla_status st = ok ? SLA_OK : SLA_EBACKEND;
    if (st == SLA_OK) {
        /* KLU divides row P[k] by Rs[k] (Numeric->Rs is stored in pivot order) */
        for (int64_t i = 0; i < n; i++) sc[P[i]] = 1.0 / Rs[i];
        sla_lu_factors f = {.n = n, .Lp = Lp, .Li = Li, .Lx = Lx, .Up = Up, .Ui = Ui, .Ux = Ux,
                            .d = num->Udiag, .P = P, .Q = Q, .s = sc, .nblocks = nb, .blocks = R};
        st = sla_lu_selinv_transpose(&f, s->pattern, c->g[b], s->dtype, lu_grad_slice(c, b));
    }
    sla_free(iw);
    sla_free(dw);
    return st;
}

static sla_status klu_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_klu_z_logdet_grad(s, g, dvalues);
    klu_impl *k = s->impl;
    return lu_grad_tasks(s, k->valid, k->lu, g, dvalues, grad_task,
                         "selected inverse (KLU factors)");
}

static void klu_destroy(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) { sla_klu_z_destroy(s); return; }
    klu_impl *k = s->impl;
    if (!k) return;
    klu_l_common c = k->common;
    for (int64_t b = 0; k->e && b < s->batch; b++)
        if (k->e[b].numeric) klu_l_free_numeric(&k->e[b].numeric, &c);
    if (k->symbolic) klu_l_free_symbolic(&k->symbolic, &c);
    lu_elems_free(k->lu, s->batch);
    sla_free(k->e);
    sla_free(k->ai);
    sla_free(k);
    s->impl = NULL;
}

const sla_backend sla_backend_klu = {
    .info = {.name = "klu",
             .description = "KLU (SuiteSparse): BTF + AMD + left-looking sparse LU for circuit "
                            "matrices, fast refactor, transposed solves, determinants",
             .methods = SLA_METHOD_BIT(SLA_METHOD_KLU),
             .dtypes = SLA_BOTH_DTYPES | SLA_DTYPE_BIT(SLA_COMPLEX128) |
                       SLA_DTYPE_BIT(SLA_COMPLEX64),   /* complex: klu_z.c */
             .priority = 10,
             .available = 1},
    .create = klu_create,
    .refactor = klu_refactor_values,
    .solve = klu_solve_rhs,
    .logdet = klu_logdet,
    .logdet_grad = klu_logdet_grad,
    .destroy = klu_destroy,
    .analyze = sla_klu_analysis,
};
