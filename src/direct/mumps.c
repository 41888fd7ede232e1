/* The mumps backend: method ldlt, symmetric indefinite LDLᵀ with 1×1 and 2×2 threshold pivoting
 * by MUMPS (sequential library, SYM = 2; Amestoy, Duff, L'Excellent & Koster, SIAM J. Matrix
 * Anal. Appl. 23(1), 2001), which factors matrices with zero diagonals such as KKT systems.
 *
 * Input.   A must be numerically symmetric (SLA_EINVAL otherwise, as for cholesky); MUMPS reads
 *          the lower triangle of A ∪ Aᵀ (assembled, centralized, 1-based), built once.
 * Output.  MUMPS never prints: ICNTL(1..3) = −1, ICNTL(4) = 0.
 * Batch.   MUMPS cannot share an analysis between instances, so each batch element has its own
 *          instance; the first runs the full analysis (ordering + symbolic), the others reuse its
 *          ordering (SYM_PERM given as PERM_IN, ICNTL(7) = 1), so the ordering is computed once.
 *          MUMPS instances are not independent: they share Fortran module state (measured: two
 *          factorizations in two threads crash in DMUMPS_LOAD_INIT), so every MUMPS call in the
 *          process is serialized by one mutex and the batch elements are factored and solved one
 *          after the other (only the value gathers run in parallel). Distinct solver objects may
 *          still be used from distinct threads: they wait for each other inside MUMPS.
 * float32. Converted to double (dmumps); results rounded to float.
 * Ordering AMD → ICNTL(7) = 0; METIS → METIS_NodeND on the graph of A ∪ Aᵀ (Debian's sequential
 *          MUMPS is built without METIS), passed as PERM_IN; NATURAL → identity PERM_IN; AUTO →
 *          the same rule as cholesky, on MUMPS's own analysis (see analyze_first()).
 * Singular Null pivot detection is on (ICNTL(24) = 1): a singular matrix factors, its
 *          log-determinant is sign 0 / −inf, and solves or logdet_grad return SLA_ESINGULAR
 *          naming the first null pivot's column (PIVNUL_LIST). Without null pivots, the rcond
 *          estimate of condest.c (a few JOB = 3 solves after every factorization) below
 *          SLA_RCOND_SINGULAR makes it numerically singular (not with options.allow_singular),
 *          with the same consequences (MUMPS's
 *          own null-pivot test, |pivot| ≤ 1e-5·ε·‖A‖ by default, misses pivots at rounding
 *          level: the 20 × 20 Neumann Laplacian factored with none). Other MUMPS errors are
 *          translated into messages (mumps_error()).
 * Empty    MUMPS rejects n = 0 and a matrix without entries (INFOG(1) = −16, −2), so those are
 *          not handed to it (m->empty): 0 × 0 is regular with det = 1 (sign 1, log|det| 0, as
 *          every other method); n × n without stored entries is the zero matrix, singular at
 *          column 0 (sign 0, −inf; solves SLA_ESINGULAR).
 * logdet   From MUMPS's determinant (ICNTL(33) = 1): det = RINFOG(12)·2^INFOG(34); its sign
 *          includes the signs of the 1×1 and 2×2 pivots of D.
 * Gradient of log|det|: the entries of A⁻¹ on the pattern, by MUMPS's selected-inverse solve
 *          (ICNTL(30) = 1, Amestoy et al., SIAM J. Sci. Comput. 34(4), 2012), which exploits the
 *          sparsity of the unit right-hand sides and of the requested entries.
 * Complex  complex128 / complex64 (complex symmetric A = Aᵀ): every hook hands over to
 *          mumps_z.c (zmumps). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>
#include <pthread.h>

#include "direct/direct.h"

#if SLA_HAVE_MUMPS
#include <dmumps_c.h>
#if SLA_HAVE_METIS
#include <metis.h>
#endif

#define ICNTL(I) icntl[(I) - 1]
#define CNTL(I) cntl[(I) - 1]
#define INFO(I) info[(I) - 1]
#define INFOG(I) infog[(I) - 1]
#define RINFOG(I) rinfog[(I) - 1]
#define MUMPS_USE_COMM_WORLD (-987654)

typedef struct mumps_impl {
    DMUMPS_STRUC_C *id;       /* [batch] instances */
    sla_mumps_ws *ws;         /* [batch] their work arrays S (WK_USER from 64 MiB) */
    int *live;                /* [batch] JOB = −1 done */
    int nthreads;
    sla_symlower low;         /* lower triangle of A ∪ Aᵀ */
    MUMPS_INT *irn, *jcn;     /* [low.nnz] 1-based, shared (read-only) by every instance */
    double *a;                /* [batch][low.nnz] values as double */
    MUMPS_INT *perm;          /* [n] 1-based pivot position of each variable, for b > 0 */
    int64_t *nnull;           /* [batch] null pivots (INFOG(28)) */
    int64_t *null_col;        /* [batch] first null pivot's column, 0-based */
    double *rcond;            /* [batch] reciprocal condition estimates (condest.c; 0 with null
                               * pivots) */
    int64_t *rcond_hint;      /* [batch] their hints for the next factorization */
    sla_ordering ordering;    /* resolved (never AUTO) */
    int empty;                /* no stored entry (n = 0 or the zero matrix): no MUMPS instance */
    int valid;
    char why_invalid[400];
    sla_mumps_first first;    /* the right-hand side told at create or refactor, solved */
} mumps_impl;

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static sla_status mumps_error(const DMUMPS_STRUC_C *id, const char *phase)
{
    return sla_mumps_error("dmumps_c", id->INFOG(1), id->INFOG(2), phase);
}

