/* The distributed vector space of the Krylov methods: this rank's owned entries in host memory
 * (libsla's host space, so the methods run the kernels the serial solvers run), with a reduce
 * hook that combines the process partials across the ranks. Sums go through sla_dist_allsum's
 * recursive-doubling tree of fixed shape, so every rank holds the same bits and a rerun with the
 * same rank count and partition gives them again; maxima through MPI_Allreduce (exact in any
 * order). A space is not `concurrent`: one solve at a time, from the calling thread. */
#include "mpi/dsolver.h"

static sla_status reduce(const sla_space *V, sla_reduce_op op, double *values, int count)
{
    const dist_space *d = V->reduce_ctx;
    if (op == SLA_REDUCE_SUM) return sla_dist_allsum(d->comm, count, values, values);
    int rc = MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX, d->comm);
    return rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error("distributed Krylov space", "MPI_Allreduce", rc);
}

void dist_space_init(dist_space *d, MPI_Comm comm, int64_t n, sla_dtype dtype, double bytes)
{
    d->comm = comm;
    sla_host_space_init(&d->V, &d->host, n, dtype, sla_host_space_chunks(n, bytes), NULL);
    d->V.concurrent = 0;
    d->V.reduce = reduce;
    d->V.reduce_ctx = d;
}
