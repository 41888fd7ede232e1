/* Partitioners (contiguous, METIS, PT-Scotch, RCB, Hilbert) on randomly renumbered 2D/3D grids
 * (with their coordinates) and real matrices: the new layout is a partition; the reported
 * edge cut, halo sizes, neighbours and balance equal an independent count from the global
 * matrix and the figures of the pattern rebuilt on the new layout (sla_dist_pattern_info,
 * the halo plan); geometric and graph methods cut a renumbered grid far less than its size;
 * weights balance; reruns give the same partition; SpMV on the redistributed matrix equals the
 * serial one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

/* A test problem: global COO, optional coordinates [N][dim] (by global index). */
typedef struct problem {
    const char *name;
    mt_coo A;
    int dim;
    double *xyz;
    double cut_bound;        /* edge cut a good partition stays under (0: no check) */
} problem;

/* The grid nx × ny × nz (nz = 1: 2D) with its nodes renumbered by a random permutation. */
static void grid(problem *P, const char *name, int64_t nx, int64_t ny, int64_t nz, uint64_t seed)
{
    mt_coo G;
    if (nz == 1) mt_poisson2d(nx, ny, &G); else mt_poisson3d(nx, ny, nz, &G);
    int64_t n = G.m, *perm = malloc((size_t)n * sizeof *perm);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {      /* Fisher–Yates, the same on every rank */
        int64_t j = (int64_t)((mt_rand(&seed) + 1) * 0.5 * (double)(i + 1));
        if (j > i) j = i;
        int64_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (int64_t e = 0; e < G.nnz; e++) {
        G.row[e] = perm[G.row[e]];
        G.col[e] = perm[G.col[e]];
    }
    P->name = name;
    P->A = G;
    P->dim = nz == 1 ? 2 : 3;
    P->xyz = malloc((size_t)(n * P->dim) * sizeof *P->xyz);
    for (int64_t i = 0; i < n; i++) {
        double c[3] = {(double)(i % nx), (double)(i / nx % ny), (double)(i / (nx * ny))};
        memcpy(P->xyz + perm[i] * P->dim, c, (size_t)P->dim * sizeof *c);
    }
    /* a cut along planes: at most (p − 1) planes of the largest cross-section, with slack */
    int64_t side = nz == 1 ? (nx > ny ? nx : ny) : nx * ny > ny * nz ? nx * ny : ny * nz;
    P->cut_bound = 2.0 * (mt_size - 1) * (double)side;
    free(perm);
}

/* Each rank's share of the entries (e mod p) and their values. */
static void share(const mt_coo *A, int64_t *n, int64_t **row, int64_t **col, double **val)
{
    *n = 0;
    *row = malloc((size_t)(A->nnz / mt_size + 2) * sizeof **row);
    *col = malloc((size_t)(A->nnz / mt_size + 2) * sizeof **col);
    *val = malloc((size_t)(A->nnz / mt_size + 2) * sizeof **val);
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size, (*n)++) {
        (*row)[*n] = A->row[e];
        (*col)[*n] = A->col[e];
        (*val)[*n] = A->val[e];
    }
}

