/* Method "lu" for complex128 and complex64: UMFPACK's complex int64 interface (umfpack_zl_*,
 * "packed complex" arrays: Az = NULL and Ax holds (re, im) pairs, the layout of sla's complex
 * dtypes). The hooks of sla_backend_umfpack (umfpack.c) hand complex solvers here.
 *
 * Orientation as in umfpack.c: the CSR arrays of A are the CSC arrays of B = Aᵀ, which UMFPACK
 * factors. Then A x = b is Bᵀx = b (UMFPACK_Aat, the array transpose), Aᵀx = b is B x = b
 * (UMFPACK_A), and Aᴴx = b is conj(B) x = b, solved as B·conj(x) = conj(b) (UMFPACK_A on the
 * conjugated right-hand side: UMFPACK_At would be Bᴴ = conj(A)). det B = det A.
 * Values are kept as a double complex copy per batch element (complex64 is widened: the
 * factorization and the solves run in double precision, X is rounded at the end); UMFPACK's
 * iterative refinement (Control[UMFPACK_IRSTEP] = 2) reads them.
 * Singularity: UMFPACK_WARNING_singular_matrix (an exactly zero pivot) refuses solves with
 * SLA_ESINGULAR; so does the rule of every direct backend (condest.c: Higham's 1-norm estimate
 * of the row-equilibrated rcond, in its complex form, below SLA_RCOND_SINGULAR) unless
 * options.allow_singular.
 * Log-determinant gradient: dvalues_s = g·conj((A⁻¹)_{c_s r_s}) (torch's gradient of log|det A|
 * is A⁻ᴴ) by the complex selected inverse of the factors (selinv_lu.h): the cost of the
 * factorization, no solves. */
#include "core/cmplx.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <umfpack.h>

#include "direct/direct.h"
#include "direct/selinv_lu.h"

typedef struct umfz_elem {
    void *numeric;
    int64_t status;        /* of the last umfpack_zl_numeric */
    double rcond;          /* sla_direct_rcond (0 when exactly singular) */
    int64_t rcond_hint;    /* sla_direct_rcond's hint, −1 at first */
    double lnz, unz;
    double complex *ax;    /* [nnz] values of A (= of B = Aᵀ in CSC) */
} umfz_elem;

typedef struct umfz_impl {
    void *symbolic;
    int64_t *ai;           /* [nnz] column indices as int64 (row indices of B) */
    double control[UMFPACK_CONTROL];
    double control_norefine[UMFPACK_CONTROL];   /* for the condition estimate's solves */
    int valid;
    umfz_elem *e;          /* [batch] */
} umfz_impl;

/* values of batch element b of s->A as double complex */
static void load_values(const sla_solver *s, int64_t b, double complex *ax)
{
    int64_t nnz = sla_pattern_nnz(s->pattern);
    if (s->dtype == SLA_COMPLEX128) {
        memcpy(ax, (const double complex *)s->A.values + b * nnz, (size_t)nnz * sizeof *ax);
    } else {
        const float complex *v = (const float complex *)s->A.values + b * nnz;
        for (int64_t k = 0; k < nnz; k++) ax[k] = v[k];
    }
}

static int singular(const sla_solver *s, const umfz_elem *e)
{
    if (e->status == UMFPACK_WARNING_singular_matrix) return 1;
    return sla_direct_numerically_singular(s, e->rcond);
}

static void describe(sla_solver *s, const umfz_impl *u)
{
    double rmin = INFINITY;
    int64_t bad = -1;
    for (int64_t b = 0; b < s->batch; b++) {
        rmin = fmin(rmin, u->e[b].rcond);
        if (bad < 0 && singular(s, &u->e[b])) bad = b;
    }
    s->rcond = s->n > 0 ? rmin : 1;
    char sing[96] = "";
    if (bad >= 0)
        snprintf(sing, sizeof sing, ", singular (batch element %lld)", (long long)bad);
    snprintf(s->description, sizeof s->description,
             "lu (UMFPACK %d.%d.%d complex): nnz(L+U) %.0f, rcond %.1e%s%s",
             UMFPACK_MAIN_VERSION, UMFPACK_SUB_VERSION, UMFPACK_SUBSUB_VERSION,
             s->n > 0 ? u->e[0].lnz + u->e[0].unz - (double)s->n : 0.0, s->rcond,
             s->batch > 1 ? " (min over the batch)" : "", sing);
}

