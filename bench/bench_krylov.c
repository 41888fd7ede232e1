/* Krylov benchmark: prints one JSON object.
 *
 *   triad          STREAM-like triad a = b + s·c in this process (GB/s, best of 5): with 3 × 256 MiB
 *                  arrays (DRAM), and per problem with arrays as large as one CG iteration's
 *                  traffic (the same working set, cache effects included)
 *   poisson2d      5-point Poisson, 1000² = 1M DOF, b = 1, rtol 1e-8:
 *                  CG + Jacobi: ms per iteration against the byte model of one iteration at the
 *                  triad bandwidth; CG + IC(0); AMG-PCG total (set-up + solve) when AMG is in
 *                  the build; the adjoint (solve_vjp) of CG + Jacobi
 *   poisson3d      7-point Poisson 100³, the same methods
 *   rss            peak RSS (getrusage ru_maxrss, and VmHWM) of forward + backward (solve +
 *                  solve_vjp) with maxiter 100, 1000, 10000 and rtol 0 (all iterations run), CG +
 *                  Jacobi and GMRES(30), each case in its own process (this program re-executed
 *                  with --rss), run first while the parent is small
 *   --cg-jacobi    only CG + Jacobi on the two problems: one JSON line per problem with n,
 *                  iterations, solve_s, ms_per_iteration (bench/krylov_torch.py's C side)
 * Usage: bench_krylov [--quick] [--rss METHOD MAXITER] [--cg-jacobi]
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sla/sla.h"

/* ---- problems ---- */

/* 2D 5-point (nz = 1) or 3D 7-point Poisson on an nx × ny × nz grid, Dirichlet */
static void poisson(int64_t nx, int64_t ny, int64_t nz, sla_pattern **p, double **values)
{
    int64_t n = nx * ny * nz, cap = 7 * n, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    double diag = nz > 1 ? 6 : 4;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t i = (z * ny + y) * nx + x;
                int64_t nb[6] = {z > 0 ? i - nx * ny : -1, y > 0 ? i - nx : -1, x > 0 ? i - 1 : -1,
                                 x < nx - 1 ? i + 1 : -1, y < ny - 1 ? i + nx : -1,
                                 z < nz - 1 ? i + nx * ny : -1};
                for (int q = 0; q < 6; q++)
                    if (nb[q] >= 0) { r[k] = i; c[k] = nb[q]; v[k++] = -1; }
                r[k] = i; c[k] = i; v[k++] = diag;
            }
    if (sla_pattern_from_coo(n, n, k, r, c, p) != SLA_OK) {
        fprintf(stderr, "%s\n", sla_last_error());
        exit(1);
    }
    *values = malloc(sizeof(double) * (size_t)k);
    sla_values_gather(*p, SLA_FLOAT64, 1, v, *values);
    free(r); free(c); free(v);
}

/* ---- STREAM-like triad ---- */

static double triad_gbs(int64_t n)
{
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n),
           *c = malloc(sizeof(double) * (size_t)n);
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) { a[i] = 0; b[i] = 1; c[i] = 2; }
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t = omp_get_wtime();
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
        t = omp_get_wtime() - t;
        if (t < best) best = t;
    }
    volatile double sink = a[n / 2];
    (void)sink;
    free(a); free(b); free(c);
    return 24.0 * (double)n / best / 1e9;    /* STREAM counts 3 × 8 bytes per element */
}

/* ---- one solve, timed ---- */

typedef struct run_result {
    int ok;
    double setup_s, solve_s, vjp_s;
    int64_t iterations, vjp_iterations;
    double relres;
    char desc[320];
} run_result;

static run_result run(const sla_matrix *A, sla_method m, sla_precond pc, double rtol, int vjp)
{
    run_result R = {0};
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    o.precond = pc;
    o.rtol = rtol;
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    sla_solver *s = NULL;
    double t0 = omp_get_wtime();
    if (sla_solver_create(A, &o, &s) != SLA_OK) {
        snprintf(R.desc, sizeof R.desc, "%s", sla_last_error());
        free(b); free(x);
        return R;
    }
    double t1 = omp_get_wtime();
    sla_solve_info info;
    sla_status st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
    double t2 = omp_get_wtime();
    R.ok = st == SLA_OK;
    R.setup_s = t1 - t0;
    R.solve_s = t2 - t1;
    R.iterations = info.iterations;
    R.relres = info.relative_residual;
    snprintf(R.desc, sizeof R.desc, "%s", sla_solver_describe(s));
    if (vjp) {
        double *g = malloc(sizeof(double) * (size_t)n), *db = malloc(sizeof(double) * (size_t)n);
        double *dv = malloc(sizeof(double) * (size_t)sla_pattern_nnz(A->pattern));
        for (int64_t i = 0; i < n; i++) g[i] = sin((double)i);
        t1 = omp_get_wtime();
        sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, db, dv, &info);
        R.vjp_s = omp_get_wtime() - t1;
        R.vjp_iterations = info.iterations;
        free(g); free(db); free(dv);
    }
    sla_solver_free(&s);
    free(b); free(x);
    return R;
}

