/* Method "ldlt" for complex128 and complex64: MUMPS's complex LDLᵀ (zmumps, SYM = 2: the
 * factorization of a complex SYMMETRIC matrix, Aᵀ = A, without conjugation; 1×1 and 2×2
 * threshold pivots; Amestoy, Duff, L'Excellent & Koster, SIAM J. Matrix Anal. Appl. 23(1),
 * 2001). The hooks of sla_backend_mumps (mumps.c) hand complex solvers here. This is the
 * factorization of complex symmetric systems such as Helmholtz with an absorbing (complex)
 * shift; a Hermitian matrix is not complex symmetric and is refused (cholesky or lu take it).
 *
 * Input.   A must be complex symmetric: |a_ij − a_ji| ≤ 1000·ε·max(|a_ij|, |a_ji|) +
 *          ε·max|a| (the rule of sla_symlower_check, on moduli; ε of float64 for complex128,
 *          of float32 for complex64); MUMPS reads the lower triangle of A ∪ Aᵀ (1-based).
 * Output.  MUMPS never prints: ICNTL(1..3) = −1, ICNTL(4) = 0.
 * Batch.   One instance per batch element, each with its own analysis; every MUMPS call takes
 *          mumps.c's process-wide lock (MUMPS's Fortran module state is shared).
 * complex64 is widened to double complex (zmumps); X is rounded at the end.
 * Ordering AMD (ICNTL(7) = 0) for AMD and AUTO; NATURAL → identity PERM_IN; METIS →
 *          METIS_NodeND of A ∪ Aᵀ as PERM_IN (mumps.c's; Debian's sequential MUMPS has no METIS).
 * Solves   op N and T are the same solve (A = Aᵀ); op C (Aᴴ = conj(A)) solves
 *          A·conj(x) = conj(b).
 * Singular Null pivots (ICNTL(24) = 1) or the rule of every direct backend (condest.c:
 *          Higham's 1-norm estimate, complex form, below SLA_RCOND_SINGULAR unless
 *          options.allow_singular): solves and logdet_grad SLA_ESINGULAR, logdet {0, 0} / −inf.
 * logdet   det = (RINFOG(12) + i·RINFOG(13))·2^INFOG(34) (ICNTL(33) = 1): phase det/|det| and
 *          log|det|.
 * Gradient of log|det|: dvalues_s = g·conj((A⁻¹)_{c_s r_s}) (torch's convention, A⁻ᴴ on the
 *          pattern) from the entries of A⁻¹ on the pattern by MUMPS's selected inverse
 *          (ICNTL(30) = 1, Amestoy et al., SIAM J. Sci. Comput. 34(4), 2012). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "direct/direct.h"

#if SLA_HAVE_MUMPS
#include <zmumps_c.h>

#define ICNTL(I) icntl[(I) - 1]
#define INFOG(I) infog[(I) - 1]
#define RINFOG(I) rinfog[(I) - 1]
#define MUMPS_USE_COMM_WORLD (-987654)

typedef struct zmumps_impl {
    ZMUMPS_STRUC_C *id;       /* [batch] */
    sla_mumps_ws *ws;         /* [batch] their work arrays S (WK_USER) */
    int *live;                /* [batch] JOB = −1 done */
    sla_symlower low;
    MUMPS_INT *irn, *jcn;     /* [low.nnz] 1-based */
    double complex *a;        /* [batch][low.nnz] */
    MUMPS_INT *perm;          /* [n] identity, for NATURAL */
    int64_t *nnull, *null_col, *rcond_hint;
    double *rcond;
    int empty;                /* no stored entry: no MUMPS instance */
    int valid;
    sla_mumps_first first;    /* the right-hand side told at create or refactor, solved */
    char why_invalid[400];
} zmumps_impl;

static sla_status zmumps_error(const ZMUMPS_STRUC_C *id, const char *phase)
{
    return sla_mumps_error("zmumps_c", id->INFOG(1), id->INFOG(2), phase);
}

