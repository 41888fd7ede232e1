/* Private interface of the partitioners (partition*.c). Each fills part[i], the new rank of
 * this rank's owned row i, for the rows of a square pattern whose rows and columns are
 * distributed alike. Weights: nnz(row) + 1. */
#ifndef SLA_MPI_PARTITION_H
#define SLA_MPI_PARTITION_H

#include "mpi/dist.h"

/* The graph of A + Aᵀ without self loops, as a distributed pattern on A's layout (its diagonal
 * and off-diagonal blocks are the adjacency), and the vertex weights. */
typedef struct dist_graph {
    const sla_dist_pattern *A;
    sla_dist_pattern *G;
    int64_t n;             /* owned vertices */
    int64_t *w;            /* [n] nnz of the row of A + 1 */
} dist_graph;

/* Collective; func names the public function in messages. */
sla_status dist_graph_build(const sla_dist_pattern *A, const char *func, dist_graph *g);
void dist_graph_free(dist_graph *g);

/* The values of an owned int array at the ghost columns of P (one forward halo exchange).
 * ghost [P->nghost] caller-allocated. Collective; agreed. */
sla_status dist_ghost_ints(const sla_dist_pattern *P, const char *func, const int *owned,
                           int *ghost);

/* Each fills part[i] ∈ [0, nparts) (nparts ≥ 1: the rank count for sla_dist_partition, any
 * count for sla_dist_partition_parts). */
sla_status dist_part_contiguous(const dist_graph *g, const char *func, int nparts, int *part);
sla_status dist_part_metis(const dist_graph *g, const char *func, int nparts, int *part);
sla_status dist_part_scotch(const dist_graph *g, const char *func, int nparts, int *part);
sla_status dist_part_rcb(const dist_graph *g, const char *func, int nparts, int dim,
                         const double *coords, int *part);
sla_status dist_part_hilbert(const dist_graph *g, const char *func, int nparts, int dim,
                             const double *coords, int *part);

/* The figures of the distribution `part` (see sla_dist_partition_info). Collective. */
sla_status dist_part_info(const dist_graph *g, const char *func, const int *part,
                          sla_dist_partition_info *info);

/* Weighted quantiles by bisection (partition_quantile.c): for each of m searches s, the
 * smallest key K_s in [0, kmax] with W_s(key < K_s) ≥ target[s], W_s summed over the ranks by
 * below(ctx, m, mid, local sums) (MPI_Allreduce, exact int64). Keys are unsigned 128-bit.
 * Collective; iterations ⌈log2 kmax⌉. */
typedef unsigned __int128 dist_key;
typedef void (*dist_below_fn)(const void *ctx, int m, const dist_key *mid, int64_t *w);
sla_status dist_quantiles(MPI_Comm comm, const char *func, int m, const int64_t *target,
                          dist_key kmax, dist_below_fn below, const void *ctx, dist_key *cut);

/* A double as an unsigned integer of the same order (−0 just below +0). */
uint64_t dist_ordered_bits(double x);

#endif
