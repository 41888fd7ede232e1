/* Exact weighted quantiles over the ranks by bisection on integer keys: the building block of
 * the coordinate partitioners. Keys are unique ((coordinate or curve index)·N + global index),
 * so every cut exists and equal coordinates still split. Weights are integers, summed exactly
 * (MPI_Allreduce of int64), so every rank takes the same branch at every step. */
#include <string.h>

#include "mpi/partition.h"

uint64_t dist_ordered_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 63 ? ~u : u | (1ull << 63);
}

sla_status dist_quantiles(MPI_Comm comm, const char *func, int m, const int64_t *target,
                          dist_key kmax, dist_below_fn below, const void *ctx, dist_key *cut)
{
    dist_key *lo = sla_malloc((size_t)m, sizeof *lo, "quantile bounds");
    dist_key *mid = sla_malloc((size_t)m, sizeof *mid, "quantile bounds");
    int64_t *w = sla_malloc((size_t)m, sizeof *w, "quantile weights");
    sla_status st = lo && mid && w ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(comm, func, st);
    /* invariant: W(key < lo) < target ≤ W(key < cut); a target ≤ 0 cuts at 0 */
    for (int s = 0; st == SLA_OK && s < m; s++) {
        lo[s] = 0;
        cut[s] = target[s] <= 0 ? 0 : kmax;
    }
    for (int active = 1; st == SLA_OK && active;) {
        active = 0;
        for (int s = 0; s < m; s++) {
            mid[s] = cut[s] - lo[s] > 1 ? lo[s] + (cut[s] - lo[s]) / 2 : cut[s];
            active |= cut[s] - lo[s] > 1;
        }
        if (!active) break;
        below(ctx, m, mid, w);
        int rc = MPI_Allreduce(MPI_IN_PLACE, w, m, MPI_INT64_T, MPI_SUM, comm);
        if (rc != MPI_SUCCESS) {
            st = dist_mpi_error(func, "MPI_Allreduce", rc);
            break;
        }
        for (int s = 0; s < m; s++)
            if (cut[s] - lo[s] > 1) {
                if (w[s] >= target[s]) cut[s] = mid[s]; else lo[s] = mid[s];
            }
    }
    sla_free(lo);
    sla_free(mid);
    sla_free(w);
    return st;
}