/* s as a JSON string (quotes, backslashes and control characters escaped) */
static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
        else putchar(*s);
    }
    putchar('"');
}

static void print_run(const char *name, const run_result *R, int last)
{
    printf("      \"%s\": {\"ok\": %s, \"describe\": ", name, R->ok ? "true" : "false");
    print_json_string(R->desc);
    printf(", \"iterations\": %lld, "
           "\"relative_residual\": %.3e, \"setup_s\": %.4f, \"solve_s\": %.4f, \"total_s\": %.4f, "
           "\"ms_per_iteration\": %.4f",
           (long long)R->iterations, R->relres, R->setup_s, R->solve_s, R->setup_s + R->solve_s,
           R->iterations ? 1e3 * R->solve_s / (double)R->iterations : 0.0);
    if (R->vjp_s > 0)
        printf(", \"vjp_s\": %.4f, \"vjp_iterations\": %lld", R->vjp_s, (long long)R->vjp_iterations);
    printf("}%s\n", last ? "" : ",");
}

/* Bytes one CG + Jacobi iteration moves in the fused kernels (double values, int32 columns,
 * int64 row pointers), assuming the neighbours of p stay in cache during the SpMV:
 *   q = A p, pᵀq      rowptr 8(n+1), colind 4 nnz, values 8 nnz, p 8n, q 8n (write)
 *   x, r update       read x p r q D⁻¹ (40n), write x r (16n)
 *   p = D⁻¹r + βp     read D⁻¹ r p (24n), write p (8n)                                      */
static double cg_jacobi_bytes(int64_t n, int64_t nnz)
{
    return 8.0 * (double)(n + 1) + 12.0 * (double)nnz + 16.0 * (double)n + 56.0 * (double)n +
           32.0 * (double)n;
}

static void problem(const char *name, int64_t nx, int64_t ny, int64_t nz, double gbs, int quick,
                    int last)
{
    sla_pattern *p;
    double *v;
    poisson(nx, ny, nz, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    run_result jac = run(&A, SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-8, 1);
    run_result ic0 = run(&A, SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-8, 0);
    run_result amg = run(&A, SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-8, 0);
    run_result ilu = quick ? (run_result){0} : run(&A, SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0, 1e-8, 0);
    double bytes = cg_jacobi_bytes(n, nnz);
    /* the same model at the triad bandwidth of a working set of CG's size (the L3 cache of a
     * server CPU may hold a whole 1M-unknown problem, which a DRAM-sized triad does not see) */
    double gbs_ws = triad_gbs((int64_t)(bytes / 24));
    double model_ms = 1e3 * bytes / (gbs * 1e9), model_ws_ms = 1e3 * bytes / (gbs_ws * 1e9);
    double meas_ms = jac.iterations ? 1e3 * jac.solve_s / (double)jac.iterations : 0;
    printf("    \"%s\": {\"n\": %lld, \"nnz\": %lld,\n", name, (long long)n, (long long)nnz);
    printf("      \"cg_jacobi_bytes_per_iteration\": %.0f, \"model_ms_per_iteration\": %.4f, "
           "\"measured_over_model\": %.3f,\n", bytes, model_ms, meas_ms / model_ms);
    printf("      \"triad_gbs_same_working_set\": %.2f, \"model_same_working_set_ms\": %.4f, "
           "\"measured_over_model_same_working_set\": %.3f,\n", gbs_ws, model_ws_ms,
           meas_ms / model_ws_ms);
    print_run("cg_jacobi", &jac, 0);
    print_run("cg_ic0", &ic0, 0);
    print_run("bicgstab_ilu0", &ilu, 0);
    print_run("cg_amg", &amg, 1);
    printf("    }%s\n", last ? "" : ",");
    sla_pattern_free(&p);
    free(v);
}

/* ---- peak RSS of forward + backward, in a fresh process ---- */

static int rss_child(const char *method, int64_t maxiter)
{
    sla_pattern *p;
    double *v;
    poisson(300, 300, 1, &p, &v);
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    sla_method_from_name(method, &o.method);
    /* GMRES(30) without M on this grid does not reach rounding level in 10000 iterations, so
     * with rtol 0 every case runs all its iterations */
    o.precond = o.method == SLA_METHOD_CG ? SLA_PRECOND_JACOBI : SLA_PRECOND_NONE;
    o.rtol = 0;
    o.maxiter = maxiter;
    o.restart = 30;
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n),
           *g = malloc(sizeof(double) * (size_t)n), *db = malloc(sizeof(double) * (size_t)n),
           *dv = malloc(sizeof(double) * (size_t)sla_pattern_nnz(p));
    for (int64_t i = 0; i < n; i++) { b[i] = 1; g[i] = cos((double)i); }
    sla_solver *s = NULL;
    sla_solve_info i1, i2;
    double t = omp_get_wtime();
    if (sla_solver_create(&A, &o, &s) != SLA_OK) return 1;
    sla_solver_solve(s, SLA_OP_N, 1, b, x, &i1);
    sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, db, dv, &i2);
    t = omp_get_wtime() - t;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long hwm = -1;                           /* the peak RSS of this image alone (Linux) */
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) hwm = atol(line + 6);
    if (f) fclose(f);
    printf("{\"method\": \"%s\", \"maxiter\": %lld, \"iterations\": [%lld, %lld], "
           "\"ru_maxrss_kb\": %ld, \"vmhwm_kb\": %ld, \"seconds\": %.2f}", method,
           (long long)maxiter, (long long)i1.iterations, (long long)i2.iterations, ru.ru_maxrss,
           hwm, t);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(b); free(x); free(g); free(db); free(dv);
    return 0;
}

