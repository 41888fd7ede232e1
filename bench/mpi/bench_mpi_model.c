/* Scaling model of a distributed CG iteration (libsla_mpi), one JSON object on stdout.
 *
 *   [mpirun -np P] bench_mpi_model [--quick] [--no-curves] [--alpha S] [--beta-gbs G] [--bw-n M]
 *
 * --quick: P up to 256, bandwidth on a 512² grid; --no-curves: only the validation (np > 1).
 *
 * This machine has 2 cores, so scaling to 4096 ranks is predicted, not measured:
 *
 * 1. Halo plans. 2D (5-point) and 3D (7-point) grids are partitioned into P = 2 … 4096 parts
 *    by recursive coordinate bisection (and, in 2D, contiguous strips), and every part's halo
 *    plan is counted (halo_model.h: ghosts received, values sent, neighbours = messages).
 *    The grids are reduced copies of the target problems with the same surface-to-volume
 *    ratio, then extrapolated: a part of side s has s^d rows and O(s^(d−1)) ghosts, so scaling
 *    every side by f multiplies rows by f^d, ghosts and sends by f^(d−1) and leaves neighbours
 *    unchanged. The extrapolation is exact for these box partitions (sides powers of two,
 *    cuts exact halves) and, for strips, while every part holds at least one grid line (2D).
 *      strong: 2D 32768² (1.07e9 rows) from 4096² (f = 8); 3D 1024³ (1.07e9) from 256³ (f = 4);
 *              and the 10⁸ class: 2D 8192² (6.7e7), 3D 512³ (1.3e8), both f = 2
 *      weak:   2D 512² rows per rank from 64² (f = 8); 3D 64³ per rank from 16³ (f = 4), the
 *              global grid doubling along one axis per doubling of P (4096 ranks: 1.07e9 rows)
 *    The counter is checked against libsla_mpi's real halo plans (sla_dist_partition RCB and
 *    contiguous layouts, sla_dist_pattern_halo) by tests/mpi/test_mpi_model.c at 1–4 ranks,
 *    and, when this program runs on np > 1 ranks, for P = np in the "validation" entry.
 * 2. Per-rank speed, measured here on every rank at once (MPI_COMM_SELF), from the fastest of
 *    the repetitions (the median is reported beside it): SpMV bandwidth by
 *    bench_spmv's byte model (12 B per nonzero, 8 B per row pointer, 16 B per row for x and y)
 *    on a 2D grid of bw_n² rows, and the CG vector kernels' bandwidth (pᵀq, cg_update,
 *    cg_direction: 104 B per row).
 * 3. Network: α–β (Hockney) model, defaults α = 1.5 µs, β = 1 / 12.5 GB/s (InfiniBand HDR100
 *    / EDR class). Per rank and iteration:
 *      t_comp  = (12 nnz + 24 rows + 8 + 8 ghosts + 8 sends) / B_spmv + 104 rows / B_vec
 *      t_halo  = neighbours · α + 8 · max(ghosts, sends) · β   (sends and receives overlap)
 *      t_red   = 2 allreduces · (⌈log₂ P⌉ (+2 if P is not a power of 2)) · (α + 280 B · β)
 *                (sla_dist_allsum's recursive doubling, 35 doubles a round)
 *      t_iter  = max over ranks of (t_comp + t_halo) + t_red   (no overlap: an upper bound;
 *      t_iter_overlap hides the halo behind the SpMV's diagonal block, a lower bound).
 *    nnz per rank is taken as (2d + 1)·rows (boundary rows have fewer: a slight over-count). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sla/mpi.h>

#include "halo_model.h"
#include "halo_real.h"

#define CHECK(call) do { sla_status st_ = (call); if (st_ < 0) { \
    fprintf(stderr, "%s: %s\n", #call, sla_last_error()); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

typedef struct net {
    double alpha, beta;          /* s, s per byte */
    double bw_spmv, bw_vec;      /* bytes per s, per rank: from the fastest repetition */
    double bw_spmv_med, bw_vec_med;  /* from the median repetition (reported only) */
} net;

typedef struct agg {             /* figures of a distribution, extrapolated by f */
    int64_t rows_max, ghosts_max, sends_max, neighbours_max, messages, ghosts_total;
    double rows_mean, ghosts_mean, neighbours_mean;
    double t_comp, t_halo, t_red, t_iter, t_iter_overlap;
} agg;

/* ---- per-rank bandwidth (measured) ---- */

static double median(double *t, int k)
{
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { double s = t[j]; t[j] = t[j - 1]; t[j - 1] = s; }
    return t[k / 2];
}

