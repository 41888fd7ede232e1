/* Method "klu" for complex128 and complex64: KLU's complex int64 interface (klu_zl_*, values
 * as interleaved (re, im) pairs), on the symbolic analysis of the real backend (klu.c: the
 * analysis depends on the pattern only). The hooks of sla_backend_klu hand complex solvers here.
 *
 * Orientation as in klu.c: the CSR arrays of A are the CSC arrays of B = Aᵀ, which KLU factors
 * as L·U = P·(R⁻¹B)·Q (BTF blocks). A x = b is Bᵀx = b (klu_zl_tsolve, conj_solve = 0), Aᵀx = b
 * is B x = b (klu_zl_solve), Aᴴx = b is conj(B)x = b, solved as B·conj(x) = conj(b).
 * complex64 is widened to double; X is rounded at the end.
 * Singularity: a zero pivot (KLU_SINGULAR, kept) refuses solves with SLA_ESINGULAR; rcond is
 * the rule of every direct backend (condest.c: Higham's estimate of the row-equilibrated
 * 1-norm rcond of A, complex form), and below SLA_RCOND_SINGULAR solves are refused unless
 * options.allow_singular.
 * det A = det B = Π R_ii · Π U_ii · sign(P) · sign(Q): the phase and log|det| from the complex
 * diagonal of U (the off-diagonal BTF blocks do not change it). The log-determinant gradient
 * is the complex selected inverse of the factors (selinv_lu.h). */
#include "core/cmplx.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "direct/klu_impl.h"
#include "direct/lu_util.h"
#include "direct/selinv_lu.h"

typedef struct kluz_impl {
    klu_l_symbolic *symbolic;
    klu_l_common common;
    int64_t *ai;                 /* [nnz] column indices as int64 */
    double complex *ax;          /* [batch][nnz] values as double complex */
    klu_l_numeric **numeric;     /* [batch] */
    int *zero_pivot;             /* [batch] 1: KLU_SINGULAR */
    double *rcond;               /* [batch] */
    int64_t *rcond_hint;         /* [batch] sla_direct_rcond's hints, −1 at first */
    int valid;
} kluz_impl;

/* sla_factor_solve_fn of the condition estimate: the k columns of y in place on element b's
 * factors; Aᴴ y as conj(B⁻¹ conj(y)) */
static sla_status inverse(void *ctx, int64_t b, sla_op op, int64_t k, double *y)
{
    sla_solver *s = ctx;
    kluz_impl *kz = s->impl;
    int64_t n = s->n;
    double complex *z = (double complex *)y;
    if (op == SLA_OP_C)
        for (int64_t i = 0; i < n * k; i++) z[i] = conj(z[i]);
    klu_l_common c = kz->common;
    int ok = op == SLA_OP_N
                 ? (int)klu_zl_tsolve(kz->symbolic, kz->numeric[b], n, k, y, 0, &c)
                 : (int)klu_zl_solve(kz->symbolic, kz->numeric[b], n, k, y, &c);
    if (op == SLA_OP_C)
        for (int64_t i = 0; i < n * k; i++) z[i] = conj(z[i]);
    return ok ? SLA_OK : c.status == KLU_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND;
}

static sla_status factor_all(sla_solver *s, kluz_impl *k)
{
    k->valid = 0;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    double *work = sla_malloc((size_t)s->n + 1, SLA_RCOND_WORK * sizeof(double),
                              "condition estimate");
    if (!work) return SLA_ENOMEM;
    SuiteSparse_long *ap = (SuiteSparse_long *)sla_pattern_rowptr(s->pattern);
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) {
        double complex *ax = k->ax + b * nnz;
        for (int64_t q = 0; q < nnz; q++)
            ax[q] = s->dtype == SLA_COMPLEX128
                        ? ((const double complex *)s->A.values)[b * nnz + q]
                        : (double complex)((const float complex *)s->A.values)[b * nnz + q];
        klu_l_common c = k->common;
        if (k->numeric[b]) klu_zl_free_numeric(&k->numeric[b], &c);
        k->numeric[b] = klu_zl_factor(ap, (SuiteSparse_long *)k->ai, (double *)ax, k->symbolic, &c);
        if (!k->numeric[b]) {
            sla_free(work);
            return SLA_FAIL(c.status == KLU_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND,
                            "klu_zl_factor of batch element %lld failed (status %lld)",
                            (long long)b, (long long)c.status);
        }
        k->zero_pivot[b] = c.status == KLU_SINGULAR;
        k->rcond[b] = 0;
        sla_status st = k->zero_pivot[b] ? SLA_OK
                        : sla_direct_rcond(s, b, inverse, s, work, &k->rcond_hint[b], &k->rcond[b]);
        if (st != SLA_OK) {
            sla_free(work);
            return SLA_FAIL(st, "the condition estimate of batch element %lld failed",
                            (long long)b);
        }
    }
    sla_free(work);
    double rmin = 1;
    int64_t bad = -1;
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) {
        rmin = fmin(rmin, k->rcond[b]);
        if (bad < 0 && k->zero_pivot[b]) bad = b;
    }
    s->rcond = rmin;
    char sing[80] = "";
    if (bad >= 0) snprintf(sing, sizeof sing, ", singular (batch element %lld)", (long long)bad);
    snprintf(s->description, sizeof s->description,
             "klu (KLU %d.%d.%d complex, %lld BTF blocks): nnz(L+U) %.0f, rcond %.1e%s%s%s",
             KLU_MAIN_VERSION, KLU_SUB_VERSION, KLU_SUBSUB_VERSION,
             s->n > 0 ? (long long)k->symbolic->nblocks : 0LL,
             s->n > 0 ? (double)(k->numeric[0]->lnz + k->numeric[0]->unz) - (double)s->n : 0.0,
             rmin, s->batch > 1 ? " (min over the batch)" : "", sing,
             sla_direct_singular_note(s));
    k->valid = 1;
    return SLA_OK;
}

