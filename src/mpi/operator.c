/* The distributed operator of the Krylov methods: y = op(A_b)·x by the split-phase SpMV of
 * spmv.c on halo buffers allocated once per operator, so an iteration allocates nothing. The
 * range space is the row layout's owned entries, the domain the column layout's (the same
 * space for a square matrix on one layout, as the methods other than LSQR need). */
#include <string.h>

#include "mpi/dsolver.h"
#include "core/kernels.h"

/* bytes one local SpMV moves (values, column indices, row pointers, x and y): the size by which
 * the host kernels decide whether to run their chunks on threads (sla_csr_bytes' rule) */
static double spmv_bytes(int64_t n, int64_t nnz, size_t es)
{
    return (double)nnz * (double)(es + 4) + (double)n * (double)(8 + 3 * es);
}

static sla_status apply(const sla_operator *A, sla_op op, const void *x, void *y)
{
    dist_operator *o = A->ctx;
    return dist_spmv_vec(&o->A1, op, x, y, &o->buf, o->ghost);
}

/* y_i += Σ_k O_ik g_k over the rows with off-diagonal entries (the pattern's list: no pass over
 * every row's pointers), and *d = Σ_i x_i·(O g)_i */
#define OFFD_DOT(REAL)                                                                        \
    do {                                                                                      \
        const REAL *v = vals, *gg = g, *xx = x;                                               \
        REAL *yy = y;                                                                         \
        for (int64_t q = 0; q < P->n_offd_rows; q++) {                                        \
            int64_t i = P->offd_rows[q];                                                      \
            REAL s = 0;                                                                       \
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) s += v[k] * gg[ci[k]];                \
            yy[i] += s;                                                                       \
            acc += (double)xx[i] * (double)s;                                                 \
        }                                                                                     \
    } while (0)

static double offd_dot(sla_dtype dt, const sla_dist_pattern *P, const void *vals, const void *g,
                       const void *x, void *y)
{
    const int64_t *rp = sla_pattern_rowptr(P->offd);
    const int32_t *ci = sla_pattern_colind(P->offd);
    double acc = 0;
    if (dt == SLA_FLOAT64) OFFD_DOT(double);
    else OFFD_DOT(float);
    return acc;
}

/* y = A x and *xy = xᵀy (CG's pᵀAp) in one pass over y: the halo exchange posted, the diagonal
 * block by libsla's fused CSR SpMV + dot, the exchange finished, the off-diagonal block fused
 * with its part of the dot; one reduction. op = T: the product, then the space's dot. */
static sla_status apply_dot(const sla_operator *A, sla_op op, const void *x, void *y,
                            double *xy)
{
    dist_operator *o = A->ctx;
    if (op == SLA_OP_T) {
        SLA_TRY(dist_spmv_vec(&o->A1, op, x, y, &o->buf, o->ghost));
        return A->domain->dot(A->domain, x, y, xy);
    }
    const sla_dist_pattern *P = o->A1.pattern;
    SLA_TRY(dist_halo_start(P, &o->buf, x, o->ghost));
    double d = 0;
    sla_status st = o->dcsr.op.apply_dot(&o->dcsr.op, SLA_OP_N, x, y, &d);
    sla_status sf = dist_halo_finish(P, &o->buf, o->ghost);
    SLA_TRY(st);
    SLA_TRY(sf);
    size_t es = sla_dtype_size(o->A1.dtype);
    const char *ov = (const char *)o->A1.values + (size_t)P->nnz_diag * es;
    d += offd_dot(o->A1.dtype, P, ov, o->ghost, x, y);
    SLA_TRY(A->range->reduce(A->range, SLA_REDUCE_SUM, &d, 1));
    *xy = d;
    return SLA_OK;
}

sla_status dist_operator_init(dist_operator *o, const sla_dist_matrix *A, int64_t b, int need_transpose,
                              const char *func)
{
    memset(o, 0, sizeof *o);
    const sla_dist_pattern *P = A->pattern;
    size_t es = sla_dtype_size(A->dtype);
    int64_t nnz = sla_dist_pattern_nnz(P);
    o->A1 = sla_dist_matrix_view(P, A->dtype, 1,
                                 A->values ? (const char *)A->values + (size_t)(b * nnz) * es : NULL);
    double bytes = spmv_bytes(P->rows->n, nnz, es);
    dist_space_init(&o->range, P->comm, P->rows->n, A->dtype, bytes);
    int square = P->rows == P->cols;
    if (!square) dist_space_init(&o->domain, P->comm, P->cols->n, A->dtype, bytes);
    o->op = (sla_operator){.range = &o->range.V, .domain = square ? &o->range.V : &o->domain.V,
                           .ctx = o, .apply = apply, .threading = SLA_THREADS_CALLER};
    if (square) {
        o->diag = sla_matrix_view(P->diag, A->dtype, 1, o->A1.values);
        sla_csr_operator_init(&o->dcsr, &o->diag, 0, sla_host_space_chunks(P->rows->n, bytes), 0,
                              1);
        o->op.apply_dot = apply_dot;
    }
    /* the transposed local blocks (cached in the patterns) only when Aᵀ is applied */
    if (need_transpose) SLA_TRY(dist_spmv_prepare_transpose(P, func));
    SLA_TRY(dist_halo_buf_init(&o->buf, P, es, 1, 1, func));
    o->ghost = sla_malloc((size_t)(P->nghost ? P->nghost : 1), es, "ghost values");
    if (!o->ghost) return sla_error_attribute(SLA_ENOMEM, func);
    return SLA_OK;
}

void dist_operator_free(dist_operator *o)
{
    dist_halo_buf_free(&o->buf);
    sla_free(o->ghost);
    o->ghost = NULL;
}