static void rss_case(const char *self, const char *method, int64_t maxiter, int last)
{
    char it[32];
    snprintf(it, sizeof it, "%lld", (long long)maxiter);
    int fd[2];
    if (pipe(fd) != 0) return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execl(self, self, "--rss", method, it, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[512] = "";
    ssize_t len = read(fd[0], buf, sizeof buf - 1);
    buf[len > 0 ? len : 0] = '\0';
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    printf("      %s%s\n", buf[0] ? buf : "null", last ? "" : ",");
}

/* --cg-jacobi: the CG + Jacobi run of problem() alone, on 2D 1000² and 3D 100³ */
static int cg_jacobi_only(void)
{
    const int64_t dims[2][3] = {{1000, 1000, 1}, {100, 100, 100}};
    for (int q = 0; q < 2; q++) {
        sla_pattern *p;
        double *v;
        poisson(dims[q][0], dims[q][1], dims[q][2], &p, &v);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        run_result R = run(&A, SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-8, 0);
        printf("{\"problem\": \"%s\", \"n\": %lld, \"threads\": %d, \"converged\": %d, "
               "\"iterations\": %lld, \"setup_s\": %.6f, \"solve_s\": %.6f, "
               "\"ms_per_iteration\": %.5f}\n", q ? "poisson3d_100" : "poisson2d_1000",
               (long long)sla_pattern_nrows(p), sla_get_num_threads(), R.ok,
               (long long)R.iterations, R.setup_s, R.solve_s,
               R.iterations ? 1e3 * R.solve_s / (double)R.iterations : 0.0);
        sla_pattern_free(&p);
        free(v);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--rss") == 0) return rss_child(argv[2], atoll(argv[3]));
    if (argc == 2 && strcmp(argv[1], "--cg-jacobi") == 0) return cg_jacobi_only();
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    printf("{\n  \"benchmark\": \"krylov\",\n  \"threads\": %d,\n", sla_get_num_threads());
    /* first, while this process is still small: a child inherits the parent's RSS high-water
     * mark in ru_maxrss across fork + exec */
    printf("  \"rss_forward_backward_poisson2d_300x300\": [\n");
    int64_t its[3] = {100, 1000, 10000};
    int ncase = quick ? 2 : 3;
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < ncase; k++)
            rss_case("/proc/self/exe", m ? "gmres" : "cg", its[k], m == 1 && k == ncase - 1);
    printf("  ],\n");
    double gbs = triad_gbs(quick ? (int64_t)1 << 22 : (int64_t)1 << 25);
    printf("  \"triad_gbs\": %.2f,\n  \"problems\": {\n", gbs);
    if (quick) {
        problem("poisson2d_200x200", 200, 200, 1, gbs, quick, 0);
        problem("poisson3d_30x30x30", 30, 30, 30, gbs, quick, 1);
    } else {
        problem("poisson2d_1000x1000", 1000, 1000, 1, gbs, quick, 0);
        problem("poisson3d_100x100x100", 100, 100, 100, gbs, quick, 1);
    }
    printf("  }\n}\n");
    return 0;
}
