/* The backward of a distributed least-squares solve x = op(A)⁺ b (method lsqr):
 * sla_dist_solver_lstsq_vjp(), the distributed form of src/solve/lstsq.c (whose header gives
 * the derivation, Golub & Pereyra 1973): with g = ∂L/∂x, c = op(A)⁺ᵀg, λ = op(A)⁺c,
 * r = b − op(A)x, w = g − op(A)ᵀc and z = op(A)⁺ᵀx (only when ‖w‖ > rtol‖g‖),
 *   ∂b = c,  ∂op(A) = r λᵀ − c xᵀ + z wᵀ on the pattern.
 * The three pseudo-inverse products are distributed LSQR solves from x₀ = 0 (minimum-norm
 * solutions) on the same solver; the residuals are distributed SpMVs; the pattern outer
 * products are distributed SpMV VJPs (one forward halo exchange each, for the ghost values of
 * the column-side vector). Norms are global (sla_dist_vec_norm2), so every rank takes the same
 * branch. */
#include <math.h>
#include <string.h>

#include "core/kernels.h"
#include "mpi/dsolver.h"

static const char *const FUNC = "sla_dist_solver_lstsq_vjp";

typedef struct lq_shape {
    sla_op op;
    int64_t nrhs;
    const sla_dist_layout *Lb, *Lx;  /* layouts of B (range of op(A)) and of X (domain) */
    int64_t tb, tx;                  /* this rank's entries of B and of X */
} lq_shape;

/* local checks (the caller agrees) */
static sla_status lq_check(sla_dist_solver *s, const lq_shape *q, const void *B, const void *X,
                           const void *G, void *dB, void *dvalues)
{
    int64_t t;
    if (s->opt.method != SLA_METHOD_LSQR)
        return sla_error_set(SLA_EUNSUPPORTED, FUNC, "method %s: the least-squares VJP needs "
                             "method lsqr (use sla_dist_solver_solve_vjp)",
                             sla_method_name(s->opt.method));
    if (s->opt.damp != 0)
        return sla_error_set(SLA_EUNSUPPORTED, FUNC, "options.damp = %g: only the undamped "
                             "least-squares problem has its VJP", s->opt.damp);
    SLA_TRY(sla_check_block(FUNC, "G", G, s->A.batch, q->Lx->n, q->nrhs, &t));
    if (dvalues) {
        SLA_TRY(sla_check_block(FUNC, "B (needed for dvalues)", B, s->A.batch, q->Lb->n, q->nrhs, &t));
        SLA_TRY(sla_check_block(FUNC, "X (needed for dvalues)", X, s->A.batch, q->Lx->n, q->nrhs, &t));
    }
    size_t es = sla_dtype_size(s->A.dtype), bb = (size_t)q->tb * es, xb = (size_t)q->tx * es;
    size_t vb = (size_t)(s->A.batch * sla_dist_pattern_nnz(s->pattern)) * es;
    const sla_buf out[] = {{"dvalues", dvalues, vb}, {"dB", dB, bb}};
    const sla_buf in[] = {{"B", B, dvalues ? bb : 0}, {"X", X, dvalues ? xb : 0}, {"G", G, xb},
                          {"the matrix values", s->A.values, vb}};
    SLA_TRY(sla_check_aliasing(FUNC, out, 2, in, 4));
    SLA_TRY(dist_block_finite(FUNC, q->Lx, "G", s->A.dtype, s->A.batch, q->nrhs, G));
    if (dvalues) {
        SLA_TRY(dist_block_finite(FUNC, q->Lb, "B", s->A.dtype, s->A.batch, q->nrhs, B));
        SLA_TRY(dist_block_finite(FUNC, q->Lx, "X", s->A.dtype, s->A.batch, q->nrhs, X));
    }
    return SLA_OK;
}

