/* Distributed y = alpha·op(A)·x + beta·y and its vector–Jacobian product.
 *
 * op = N:  post the forward halo exchange of x; y = alpha·A_diag·x_owned + beta·y; finish the
 *          exchange; y += alpha·A_offd·x_ghost (hypre_ParCSRMatrixMatvec's order).
 * op = T:  post the receives of the reverse exchange; z = alpha·A_offdᵀ·x (ghost
 *          contributions); send z back to the ghosts' owners; y = alpha·A_diagᵀ·x + beta·y;
 *          finish: add the contributions into y, neighbour by neighbour in rank order.
 * The local products are sla_spmv() on one batch element at a time (a rank's values are
 * [batch][diag | offd], so a block's batch elements are nnz_local apart). */
#include <string.h>

#include "mpi/dist.h"
#include "core/kernels.h"

/* p + bytes, NULL kept NULL (an empty block may be NULL). */
static const void *off(const void *p, size_t bytes) { return p ? (const char *)p + bytes : NULL; }
static void *woff(void *p, size_t bytes) { return p ? (char *)p + bytes : NULL; }

/* One batch element of one block of A as an sla_matrix. */
static sla_matrix block_view(const sla_dist_matrix *A, int offd, int64_t b)
{
    const sla_dist_pattern *P = A->pattern;
    size_t es = sla_dtype_size(A->dtype);
    size_t at = ((size_t)b * (size_t)sla_dist_pattern_nnz(P) + (offd ? (size_t)P->nnz_diag : 0)) * es;
    return sla_matrix_view(offd ? P->offd : P->diag, A->dtype, 1, off(A->values, at));
}

/* The shape of one distributed product: local sizes and strides (elements). */
typedef struct dist_op {
    const sla_dist_matrix *A;
    int64_t k, nr, nc, ng;    /* local rows, owned columns, ghost columns */
    size_t es;
} dist_op;

static dist_op op_init(const sla_dist_matrix *A, int64_t k)
{
    const sla_dist_pattern *P = A->pattern;
    return (dist_op){A, k, P->rows->n, P->cols->n, P->nghost, sla_dtype_size(A->dtype)};
}

/* Byte offset of batch element b of an [n][k] block. */
static size_t blk(const dist_op *o, int64_t b, int64_t n) { return (size_t)(b * n * o->k) * o->es; }

enum { PART_DIAG = 1, PART_OFFD = 2 };

/* The `parts` of y_b = alpha·A_b·x + beta·y_b for b < batch, the ghosts of x in `ghost`
 * ([xb][ng][k]; needed for PART_OFFD only), x's batch elements apart if x_batched. beta
 * applies with PART_DIAG (PART_OFFD adds). accumulate: one y = Σ_b alpha·A_b·x_b + beta·y (the
 * broadcast x's gradient), batch elements added in order. */
static sla_status local_n(const dist_op *o, double alpha, const void *x, const void *ghost,
                          int x_batched, double beta, void *y, int accumulate, int parts)
{
    const sla_dist_matrix *A = o->A;
    const sla_dist_pattern *P = A->pattern;
    for (int64_t b = 0; b < A->batch; b++) {
        int64_t xb = x_batched ? b : 0, yb = accumulate ? 0 : b;
        double bd = accumulate && b > 0 ? 1.0 : beta;
        sla_matrix D = block_view(A, 0, b), O = block_view(A, 1, b);
        if (parts & PART_DIAG)
            SLA_TRY(sla_spmv(SLA_OP_N, alpha, &D, off(x, blk(o, xb, o->nc)), 0, o->k, bd,
                             woff(y, blk(o, yb, o->nr))));
        /* the rows with ghosts only (a pass of sla_spmv over every local row would read the
         * row pointers and y once more: 1.2 ms of a 6 ms SpMV at 1M rows on one thread) */
        if ((parts & PART_OFFD) && P->n_offd_rows > 0)
            dist_offd_add(A->dtype, 1, o->k, o->nr, o->ng, P->nnz_offd, sla_pattern_rowptr(O.pattern),
                          sla_pattern_colind(O.pattern), P->n_offd_rows, P->offd_rows, alpha,
                          O.values, off(ghost, blk(o, xb, o->ng)), woff(y, blk(o, yb, o->nr)));
    }
    return SLA_OK;
}

