/* The cholmod backend: method cholesky, LLᵀ = P A Pᵀ by CHOLMOD (SuiteSparse; Chen,
 * Davis, Hager & Rajamanickam, ACM TOMS 35(3), 2008).
 *
 * Input.   A must be numerically symmetric (checked at create: SLA_EINVAL naming the entry
 *          pair, see sla_symlower_check). CHOLMOD reads one triangle: the lower
 *          triangle of A ∪ Aᵀ in CSR, handed over as the upper triangle of a CSC matrix with
 *          stype = +1 (CHOLMOD's fastest input for a permuted supernodal factorization: one
 *          transpose inside cholmod_factorize instead of two). Its pattern is built once at
 *          create; each factorization gathers the values into it as double (O(nnz)). Caller's
 *          values are never modified.
 * Batch.   One symbolic analysis (cholmod_analyze) on the pattern; one numeric factor per batch
 *          element (cholmod_copy_factor of the symbolic one), factorized in parallel over the
 *          batch (one cholmod_common per OpenMP thread) when they are simplicial, one after the
 *          other when supernodal (batch_threads()); never from inside a parallel region when
 *          one thread does the work (sla_direct_for_each explains why).
 * float32. Values and right-hand sides are converted to double: the factorization, solves,
 *          log-determinant and its gradient run in double and results are rounded to float.
 * Ordering SLA_ORDERING_NATURAL (no permutation), AMD, METIS (METIS_NodeND through CHOLMOD),
 *          AUTO: see choose_methods() and docs/direct.md for the rule and the measurements.
 * Errors.  Not positive definite → SLA_ENOTSPD naming the batch element and the column of A
 *          whose pivot failed (CHOLMOD's L->minor mapped through the permutation). After a failed
 *          refactor the solver holds no valid factorization until the next successful one.
 * Form.    Supernodal or simplicial by CHOLMOD's rule (simplicial when flops/nnz(L) < 40: 2–10×
 *          faster on very sparse factors), always LLᵀ; describe() says which. Factors of at
 *          most SLA_SNODE_OWN_MAX_FLOPS with flops/nnz(L) ≥ SLA_SNODE_OWN_MIN_DENSITY are
 *          supernodal, factorized and solved by the own kernels of supernodal_llt.c on
 *          CHOLMOD's symbolic structure (own_kernels(); measurements in docs/direct.md); the
 *          batch then runs in parallel over its elements as for simplicial factors.
 * rcond    The estimate of condest.c (Higham's 1-norm estimator on the row-equilibrated A, a few
 *          solves on the factor), after every factorization; the minimum over the batch. Below
 *          SLA_RCOND_SINGULAR the matrix is numerically singular (semidefinite to working
 *          precision): create and refactor succeed, logdet gives sign 0 and −inf, solve and
 *          logdet_grad return SLA_ESINGULAR naming the batch element; with
 *          options.allow_singular the factor is used as computed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cholmod.h>
#include <omp.h>

#include "direct/direct.h"

/* cholmod_solve2 reallocates its workspaces whenever the column count changes: the solves of
 * the caller, the condition estimate's first (multi-column) and its later (one column) solves
 * each keep their own */
enum { WS_SOLVE, WS_ESTIMATE_BLOCK, WS_ESTIMATE_ONE, WORKSPACES };

typedef struct chol_impl {
    int nthreads;              /* commons, value buffers and solve workspaces */
    int batch_threads;         /* threads of the loops over the batch (see batch_threads()) */
    cholmod_common *cm;        /* [nthreads]; cm[0] also does the analysis */
    sla_symlower low;          /* lower triangle of A ∪ Aᵀ = upper CSC triangle (stype +1) */
    double *xbuf;              /* [nthreads][low.nnz] gathered values */
    cholmod_factor **L;        /* [batch] numeric factors (L[0] holds the analysis) */
    cholmod_dense **X, **Y, **E; /* [WORKSPACES·nthreads] cholmod_solve2 workspaces (ws()) */
    double *rcond;             /* [batch] reciprocal condition estimates (condest.c) */
    int64_t *rcond_hint;       /* [batch] their hints for the next factorization */
    int valid;                 /* 0 after a failed (re)factorization */
    int64_t *slot_pos;         /* [nnz] position of (A⁻¹)_{c,r} of each slot in L->x (lazy) */
    int own;                   /* 1: own supernodal kernels (supernodal_llt.c) on L's structure */
    sla_snode_plan plan;       /* their pattern-only part (own = 1) */
    double *work;              /* [nthreads][work_per_thread]: condition estimate, own kernels */
    double *dinv;              /* [batch][n] 1 / L_jj of the own kernels' factors */
    size_t work_per_thread;
    char why_invalid[400];
} chol_impl;

static sla_supernodal_llt supernodal_view(const cholmod_factor *L);

/* The own kernels' workspace of thread slot t: the factorization's update column, or the
 * solve's [nrhs·n + maxrow] (nrhs ≤ 3). */
static double *own_work(const chol_impl *c, int t)
{
    return c->work + (size_t)t * c->work_per_thread + SLA_RCOND_WORK * c->low.n;
}