/* Every call into MUMPS takes this lock (see the file comment). */
static pthread_mutex_t mumps_lock = PTHREAD_MUTEX_INITIALIZER;

void sla_mumps_lock(void) { pthread_mutex_lock(&mumps_lock); }
void sla_mumps_unlock(void) { pthread_mutex_unlock(&mumps_lock); }

static void mumps_call(DMUMPS_STRUC_C *id, int job)
{
    pthread_mutex_lock(&mumps_lock);
    id->job = job;
    dmumps_c(id);
    pthread_mutex_unlock(&mumps_lock);
}

/* Runs job on one instance; a too small work array (−8, −9, −14, −15) is retried with a larger
 * relaxation ICNTL(14), as the MUMPS user guide recommends. */
static sla_status mumps_run(DMUMPS_STRUC_C *id, int job, const char *phase)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        mumps_call(id, job);
        if (id->INFOG(1) >= 0) return SLA_OK;
        if (!sla_mumps_retry_workspace(id->INFOG(1), &id->ICNTL(14))) break;
    }
    return mumps_error(id, phase);
}

/* JOB = 2 with the work array S ours where it is large (sla_mumps_workspace: huge pages);
 * too small work arrays are retried with a larger ICNTL(14), hence a larger S */
static sla_status mumps_factor(DMUMPS_STRUC_C *id, sla_mumps_ws *ws)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        SLA_TRY(sla_mumps_workspace(ws, id->info[7], id->ICNTL(14), sizeof(double),
                                    &id->lwk_user));
        id->wk_user = ws->p;
        mumps_call(id, 2);
        sla_mumps_workspace_settle(ws);
        if (id->INFOG(1) >= 0) return SLA_OK;
        if (!sla_mumps_retry_workspace(id->INFOG(1), &id->ICNTL(14))) break;
    }
    return mumps_error(id, "factorization");
}

static sla_status instance_init(DMUMPS_STRUC_C *id)
{
    memset(id, 0, sizeof *id);
    id->par = 1;
    id->sym = 2;
    id->comm_fortran = MUMPS_USE_COMM_WORLD;
    mumps_call(id, -1);
    if (id->INFOG(1) < 0) return mumps_error(id, "initialization");
    id->ICNTL(1) = -1;   /* error messages */
    id->ICNTL(2) = -1;   /* diagnostics */
    id->ICNTL(3) = -1;   /* global information */
    id->ICNTL(4) = 0;    /* print level */
    id->ICNTL(24) = 1;   /* null pivot detection: singular matrices factor, det = 0 */
    id->ICNTL(33) = 1;   /* determinant */
    return SLA_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Orderings                                                                                 */
/* ---------------------------------------------------------------------------------------- */

#if SLA_HAVE_METIS
/* METIS_NodeND on the graph of A ∪ Aᵀ (no diagonal); perm[i] = 1-based pivot position of i. */
sla_status sla_mumps_metis_order(const sla_symlower *low, MUMPS_INT *perm)
{
    int64_t n = low->n;
    idx_t *xadj = sla_calloc((size_t)n + 1, sizeof(idx_t), "METIS graph");
    idx_t *adj = sla_malloc((size_t)(2 * low->nnz), sizeof(idx_t), "METIS graph");
    idx_t *mperm = sla_malloc((size_t)n, sizeof(idx_t), "METIS permutation");
    idx_t *iperm = sla_malloc((size_t)n, sizeof(idx_t), "METIS permutation");
    sla_status st = xadj && adj && mperm && iperm ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = low->rowptr[i]; k < low->rowptr[i + 1]; k++)
                if (low->colind[k] != i) { xadj[i + 1]++; xadj[low->colind[k] + 1]++; }
        for (int64_t i = 0; i < n; i++) xadj[i + 1] += xadj[i];
        idx_t *fill = mperm;             /* reused as insertion cursor */
        for (int64_t i = 0; i < n; i++) fill[i] = xadj[i];
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = low->rowptr[i]; k < low->rowptr[i + 1]; k++) {
                int64_t j = low->colind[k];
                if (j == i) continue;
                adj[fill[i]++] = (idx_t)j;
                adj[fill[j]++] = (idx_t)i;
            }
        idx_t nv = (idx_t)n, opts[METIS_NOPTIONS];
        METIS_SetDefaultOptions(opts);
        int rc = n > 0 ? METIS_NodeND(&nv, xadj, adj, NULL, opts, mperm, iperm) : METIS_OK;
        if (rc == METIS_ERROR_MEMORY) st = SLA_FAIL(SLA_ENOMEM, "METIS_NodeND ran out of memory");
        else if (rc != METIS_OK) st = SLA_FAIL(SLA_EBACKEND, "METIS_NodeND returned %d", rc);
        else for (int64_t i = 0; i < n; i++) perm[i] = (MUMPS_INT)iperm[i] + 1;
    }
    sla_free(xadj);
    sla_free(adj);
    sla_free(mperm);
    sla_free(iperm);
    return st;
}
#endif

