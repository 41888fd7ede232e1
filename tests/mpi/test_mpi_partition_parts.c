/* sla_dist_partition_parts: any number of parts (1, 3, 5, 7 and the rank count) by every
 * partitioner on a 2D grid with coordinates, on random ownership: every row gets a part in
 * range, weights balance, the partition equals the one computed on MPI_COMM_SELF from the
 * whole graph (contiguous, RCB, Hilbert: independent of the distribution), nparts = p
 * equals sla_dist_partition's layout; bad nparts refused on every rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define NX 20
#define NY 15

static const sla_dist_partitioner methods[] = {SLA_DIST_PART_CONTIGUOUS, SLA_DIST_PART_METIS,
                                               SLA_DIST_PART_PTSCOTCH, SLA_DIST_PART_RCB,
                                               SLA_DIST_PART_HILBERT};

/* part of every global row on every rank, from each rank's owned rows (−1: none) */
static void global_parts(const sla_dist_layout *L, const int *part, int *all)
{
    int64_t N = sla_dist_layout_size(L), n = sla_dist_layout_local_size(L);
    const int64_t *g = sla_dist_layout_global(L);
    for (int64_t i = 0; i < N; i++) all[i] = -1;
    for (int64_t i = 0; i < n; i++) all[g[i]] = part[i];
    MPI_Allreduce(MPI_IN_PLACE, all, (int)N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

/* the partition on comm of the whole grid (comm = SELF: each rank alone) */
static sla_status run(MPI_Comm comm, const mt_coo *A, const double *xy, sla_dist_partitioner m,
                      int nparts, sla_dist_layout *L, int *all)
{
    sla_dist_layout *own = NULL;
    if (!L) {
        MT_OK(sla_dist_layout_create(comm, A->m, -1, &own));
        L = own;
    }
    int64_t n = sla_dist_layout_local_size(L), ne = 0;
    const int64_t *g = sla_dist_layout_global(L);
    int64_t *row = malloc((size_t)A->nnz * sizeof *row), *col = malloc((size_t)A->nnz * sizeof *col);
    for (int64_t e = 0; e < A->nnz; e++)      /* the entries of this rank's rows */
        if (sla_dist_layout_local_index(L, A->row[e]) >= 0) { row[ne] = A->row[e]; col[ne++] = A->col[e]; }
    sla_dist_pattern *P = NULL;
    MT_OK(sla_dist_pattern_from_coo(L, L, ne, row, col, &P));
    double *c = malloc((size_t)(2 * n + 1) * sizeof *c);
    for (int64_t i = 0; i < n; i++) { c[2 * i] = xy[2 * g[i]]; c[2 * i + 1] = xy[2 * g[i] + 1]; }
    int *part = malloc((size_t)(n + 1) * sizeof *part);
    sla_status st = sla_dist_partition_parts(P, m, nparts, 2, c, part);
    if (st == SLA_OK) {
        if (comm == MPI_COMM_WORLD) global_parts(L, part, all);
        else memcpy(all, part, (size_t)A->m * sizeof *all);   /* one rank: local = global */
    }
    free(row); free(col); free(c); free(part);
    sla_dist_pattern_free(&P);
    sla_dist_layout_free(&own);
    return st;
}

/* nnz + 1 per row, the partitioners' weight */
static void check_balance(const mt_coo *A, const int *all, int nparts, const char *what,
                          double slack)
{
    int64_t *w = calloc((size_t)nparts, sizeof *w), W = 0;
    int ok = 1;
    for (int64_t i = 0; i < A->m; i++) ok &= all[i] >= 0 && all[i] < nparts;
    for (int64_t e = 0; e < A->nnz && ok; e++) w[all[A->row[e]]]++;
    for (int64_t i = 0; i < A->m && ok; i++) w[all[i]]++;
    for (int q = 0; q < nparts; q++) W += w[q];
    int64_t mx = 0;
    for (int q = 0; q < nparts; q++) mx = w[q] > mx ? w[q] : mx;
    MT_CHECK(ok, "%s: a row without a part in [0, %d)", what, nparts);
    MT_CHECK(!ok || (double)mx <= slack * (double)W / nparts + 6, "%s: heaviest part %lld of "
             "total %lld", what, (long long)mx, (long long)W);
    free(w);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo A;
    mt_poisson2d(NX, NY, &A);
    double *xy = malloc((size_t)(2 * A.m) * sizeof *xy);
    for (int64_t i = 0; i < A.m; i++) { xy[2 * i] = (double)(i % NX); xy[2 * i + 1] = (double)(i / NX); }
    int *all = malloc((size_t)A.m * sizeof *all), *self = malloc((size_t)A.m * sizeof *self);
    sla_dist_layout *L = mt_random_layout(A.m, 21);
    int counts[] = {1, 3, 5, 7, mt_size};
    for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; mi++) {
        sla_dist_partitioner m = methods[mi];
        const char *name = sla_dist_partitioner_name(m);
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            int np = counts[ci];
            char what[96];
            snprintf(what, sizeof what, "%s, %d parts", name, np);
            sla_status st = run(MPI_COMM_WORLD, &A, xy, m, np, L, all);
            if (st == SLA_EUNSUPPORTED) {             /* not compiled in: agreed */
                if (mt_rank == 0 && ci == 0) printf("%s: %s\n", name, sla_last_error());
                break;
            }
            MT_OK(st);
            if (st != SLA_OK) continue;
            check_balance(&A, all, np, what, m == SLA_DIST_PART_METIS || m == SLA_DIST_PART_PTSCOTCH ? 1.35 : 1.05);
            /* METIS sees the gathered graph in the ranks' order, PT-Scotch partitions in
             * parallel: both depend on the distribution; the others do not */
            if (m != SLA_DIST_PART_PTSCOTCH && m != SLA_DIST_PART_METIS) {
                MT_OK(run(MPI_COMM_SELF, &A, xy, m, np, NULL, self));
                int same = memcmp(all, self, (size_t)A.m * sizeof *all) == 0;
                MT_CHECK(same, "%s: differs from the partition of the whole graph on one rank",
                         what);
            }
            if (mt_rank == 0 && ci == 0) printf("%s: parts 1, 3, 5, 7, %d checked\n", name, mt_size);
        }
    }
    /* nparts = p: the layout of sla_dist_partition */
    {
        int64_t ne = 0, n = sla_dist_layout_local_size(L);
        int64_t *row = malloc((size_t)A.nnz * sizeof *row), *col = malloc((size_t)A.nnz * sizeof *col);
        for (int64_t e = 0; e < A.nnz; e++)
            if (sla_dist_layout_local_index(L, A.row[e]) >= 0) { row[ne] = A.row[e]; col[ne++] = A.col[e]; }
        sla_dist_pattern *P = NULL;
        MT_OK(sla_dist_pattern_from_coo(L, L, ne, row, col, &P));
        sla_dist_layout *newL = NULL;
        MT_OK(sla_dist_partition(P, SLA_DIST_PART_METIS, 0, NULL, &newL, NULL));
        int *part = malloc((size_t)(n + 1) * sizeof *part);
        sla_status st = sla_dist_partition_parts(P, SLA_DIST_PART_METIS, mt_size, 0, NULL, part);
        if (st == SLA_OK && newL) {
            global_parts(L, part, all);
            int ok = 1;
            const int64_t *g = sla_dist_layout_global(newL);
            for (int64_t i = 0; i < sla_dist_layout_local_size(newL); i++) ok &= all[g[i]] == mt_rank;
            MT_CHECK(ok, "nparts = p differs from sla_dist_partition");
        }
        /* nparts 0 on one rank: refused on every rank */
        st = sla_dist_partition_parts(P, SLA_DIST_PART_CONTIGUOUS, mt_rank == mt_size - 1 ? 0 : 2,
                                      0, NULL, part);
        MT_CHECK(mt_sum(st == SLA_EINVAL || st == SLA_ESHAPE) == mt_size, "nparts 0: status %d (%s)",
                 (int)st, sla_last_error());
        free(part); free(row); free(col);
        sla_dist_layout_free(&newL);
        sla_dist_pattern_free(&P);
    }
    sla_dist_layout_free(&L);
    free(all); free(self); free(xy);
    mt_coo_free(&A);
    return mt_finish("test_mpi_partition_parts");
}
