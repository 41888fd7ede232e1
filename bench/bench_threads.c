/* Threads benchmark: when do OpenMP threads pay off for a Krylov solve? Prints one JSON object.
 *
 * For CG + Jacobi on 2D Poisson problems from 32² to 1000² (and bcsstk13 when the shared
 * matrices are found), the time per iteration with 1 and with 2 threads (sla_set_num_threads
 * before each solve; the library's own rule decides which kernels run on the team). Each
 * measurement runs about 0.05 s of iterations on one thread (rtol = atol = 0, solves repeated
 * when a small problem reaches its attainable accuracy first); the 1- and 2-thread measurements
 * alternate, `reps` times each, so that both see the same machine load; median, min and max
 * are reported.
 *
 *   --busy K     K extra processes spin for the whole run (a busy machine: with K = 1 on a 2-core
 *                machine, one of the two threads shares its core with a spinning process)
 *   --reps R     repetitions per case and thread count (default 5)
 *   --quick      sizes up to 256² only
 *
 * Also reported: the load average at the start, OMP_WAIT_POLICY, and the thread count the
 * library would use (sla_get_num_threads). See docs/krylov.md, "Threads".
 */
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grid_laplacian.h"
#include "sla/sla.h"

#ifndef SLA_MATRIX_DIR_DEFAULT
#define SLA_MATRIX_DIR_DEFAULT ""
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* seconds per iteration of CG + Jacobi on t threads: solves of b = 1 from x = 0 with
 * rtol = atol = 0 (each runs until max iterations or until the residual stops falling) are
 * repeated until `iters` iterations have run; -1 on failure */
static double time_per_iteration(const sla_matrix *A, int64_t iters, int t)
{
    int64_t n = sla_pattern_nrows(A->pattern), done = 0;
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = SLA_PRECOND_JACOBI;
    o.rtol = 0;
    o.atol = 0;
    o.maxiter = iters;
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    sla_set_num_threads(t);
    sla_solver *s = NULL;
    double el = 0;
    if (sla_solver_create(A, &o, &s) != SLA_OK) done = -1;
    while (done >= 0 && done < iters) {
        sla_solve_info info;
        double t0 = omp_get_wtime();
        sla_status st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
        el += omp_get_wtime() - t0;
        if (st < 0 || info.iterations < 1) done = -1;
        else done += info.iterations;
    }
    sla_solver_free(&s);
    free(b);
    free(x);
    return done > 0 ? el / (double)done : -1;
}

static void print_stats(const char *name, double *ms, int reps)
{
    qsort(ms, (size_t)reps, sizeof *ms, cmp_double);
    printf("\"%s\": {\"median\": %.4g, \"min\": %.4g, \"max\": %.4g}", name, ms[reps / 2], ms[0],
           ms[reps - 1]);
}

/* one case: ms per iteration on 1 and 2 threads, alternating */
static void run_case(const char *name, const sla_matrix *A, int reps, int first)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    /* about 0.05 s on one thread at ≈ 2 ns per nonzero and iteration, 20 to 2000 iterations */
    int64_t iters = (int64_t)(0.05 / (2e-9 * (double)(nnz + 4 * n)));
    if (iters < 20) iters = 20;
    if (iters > 2000) iters = 2000;
    double *ms1 = malloc(sizeof(double) * (size_t)reps), *ms2 = malloc(sizeof(double) * (size_t)reps);
    time_per_iteration(A, iters < 50 ? iters : 50, 1);      /* warm-up */
    int ok = 1;
    for (int r = 0; r < reps; r++) {
        double t1 = time_per_iteration(A, iters, 1), t2 = time_per_iteration(A, iters, 2);
        if (t1 < 0 || t2 < 0) ok = 0;
        ms1[r] = 1e3 * t1;
        ms2[r] = 1e3 * t2;
    }
    printf("%s    {\"name\": \"%s\", \"n\": %lld, \"nnz\": %lld, \"iterations_per_measurement\": %lld, \"ok\": %s, ",
           first ? "" : ",\n", name, (long long)n, (long long)nnz, (long long)iters,
           ok ? "true" : "false");
    double m1, m2;
    print_stats("ms_per_iteration_1t", ms1, reps);
    m1 = ms1[reps / 2];
    printf(", ");
    print_stats("ms_per_iteration_2t", ms2, reps);
    m2 = ms2[reps / 2];
    printf(", \"speedup_2t_median\": %.3g}", m1 / m2);
    fflush(stdout);
    free(ms1);
    free(ms2);
}

int main(int argc, char **argv)
{
    int busy = 0, reps = 5, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--busy") == 0 && i + 1 < argc) busy = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else {
            fprintf(stderr, "usage: bench_threads [--busy K] [--reps R] [--quick]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    double load[3] = {-1, -1, -1};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(f);
    }
    int max_threads = sla_get_num_threads();
    pid_t kids[64];
    if (busy > 64) busy = 64;
    for (int k = 0; k < busy; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            volatile unsigned long spin = 0;
            for (;;) spin++;
        }
    }
    const char *wp = getenv("OMP_WAIT_POLICY");
    printf("{\n  \"benchmark\": \"threads\",\n  \"loadavg_at_start\": [%.2f, %.2f, %.2f],\n",
           load[0], load[1], load[2]);
    printf("  \"omp_wait_policy\": \"%s\",\n  \"omp_max_threads\": %d,\n  \"busy_processes\": %d,\n",
           wp ? wp : "default", max_threads, busy);
    printf("  \"method\": \"cg + jacobi, rtol 0, fixed iterations\",\n  \"cases\": [\n");
    int sizes[] = {32, 64, 100, 128, 181, 256, 362, 512, 724, 1000}, first = 1;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        if (quick && sizes[k] > 256) break;
        grid_csr g = grid_laplacian(sizes[k], sizes[k], 1);
        sla_pattern *p;
        if (sla_pattern_from_csr(g.n, g.n, g.rp, g.ci, &p) != SLA_OK) {
            grid_free(&g);
            continue;
        }
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, g.v);
        char name[64];
        snprintf(name, sizeof name, "poisson2d_%d", sizes[k]);
        run_case(name, &A, reps, first);
        first = 0;
        sla_pattern_free(&p);
        grid_free(&g);
    }
    const char *dir = getenv("SLA_MATRIX_DIR");
    if (!dir) dir = SLA_MATRIX_DIR_DEFAULT;
    char path[1024];
    snprintf(path, sizeof path, "%s/bcsstk13.mtx", dir);
    sla_pattern *p = NULL;
    void *v = NULL;
    if (*dir && sla_mm_read_matrix(path, SLA_FLOAT64, &p, &v, NULL, NULL) == SLA_OK) {
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        run_case("bcsstk13", &A, reps, first);
        sla_pattern_free(&p);
        free(v);
    }
    printf("\n  ]\n}\n");
    for (int k = 0; k < busy; k++) {
        kill(kids[k], SIGKILL);
        waitpid(kids[k], NULL, 0);
    }
    return 0;
}
