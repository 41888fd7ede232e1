/* Method "cholesky" for complex128 and complex64: CHOLMOD's complex LLᴴ of a Hermitian positive
 * definite A (xtype CHOLMOD_COMPLEX: interleaved (re, im), the layout of sla's complex dtypes).
 * The hooks of sla_backend_cholmod (cholmod.c) hand complex solvers here.
 *
 * Orientation: the lower triangle of A in CSR (sla_symlower, entry (i, j), j ≤ i, with value
 * a_ij) is handed to CHOLMOD as a CSC matrix with stype = +1, whose upper triangle it reads:
 * column i, row j ≤ i holds a_ij, so CHOLMOD factors M = Aᵀ = conj(A) (A is Hermitian) as
 * M = L·Lᴴ. Then A x = b is M·conj(x) = conj(b), and op = T (Aᵀ = M) is a plain solve with M;
 * op = C is op = N (Aᴴ = A). complex64 is widened to double and X rounded at the end.
 * Hermitian: checked at create and refactor (|a_ij − conj(a_ji)| ≤ 1000·ε·max + ε·max|a|, the
 * tolerance of the real symmetric check), else SLA_EINVAL: the factorization reads one triangle
 * only, and a non-Hermitian A would be answered for its Hermitian part.
 * Singularity: a pivot that is not positive gives SLA_ENOTSPD at create/refactor naming the
 * column; rcond is the rule of every direct backend (condest.c: Higham's estimate of the
 * row-equilibrated 1-norm rcond, complex form), and below SLA_RCOND_SINGULAR solves are
 * refused (SLA_ESINGULAR) unless options.allow_singular.
 * log det A = 2·Σ log L_jj (real: A is Hermitian positive definite, phase 1). Its gradient is
 * A⁻ᴴ = A⁻¹ on the pattern, by the complex selected inverse of selinv_lu.h on the factor read
 * as an LU (grad_element). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cholmod.h>

#include "direct/direct.h"
#include "direct/selinv_lu.h"

typedef struct cholz_impl {
    cholmod_common cm;
    sla_symlower low;
    double complex *x;       /* [low.nnz] values of the lower triangle (batch element b) */
    cholmod_factor **L;      /* [batch] */
    double *rcond;           /* [batch] */
    int64_t *rcond_hint;     /* [batch] sla_direct_rcond's hints, −1 at first */
    int valid;
} cholz_impl;

static sla_status solve_block(sla_solver *s, cholz_impl *c, int64_t b, sla_op op, int64_t k,
                              double complex *rhs, double complex *x);

/* entry k of the lower triangle: a_ij, from its own slot or conj of the mirror's */
static void load_values(const sla_solver *s, cholz_impl *c, int64_t b)
{
    const int32_t *ci = sla_pattern_colind(s->pattern);
    int64_t nnz = sla_pattern_nnz(s->pattern);
    for (int64_t k = 0; k < c->low.nnz; k++) {
        int64_t q = c->low.src[k];
        double complex v = s->dtype == SLA_COMPLEX128
                               ? ((const double complex *)s->A.values)[b * nnz + q]
                               : ((const float complex *)s->A.values)[b * nnz + q];
        c->x[k] = ci[q] == c->low.colind[k] ? v : conj(v);
    }
}

static cholmod_sparse header(cholz_impl *c, int xtype)
{
    cholmod_sparse h;
    memset(&h, 0, sizeof h);
    h.nrow = h.ncol = (size_t)c->low.n;
    h.nzmax = (size_t)c->low.nnz;
    h.p = c->low.rowptr;
    h.i = c->low.colind;
    h.x = xtype == CHOLMOD_PATTERN ? NULL : (void *)c->x;
    h.stype = 1;
    h.itype = CHOLMOD_LONG;
    h.xtype = xtype;
    h.dtype = CHOLMOD_DOUBLE;
    h.sorted = 1;
    h.packed = 1;
    return h;
}

/* entry q of complex128 or complex64 values, as complex128 */
static double complex zentry(sla_dtype dt, const void *v, int64_t q)
{
    if (dt == SLA_COMPLEX128) return ((const double complex *)v)[q];
    return ((const float complex *)v)[q];
}