/* SpMV and CG vector-kernel bandwidths of one rank on an m × m 2D Laplacian. */
static void measure(int64_t m, int reps, net *nw)
{
    hm_grid g = {2, {m, m, 1}};
    int64_t N = hm_size(&g);
    sla_dist_layout *L;
    sla_dist_pattern *P;
    CHECK(sla_dist_layout_create(MPI_COMM_SELF, N, -1, &L));
    int64_t *row = malloc(sizeof *row * (size_t)(5 * N)), *col = malloc(sizeof *col * (size_t)(5 * N));
    int64_t nnz = hr_rows(&g, 0, N, row, col);
    CHECK(sla_dist_pattern_from_coo(L, L, nnz, row, col, &P));
    double *v = malloc(sizeof *v * (size_t)nnz);
    CHECK(sla_dist_pattern_global_coo(P, row, col));
    for (int64_t s = 0; s < nnz; s++) v[s] = row[s] == col[s] ? 4.0 : -1.0;
    free(row), free(col);
    double *x = malloc(sizeof *x * (size_t)N), *y = malloc(sizeof *y * (size_t)N);
    double *r = malloc(sizeof *r * (size_t)N), *d = malloc(sizeof *d * (size_t)N);
    for (int64_t i = 0; i < N; i++) x[i] = 1.0 + 1e-3 * (double)(i % 7), r[i] = 1.0, d[i] = 0.25;
    sla_dist_matrix A = sla_dist_matrix_view(P, SLA_FLOAT64, 1, v);
    double ts[64], tv[64], pq, rr, rz;
    for (int k = 0; k < reps; k++) {
        double t0 = MPI_Wtime();
        CHECK(sla_dist_spmv(SLA_OP_N, 1.0, &A, x, 0, 1, 0.0, y));
        double t1 = MPI_Wtime();
        CHECK(sla_dist_vec_dot(MPI_COMM_SELF, SLA_FLOAT64, N, x, y, &pq));
        CHECK(sla_dist_vec_cg_update(MPI_COMM_SELF, SLA_FLOAT64, N, 1e-9, x, y, x, r, d, &rr, &rz));
        CHECK(sla_dist_vec_cg_direction(SLA_FLOAT64, N, 0.5, r, d, x));
        ts[k] = t1 - t0, tv[k] = MPI_Wtime() - t1;
    }
    double bytes = 12.0 * (double)nnz + 8.0 * (double)(N + 1) + 16.0 * (double)N;
    /* the fastest repetition: on a shared machine the others measure the neighbours' load */
    nw->bw_spmv_med = bytes / median(ts, reps);
    nw->bw_vec_med = 104.0 * (double)N / median(tv, reps);
    nw->bw_spmv = bytes / ts[0];
    nw->bw_vec = 104.0 * (double)N / tv[0];
    /* the slowest rank sets the pace */
    MPI_Allreduce(MPI_IN_PLACE, &nw->bw_spmv, 4, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    free(x), free(y), free(r), free(d), free(v);
    sla_dist_pattern_free(&P);
    sla_dist_layout_free(&L);
}

/* ---- the model ---- */

static int rounds(int P)
{
    int r = 0;
    while ((1 << r) < P) r++;
    return r + ((P & (P - 1)) ? 2 : 0);
}

/* Figures of st [P] extrapolated by f per axis, and the predicted iteration time. */
static agg model(const hm_part_stats *st, int P, int dim, double f, const net *nw)
{
    agg a;
    memset(&a, 0, sizeof a);
    double fr = pow(f, dim), fh = pow(f, dim - 1), worst = 0, worst_ov = 0;
    for (int p = 0; p < P; p++) {
        double rows = (double)st[p].rows * fr, gh = (double)st[p].ghosts * fh;
        double se = (double)st[p].sends * fh, nnz = (2.0 * dim + 1) * rows;
        double tc = (12 * nnz + 24 * rows + 8 + 8 * gh + 8 * se) / nw->bw_spmv + 104 * rows / nw->bw_vec;
        double tdiag = (12 * nnz + 24 * rows) / nw->bw_spmv;   /* what the halo hides behind */
        double th = (double)st[p].neighbours * nw->alpha + 8 * fmax(gh, se) * nw->beta;
        if (tc + th > worst) worst = tc + th, a.t_comp = tc, a.t_halo = th;
        if (tc + fmax(0, th - tdiag) > worst_ov) worst_ov = tc + fmax(0, th - tdiag);
        if ((int64_t)rows > a.rows_max) a.rows_max = (int64_t)rows;
        if ((int64_t)gh > a.ghosts_max) a.ghosts_max = (int64_t)gh;
        if ((int64_t)se > a.sends_max) a.sends_max = (int64_t)se;
        if (st[p].neighbours > a.neighbours_max) a.neighbours_max = st[p].neighbours;
        a.messages += st[p].neighbours;
        a.ghosts_total += (int64_t)gh;
        a.rows_mean += rows / P, a.ghosts_mean += gh / P;
        a.neighbours_mean += (double)st[p].neighbours / P;
    }
    a.t_red = P > 1 ? 2.0 * rounds(P) * (nw->alpha + 280.0 * nw->beta) : 0.0;
    a.t_iter = worst + a.t_red;
    a.t_iter_overlap = worst_ov + a.t_red;
    return a;
}

/* The reduced grid of P parts: strong = fixed side s0; weak = side s0 per part, the grid
 * doubling along axes in turn (x first) as P doubles. */
static hm_grid reduced(int dim, int weak, int64_t s0, int P)
{
    hm_grid g = {dim, {s0, s0, dim == 3 ? s0 : 1}};
    if (weak)
        for (int k = 0; (1 << k) < P; k++) g.n[k % dim] *= 2;
    return g;
}

static void print_agg(const agg *a, int P, double t1)
{
    printf("{\"P\": %d, \"rows_max\": %lld, \"rows_mean\": %.0f, \"ghosts_max\": %lld, "
           "\"ghosts_mean\": %.1f, \"sends_max\": %lld, \"neighbours_max\": %lld, "
           "\"neighbours_mean\": %.2f, \"messages_per_spmv\": %lld, \"allreduces_per_iteration\": %d, "
           "\"allreduce_rounds\": %d, \"t_comp_us\": %.3f, \"t_halo_us\": %.3f, "
           "\"t_allreduce_us\": %.3f, \"t_iter_us\": %.3f, \"t_iter_overlap_us\": %.3f, "
           "\"halo_fraction\": %.4f, \"efficiency\": %.4f}",
           P, (long long)a->rows_max, a->rows_mean, (long long)a->ghosts_max, a->ghosts_mean,
           (long long)a->sends_max, (long long)a->neighbours_max, a->neighbours_mean,
           (long long)a->messages, P > 1 ? 2 : 0, P > 1 ? rounds(P) : 0, 1e6 * a->t_comp,
           1e6 * a->t_halo, 1e6 * a->t_red, 1e6 * a->t_iter, 1e6 * a->t_iter_overlap,
           (a->t_halo + a->t_red) / a->t_iter, t1 / a->t_iter);
}

/* One curve: dim, strong/weak, partitioner (0 contiguous, 1 RCB), extrapolation factor f
 * per axis. Efficiency: strong t(1) / (P t(P)), weak t(1) / t(P), t(1) the one-rank iteration
 * of the same full problem (strong) or of one rank's share (weak). */
static void curve(int dim, int weak, int rcb, double f, int pmax, const net *nw, int first)
{
    int64_t s0 = weak ? (dim == 2 ? 64 : 16) : (dim == 2 ? 4096 : 256);
    printf("%s    {\"dim\": %d, \"scaling\": \"%s\", \"partition\": \"%s\", \"reduced_side\": %lld, "
           "\"extrapolation_factor\": %.0f, \"full_rows%s\": %.0f, \"points\": [",
           first ? "" : ",\n", dim, weak ? "weak" : "strong", rcb ? "rcb" : "contiguous",
           (long long)s0, f, weak ? "_per_rank" : "", pow((double)s0 * f, dim));
    hm_grid g1 = reduced(dim, weak, s0, 1);
    hm_part_stats one = {hm_size(&g1), 0, 0, 0};
    agg a1 = model(&one, 1, dim, f, nw);
    int nprint = 0;
    for (int P = 1; P <= pmax; P *= 2) {
        hm_grid g = reduced(dim, weak, s0, P);
        int64_t N = hm_size(&g), plane = dim == 2 ? g.n[0] : g.n[0] * g.n[1];
        if (!rcb && N / P < plane) break;         /* strips thinner than a line: not extrapolable */
        int *part = malloc(sizeof *part * (size_t)N);
        hm_part_stats *st = malloc(sizeof *st * (size_t)P);
        if (rcb) hm_part_rcb(&g, P, part);
        else hm_part_contiguous(&g, P, part);
        if (hm_halo(&g, P, part, st)) { fprintf(stderr, "out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
        agg a = model(st, P, dim, f, nw);
        printf("%s\n      ", nprint++ ? "," : "");
        print_agg(&a, P, weak ? a1.t_iter : a1.t_iter / P);
        free(part), free(st);
    }
    printf("]}");
}

/* At np ranks: the real halo plans of RCB and contiguous layouts against the counter. */
static void validation(void)
{
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf(",\n  \"validation\": [");
    for (int dim = 2; dim <= 3; dim++)
        for (int k = 0; k < 2; k++) {
            int m = k ? SLA_DIST_PART_RCB : -1;
            hm_grid g = reduced(dim, 1, dim == 2 ? 64 : 16, size);
            hr_result res;
            CHECK(hr_build(MPI_COMM_WORLD, &g, m, &res));
            hm_part_stats *st = malloc(sizeof *st * (size_t)size);
            hm_halo(&g, size, res.part, st);
            int64_t diff = llabs(st[rank].ghosts - res.mine.ghosts) +
                           llabs(st[rank].sends - res.mine.sends) +
                           llabs(st[rank].neighbours - res.mine.neighbours) +
                           llabs(st[rank].rows - res.mine.rows), diff_all;
            MPI_Allreduce(&diff, &diff_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            /* the model's own RCB of the same grid, for comparison with the library's */
            int *mp = malloc(sizeof *mp * (size_t)hm_size(&g));
            hm_part_stats *ms = malloc(sizeof *ms * (size_t)size);
            if (m < 0) hm_part_contiguous(&g, size, mp);
            else hm_part_rcb(&g, size, mp);
            hm_halo(&g, size, mp, ms);
            int64_t gt = 0, mt = 0;
            for (int p = 0; p < size; p++) gt += st[p].ghosts, mt += ms[p].ghosts;
            if (rank == 0)
                printf("%s\n    {\"P\": %d, \"dim\": %d, \"partition\": \"%s\", \"grid\": [%lld, %lld, %lld], "
                       "\"library_ghosts_total\": %lld, \"model_partition_ghosts_total\": %lld, "
                       "\"counter_minus_halo_plan\": %lld}",
                       dim == 2 && m < 0 ? "" : ",", size, dim, m < 0 ? "contiguous" : "rcb",
                       (long long)g.n[0], (long long)g.n[1], (long long)g.n[2], (long long)gt,
                       (long long)mt, (long long)diff_all);
            free(st), free(mp), free(ms), free(res.part);
        }
    if (rank == 0) printf("]");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, quick = 0, curves = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    net nw = {1.5e-6, 1.0 / 12.5e9, 0, 0, 0, 0};
    int64_t bw_n = 2048;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1, bw_n = 512;
        else if (!strcmp(argv[i], "--no-curves")) curves = 0;
        else if (!strcmp(argv[i], "--alpha") && i + 1 < argc) nw.alpha = atof(argv[++i]);
        else if (!strcmp(argv[i], "--beta-gbs") && i + 1 < argc) nw.beta = 1.0 / (1e9 * atof(argv[++i]));
        else if (!strcmp(argv[i], "--bw-n") && i + 1 < argc) bw_n = atoll(argv[++i]);
    }
    if (curves) measure(bw_n, quick ? 5 : 15, &nw);
    int pmax = quick ? 256 : 4096;
    if (rank == 0) {
        printf("{\n  \"model\": \"alpha-beta, t_iter = max_rank(t_comp + t_halo) + t_allreduce\",\n");
        printf("  \"alpha_us\": %.3f, \"beta_gbs\": %.3f, \"ranks_measured\": %d,\n", 1e6 * nw.alpha,
               1.0 / nw.beta / 1e9, size);
        printf("  \"bandwidth_grid\": \"2D %lld^2\", \"spmv_gbs_per_rank\": %.3f, \"vector_gbs_per_rank\": %.3f,\n"
               "  \"spmv_gbs_per_rank_median\": %.3f, \"vector_gbs_per_rank_median\": %.3f,\n",
               (long long)bw_n, nw.bw_spmv / 1e9, nw.bw_vec / 1e9, nw.bw_spmv_med / 1e9,
               nw.bw_vec_med / 1e9);
        printf("  \"allreduces_per_iteration\": 2,\n  \"curves\": [\n");
        /* strong: 1.07e9 rows (f = 8 in 2D, 4 in 3D) and 6.7e7 / 1.3e8 rows (f = 2); weak:
         * 512² / 64³ rows per rank (4096 ranks: 1.07e9) */
        int first = 1;
        for (int weak = 0; curves && weak <= 1; weak++)
            for (int dim = 2; dim <= 3; dim++)
                for (int big = 1; big >= (weak ? 1 : 0); big--)
                    for (int rcb = 1; rcb >= (dim == 2 ? 0 : 1); rcb--) {
                        curve(dim, weak, rcb, big ? (dim == 2 ? 8 : 4) : 2, pmax, &nw, first);
                        first = 0;
                    }
        printf("\n  ]");
        fflush(stdout);
    }
    if (size > 1) validation();
    if (rank == 0) printf("\n}\n");
    MPI_Finalize();
    return 0;
}