sla_status sla_klu_z_create(sla_solver *s)
{
    kluz_impl *k = sla_calloc(1, sizeof *k, "KLU complex solver");
    if (!k) return SLA_ENOMEM;
    s->impl = k;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    k->ai = lu_colind64(s->pattern);
    k->ax = sla_malloc((size_t)(s->batch * nnz), sizeof *k->ax, "KLU complex values");
    k->numeric = sla_calloc((size_t)s->batch, sizeof *k->numeric, "KLU factors");
    k->zero_pivot = sla_calloc((size_t)s->batch, sizeof *k->zero_pivot, "pivots");
    k->rcond = sla_calloc((size_t)s->batch, sizeof *k->rcond, "rcond");
    k->rcond_hint = sla_malloc((size_t)s->batch, sizeof *k->rcond_hint, "rcond");
    if (!k->ai || !k->ax || !k->numeric || !k->zero_pivot || !k->rcond || !k->rcond_hint)
        return SLA_ENOMEM;
    for (int64_t b = 0; b < s->batch; b++) k->rcond_hint[b] = -1;
    sla_klu_common_defaults(&k->common);
    if (s->n > 0) SLA_TRY(sla_klu_analyze_pattern(s, k->ai, &k->common, &k->symbolic));
    return factor_all(s, k);
}

sla_status sla_klu_z_refactor(sla_solver *s)
{
    return factor_all(s, s->impl);
}

static sla_status check_factors(const sla_solver *s, const kluz_impl *k)
{
    if (!k->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    for (int64_t b = 0; b < s->batch && s->n > 0; b++) {
        if (k->zero_pivot[b])
            return SLA_FAIL(SLA_ESINGULAR, "batch element %lld is singular (a zero pivot in "
                            "KLU's complex LU)", (long long)b);
        if (sla_direct_numerically_singular(s, k->rcond[b]))
            return SLA_FAIL(SLA_ESINGULAR, "batch element %lld is numerically singular (rcond "
                            "%.1e < %.1e; options.allow_singular uses it anyway)", (long long)b,
                            k->rcond[b], SLA_RCOND_SINGULAR);
    }
    return SLA_OK;
}

/* sla_zcolumn_fn: x = op(A_b)⁻¹ rhs, in place in x */
static sla_status solve_column(sla_solver *s, void *ctx, int64_t b, sla_op op,
                               double complex *rhs, double complex *x)
{
    kluz_impl *k = ctx;
    int64_t n = s->n;
    int cj = op == SLA_OP_C;
    for (int64_t i = 0; i < n; i++) x[i] = cj ? conj(rhs[i]) : rhs[i];
    klu_l_common c = k->common;
    int ok = op == SLA_OP_N
                 ? (int)klu_zl_tsolve(k->symbolic, k->numeric[b], n, 1, (double *)x, 0, &c)
                 : (int)klu_zl_solve(k->symbolic, k->numeric[b], n, 1, (double *)x, &c);
    if (!ok)
        return SLA_FAIL(c.status == KLU_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND,
                        "klu_zl_solve of batch element %lld failed (status %lld)", (long long)b,
                        (long long)c.status);
    if (cj)
        for (int64_t i = 0; i < n; i++) x[i] = conj(x[i]);
    return SLA_OK;
}

sla_status sla_klu_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                           const sla_solve_params *p, sla_solve_info *info)
{
    kluz_impl *k = s->impl;
    SLA_TRY(check_factors(s, k));
    info->rcond = s->rcond;
    return sla_zdirect_solve(s, op, nrhs, B, X, solve_column, k);   /* residuals: generic layer */
}