static sla_status check_hermitian(const sla_solver *s)
{
    double *amax = sla_malloc((size_t)s->batch, sizeof *amax, "norms");
    if (!amax) return SLA_ENOMEM;
    sla_status st = sla_matrix_norm(&s->A, 'M', amax);
    double m = 0;
    for (int64_t b = 0; b < s->batch && st == SLA_OK; b++) m = fmax(m, amax[b]);
    sla_free(amax);
    SLA_TRY(st);
    double eps = s->dtype == SLA_COMPLEX128 ? DBL_EPSILON : FLT_EPSILON;
    int herm = 0;
    int64_t w[3];
    SLA_TRY(sla_matrix_symmetry_defect(&s->A, 1000 * eps, eps * m, 1, &herm, w));
    if (herm) return SLA_OK;
    /* name the entry and its mirror (a missing mirror is 0) */
    int64_t nnz = sla_pattern_nnz(s->A.pattern), q = w[0] * nnz;
    int64_t sij = sla_pattern_find(s->A.pattern, w[1], w[2]), sji = sla_pattern_find(s->A.pattern, w[2], w[1]);
    double complex a = sij >= 0 ? zentry(s->dtype, s->A.values, q + sij) : 0;
    double complex at = sji >= 0 ? zentry(s->dtype, s->A.values, q + sji) : 0;
    return SLA_FAIL(SLA_EINVAL, "A (%s) is not Hermitian: batch %lld, A[%lld][%lld] = %.17g%+.17gi "
                    "but conj(A[%lld][%lld]) = %.17g%+.17gi; method cholesky needs a Hermitian "
                    "positive definite matrix (use method lu)", sla_dtype_name(s->dtype),
                    (long long)w[0], (long long)w[1], (long long)w[2], creal(a), cimag(a),
                    (long long)w[2], (long long)w[1], creal(conj(at)), cimag(conj(at)));
}

/* sla_factor_solve_fn of the condition estimate: the k columns of y in place */
static sla_status inverse(void *ctx, int64_t b, sla_op op, int64_t k, double *y)
{
    sla_solver *s = ctx;
    double complex *z = (double complex *)y;
    return solve_block(s, s->impl, b, op, k, z, z);
}

/* factorization of batch element b, then the singularity rule of condest.c; work
 * [SLA_RCOND_WORK·n] */
static sla_status factor_one(sla_solver *s, cholz_impl *c, int64_t b, double *work)
{
    load_values(s, c, b);
    cholmod_sparse h = header(c, CHOLMOD_COMPLEX);
    if (!cholmod_l_factorize(&h, c->L[b], &c->cm) || c->cm.status < CHOLMOD_OK)
        return SLA_FAIL(c->cm.status == CHOLMOD_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND,
                        "cholmod_l_factorize (complex) of batch element %lld failed "
                        "(status %d)", (long long)b, c->cm.status);
    if (c->cm.status == CHOLMOD_NOT_POSDEF || (int64_t)c->L[b]->minor < s->n) {
        const int64_t *perm = c->L[b]->Perm;
        int64_t k = (int64_t)c->L[b]->minor;
        return SLA_FAIL(SLA_ENOTSPD, "not positive definite: the Cholesky pivot of column "
                        "%lld (elimination step %lld of %lld) of batch element %lld is not "
                        "positive; for Hermitian indefinite or general complex matrices "
                        "use method lu", (long long)(perm ? perm[k] : k), (long long)k,
                        (long long)s->n, (long long)b);
    }
    sla_status st = sla_direct_rcond(s, b, inverse, s, work, &c->rcond_hint[b], &c->rcond[b]);
    if (st != SLA_OK)
        return SLA_FAIL(st, "the condition estimate of batch element %lld failed", (long long)b);
    return SLA_OK;
}