/* y = alpha·A·x + beta·y, split phase; B for xb = (x_batched ? batch : 1) blocks. */
static sla_status run_n(const dist_op *o, double alpha, const void *x, int x_batched,
                        double beta, void *y, dist_halo_buf *B, void *ghost)
{
    const sla_dist_pattern *P = o->A->pattern;
    SLA_TRY(dist_halo_start(P, B, x, ghost));
    sla_status st = local_n(o, alpha, x, ghost, x_batched, beta, y, 0, PART_DIAG);
    sla_status sf = dist_halo_finish(P, B, ghost);
    SLA_TRY(st);
    SLA_TRY(sf);
    return local_n(o, alpha, x, ghost, x_batched, beta, y, 0, PART_OFFD);
}

/* y = alpha·Aᵀ·x + beta·y (x in the row space, y in the column space), split phase with the
 * reverse exchange; z [batch][ng][k] holds the ghost contributions, B has batch blocks.
 * accumulate: one y = Σ_b alpha·A_bᵀ·x_b + beta·y (the broadcast x's gradient). */
static sla_status run_t(const dist_op *o, double alpha, const void *x, int x_batched,
                        double beta, void *y, dist_halo_buf *B, void *z, int accumulate)
{
    const sla_dist_matrix *A = o->A;
    const sla_dist_pattern *P = A->pattern;
    SLA_TRY(dist_halo_rstart(P, B));
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < A->batch && st == SLA_OK; b++) {
        sla_matrix O = block_view(A, 1, b);
        st = sla_spmv(SLA_OP_T, alpha, &O, off(x, blk(o, x_batched ? b : 0, o->nr)), 0, o->k,
                      0.0, woff(z, blk(o, b, o->ng)));
    }
    sla_status ss = dist_halo_rsend(P, B, z);
    for (int64_t b = 0; b < A->batch && st == SLA_OK; b++) {
        sla_matrix D = block_view(A, 0, b);
        double bd = accumulate && b > 0 ? 1.0 : beta;
        st = sla_spmv(SLA_OP_T, alpha, &D, off(x, blk(o, x_batched ? b : 0, o->nr)), 0, o->k, bd,
                      woff(y, blk(o, accumulate ? 0 : b, o->nc)));
    }
    sla_status sf = dist_halo_rfinish(P, B, A->dtype, accumulate, y);
    SLA_TRY(st);
    SLA_TRY(ss);
    return sf;
}

/* Local checks shared by the product and its VJP. */
static sla_status check_product(const char *func, sla_op op, const sla_dist_matrix *A,
                                int x_batched, int64_t k)
{
    SLA_TRY(dist_matrix_check_local(func, A));
    if (op != SLA_OP_N && op != SLA_OP_T)
        return sla_error_set(SLA_EINVAL, func, "op = %d is not SLA_OP_N or SLA_OP_T", (int)op);
    if (k < 1) return sla_error_set(SLA_EINVAL, func, "k = %lld < 1", (long long)k);
    return sla_check_flag(func, "x_batched", x_batched);
}

/* Bytes of A's local values. */
static size_t values_bytes(const sla_dist_matrix *A)
{
    return (size_t)(A->batch * sla_dist_pattern_nnz(A->pattern)) * sla_dtype_size(A->dtype);
}

/* The transposed local blocks (built on the first op = T: may fail, before any message). */
static sla_status prepare_transpose(const char *func, const sla_dist_pattern *P)
{
    const sla_pattern *t;
    const int64_t *perm;
    sla_status st = sla_pattern_cached_transpose(P->diag, &t, &perm);
    if (st == SLA_OK) st = sla_pattern_cached_transpose(P->offd, &t, &perm);
    return sla_error_attribute(st, func);
}

/* Work arrays of one product: halo buffers for nb blocks and a [nb][ng][k] ghost block. */
typedef struct work { dist_halo_buf B; void *ghost; } work;

static sla_status work_init(work *w, const dist_op *o, int64_t nb, const char *func)
{
    memset(w, 0, sizeof *w);
    SLA_TRY(dist_halo_buf_init(&w->B, o->A->pattern, o->es, o->k, nb, func));
    w->ghost = sla_malloc((size_t)(nb * o->ng * o->k), o->es, "ghost values");
    if (!w->ghost) {
        dist_halo_buf_free(&w->B);
        return sla_error_attribute(SLA_ENOMEM, func);
    }
    return SLA_OK;
}