static double *own_dinv(const chol_impl *c, int64_t b)
{
    return c->dinv + (size_t)b * c->low.n;
}

/* ---------------------------------------------------------------------------------------- */
/* Ordering rule                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* Which orderings cholmod_analyze tries. AUTO is CHOLMOD's default strategy (nmethods = 0): AMD,
 * then METIS only when AMD's factor is expensive (flops/nnz(L) ≥ 500 and nnz(L)/nnz(tril A) ≥ 5),
 * keeping the ordering with the smaller nnz(L). Measured (docs/direct.md, 2D Poisson up to 10⁶,
 * 3D up to 45³, the shared SPD matrices): this picks the smaller analysis + factorization time
 * on every one of them: AMD on 2D grids (METIS saves flops there but costs 5–10× the analysis
 * for ≤ 8 % less factorization time) and on the shared matrices, METIS on 3D grids from 30³ on
 * (2× faster factorizations), where only the test lets it be tried. */
static void choose_methods(cholmod_common *cm, sla_ordering ordering)
{
    /* CHOLMOD's choice: simplicial when flops/nnz(L) < 40 (supernodal_switch), supernodal
     * otherwise; a simplicial factor is kept as LLᵀ (not LDLᵀ) so that a pivot ≤ 0 is caught
     * as for supernodal factors and both share the selected-inverse formulas. */
    cm->supernodal = CHOLMOD_AUTO;
    cm->final_ll = 1;
    switch (ordering) {
    case SLA_ORDERING_NATURAL:
        cm->nmethods = 1;
        cm->method[0].ordering = CHOLMOD_NATURAL;
        cm->postorder = 0;          /* keep the identity: no etree postordering */
        break;
    case SLA_ORDERING_AMD:
        cm->nmethods = 1;
        cm->method[0].ordering = CHOLMOD_AMD;
        break;
    case SLA_ORDERING_METIS:
        cm->nmethods = 1;
        cm->method[0].ordering = CHOLMOD_METIS;
        break;
    default:
        cm->nmethods = 0;
        break;
    }
}

static const char *ordering_label(int cholmod_ordering)
{
    switch (cholmod_ordering) {
    case CHOLMOD_NATURAL: return "natural";
    case CHOLMOD_GIVEN: return "given";
    case CHOLMOD_AMD: return "AMD";
    case CHOLMOD_METIS: return "METIS";
    case CHOLMOD_NESDIS: return "NESDIS";
    case CHOLMOD_COLAMD: return "COLAMD";
    case CHOLMOD_POSTORDERED: return "natural (postordered)";
    default: return "unknown";
    }
}

static sla_status cholmod_error_status(const cholmod_common *cm, const char *what)
{
    switch (cm->status) {
    case CHOLMOD_OUT_OF_MEMORY:
        return SLA_FAIL(SLA_ENOMEM, "%s: CHOLMOD ran out of memory", what);
    case CHOLMOD_TOO_LARGE:
        return SLA_FAIL(SLA_ENOMEM, "%s: CHOLMOD: problem too large (integer overflow)", what);
    case CHOLMOD_NOT_INSTALLED:
        return SLA_FAIL(SLA_EUNSUPPORTED, "%s: CHOLMOD module not installed", what);
    default:
        return SLA_FAIL(SLA_EBACKEND, "%s: CHOLMOD status %d", what, cm->status);
    }
}

static void common_start(cholmod_common *cm, sla_ordering ordering)
{
    cholmod_l_start(cm);
    cm->print = 0;                  /* the library never prints */
    cm->error_handler = NULL;
    choose_methods(cm, ordering);
}

/* CSC header (stype +1) on the lower-triangle CSR of A ∪ Aᵀ. */
static cholmod_sparse csc_header(const sla_symlower *low, int xtype, double *x)
{
    cholmod_sparse h;
    memset(&h, 0, sizeof h);
    h.nrow = h.ncol = (size_t)low->n;
    h.nzmax = (size_t)low->nnz;
    h.p = low->rowptr;
    h.i = low->colind;
    h.x = x;
    h.stype = 1;
    h.itype = CHOLMOD_LONG;
    h.xtype = xtype;
    h.dtype = CHOLMOD_DOUBLE;
    h.sorted = 1;
    h.packed = 1;
    return h;
}

/* Whether the analysis in cm (its flop count and nnz(L)) is for the own kernels
 * (supernodal_llt.c): small factors that are not too sparse. */
static int own_kernels(const cholmod_common *cm)
{
    return cm->fl <= SLA_SNODE_OWN_MAX_FLOPS && cm->fl >= SLA_SNODE_OWN_MIN_DENSITY * cm->lnz;
}

/* The symbolic analysis of chol_create, on a started common: one call, so that the analysis
 * method = auto hands over (sla_cholmod_analysis) is the one create would run. */