static sla_status factor_all(sla_solver *s, cholz_impl *c)
{
    c->valid = 0;
    SLA_TRY(check_hermitian(s));
    double *work = sla_malloc((size_t)s->n + 1, SLA_RCOND_WORK * sizeof(double),
                              "condition estimate");
    if (!work) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < s->batch && s->n > 0 && st == SLA_OK; b++) st = factor_one(s, c, b, work);
    sla_free(work);
    SLA_TRY(st);
    double rmin = 1;
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) rmin = fmin(rmin, c->rcond[b]);
    s->rcond = rmin;
    const cholmod_factor *L = s->n > 0 ? c->L[0] : NULL;
    snprintf(s->description, sizeof s->description,
             "cholesky (CHOLMOD %d.%d.%d complex LLᴴ, %s): nnz(L) %.0f, rcond %.1e%s%s",
             CHOLMOD_MAIN_VERSION, CHOLMOD_SUB_VERSION, CHOLMOD_SUBSUB_VERSION,
             L && L->is_super ? "supernodal" : "simplicial",
             L ? c->cm.lnz : 0.0, rmin, s->batch > 1 ? " (min over the batch)" : "",
             sla_direct_singular_note(s));
    c->valid = 1;
    return SLA_OK;
}

sla_status sla_cholmod_z_create(sla_solver *s)
{
    cholz_impl *c = sla_calloc(1, sizeof *c, "CHOLMOD complex solver");
    if (!c) return SLA_ENOMEM;
    s->impl = c;
    cholmod_l_start(&c->cm);
    c->cm.print = 0;
    c->cm.error_handler = NULL;
    c->cm.supernodal = CHOLMOD_AUTO;
    c->cm.final_ll = 1;
    if (s->opt.ordering == SLA_ORDERING_NATURAL) {
        c->cm.nmethods = 1;
        c->cm.method[0].ordering = CHOLMOD_NATURAL;
        c->cm.postorder = 0;
    } else if (s->opt.ordering == SLA_ORDERING_AMD || s->opt.ordering == SLA_ORDERING_METIS) {
        c->cm.nmethods = 1;
        c->cm.method[0].ordering = s->opt.ordering == SLA_ORDERING_AMD ? CHOLMOD_AMD
                                                                        : CHOLMOD_METIS;
    }
    SLA_TRY(sla_symlower_build(s->pattern, &c->low));
    c->x = sla_malloc((size_t)c->low.nnz, sizeof *c->x, "lower triangle values");
    c->L = sla_calloc((size_t)s->batch, sizeof *c->L, "factors");
    c->rcond = sla_malloc((size_t)s->batch, sizeof *c->rcond, "rcond");
    c->rcond_hint = sla_malloc((size_t)s->batch, sizeof *c->rcond_hint, "rcond");
    if (!c->x || !c->L || !c->rcond || !c->rcond_hint) return SLA_ENOMEM;
    for (int64_t b = 0; b < s->batch; b++) c->rcond_hint[b] = -1;
    if (s->n > 0) {
        cholmod_sparse h = header(c, CHOLMOD_PATTERN);
        c->L[0] = cholmod_l_analyze(&h, &c->cm);
        if (!c->L[0])
            return SLA_FAIL(c->cm.status == CHOLMOD_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND,
                            "cholmod_l_analyze failed (status %d)", c->cm.status);
        for (int64_t b = 1; b < s->batch; b++)
            if (!(c->L[b] = cholmod_l_copy_factor(c->L[0], &c->cm))) return SLA_ENOMEM;
    }
    return factor_all(s, c);
}

sla_status sla_cholmod_z_refactor(sla_solver *s)
{
    return factor_all(s, s->impl);
}