/* Sets ICNTL(7) / PERM_IN of id for the ordering; perm is filled when one is given. */
static sla_status set_ordering(DMUMPS_STRUC_C *id, sla_ordering ordering, const sla_symlower *low,
                               MUMPS_INT *perm)
{
    switch (ordering) {
    case SLA_ORDERING_NATURAL:
        for (int64_t i = 0; i < low->n; i++) perm[i] = (MUMPS_INT)(i + 1);
        id->ICNTL(7) = 1;
        id->perm_in = perm;
        return SLA_OK;
    case SLA_ORDERING_METIS:
#if SLA_HAVE_METIS
        SLA_TRY(sla_mumps_metis_order(low, perm));
        id->ICNTL(7) = 1;
        id->perm_in = perm;
        return SLA_OK;
#else
        return SLA_FAIL(SLA_EUNSUPPORTED, "ordering metis needs METIS (libmetis-dev), not "
                        "found at configure time");
#endif
    default:
        id->ICNTL(7) = 0;     /* AMD */
        return SLA_OK;
    }
}

static double mumps_count(MUMPS_INT v)
{
    return v < 0 ? -1e6 * (double)v : (double)v;   /* negative: millions */
}

/* ---------------------------------------------------------------------------------------- */
/* Symbolic and numeric set-up                                                               */
/* ---------------------------------------------------------------------------------------- */

static void set_matrix(DMUMPS_STRUC_C *id, mumps_impl *m, int64_t b)
{
    id->n = (MUMPS_INT)m->low.n;
    id->nnz = (MUMPS_INT8)m->low.nnz;
    id->nz = m->low.nnz <= INT32_MAX ? (MUMPS_INT)m->low.nnz : 0;
    id->irn = m->irn;
    id->jcn = m->jcn;
    id->a = m->a + (size_t)b * (size_t)m->low.nnz;
}

/* Analysis of instance 0 with the requested ordering. AUTO follows CHOLMOD's default rule (see
 * cholmod.c and docs/direct.md), on MUMPS's own statistics, whose counts agree with CHOLMOD's
 * within ~15 %: analyse with AMD; if the predicted factor is expensive (flops/nnz(L) ≥ 500 and
 * nnz(L)/nnz(tril A) ≥ 5), analyse again with METIS and keep the smaller predicted factor
 * (INFOG(20)); returning to AMD reuses its permutation (SYM_PERM, ICNTL(7) = 1). */
static sla_status analyze_first(sla_solver *s, mumps_impl *m)
{
    DMUMPS_STRUC_C *id0 = &m->id[0];
    set_matrix(id0, m, 0);
    sla_ordering ord = s->opt.ordering == SLA_ORDERING_AUTO ? SLA_ORDERING_AMD : s->opt.ordering;
    SLA_TRY(set_ordering(id0, ord, &m->low, m->perm));
    SLA_TRY(mumps_run(id0, 1, "analysis"));
    m->ordering = ord;
#if SLA_HAVE_METIS
    double lnz = mumps_count(id0->INFOG(20)), fl = id0->RINFOG(1), anz = (double)m->low.nnz;
    if (s->opt.ordering != SLA_ORDERING_AUTO || fl < 500 * lnz || lnz < 5 * anz) return SLA_OK;
    MUMPS_INT *amd_perm = sla_malloc((size_t)m->low.n, sizeof(MUMPS_INT), "AMD ordering");
    if (!amd_perm) return SLA_ENOMEM;
    memcpy(amd_perm, id0->sym_perm, (size_t)m->low.n * sizeof(MUMPS_INT));
    sla_status st = set_ordering(id0, SLA_ORDERING_METIS, &m->low, m->perm);
    if (st == SLA_OK) st = mumps_run(id0, 1, "analysis");
    if (st == SLA_OK && mumps_count(id0->INFOG(20)) < lnz) {
        m->ordering = SLA_ORDERING_METIS;
    } else if (st == SLA_OK) {
        memcpy(m->perm, amd_perm, (size_t)m->low.n * sizeof(MUMPS_INT));
        id0->ICNTL(7) = 1;
        id0->perm_in = m->perm;
        st = mumps_run(id0, 1, "analysis");
    }
    sla_free(amd_perm);
    return st;
#else
    return SLA_OK;
#endif
}

