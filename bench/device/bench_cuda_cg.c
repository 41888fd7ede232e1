/* CG + Jacobi on the CUDA backend for the 2D Poisson 5-point matrix (bench/device/run.sh runs
 * it on the GPU machine). Prints one JSON object: the device's measured copy bandwidth
 * (cudaMemcpy device to device, read + write), then for the problem of side --n: setup time,
 * solve time (min and median of --reps), iterations, time per iteration, the relative true
 * residual, and the fraction of the copy bandwidth the iteration's modelled traffic reaches;
 * with --large L, a second problem of side L limited to --large-iters iterations for bytes per
 * unknown (device memory in use at the peak of the solve, from cudaMemGetInfo in the monitor)
 * and time per iteration. Without a device it prints {"skipped": reason} and exits 0. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "sla/cuda.h"
#include "sla/gallery.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define CHECK(expr) do { sla_status st_ = (expr); if (st_ < 0) { \
    fprintf(stderr, "%s: %s\n", #expr, sla_last_error()); exit(1); } } while (0)
#define CU(expr) do { cudaError_t e_ = (expr); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #expr, cudaGetErrorString(e_)); exit(1); } } while (0)

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* GB/s of cudaMemcpy device → device of `bytes`, counting read + write, best of 5 */
static double copy_bandwidth(size_t bytes)
{
    void *a, *b;
    CU(cudaMalloc(&a, bytes));
    CU(cudaMalloc(&b, bytes));
    CU(cudaMemset(a, 0, bytes));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r < 6; r++) {
        cudaEventRecord(e0, 0);
        CU(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r > 0 && ms < best) best = ms;
    }
    cudaFree(a);
    cudaFree(b);
    return 2.0 * (double)bytes / (best * 1e-3) / 1e9;
}

typedef struct problem {
    sla_pattern *p;
    void *dv, *db, *dx;
    int64_t n, nnz;
} problem;

static void problem_make(problem *P, int64_t side)
{
    int64_t dims[2] = {side, side};
    double lower[2] = {-1, -1}, upper[2] = {-1, -1}, *v;
    CHECK(sla_gallery_grid(2, dims, 4.0, lower, upper, &P->p, &v));
    P->n = sla_pattern_nrows(P->p);
    P->nnz = sla_pattern_nnz(P->p);
    CU(cudaMalloc(&P->dv, (size_t)P->nnz * sizeof(double)));
    CU(cudaMemcpy(P->dv, v, (size_t)P->nnz * sizeof(double), cudaMemcpyHostToDevice));
    free(v);
    double *b = malloc((size_t)P->n * sizeof *b);
    for (int64_t i = 0; i < P->n; i++) b[i] = 1;
    CU(cudaMalloc(&P->db, (size_t)P->n * sizeof(double)));
    CU(cudaMalloc(&P->dx, (size_t)P->n * sizeof(double)));
    CU(cudaMemcpy(P->db, b, (size_t)P->n * sizeof(double), cudaMemcpyHostToDevice));
    free(b);
}

static void problem_free(problem *P)
{
    cudaFree(P->dv);
    cudaFree(P->db);
    cudaFree(P->dx);
    sla_pattern_free(&P->p);
}

static sla_solver *make_solver(const problem *P, double rtol, int64_t maxiter,
                               sla_monitor_fn mon, void *ctx, double *setup_s)
{
    sla_matrix A = sla_matrix_view(P->p, SLA_FLOAT64, 1, P->dv);
    A.space = SLA_MEM_DEVICE;
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = SLA_PRECOND_JACOBI;
    o.rtol = rtol;
    o.atol = 0;
    o.maxiter = maxiter;
    o.monitor = mon;
    o.monitor_ctx = ctx;
    o.monitor_every = 50;
    sla_solver *s;
    double t0 = now();
    CHECK(sla_solver_create(&A, &o, &s));
    CU(cudaDeviceSynchronize());
    *setup_s = now() - t0;
    return s;
}

/* the device memory in use at its peak during a solve, sampled by the monitor */
typedef struct peak { size_t min_free; } peak;
static int sample(void *ctx, int64_t b, int64_t j, int64_t it, double res)
{
    (void)b; (void)j; (void)it; (void)res;
    size_t fr, tot;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess && fr < ((peak *)ctx)->min_free)
        ((peak *)ctx)->min_free = fr;
    return 0;
}

/* bytes one CG + Jacobi iteration moves at least (each array read or written once per
 * kernel): SpMV (values, columns, row pointers, x, y), pᵀq (unless fused), the fused update
 * (p, q, x, r, d read; x, r written), the direction (r, d, p read; p written) */