static void zcall(ZMUMPS_STRUC_C *id, int job)
{
    sla_mumps_lock();
    id->job = job;
    zmumps_c(id);
    sla_mumps_unlock();
}

/* job on one instance; too small work arrays are retried with a larger ICNTL(14) */
static sla_status zrun(ZMUMPS_STRUC_C *id, int job, const char *phase)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        zcall(id, job);
        if (id->INFOG(1) >= 0) return SLA_OK;
        if (!sla_mumps_retry_workspace(id->INFOG(1), &id->ICNTL(14))) break;
    }
    return zmumps_error(id, phase);
}

/* JOB = 2 on one instance, its work array S ours (WK_USER on huge pages, sized from the
 * analysis); too small work arrays are retried with a larger ICNTL(14), hence a larger S */
static sla_status zfactor(ZMUMPS_STRUC_C *id, sla_mumps_ws *ws)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        SLA_TRY(sla_mumps_workspace(ws, id->info[7], id->ICNTL(14), sizeof(double complex),
                                    &id->lwk_user));
        id->wk_user = ws->p;
        zcall(id, 2);
        sla_mumps_workspace_settle(ws);
        if (id->INFOG(1) >= 0) return SLA_OK;
        if (!sla_mumps_retry_workspace(id->INFOG(1), &id->ICNTL(14))) break;
    }
    return zmumps_error(id, "factorization");
}

static sla_status zinit(ZMUMPS_STRUC_C *id)
{
    memset(id, 0, sizeof *id);
    id->par = 1;
    id->sym = 2;
    id->comm_fortran = MUMPS_USE_COMM_WORLD;
    zcall(id, -1);
    if (id->INFOG(1) < 0) return zmumps_error(id, "initialization");
    id->ICNTL(1) = -1;
    id->ICNTL(2) = -1;
    id->ICNTL(3) = -1;
    id->ICNTL(4) = 0;
    id->ICNTL(24) = 1;   /* null pivot detection */
    id->ICNTL(33) = 1;   /* determinant */
    return SLA_OK;
}

static double complex zget(sla_dtype dt, const void *v, int64_t q)
{
    return dt == SLA_COMPLEX128 ? ((const double complex *)v)[q]
                                : (double complex)((const float complex *)v)[q];
}

/* Complex symmetry (Aᵀ = A, no conjugation) of every batch element, on the pairs of low.
 * A pair that fails but agrees with conj(mirror) makes the matrix Hermitian: said so. */
static sla_status check_symmetric(const zmumps_impl *m, const sla_solver *s)
{
    const sla_symlower *t = &m->low;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    double eps = s->dtype == SLA_COMPLEX128 ? DBL_EPSILON : FLT_EPSILON, rtol = 1000 * eps;
    for (int64_t b = 0; b < s->batch; b++) {
        const char *v = (const char *)s->A.values + (size_t)(b * nnz) * sla_dtype_size(s->dtype);
        double amax = 0;
        for (int64_t q = 0; q < nnz; q++) amax = fmax(amax, cabs(zget(s->dtype, v, q)));
        for (int64_t i = 0; i < t->n; i++)
            for (int64_t k = t->rowptr[i]; k < t->rowptr[i + 1]; k++) {
                int64_t j = t->colind[k];
                if (j == i) continue;
                double complex x = zget(s->dtype, v, t->src[k]);
                double complex y = t->mirror[k] >= 0 ? zget(s->dtype, v, t->mirror[k]) : 0;
                double tol = rtol * fmax(cabs(x), cabs(y)) + eps * amax;
                if (cabs(x - y) <= tol) continue;
                int herm = cabs(x - conj(y)) <= tol;
                return SLA_FAIL(SLA_EINVAL, "ldlt: A[%lld] is not complex symmetric (Aᵀ = A, no "
                                "conjugation): a(%lld, %lld) = %.17g%+.17gi but a(%lld, %lld) = "
                                "%.17g%+.17gi%s", (long long)b, (long long)i, (long long)j,
                                creal(x), cimag(x), (long long)j, (long long)i, creal(y),
                                cimag(y), herm ? "; the matrix looks Hermitian (A = Aᴴ): use "
                                "method cholesky (Hermitian positive definite) or lu"
                                : "; use method lu");
            }
    }
    return SLA_OK;
}