static sla_status analyze_all(sla_solver *s, mumps_impl *m)
{
    SLA_TRY(analyze_first(s, m));
    DMUMPS_STRUC_C *id0 = &m->id[0];
    if (s->batch > 1 && m->low.n > 0) {
        /* the others reuse the ordering: SYM_PERM(i) is the pivot position of variable i */
        memcpy(m->perm, id0->sym_perm, (size_t)m->low.n * sizeof(MUMPS_INT));
    }
    for (int64_t b = 1; b < s->batch; b++) {
        DMUMPS_STRUC_C *id = &m->id[b];
        set_matrix(id, m, b);
        id->ICNTL(7) = 1;
        id->perm_in = m->perm;
        SLA_TRY(mumps_run(id, 1, "analysis"));
    }
    return SLA_OK;
}

static void gather_values(sla_solver *s, mumps_impl *m)
{
    size_t es = sla_dtype_size(s->dtype);
    int64_t nnz = sla_pattern_nnz(s->pattern);
    #pragma omp parallel for num_threads(m->nthreads) schedule(static) if (s->batch > 1)
    for (int64_t b = 0; b < s->batch; b++)
        sla_symlower_gather(&m->low, s->dtype, (const char *)s->A.values + (size_t)(b * nnz) * es,
                            m->a + (size_t)b * (size_t)m->low.nnz);
}

/* Y = A⁻¹ Y in place on instance b's factors (Y column-major n × k, dense centralized). */
static sla_status dense_solve(mumps_impl *m, int64_t b, int64_t k, double *y, const char *phase)
{
    DMUMPS_STRUC_C *id = &m->id[b];
    id->ICNTL(20) = 0;
    id->ICNTL(21) = 0;
    id->ICNTL(30) = 0;
    id->rhs = y;
    id->nrhs = (MUMPS_INT)k;
    id->lrhs = (MUMPS_INT)m->low.n;
    sla_status st = mumps_run(id, 3, phase);
    id->rhs = NULL;
    return st;
}

/* The same for the condition estimate (A is symmetric: op T is the same solve). */
static sla_status mumps_inverse(void *ctx, int64_t b, sla_op op, int64_t k, double *y)
{
    (void)op;
    return dense_solve(ctx, b, k, y, "solve (condition estimate)");
}

/* The estimate of element b, with the held right-hand side's k columns (mumps_first.c; w
 * [n × k], NULL when k = 0) solved in its first call; *kept = 0 when they were not. */
static sla_status rcond_with_first(sla_solver *s, mumps_impl *m, int64_t b, double *work,
                                   int64_t k, double *w, int *kept)
{
    size_t off = (size_t)(b * s->n * k) * sla_dtype_size(s->dtype);
    int solved = 0;
    if (w) sla_dense_to_colmajor(s->dtype, s->n, k, (const char *)m->first.b + off, w);
    sla_status st = sla_direct_rcond_first(s, b, mumps_inverse, m, work, &m->rcond_hint[b],
                                           &m->rcond[b], k, w, &solved);
    if (w && solved && st == SLA_OK)
        sla_dense_from_colmajor(s->dtype, s->n, k, w, s->n, (char *)m->first.x + off);
    else
        *kept = 0;
    return st;
}

static int mumps_singular(const sla_solver *s, const mumps_impl *m, int64_t b);

/* The singularity rule (condest.c) on the factors of every element without null pivots; the
 * right-hand side of sla_solver_create_for, if told, solved along (mumps_first.c). */
static sla_status estimate_rcond(sla_solver *s, mumps_impl *m)
{
    double *work = sla_malloc((size_t)s->n, SLA_RCOND_WORK * sizeof(double), "condition estimate");
    if (!work) return SLA_ENOMEM;
    double *w = NULL;
    int64_t k = sla_mumps_first_hold(s, &m->first, sizeof *w, (void **)&w);
    int kept = k > 0;
    sla_status st = SLA_OK;
    s->rcond = INFINITY;
    for (int64_t b = 0; b < s->batch && st == SLA_OK; b++) {
        m->rcond[b] = 0;
        if (m->nnull[b] == 0) st = rcond_with_first(s, m, b, work, k, w, &kept);
        else kept = 0;
        s->rcond = fmin(s->rcond, m->rcond[b]);
    }
    sla_free(work);
    sla_free(w);
    for (int64_t b = 0; b < s->batch && kept; b++) kept = !mumps_singular(s, m, b);
    if (!kept || st != SLA_OK) sla_mumps_first_drop(&m->first);
    if (st < 0) snprintf(m->why_invalid, sizeof m->why_invalid, "%s", sla_last_error());
    return st;
}