sla_status sla_klu_z_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    kluz_impl *k = s->impl;
    if (!k->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    int64_t n = s->n;
    unsigned char *seen = sla_malloc((size_t)n, 1, "permutation workspace");
    if (!seen) return SLA_ENOMEM;
    int qsign = n ? lu_perm_sign(n, k->symbolic->Q, seen) : 1;
    for (int64_t b = 0; b < s->batch; b++) {
        sign[2 * b] = 1;
        sign[2 * b + 1] = 0;
        logabsdet[b] = 0;
        if (n == 0) continue;
        const klu_l_numeric *num = k->numeric[b];
        if (k->zero_pivot[b] || sla_direct_numerically_singular(s, k->rcond[b])) {
            sign[2 * b] = 0;
            logabsdet[b] = -INFINITY;
            continue;
        }
        const double complex *ud = num->Udiag;
        double complex ph = qsign * lu_perm_sign(n, num->Pnum, seen);
        double la = 0;
        for (int64_t i = 0; i < n; i++) {
            double m = cabs(ud[i]);
            ph *= ud[i] / m;
            la += log(m) + (num->Rs ? log(num->Rs[i]) : 0);
        }
        ph /= cabs(ph);                          /* keep it of unit modulus */
        sign[2 * b] = creal(ph);
        sign[2 * b + 1] = cimag(ph);
        logabsdet[b] = la;
    }
    sla_free(seen);
    return SLA_OK;
}

/* dvalues_b = g_b·conj(A_b⁻ᵀ) on the pattern by the selected inverse of element b's factors
 * (selinv_lu.h, complex values; as klu.c's real gradient: entries of A in off-diagonal BTF
 * blocks get 0). klu_zl_extract returns split real and imaginary parts; they are interleaved. */
static sla_status grad_element(sla_solver *s, kluz_impl *k, int64_t b, double g, void *out)
{
    klu_l_numeric *num = k->numeric[b];
    int64_t n = s->n, nb = k->symbolic->nblocks, lnz = num->lnz, unz = num->unz;
    int64_t *iw = sla_malloc((size_t)(2 * (n + 1) + lnz + unz + 2 * n + nb + 1), sizeof *iw,
                             "factors");
    double *dw = sla_malloc((size_t)(2 * lnz + 2 * unz + 2 * n), sizeof *dw, "factors");
    double complex *zw = sla_malloc((size_t)(lnz + unz), sizeof *zw, "factors");
    sla_status st = SLA_OK;
    if (!iw || !dw || !zw) { st = SLA_ENOMEM; goto done; }
    int64_t *Lp = iw, *Up = Lp + n + 1, *Li = Up + n + 1, *Ui = Li + lnz, *P = Ui + unz, *Q = P + n,
            *R = Q + n;
    double *Lx = dw, *Lz = Lx + lnz, *Ux = Lz + lnz, *Uz = Ux + unz, *Rs = Uz + unz, *sc = Rs + n;
    double complex *Lc = zw, *Uc = Lc + lnz;
    klu_l_common cm = k->common;
    if (!klu_zl_extract(num, k->symbolic, Lp, Li, Lx, Lz, Up, Ui, Ux, Uz, NULL, NULL, NULL, NULL,
                        P, Q, Rs, R, &cm)) {
        st = SLA_FAIL(cm.status == KLU_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EBACKEND,
                      "klu_zl_extract of batch element %lld failed (status %lld)", (long long)b,
                      (long long)cm.status);
        goto done;
    }
    for (int64_t q = 0; q < lnz; q++) Lc[q] = CMPLX(Lx[q], Lz[q]);
    for (int64_t q = 0; q < unz; q++) Uc[q] = CMPLX(Ux[q], Uz[q]);
    /* KLU divides row P[k] by Rs[k] (Numeric->Rs is stored in pivot order) */
    for (int64_t i = 0; i < n; i++) sc[P[i]] = 1.0 / Rs[i];
    sla_lu_factors f = {.n = n, .cplx = 1, .Lp = Lp, .Li = Li, .Lx = Lc, .Up = Up, .Ui = Ui,
                        .Ux = Uc, .d = num->Udiag, .P = P, .Q = Q, .s = sc, .nblocks = nb,
                        .blocks = R};
    st = sla_lu_selinv_transpose(&f, s->pattern, g, s->dtype, out);
    if (st != SLA_OK)
        st = SLA_FAIL(st, "selected inverse of batch element %lld (KLU complex factors) failed%s",
                      (long long)b, st == SLA_ENOMEM ? ": out of memory" : "");
done:
    sla_free(iw);
    sla_free(dw);
    sla_free(zw);
    return st;
}

sla_status sla_klu_z_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    kluz_impl *k = s->impl;
    SLA_TRY(check_factors(s, k));
    int64_t nnz = sla_pattern_nnz(s->pattern);
    size_t esz = sla_dtype_size(s->dtype);
    for (int64_t b = 0; b < s->batch && s->n > 0; b++)
        SLA_TRY(grad_element(s, k, b, g[b], (char *)dvalues + (size_t)(b * nnz) * esz));
    return SLA_OK;
}

void sla_klu_z_destroy(sla_solver *s)
{
    kluz_impl *k = s->impl;
    if (!k) return;
    for (int64_t b = 0; k->numeric && b < s->batch; b++)
        if (k->numeric[b]) klu_zl_free_numeric(&k->numeric[b], &k->common);
    if (k->symbolic) klu_l_free_symbolic(&k->symbolic, &k->common);
    sla_free(k->ai);
    sla_free(k->ax);
    sla_free(k->numeric);
    sla_free(k->zero_pivot);
    sla_free(k->rcond);
    sla_free(k->rcond_hint);
    sla_free(k);
    s->impl = NULL;
}
