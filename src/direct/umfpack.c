/* Method "lu": sparse LU with partial pivoting by UMFPACK (Davis 2004, "Algorithm 832: UMFPACK
 * V4.3, an unsymmetric-pattern multifrontal method", ACM TOMS 30(2)), SuiteSparse's umfpack_dl_*
 * (int64) interface.
 *
 * Orientation: the CSR arrays of A are handed to UMFPACK as the CSC arrays of B = Aᵀ, which it
 * factors as P·R·B·Q = L·U. A x = b is then Bᵀx = b (UMFPACK_At) and Aᵀx = b is B x = b
 * (UMFPACK_A), both from the same factors; det B = det A. Measured against converting to the
 * CSC of A, fill and time agree within noise (docs/direct_lu.md), and this way needs neither a
 * transposed pattern nor a value permutation at each refactor.
 * Lifecycle: umfpack_dl_symbolic once on the pattern (with the values of batch element 0, which
 * UMFPACK uses to choose its strategy), umfpack_dl_numeric per batch element in parallel (UMFPACK
 * is reentrant: each element has its own Numeric object and Info array; Symbolic and Control are
 * read only), refactor = numeric only. Values are kept as a double copy per element: UMFPACK's
 * iterative refinement (Control[UMFPACK_IRSTEP] = 2, its default) and the residuals in the solve
 * info read them, and the caller's array need not outlive create.
 * float32: values and right-hand sides are widened to double; the factorization and the solve
 * run in double precision and X is rounded to float32 at the end.
 * Singular matrices (UMFPACK_WARNING_singular_matrix) keep their factorization: create and
 * refactor succeed, logdet gives sign 0 and −inf, and solve and logdet_grad return SLA_ESINGULAR
 * naming the column of A at the first zero pivot; numerically singular ones (the rcond estimate
 * of condest.c below SLA_RCOND_SINGULAR, checked after every factorization) likewise, naming the
 * column at the smallest pivot.
 * Complex dtypes: every hook hands over to umfpack_z.c (umfpack_zl_*). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <umfpack.h>

#include "direct/lu_util.h"
#include "direct/selinv_lu.h"

_Static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t), "UMFPACK's dl interface is int64");

/* UMFPACK's part of a batch element (the shared part is lu_elem). */
typedef struct umf_elem {
    void *numeric;         /* UMFPACK Numeric object, NULL before the first factorization */
    int64_t status;        /* UMFPACK status of the last numeric factorization */
    double lnz, unz;       /* Info[UMFPACK_LNZ], Info[UMFPACK_UNZ] (diagonals included) */
} umf_elem;

typedef struct umf_impl {
    void *symbolic;
    int64_t *ai;           /* [nnz] column indices of A as int64 (row indices of Aᵀ) */
    double control[UMFPACK_CONTROL];
    double strategy, ordering;    /* Info[UMFPACK_STRATEGY_USED], Info[UMFPACK_ORDERING_USED] */
    int valid;             /* 0 while the factors are unusable (a refactor failed) */
    lu_elem *lu;           /* [batch] */
    umf_elem *e;           /* [batch] */
} umf_impl;

/* The ordering used, for describe(); UMFPACK orders B = Aᵀ, so METIS on BᵀB is METIS on A·Aᵀ. */
static const char *ordering_name(const umf_impl *u)
{
    int unsym = u->strategy == UMFPACK_STRATEGY_UNSYMMETRIC;
    switch ((int)u->ordering) {
    case UMFPACK_ORDERING_AMD: return unsym ? "COLAMD" : "AMD";
    case UMFPACK_ORDERING_METIS: return unsym ? "METIS(AAᵀ)" : "METIS(A+Aᵀ)";
    case UMFPACK_ORDERING_CHOLMOD: return "CHOLMOD";
    case UMFPACK_ORDERING_NONE: return "natural";
    case UMFPACK_ORDERING_GIVEN: return "given";
    default: return "unknown";
    }
}

