/* Dtype dispatch of the element-wise kernels (t_kernels.h). */
#include "mpi/dist.h"

#define SLA_TEMPLATE "mpi/t_kernels.h"
#include "core/instantiate.h"

void dist_offd_add(sla_dtype dtype, int64_t batch, int64_t k, int64_t nr, int64_t ng, int64_t nnz,
                   const int64_t *rp, const int32_t *ci, int64_t n_rows, const int64_t *rows,
                   double alpha, const void *va, const void *g, void *y)
{
    SLA_DISPATCH(dtype, offd_add, (batch, k, nr, ng, nnz, rp, ci, n_rows, rows, alpha, va, g, y));
}

sla_status dist_offd_rows(sla_dist_pattern *P)
{
    int64_t nr = sla_pattern_nrows(P->offd), m = 0;
    const int64_t *rp = sla_pattern_rowptr(P->offd);
    for (int64_t r = 0; r < nr; r++) m += rp[r + 1] > rp[r];
    P->offd_rows = sla_malloc((size_t)(m > 0 ? m : 1), sizeof(int64_t), "rows with ghosts");
    if (!P->offd_rows) return SLA_ENOMEM;
    P->n_offd_rows = m;
    for (int64_t r = 0, i = 0; r < nr; r++)
        if (rp[r + 1] > rp[r]) P->offd_rows[i++] = r;
    return SLA_OK;
}

void dist_add_rows(sla_dtype dtype, int64_t nb, int64_t k, int64_t ny, int64_t n,
                   const int64_t *idx, const void *buf, void *y)
{
    SLA_DISPATCH(dtype, add_rows, (nb, k, ny, n, idx, buf, y));
}

void dist_gather_slots(sla_dtype dtype, int64_t batch, int64_t nloc, int64_t nrecv,
                       const int64_t *slot, const void *recv, void *local)
{
    SLA_DISPATCH(dtype, gather_slots, (batch, nloc, nrecv, slot, recv, local));
}