static cholmod_factor *analyze(const sla_symlower *low, cholmod_common *cm)
{
    cholmod_sparse h = csc_header(low, CHOLMOD_PATTERN, NULL);
    cholmod_factor *L = cholmod_l_analyze(&h, cm);
    if (L && !L->is_super && own_kernels(cm)) {
        /* the own kernels run on a supernodal structure: analyse again for one (same ordering
         * rule, so the same permutation and nnz(L)) */
        cholmod_l_free_factor(&L, cm);
        int was = cm->supernodal;
        cm->supernodal = CHOLMOD_SUPERNODAL;
        L = cholmod_l_analyze(&h, cm);
        cm->supernodal = was;
    }
    return L;
}

sla_status sla_cholmod_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                    double *flops)
{
    SLA_TRY(sla_direct_check_square(A));
    sla_symlower low;
    SLA_TRY(sla_symlower_build(A->pattern, &low));
    cholmod_common cm;
    common_start(&cm, ordering);
    cholmod_factor *L = analyze(&low, &cm);
    sla_status st = L ? SLA_OK : cholmod_error_status(&cm, "cholmod_analyze");
    if (st == SLA_OK) {
        if (nnz_L) *nnz_L = cm.lnz;
        if (flops) *flops = cm.fl;
    }
    cholmod_l_free_factor(&L, &cm);
    cholmod_l_finish(&cm);
    sla_symlower_free(&low);
    return st;
}

/* What method = auto hands to chol_create: the lower triangle of A ∪ Aᵀ, the symbolic factor
 * and the statistics describe() reports. */
typedef struct chol_analysis {
    sla_symlower low;
    cholmod_factor *L;
    double lnz, fl;
} chol_analysis;

static void chol_analysis_free(void *state)
{
    chol_analysis *a = state;
    cholmod_common cm;
    cholmod_l_start(&cm);
    cholmod_l_free_factor(&a->L, &cm);
    cholmod_l_finish(&cm);
    sla_symlower_free(&a->low);
    sla_free(a);
}