static void describe(sla_solver *s, const umf_impl *u)
{
    char fill[16] = "0", extra[128];
    lu_summary(s, u->lu, extra, sizeof extra);
    if (s->n > 0) lu_format_count(u->e[0].lnz + u->e[0].unz - (double)s->n, fill);
    snprintf(s->description, sizeof s->description,
             "lu (UMFPACK %d.%d.%d, %s, %s strategy): nnz(L+U) %s, rcond %.1e",
             UMFPACK_MAIN_VERSION, UMFPACK_SUB_VERSION, UMFPACK_SUBSUB_VERSION, ordering_name(u),
             u->strategy == UMFPACK_STRATEGY_UNSYMMETRIC ? "unsymmetric" : "symmetric", fill,
             s->rcond);
    lu_append(s->description, sizeof s->description, extra);
}

/* Finds the first zero pivot of a singular factorization (or, smallest = 1, the smallest pivot
 * of a numerically singular one) and the column/row of A it belongs to (P·R·Aᵀ·Q = L·U: step k
 * pivots on Aᵀ[P[k]][Q[k]] = A[Q[k]][P[k]]). */
static int64_t find_zero_pivot(int64_t n, void *numeric, lu_elem *lu, int smallest)
{
    int64_t *P = sla_malloc((size_t)n, sizeof *P, "pivot order");
    int64_t *Q = sla_malloc((size_t)n, sizeof *Q, "pivot order");
    double *D = sla_malloc((size_t)n, sizeof *D, "pivots");
    int64_t st = UMFPACK_ERROR_out_of_memory, recip;
    if (P && Q && D)
        st = umfpack_dl_get_numeric(NULL, NULL, NULL, NULL, NULL, NULL, P, Q, D, &recip, NULL, numeric);
    if (st == UMFPACK_OK && smallest) {
        lu_small_pivot(lu, n, D, P, Q);
    } else if (st == UMFPACK_OK) {
        int64_t k = 0;
        while (k < n - 1 && D[k] != 0) k++;
        lu->zero_pivot = k;
        lu->sing_col = P[k];
        lu->sing_row = Q[k];
    }
    sla_free(P); sla_free(Q); sla_free(D);
    return st;
}

/* (A_b)⁻¹ or (A_b)⁻ᵀ y in place on element b's factors without refinement, for the condition
 * estimate (the factors are of Aᵀ: A⁻¹ is UMFPACK_At). */
static sla_status umf_inverse(void *ctx, int64_t b, sla_op op, int64_t nrhs, double *y)
{
    sla_solver *s = ctx;
    umf_impl *u = s->impl;
    int64_t n = s->n, st = UMFPACK_OK;
    double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
    memcpy(control, u->control, sizeof control);
    control[UMFPACK_IRSTEP] = 0;
    int64_t *wi = sla_malloc((size_t)n, sizeof *wi, "UMFPACK workspace");
    double *w = sla_malloc((size_t)n, 2 * sizeof *w, "UMFPACK workspace");
    if (!wi || !w) { sla_free(wi); sla_free(w); return SLA_ENOMEM; }
    for (int64_t j = 0; j < nrhs && st >= 0; j++) {
        memcpy(w + n, y + j * n, (size_t)n * sizeof *y);
        st = umfpack_dl_wsolve(op == SLA_OP_N ? UMFPACK_At : UMFPACK_A,
                               sla_pattern_rowptr(s->pattern), u->ai, u->lu[b].ax, y + j * n,
                               w + n, u->e[b].numeric, control, info, wi, w);
    }
    sla_free(wi);
    sla_free(w);
    return st < 0 ? SLA_EBACKEND : SLA_OK;
}

/* Numeric factorization of batch element b (a task of lu_run_tasks), then the singularity rule
 * (condest.c). The singular warning keeps a usable Numeric object. */