static void set_matrix(ZMUMPS_STRUC_C *id, zmumps_impl *m, int64_t b)
{
    id->n = (MUMPS_INT)m->low.n;
    id->nnz = (MUMPS_INT8)m->low.nnz;
    id->nz = m->low.nnz <= INT32_MAX ? (MUMPS_INT)m->low.nnz : 0;
    id->irn = m->irn;
    id->jcn = m->jcn;
    id->a = (ZMUMPS_COMPLEX *)(m->a + (size_t)b * (size_t)m->low.nnz);
}

static void gather_values(const sla_solver *s, zmumps_impl *m)
{
    int64_t nnz = sla_pattern_nnz(s->pattern);
    size_t es = sla_dtype_size(s->dtype);
    for (int64_t b = 0; b < s->batch; b++) {
        const char *v = (const char *)s->A.values + (size_t)(b * nnz) * es;
        double complex *out = m->a + (size_t)b * (size_t)m->low.nnz;
        for (int64_t k = 0; k < m->low.nnz; k++) out[k] = zget(s->dtype, v, m->low.src[k]);
    }
}

/* x = op(A_b)⁻¹ x in place for the k columns of the column-major n × k block x (MUMPS's dense
 * right-hand side layout, LRHS = n), in one JOB = 3 call: the factors are read once for all k
 * columns (the condition estimate's first call solves two). op C: Aᴴ = conj(A) for the
 * complex symmetric A, so conj(x) solves with A. */
static sla_status solve_block(sla_solver *s, zmumps_impl *m, int64_t b, sla_op op, int64_t k,
                              double complex *x)
{
    int64_t nk = s->n * k;
    if (op == SLA_OP_C)
        for (int64_t i = 0; i < nk; i++) x[i] = conj(x[i]);
    ZMUMPS_STRUC_C *id = &m->id[b];
    id->ICNTL(20) = 0;
    id->ICNTL(21) = 0;
    id->ICNTL(30) = 0;
    id->rhs = (ZMUMPS_COMPLEX *)x;
    id->nrhs = (MUMPS_INT)k;
    id->lrhs = (MUMPS_INT)s->n;
    sla_status st = zrun(id, 3, "solve");
    id->rhs = NULL;
    id->nrhs = 1;
    if (op == SLA_OP_C)
        for (int64_t i = 0; i < nk; i++) x[i] = conj(x[i]);
    return st;
}

/* sla_factor_solve_fn (condest.c) */
static sla_status inverse(void *ctx, int64_t b, sla_op op, int64_t k, double *y)
{
    sla_solver *s = ctx;
    return solve_block(s, s->impl, b, op, k, (double complex *)y);
}

/* Columns per JOB = 3 call of a multi-column solve: bounds our block and MUMPS's own RHSCOMP
 * at 64·n complex entries while reading the factors once per 64 columns. */
#define MUMPS_RHS_BLOCK 64

/* X = op(A)⁻¹ B ([batch][n][nrhs] of the complex dtype) for every batch element, up to
 * MUMPS_RHS_BLOCK columns per call: the solve phase costs about the same for 1 column as for
 * several (it is bound by reading the factors and by BLAS packing, docs/complex.md), so the
 * columns of one call are nearly free. */