sla_status sla_cholmod_analysis(const sla_solver *s, sla_analysis **out)
{
    *out = NULL;
    sla_analysis *a = sla_analysis_new(&sla_backend_cholmod, sizeof(chol_analysis),
                                       chol_analysis_free);
    if (!a) return SLA_ENOMEM;
    chol_analysis *c = a->state;
    sla_status st = sla_symlower_build(s->pattern, &c->low);
    if (st == SLA_OK) {
        cholmod_common cm;
        common_start(&cm, s->opt.ordering);
        c->L = analyze(&c->low, &cm);
        st = c->L ? SLA_OK : cholmod_error_status(&cm, "cholmod_analyze");
        c->lnz = cm.lnz;
        c->fl = cm.fl;
        cholmod_l_finish(&cm);
    }
    if (st != SLA_OK) { sla_analysis_free(&a); return st; }
    a->nnz_factor = c->lnz;
    a->flops = c->fl;
    a->bytes = 12 * c->lnz;         /* 8-byte value + (amortized) index per entry */
    *out = a;
    return SLA_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Numeric factorization of every batch element                                              */
/* ---------------------------------------------------------------------------------------- */

/* SLA_ENOTSPD for the failed pivot of column col (elimination step k) of batch element b, with
 * the plain cause when A shows it: a zero row and column (A singular: an empty row of the
 * pattern, or stored zeros) or a diagonal entry that is not positive. */
static sla_status not_spd_error(const sla_solver *s, int64_t b, int64_t col, int64_t k)
{
    const int64_t *rp = sla_pattern_rowptr(s->pattern);
    const int32_t *ci = sla_pattern_colind(s->pattern);
    int64_t nnz = sla_pattern_nnz(s->pattern);
    double diag = 0;
    int zero = 1;
    for (int64_t q = col >= 0 ? rp[col] : 0; col >= 0 && q < rp[col + 1]; q++) {
        double v = s->dtype == SLA_FLOAT64 ? ((const double *)s->A.values)[b * nnz + q]
                                           : ((const float *)s->A.values)[b * nnz + q];
        if (v != 0) zero = 0;
        if (ci[q] == col) diag = v;
    }
    const char *hint = "for symmetric indefinite or singular matrices use method ldlt";
    if (col >= 0 && zero)
        return sla_error_set(SLA_ENOTSPD, "cholmod_factorize", "not positive definite: row and "
                             "column %lld of A are zero (A is singular; Cholesky pivot at "
                             "elimination step %lld of %lld); %s", (long long)col, (long long)k,
                             (long long)s->n, hint);
    if (col >= 0 && diag <= 0)
        return sla_error_set(SLA_ENOTSPD, "cholmod_factorize", "not positive definite: the "
                             "diagonal entry a(%lld,%lld) = %g of column %lld is not positive "
                             "(Cholesky pivot at elimination step %lld of %lld); %s",
                             (long long)col, (long long)col, diag, (long long)col, (long long)k,
                             (long long)s->n, hint);
    return sla_error_set(SLA_ENOTSPD, "cholmod_factorize", "not positive definite: the Cholesky "
                         "pivot of column %lld (elimination step %lld of %lld) is not positive; "
                         "%s", (long long)col, (long long)k, (long long)s->n, hint);
}

/* A column-major n × k double block x as a CHOLMOD dense header (borrowed). */
static cholmod_dense dense_header(int64_t n, int64_t k, void *x)
{
    cholmod_dense d;
    memset(&d, 0, sizeof d);
    d.nrow = (size_t)n;
    d.ncol = (size_t)k;
    d.d = (size_t)n;
    d.nzmax = (size_t)(n * k);
    d.xtype = CHOLMOD_REAL;
    d.dtype = CHOLMOD_DOUBLE;
    d.x = x;
    return d;
}

/* A⁻¹ Y in place on element b's factor with thread slot t's workspaces (A is symmetric: op T is
 * the same solve), for the condition estimate. */
typedef struct { chol_impl *c; int t; } inverse_ctx;

static sla_status chol_inverse(void *ctx, int64_t b, sla_op op, int64_t k, double *y)
{
    (void)op;
    inverse_ctx *ic = ctx;
    chol_impl *c = ic->c;
    if (c->own) {
        sla_supernodal_llt v = supernodal_view(c->L[b]);
        double *w = own_work(c, ic->t);
        sla_snode_solve(&v, own_dinv(c, b), c->L[b]->Perm, k, y, y, w);
        return SLA_OK;
    }
    int t = ic->t, w = (k > 1 ? WS_ESTIMATE_BLOCK : WS_ESTIMATE_ONE) * c->nthreads + t;
    int64_t n = (int64_t)c->L[b]->n;
    cholmod_dense bd = dense_header(n, k, y);
    if (!cholmod_l_solve2(CHOLMOD_A, c->L[b], &bd, NULL, &c->X[w], NULL, &c->Y[w], &c->E[w],
                          &c->cm[t]))
        return c->cm[t].status == CHOLMOD_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND;
    for (int64_t j = 0; j < k; j++)
        memcpy(y + j * n, (double *)c->X[w]->x + j * (int64_t)c->X[w]->d, (size_t)n * sizeof *y);
    return SLA_OK;
}

/* The singularity rule (condest.c) on element b's new factor. */
static sla_status estimate_rcond(sla_solver *s, int64_t b, int t)
{
    chol_impl *c = s->impl;
    double *work = c->work + (size_t)t * c->work_per_thread;
    inverse_ctx ic = {c, t};
    sla_status st = sla_direct_rcond(s, b, chol_inverse, &ic, work, &c->rcond_hint[b],
                                     &c->rcond[b]);
    if (st < 0) return cholmod_error_status(&c->cm[t], "cholmod_solve2 (condition estimate)");
    return SLA_OK;
}

static sla_status factorize_one(void *ctx, int64_t b, int t)
{
    sla_solver *s = ctx;
    chol_impl *c = s->impl;
    size_t es = sla_dtype_size(s->dtype);
    int64_t nnz = sla_pattern_nnz(s->pattern);
    double *x = c->xbuf + (size_t)t * (size_t)c->low.nnz;
    sla_symlower_gather(&c->low, s->dtype, (const char *)s->A.values + (size_t)(b * nnz) * es, x);
    cholmod_factor *L = c->L[b];
    if (c->own) {
        sla_supernodal_llt v = supernodal_view(L);
        int64_t k = sla_snode_factorize(&v, &c->plan, x, L->xsize, L->x, own_dinv(c, b),
                                        own_work(c, t));
        L->minor = (size_t)(k < 0 ? s->n : k);
        if (k >= 0) return not_spd_error(s, b, ((const int64_t *)L->Perm)[k], k);
        return estimate_rcond(s, b, t);
    }
    cholmod_sparse h = csc_header(&c->low, CHOLMOD_REAL, x);
    cholmod_common *cm = &c->cm[t];
    cholmod_l_factorize(&h, L, cm);
    if (cm->status == CHOLMOD_NOT_POSDEF) {
        int64_t k = (int64_t)L->minor;
        int64_t col = k < s->n ? ((const int64_t *)L->Perm)[k] : -1;
        return not_spd_error(s, b, col, k);
    }
    if (cm->status < CHOLMOD_OK) return cholmod_error_status(cm, "cholmod_factorize");
    return estimate_rcond(s, b, t);
}

static sla_status factorize_all(sla_solver *s)
{
    chol_impl *c = s->impl;
    sla_batch_error err;
    c->valid = 0;
    sla_status st = sla_direct_for_each(s->batch, c->batch_threads, factorize_one, s, "cholesky",
                                        &err);
    if (st < 0) {
        snprintf(c->why_invalid, sizeof c->why_invalid, "%s", err.msg);
        return st;
    }
    double rc = s->n == 0 ? 1 : INFINITY;
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) rc = fmin(rc, c->rcond[b]);
    s->rcond = rc;
    c->valid = 1;
    return SLA_OK;
}

/* SLA_ESINGULAR for the first numerically singular element (rcond < SLA_RCOND_SINGULAR, unless
 * options.allow_singular): the factorization succeeded, but A is only semidefinite to working
 * precision. */
