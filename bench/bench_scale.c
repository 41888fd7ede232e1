/* Memory at scale: one Poisson problem per run (its own process, so that the peak RSS is
 * this problem's), built by the gallery in CSR order and solved by CG with a preconditioner.
 * Prints one JSON object: unknowns, nonzeros, peak RSS (bytes and bytes per unknown) after the
 * build, after the solver set-up and after the solve (sla_solve_info.peak_bytes), set-up and
 * solve time, iterations, relative residual. bench/scale.py runs it over sizes.
 *
 * Usage: bench_scale PRECOND NDIM SIDE [RTOL [MAXITER [BUILD]]]
 *   PRECOND  jacobi | amg | amg-levels      NDIM 2 (5-point) | 3 (7-point)      SIDE nodes per axis
 *            amg-levels: no solve; the AMG hierarchy the solver would build (the same options),
 *            built on its own, and one JSON line per level: rows, nonzeros, the bytes of each
 *            component (sla_amg_level_memory_get) per fine unknown, and the peak RSS when that
 *            level's set-up was done
 *   RTOL     default 1e-6; b = 1      MAXITER default 100000 (a cap that stops a long Jacobi run
 *            early still measures the peak: every vector is allocated before the first step)
 *   BUILD    gallery (default: sla_gallery_grid writes the pattern's own arrays) | the caller
 *            holds the CSR arrays and values (the same matrix) and hands them in:
 *            csr-copy      int64 row pointers and int64 columns to sla_pattern_from_csr (copied)
 *            csr-borrow    int64 row pointers and int32 columns to sla_pattern_borrow_csr
 *            csr-borrow32  int32 row pointers (widened, and copied as int32 for the SpMV) and
 *                          int32 columns, borrowed */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "precond/amg.h"
#include "sla/sla.h"

#define CHECK(expr) do { sla_status st_ = (expr); if (st_ < 0) { \
    fprintf(stderr, "%s failed: %s\n", #expr, sla_last_error()); exit(1); } } while (0)

/* Process CPU time (all threads): on a shared machine it shows the work when wall times are
 * inflated by other jobs. */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The caller's CSR arrays of the grid Laplacian in the gallery's order (diagonal 2·ndim, −1 to
 * each neighbour, columns ascending): int64 or int32 row pointers, int64 or int32 columns. */
static void caller_csr(int ndim, int64_t side, int64_t **rp64, int32_t **rp32, int64_t **ci64,
                       int32_t **ci32, double **v, int64_t *n_out)
{
    int64_t nz = ndim == 3 ? side : 1, n = side * side * nz, cap = n * (2 * ndim + 1);
    if (rp64) *rp64 = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (rp32) *rp32 = malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (ci64) *ci64 = malloc(sizeof(int64_t) * (size_t)cap);
    if (ci32) *ci32 = malloc(sizeof(int32_t) * (size_t)cap);
    *v = malloc(sizeof(double) * (size_t)cap);
    if ((rp64 && !*rp64) || (rp32 && !*rp32) || (ci64 && !*ci64) || (ci32 && !*ci32) || !*v) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    int64_t k = 0, s2 = side * side;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = i % side, y = i / side % side, z = i / s2;
        int64_t nb[7] = {ndim == 3 && z > 0 ? i - s2 : -1, y > 0 ? i - side : -1,
                         x > 0 ? i - 1 : -1, i, x < side - 1 ? i + 1 : -1,
                         y < side - 1 ? i + side : -1, ndim == 3 && z < nz - 1 ? i + s2 : -1};
        if (rp64) (*rp64)[i] = k;
        if (rp32) (*rp32)[i] = (int32_t)k;
        for (int q = 0; q < 7; q++) {
            if (nb[q] < 0) continue;
            if (ci64) (*ci64)[k] = nb[q];
            if (ci32) (*ci32)[k] = (int32_t)nb[q];
            (*v)[k++] = nb[q] == i ? 2.0 * ndim : -1.0;
        }
    }
    if (rp64) (*rp64)[n] = k;
    if (rp32) (*rp32)[n] = (int32_t)k;
    *n_out = n;
}