static sla_status solve_all(sla_solver *s, zmumps_impl *m, sla_op op, int64_t nrhs,
                            const void *B, void *X)
{
    int64_t n = s->n, kb = nrhs < MUMPS_RHS_BLOCK ? nrhs : MUMPS_RHS_BLOCK;
    double complex *w = sla_malloc((size_t)kb, (size_t)n * sizeof *w, "MUMPS right-hand sides");
    if (!w) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < s->batch && st == SLA_OK; b++)
        for (int64_t j0 = 0; j0 < nrhs && st == SLA_OK; j0 += kb) {
            int64_t k = nrhs - j0 < kb ? nrhs - j0 : kb;
            sla_zblock_gather(s->dtype, B, b, n, nrhs, j0, k, w);
            st = solve_block(s, m, b, op, k, w);
            if (st == SLA_OK) sla_zblock_scatter(s->dtype, w, b, n, nrhs, j0, k, X);
        }
    sla_free(w);
    return st;
}

/* The estimate of element b, with the held right-hand side's k columns (mumps_first.c; w
 * [n × k], NULL when k = 0) solved in its first call; *kept = 0 when they were not. */
static sla_status rcond_with_first(sla_solver *s, zmumps_impl *m, int64_t b, double *work,
                                   int64_t k, double complex *w, int *kept)
{
    int64_t n = s->n;
    int solved = 0, c = m->first.conj;
    if (w) {
        sla_zblock_gather(s->dtype, m->first.b, b, n, k, 0, k, w);
        if (c) sla_conj(SLA_COMPLEX128, n * k, w, w);    /* Aᴴ = conj(A): solve conj(A)·x = b */
    }
    sla_status st = sla_direct_rcond_first(s, b, inverse, s, work, &m->rcond_hint[b],
                                           &m->rcond[b], k, (double *)w, &solved);
    if (w && solved && st == SLA_OK) {
        if (c) sla_conj(SLA_COMPLEX128, n * k, w, w);
        sla_zblock_scatter(s->dtype, w, b, n, k, 0, k, m->first.x);
    } else {
        *kept = 0;
    }
    return st;
}

static int singular(const sla_solver *s, const zmumps_impl *m, int64_t b)
{
    return s->n > 0 && (m->nnull[b] > 0 || sla_direct_numerically_singular(s, m->rcond[b]));
}

static void describe(sla_solver *s, zmumps_impl *m)
{
    double rmin = 1;
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) rmin = b ? fmin(rmin, m->rcond[b]) : m->rcond[b];
    s->rcond = rmin;
    char rc[120] = "";
    if (m->valid)
        snprintf(rc, sizeof rc, ", rcond %.1e%s%s", s->rcond, s->batch > 1 ? " (min over the "
                 "batch)" : "", sla_direct_singular_note(s));
    if (m->empty) {
        snprintf(s->description, sizeof s->description, "ldlt (MUMPS %s sequential complex): "
                 "%s, nothing to factor%s", MUMPS_VERSION, s->n ? "no stored entries (the zero "
                 "matrix)" : "0 × 0", rc);
        return;
    }
    const ZMUMPS_STRUC_C *id = &m->id[0];
    MUMPS_INT lnz = id->INFOG(29);
    snprintf(s->description, sizeof s->description,
             "ldlt (MUMPS %s sequential complex, SYM=2 complex symmetric LDLᵀ with 1×1/2×2 "
             "pivots, %s): nnz(L) %.0f, %d delayed pivots%s%s", MUMPS_VERSION,
             s->opt.ordering == SLA_ORDERING_NATURAL ? "natural"
             : s->opt.ordering == SLA_ORDERING_METIS ? "METIS" : "AMD",
             lnz < 0 ? -1e6 * (double)lnz : (double)lnz, (int)id->INFOG(13),
             s->dtype == SLA_COMPLEX64 ? ", complex64 via complex128" : "", rc);
}