static void work_free(work *w)
{
    dist_halo_buf_free(&w->B);
    sla_free(w->ghost);
    w->ghost = NULL;
}

/* Agreement on the status and on the arguments every rank must share. */
static sla_status agree_args(const sla_dist_pattern *P, const char *func, sla_status st,
                             sla_op op, const sla_dist_matrix *A, int x_batched, int64_t k,
                             int dx, int dvalues)
{
    int64_t same[7] = {op, k, A->batch, x_batched, A->dtype, dx, dvalues};
    static const char *const names[7] = {"op", "k", "A->batch", "x_batched", "A->dtype",
                                         "(dx != NULL)", "(dvalues != NULL)"};
    return dist_agree_same(P->comm, func, st, 7, same, names);
}

sla_status sla_dist_spmv(sla_op op, double alpha, const sla_dist_matrix *A, const void *x,
                         int x_batched, int64_t k, double beta, void *y)
{
    SLA_CHECK_ARG(A && A->pattern, "%s is NULL", A ? "A->pattern" : "A");
    const sla_dist_pattern *P = A->pattern;
    sla_status st = check_product(__func__, op, A, x_batched, k);
    dist_op o = op_init(A, k);
    int64_t xb = x_batched ? A->batch : 1, nx = op == SLA_OP_N ? o.nc : o.nr;
    int64_t ny = op == SLA_OP_N ? o.nr : o.nc, cx, cy;
    work w = {0};
    if (st == SLA_OK) st = sla_check_block(__func__, "x", x, xb, nx, k, &cx);
    if (st == SLA_OK) st = sla_check_block(__func__, "y", y, A->batch, ny, k, &cy);
    if (st == SLA_OK)
        st = sla_check_overlap(__func__, "y", y, (size_t)cy * o.es, "x", x, (size_t)cx * o.es);
    if (st == SLA_OK)
        st = sla_check_overlap(__func__, "y", y, (size_t)cy * o.es, "A's values", A->values,
                               values_bytes(A));
    if (st == SLA_OK && op == SLA_OP_T) st = prepare_transpose(__func__, P);
    if (st == SLA_OK) st = work_init(&w, &o, op == SLA_OP_N ? xb : A->batch, __func__);
    st = agree_args(P, __func__, st, op, A, x_batched, k, 0, 0);
    if (st == SLA_OK)
        st = op == SLA_OP_N ? run_n(&o, alpha, x, x_batched, beta, y, &w.B, w.ghost)
                            : run_t(&o, alpha, x, x_batched, beta, y, &w.B, w.ghost, 0);
    work_free(&w);
    return sla_error_attribute(st, __func__);
}

/* y = op(A)·x for one vector (k = 1, batch 1) on buffers the caller keeps (the Krylov
 * operator, operator.c): no checks, no agreement, no allocation. */
sla_status dist_spmv_vec(const sla_dist_matrix *A, sla_op op, const void *x, void *y,
                         dist_halo_buf *B, void *ghost)
{
    dist_op o = op_init(A, 1);
    return op == SLA_OP_N ? run_n(&o, 1.0, x, 1, 0.0, y, B, ghost)
                          : run_t(&o, 1.0, x, 1, 0.0, y, B, ghost, 0);
}

sla_status dist_spmv_prepare_transpose(const sla_dist_pattern *P, const char *func)
{
    return prepare_transpose(func, P);
}

/* dvalues (zeroed first) += the pattern outer products of each batch element:
 * ∂a_s = alpha·⟨u[r_s], v[c_s]⟩ with u in the row space ([ub][nr][k]) and v in the column
 * space, owned part v ([vb][nc][k]) and ghost part vg ([vb][ng][k]). */
static sla_status outer(const dist_op *o, double alpha, const void *u, int u_batched,
                        const void *v, const void *vg, int v_batched, void *dvalues)
{
    const sla_dist_matrix *A = o->A;
    const sla_dist_pattern *P = A->pattern;
    int64_t nloc = sla_dist_pattern_nnz(P);
    memset(dvalues, 0, values_bytes(A));
    for (int64_t b = 0; b < A->batch; b++) {
        const void *ub = off(u, blk(o, u_batched ? b : 0, o->nr));
        int64_t vb = v_batched ? b : 0;
        char *d = (char *)dvalues + (size_t)(b * nloc) * o->es;
        SLA_TRY(sla_pattern_outer_add(P->diag, A->dtype, 1, alpha, ub, 0,
                                      off(v, blk(o, vb, o->nc)), 0, o->k, d));
        SLA_TRY(sla_pattern_outer_add(P->offd, A->dtype, 1, alpha, ub, 0,
                                      off(vg, blk(o, vb, o->ng)), 0, o->k,
                                      d + (size_t)P->nnz_diag * o->es));
    }
    return SLA_OK;
}

