/* Building distributed patterns: COO entries split into pieces handed in by different ranks
 * (duplicates across ranks summed), all entries on one rank, a matrix scattered from a root;
 * local values against the serial CSR values at the same (row, col); gradients back to each
 * rank's COO order; the ghost map and halo plan against the global ownership; float32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

/* Owner of every global index (gathered). */
static int *owners(const sla_dist_layout *L)
{
    int64_t N = sla_dist_layout_size(L);
    int *own = malloc((size_t)(N + 1) * sizeof *own), *mine = malloc((size_t)(N + 1) * sizeof *mine);
    for (int64_t g = 0; g < N; g++) mine[g] = sla_dist_layout_local_index(L, g) >= 0 ? mt_rank : -1;
    MPI_Allreduce(mine, own, (int)N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(mine);
    return own;
}

/* Local values against the serial matrix at the same (row, col); every slot once. */
static void compare_values(const char *what, const sla_dist_pattern *P, const double *lv,
                           const sla_pattern *p, const double *csr, double tol)
{
    int64_t nl = sla_dist_pattern_nnz(P);
    int64_t *r = malloc((size_t)(nl + 1) * sizeof *r), *c = malloc((size_t)(nl + 1) * sizeof *c);
    MT_OK(sla_dist_pattern_global_coo(P, r, c));
    double err = 0;
    int missing = 0;
    for (int64_t s = 0; s < nl; s++) {
        int64_t t = sla_pattern_find(p, r[s], c[s]);
        if (t < 0) { missing++; continue; }
        err = fmax(err, fabs(lv[s] - csr[t]) / fmax(fabs(csr[t]), 1e-300));
    }
    err = mt_max(err);
    MT_CHECK(mt_sum(missing) == 0 && mt_sum(nl) == sla_pattern_nnz(p),
             "%s: %lld local slots for %lld serial ones, %lld not in the serial pattern", what,
             (long long)mt_sum(nl), (long long)sla_pattern_nnz(p), (long long)mt_sum(missing));
    MT_CHECK(err <= tol, "%s: local values differ from serial by %.3g (relative)", what, err);
    free(r);
    free(c);
}

/* The ghosts are exactly the off-rank columns of the local rows, sorted by (owner, global),
 * and the halo plan's sends mirror the receives. */
static void check_halo(const char *what, const sla_dist_pattern *P)
{
    const sla_dist_layout *C = sla_dist_pattern_cols(P);
    int *own = owners(C);
    int64_t ng;
    const int64_t *gh = sla_dist_pattern_ghosts(P, &ng);
    sla_dist_halo_info H;
    MT_OK(sla_dist_pattern_halo(P, &H));
    int bad = 0;
    for (int64_t g = 0; g < ng; g++) {
        bad += own[gh[g]] == mt_rank;
        if (g > 0) bad += own[gh[g]] < own[gh[g - 1]] || (own[gh[g]] == own[gh[g - 1]] && gh[g] <= gh[g - 1]);
    }
    for (int q = 0; q < H.nrecv; q++)
        for (int64_t g = H.recv_ptr[q]; g < H.recv_ptr[q + 1]; g++) bad += own[gh[g]] != H.recv_rank[q];
    /* every rank tells each receive neighbour how many it expects; they must be its sends */
    int64_t *want = calloc((size_t)mt_size, sizeof *want), *got = calloc((size_t)mt_size, sizeof *got);
    for (int q = 0; q < H.nrecv; q++) want[H.recv_rank[q]] = H.recv_ptr[q + 1] - H.recv_ptr[q];
    MPI_Alltoall(want, 1, MPI_INT64_T, got, 1, MPI_INT64_T, MPI_COMM_WORLD);
    for (int q = 0; q < H.nsend; q++) {
        bad += got[H.send_rank[q]] != H.send_ptr[q + 1] - H.send_ptr[q];
        got[H.send_rank[q]] = 0;
        for (int64_t s = H.send_ptr[q]; s < H.send_ptr[q + 1]; s++)
            bad += H.send_idx[s] < 0 || H.send_idx[s] >= sla_dist_layout_local_size(C);
    }
    for (int r = 0; r < mt_size; r++) bad += got[r] != 0;
    MT_CHECK(mt_sum(bad) == 0, "%s: %lld inconsistencies in the ghost map or halo plan", what,
             (long long)mt_sum(bad));
    free(own);
    free(want);
    free(got);
}

/* Gradients back to the COO order: slot (i, j) carries f(i, j); every entry handed in,
 * duplicates included, must get f of its own (row, col). */
static void check_scatter(const char *what, const sla_dist_pattern *P, int64_t n,
                          const int64_t *row, const int64_t *col)
{
    int64_t nl = sla_dist_pattern_nnz(P);
    int64_t *r = malloc((size_t)(nl + 1) * sizeof *r), *c = malloc((size_t)(nl + 1) * sizeof *c);
    MT_OK(sla_dist_pattern_global_coo(P, r, c));
    double *gl = malloc((size_t)(2 * nl + 1) * sizeof *gl), *gc = malloc((size_t)(2 * n + 1) * sizeof *gc);
    for (int64_t s = 0; s < nl; s++) {
        gl[s] = (double)(r[s] * 100003 + c[s]);
        gl[nl + s] = -gl[s];                   /* batch element 1 */
    }
    MT_OK(sla_dist_values_scatter(P, SLA_FLOAT64, 2, gl, gc));
    int bad = 0;
    for (int64_t k = 0; k < n; k++)
        bad += gc[k] != (double)(row[k] * 100003 + col[k]) || gc[n + k] != -gc[k];
    MT_CHECK(mt_sum(bad) == 0, "%s: %lld COO entries got another slot's gradient", what,
             (long long)mt_sum(bad));
    free(r);
    free(c);
    free(gl);
    free(gc);
}

/* Entry e of A in `pieces` parts (values 1/2, 1/3, ... of it, summing to it) handed in by
 * ranks (e + j) mod p, in a scrambled order. */
static void pieces_share(const mt_coo *A, int pieces, int64_t *n, int64_t **row, int64_t **col,
                         double **val)
{
    int64_t cap = A->nnz * pieces / mt_size + pieces + 1;
    *row = malloc((size_t)cap * sizeof **row);
    *col = malloc((size_t)cap * sizeof **col);
    *val = malloc((size_t)cap * sizeof **val);
    *n = 0;
    for (int64_t t = 0; t < A->nnz; t++) {
        int64_t e = (t * 7919) % A->nnz;       /* scrambled; 7919 is prime to the sizes used */
        for (int j = 0; j < pieces; j++)
            if ((e + j) % mt_size == mt_rank) {
                (*row)[*n] = A->row[e];
                (*col)[*n] = A->col[e];
                (*val)[(*n)++] = j < pieces - 1 ? A->val[e] / (j + 2) : A->val[e] * 0;
            }
    }
    /* make the pieces sum to the value: the last piece carries the rest */
    for (int64_t k = 0, t = 0; t < A->nnz; t++) {
        int64_t e = (t * 7919) % A->nnz;
        double rest = A->val[e];
        for (int j = 0; j < pieces - 1; j++) rest -= A->val[e] / (j + 2);
        for (int j = 0; j < pieces; j++)
            if ((e + j) % mt_size == mt_rank) {
                if (j == pieces - 1) (*val)[k] = rest;
                k++;
            }
    }
}

static void duplicates_across_ranks(const char *what, const mt_coo *A, sla_dist_layout *L)
{
    sla_pattern *p;
    double *csr;
    mt_serial(A, &p, &csr);
    int64_t n, *row, *col;
    double *val;
    pieces_share(A, 3, &n, &row, &col, &val);
    sla_dist_pattern *P = NULL;
    MT_OK(sla_dist_pattern_from_coo(L, L, n, row, col, &P));
    MT_CHECK(sla_dist_pattern_nnz_input(P) == n, "%s: nnz_input %lld, handed %lld", what,
             (long long)sla_dist_pattern_nnz_input(P), (long long)n);
    double *lv = malloc((size_t)(sla_dist_pattern_nnz(P) + 1) * sizeof *lv);
    MT_OK(sla_dist_values_gather(P, SLA_FLOAT64, 1, val, lv));
    compare_values(what, P, lv, p, csr, 1e-15);   /* the pieces' sum, rounded */
    check_halo(what, P);
    check_scatter(what, P, n, row, col);
    /* the same again, summed in the same order: the same bits */
    double *lv2 = malloc((size_t)(sla_dist_pattern_nnz(P) + 1) * sizeof *lv2);
    MT_OK(sla_dist_values_gather(P, SLA_FLOAT64, 1, val, lv2));
    MT_CHECK(mt_sum(memcmp(lv, lv2, (size_t)sla_dist_pattern_nnz(P) * sizeof *lv) != 0) == 0,
             "%s: a second gather differs", what);
    sla_dist_pattern_free(&P);
    sla_pattern_free(&p);
    free(csr);
    free(lv);
    free(lv2);
    free(row);
    free(col);
    free(val);
}

/* All entries on the last rank (the others hand in nothing), then the same matrix scattered
 * from a root: equal local values; gradients to the root's CSR order. */
static void one_rank_and_root(const char *what, const mt_coo *A, sla_dist_layout *L)
{
    sla_pattern *p;
    double *csr;
    mt_serial(A, &p, &csr);
    int last = mt_rank == mt_size - 1;
    sla_dist_pattern *P = NULL, *Q = NULL;
    MT_OK(sla_dist_pattern_from_coo(L, L, last ? A->nnz : 0, A->row, A->col, &P));
    double *lv = malloc((size_t)(sla_dist_pattern_nnz(P) + 1) * sizeof *lv);
    MT_OK(sla_dist_values_gather(P, SLA_FLOAT64, 1, last ? A->val : NULL, lv));
    compare_values(what, P, lv, p, csr, 0);       /* no duplicates: exact */
    int root = mt_size > 1 ? 1 : 0;
    sla_matrix S = sla_matrix_view(p, SLA_FLOAT64, 1, csr);
    void *qv = NULL;
    sla_dtype dt = SLA_FLOAT32;
    int64_t batch = 0;
    MT_OK(sla_dist_matrix_scatter(L, L, root, mt_rank == root ? &S : NULL, &Q, &qv, &dt, &batch));
    MT_CHECK(dt == SLA_FLOAT64 && batch == 1, "%s: scatter says dtype %d batch %lld", what, (int)dt,
             (long long)batch);
    if (Q) {
        compare_values(what, Q, qv, p, csr, 0);
        check_halo(what, Q);
        /* gradients f(i, j) come back to the root's CSR slots */
        int64_t nl = sla_dist_pattern_nnz(Q), nnz = sla_pattern_nnz(p);
        int64_t *r = malloc((size_t)(nl + 1) * sizeof *r), *c = malloc((size_t)(nl + 1) * sizeof *c);
        MT_OK(sla_dist_pattern_global_coo(Q, r, c));
        double *gl = malloc((size_t)(nl + 1) * sizeof *gl), *gc = malloc((size_t)(nnz + 1) * sizeof *gc);
        for (int64_t s = 0; s < nl; s++) gl[s] = (double)(r[s] * 100003 + c[s]);
        MT_OK(sla_dist_values_scatter(Q, SLA_FLOAT64, 1, gl, mt_rank == root ? gc : NULL));
        int bad = 0;
        const int64_t *rp = sla_pattern_rowptr(p);
        const int32_t *ci = sla_pattern_colind(p);
        for (int64_t i = 0; mt_rank == root && i < A->m; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) bad += gc[s] != (double)(i * 100003 + ci[s]);
        MT_CHECK(mt_sum(bad) == 0, "%s: %d root CSR slots got another gradient", what, bad);
        free(r);
        free(c);
        free(gl);
        free(gc);
    }
    sla_dist_pattern_free(&P);
    sla_dist_pattern_free(&Q);
    sla_pattern_free(&p);
    free(csr);
    free(lv);
    free(qv);
}

/* float32 values and SpMV on a random layout. */
static void float32(const mt_coo *A, sla_dist_layout *L)
{
    int64_t n = 0;
    int64_t *row = malloc((size_t)(A->nnz + 1) * sizeof *row), *col = malloc((size_t)(A->nnz + 1) * sizeof *col);
    float *val = malloc((size_t)(A->nnz + 1) * sizeof *val), *cv;
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size, n++) {
        row[n] = A->row[e];
        col[n] = A->col[e];
        val[n] = (float)A->val[e];
    }
    sla_dist_pattern *P = NULL;
    MT_OK(sla_dist_pattern_from_coo(L, L, n, row, col, &P));
    float *lv = malloc((size_t)(sla_dist_pattern_nnz(P) + 1) * sizeof *lv);
    MT_OK(sla_dist_values_gather(P, SLA_FLOAT32, 1, val, lv));
    sla_pattern *p;
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, &p));
    float *coo = malloc((size_t)(A->nnz + 1) * sizeof *coo);
    for (int64_t e = 0; e < A->nnz; e++) coo[e] = (float)A->val[e];
    cv = malloc((size_t)(sla_pattern_nnz(p) + 1) * sizeof *cv);
    MT_OK(sla_values_gather(p, SLA_FLOAT32, 1, coo, cv));
    sla_matrix S = sla_matrix_view(p, SLA_FLOAT32, 1, cv);
    sla_dist_matrix D = sla_dist_matrix_view(P, SLA_FLOAT32, 1, lv);
    int64_t nl = sla_dist_layout_local_size(L);
    float *xg = malloc((size_t)(A->n + 1) * sizeof *xg), *yg = malloc((size_t)(A->m + 1) * sizeof *yg);
    float *xl = malloc((size_t)(nl + 1) * sizeof *xl), *yl = malloc((size_t)(nl + 1) * sizeof *yl);
    uint64_t seed = 3;
    for (int64_t i = 0; i < A->n; i++) xg[i] = (float)mt_rand(&seed);
    for (int64_t i = 0; i < nl; i++) xl[i] = xg[sla_dist_layout_global(L)[i]];
    MT_OK(sla_spmv(SLA_OP_N, 1.0, &S, xg, 0, 1, 0.0, yg));
    MT_OK(sla_dist_spmv(SLA_OP_N, 1.0, &D, xl, 0, 1, 0.0, yl));
    double err = 0, scale = 0;
    for (int64_t i = 0; i < A->m; i++) scale = fmax(scale, fabs(yg[i]));
    for (int64_t i = 0; i < nl; i++) err = fmax(err, fabs(yl[i] - yg[sla_dist_layout_global(L)[i]]));
    err = mt_max(err) / scale;
    MT_CHECK(err <= 1e-6, "float32 SpMV: error %.3g", err);
    sla_dist_pattern_free(&P);
    sla_pattern_free(&p);
    free(row); free(col); free(val); free(lv); free(coo); free(cv);
    free(xg); free(yg); free(xl); free(yl);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo A;
    mt_poisson2d(9, 7, &A);
    uint64_t seed = 77;
    for (int64_t e = 0; e < A.nnz; e++) A.val[e] += 0.1 * mt_rand(&seed);   /* nonsymmetric */
    sla_dist_layout *L = NULL, *R = NULL;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A.m, -1, &L));
    int *part = malloc((size_t)A.m * sizeof *part);
    mt_random_part(A.m, mt_size, 5, part);
    MT_OK(sla_dist_layout_create_partition(MPI_COMM_WORLD, A.m, mt_rank == 0 ? part : NULL, 0, &R));
    duplicates_across_ranks("Poisson 9x7, pieces on 3 ranks, contiguous", &A, L);
    duplicates_across_ranks("Poisson 9x7, pieces on 3 ranks, random", &A, R);
    one_rank_and_root("Poisson 9x7, one rank / root, random", &A, R);
    float32(&A, R);
    sla_dist_layout_free(&L);
    sla_dist_layout_free(&R);
    free(part);
    mt_coo_free(&A);
    if (mt_load("bcsstk13.mtx", &A)) {
        part = malloc((size_t)A.m * sizeof *part);
        mt_random_part(A.m, mt_size, 6, part);
        MT_OK(sla_dist_layout_create_partition(MPI_COMM_WORLD, A.m, mt_rank == 0 ? part : NULL, 0, &R));
        duplicates_across_ranks("bcsstk13, pieces on 3 ranks, random", &A, R);
        one_rank_and_root("bcsstk13, one rank / root, random", &A, R);
        sla_dist_layout_free(&R);
        free(part);
        mt_coo_free(&A);
    }
    return mt_finish("test_mpi_build");
}
