/* SpMV bandwidth against a STREAM triad measured in the same run.
 *
 * For 2D 5-point Poisson matrices (float64) with 1M and 4M rows, on 1 and 2 threads, prints one
 * JSON object: the triad bandwidth (a[i] = b[i] + s·c[i], arrays ≥ 4× the last-level cache, best
 * of several repetitions), the best and median time of y = A·x and y = Aᵀ·x, their bandwidth by
 * the byte model (8-byte value + 4-byte column index per nonzero, 8-byte row pointers, x read
 * once, y written once; no write-allocate, as STREAM counts) and the ratio to the triad.
 *
 * Usage: bench_spmv [reps]   (reps ≥ 10, default 20) */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sla/sla.h"

#define CHECK(expr) do { sla_status st_ = (expr); if (st_ != SLA_OK) { \
    fprintf(stderr, "%s failed: %s\n", #expr, sla_last_error()); exit(1); } } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct timing { double best, median; } timing;

static timing summarize(double *t, int reps)
{
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    return (timing){t[0], t[reps / 2]};
}

static size_t llc_bytes(void)
{
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    long c = l3 > 0 ? l3 : l2 > 0 ? l2 : 32L << 20;
    return (size_t)c;
}

/* STREAM triad on n doubles per array: best time of reps after one warm-up pass. Arrays are
 * first touched in parallel with the same static schedule as the timed loop. */
static timing triad(double *a, double *b, double *c, int64_t n, int reps, double *t)
{
    const double s = 3.0;
    for (int r = -1; r < reps; r++) {
        double t0 = omp_get_wtime();
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        if (r >= 0) t[r] = omp_get_wtime() - t0;
    }
    return summarize(t, reps);
}

/* 2D 5-point Poisson on an nx × nx grid assembled from COO. */
static void poisson(int64_t nx, sla_pattern **p, double **values)
{
    int64_t n = nx * nx, cap = 5 * n, k = 0;
    int64_t *r = malloc(sizeof *r * (size_t)cap), *c = malloc(sizeof *c * (size_t)cap);
    double *v = malloc(sizeof *v * (size_t)cap);
    if (!r || !c || !v) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (int64_t gy = 0; gy < nx; gy++)
        for (int64_t gx = 0; gx < nx; gx++) {
            int64_t i = gy * nx + gx;
            int64_t nb[4] = {gy > 0 ? i - nx : -1, gx > 0 ? i - 1 : -1,
                             gx < nx - 1 ? i + 1 : -1, gy < nx - 1 ? i + nx : -1};
            r[k] = i; c[k] = i; v[k++] = 4;
            for (int q = 0; q < 4; q++)
                if (nb[q] >= 0) { r[k] = i; c[k] = nb[q]; v[k++] = -1; }
        }
    CHECK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc(sizeof **values * (size_t)sla_pattern_nnz(*p));
    CHECK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

static timing time_spmv(sla_op op, const sla_matrix *A, const double *x, double *y, int reps,
                        double *t)
{
    CHECK(sla_spmv(op, 1.0, A, x, 0, 1, 0.0, y));   /* warm-up; op = T builds Aᵀ here */
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
        CHECK(sla_spmv(op, 1.0, A, x, 0, 1, 0.0, y));
        t[r] = omp_get_wtime() - t0;
    }
    return summarize(t, reps);
}

/* One line of the report: matrix size, threads, triad and SpMV bandwidths. */
typedef struct run {
    int64_t rows, nnz;
    int threads;
    double bytes;
    timing triad, n, t;      /* seconds */
    int64_t triad_n;         /* doubles per triad array */
} run;

static void print_run(const run *r, int first)
{
    double tri = 24.0 * (double)r->triad_n / r->triad.best / 1e9;
    double gn = r->bytes / r->n.best / 1e9, gt = r->bytes / r->t.best / 1e9;
    printf("%s\n    {\"rows\": %lld, \"nnz\": %lld, \"threads\": %d, \"model_bytes\": %.0f,\n",
           first ? "" : ",", (long long)r->rows, (long long)r->nnz, r->threads, r->bytes);
    printf("     \"triad_gbs\": %.2f, \"triad_median_gbs\": %.2f,\n", tri,
           24.0 * (double)r->triad_n / r->triad.median / 1e9);
    printf("     \"spmv_n_best_ms\": %.3f, \"spmv_n_median_ms\": %.3f, \"spmv_n_gbs\": %.2f, "
           "\"spmv_n_ratio_to_triad\": %.3f,\n", r->n.best * 1e3, r->n.median * 1e3, gn, gn / tri);
    printf("     \"spmv_t_best_ms\": %.3f, \"spmv_t_median_ms\": %.3f, \"spmv_t_gbs\": %.2f, "
           "\"spmv_t_ratio_to_triad\": %.3f}", r->t.best * 1e3, r->t.median * 1e3, gt, gt / tri);
    fflush(stdout);
}

/* Triad and SpMV (op = N, T) on an nx × nx Poisson matrix for each thread count. */
static void run_grid(int64_t nx, const int *threads, int nthreads, double *const abc[3],
                     int64_t ntriad, int reps, double *t, int *first)
{
    sla_pattern *p;
    double *values;
    poisson(nx, &p, &values);
    run r = {.rows = sla_pattern_nrows(p), .nnz = sla_pattern_nnz(p), .triad_n = ntriad};
    r.bytes = 12.0 * (double)r.nnz + 8.0 * (double)(r.rows + 1) + 16.0 * (double)r.rows;
    double *x = malloc(sizeof *x * (size_t)r.rows), *y = malloc(sizeof *y * (size_t)r.rows);
    if (!x || !y) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (int64_t i = 0; i < r.rows; i++) x[i] = 1.0 + (double)(i % 7) * 0.125;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, values);
    for (int ti = 0; ti < nthreads; ti++) {
        omp_set_num_threads(threads[ti]);      /* the triad */
        CHECK(sla_set_num_threads(threads[ti]));   /* libsla */
        r.threads = threads[ti];
        r.triad = triad(abc[0], abc[1], abc[2], ntriad, reps, t);
        r.n = time_spmv(SLA_OP_N, &A, x, y, reps, t);
        r.t = time_spmv(SLA_OP_T, &A, x, y, reps, t);
        print_run(&r, *first);
        *first = 0;
    }
    free(x); free(y); free(values);
    sla_pattern_free(&p);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    if (reps < 10) reps = 10;
    const int threads[] = {1, 2};
    size_t llc = llc_bytes();
    int64_t ntriad = (int64_t)(4 * llc / sizeof(double)) + 1;
    double *t = malloc(sizeof *t * (size_t)reps), *abc[3];
    for (int q = 0; q < 3; q++) abc[q] = malloc(sizeof(double) * (size_t)ntriad);
    if (!t || !abc[0] || !abc[1] || !abc[2]) { fprintf(stderr, "out of memory\n"); return 1; }
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ntriad; i++) { abc[0][i] = 0; abc[1][i] = 1; abc[2][i] = 2; }
    printf("{\n  \"benchmark\": \"spmv\", \"dtype\": \"float64\", "
           "\"matrix\": \"poisson2d_5pt\",\n");
    printf("  \"llc_bytes\": %zu, \"triad_array_bytes\": %lld, \"reps\": %d,\n", llc,
           (long long)(ntriad * 8), reps);
    printf("  \"runs\": [");
    int first = 1;
    run_grid(1000, threads, 2, abc, ntriad, reps, t, &first);   /* 1M rows */
    run_grid(2000, threads, 2, abc, ntriad, reps, t, &first);   /* 4M rows */
    printf("\n  ]\n}\n");
    for (int q = 0; q < 3; q++) free(abc[q]);
    free(t);
    return 0;
}