/* sla_zcolumn_fn: x = op(A_b)⁻¹ rhs (rhs is conjugated in place for op = C) */
static sla_status solve_with(sla_solver *s, const umfz_impl *u, const double *control, int64_t b,
                             sla_op op, double complex *rhs, double complex *x)
{
    double info[UMFPACK_INFO];
    if (op == SLA_OP_C)
        for (int64_t i = 0; i < s->n; i++) rhs[i] = conj(rhs[i]);
    int sys = op == SLA_OP_N ? UMFPACK_Aat : UMFPACK_A;
    int64_t st = umfpack_zl_solve(sys, sla_pattern_rowptr(s->pattern), u->ai,
                                  (const double *)u->e[b].ax, NULL, (double *)x, NULL,
                                  (const double *)rhs, NULL, u->e[b].numeric, control, info);
    if (st < 0)
        return SLA_FAIL(st == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND,
                        "umfpack_zl_solve of batch element %lld failed (status %lld)",
                        (long long)b, (long long)st);
    if (op == SLA_OP_C)
        for (int64_t i = 0; i < s->n; i++) x[i] = conj(x[i]);
    return SLA_OK;
}

static sla_status solve_column(sla_solver *s, void *ctx, int64_t b, sla_op op,
                               double complex *rhs, double complex *x)
{
    const umfz_impl *u = ctx;
    return solve_with(s, u, u->control, b, op, rhs, x);
}

/* one column without iterative refinement, for the condition estimate */
static sla_status solve_column_norefine(sla_solver *s, void *ctx, int64_t b, sla_op op,
                                        double complex *rhs, double complex *x)
{
    const umfz_impl *u = ctx;
    return solve_with(s, u, u->control_norefine, b, op, rhs, x);
}

/* sla_factor_solve_fn of the condition estimate: k columns of y in place, no refinement */
static sla_status inverse(void *ctx, int64_t b, sla_op op, int64_t k, double *y)
{
    sla_solver *s = ctx;
    return sla_zdirect_inverse_columns(s, b, op, k, y, solve_column_norefine, s->impl);
}

static sla_status factor_all(sla_solver *s, umfz_impl *u)
{
    u->valid = 0;
    const int64_t *ap = sla_pattern_rowptr(s->pattern);
    double *work = sla_malloc((size_t)s->n + 1, SLA_RCOND_WORK * sizeof(double),
                              "condition estimate");
    if (!work) return SLA_ENOMEM;
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) {
        umfz_elem *e = &u->e[b];
        double info[UMFPACK_INFO];
        load_values(s, b, e->ax);
        if (e->numeric) umfpack_zl_free_numeric(&e->numeric);
        e->status = umfpack_zl_numeric(ap, u->ai, (const double *)e->ax, NULL, u->symbolic,
                                       &e->numeric, u->control, info);
        if (e->status < 0) {
            sla_free(work);
            return SLA_FAIL(e->status == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND,
                            "umfpack_zl_numeric of batch element %lld failed (status %lld)",
                            (long long)b, (long long)e->status);
        }
        e->lnz = info[UMFPACK_LNZ];
        e->unz = info[UMFPACK_UNZ];
        e->rcond = 0;
        if (e->status != UMFPACK_WARNING_singular_matrix) {
            sla_status st = sla_direct_rcond(s, b, inverse, s, work, &e->rcond_hint, &e->rcond);
            if (st != SLA_OK) { sla_free(work); return st; }
        }
    }
    sla_free(work);
    u->valid = 1;
    describe(s, u);
    return SLA_OK;
}

