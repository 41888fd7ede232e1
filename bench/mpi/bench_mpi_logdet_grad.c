/* The distributed log-determinant gradient, both methods in the same run: parallel MUMPS
 * (distributed factors, selected inverse) against the gather to rank 0 (libsla's serial
 * selected inverse there). One JSON object on stdout (rank 0).
 *
 *   mpirun -np P bench_mpi_logdet_grad [--n N] [--reps K] [--chunk C]
 *
 * --chunk C: the MUMPS method requests C entries of A⁻¹ per selected-inverse call (libsla_mpi's
 * test hook; default 2^20).
 *
 * Problem: the 2D 5-point Laplacian N × N (Dirichlet), contiguous balanced rows, each rank
 * handing in its own rows; F = sla_dist_lu_create (SuperLU_DIST) once, outside the timings.
 * Per method and repetition (alternating, GATHER first): VmHWM reset (after malloc_trim), a
 * barrier, sla_dist_lu_logdet_grad_with, a barrier. Reported per rank: the phase's peak RSS
 * and its increment over the RSS before the call (what the gradient itself needed), the wall
 * time (max over ranks) and the process CPU time of each rank, the fastest repetition; and the
 * largest difference between the two gradients relative to their largest entry. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sla/mpi.h>

#include "../grid_laplacian.h"
#include "bench_mem.h"

/* libsla_mpi's test hook (src/mpi/lu.h): entries per MUMPS selected-inverse call */
int64_t dist_test_pmumps_chunk(int64_t entries);

#define CHECK(call) do { sla_status st_ = (call); if (st_ < 0) { \
    fprintf(stderr, "%s: %s\n", #call, sla_last_error()); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static double rss_mb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb / 1024.0;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct figures { double wall, cpu, peak, incr; } figures;

/* one call; its figures on this rank (wall: max over ranks) */
static figures one(sla_dist_lu *F, sla_dist_logdet_grad_method m, double *dv)
{
    figures r;
    hwm_reset();
    double base = rss_mb();
    MPI_Barrier(MPI_COMM_WORLD);
    double w0 = MPI_Wtime(), c0 = cpu_s();
    CHECK(sla_dist_lu_logdet_grad_with(F, m, NULL, dv));
    r.cpu = cpu_s() - c0;
    MPI_Barrier(MPI_COMM_WORLD);
    double w = MPI_Wtime() - w0;
    MPI_Allreduce(&w, &r.wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    r.peak = hwm_mb();
    r.incr = r.peak - base;
    return r;
}

static void print_method(const char *name, const figures *f, int size, int last)
{
    printf("    \"%s\": {\"wall_s\": %.4f, \"ranks\": [", name, f[0].wall);
    for (int r = 0; r < size; r++)
        printf("%s{\"rank\": %d, \"cpu_s\": %.4f, \"peak_rss_mb\": %.1f, \"increment_mb\": %.1f}",
               r ? ", " : "", r, f[r].cpu, f[r].peak, f[r].incr);
    printf("]}%s\n", last ? "" : ",");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t n = 300, chunk = 0;
    int reps = 2;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--n")) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--chunk")) chunk = atoll(argv[++i]);
    }
    dist_test_pmumps_chunk(chunk);
    if (size > 64 || !sla_dist_have_parallel_mumps()) {
        if (rank == 0) fprintf(stderr, "needs parallel MUMPS and at most 64 ranks\n");
        MPI_Finalize();
        return 1;
    }
    /* this rank's rows of the balanced contiguous split, as COO */
    sla_dist_layout *L = NULL;
    CHECK(sla_dist_layout_create(MPI_COMM_WORLD, n * n, -1, &L));
    const int64_t *own = sla_dist_layout_global(L);
    int64_t nl = sla_dist_layout_local_size(L), k = 0;
    grid_csr g = grid_laplacian(n, n, 1);
    int64_t cap = nl ? g.rp[own[nl - 1] + 1] - g.rp[own[0]] : 0;
    int64_t *row = malloc((size_t)(cap + 1) * sizeof *row), *col = malloc((size_t)(cap + 1) * sizeof *col);
    double *val = malloc((size_t)(cap + 1) * sizeof *val);
    for (int64_t i = 0; i < nl; i++)
        for (int64_t q = g.rp[own[i]]; q < g.rp[own[i] + 1]; q++)
            row[k] = own[i], col[k] = g.ci[q], val[k++] = g.v[q];
    grid_free(&g);
    sla_dist_pattern *P = NULL;
    CHECK(sla_dist_pattern_from_coo(L, L, k, row, col, &P));
    int64_t m = sla_dist_pattern_nnz(P);
    double *lv = malloc((size_t)(m + 1) * sizeof *lv);
    double *d[2] = {malloc((size_t)(m + 1) * sizeof(double)), malloc((size_t)(m + 1) * sizeof(double))};
    CHECK(sla_dist_values_gather(P, SLA_FLOAT64, 1, val, lv));
    free(row); free(col); free(val);
    sla_dist_matrix A = sla_dist_matrix_view(P, SLA_FLOAT64, 1, lv);
    sla_dist_lu *F = NULL;
    CHECK(sla_dist_lu_create(&A, &F));
    const sla_dist_logdet_grad_method meth[2] = {SLA_DIST_LOGDET_GRAD_GATHER, SLA_DIST_LOGDET_GRAD_MUMPS};
    figures best[2], mine;
    for (int t = 0; t < 2; t++) best[t].wall = INFINITY;
    for (int r = 0; r < reps; r++)
        for (int t = 0; t < 2; t++) {
            mine = one(F, meth[t], d[t]);
            if (r == 0) best[t] = mine;                          /* memory: the first call */
            if (mine.wall < best[t].wall) { best[t].wall = mine.wall; best[t].cpu = mine.cpu; }
            if (mine.cpu < best[t].cpu) best[t].cpu = mine.cpu;
        }
    double diff = 0, amax = 0, gd, ga;
    for (int64_t s = 0; s < m; s++) {
        diff = fmax(diff, fabs(d[0][s] - d[1][s]));
        amax = fmax(amax, fabs(d[0][s]));
    }
    MPI_Allreduce(&diff, &gd, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&amax, &ga, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    figures all[2][64];
    for (int t = 0; t < 2; t++)
        MPI_Gather(&best[t], 4, MPI_DOUBLE, all[t], 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\n  \"problem\": \"2D Poisson %lldx%lld\", \"rows\": %lld, \"nnz\": %lld, "
               "\"ranks\": %d, \"reps\": %d, \"mumps_chunk\": %lld,\n", (long long)n, (long long)n,
               (long long)(n * n), (long long)(5 * n * n - 4 * n), size, reps,
               (long long)(chunk > 0 ? chunk : (int64_t)1 << 20));
        printf("  \"max_abs_difference_relative\": %.3g,\n  \"methods\": {\n", gd / ga);
        print_method("gather", all[0], size, 0);
        print_method("mumps", all[1], size, 1);
        printf("  },\n  \"ratios_gather_over_mumps\": {\"wall\": %.3f, \"rank0_cpu\": %.3f, "
               "\"rank0_increment\": %.3f}\n}\n", all[0][0].wall / all[1][0].wall,
               all[0][0].cpu / all[1][0].cpu, all[0][0].incr / fmax(all[1][0].incr, 1e-3));
    }
    sla_dist_lu_free(&F);
    sla_dist_pattern_free(&P);
    sla_dist_layout_free(&L);
    free(lv); free(d[0]); free(d[1]);
    MPI_Finalize();
    return 0;
}