/* Local argument checks of the VJP. */
static sla_status check_vjp(const char *func, const dist_op *o, sla_op op, int x_batched,
                            const void *x, const void *g, const void *dx, const void *dvalues)
{
    const sla_dist_matrix *A = o->A;
    int64_t m = op == SLA_OP_N ? o->nr : o->nc, n = op == SLA_OP_N ? o->nc : o->nr;
    int64_t xb = x_batched ? A->batch : 1, cg, cx = 0;
    SLA_TRY(sla_check_block(func, "g", g, A->batch, m, o->k, &cg));
    if (dvalues) SLA_TRY(sla_check_block(func, "x", x, xb, n, o->k, &cx));
    if (dx) SLA_TRY(sla_check_block(func, "dx", dx, xb, n, o->k, &cx));
    size_t xs = (size_t)cx * o->es, vs = values_bytes(A);
    sla_buf outs[2] = {{"dx", dx, xs}, {"dvalues", dvalues, vs}};
    sla_buf ins[3] = {{"g", g, (size_t)cg * o->es}, {"x", x, xs}, {"A's values", A->values, vs}};
    return sla_check_aliasing(func, outs, 2, ins, 3);
}

sla_status sla_dist_spmv_vjp(sla_op op, double alpha, const sla_dist_matrix *A, const void *x,
                             int x_batched, int64_t k, const void *g, void *dx, void *dvalues)
{
    SLA_CHECK_ARG(A && A->pattern, "%s is NULL", A ? "A->pattern" : "A");
    const sla_dist_pattern *P = A->pattern;
    sla_status st = check_product(__func__, op, A, x_batched, k);
    dist_op o = op_init(A, k);
    int64_t xb = x_batched ? A->batch : 1;
    work wt = {0}, wf = {0};
    if (st == SLA_OK) st = check_vjp(__func__, &o, op, x_batched, x, g, dx, dvalues);
    /* op = N: dx by the reverse exchange (wt), dvalues with x's ghosts (wf); op = T: both
     * with g's ghosts (wf) */
    if (st == SLA_OK && op == SLA_OP_N && dx) st = prepare_transpose(__func__, P);
    if (st == SLA_OK && op == SLA_OP_N && dx) st = work_init(&wt, &o, A->batch, __func__);
    if (st == SLA_OK && (op == SLA_OP_T || dvalues))
        st = work_init(&wf, &o, op == SLA_OP_N ? xb : A->batch, __func__);
    st = agree_args(P, __func__, st, op, A, x_batched, k, dx != NULL, dvalues != NULL);
    if (st == SLA_OK && op == SLA_OP_N) {
        if (dx) st = run_t(&o, alpha, g, 1, 0.0, dx, &wt.B, wt.ghost, !x_batched);
        sla_status sh = SLA_OK;
        if (dvalues) {
            sh = dist_halo_start(P, &wf.B, x, wf.ghost);
            if (sh == SLA_OK) sh = dist_halo_finish(P, &wf.B, wf.ghost);
        }
        if (st == SLA_OK) st = sh;
        if (st == SLA_OK && dvalues) st = outer(&o, alpha, g, 1, x, wf.ghost, x_batched, dvalues);
    } else if (st == SLA_OK) {
        st = dist_halo_start(P, &wf.B, g, wf.ghost);
        sla_status sd = dx ? local_n(&o, alpha, g, NULL, 1, 0.0, dx, !x_batched, PART_DIAG)
                           : SLA_OK;
        sla_status sf = dist_halo_finish(P, &wf.B, wf.ghost);
        if (st == SLA_OK) st = sd;
        if (st == SLA_OK) st = sf;
        if (st == SLA_OK && dx)
            st = local_n(&o, alpha, g, wf.ghost, 1, 0.0, dx, !x_batched, PART_OFFD);
        if (st == SLA_OK && dvalues)
            st = outer(&o, alpha, x, x_batched, g, wf.ghost, 1, dvalues);
    }
    work_free(&wt);
    work_free(&wf);
    return sla_error_attribute(st, __func__);
}
