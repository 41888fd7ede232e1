/* AMG-PCG benchmark: set-up time, iterations, solve time, total and operator complexity of sla's
 * smoothed-aggregation AMG as the preconditioner of a (private, benchmark-only) CG, on 2D 5-point
 * Poisson 256², 512², 1000² and 3D 7-point Poisson 100³; b = 1, x0 = 0, stop at
 * ‖b − A x‖₂ ≤ 1e-8 ‖b‖₂. Each case runs `repeat` times (default 3); the JSON reports the best
 * and the worst time of each phase (the machine is shared, the spread says how noisy it was).
 *
 * Usage: bench_amg [repeat] [case ...]   cases: p2d:N, p3d:N (default the four above).
 * Environment: SLA_AMG_SMOOTHER=jacobi, SLA_AMG_THETA=x, SLA_AMG_SWEEPS=k for experiments.
 * bench/bench_amg_hypre.c runs the same problems with hypre's BoomerAMG; bench/amg.sh runs both
 * and writes the ratios. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grid_laplacian.h"
#include "precond/amg.h"
#include "sla/sla.h"

/* Process CPU time (all threads): on a shared machine it shows the work when wall times are
 * inflated by other jobs. */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct csr_view {
    int64_t n;
    const int64_t *rp;
    const int32_t *ci;
    const double *v;
} csr_view;

static void spmv(const csr_view *A, const double *x, double *y)
{
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < A->n; i++) {
        double s = 0;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) s += A->v[k] * x[A->ci[k]];
        y[i] = s;
    }
}

static double dot(const double *x, const double *y, int64_t n)
{
    double s = 0;
    #pragma omp parallel for schedule(static) reduction(+ : s)
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* Preconditioned CG (Hestenes & Stiefel 1952) from x = 0; returns the number of iterations
 * (products with A) and the final true relative residual in *relres. */
static int pcg(const csr_view *A, sla_amg *amg, const double *b, double *x, double rtol,
               int maxit, double *relres)
{
    int64_t n = A->n;
    double *r = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
    double *p = malloc(sizeof(double) * (size_t)n), *q = malloc(sizeof(double) * (size_t)n);
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) { x[i] = 0; r[i] = b[i]; }
    double bnorm = sqrt(dot(b, b, n)), rz = 0;
    int it = 0;
    sla_amg_apply(amg, SLA_OP_N, r, z);
    memcpy(p, z, sizeof(double) * (size_t)n);
    rz = dot(r, z, n);
    while (it < maxit) {
        spmv(A, p, q);
        it++;
        double alpha = rz / dot(p, q, n);
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) { x[i] += alpha * p[i]; r[i] -= alpha * q[i]; }
        if (sqrt(dot(r, r, n)) <= rtol * bnorm) break;
        sla_amg_apply(amg, SLA_OP_N, r, z);
        double rz1 = dot(r, z, n), beta = rz1 / rz;
        rz = rz1;
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    spmv(A, x, q);
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (b[i] - q[i]) * (b[i] - q[i]);
    *relres = sqrt(s) / bnorm;
    free(r); free(z); free(p); free(q);
    return it;
}

static double complexity(const char *desc, const char *what)
{
    const char *s = strstr(desc, what);
    return s ? atof(s + strlen(what)) : NAN;
}

