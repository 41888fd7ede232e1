/* The real halo plan of a grid distribution, beside the model's count (halo_model.h): used by
 * bench_mpi_model (validation at np ranks) and tests/mpi/test_mpi_model.c (asserted).
 *
 * hr_build() assembles the grid Laplacian's pattern on the balanced contiguous layout (each
 * rank its own rows), optionally repartitions it with a libsla_mpi partitioner (coordinates
 * given for RCB and Hilbert), rebuilds the pattern on the new layout, and returns this rank's
 * halo figures from sla_dist_pattern_halo() together with the partition vector part[N] of the
 * final layout, the same on every rank (allgathered), for hm_halo(). Collective. */
#ifndef SLA_BENCH_HALO_REAL_H
#define SLA_BENCH_HALO_REAL_H

#include <sla/mpi.h>

#include "halo_model.h"

typedef struct hr_result {
    hm_part_stats mine;          /* this rank's figures from the real halo plan */
    int *part;                   /* [N] owner of each global index (malloc'ed) */
    sla_dist_partition_info info;
} hr_result;

/* COO of rows [r0, r1) of g's Laplacian pattern (values not needed). */
static int64_t hr_rows(const hm_grid *g, int64_t r0, int64_t r1, int64_t *row, int64_t *col)
{
    int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2], k = 0;
    for (int64_t v = r0; v < r1; v++) {
        int64_t x = v % nx, y = (v / nx) % ny, z = v / (nx * ny);
        int64_t adj[7] = {v, x > 0 ? v - 1 : -1, x < nx - 1 ? v + 1 : -1, y > 0 ? v - nx : -1,
                          y < ny - 1 ? v + nx : -1, z > 0 ? v - nx * ny : -1,
                          z < nz - 1 ? v + nx * ny : -1};
        for (int q = 0; q < 7; q++)
            if (adj[q] >= 0) row[k] = v, col[k++] = adj[q];
    }
    return k;
}

/* method < 0: keep the contiguous layout. Returns the first failing status. */
static sla_status hr_build(MPI_Comm comm, const hm_grid *g, int method, hr_result *res)
{
    int64_t N = hm_size(g);
    sla_dist_layout *L0 = NULL, *L = NULL;
    sla_dist_pattern *P0 = NULL, *P = NULL;
    sla_status st = sla_dist_layout_create(comm, N, -1, &L0);
    if (st) return st;
    int64_t n0 = sla_dist_layout_local_size(L0), r0 = n0 ? sla_dist_layout_global(L0)[0] : 0;
    int64_t *row = malloc(sizeof *row * (size_t)(7 * n0 + 1));
    int64_t *col = malloc(sizeof *col * (size_t)(7 * n0 + 1));
    double *xyz = malloc(sizeof *xyz * (size_t)(3 * n0 + 1));
    int64_t nnz = hr_rows(g, r0, r0 + n0, row, col);
    for (int64_t i = 0; i < n0; i++) {
        int64_t v = r0 + i;
        xyz[g->dim * i] = (double)(v % g->n[0]);
        xyz[g->dim * i + 1] = (double)((v / g->n[0]) % g->n[1]);
        if (g->dim == 3) xyz[3 * i + 2] = (double)(v / (g->n[0] * g->n[1]));
    }
    st = sla_dist_pattern_from_coo(L0, L0, nnz, row, col, &P0);
    if (!st && method >= 0) {
        st = sla_dist_partition(P0, (sla_dist_partitioner)method, g->dim, xyz, &L, &res->info);
        if (!st) st = sla_dist_pattern_from_coo(L, L, nnz, row, col, &P);
    } else if (!st) {
        P = sla_dist_pattern_retain(P0);
        L = sla_dist_layout_retain(L0);
        st = sla_dist_pattern_info(P, &res->info);
    }
    sla_dist_halo_info h;
    if (!st) st = sla_dist_pattern_halo(P, &h);
    if (!st) {
        int64_t ng;
        sla_dist_pattern_ghosts(P, &ng);
        res->mine.rows = sla_dist_layout_local_size(L);
        res->mine.ghosts = ng;
        res->mine.sends = h.send_ptr[h.nsend];
        res->mine.neighbours = h.nrecv;
        /* the owner of every global index, on every rank */
        int size, rank, cnt = (int)res->mine.rows;
        MPI_Comm_size(comm, &size);
        MPI_Comm_rank(comm, &rank);
        int *counts = malloc(sizeof *counts * (size_t)size), *displs = malloc(sizeof *displs * (size_t)size);
        int64_t *glob = malloc(sizeof *glob * (size_t)(N + 1));
        MPI_Allgather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, comm);
        displs[0] = 0;
        for (int r = 1; r < size; r++) displs[r] = displs[r - 1] + counts[r - 1];
        MPI_Allgatherv(sla_dist_layout_global(L), cnt, MPI_INT64_T, glob, counts, displs,
                       MPI_INT64_T, comm);
        res->part = malloc(sizeof *res->part * (size_t)(N + 1));
        for (int r = 0; r < size; r++)
            for (int k = 0; k < counts[r]; k++) res->part[glob[displs[r] + k]] = r;
        free(counts), free(displs), free(glob);
    }
    free(row), free(col), free(xyz);
    sla_dist_pattern_free(&P);
    sla_dist_pattern_free(&P0);
    sla_dist_layout_free(&L);
    sla_dist_layout_free(&L0);
    return st;
}

#endif