/* y = 2^e·x, n entries */
static void scale_pow2(sla_dtype dtype, int64_t n, int e, const void *x, void *y)
{
    for (int64_t i = 0; i < n; i++) {
        if (dtype == SLA_FLOAT64) ((double *)y)[i] = ldexp(((const double *)x)[i], e);
        else ((float *)y)[i] = (float)ldexp(((const float *)x)[i], e);
    }
}

/* dvalues += alpha·(u vᵀ on the pattern), u on the rows, v on the columns: the SpMV VJP of
 * y = alpha·A v with cotangent u (its ghost values of v by one halo exchange) */
static sla_status outer_add(sla_dist_solver *s, double alpha, const void *u, const void *v,
                            int64_t nrhs, void *tmp, void *dvalues, int first)
{
    SLA_TRY(sla_dist_spmv_vjp(SLA_OP_N, alpha, &s->A, v, 1, nrhs, u, NULL, first ? dvalues : tmp));
    if (first) return SLA_OK;
    int64_t nv = s->A.batch * sla_dist_pattern_nnz(s->pattern);
    return sla_dist_vec_axpby(s->A.dtype, nv, 1.0, tmp, 1.0, dvalues);
}

/* the solves and the gradient on the work arrays C, R, Z (B's size) and Lam, W, Gs (X's);
 * Gs = G·2^−e */
static sla_status lq_run(sla_dist_solver *s, const lq_shape *q, const void *B, const void *X,
                         int e, void *const *w, void *tmp, void *dB, void *dvalues,
                         sla_solve_info *info)
{
    sla_op op = q->op, opt = op == SLA_OP_N ? SLA_OP_T : SLA_OP_N;
    void *C = w[0], *R = w[1], *Z = w[2], *Lam = w[3], *W = w[4], *Gs = w[5];
    size_t es = sla_dtype_size(s->A.dtype);
    double atol = ldexp(s->opt.atol, -e);
    sla_solve_info one;
    sla_status st = dist_solver_run(s, opt, q->nrhs, Gs, C, atol, 0, &one);
    if (st < 0) return st;
    sla_solve_info_merge_scaled(info, &one, e);
    if (dvalues) {
        st = dist_solver_run(s, op, q->nrhs, C, Lam, atol, 0, &one);
        if (st < 0) return st;
        sla_solve_info_merge_scaled(info, &one, e);
        memcpy(R, B, (size_t)q->tb * es);
        SLA_TRY(sla_dist_spmv(op, -1.0, &s->A, X, 1, q->nrhs, 1.0, R));
        memcpy(W, Gs, (size_t)q->tx * es);
        SLA_TRY(sla_dist_spmv(opt, -1.0, &s->A, C, 1, q->nrhs, 1.0, W));
        double wn, gn;
        SLA_TRY(sla_dist_vec_norm2(s->comm, s->A.dtype, q->tx, W, &wn));
        SLA_TRY(sla_dist_vec_norm2(s->comm, s->A.dtype, q->tx, Gs, &gn));
        double scale = ldexp(1.0, e);
        int n = op == SLA_OP_N;
        /* op = N: ∂a_s = Σ_j r[r_s]λ[c_s] − c[r_s]x[c_s] + z[r_s]w[c_s]; op = T: transposed */
        SLA_TRY(outer_add(s, scale, n ? R : Lam, n ? Lam : R, q->nrhs, tmp, dvalues, 1));
        SLA_TRY(outer_add(s, -scale, n ? C : X, n ? X : C, q->nrhs, tmp, dvalues, 0));
        if (wn > s->opt.rtol * gn) {            /* rank deficient: the minimum-norm term */
            st = dist_solver_run(s, opt, q->nrhs, X, Z, s->opt.atol, 0, &one);
            if (st < 0) return st;
            sla_solve_info_merge_scaled(info, &one, 0);
            SLA_TRY(outer_add(s, scale, n ? Z : W, n ? W : Z, q->nrhs, tmp, dvalues, 0));
        }
    }
    if (dB) scale_pow2(s->A.dtype, q->tb, e, C, dB);
    return info->converged ? SLA_OK : SLA_NOT_CONVERGED;
}

