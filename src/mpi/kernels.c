/* Dtype dispatch of the element-wise kernels (t_kernels.h). */
#include "mpi/dist.h"

#define SLA_TEMPLATE "mpi/t_kernels.h"
#include "core/instantiate.h"

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