static void run_case(const char *name, int64_t nx, int64_t ny, int64_t nz, int repeat,
                     const sla_amg_options *opt, int first)
{
    grid_csr g = grid_laplacian(nx, ny, nz);
    sla_pattern *pat = NULL;
    if (sla_pattern_from_csr(g.n, g.n, g.rp, g.ci, &pat) != SLA_OK) {
        fprintf(stderr, "pattern: %s\n", sla_last_error());
        exit(1);
    }
    sla_matrix A = sla_matrix_view(pat, SLA_FLOAT64, 1, g.v);   /* g is sorted: CSR order */
    csr_view Av = {g.n, sla_pattern_rowptr(pat), sla_pattern_colind(pat), g.v};
    double *b = malloc(sizeof(double) * (size_t)g.n), *x = malloc(sizeof(double) * (size_t)g.n);
    for (int64_t i = 0; i < g.n; i++) b[i] = 1;
    double ts[2] = {INFINITY, 0}, tsol[2] = {INFINITY, 0}, ttot[2] = {INFINITY, 0}, relres = 0;
    double cs = INFINITY, csol = INFINITY;
    int iters = 0;
    char desc[512] = "";
    for (int rep = 0; rep < repeat; rep++) {
        sla_amg *amg = NULL;
        double c0 = cpu_seconds(), t0 = omp_get_wtime();
        if (sla_amg_create(&A, 0, opt, &amg) != SLA_OK) {
            fprintf(stderr, "create: %s\n", sla_last_error());
            exit(1);
        }
        double t1 = omp_get_wtime(), c1 = cpu_seconds();
        iters = pcg(&Av, amg, b, x, 1e-8, 500, &relres);
        double t2 = omp_get_wtime(), c2 = cpu_seconds();
        cs = fmin(cs, c1 - c0);
        csol = fmin(csol, c2 - c1);
        snprintf(desc, sizeof desc, "%s", sla_amg_describe(amg));
        sla_amg_free(&amg);
        double s = t1 - t0, v = t2 - t1;
        ts[0] = fmin(ts[0], s); ts[1] = fmax(ts[1], s);
        tsol[0] = fmin(tsol[0], v); tsol[1] = fmax(tsol[1], v);
        ttot[0] = fmin(ttot[0], s + v); ttot[1] = fmax(ttot[1], s + v);
    }
    printf("%s    {\"name\": \"%s\", \"n\": %lld, \"nnz\": %lld, \"setup_s\": %.4f, "
           "\"setup_s_max\": %.4f, \"iterations\": %d, \"relative_residual\": %.3g, "
           "\"solve_s\": %.4f, \"solve_s_max\": %.4f, \"total_s\": %.4f, \"total_s_max\": %.4f, "
           "\"setup_cpu_s\": %.4f, \"solve_cpu_s\": %.4f, \"total_cpu_s\": %.4f, "
           "\"operator_complexity\": %.3f, \"grid_complexity\": %.3f, \"describe\": \"%s\"}",
           first ? "" : ",\n", name, (long long)g.n, (long long)g.rp[g.n], ts[0], ts[1], iters,
           relres, tsol[0], tsol[1], ttot[0], ttot[1], cs, csol, cs + csol,
           complexity(desc, "operator complexity "), complexity(desc, "grid complexity "), desc);
    fflush(stdout);
    free(b);
    free(x);
    sla_pattern_free(&pat);
    grid_free(&g);
}

int main(int argc, char **argv)
{
    int repeat = argc > 1 ? atoi(argv[1]) : 3;
    if (repeat < 1) repeat = 1;
    sla_amg_options opt;
    sla_amg_options_init(&opt);
    const char *e;
    if ((e = getenv("SLA_AMG_SMOOTHER")) && !strcmp(e, "jacobi"))
        opt.smoother = SLA_AMG_SMOOTHER_JACOBI;
    if ((e = getenv("SLA_AMG_THETA"))) opt.strength = atof(e);
    if ((e = getenv("SLA_AMG_SWEEPS"))) opt.presmooth = opt.postsmooth = atoi(e);
    const char *defaults[] = {"p2d:256", "p2d:512", "p2d:1000", "p3d:100"};
    const char **cases = argc > 2 ? (const char **)argv + 2 : defaults;
    int ncases = argc > 2 ? argc - 2 : 4;
    printf("{\"bench\": \"amg\", \"threads\": %d, \"rtol\": 1e-8, \"repeat\": %d, "
           "\"problems\": [\n", sla_get_num_threads(), repeat);
    for (int c = 0; c < ncases; c++) {
        int64_t m = atoll(cases[c] + 4);
        char name[64];
        int three = !strncmp(cases[c], "p3d:", 4);
        snprintf(name, sizeof name, "poisson%s_%lld", three ? "3d" : "2d", (long long)m);
        run_case(name, m, m, three ? m : 1, repeat, &opt, c == 0);
    }
    printf("\n]}\n");
    return 0;
}