/* 1 if element b is singular: null pivots, or numerically (rcond < SLA_RCOND_SINGULAR, unless
 * options.allow_singular). */
static int mumps_singular(const sla_solver *s, const mumps_impl *m, int64_t b)
{
    return s->n > 0 && (m->nnull[b] > 0 || sla_direct_numerically_singular(s, m->rcond[b]));
}

/* Numeric factorization of every element (values gathered first unless create just did it for
 * the analysis, which uses them for SYM = 2's matching-based ordering). */
static sla_status factorize_all(sla_solver *s, int gathered)
{
    mumps_impl *m = s->impl;
    m->valid = 0;
    sla_mumps_first_drop(&m->first);   /* a stale solution never outlives its factors */
    if (m->empty) {
        /* the zero matrix: every pivot is null, the first at column 0; n = 0: none */
        for (int64_t b = 0; b < s->batch; b++) {
            m->nnull[b] = s->n;
            m->null_col[b] = s->n > 0 ? 0 : -1;
            m->rcond[b] = s->n > 0 ? 0.0 : 1.0;
        }
        s->rcond = s->n > 0 ? 0.0 : 1.0;
        m->valid = 1;
        return SLA_OK;
    }
    if (!gathered) gather_values(s, m);
    sla_batch_error err = SLA_BATCH_ERROR_INIT;
    for (int64_t b = 0; b < s->batch; b++) {
        DMUMPS_STRUC_C *id = &m->id[b];
        set_matrix(id, m, b);
        sla_status st = mumps_factor(id, &m->ws[b]);
        if (st < 0) { sla_batch_error_record(&err, b, st); continue; }
        m->nnull[b] = id->INFOG(28);
        m->null_col[b] = id->INFOG(28) > 0 && id->pivnul_list ? id->pivnul_list[0] - 1 : -1;
    }
    if (sla_batch_error_failed(&err)) {
        snprintf(m->why_invalid, sizeof m->why_invalid, "%s", err.msg);
        return sla_batch_error_raise(&err, "ldlt");
    }
    SLA_TRY(estimate_rcond(s, m));
    m->valid = 1;
    return SLA_OK;
}

static sla_status check_usable(const sla_solver *s, int need_regular)
{
    const mumps_impl *m = s->impl;
    if (!m->valid)
        return sla_error_set(SLA_EINVAL, "ldlt", "the solver holds no valid factorization: the "
                             "last refactor failed (%s)", m->why_invalid);
    for (int64_t b = 0; need_regular && b < s->batch; b++) {
        if (m->nnull[b] > 0)
            return sla_error_set(SLA_ESINGULAR, "ldlt", "A[%lld] is singular: null pivot at "
                                 "column %lld (%lld null pivots); its log-determinant is -inf",
                                 (long long)b, (long long)m->null_col[b], (long long)m->nnull[b]);
        if (mumps_singular(s, m, b))
            return sla_error_set(SLA_ESINGULAR, "ldlt", "A[%lld] is numerically singular: "
                                 "reciprocal condition estimate %.2g < %.2g (SLA_RCOND_SINGULAR); "
                                 "its log-determinant is -inf", (long long)b, m->rcond[b],
                                 SLA_RCOND_SINGULAR);
    }
    return SLA_OK;
}

static void describe(sla_solver *s, mumps_impl *m)
{
    if (m->empty) {
        snprintf(s->description, sizeof s->description, "ldlt (MUMPS %s sequential): %s, nothing "
                 "to factor%s", MUMPS_VERSION, s->n ? "no stored entries (the zero matrix)"
                 : "0 × 0", s->batch > 1 ? ", batched" : "");
        return;
    }
    const DMUMPS_STRUC_C *id = &m->id[0];
    double lnz = mumps_count(id->INFOG(29));
    char buf[32];
    if (lnz >= 1e6) snprintf(buf, sizeof buf, "%.3gM", lnz / 1e6);
    else if (lnz >= 1e3) snprintf(buf, sizeof buf, "%.3gk", lnz / 1e3);
    else snprintf(buf, sizeof buf, "%.0f", lnz);
    char rc[96] = "";
    if (m->valid)
        snprintf(rc, sizeof rc, ", rcond %.1e%s%s", s->rcond, s->batch > 1 ? " (min over the batch)"
                 : "", sla_direct_singular_note(s));
    snprintf(s->description, sizeof s->description,
             "ldlt (MUMPS %s sequential, SYM=2 LDLᵀ with 1×1/2×2 pivots, %s): nnz(L) %s, %d "
             "delayed pivots%s%s%s", MUMPS_VERSION,
             m->ordering == SLA_ORDERING_METIS ? "METIS" : m->ordering == SLA_ORDERING_NATURAL
             ? "natural" : "AMD", buf,
             (int)id->INFOG(13), s->dtype == SLA_FLOAT32 ? ", float32 via double" : "",
             s->batch > 1 ? ", batched" : "", rc);
}