static sla_status factor_task(void *ctx, int64_t b, int64_t *code)
{
    sla_solver *s = ctx;
    umf_impl *u = s->impl;
    umf_elem *e = &u->e[b];
    lu_elem *lu = &u->lu[b];
    double info[UMFPACK_INFO];
    lu_elem_load(s, b, lu);
    if (e->numeric) umfpack_dl_free_numeric(&e->numeric);
    lu->zero_pivot = -1;
    e->status = umfpack_dl_numeric(sla_pattern_rowptr(s->pattern), u->ai, lu->ax, u->symbolic,
                                   &e->numeric, u->control, info);
    if (e->status >= 0) {
        lu->rcond = info[UMFPACK_RCOND];
        e->lnz = info[UMFPACK_LNZ];
        e->unz = info[UMFPACK_UNZ];
    }
    if (e->status == UMFPACK_WARNING_singular_matrix) {
        lu->rcond = 0;
        int64_t st = find_zero_pivot(s->n, e->numeric, lu, 0);
        if (st < 0) e->status = st;
    }
    *code = e->status;
    if (*code < 0) return *code == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND;
    SLA_TRY(lu_estimate_rcond(s, b, lu, umf_inverse, s));
    if (lu->small_pivot == -2 && (*code = find_zero_pivot(s->n, e->numeric, lu, 1)) < 0)
        return *code == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND;
    return SLA_OK;
}

static sla_status factor_all(sla_solver *s, umf_impl *u)
{
    u->valid = 0;
    if (s->n > 0) SLA_TRY(lu_run_tasks(s->batch, 1, factor_task, s, "umfpack_dl_numeric"));
    u->valid = 1;
    describe(s, u);
    return SLA_OK;
}

static sla_status umf_symbolic(sla_solver *s, umf_impl *u)
{
    switch (s->opt.ordering) {
    case SLA_ORDERING_NATURAL: u->control[UMFPACK_ORDERING] = UMFPACK_ORDERING_NONE; break;
    case SLA_ORDERING_AMD: u->control[UMFPACK_ORDERING] = UMFPACK_ORDERING_AMD; break;
    case SLA_ORDERING_METIS: u->control[UMFPACK_ORDERING] = UMFPACK_ORDERING_METIS; break;
    default: break;                       /* AUTO: UMFPACK's default (AMD/COLAMD, auto strategy) */
    }
    double info[UMFPACK_INFO];
    lu_elem_load(s, 0, &u->lu[0]);
    int64_t st = umfpack_dl_symbolic(s->n, s->n, sla_pattern_rowptr(s->pattern), u->ai, u->lu[0].ax,
                                     &u->symbolic, u->control, info);
    if (st == UMFPACK_ERROR_out_of_memory)
        return SLA_FAIL(SLA_ENOMEM, "UMFPACK ran out of memory in the symbolic analysis");
    if (st < 0)
        return SLA_FAIL(SLA_EBACKEND, "umfpack_dl_symbolic failed with status %lld%s", (long long)st,
                        st == UMFPACK_ERROR_ordering_failed ? " (the ordering failed)" : "");
    u->strategy = info[UMFPACK_STRATEGY_USED];
    u->ordering = info[UMFPACK_ORDERING_USED];
    if (s->opt.ordering == SLA_ORDERING_METIS && u->ordering != UMFPACK_ORDERING_METIS)
        return SLA_FAIL(SLA_EUNSUPPORTED, "this UMFPACK was built without METIS; use ordering "
                        "auto or amd");
    return SLA_OK;
}

static sla_status umf_create(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_umfpack_z_create(s);
    umf_impl *u = sla_calloc(1, sizeof *u, "UMFPACK solver");
    if (!u) return SLA_ENOMEM;
    s->impl = u;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    u->e = sla_calloc((size_t)s->batch, sizeof *u->e, "UMFPACK factors");
    u->lu = lu_elems_create(s->batch, nnz);
    u->ai = lu_colind64(s->pattern);
    if (!u->e || !u->lu || !u->ai) return SLA_ENOMEM;
    umfpack_dl_defaults(u->control);
    u->strategy = UMFPACK_STRATEGY_SYMMETRIC;
    u->ordering = UMFPACK_ORDERING_NONE;
    if (s->n > 0) SLA_TRY(umf_symbolic(s, u));
    return factor_all(s, u);
}

static sla_status umf_refactor(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_umfpack_z_refactor(s);
    return factor_all(s, s->impl);
}

/* Task t solves column t % nrhs of batch element t / nrhs (umfpack_dl_wsolve only reads the
 * Numeric object, so the columns of one element can run in parallel). */