static sla_status check_regular(const sla_solver *s)
{
    const chol_impl *c = s->impl;
    for (int64_t b = 0; b < s->batch && s->n > 0; b++)
        if (sla_direct_numerically_singular(s, c->rcond[b]))
            return sla_error_set(SLA_ESINGULAR, "cholesky", "A[%lld] is numerically singular: "
                                 "reciprocal condition estimate %.2g < %.2g (SLA_RCOND_SINGULAR), "
                                 "positive semidefinite to working precision; its "
                                 "log-determinant is -inf", (long long)b, c->rcond[b],
                                 SLA_RCOND_SINGULAR);
    return SLA_OK;
}

/* Per-thread workspaces; for a supernodal factor the own kernels take (own_kernels()), the numeric
 * factor's storage (cholmod_change_factor to a numeric supernodal LLᵀ, once) and the own
 * kernels' plan (supernodal_llt.c). */
static sla_status setup_own(sla_solver *s, chol_impl *c)
{
    cholmod_factor *L = c->L[0];
    c->own = L->is_super && own_kernels(&c->cm[0]);
    if (c->own) {
        if (!cholmod_l_change_factor(CHOLMOD_REAL, 1, 1, 1, 1, L, &c->cm[0]))
            return cholmod_error_status(&c->cm[0], "cholmod_change_factor");
        sla_supernodal_llt v = supernodal_view(L);
        SLA_TRY(sla_snode_plan_build(&v, L->Perm, &c->low, &c->plan));
        c->dinv = sla_malloc((size_t)s->batch, (size_t)(s->n > 0 ? s->n : 1) * sizeof(double),
                             "inverse diagonal");
        if (!c->dinv) return SLA_ENOMEM;
    }
    size_t n = (size_t)s->n;
    /* the condition estimate solves up to 3 columns in one call */
    c->work_per_thread = SLA_RCOND_WORK * n + (c->own ? (size_t)c->plan.maxrow + 3 * n : 0);
    c->work = sla_malloc((size_t)c->nthreads, (c->work_per_thread ? c->work_per_thread : 1) *
                         sizeof(double), "cholesky workspace");
    return c->work ? SLA_OK : SLA_ENOMEM;
}

/* Threads over the batch: one per element for simplicial factors, whose factorization, solves and
 * selected inverse are plain scalar loops (no BLAS, no OpenMP inside); none for supernodal ones,
 * which already use the cores through threaded BLAS and CHOLMOD's own OpenMP regions: running
 * both nests teams and oversubscribes the cores (measured on 2 cores: a batch of 4 supernodal
 * 100×100 Poisson factors took 1.3–1.8× longer over 2 threads, their selected inverses 3×). */
static int batch_threads(const chol_impl *c, const cholmod_factor *L)
{
    return L->is_super && !c->own ? 1 : c->nthreads;
}

static sla_status check_valid(const sla_solver *s)
{
    const chol_impl *c = s->impl;
    if (!c->valid)
        return sla_error_set(SLA_EINVAL, "cholesky", "the solver holds no valid factorization: "
                             "the last refactor failed (%s)", c->why_invalid);
    return SLA_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Backend entry points                                                                      */
/* ---------------------------------------------------------------------------------------- */

static void format_count(double v, char *buf, size_t len)
{
    if (v >= 1e9) snprintf(buf, len, "%.3gG", v / 1e9);
    else if (v >= 1e6) snprintf(buf, len, "%.3gM", v / 1e6);
    else if (v >= 1e3) snprintf(buf, len, "%.3gk", v / 1e3);
    else snprintf(buf, len, "%.0f", v);
}

static void describe(sla_solver *s)
{
    chol_impl *c = s->impl;
    const cholmod_factor *L = c->L[0];
    char lnz[32], rc[112] = "";
    format_count(c->cm[0].lnz, lnz, sizeof lnz);
    if (c->valid && s->n > 0)
        snprintf(rc, sizeof rc, ", rcond %.1e%s%s", s->rcond, s->batch > 1 ? " (min over the batch)" : "",
                 sla_direct_singular_note(s));
    snprintf(s->description, sizeof s->description,
             "cholesky (CHOLMOD %d.%d.%d %s, %s): nnz(L) %s%s%s%s", CHOLMOD_MAIN_VERSION,
             CHOLMOD_SUB_VERSION, CHOLMOD_SUBSUB_VERSION,
             c->own ? "supernodal, own numeric kernels" : L->is_super ? "supernodal" : "simplicial",
             ordering_label(L->ordering), lnz, s->dtype == SLA_FLOAT32 ? ", float32 via double" : "",
             s->batch > 1 ? ", batched" : "", rc);
}

static void chol_destroy(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) { sla_cholmod_z_destroy(s); return; }
    chol_impl *c = s->impl;
    if (!c) return;
    if (c->L)
        for (int64_t b = 0; b < s->batch; b++) cholmod_l_free_factor(&c->L[b], &c->cm[0]);
    for (int w = 0; w < WORKSPACES * c->nthreads && c->cm; w++) {
        cholmod_common *cm = &c->cm[w % c->nthreads];
        if (c->X) cholmod_l_free_dense(&c->X[w], cm);
        if (c->Y) cholmod_l_free_dense(&c->Y[w], cm);
        if (c->E) cholmod_l_free_dense(&c->E[w], cm);
    }
    for (int t = 0; t < c->nthreads && c->cm; t++) cholmod_l_finish(&c->cm[t]);
    sla_free(c->cm);
    sla_free(c->L);
    sla_free(c->X);
    sla_free(c->Y);
    sla_free(c->E);
    sla_free(c->xbuf);
    sla_free(c->slot_pos);
    sla_free(c->work);
    sla_free(c->dinv);
    sla_snode_plan_free(&c->plan);
    sla_free(c->rcond);
    sla_free(c->rcond_hint);
    sla_symlower_free(&c->low);
    sla_free(c);
    s->impl = NULL;
}