/* ---------------------------------------------------------------------------------------- */
/* Backend entry points                                                                      */
/* ---------------------------------------------------------------------------------------- */

static void mumps_destroy(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) { sla_mumps_z_destroy(s); return; }
    mumps_impl *m = s->impl;
    if (!m) return;
    for (int64_t b = 0; m->id && m->live && b < s->batch; b++)
        if (m->live[b]) mumps_call(&m->id[b], -2);
    for (int64_t b = 0; m->ws && b < s->batch; b++) sla_mumps_workspace_free(&m->ws[b]);
    sla_free(m->ws);
    sla_free(m->id);
    sla_free(m->live);
    sla_free(m->irn);
    sla_free(m->jcn);
    sla_free(m->a);
    sla_free(m->perm);
    sla_free(m->nnull);
    sla_free(m->null_col);
    sla_free(m->rcond);
    sla_free(m->rcond_hint);
    sla_mumps_first_drop(&m->first);
    sla_symlower_free(&m->low);
    sla_free(m);
    s->impl = NULL;
}

static sla_status build_input(mumps_impl *m, const sla_pattern *p, int64_t batch)
{
    SLA_TRY(sla_symlower_build(p, &m->low));
    int64_t n = m->low.n, nz = m->low.nnz;
    if (n > INT32_MAX - 1)
        return SLA_FAIL(SLA_ESHAPE, "n = %lld is too large for MUMPS's 32-bit indices", (long long)n);
    m->irn = sla_malloc((size_t)nz, sizeof(MUMPS_INT), "MUMPS row indices");
    m->jcn = sla_malloc((size_t)nz, sizeof(MUMPS_INT), "MUMPS column indices");
    m->a = sla_malloc((size_t)batch * (size_t)nz, sizeof(double), "MUMPS values");
    m->perm = sla_malloc((size_t)n, sizeof(MUMPS_INT), "MUMPS ordering");
    if (!m->irn || !m->jcn || !m->a || !m->perm) return SLA_ENOMEM;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = m->low.rowptr[i]; k < m->low.rowptr[i + 1]; k++) {
            m->irn[k] = (MUMPS_INT)(i + 1);
            m->jcn[k] = (MUMPS_INT)(m->low.colind[k] + 1);
        }
    return SLA_OK;
}

static sla_status mumps_create(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_mumps_z_create(s);
    if (!s->pattern)
        return SLA_FAIL(SLA_EINVAL, "ldlt needs the matrix, not a matrix-free operator");
    mumps_impl *m = sla_calloc(1, sizeof *m, "MUMPS solver");
    if (!m) return SLA_ENOMEM;
    s->impl = m;
    int64_t nt = sla_threads();
    m->nthreads = (int)(nt < s->batch ? nt : s->batch);
    m->id = sla_calloc((size_t)s->batch, sizeof(DMUMPS_STRUC_C), "MUMPS instances");
    m->live = sla_calloc((size_t)s->batch, sizeof(int), "MUMPS instances");
    m->ws = sla_calloc((size_t)s->batch, sizeof *m->ws, "MUMPS work arrays");
    m->nnull = sla_calloc((size_t)s->batch, sizeof(int64_t), "null pivots");
    m->null_col = sla_calloc((size_t)s->batch, sizeof(int64_t), "null pivots");
    m->rcond = sla_calloc((size_t)s->batch, sizeof(double), "condition estimates");
    m->rcond_hint = sla_malloc((size_t)s->batch, sizeof(int64_t), "condition estimates");
    if (!m->id || !m->live || !m->ws || !m->nnull || !m->null_col || !m->rcond || !m->rcond_hint)
        return SLA_ENOMEM;
    for (int64_t b = 0; b < s->batch; b++) m->rcond_hint[b] = -1;
    SLA_TRY(build_input(m, s->pattern, s->batch));
    SLA_TRY(sla_symlower_check(&m->low, &s->A, "ldlt"));
    m->empty = m->low.nnz == 0;
    if (m->empty) m->ordering = s->opt.ordering == SLA_ORDERING_AUTO ? SLA_ORDERING_AMD : s->opt.ordering;
    for (int64_t b = 0; b < s->batch && !m->empty; b++) {
        SLA_TRY(instance_init(&m->id[b]));
        m->live[b] = 1;
    }
    if (!m->empty) {
        gather_values(s, m);
        SLA_TRY(analyze_all(s, m));
    }
    sla_status st = factorize_all(s, 1);
    describe(s, m);
    return st;
}