/* amg-levels: the hierarchy's components level by level, bytes per fine unknown. */
static int print_levels(const sla_matrix *A, int64_t n, int64_t rss_build)
{
    sla_amg_options o;
    sla_amg_options_init(&o);
    sla_amg *h = NULL;
    double t0 = omp_get_wtime();
    CHECK(sla_amg_create(A, 0, &o, &h));
    double t1 = omp_get_wtime();
    double un = (double)n;
    printf("{\"unknowns\": %lld, \"build_bytes_per_unknown\": %.1f, \"setup_s\": %.3f, "
           "\"setup_peak_bytes_per_unknown\": %.1f, \"describe\": \"%s\"}\n", (long long)n,
           (double)rss_build / un, t1 - t0, (double)sla_peak_rss_bytes() / un,
           sla_amg_describe(h));
    for (int l = 0; l < sla_amg_nlevels(h); l++) {
        sla_amg_level_memory m;
        CHECK(sla_amg_level_memory_get(h, l, &m));
        printf("{\"level\": %d, \"rows\": %lld, \"nnz\": %lld, \"per_fine_unknown\": {\"A\": %.2f, "
               "\"P\": %.2f, \"R\": %.2f, \"vectors\": %.2f, \"snapshot_virtual\": %.2f, "
               "\"diagonals\": %.2f, \"aggregates\": %.2f, \"lists\": %.2f}, "
               "\"peak_rss_after_bytes_per_unknown\": %.1f}\n",
               l, (long long)m.rows, (long long)m.nnz, m.A / un, m.P / un, m.R / un,
               m.vectors / un, m.snapshot / un, m.diagonals / un, m.aggregates / un, m.lists / un,
               (double)m.peak_rss_bytes / un);
    }
    sla_amg_free(&h);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_scale jacobi|amg NDIM SIDE [RTOL]\n");
        return 2;
    }
    int amg = strcmp(argv[1], "amg") == 0, ndim = atoi(argv[2]);
    int64_t side = atoll(argv[3]);
    double rtol = argc > 4 ? atof(argv[4]) : 1e-6;
    int64_t maxiter = argc > 5 ? atoll(argv[5]) : 100000;
    int levels = strcmp(argv[1], "amg-levels") == 0;
    const char *build = argc > 6 ? argv[6] : "gallery";
    int copy = !strcmp(build, "csr-copy"), borrow = !strcmp(build, "csr-borrow"),
        borrow32 = !strcmp(build, "csr-borrow32");
    if ((!amg && !levels && strcmp(argv[1], "jacobi")) || ndim < 2 || ndim > 3 || side < 2 ||
        (!copy && !borrow && !borrow32 && strcmp(build, "gallery")))
        return 2;
    int64_t dims[3] = {side, side, side};
    double w[3] = {-1, -1, -1};
    int64_t rss0 = sla_peak_rss_bytes();
    double t0 = omp_get_wtime();
    sla_pattern *p = NULL;
    double *v = NULL;
    int64_t *rp64 = NULL, *ci64 = NULL, nc = 0;
    int32_t *rp32 = NULL, *ci32 = NULL;
    if (copy || borrow || borrow32)
        caller_csr(ndim, side, borrow32 ? NULL : &rp64, borrow32 ? &rp32 : NULL,
                   copy ? &ci64 : NULL, copy ? NULL : &ci32, &v, &nc);
    if (copy) CHECK(sla_pattern_from_csr(nc, nc, rp64, ci64, &p));
    else if (borrow || borrow32) CHECK(sla_pattern_borrow_csr(nc, nc, rp64, rp32, ci32, NULL, NULL, &p));
    else CHECK(sla_gallery_grid(ndim, dims, 2.0 * ndim, w, w, &p, &v));
    double t1 = omp_get_wtime();
    int64_t rss_build = sla_peak_rss_bytes();
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    if (!b || !x) { fprintf(stderr, "out of memory\n"); return 1; }
    for (int64_t i = 0; i < n; i++) { b[i] = 1; x[i] = 0; }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    if (levels) return print_levels(&A, n, rss_build);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = amg ? SLA_PRECOND_AMG : SLA_PRECOND_JACOBI;
    o.rtol = rtol;
    o.maxiter = maxiter;
    sla_solver *s = NULL;
    double t2 = omp_get_wtime(), c2 = cpu_seconds();
    CHECK(sla_solver_create(&A, &o, &s));
    double t3 = omp_get_wtime(), c3 = cpu_seconds();
    int64_t rss_setup = sla_peak_rss_bytes();
    sla_solve_info info;
    CHECK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    double t4 = omp_get_wtime(), c4 = cpu_seconds();
    printf("{\"benchmark\": \"scale\", \"precond\": \"%s\", \"build\": \"%s\", "
           "\"ndim\": %d, \"side\": %lld, "
           "\"unknowns\": %lld, \"nnz\": %lld, \"threads\": %d, \"rtol\": %g,\n"
           " \"rss_start_bytes\": %lld, \"peak_rss_build_bytes\": %lld, "
           "\"peak_rss_setup_bytes\": %lld, \"peak_bytes\": %lld,\n"
           " \"peak_bytes_per_unknown\": %.1f, \"build_bytes_per_unknown\": %.1f, "
           "\"setup_bytes_per_unknown\": %.1f,\n"
           " \"build_s\": %.3f, \"setup_s\": %.3f, \"solve_s\": %.3f, \"iterations\": %lld, "
           "\"maxiter\": %lld, \"converged\": %d, \"relative_residual\": %.3e,\n"
           " \"solve_s_per_iteration\": %.3e, \"setup_cpu_s\": %.3f, \"solve_cpu_s\": %.3f}\n",
           argv[1], build, ndim, (long long)side, (long long)n, (long long)nnz, sla_get_num_threads(),
           rtol, (long long)rss0, (long long)rss_build, (long long)rss_setup,
           (long long)info.peak_bytes, (double)info.peak_bytes / (double)n,
           (double)rss_build / (double)n, (double)rss_setup / (double)n, t1 - t0, t3 - t2,
           t4 - t3, (long long)info.iterations, (long long)maxiter, info.converged,
           info.relative_residual, info.iterations > 0 ? (t4 - t3) / (double)info.iterations : 0.0, c3 - c2, c4 - c3);
    sla_solver_free(&s);
    sla_pattern_free(&p);               /* before the borrowed arrays go */
    free(v); free(b); free(x); free(rp64); free(rp32); free(ci64); free(ci32);
    return 0;
}