static sla_status chol_create(sla_solver *s)
{
    if (!s->pattern)
        return SLA_FAIL(SLA_EINVAL, "cholesky needs the matrix, not a matrix-free operator");
    if (sla_dtype_is_complex(s->dtype)) return sla_cholmod_z_create(s);
    chol_impl *c = sla_calloc(1, sizeof *c, "cholmod solver");
    if (!c) return SLA_ENOMEM;
    s->impl = c;
    int64_t nt = sla_threads();
    c->nthreads = (int)(nt < s->batch ? nt : s->batch);
    c->cm = sla_calloc((size_t)c->nthreads, sizeof(cholmod_common), "cholmod commons");
    c->L = sla_calloc((size_t)s->batch, sizeof(cholmod_factor *), "cholmod factors");
    size_t nws = (size_t)(WORKSPACES * c->nthreads);
    c->X = sla_calloc(nws, sizeof(cholmod_dense *), "cholmod solve workspace");
    c->Y = sla_calloc(nws, sizeof(cholmod_dense *), "cholmod solve workspace");
    c->E = sla_calloc(nws, sizeof(cholmod_dense *), "cholmod solve workspace");
    c->rcond = sla_calloc((size_t)s->batch, sizeof(double), "condition estimates");
    c->rcond_hint = sla_malloc((size_t)s->batch, sizeof(int64_t), "condition estimates");
    for (int64_t b = 0; c->rcond_hint && b < s->batch; b++) c->rcond_hint[b] = -1;
    if (!c->cm || !c->L || !c->X || !c->Y || !c->E || !c->rcond || !c->rcond_hint) {
        if (c->cm) c->nthreads = 0;
        return SLA_ENOMEM;
    }
    for (int t = 0; t < c->nthreads; t++) common_start(&c->cm[t], s->opt.ordering);
    /* symbolic analysis once, on the pattern, unless method = auto already ran it to decide
     * (sla_cholmod_analysis: the same calls) and handed it over */
    chol_analysis *given = sla_analysis_take(s, &sla_backend_cholmod);
    if (given) {
        c->low = given->low;
        c->L[0] = given->L;
        c->cm[0].lnz = given->lnz;     /* the statistics describe() reports */
        c->cm[0].fl = given->fl;
        sla_free(given);
    } else {
        SLA_TRY(sla_symlower_build(s->pattern, &c->low));
    }
    SLA_TRY(sla_symlower_check(&c->low, &s->A, "cholesky"));
    c->xbuf = sla_malloc((size_t)c->nthreads * (size_t)c->low.nnz, sizeof(double),
                         "cholmod values");
    if (!c->xbuf) return SLA_ENOMEM;
    if (!c->L[0]) c->L[0] = analyze(&c->low, &c->cm[0]);
    if (!c->L[0]) return cholmod_error_status(&c->cm[0], "cholmod_analyze");
    SLA_TRY(setup_own(s, c));
    c->batch_threads = batch_threads(c, c->L[0]);
    for (int64_t b = 1; b < s->batch; b++) {
        c->L[b] = cholmod_l_copy_factor(c->L[0], &c->cm[0]);
        if (!c->L[b]) return cholmod_error_status(&c->cm[0], "cholmod_copy_factor");
    }
    sla_status st = factorize_all(s);
    describe(s);
    return st;
}

/* New values: checked for symmetry first (the old factorization stays valid if they are not). */
static sla_status chol_refactor(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_cholmod_z_refactor(s);
    SLA_TRY(sla_symlower_check(&((chol_impl *)s->impl)->low, &s->A, "cholesky"));
    sla_status st = factorize_all(s);
    describe(s);
    return st;
}

typedef struct solve_ctx {
    sla_solver *s;
    int64_t nrhs;
    const void *B;
    void *X;
    double *buf;       /* [nthreads][n·nrhs], or NULL (float64, one column: B is used in place) */
} solve_ctx;