/* New values: checked for symmetry first (the old factorization stays valid if they are not). */
static sla_status mumps_refactor(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_mumps_z_refactor(s);
    mumps_impl *m = s->impl;
    SLA_TRY(sla_symlower_check(&m->low, &s->A, "ldlt"));
    sla_status st = factorize_all(s, 0);
    describe(s, m);
    return st;
}

/* op = N and T are the same solve: A is symmetric. info: for float64 nothing is written; in
 * particular residual_norm and relative_residual stay as the generic layer's info_init set them,
 * which is how solver.c tells that this backend computes no residual and measures the true one
 * itself; for float32 the residual of the rounded X is summed here in double. */
static sla_status mumps_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                              const sla_solve_params *params, sla_solve_info *info)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_mumps_z_solve(s, op, nrhs, B, X, params, info);
    SLA_TRY(check_usable(s, 1));
    mumps_impl *m = s->impl;
    if (m->empty) return SLA_OK;     /* n = 0 (the zero matrix n > 0 failed check_usable) */
    if (sla_mumps_first_take(s, &m->first, op, nrhs, B, X)) return SLA_OK;   /* once */
    int64_t n = s->n;
    size_t es = sla_dtype_size(s->dtype);
    double *rhs = sla_malloc((size_t)(n * nrhs), sizeof(double), "right-hand sides");
    if (!rhs) return SLA_ENOMEM;
    sla_batch_error err = SLA_BATCH_ERROR_INIT;
    for (int64_t b = 0; b < s->batch; b++) {
        size_t off = (size_t)(b * n * nrhs) * es;
        sla_dense_to_colmajor(s->dtype, n, nrhs, (const char *)B + off, rhs);
        sla_status st = dense_solve(m, b, nrhs, rhs, "solve");
        if (st < 0) sla_batch_error_record(&err, b, st);
        else sla_dense_from_colmajor(s->dtype, n, nrhs, rhs, n, (char *)X + off);
    }
    if (!sla_batch_error_failed(&err) && s->dtype != SLA_FLOAT64)
        sla_direct_residuals(s, op, nrhs, B, X, rhs, info);
    sla_free(rhs);
    if (sla_batch_error_failed(&err)) return sla_batch_error_raise(&err, "ldlt solve");
    return SLA_OK;
}

static sla_status mumps_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_mumps_z_logdet(s, sign, logabsdet);
    SLA_TRY(check_usable(s, 0));
    mumps_impl *m = s->impl;
    for (int64_t b = 0; b < s->batch; b++) {
        if (m->empty && s->n == 0) {           /* the determinant of the 0 × 0 matrix is 1 */
            sign[b] = 1;
            logabsdet[b] = 0;
            continue;
        }
        const DMUMPS_STRUC_C *id = &m->id[b];
        double mant = m->empty ? 0.0 : id->RINFOG(12);
        if (mumps_singular(s, m, b) || mant == 0) {
            sign[b] = 0;
            logabsdet[b] = -INFINITY;
        } else {
            sign[b] = mant > 0 ? 1 : -1;
            logabsdet[b] = log(fabs(mant)) + (double)id->INFOG(34) * 0.69314718055994530942;  /* ln 2 */
        }
    }
    return SLA_OK;
}

/* dvalues[b][q] = g[b]·(A_b⁻¹)[c_q, r_q]: MUMPS computes the requested entries of A⁻¹ column by
 * column (column r_q: rows c_q of CSR row r_q), i.e. IRHS_PTR / IRHS_SPARSE are the CSR arrays
 * of the pattern, 1-based. */