static sla_status solve_task(void *ctx, int64_t t, int64_t *code)
{
    lu_solve_ctx *c = ctx;
    sla_solver *s = c->s;
    umf_impl *u = s->impl;
    int64_t n = s->n, b = t / c->nrhs, j = t % c->nrhs;
    /* Wi [n] and W [5n] (iterative refinement), then b, x and a residual work vector */
    int64_t *wi = sla_malloc((size_t)n, sizeof *wi, "UMFPACK workspace");
    double *w = sla_malloc((size_t)n * 8, sizeof *w, "UMFPACK workspace");
    if (!wi || !w) { sla_free(wi); sla_free(w); return SLA_ENOMEM; }
    double *bv = w + 5 * n, *xv = w + 6 * n, *rw = w + 7 * n, info[UMFPACK_INFO];
    lu_load_column(s->dtype, c->B, n, c->nrhs, b, j, bv);
    /* the factors are of Aᵀ: A x = b is (Aᵀ)ᵀ x = b */
    *code = umfpack_dl_wsolve(c->op == SLA_OP_N ? UMFPACK_At : UMFPACK_A,
                              sla_pattern_rowptr(s->pattern), u->ai, u->lu[b].ax, xv, bv,
                              u->e[b].numeric, u->control, info, wi, w);
    lu_round_to_dtype(s->dtype, xv, n);           /* the residual of the X returned */
    lu_store_column(s->dtype, xv, n, c->nrhs, b, j, c->X);
    c->rn[t] = lu_residual(c->op, s->pattern, u->lu[b].ax, xv, bv, rw);
    c->bn[t] = lu_norm2(bv, n);
    sla_free(wi);
    sla_free(w);
    return *code < 0 ? SLA_EBACKEND : SLA_OK;
}

static sla_status umf_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                            const sla_solve_params *params, sla_solve_info *info)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_umfpack_z_solve(s, op, nrhs, B, X, params, info);
    umf_impl *u = s->impl;
    return lu_solve_tasks(s, u->valid, u->lu, op, nrhs, B, X, info, 1, solve_task,
                          "umfpack_dl_wsolve");
}

/* sign and log|det A| from umfpack_dl_get_determinant's mantissa/exponent form det = Mx·10^Ex,
 * which includes the row scaling and the parities of P and Q (det Aᵀ = det A). */
static sla_status umf_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_umfpack_z_logdet(s, sign, logabsdet);
    umf_impl *u = s->impl;
    if (!u->valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    for (int64_t b = 0; b < s->batch; b++) {
        if (s->n == 0) { sign[b] = 1; logabsdet[b] = 0; continue; }
        double mx = 0, ex = 0, info[UMFPACK_INFO];
        int64_t st = umfpack_dl_get_determinant(&mx, &ex, u->e[b].numeric, info);
        if (st < 0)
            return SLA_FAIL(st == UMFPACK_ERROR_out_of_memory ? SLA_ENOMEM : SLA_EBACKEND,
                            "umfpack_dl_get_determinant failed on batch element %lld with status "
                            "%lld", (long long)b, (long long)st);
        if (mx == 0 || lu_singular(&u->lu[b])) { sign[b] = 0; logabsdet[b] = -INFINITY; continue; }
        sign[b] = mx > 0 ? 1 : -1;
        logabsdet[b] = log(fabs(mx)) + ex * log(10.0);
    }
    return SLA_OK;
}

/* CSC of L from UMFPACK's row form (Lp, Lj, Lx = CSR of L), into Cp [n+1], Ci, Cx [lnz]. */
static void rows_to_columns(int64_t n, const int64_t *Lp, const int64_t *Lj, const double *Lx,
                            int64_t *Cp, int64_t *Ci, double *Cx)
{
    memset(Cp, 0, (size_t)(n + 1) * sizeof *Cp);
    for (int64_t p = 0; p < Lp[n]; p++) Cp[Lj[p] + 1]++;
    for (int64_t j = 0; j < n; j++) Cp[j + 1] += Cp[j];
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = Lp[i]; p < Lp[i + 1]; p++) {
            int64_t q = Cp[Lj[p]]++;
            Ci[q] = i;
            Cx[q] = Lx[p];
        }
    for (int64_t j = n; j > 0; j--) Cp[j] = Cp[j - 1];
    Cp[0] = 0;
}

