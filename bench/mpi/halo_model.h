/* The halo counts of the scaling model (bench_mpi_model.c; checked against libsla_mpi's real
 * halo plans by tests/mpi/test_mpi_model.c).
 *
 * A grid graph (5-point in 2D, 7-point in 3D, row-major numbering x fastest, as the grid
 * Laplacians of the benchmarks) is split into P parts by part[v] ∈ [0, P). For each part the
 * halo plan libsla_mpi would build for that distribution is counted without building it:
 *   ghosts      distinct vertices of other parts adjacent to the part (its ghost columns,
 *               the values it receives per SpMV),
 *   sends       Σ over neighbour parts q of the part's vertices adjacent to q (the values it
 *               sends; for a symmetric pattern, the ghosts the others hold of it),
 *   neighbours  parts it receives from (messages per SpMV; equal to the parts it sends to).
 * Partitions: contiguous strips of global indices balanced by count (sla_dist_layout_create
 * with n_local = −1) and recursive coordinate bisection of the box (Berger & Bokhari 1987),
 * cut along the longest axis in proportion to the part counts of the two halves. */
#ifndef SLA_BENCH_HALO_MODEL_H
#define SLA_BENCH_HALO_MODEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct hm_grid {
    int dim;          /* 2 or 3 */
    int64_t n[3];     /* points per axis; n[2] = 1 in 2D */
} hm_grid;

typedef struct hm_part_stats {
    int64_t rows, ghosts, sends, neighbours;
} hm_part_stats;

static inline int64_t hm_size(const hm_grid *g) { return g->n[0] * g->n[1] * g->n[2]; }

/* Balanced contiguous strips: part p owns ⌊N/P⌋ or ⌊N/P⌋ + 1 indices, the larger first. */
static void hm_part_contiguous(const hm_grid *g, int P, int *part)
{
    int64_t N = hm_size(g), q = N / P, r = N % P, v = 0;
    for (int p = 0; p < P; p++)
        for (int64_t k = 0; k < q + (p < r); k++) part[v++] = p;
}

/* RCB of the box [lo, hi) into parts first … first + P − 1. */
static void hm_rcb_box(const hm_grid *g, const int64_t *lo, const int64_t *hi, int first, int P,
                       int *part)
{
    if (P == 1) {
        for (int64_t z = lo[2]; z < hi[2]; z++)
            for (int64_t y = lo[1]; y < hi[1]; y++)
                for (int64_t x = lo[0]; x < hi[0]; x++)
                    part[(z * g->n[1] + y) * g->n[0] + x] = first;
        return;
    }
    int a = 0;
    for (int d = 1; d < 3; d++)
        if (hi[d] - lo[d] > hi[a] - lo[a]) a = d;
    int P1 = P / 2;
    int64_t cut = lo[a] + (hi[a] - lo[a]) * P1 / P;
    int64_t mid_hi[3] = {hi[0], hi[1], hi[2]}, mid_lo[3] = {lo[0], lo[1], lo[2]};
    mid_hi[a] = cut, mid_lo[a] = cut;
    hm_rcb_box(g, lo, mid_hi, first, P1, part);
    hm_rcb_box(g, mid_lo, hi, first + P1, P - P1, part);
}

static void hm_part_rcb(const hm_grid *g, int P, int *part)
{
    int64_t lo[3] = {0, 0, 0};
    hm_rcb_box(g, lo, g->n, 0, P, part);
}

/* Per-part halo counts of the distribution part ([N]) into P parts: st [P] (overwritten).
 * Returns 0, or −1 if the neighbour table ([P][P] bits) cannot be allocated. */
static int hm_halo(const hm_grid *g, int P, const int *part, hm_part_stats *st)
{
    size_t words = ((size_t)P * (size_t)P + 63) / 64;
    uint64_t *nb = calloc(words, sizeof *nb);
    if (!nb) return -1;
    memset(st, 0, sizeof *st * (size_t)P);
    int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t v = (z * ny + y) * nx + x;
                int pv = part[v], seen[6], ns = 0;
                int64_t adj[6] = {x > 0 ? v - 1 : -1, x < nx - 1 ? v + 1 : -1,
                                  y > 0 ? v - nx : -1, y < ny - 1 ? v + nx : -1,
                                  z > 0 ? v - nx * ny : -1, z < nz - 1 ? v + nx * ny : -1};
                st[pv].rows++;
                for (int k = 0; k < 6; k++) {
                    if (adj[k] < 0) continue;
                    int q = part[adj[k]], dup = q == pv;
                    for (int s = 0; s < ns && !dup; s++) dup = seen[s] == q;
                    if (dup) continue;
                    seen[ns++] = q;
                    st[q].ghosts++;     /* v is a ghost of q ... */
                    st[pv].sends++;     /* ... so pv sends v's value to q */
                    size_t bit = (size_t)q * (size_t)P + (size_t)pv;   /* q receives from pv */
                    if (!(nb[bit / 64] >> (bit % 64) & 1)) {
                        nb[bit / 64] |= (uint64_t)1 << (bit % 64);
                        st[q].neighbours++;
                    }
                }
            }
    free(nb);
    return 0;
}

#endif