static sla_status factorize_all(sla_solver *s, zmumps_impl *m)
{
    m->valid = 0;
    sla_mumps_first_drop(&m->first);   /* a stale solution never outlives its factors */
    if (m->empty) {
        for (int64_t b = 0; b < s->batch; b++) {
            m->nnull[b] = s->n;
            m->null_col[b] = s->n > 0 ? 0 : -1;
            m->rcond[b] = s->n > 0 ? 0.0 : 1.0;
        }
        m->valid = 1;
        describe(s, m);
        return SLA_OK;
    }
    gather_values(s, m);
    double *work = sla_malloc((size_t)s->n + 1, SLA_RCOND_WORK * sizeof(double),
                              "condition estimate");
    if (!work) return SLA_ENOMEM;
    double complex *w = NULL;
    int64_t k = sla_mumps_first_hold(s, &m->first, sizeof *w, (void **)&w);
    int kept = k > 0;
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < s->batch && st == SLA_OK; b++) {
        ZMUMPS_STRUC_C *id = &m->id[b];
        set_matrix(id, m, b);
        st = zfactor(id, &m->ws[b]);
        if (st != SLA_OK) break;
        m->nnull[b] = id->INFOG(28);
        m->null_col[b] = id->INFOG(28) > 0 && id->pivnul_list ? id->pivnul_list[0] - 1 : -1;
        m->rcond[b] = 0;
        if (m->nnull[b] == 0) st = rcond_with_first(s, m, b, work, k, w, &kept);
        else kept = 0;
    }
    sla_free(work);
    sla_free(w);
    for (int64_t b = 0; b < s->batch && kept; b++) kept = !singular(s, m, b);
    if (!kept || st != SLA_OK) sla_mumps_first_drop(&m->first);
    if (st != SLA_OK) {
        snprintf(m->why_invalid, sizeof m->why_invalid, "%s", sla_last_error());
        return st;
    }
    m->valid = 1;
    describe(s, m);
    return SLA_OK;
}

static sla_status check_usable(const sla_solver *s, const zmumps_impl *m, int need_regular)
{
    if (!m->valid)
        return SLA_FAIL(SLA_EINVAL, "ldlt: the solver holds no valid factorization: the last "
                        "refactor failed (%s)", m->why_invalid);
    for (int64_t b = 0; need_regular && b < s->batch && s->n > 0; b++) {
        if (m->nnull[b] > 0)
            return SLA_FAIL(SLA_ESINGULAR, "ldlt: A[%lld] is singular: null pivot at column %lld "
                            "(%lld null pivots)", (long long)b, (long long)m->null_col[b],
                            (long long)m->nnull[b]);
        if (singular(s, m, b))
            return SLA_FAIL(SLA_ESINGULAR, "ldlt: A[%lld] is numerically singular: reciprocal "
                            "condition estimate %.2g < %.2g (SLA_RCOND_SINGULAR; "
                            "options.allow_singular uses it anyway)", (long long)b, m->rcond[b],
                            SLA_RCOND_SINGULAR);
    }
    return SLA_OK;
}