sla_status sla_umfpack_z_create(sla_solver *s)
{
    umfz_impl *u = sla_calloc(1, sizeof *u, "UMFPACK complex solver");
    if (!u) return SLA_ENOMEM;
    s->impl = u;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    u->e = sla_calloc((size_t)s->batch, sizeof *u->e, "UMFPACK factors");
    u->ai = sla_malloc((size_t)nnz, sizeof *u->ai, "column indices");
    if (!u->e || !u->ai) return SLA_ENOMEM;
    for (int64_t b = 0; b < s->batch; b++)
        if (!(u->e[b].ax = sla_malloc((size_t)nnz, sizeof(double complex), "values")))
            return SLA_ENOMEM;
    const int32_t *ci = sla_pattern_colind(s->pattern);
    for (int64_t k = 0; k < nnz; k++) u->ai[k] = ci[k];
    umfpack_zl_defaults(u->control);
    for (int64_t b = 0; b < s->batch; b++) u->e[b].rcond_hint = -1;
    switch (s->opt.ordering) {
    case SLA_ORDERING_NATURAL: u->control[UMFPACK_ORDERING] = UMFPACK_ORDERING_NONE; break;
    case SLA_ORDERING_AMD: u->control[UMFPACK_ORDERING] = UMFPACK_ORDERING_AMD; break;
    case SLA_ORDERING_METIS: u->control[UMFPACK_ORDERING] = UMFPACK_ORDERING_METIS; break;
    default: break;
    }
    memcpy(u->control_norefine, u->control, sizeof u->control);
    u->control_norefine[UMFPACK_IRSTEP] = 0;
    if (s->n > 0) {
        double info[UMFPACK_INFO];
        load_values(s, 0, u->e[0].ax);
        int64_t st = umfpack_zl_symbolic(s->n, s->n, sla_pattern_rowptr(s->pattern), u->ai,
                                         (const double *)u->e[0].ax, NULL, &u->symbolic,
                                         u->control, info);
        if (st < 0)
            return SLA_FAIL(st == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND,
                            "umfpack_zl_symbolic failed with status %lld", (long long)st);
    }
    return factor_all(s, u);
}

sla_status sla_umfpack_z_refactor(sla_solver *s)
{
    return factor_all(s, s->impl);
}

/* SLA_OK if every element's factors may be solved with, else the error naming the first bad */
static sla_status check_factors(const sla_solver *s, const umfz_impl *u)
{
    if (!u->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) {
        const umfz_elem *e = &u->e[b];
        if (e->status == UMFPACK_WARNING_singular_matrix)
            return SLA_FAIL(SLA_ESINGULAR, "batch element %lld is singular (a zero pivot in "
                            "UMFPACK's complex LU)", (long long)b);
        if (singular(s, e))
            return SLA_FAIL(SLA_ESINGULAR, "batch element %lld is numerically singular (rcond "
                            "%.1e < %.1e; options.allow_singular uses it anyway)",
                            (long long)b, e->rcond, SLA_RCOND_SINGULAR);
    }
    return SLA_OK;
}

sla_status sla_umfpack_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                               const sla_solve_params *p, sla_solve_info *info)
{
    umfz_impl *u = s->impl;
    SLA_TRY(check_factors(s, u));
    info->rcond = s->rcond;
    return sla_zdirect_solve(s, op, nrhs, B, X, solve_column, u);   /* residuals: generic layer */
}

/* phase det/|det| ({re, im} per element) and log|det A| from det = (Mx + i·Mz)·10^Ex */
sla_status sla_umfpack_z_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    umfz_impl *u = s->impl;
    if (!u->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    for (int64_t b = 0; b < s->batch; b++) {
        sign[2 * b] = 1;
        sign[2 * b + 1] = 0;
        logabsdet[b] = 0;
        if (s->n == 0) continue;
        double mx = 0, mz = 0, ex = 0, info[UMFPACK_INFO];
        int64_t st = umfpack_zl_get_determinant(&mx, &mz, &ex, u->e[b].numeric, info);
        if (st < 0)
            return SLA_FAIL(st == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND,
                            "umfpack_zl_get_determinant failed on batch element %lld with "
                            "status %lld", (long long)b, (long long)st);
        double m = hypot(mx, mz);
        if (m == 0 || singular(s, &u->e[b])) {
            sign[2 * b] = 0;
            logabsdet[b] = -INFINITY;
            continue;
        }
        sign[2 * b] = mx / m;
        sign[2 * b + 1] = mz / m;
        logabsdet[b] = log(m) + ex * log(10.0);
    }
    return SLA_OK;
}

/* CSC of L (values double complex) from UMFPACK's row form with split values (Lx, Lz) */
static void rows_to_columns(int64_t n, const int64_t *Lp, const int64_t *Lj, const double *Lx,
                            const double *Lz, int64_t *Cp, int64_t *Ci, double complex *Cx)
{
    memset(Cp, 0, (size_t)(n + 1) * sizeof *Cp);
    for (int64_t p = 0; p < Lp[n]; p++) Cp[Lj[p] + 1]++;
    for (int64_t j = 0; j < n; j++) Cp[j + 1] += Cp[j];
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = Lp[i]; p < Lp[i + 1]; p++) {
            int64_t q = Cp[Lj[p]]++;
            Ci[q] = i;
            Cx[q] = CMPLX(Lx[p], Lz[p]);
        }
    for (int64_t j = n; j > 0; j--) Cp[j] = Cp[j - 1];
    Cp[0] = 0;
}