static sla_status solve_one(void *ctx, int64_t b, int t)
{
    solve_ctx *sc = ctx;
    sla_solver *s = sc->s;
    chol_impl *c = s->impl;
    int64_t nrhs = sc->nrhs;
    const void *B = sc->B;
    void *X = sc->X;
    double *buf = sc->buf ? sc->buf + (size_t)t * (size_t)(s->n * nrhs) : NULL;
    size_t es = sla_dtype_size(s->dtype);
    int64_t n = s->n, off = b * n * nrhs;
    const void *Bb = (const char *)B + (size_t)off * es;
    if (c->own) {
        sla_supernodal_llt v = supernodal_view(c->L[b]);
        double *w = own_work(c, t);
        void *Xb = (char *)X + (size_t)off * es;
        if (s->dtype == SLA_FLOAT64 && nrhs == 1) {
            sla_snode_solve(&v, own_dinv(c, b), c->L[b]->Perm, 1, Bb, Xb, w);
            return SLA_OK;
        }
        sla_dense_to_colmajor(s->dtype, n, nrhs, Bb, buf);
        for (int64_t j = 0; j < nrhs; j++)
            sla_snode_solve(&v, own_dinv(c, b), c->L[b]->Perm, 1, buf + j * n, buf + j * n, w);
        sla_dense_from_colmajor(s->dtype, n, nrhs, buf, n, Xb);
        return SLA_OK;
    }
    cholmod_dense bd = dense_header(n, nrhs, NULL);
    if (s->dtype == SLA_FLOAT64 && nrhs == 1) {
        bd.x = (void *)Bb;          /* read-only: cholmod_solve2 does not write B */
    } else {
        sla_dense_to_colmajor(s->dtype, n, nrhs, Bb, buf);
        bd.x = buf;
    }
    cholmod_common *cm = &c->cm[t];
    if (!cholmod_l_solve2(CHOLMOD_A, c->L[b], &bd, NULL, &c->X[t], NULL, &c->Y[t], &c->E[t], cm))
        return cholmod_error_status(cm, "cholmod_solve2");
    sla_dense_from_colmajor(s->dtype, n, nrhs, c->X[t]->x, (int64_t)c->X[t]->d,
                            (char *)X + (size_t)off * es);
    return SLA_OK;
}

/* op = N and T are the same solve: A is symmetric. info: for float64 nothing is written; in
 * particular residual_norm and relative_residual stay as the generic layer's info_init set them,
 * which is how solver.c tells that this backend computes no residual and measures the true one
 * itself; for float32 the residual of the rounded X is summed here in double. */
static sla_status chol_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             const sla_solve_params *params, sla_solve_info *info)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_cholmod_z_solve(s, op, nrhs, B, X, params, info);
    SLA_TRY(check_valid(s));
    SLA_TRY(check_regular(s));
    chol_impl *c = s->impl;
    int nt = c->nthreads;
    double *buf = NULL;
    if (!(s->dtype == SLA_FLOAT64 && nrhs == 1)) {
        buf = sla_malloc((size_t)nt * (size_t)(s->n * nrhs), sizeof(double), "right-hand sides");
        if (!buf) return SLA_ENOMEM;
    }
    solve_ctx sc = {s, nrhs, B, X, buf};
    sla_batch_error err;
    sla_status st = sla_direct_for_each(s->batch, c->batch_threads, solve_one, &sc,
                                        "cholesky solve", &err);
    /* float32 always has buf (≥ n doubles) */
    if (st == SLA_OK && s->dtype != SLA_FLOAT64) sla_direct_residuals(s, op, nrhs, B, X, buf, info);
    sla_free(buf);
    return st;
}

static sla_supernodal_llt supernodal_view(const cholmod_factor *L)
{
    sla_supernodal_llt v = {
        .n = (int64_t)L->n, .nsuper = (int64_t)L->nsuper, .super = L->super, .pi = L->pi,
        .px = L->px, .s = L->s, .x = L->x};
    return v;
}

static sla_simplicial_llt simplicial_view(const cholmod_factor *L)
{
    sla_simplicial_llt v = {.n = (int64_t)L->n, .p = L->p, .i = L->i, .nz = L->nz, .x = L->x};
    return v;
}

/* Entries of L->x (and of the selected inverse in the same layout). */
static size_t factor_size(const cholmod_factor *L)
{
    return L->is_super ? L->xsize : L->nzmax;
}

/* Σ log L_jj of a supernodal or simplicial LLᵀ factor. */
static double sum_log_diagonal(const cholmod_factor *L)
{
    double sum = 0;
    if (L->is_super) {
        sla_supernodal_llt v = supernodal_view(L);
        for (int64_t k = 0; k < v.nsuper; k++) {
            int64_t nc = v.super[k + 1] - v.super[k], nsrow = v.pi[k + 1] - v.pi[k];
            const double *blk = v.x + v.px[k];
            for (int64_t j = 0; j < nc; j++) sum += log(blk[j + j * nsrow]);
        }
    } else {
        sla_simplicial_llt v = simplicial_view(L);
        for (int64_t j = 0; j < v.n; j++) sum += log(v.x[v.p[j]]);   /* diagonal first */
    }
    return sum;
}

/* log|det A| = 2 Σ log L_jj; sign +1 (A is SPD once factorized), or sign 0 and −inf when
 * numerically singular (sla_direct_numerically_singular). */
static sla_status chol_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_cholmod_z_logdet(s, sign, logabsdet);
    SLA_TRY(check_valid(s));
    chol_impl *c = s->impl;
    for (int64_t b = 0; b < s->batch; b++) {
        int singular = sla_direct_numerically_singular(s, c->rcond[b]);
        sign[b] = singular ? 0 : 1;
        logabsdet[b] = singular ? -INFINITY : 2 * sum_log_diagonal(c->L[b]);
    }
    return SLA_OK;
}