sla_status sla_mumps_z_create(sla_solver *s)
{
    if (!s->pattern)
        return SLA_FAIL(SLA_EINVAL, "ldlt needs the matrix, not a matrix-free operator");
#if !SLA_HAVE_METIS
    if (s->opt.ordering == SLA_ORDERING_METIS)
        return SLA_FAIL(SLA_EUNSUPPORTED, "ordering metis needs METIS (libmetis-dev), not found "
                        "at configure time");
#endif
    zmumps_impl *m = sla_calloc(1, sizeof *m, "MUMPS complex solver");
    if (!m) return SLA_ENOMEM;
    s->impl = m;
    size_t nb = (size_t)s->batch;
    m->id = sla_calloc(nb, sizeof *m->id, "MUMPS instances");
    m->live = sla_calloc(nb, sizeof *m->live, "MUMPS instances");
    m->ws = sla_calloc(nb, sizeof *m->ws, "MUMPS work arrays");
    m->nnull = sla_calloc(nb, sizeof(int64_t), "null pivots");
    m->null_col = sla_calloc(nb, sizeof(int64_t), "null pivots");
    m->rcond_hint = sla_malloc(nb, sizeof(int64_t), "condition estimates");
    m->rcond = sla_calloc(nb, sizeof(double), "condition estimates");
    if (!m->id || !m->live || !m->ws || !m->nnull || !m->null_col || !m->rcond_hint || !m->rcond)
        return SLA_ENOMEM;
    for (int64_t b = 0; b < s->batch; b++) m->rcond_hint[b] = -1;
    SLA_TRY(sla_symlower_build(s->pattern, &m->low));
    int64_t n = m->low.n, nz = m->low.nnz;
    if (n > INT32_MAX - 1)
        return SLA_FAIL(SLA_ESHAPE, "ldlt: n = %lld is too large for MUMPS's 32-bit indices",
                        (long long)n);
    SLA_TRY(check_symmetric(m, s));
    m->empty = nz == 0;
    m->irn = sla_malloc((size_t)nz + 1, sizeof(MUMPS_INT), "MUMPS row indices");
    m->jcn = sla_malloc((size_t)nz + 1, sizeof(MUMPS_INT), "MUMPS column indices");
    m->a = sla_malloc(nb * (size_t)nz + 1, sizeof(double complex), "MUMPS values");
    m->perm = sla_malloc((size_t)n + 1, sizeof(MUMPS_INT), "MUMPS ordering");
    if (!m->irn || !m->jcn || !m->a || !m->perm) return SLA_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
        m->perm[i] = (MUMPS_INT)(i + 1);
        for (int64_t k = m->low.rowptr[i]; k < m->low.rowptr[i + 1]; k++) {
            m->irn[k] = (MUMPS_INT)(i + 1);
            m->jcn[k] = (MUMPS_INT)(m->low.colind[k] + 1);
        }
    }
#if SLA_HAVE_METIS
    if (!m->empty && s->opt.ordering == SLA_ORDERING_METIS)
        SLA_TRY(sla_mumps_metis_order(&m->low, m->perm));   /* once, shared by the batch */
#endif
    if (!m->empty) {
        gather_values(s, m);
        for (int64_t b = 0; b < s->batch; b++) {
            ZMUMPS_STRUC_C *id = &m->id[b];
            SLA_TRY(zinit(id));
            m->live[b] = 1;
            set_matrix(id, m, b);
            if (s->opt.ordering == SLA_ORDERING_NATURAL || s->opt.ordering == SLA_ORDERING_METIS) {
                id->ICNTL(7) = 1;
                id->perm_in = m->perm;
            } else {
                id->ICNTL(7) = 0;   /* AMD */
            }
            SLA_TRY(zrun(id, 1, "analysis"));
        }
    }
    return factorize_all(s, m);
}

/* new values (same pattern): symmetry checked first, then the numeric factorization only */
sla_status sla_mumps_z_refactor(sla_solver *s)
{
    zmumps_impl *m = s->impl;
    SLA_TRY(check_symmetric(m, s));
    return factorize_all(s, m);
}

sla_status sla_mumps_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             const sla_solve_params *p, sla_solve_info *info)
{
    (void)p;
    zmumps_impl *m = s->impl;
    SLA_TRY(check_usable(s, m, 1));
    info->rcond = s->rcond;
    if (s->n == 0) return SLA_OK;
    if (sla_mumps_first_take(s, &m->first, op, nrhs, B, X)) return SLA_OK;   /* once */
    return solve_all(s, m, op, nrhs, B, X);   /* residuals: generic layer */
}

sla_status sla_mumps_z_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    zmumps_impl *m = s->impl;
    SLA_TRY(check_usable(s, m, 0));
    for (int64_t b = 0; b < s->batch; b++) {
        sign[2 * b] = 1;
        sign[2 * b + 1] = 0;
        logabsdet[b] = 0;
        if (s->n == 0) continue;
        double mr = m->empty ? 0 : m->id[b].RINFOG(12), mi = m->empty ? 0 : m->id[b].RINFOG(13);
        double mag = hypot(mr, mi);
        if (mag == 0 || singular(s, m, b)) {
            sign[2 * b] = 0;
            logabsdet[b] = -INFINITY;
            continue;
        }
        sign[2 * b] = mr / mag;
        sign[2 * b + 1] = mi / mag;
        logabsdet[b] = log(mag) + (double)m->id[b].INFOG(34) * 0.69314718055994530942;  /* ln 2 */
    }
    return SLA_OK;
}