static sla_status check_factors(const sla_solver *s, const cholz_impl *c)
{
    if (!c->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    for (int64_t b = 0; b < s->batch; b++)
        if (sla_direct_numerically_singular(s, c->rcond[b]))
            return SLA_FAIL(SLA_ESINGULAR, "batch element %lld is numerically singular (rcond "
                            "%.1e < %.1e; options.allow_singular uses it anyway)", (long long)b,
                            c->rcond[b], SLA_RCOND_SINGULAR);
    return SLA_OK;
}

/* x = op(A_b)⁻¹ rhs for the k columns of the column-major n × k blocks rhs and x (double
 * complex; rhs is overwritten, x may be rhs), in one cholmod_l_solve: the factor is read once
 * for all k (the condition estimate's first call solves two). M = conj(A) is factored:
 * op N or C: M·conj(x) = conj(rhs); op T: M·x = rhs */
static sla_status solve_block(sla_solver *s, cholz_impl *c, int64_t b, sla_op op, int64_t k,
                              double complex *rhs, double complex *x)
{
    int64_t nk = s->n * k;
    int cj = op != SLA_OP_T;
    if (cj)
        for (int64_t i = 0; i < nk; i++) rhs[i] = conj(rhs[i]);
    cholmod_dense B;
    memset(&B, 0, sizeof B);
    B.nrow = B.d = (size_t)s->n;
    B.ncol = (size_t)k;
    B.nzmax = (size_t)nk;
    B.x = rhs;
    B.xtype = CHOLMOD_COMPLEX;
    B.dtype = CHOLMOD_DOUBLE;
    cholmod_dense *X = cholmod_l_solve(CHOLMOD_A, c->L[b], &B, &c->cm);
    if (!X)
        return SLA_FAIL(c->cm.status == CHOLMOD_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND,
                        "cholmod_l_solve (complex) of batch element %lld failed (status %d)",
                        (long long)b, c->cm.status);
    const double complex *xv = X->x;
    for (int64_t i = 0; i < nk; i++) x[i] = cj ? conj(xv[i]) : xv[i];
    cholmod_l_free_dense(&X, &c->cm);
    return SLA_OK;
}

/* sla_zcolumn_fn: one column */
static sla_status solve_column(sla_solver *s, void *ctx, int64_t b, sla_op op,
                               double complex *rhs, double complex *x)
{
    return solve_block(s, ctx, b, op, 1, rhs, x);
}

sla_status sla_cholmod_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                               const sla_solve_params *p, sla_solve_info *info)
{
    cholz_impl *c = s->impl;
    SLA_TRY(check_factors(s, c));
    info->rcond = s->rcond;
    return sla_zdirect_solve(s, op, nrhs, B, X, solve_column, c);   /* residuals: generic layer */
}

/* Σ log L_jj of a complex LLᴴ factor (the diagonal is real and positive) */
static double sum_log_diagonal(const cholmod_factor *L)
{
    double sum = 0;
    const double *x = L->x;       /* interleaved pairs */
    if (L->is_super) {
        const int64_t *super = L->super, *pi = L->pi, *px = L->px;
        for (int64_t k = 0; k < (int64_t)L->nsuper; k++) {
            int64_t nc = super[k + 1] - super[k], nsrow = pi[k + 1] - pi[k];
            for (int64_t j = 0; j < nc; j++) sum += log(x[2 * (px[k] + j + j * nsrow)]);
        }
    } else {
        const int64_t *lp = L->p;
        for (int64_t j = 0; j < (int64_t)L->n; j++) sum += log(x[2 * lp[j]]);
    }
    return sum;
}

sla_status sla_cholmod_z_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    cholz_impl *c = s->impl;
    if (!c->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    for (int64_t b = 0; b < s->batch; b++) {
        int singular = s->n > 0 && sla_direct_numerically_singular(s, c->rcond[b]);
        sign[2 * b] = singular ? 0 : 1;
        sign[2 * b + 1] = 0;
        logabsdet[b] = s->n == 0 ? 0 : singular ? -INFINITY : 2 * sum_log_diagonal(c->L[b]);
    }
    return SLA_OK;
}

/* dvalues_b = g_b·conj(A_b⁻ᵀ) = g_b·A_b⁻¹ (Hermitian) on the pattern by the complex selected
 * inverse of selinv_lu.h, with the LLᴴ factor read as an LU: P M Pᵀ = L Lᴴ = L̃·D·Û with
 * L̃ = L·diag(1/l_jj) (unit lower), d_j = l_jj², Û = L̃ᴴ, i.e. U[j][k] = l_jj·conj(L[k][j])
 * (k > j), and M = Aᵀ, so that P = Q = Perm and no row scale. The factor is copied and
 * converted to a packed simplicial LLᴴ (cholmod_l_change_factor) for its columns; U is the
 * transpose of L's strict lower part by a counting pass. Cost and memory of the LU selected
 * inverse (no supernodal blocks). */