static sla_status mumps_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_mumps_z_logdet_grad(s, g, dvalues);
    SLA_TRY(check_usable(s, 1));
    mumps_impl *m = s->impl;
    if (m->empty) return SLA_OK;     /* n = 0: no entries to write */
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    if (nnz > INT32_MAX) return SLA_FAIL(SLA_ESHAPE, "nnz = %lld too large for MUMPS", (long long)nnz);
    const int64_t *rp = sla_pattern_rowptr(s->pattern);
    const int32_t *ci = sla_pattern_colind(s->pattern);
    size_t es = sla_dtype_size(s->dtype);
    MUMPS_INT *ip = sla_malloc((size_t)(n + 1), sizeof(MUMPS_INT), "IRHS_PTR");
    MUMPS_INT *is = sla_malloc((size_t)nnz, sizeof(MUMPS_INT), "IRHS_SPARSE");
    double *v = sla_malloc((size_t)nnz, sizeof(double), "RHS_SPARSE");
    if (!ip || !is || !v) {
        sla_free(ip); sla_free(is); sla_free(v);
        return SLA_ENOMEM;
    }
    sla_batch_error err = SLA_BATCH_ERROR_INIT;
    for (int64_t b = 0; b < s->batch; b++) {
        for (int64_t i = 0; i <= n; i++) ip[i] = (MUMPS_INT)(rp[i] + 1);
        for (int64_t q = 0; q < nnz; q++) is[q] = ci[q] + 1;
        DMUMPS_STRUC_C *id = &m->id[b];
        id->ICNTL(20) = 0;
        id->ICNTL(21) = 0;
        id->ICNTL(30) = 1;
        id->nrhs = (MUMPS_INT)n;
        id->lrhs = (MUMPS_INT)n;
        id->nz_rhs = (MUMPS_INT)nnz;
        id->irhs_ptr = ip;
        id->irhs_sparse = is;
        id->rhs_sparse = v;
        sla_status st = mumps_run(id, 3, "selected inverse");
        id->ICNTL(30) = 0;
        id->irhs_ptr = id->irhs_sparse = NULL;
        id->rhs_sparse = NULL;
        if (st < 0) { sla_batch_error_record(&err, b, st); continue; }
        /* the entries come back in the requested order (checked: IRHS_SPARSE unchanged) */
        for (int64_t q = 0; q < nnz && st == SLA_OK; q++)
            if (is[q] != ci[q] + 1) st = SLA_FAIL(SLA_EINTERNAL, "MUMPS reordered IRHS_SPARSE");
        if (st < 0) { sla_batch_error_record(&err, b, st); continue; }
        sla_direct_scatter_scaled(s->dtype, nnz, g[b], v, NULL, (char *)dvalues + (size_t)(b * nnz) * es);
    }
    sla_free(ip); sla_free(is); sla_free(v);
    if (sla_batch_error_failed(&err)) return sla_batch_error_raise(&err, "ldlt logdet_grad");
    return SLA_OK;
}

sla_status sla_mumps_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                  double *flops)
{
    SLA_TRY(sla_direct_check_square(A));
    mumps_impl m;
    memset(&m, 0, sizeof m);
    DMUMPS_STRUC_C id;
    sla_status st = build_input(&m, A->pattern, 0);
    int live = 0;
    if (st == SLA_OK && m.low.nnz == 0) {
        /* nothing to factor (MUMPS rejects it): no entries, no flops */
        if (nnz_L) *nnz_L = 0;
        if (flops) *flops = 0;
    } else if (st == SLA_OK) {
        st = instance_init(&id);
        live = st == SLA_OK;
    }
    if (st == SLA_OK && live) {
        set_matrix(&id, &m, 0);
        id.a = NULL;
        sla_ordering ord = ordering == SLA_ORDERING_AUTO ? SLA_ORDERING_AMD : ordering;
        st = set_ordering(&id, ord, &m.low, m.perm);
        if (st == SLA_OK) st = mumps_run(&id, 1, "analysis");
    }
    if (st == SLA_OK && live) {
        if (nnz_L) *nnz_L = mumps_count(id.INFOG(20));
        if (flops) *flops = id.RINFOG(1);
    }
    if (live) mumps_call(&id, -2);
    sla_free(m.irn); sla_free(m.jcn); sla_free(m.a); sla_free(m.perm);
    sla_symlower_free(&m.low);
    return st;
}

const sla_backend sla_backend_mumps = {
    .info = {.name = "mumps",
             .description = "MUMPS " MUMPS_VERSION " sequential: symmetric indefinite LDLᵀ "
                            "(SYM=2, 1×1/2×2 pivoting; complex symmetric by zmumps), determinant, "
                            "selected inverse",
             .methods = SLA_METHOD_BIT(SLA_METHOD_LDLT),
             .dtypes = SLA_BOTH_DTYPES | SLA_DTYPE_BIT(SLA_COMPLEX128) |
                       SLA_DTYPE_BIT(SLA_COMPLEX64),   /* complex: mumps_z.c (zmumps) */
             .priority = 100,
             .available = 1,
             .unavailable_reason = NULL},
    .create = mumps_create,
    .refactor = mumps_refactor,
    .solve = mumps_solve,
    .logdet = mumps_logdet,
    .logdet_grad = mumps_logdet_grad,
    .destroy = mumps_destroy,
};

#else /* !SLA_HAVE_MUMPS */

sla_status sla_mumps_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                  double *flops)
{
    (void)A; (void)ordering; (void)nnz_L; (void)flops;
    return SLA_FAIL(SLA_EUNSUPPORTED, "MUMPS was not found at configure time "
                    "(apt-get install libmumps-seq-dev)");
}

const sla_backend sla_backend_mumps = {
    .info = {.name = "mumps",
             .description = "MUMPS sequential: symmetric indefinite LDLᵀ (not in this build)",
             .methods = SLA_METHOD_BIT(SLA_METHOD_LDLT),
             .dtypes = SLA_BOTH_DTYPES,
             .priority = 100,
             .available = 0,
             .unavailable_reason = "MUMPS (libmumps-seq-dev: dmumps_c.h, libdmumps_seq) was not "
                                   "found at configure time"},
};

#endif