/* dvalues_b = g_b·conj(A_b⁻ᵀ) on the pattern by the selected inverse of element b's factors
 * (selinv_lu.h, complex values): the factors are extracted with split real and imaginary parts
 * (umfpack_zl_get_numeric) and interleaved. */
static sla_status grad_element(sla_solver *s, const umfz_impl *u, int64_t b, double g,
                               void *out)
{
    int64_t n = s->n, lnz, unz, nr, nc, nzud, recip;
    void *num = u->e[b].numeric;
    int64_t code = umfpack_zl_get_lunz(&lnz, &unz, &nr, &nc, &nzud, num);
    if (code < 0)
        return SLA_FAIL(SLA_EBACKEND, "umfpack_zl_get_lunz of batch element %lld failed "
                        "(status %lld)", (long long)b, (long long)code);
    int64_t *iw = sla_malloc((size_t)(3 * (n + 1) + 2 * lnz + unz + 2 * n), sizeof *iw, "factors");
    double *dw = sla_malloc((size_t)(2 * lnz + 2 * unz + 3 * n), sizeof *dw, "factors");
    double complex *zw = sla_malloc((size_t)(lnz + unz + n), sizeof *zw, "factors");
    sla_status st = SLA_OK;
    if (!iw || !dw || !zw) { st = SLA_ENOMEM; goto done; }
    int64_t *Lp = iw, *Cp = Lp + n + 1, *Up = Cp + n + 1, *Lj = Up + n + 1, *Ci = Lj + lnz,
            *Ui = Ci + lnz, *P = Ui + unz, *Q = P + n;
    double *Lx = dw, *Lz = Lx + lnz, *Ux = Lz + lnz, *Uz = Ux + unz, *Dx = Uz + unz, *Dz = Dx + n,
           *Rs = Dz + n;
    double complex *Cx = zw, *Uc = Cx + lnz, *D = Uc + unz;
    code = umfpack_zl_get_numeric(Lp, Lj, Lx, Lz, Up, Ui, Ux, Uz, P, Q, Dx, Dz, &recip, Rs, num);
    if (code != UMFPACK_OK) {
        st = SLA_FAIL(code == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND,
                      "umfpack_zl_get_numeric of batch element %lld failed (status %lld)",
                      (long long)b, (long long)code);
        goto done;
    }
    rows_to_columns(n, Lp, Lj, Lx, Lz, Cp, Ci, Cx);
    for (int64_t k = 0; k < unz; k++) Uc[k] = CMPLX(Ux[k], Uz[k]);
    for (int64_t i = 0; i < n; i++) {
        D[i] = CMPLX(Dx[i], Dz[i]);
        Rs[i] = recip ? Rs[i] : 1.0 / Rs[i];
    }
    sla_lu_factors f = {.n = n, .cplx = 1, .Lp = Cp, .Li = Ci, .Lx = Cx, .Up = Up, .Ui = Ui,
                        .Ux = Uc, .d = D, .P = P, .Q = Q, .s = Rs, .nblocks = 1};
    st = sla_lu_selinv_transpose(&f, s->pattern, g, s->dtype, out);
    if (st != SLA_OK)
        st = SLA_FAIL(st, "selected inverse of batch element %lld (UMFPACK complex factors) "
                      "failed%s", (long long)b, st == SLA_ENOMEM ? ": out of memory" : "");
done:
    sla_free(iw);
    sla_free(dw);
    sla_free(zw);
    return st;
}

sla_status sla_umfpack_z_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    umfz_impl *u = s->impl;
    SLA_TRY(check_factors(s, u));
    int64_t nnz = sla_pattern_nnz(s->pattern);
    size_t esz = sla_dtype_size(s->dtype);
    for (int64_t b = 0; b < s->batch && s->n > 0; b++)
        SLA_TRY(grad_element(s, u, b, g[b], (char *)dvalues + (size_t)(b * nnz) * esz));
    return SLA_OK;
}

void sla_umfpack_z_destroy(sla_solver *s)
{
    umfz_impl *u = s->impl;
    if (!u) return;
    for (int64_t b = 0; u->e && b < s->batch; b++) {
        if (u->e[b].numeric) umfpack_zl_free_numeric(&u->e[b].numeric);
        sla_free(u->e[b].ax);
    }
    if (u->symbolic) umfpack_zl_free_symbolic(&u->symbolic);
    sla_free(u->e);
    sla_free(u->ai);
    sla_free(u);
    s->impl = NULL;
}