static double iteration_bytes(int64_t n, int64_t nnz, int fused_dot)
{
    return nnz * 12.0 + (n + 1) * 8.0 + 2 * n * 8.0 + (fused_dot ? 0 : 2 * n * 8.0) +
           7 * n * 8.0 + 4 * n * 8.0;
}

int main(int argc, char **argv)
{
    int64_t side = 1000, large = 0, large_iters = 100;
    int reps = 3;
    double rtol = 1e-8;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) side = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rtol")) rtol = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--large")) large = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--large-iters")) large_iters = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--spmv")) setenv("SLA_CUDA_SPMV", argv[i + 1], 1);
    }
    if (reps < 1 || reps > 50) reps = 3;
    if (sla_cuda_available() != SLA_OK) {
        printf("{\"skipped\": \"%s\"}\n", sla_last_error());
        return 0;
    }
    CHECK(sla_cuda_register());
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    double bw = copy_bandwidth((size_t)1 << 30);
    printf("{\n  \"device\": \"%s\",\n  \"copy_bandwidth_GBps\": %.1f,\n", prop.name, bw);

    problem P;
    problem_make(&P, side);
    double setup;
    sla_solver *s = make_solver(&P, rtol, 100000, NULL, NULL, &setup);
    double *times = malloc((size_t)(reps + 1) * sizeof *times);
    sla_solve_info info;
    for (int r = 0; r <= reps; r++) {           /* r = 0: warm-up */
        double t0 = now();
        sla_status st = sla_solver_solve(s, SLA_OP_N, 1, P.db, P.dx, &info);
        if (st < 0) { fprintf(stderr, "solve: %s\n", sla_last_error()); return 1; }
        times[r] = now() - t0;
    }
    qsort(times + 1, (size_t)reps, sizeof *times, cmp);
    int fused = strstr(sla_solver_describe(s), "own kernel") != NULL;
    double t_it = times[1] / (double)(info.iterations > 0 ? info.iterations : 1);
    double bytes = iteration_bytes(P.n, P.nnz, fused);
    printf("  \"poisson\": {\"side\": %lld, \"unknowns\": %lld, \"nnz\": %lld, \"rtol\": %g,\n"
           "    \"solver\": \"%s\",\n"
           "    \"setup_ms\": %.3f, \"solve_ms_min\": %.3f, \"solve_ms_median\": %.3f,\n"
           "    \"iterations\": %lld, \"converged\": %d, \"relative_residual\": %.3e,\n"
           "    \"ms_per_iteration\": %.5f, \"modelled_bytes_per_iteration\": %.0f,\n"
           "    \"fraction_of_copy_bandwidth\": %.3f,\n"
           "    \"vs_torch_sla_published_190ms\": %.3f}",
           (long long)side, (long long)P.n, (long long)P.nnz, rtol, sla_solver_describe(s),
           setup * 1e3, times[1] * 1e3, times[1 + reps / 2] * 1e3, (long long)info.iterations,
           info.converged, info.relative_residual, t_it * 1e3, bytes,
           bytes / t_it / 1e9 / bw, times[1] / 0.190);
    sla_solver_free(&s);
    problem_free(&P);
    free(times);

    if (large > 0) {
        size_t free0, total;
        CU(cudaMemGetInfo(&free0, &total));
        problem L;
        problem_make(&L, large);
        peak pk = {free0};
        sla_solver *sl = make_solver(&L, 1e-30, large_iters, sample, &pk, &setup);
        double t0 = now();
        sla_status st = sla_solver_solve(sl, SLA_OP_N, 1, L.db, L.dx, &info);
        double t = now() - t0;
        if (st < 0) { fprintf(stderr, "large solve: %s\n", sla_last_error()); return 1; }
        double used = (double)(free0 - pk.min_free);
        printf(",\n  \"large\": {\"side\": %lld, \"unknowns\": %lld, \"iterations\": %lld,\n"
               "    \"ms_per_iteration\": %.3f, \"device_bytes_in_use_at_peak\": %.0f,\n"
               "    \"bytes_per_unknown\": %.1f, \"device_total_bytes\": %zu}",
               (long long)large, (long long)L.n, (long long)info.iterations,
               t / (double)(info.iterations > 0 ? info.iterations : 1) * 1e3, used,
               used / (double)L.n, total);
        sla_solver_free(&sl);
        problem_free(&L);
    }
    printf("\n}\n");
    return 0;
}