/* dvalues_b = g_b·(A_b⁻ᵀ) on the pattern, from the factors of element b (selinv_lu.h). */
static sla_status grad_task(void *ctx, int64_t b, int64_t *code)
{
    lu_grad_ctx *c = ctx;
    sla_solver *s = c->s;
    umf_impl *u = s->impl;
    int64_t n = s->n, lnz, unz, nr, nc, nzud, recip;
    void *num = u->e[b].numeric;
    if ((*code = umfpack_dl_get_lunz(&lnz, &unz, &nr, &nc, &nzud, num)) < 0) return SLA_EBACKEND;
    /* L (row form and its CSC copy), U, P, Q as int64; L, its copy, U, D, Rs as double */
    int64_t *iw = sla_malloc((size_t)(3 * (n + 1) + 2 * lnz + unz + 2 * n), sizeof *iw, "factors");
    double *dw = sla_malloc((size_t)(2 * lnz + unz + 2 * n), sizeof *dw, "factors");
    if (!iw || !dw) { sla_free(iw); sla_free(dw); return SLA_ENOMEM; }
    int64_t *Lp = iw, *Cp = Lp + n + 1, *Up = Cp + n + 1, *Lj = Up + n + 1, *Ci = Lj + lnz,
            *Ui = Ci + lnz, *P = Ui + unz, *Q = P + n;
    double *Lx = dw, *Cx = Lx + lnz, *Ux = Cx + lnz, *D = Ux + unz, *Rs = D + n;
    *code = umfpack_dl_get_numeric(Lp, Lj, Lx, Up, Ui, Ux, P, Q, D, &recip, Rs, num);
    sla_status st = *code == UMFPACK_OK ? SLA_OK : SLA_EBACKEND;
    if (st == SLA_OK) {
        rows_to_columns(n, Lp, Lj, Lx, Cp, Ci, Cx);
        for (int64_t i = 0; i < n; i++) Rs[i] = recip ? Rs[i] : 1.0 / Rs[i];
        sla_lu_factors f = {.n = n, .Lp = Cp, .Li = Ci, .Lx = Cx, .Up = Up, .Ui = Ui, .Ux = Ux,
                            .d = D, .P = P, .Q = Q, .s = Rs, .nblocks = 1};
        st = sla_lu_selinv_transpose(&f, s->pattern, c->g[b], s->dtype, lu_grad_slice(c, b));
    }
    sla_free(iw);
    sla_free(dw);
    return st;
}

static sla_status umf_logdet_grad(sla_solver *s, const double *g, void *dvalues)
{
    if (sla_dtype_is_complex(s->dtype)) return sla_umfpack_z_logdet_grad(s, g, dvalues);
    umf_impl *u = s->impl;
    return lu_grad_tasks(s, u->valid, u->lu, g, dvalues, grad_task,
                         "selected inverse (UMFPACK factors)");
}

static void umf_destroy(sla_solver *s)
{
    if (sla_dtype_is_complex(s->dtype)) { sla_umfpack_z_destroy(s); return; }
    umf_impl *u = s->impl;
    if (!u) return;
    for (int64_t b = 0; u->e && b < s->batch; b++)
        if (u->e[b].numeric) umfpack_dl_free_numeric(&u->e[b].numeric);
    if (u->symbolic) umfpack_dl_free_symbolic(&u->symbolic);
    lu_elems_free(u->lu, s->batch);
    sla_free(u->e);
    sla_free(u->ai);
    sla_free(u);
    s->impl = NULL;
}

const sla_backend sla_backend_umfpack = {
    .info = {.name = "umfpack",
             .description = "UMFPACK (SuiteSparse): multifrontal sparse LU with partial pivoting, "
                            "transposed solves from the same factors, determinants",
             .methods = SLA_METHOD_BIT(SLA_METHOD_LU),
             .dtypes = SLA_BOTH_DTYPES | SLA_DTYPE_BIT(SLA_COMPLEX128) |
                       SLA_DTYPE_BIT(SLA_COMPLEX64),   /* complex: umfpack_z.c */
             .priority = 10,
             .available = 1},
    .create = umf_create,
    .refactor = umf_refactor,
    .solve = umf_solve,
    .logdet = umf_logdet,
    .logdet_grad = umf_logdet_grad,
    .destroy = umf_destroy,
};
