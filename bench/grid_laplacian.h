/* Grid Laplacians for the AMG benchmarks (shared by bench_amg.c and bench_amg_hypre.c):
 * 2D 5-point (nz = 1) or 3D 7-point finite differences with Dirichlet boundaries, CSR with
 * sorted columns, diagonal 4 (2D) or 6 (3D) and −1 for each neighbour. */
#ifndef SLA_BENCH_GRID_LAPLACIAN_H
#define SLA_BENCH_GRID_LAPLACIAN_H

#include <stdint.h>
#include <stdlib.h>

typedef struct grid_csr {
    int64_t n;
    int64_t *rp, *ci;   /* int64 for sla_pattern_from_csr and HYPRE_BigInt */
    double *v;
} grid_csr;

static grid_csr grid_laplacian(int64_t nx, int64_t ny, int64_t nz)
{
    grid_csr g;
    int64_t n = nx * ny * nz, k = 0;
    double diag = nz > 1 ? 6 : 4;
    g.n = n;
    g.rp = malloc(sizeof(int64_t) * (size_t)(n + 1));
    g.ci = malloc(sizeof(int64_t) * (size_t)(7 * n));
    g.v = malloc(sizeof(double) * (size_t)(7 * n));
    g.rp[0] = 0;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t i = (z * ny + y) * nx + x;
                int64_t nb[7] = {z > 0 ? i - nx * ny : -1, y > 0 ? i - nx : -1,
                                 x > 0 ? i - 1 : -1, i, x < nx - 1 ? i + 1 : -1,
                                 y < ny - 1 ? i + nx : -1, z < nz - 1 ? i + nx * ny : -1};
                for (int q = 0; q < 7; q++) {
                    if (nb[q] < 0) continue;
                    g.ci[k] = nb[q];
                    g.v[k++] = nb[q] == i ? diag : -1;
                }
                g.rp[i + 1] = k;
            }
    return g;
}

static void grid_free(grid_csr *g)
{
    free(g->rp);
    free(g->ci);
    free(g->v);
}

#endif
