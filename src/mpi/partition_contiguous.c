/* Contiguous ranges in global order balanced by weight (nnz + 1 per row): part t starts at the
 * first row whose preceding weight reaches t·W/p, as sla_partition_rows does for threads.
 * The weights travel to the directory block of their row (the ranks' even blocks of the index
 * range), where an exclusive scan gives each row its preceding weight; the part goes back. */
#include "mpi/partition.h"

/* part of a row preceded by weight c: #{t in 1..p−1 : ⌊W·t/p⌋ ≤ c} = min(p − 1, ⌈(c+1)·p/W⌉ − 1) */
static int part_of(int64_t c, int64_t W, int p)
{
    unsigned __int128 a = (unsigned __int128)(c + 1) * (unsigned)p;
    int64_t t = (int64_t)((a + (unsigned __int128)W - 1) / (unsigned __int128)W) - 1;
    return t < p - 1 ? (int)t : p - 1;
}

sla_status dist_part_contiguous(const dist_graph *g, const char *func, int nparts, int *part)
{
    const sla_dist_layout *L = g->A->rows;
    int64_t lo = dist_block_lo(L->N, L->size, L->rank);
    int64_t nb = dist_block_lo(L->N, L->size, L->rank + 1) - lo;
    dist_xchg X;
    int64_t *send = NULL, *recv = NULL, *wb = NULL;
    sla_status st = dist_xchg_init(&X, L->size, func);
    if (st == SLA_OK) {
        send = sla_malloc((size_t)g->n * 2, sizeof *send, "weights");
        wb = sla_malloc((size_t)nb, sizeof *wb, "block weights");
        if (!send || !wb) st = sla_error_attribute(SLA_ENOMEM, func);
    }
    st = dist_agree(L->comm, func, st);
    if (st == SLA_OK) {
        /* owned rows are ascending, so their blocks are too: the send order is the owned order */
        for (int64_t i = 0; i < g->n; i++) {
            X.scount[dist_block_of(L->N, L->size, L->global[i])]++;
            send[2 * i] = L->global[i];
            send[2 * i + 1] = g->w[i];
        }
        st = dist_xchg_counts(&X, L->comm, func);
    }
    if (st == SLA_OK) {
        recv = sla_malloc((size_t)nb * 2, sizeof *recv, "block weights");
        st = dist_agree(L->comm, func, recv ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(&X, L->comm, func, 2 * sizeof(int64_t), send, recv, 0);
    int64_t before = 0, sum[2] = {0, 0};
    if (st == SLA_OK) {
        for (int64_t e = 0; e < nb; e++) wb[recv[2 * e] - lo] = recv[2 * e + 1];
        for (int64_t e = 0; e < nb; e++) sum[0] += wb[e];
        sum[1] = sum[0];
        int rc = MPI_Exscan(&sum[0], &before, 1, MPI_INT64_T, MPI_SUM, L->comm);
        if (rc == MPI_SUCCESS) rc = MPI_Allreduce(MPI_IN_PLACE, &sum[1], 1, MPI_INT64_T, MPI_SUM, L->comm);
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Exscan", rc);
        if (L->rank == 0) before = 0;          /* MPI_Exscan leaves rank 0's undefined */
    }
    if (st == SLA_OK) {
        /* wb becomes the weight preceding each row of the block; the answer for received
         * row e (in the received order, overwriting its pair) goes back along the exchange */
        for (int64_t j = 0, c = before; j < nb; j++) {
            int64_t w = wb[j];
            wb[j] = c;
            c += w;
        }
        for (int64_t e = 0; e < nb; e++) recv[e] = part_of(wb[recv[2 * e] - lo], sum[1], nparts);
        st = dist_xchg_run(&X, L->comm, func, sizeof(int64_t), recv, send, 1);
    }
    for (int64_t i = 0; st == SLA_OK && i < g->n; i++) part[i] = (int)send[i];
    dist_xchg_free(&X);
    sla_free(send);
    sla_free(recv);
    sla_free(wb);
    return st;
}