/* The owner of every global index under layout L, on every rank. */
static int *owners(const sla_dist_layout *L)
{
    int64_t N = sla_dist_layout_size(L), n = sla_dist_layout_local_size(L);
    int *cnt = malloc((size_t)mt_size * sizeof *cnt), *dis = malloc((size_t)mt_size * sizeof *dis);
    int nn = (int)n;
    MPI_Allgather(&nn, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
    dis[0] = 0;
    for (int r = 1; r < mt_size; r++) dis[r] = dis[r - 1] + cnt[r - 1];
    int64_t *all = malloc((size_t)(N + 1) * sizeof *all);
    MPI_Allgatherv(sla_dist_layout_global(L), nn, MPI_INT64_T, all, cnt, dis, MPI_INT64_T,
                   MPI_COMM_WORLD);
    int *own = malloc((size_t)(N + 1) * sizeof *own);
    for (int64_t g = 0; g < N; g++) own[g] = -1;
    for (int r = 0; r < mt_size; r++)
        for (int i = 0; i < cnt[r]; i++) {
            MT_CHECK(own[all[dis[r] + i]] < 0, "index %lld owned twice", (long long)all[dis[r] + i]);
            own[all[dis[r] + i]] = r;
        }
    for (int64_t g = 0; g < N; g++) MT_CHECK(own[g] >= 0, "index %lld owned by no rank", (long long)g);
    free(cnt);
    free(dis);
    free(all);
    return own;
}

/* The figures of a distribution counted serially from the global matrix. */
static void reference_info(const mt_coo *A, const int *own, sla_dist_partition_info *I)
{
    memset(I, 0, sizeof *I);
    I->nparts = mt_size;
    int64_t N = A->m, m = 0;
    int64_t *r = malloc((size_t)(2 * A->nnz + 1) * sizeof *r), *c = malloc((size_t)(2 * A->nnz + 1) * sizeof *c);
    for (int64_t e = 0; e < A->nnz; e++)
        if (A->row[e] != A->col[e]) {
            r[m] = A->row[e]; c[m++] = A->col[e];
            r[m] = A->col[e]; c[m++] = A->row[e];
        }
    sla_pattern *S, *Ap;
    MT_OK(sla_pattern_from_coo(N, N, m, r, c, &S));
    MT_OK(sla_pattern_from_coo(N, N, A->nnz, A->row, A->col, &Ap));
    const int64_t *rp = sla_pattern_rowptr(S);
    const int32_t *ci = sla_pattern_colind(S);
    for (int64_t i = 0; i < N; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) I->edge_cut += ci[s] > i && own[ci[s]] != own[i];
    rp = sla_pattern_rowptr(Ap);
    ci = sla_pattern_colind(Ap);
    int *mark = malloc((size_t)N * sizeof *mark), *nmark = malloc((size_t)mt_size * sizeof *nmark);
    I->rows_min = I->nnz_min = INT64_MAX;
    for (int q = 0; q < mt_size; q++) {
        int64_t halo = 0, neigh = 0, rows = 0, nnz = 0;
        for (int64_t g = 0; g < N; g++) mark[g] = 0;
        for (int t = 0; t < mt_size; t++) nmark[t] = 0;
        for (int64_t i = 0; i < N; i++) {
            if (own[i] != q) continue;
            rows++;
            nnz += rp[i + 1] - rp[i];
            for (int64_t s = rp[i]; s < rp[i + 1]; s++)
                if (own[ci[s]] != q && !mark[ci[s]]) {
                    mark[ci[s]] = 1;
                    halo++;
                    if (!nmark[own[ci[s]]]++) neigh++;
                }
        }
        I->halo_total += halo;
        I->halo_max = halo > I->halo_max ? halo : I->halo_max;
        I->neighbours_total += neigh;
        I->neighbours_max = neigh > I->neighbours_max ? neigh : I->neighbours_max;
        I->rows_min = rows < I->rows_min ? rows : I->rows_min;
        I->rows_max = rows > I->rows_max ? rows : I->rows_max;
        I->nnz_min = nnz < I->nnz_min ? nnz : I->nnz_min;
        I->nnz_max = nnz > I->nnz_max ? nnz : I->nnz_max;
    }
    sla_pattern_free(&S);
    sla_pattern_free(&Ap);
    free(r);
    free(c);
    free(mark);
    free(nmark);
}

static void same_info(const char *what, const sla_dist_partition_info *a,
                      const sla_dist_partition_info *b)
{
    MT_CHECK(a->nparts == b->nparts && a->edge_cut == b->edge_cut && a->halo_total == b->halo_total
             && a->halo_max == b->halo_max && a->neighbours_max == b->neighbours_max
             && a->neighbours_total == b->neighbours_total && a->rows_min == b->rows_min
             && a->rows_max == b->rows_max && a->nnz_min == b->nnz_min && a->nnz_max == b->nnz_max,
             "%s: cut %lld/%lld halo %lld/%lld max %lld/%lld neighbours %lld/%lld max %lld/%lld "
             "rows %lld..%lld/%lld..%lld nnz %lld..%lld/%lld..%lld", what,
             (long long)a->edge_cut, (long long)b->edge_cut, (long long)a->halo_total,
             (long long)b->halo_total, (long long)a->halo_max, (long long)b->halo_max,
             (long long)a->neighbours_total, (long long)b->neighbours_total,
             (long long)a->neighbours_max, (long long)b->neighbours_max, (long long)a->rows_min,
             (long long)a->rows_max, (long long)b->rows_min, (long long)b->rows_max,
             (long long)a->nnz_min, (long long)a->nnz_max, (long long)b->nnz_min, (long long)b->nnz_max);
}

/* SpMV on the redistributed matrix against serial. */
static void check_spmv(const char *what, const mt_coo *A, sla_dist_pattern *P, const double *val)
{
    const sla_dist_layout *L = sla_dist_pattern_rows(P);
    double *lv = malloc((size_t)(sla_dist_pattern_nnz(P) + 1) * sizeof *lv);
    MT_OK(sla_dist_values_gather(P, SLA_FLOAT64, 1, val, lv));
    sla_dist_matrix D = sla_dist_matrix_view(P, SLA_FLOAT64, 1, lv);
    sla_pattern *p;
    double *csr;
    mt_serial(A, &p, &csr);
    sla_matrix S = sla_matrix_view(p, SLA_FLOAT64, 1, csr);
    double *xg = malloc((size_t)(A->n + 1) * sizeof *xg), *yg = malloc((size_t)(A->m + 1) * sizeof *yg);
    mt_fill(xg, A->n, 5);
    MT_OK(sla_spmv(SLA_OP_N, 1.0, &S, xg, 0, 1, 0.0, yg));
    double *xl = mt_slice(L, 1, 1, xg), *yl = malloc((size_t)(sla_dist_layout_local_size(L) + 1) * sizeof *yl);
    MT_OK(sla_dist_spmv(SLA_OP_N, 1.0, &D, xl, 0, 1, 0.0, yl));
    double err = mt_error(L, 1, 1, yl, yg, mt_amax(yg, A->m) + 1);
    MT_CHECK(err <= 1e-14, "%s: SpMV after redistribution, error %.3g", what, err);
    sla_pattern_free(&p);
    free(csr);
    free(lv);
    free(xg);
    free(yg);
    free(xl);
    free(yl);
}

static void try_method(const problem *T, sla_dist_partitioner method)
{
    const mt_coo *A = &T->A;
    char what[256];
    snprintf(what, sizeof what, "%s, %s", T->name, sla_dist_partitioner_name(method));
    int coord = method == SLA_DIST_PART_RCB || method == SLA_DIST_PART_HILBERT;
    if (coord && !T->xyz) return;
    sla_dist_layout *L0 = NULL, *L1 = NULL, *L2 = NULL;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A->m, -1, &L0));
    int64_t n, *row, *col;
    double *val;
    share(A, &n, &row, &col, &val);
    sla_dist_pattern *P0 = NULL, *P1 = NULL;
    MT_OK(sla_dist_pattern_from_coo(L0, L0, n, row, col, &P0));
    double *xyz = coord ? malloc((size_t)(sla_dist_layout_local_size(L0) * T->dim + 1) * sizeof *xyz) : NULL;
    for (int64_t i = 0; coord && i < sla_dist_layout_local_size(L0); i++)
        memcpy(xyz + i * T->dim, T->xyz + sla_dist_layout_global(L0)[i] * T->dim,
               (size_t)T->dim * sizeof *xyz);
    sla_dist_partition_info info, rebuilt, ref;
    sla_status st = sla_dist_partition(P0, method, T->dim, xyz, &L1, &info);
    if (st == SLA_EUNSUPPORTED) {
        if (mt_rank == 0) printf("note: %s: %s\n", what, sla_last_error());
        goto out;
    }
    MT_OK(st);
    if (st != SLA_OK) goto out;
    int *own = owners(L1);
    reference_info(A, own, &ref);
    free(own);
    same_info(what, &info, &ref);
    MT_OK(sla_dist_pattern_from_coo(L1, L1, n, row, col, &P1));
    MT_OK(sla_dist_pattern_info(P1, &rebuilt));
    same_info(what, &rebuilt, &ref);
    /* the rebuilt halo plan has the predicted sizes */
    int64_t ng;
    sla_dist_halo_info H;
    sla_dist_pattern_ghosts(P1, &ng);
    MT_OK(sla_dist_pattern_halo(P1, &H));
    MT_CHECK(mt_sum(ng) == ref.halo_total && mt_sum(H.nrecv) == ref.neighbours_total,
             "%s: halo plan %lld ghosts, %lld neighbours; predicted %lld, %lld", what,
             (long long)mt_sum(ng), (long long)mt_sum(H.nrecv), (long long)ref.halo_total,
             (long long)ref.neighbours_total);
    if (T->cut_bound > 0 && method != SLA_DIST_PART_CONTIGUOUS)
        MT_CHECK(info.edge_cut <= T->cut_bound, "%s: edge cut %lld > %g", what,
                 (long long)info.edge_cut, T->cut_bound);
    if (T->cut_bound > 0)
        MT_CHECK(info.nnz_imbalance <= 1.1, "%s: nnz imbalance %.3f", what, info.nnz_imbalance);
    /* a rerun gives the same partition */
    MT_OK(sla_dist_partition(P0, method, T->dim, xyz, &L2, NULL));
    int same = sla_dist_layout_local_size(L1) == sla_dist_layout_local_size(L2) &&
               memcmp(sla_dist_layout_global(L1), sla_dist_layout_global(L2),
                      (size_t)sla_dist_layout_local_size(L1) * sizeof(int64_t)) == 0;
    MT_CHECK(mt_sum(!same) == 0, "%s: a rerun partitions differently", what);
    check_spmv(what, A, P1, val);
    if (mt_rank == 0)
        printf("%-34s cut %5lld  halo %5lld (max %4lld)  neighbours %3lld  rows %lld..%lld  "
               "nnz imbalance %.3f\n", what, (long long)info.edge_cut, (long long)info.halo_total,
               (long long)info.halo_max, (long long)info.neighbours_total,
               (long long)info.rows_min, (long long)info.rows_max, info.nnz_imbalance);