/* dvalues[b][q] = g[b]·conj((A_b⁻¹)[c_q, r_q]): MUMPS returns the requested entries of A⁻¹
 * column by column (column r_q, rows c_q: IRHS_PTR / IRHS_SPARSE are the 1-based CSR arrays). */
sla_status sla_mumps_z_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    zmumps_impl *m = s->impl;
    SLA_TRY(check_usable(s, m, 1));
    if (s->n == 0) return SLA_OK;
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    if (nnz > INT32_MAX) return SLA_FAIL(SLA_ESHAPE, "ldlt: nnz = %lld too large for MUMPS", (long long)nnz);
    const int64_t *rp = sla_pattern_rowptr(s->pattern);
    const int32_t *ci = sla_pattern_colind(s->pattern);
    MUMPS_INT *ip = sla_malloc((size_t)(n + 1), sizeof(MUMPS_INT), "IRHS_PTR");
    MUMPS_INT *is = sla_malloc((size_t)nnz + 1, sizeof(MUMPS_INT), "IRHS_SPARSE");
    double complex *v = sla_malloc((size_t)nnz + 1, sizeof(double complex), "RHS_SPARSE");
    sla_status st = ip && is && v ? SLA_OK : SLA_ENOMEM;
    for (int64_t b = 0; b < s->batch && st == SLA_OK; b++) {
        for (int64_t i = 0; i <= n; i++) ip[i] = (MUMPS_INT)(rp[i] + 1);
        for (int64_t q = 0; q < nnz; q++) is[q] = ci[q] + 1;
        ZMUMPS_STRUC_C *id = &m->id[b];
        id->ICNTL(20) = 0;
        id->ICNTL(21) = 0;
        id->ICNTL(30) = 1;
        id->nrhs = (MUMPS_INT)n;
        id->lrhs = (MUMPS_INT)n;
        id->nz_rhs = (MUMPS_INT)nnz;
        id->irhs_ptr = ip;
        id->irhs_sparse = is;
        id->rhs_sparse = (ZMUMPS_COMPLEX *)v;
        st = zrun(id, 3, "selected inverse");
        id->ICNTL(30) = 0;
        id->irhs_ptr = id->irhs_sparse = NULL;
        id->rhs_sparse = NULL;
        for (int64_t q = 0; q < nnz && st == SLA_OK; q++)
            if (is[q] != ci[q] + 1) st = SLA_FAIL(SLA_EINTERNAL, "MUMPS reordered IRHS_SPARSE");
        if (st != SLA_OK) break;
        for (int64_t q = 0; q < nnz; q++) {
            double complex z = g[b] * conj(v[q]);
            if (s->dtype == SLA_COMPLEX128) ((double complex *)dvalues)[b * nnz + q] = z;
            else ((float complex *)dvalues)[b * nnz + q] = (float complex)z;
        }
    }
    sla_free(ip);
    sla_free(is);
    sla_free(v);
    return st;
}

void sla_mumps_z_destroy(sla_solver *s)
{
    zmumps_impl *m = s->impl;
    if (!m) return;
    for (int64_t b = 0; m->id && m->live && b < s->batch; b++)
        if (m->live[b]) zcall(&m->id[b], -2);
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
    sla_free(m->rcond_hint);
    sla_free(m->rcond);
    sla_mumps_first_drop(&m->first);
    sla_symlower_free(&m->low);
    sla_free(m);
    s->impl = NULL;
}

#endif /* SLA_HAVE_MUMPS */