sla_status sla_dist_solver_lstsq_vjp(sla_dist_solver *s, sla_op op, int64_t nrhs, const void *B,
                                     const void *X, const void *G, void *dB, void *dvalues,
                                     sla_solve_info *info)
{
    sla_solve_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    info->reason = SLA_REASON_ERROR;
    SLA_CHECK_ARG(s, "solver is NULL");
    const sla_dist_pattern *P = s->pattern;
    lq_shape q = {.op = op, .nrhs = nrhs, .Lb = op == SLA_OP_T ? P->cols : P->rows,
                  .Lx = op == SLA_OP_T ? P->rows : P->cols};
    q.tb = s->A.batch * q.Lb->n * (nrhs > 0 ? nrhs : 0);
    q.tx = s->A.batch * q.Lx->n * (nrhs > 0 ? nrhs : 0);
    sla_status st = op == SLA_OP_N || op == SLA_OP_T
                        ? SLA_OK : sla_error_set(SLA_EINVAL, FUNC, "op = %d is not N or T", (int)op);
    if (st == SLA_OK && nrhs < 1) st = sla_error_set(SLA_EINVAL, FUNC, "nrhs = %lld < 1", (long long)nrhs);
    if (st == SLA_OK) st = lq_check(s, &q, B, X, G, dB, dvalues);
    int64_t same[4] = {op, nrhs, dB != NULL, dvalues != NULL};
    static const char *const names[4] = {"op", "nrhs", "(dB != NULL)", "(dvalues != NULL)"};
    SLA_TRY(dist_agree_same(s->comm, FUNC, st, 4, same, names));
    SLA_TRY(dist_agree(s->comm, FUNC, dist_solver_ready(s, op, FUNC)));
    size_t es = sla_dtype_size(s->A.dtype);
    int64_t nv = s->A.batch * sla_dist_pattern_nnz(P);
    double gmax = 0;
    for (int64_t i = 0; i < q.tx; i++)
        gmax = fmax(gmax, fabs(s->A.dtype == SLA_FLOAT64 ? ((const double *)G)[i]
                                                         : ((const float *)G)[i]));
    int rc = MPI_Allreduce(MPI_IN_PLACE, &gmax, 1, MPI_DOUBLE, MPI_MAX, s->comm);
    if (rc != MPI_SUCCESS) return dist_agree(s->comm, FUNC, dist_mpi_error(FUNC, "MPI_Allreduce", rc));
    dist_solver_info_init(s, info);
    info->iterations = 0;
    if (gmax == 0 || q.Lb->N == 0) {             /* g = 0 (or no rows): every term vanishes */
        if (dB) memset(dB, 0, (size_t)q.tb * es);
        if (dvalues) memset(dvalues, 0, (size_t)nv * es);
        return SLA_OK;
    }
    int e;
    frexp(gmax, &e);
    void *w[6] = {0}, *tmp = NULL;
    int64_t sizes[6] = {q.tb, q.tb, q.tb, q.tx, q.tx, q.tx};
    st = SLA_OK;
    for (int i = 0; i < 6; i++)
        if (!(w[i] = sla_malloc((size_t)sizes[i] + 1, es, "least-squares VJP work"))) st = SLA_ENOMEM;
    if (dvalues && !(tmp = sla_malloc((size_t)nv + 1, es, "outer product"))) st = SLA_ENOMEM;
    st = dist_agree(s->comm, FUNC, st);
    if (st == SLA_OK) {
        scale_pow2(s->A.dtype, q.tx, -e, G, w[5]);
        st = lq_run(s, &q, B, X, e, w, tmp, dB, dvalues, info);
        if (st < 0) st = sla_error_attribute(st, FUNC);
    }
    for (int i = 0; i < 6; i++) sla_free(w[i]);
    sla_free(tmp);
    if (st < 0) {
        info->converged = 0;
        info->reason = SLA_REASON_ERROR;
    }
    return st;
}
