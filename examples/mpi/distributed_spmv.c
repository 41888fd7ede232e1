/* Distributed SpMV and its gradient with libsla_mpi (run: mpirun -np 4 ./example_distributed_spmv).
 *
 * Each rank assembles its own rows of the 5-point Laplacian of an nx × ny grid (the scalable
 * path: no rank holds the whole matrix), repartitions them by recursive coordinate bisection,
 * computes y = A x and the gradient of L = ½‖y‖² with respect to its own COO values and to x,
 * and checks one value's gradient against a central difference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sla/mpi.h>

#define CHECK(call) do { sla_status st_ = (call); if (st_ != SLA_OK) { \
    fprintf(stderr, "%s failed: %s\n", #call, sla_last_error()); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

/* This rank's COO entries: the rows [r0, r1) of the grid Laplacian. */
static int64_t assemble(int64_t nx, int64_t ny, int64_t r0, int64_t r1, int64_t *row,
                        int64_t *col, double *val)
{
    int64_t n = 0;
    for (int64_t i = r0; i < r1; i++) {
        int64_t x = i % nx, y = i / nx;
        int64_t nb[4] = {x > 0 ? i - 1 : -1, x < nx - 1 ? i + 1 : -1, y > 0 ? i - nx : -1,
                         y < ny - 1 ? i + nx : -1};
        row[n] = i; col[n] = i; val[n++] = 4.0;
        for (int k = 0; k < 4; k++)
            if (nb[k] >= 0) { row[n] = i; col[n] = nb[k]; val[n++] = -1.0; }
    }
    return n;
}

/* L = ½‖A x‖² for this rank's COO values coo. */
static double loss(sla_dist_pattern *P, const double *coo, const double *x, double *y, double *lv)
{
    CHECK(sla_dist_values_gather(P, SLA_FLOAT64, 1, coo, lv));
    sla_dist_matrix A = sla_dist_matrix_view(P, SLA_FLOAT64, 1, lv);
    CHECK(sla_dist_spmv(SLA_OP_N, 1.0, &A, x, 0, 1, 0.0, y));
    const sla_dist_layout *L = sla_dist_pattern_rows(P);
    double yy;
    CHECK(sla_dist_vec_dot(sla_dist_layout_comm(L), SLA_FLOAT64, sla_dist_layout_local_size(L), y, y, &yy));
    return 0.5 * yy;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int64_t nx = 60, ny = 40, N = nx * ny;

    /* 1. a balanced contiguous layout, each rank assembling its own rows */
    sla_dist_layout *L0, *L;
    CHECK(sla_dist_layout_create(MPI_COMM_WORLD, N, -1, &L0));
    int64_t n0 = sla_dist_layout_local_size(L0), r0 = n0 > 0 ? sla_dist_layout_global(L0)[0] : 0;
    int64_t *row = malloc((size_t)(5 * n0 + 1) * sizeof *row), *col = malloc((size_t)(5 * n0 + 1) * sizeof *col);
    double *val = malloc((size_t)(5 * n0 + 1) * sizeof *val);
    int64_t nnz = n0 > 0 ? assemble(nx, ny, r0, r0 + n0, row, col, val) : 0;
    sla_dist_pattern *P0, *P;
    CHECK(sla_dist_pattern_from_coo(L0, L0, nnz, row, col, &P0));

    /* 2. repartition by coordinates; the same entries go to their new owners */
    double *xy = malloc((size_t)(2 * n0 + 1) * sizeof *xy);
    for (int64_t i = 0; i < n0; i++) { xy[2 * i] = (double)((r0 + i) % nx); xy[2 * i + 1] = (double)((r0 + i) / nx); }
    sla_dist_partition_info info;
    CHECK(sla_dist_partition(P0, SLA_DIST_PART_RCB, 2, xy, &L, &info));
    CHECK(sla_dist_pattern_from_coo(L, L, nnz, row, col, &P));
    if (rank == 0)
        printf("RCB: edge cut %lld, ghosts %lld in all (max %lld per rank), nnz imbalance %.3f\n",
               (long long)info.edge_cut, (long long)info.halo_total, (long long)info.halo_max,
               info.nnz_imbalance);

    /* 3. y = A x, then the VJP with g = ∂L/∂y = y */
    int64_t n = sla_dist_layout_local_size(L);
    double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
    double *dx = malloc((size_t)(n + 1) * sizeof *dx);
    double *lv = malloc((size_t)(sla_dist_pattern_nnz(P) + 1) * sizeof *lv);
    double *dlv = malloc((size_t)(sla_dist_pattern_nnz(P) + 1) * sizeof *dlv);
    double *dcoo = malloc((size_t)(nnz + 1) * sizeof *dcoo);
    for (int64_t i = 0; i < n; i++) x[i] = sin(0.01 * (double)sla_dist_layout_global(L)[i] + 0.3);
    double l = loss(P, val, x, y, lv);
    sla_dist_matrix A = sla_dist_matrix_view(P, SLA_FLOAT64, 1, lv);
    CHECK(sla_dist_spmv_vjp(SLA_OP_N, 1.0, &A, x, 0, 1, y, dx, dlv));
    CHECK(sla_dist_values_scatter(P, SLA_FLOAT64, 1, dlv, dcoo));   /* to this rank's COO order */

    /* 4. central difference in the first value of rank 0 (L is quadratic in it: exact up to
     *    rounding) */
    const double h = 1e-3;
    double save = nnz > 0 ? val[0] : 0;
    if (rank == 0 && nnz > 0) val[0] = save + h;
    double lp = loss(P, val, x, y, lv);
    if (rank == 0 && nnz > 0) val[0] = save - h;
    double lm = loss(P, val, x, y, lv);
    if (rank == 0 && nnz > 0) val[0] = save;
    double fd = (lp - lm) / (2 * h);
    if (rank == 0) {
        double rel = fabs(fd - dcoo[0]) / fabs(dcoo[0]);
        printf("L = %.12g; dL/dvalue[0]: VJP %.12g, central difference %.12g (rel. diff %.1e)\n",
               l, dcoo[0], fd, rel);
        if (!(rel < 1e-6)) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    sla_dist_pattern_free(&P0);
    sla_dist_pattern_free(&P);
    sla_dist_layout_free(&L0);
    sla_dist_layout_free(&L);
    free(row); free(col); free(val); free(xy); free(x); free(y); free(dx); free(lv); free(dlv); free(dcoo);
    MPI_Finalize();
    return 0;
}
