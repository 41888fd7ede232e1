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

sla_status dist_operator_init(dist_operator *o, const sla_dist_matrix *A, int64_t b,
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
    SLA_TRY(dist_spmv_prepare_transpose(P, func));
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