/* Position in L->x of (P A Pᵀ)⁻¹ entry for each CSR slot (r, c) of A: A⁻¹ is symmetric, so the
 * entry (A⁻ᵀ)_{rc} = (A⁻¹)_{rc} sits at (Pinv r, Pinv c) of the selected inverse. Built once. */
static sla_status build_slot_positions(sla_solver *s, chol_impl *c)
{
    const cholmod_factor *L = c->L[0];
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    const int64_t *perm = L->Perm, *rowind = sla_pattern_rowind(s->pattern);
    const int32_t *colind = sla_pattern_colind(s->pattern);
    if (!rowind) return SLA_FAIL(SLA_ENOMEM, "pattern row indices");
    int64_t *pinv = sla_malloc((size_t)n, sizeof(int64_t), "inverse permutation");
    int64_t *c2s = sla_malloc((size_t)n, sizeof(int64_t), "column to supernode");
    int64_t *pos = sla_malloc((size_t)nnz, sizeof(int64_t), "slot positions");
    sla_status st = pinv && c2s && pos ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        sla_supernodal_llt v = supernodal_view(L);
        sla_simplicial_llt w = simplicial_view(L);
        for (int64_t k = 0; k < n; k++) pinv[perm[k]] = k;
        if (L->is_super) sla_selinv_col2super(&v, c2s);
        for (int64_t q = 0; q < nnz && st == SLA_OK; q++) {
            int64_t i = pinv[rowind[q]], j = pinv[colind[q]];
            pos[q] = L->is_super ? sla_supernodal_find(&v, c2s, i, j) : sla_simplicial_find(&w, i, j);
            if (pos[q] < 0)
                st = SLA_FAIL(SLA_EINTERNAL, "entry (%lld, %d) of A is not in the pattern of L",
                              (long long)rowind[q], colind[q]);
        }
    }
    sla_free(pinv);
    sla_free(c2s);
    if (st == SLA_OK) c->slot_pos = pos; else sla_free(pos);
    return st;
}

typedef struct grad_ctx {
    sla_solver *s;
    const double *g;
    void *dvalues;
    double *z;         /* [nthreads][L->xsize] */
} grad_ctx;

static sla_status grad_one(void *ctx, int64_t b, int t)
{
    grad_ctx *gc = ctx;
    sla_solver *s = gc->s;
    chol_impl *c = s->impl;
    size_t zsize = factor_size(c->L[0]), es = sla_dtype_size(s->dtype);
    int64_t nnz = sla_pattern_nnz(s->pattern);
    double *z = gc->z + (size_t)t * zsize;
    if (c->L[b]->is_super) {
        sla_supernodal_llt v = supernodal_view(c->L[b]);
        SLA_TRY(sla_selinv_llt(&v, z));
    } else {
        sla_simplicial_llt v = simplicial_view(c->L[b]);
        SLA_TRY(sla_selinv_llt_simplicial(&v, z));
    }
    sla_direct_scatter_scaled(s->dtype, nnz, gc->g[b], z, c->slot_pos,
                              (char *)gc->dvalues + (size_t)(b * nnz) * es);
    return SLA_OK;
}

/* dvalues[b][q] = g[b]·(A_b⁻¹)[c_q, r_q] from the selected inverse (selinv.c): about twice the
 * flops of the factorization, nnz(L) doubles per thread. */
static sla_status chol_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_cholmod_z_logdet_grad(s, g, dvalues);
    SLA_TRY(check_valid(s));
    SLA_TRY(check_regular(s));
    chol_impl *c = s->impl;
    if (!c->slot_pos) SLA_TRY(build_slot_positions(s, c));
    double *z = sla_malloc((size_t)c->nthreads * factor_size(c->L[0]), sizeof(double), "selected inverse");
    if (!z) return SLA_ENOMEM;
    grad_ctx gc = {s, g, dvalues, z};
    sla_batch_error err;
    sla_status st = sla_direct_for_each(s->batch, c->batch_threads, grad_one, &gc,
                                        "cholesky logdet_grad", &err);
    sla_free(z);
    return st;
}

const sla_backend sla_backend_cholmod = {
    .info = {.name = "cholmod",
             .description = "CHOLMOD supernodal Cholesky LLᵀ (SuiteSparse), AMD/METIS orderings, "
                            "batched, selected inverse for log-determinant gradients",
             .methods = SLA_METHOD_BIT(SLA_METHOD_CHOLESKY),
             .dtypes = SLA_BOTH_DTYPES | SLA_DTYPE_BIT(SLA_COMPLEX128) |
                       SLA_DTYPE_BIT(SLA_COMPLEX64),   /* complex LLᴴ: cholmod_z.c */
             .priority = 100,
             .available = 1,
             .unavailable_reason = NULL},
    .create = chol_create,
    .refactor = chol_refactor,
    .solve = chol_solve,
    .logdet = chol_logdet,
    .logdet_grad = chol_logdet_grad,
    .destroy = chol_destroy,
    .analyze = sla_cholmod_analysis,
};