static sla_status grad_element(sla_solver *s, cholz_impl *c, int64_t b, double g, void *out)
{
    int64_t n = s->n;
    cholmod_factor *F = cholmod_l_copy_factor(c->L[b], &c->cm);
    if (!F || !cholmod_l_change_factor(CHOLMOD_COMPLEX, 1, 0, 1, 1, F, &c->cm)) {
        if (F) cholmod_l_free_factor(&F, &c->cm);
        return SLA_FAIL(c->cm.status == CHOLMOD_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND,
                        "copying the complex factor of batch element %lld failed (status %d)",
                        (long long)b, c->cm.status);
    }
    const int64_t *lp = F->p, *li = F->i, *perm = F->Perm;
    const double complex *lx = F->x;
    int64_t lnz = lp[n];
    int64_t *Up = sla_malloc((size_t)(n + 1), sizeof *Up, "factors");
    int64_t *Ui = sla_malloc((size_t)lnz, sizeof *Ui, "factors");
    int64_t *P = sla_malloc((size_t)n, sizeof *P, "factors");
    double complex *Lx = sla_malloc((size_t)lnz, sizeof *Lx, "factors");
    double complex *Ux = sla_malloc((size_t)lnz, sizeof *Ux, "factors");
    double complex *D = sla_malloc((size_t)n, sizeof *D, "factors");
    sla_status st = SLA_OK;
    if (!Up || !Ui || !P || !Lx || !Ux || !D) { st = SLA_ENOMEM; goto done; }
    memset(Up, 0, (size_t)(n + 1) * sizeof *Up);
    for (int64_t j = 0; j < n; j++) {
        double ljj = creal(lx[lp[j]]);                    /* the diagonal comes first */
        D[j] = ljj * ljj;
        P[j] = perm ? perm[j] : j;
        for (int64_t q = lp[j]; q < lp[j + 1]; q++) {
            Lx[q] = lx[q] / ljj;
            if (li[q] > j) Up[li[q] + 1]++;
        }
    }
    for (int64_t k = 0; k < n; k++) Up[k + 1] += Up[k];
    for (int64_t j = 0; j < n; j++)          /* columns in order: rows of U sorted ascending */
        for (int64_t q = lp[j]; q < lp[j + 1]; q++)
            if (li[q] > j) {
                int64_t t = Up[li[q]]++;
                Ui[t] = j;
                Ux[t] = creal(lx[lp[j]]) * conj(lx[q]);
            }
    for (int64_t k = n; k > 0; k--) Up[k] = Up[k - 1];
    Up[0] = 0;
    sla_lu_factors f = {.n = n, .cplx = 1, .Lp = lp, .Li = li, .Lx = Lx, .Up = Up, .Ui = Ui,
                        .Ux = Ux, .d = D, .P = P, .Q = P, .s = NULL, .nblocks = 1};
    st = sla_lu_selinv_transpose(&f, s->pattern, g, s->dtype, out);
    if (st != SLA_OK)
        st = SLA_FAIL(st, "selected inverse of batch element %lld (CHOLMOD complex factor) "
                      "failed%s", (long long)b, st == SLA_ENOMEM ? ": out of memory" : "");
done:
    cholmod_l_free_factor(&F, &c->cm);
    sla_free(Up);
    sla_free(Ui);
    sla_free(P);
    sla_free(Lx);
    sla_free(Ux);
    sla_free(D);
    return st;
}

sla_status sla_cholmod_z_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    cholz_impl *c = s->impl;
    SLA_TRY(check_factors(s, c));
    int64_t nnz = sla_pattern_nnz(s->pattern);
    size_t esz = sla_dtype_size(s->dtype);
    for (int64_t b = 0; b < s->batch && s->n > 0; b++)
        SLA_TRY(grad_element(s, c, b, g[b], (char *)dvalues + (size_t)(b * nnz) * esz));
    return SLA_OK;
}

void sla_cholmod_z_destroy(sla_solver *s)
{
    cholz_impl *c = s->impl;
    if (!c) return;
    for (int64_t b = 0; c->L && b < s->batch; b++)
        if (c->L[b]) cholmod_l_free_factor(&c->L[b], &c->cm);
    cholmod_l_finish(&c->cm);
    sla_symlower_free(&c->low);
    sla_free(c->x);
    sla_free(c->L);
    sla_free(c->rcond);
    sla_free(c->rcond_hint);
    sla_free(c);
    s->impl = NULL;
}