out:
    sla_dist_pattern_free(&P0);
    sla_dist_pattern_free(&P1);
    sla_dist_layout_free(&L0);
    sla_dist_layout_free(&L1);
    sla_dist_layout_free(&L2);
    free(row);
    free(col);
    free(val);
    free(xyz);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    problem T[5];
    int nt = 0;
    grid(&T[nt++], "2D grid 24x20, renumbered", 24, 20, 1, 7);
    grid(&T[nt++], "3D grid 8x7x6, renumbered", 8, 7, 6, 8);
    grid(&T[nt++], "3 x 1 grid (fewer rows than ranks)", 3, 1, 1, 9);
    T[nt - 1].cut_bound = 0;
    static const char *files[] = {"bcsstk13.mtx", "west0479.mtx"};
    for (int f = 0; f < 2; f++)
        if (mt_load(files[f], &T[nt].A)) {
            T[nt].name = files[f];
            T[nt].dim = 0;
            T[nt].xyz = NULL;
            T[nt++].cut_bound = 0;
        }
    for (int t = 0; t < nt; t++)
        for (int m = SLA_DIST_PART_CONTIGUOUS; m <= SLA_DIST_PART_HILBERT; m++)
            try_method(&T[t], (sla_dist_partitioner)m);
    /* errors: a rectangular matrix, and coordinates with a NaN on the last rank */
    sla_dist_layout *Lr, *Lc, *out = NULL;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, 4, -1, &Lr));
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, 5, -1, &Lc));
    sla_dist_pattern *R = NULL;
    MT_OK(sla_dist_pattern_from_coo(Lr, Lc, 0, NULL, NULL, &R));
    MT_CHECK(sla_dist_partition(R, SLA_DIST_PART_METIS, 0, NULL, &out, NULL) == SLA_ESHAPE && !out,
             "rectangular: %s", sla_last_error());
    sla_dist_pattern_free(&R);
    MT_OK(sla_dist_pattern_from_coo(Lr, Lr, 0, NULL, NULL, &R));
    int64_t nl = sla_dist_layout_local_size(Lr);
    double xyz[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    if (mt_rank == mt_size - 1 && nl > 0) xyz[2 * nl - 1] = NAN;
    sla_status st = sla_dist_partition(R, SLA_DIST_PART_RCB, 2, xyz, &out, NULL);
    char expect[64];
    snprintf(expect, sizeof expect, "rank %d: coords[", mt_size - 1);
    MT_CHECK(st == SLA_ENONFINITE && strstr(sla_last_error(), expect) && !out, "NaN coordinate: %d %s",
             (int)st, sla_last_error());
    sla_dist_pattern_free(&R);
    sla_dist_layout_free(&Lr);
    sla_dist_layout_free(&Lc);
    for (int t = 0; t < nt; t++) {
        mt_coo_free(&T[t].A);
        free(T[t].xyz);
    }
    return mt_finish("test_mpi_partition");
}
