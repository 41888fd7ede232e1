/* Serial real Krylov paths, every method: prints one JSON object with, per case, iterations,
 * relative residual and the best of 3 solve times (ms, solver set up once). Its purpose is the
 * before/after check of a change to the method sources (the complex seam: real iteration
 * counts must stay identical and times must not grow): build it against two libsla builds and
 * run both in the same session (LD_LIBRARY_PATH=old/build ./bench_krylov_methods, then new).
 *   2D Poisson 400² (SPD): CG + none / Jacobi / IC(0), MINRES + Jacobi, COCG + none
 *   2D convection–diffusion 400² (upwind, Péclet 0.5 per cell; unsymmetric): GMRES(30) and
 *   BiCGStab, each + none / ILU(0)
 * b = 1, rtol 1e-8, OMP_NUM_THREADS as set (run with 1 for the serial figures). solve_cpu_ms is
 * the process CPU time (clock()), which a loaded machine distorts less than the wall time.
 * Usage: bench_krylov_methods [--size N] */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grid_laplacian.h"
#include "sla/sla.h"

static double now(void) { return omp_get_wtime(); }

static void die(const char *what)
{
    fprintf(stderr, "bench_krylov_methods: %s: %s\n", what, sla_last_error());
    exit(1);
}

static void run(const char *name, const sla_matrix *A, sla_method m, sla_precond pc, int first)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    o.precond = pc;
    o.rtol = 1e-8;
    o.maxiter = 20000;
    o.restart = 30;
    sla_solver *s;
    if (sla_solver_create(A, &o, &s) < 0) die(name);
    int64_t n = sla_pattern_nrows(A->pattern);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    sla_solve_info info;
    double best = INFINITY, best_cpu = INFINITY;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        clock_t c0 = clock();
        if (sla_solver_solve(s, SLA_OP_N, 1, b, x, &info) < 0) die(name);
        double t = now() - t0, tc = (double)(clock() - c0) / CLOCKS_PER_SEC;
        if (t < best) best = t;
        if (tc < best_cpu) best_cpu = tc;
    }
    printf("%s\n    \"%s\": {\"iterations\": %lld, \"relative_residual\": %.6e, \"solve_ms\": %.2f, "
           "\"solve_cpu_ms\": %.2f}", first ? "" : ",", name, (long long)info.iterations,
           info.relative_residual, 1e3 * best, 1e3 * best_cpu);
    sla_solver_free(&s);
    free(b);
    free(x);
}

int main(int argc, char **argv)
{
    int64_t N = 400;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--size")) N = atoll(argv[i + 1]);
    grid_csr g = grid_laplacian(N, N, 1);
    sla_pattern *p;
    if (sla_pattern_from_csr(g.n, g.n, g.rp, g.ci, &p) < 0) die("pattern");
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, g.v);
    /* convection in x: a_{i,i−1} = −1 − 0.5, a_{i,i+1} = −1 + 0.5 (upwind part), diagonal 4 */
    int64_t nnz = g.rp[g.n];
    double *cv = malloc(sizeof(double) * (size_t)nnz);
    for (int64_t i = 0; i < g.n; i++)
        for (int64_t k = g.rp[i]; k < g.rp[i + 1]; k++)
            cv[k] = g.ci[k] == i - 1 ? -1.5 : g.ci[k] == i + 1 ? -0.5 : g.v[k];
    sla_matrix C = sla_matrix_view(p, SLA_FLOAT64, 1, cv);
    printf("{\"benchmark\": \"krylov_methods\", \"size\": %lld, \"threads\": %d, \"cases\": {",
           (long long)N, omp_get_max_threads());
    run("poisson_cg_none", &A, SLA_METHOD_CG, SLA_PRECOND_NONE, 1);
    run("poisson_cg_jacobi", &A, SLA_METHOD_CG, SLA_PRECOND_JACOBI, 0);
    run("poisson_cg_ic0", &A, SLA_METHOD_CG, SLA_PRECOND_IC0, 0);
    run("poisson_minres_jacobi", &A, SLA_METHOD_MINRES, SLA_PRECOND_JACOBI, 0);
    if (sla_method_from_name("cocg", &(sla_method){0}) == SLA_OK) {
        sla_method cocg;
        sla_method_from_name("cocg", &cocg);
        run("poisson_cocg_none", &A, cocg, SLA_PRECOND_NONE, 0);
    }
    sla_clear_error();
    run("convdiff_gmres_none", &C, SLA_METHOD_GMRES, SLA_PRECOND_NONE, 0);
    run("convdiff_gmres_ilu0", &C, SLA_METHOD_GMRES, SLA_PRECOND_ILU0, 0);
    run("convdiff_bicgstab_none", &C, SLA_METHOD_BICGSTAB, SLA_PRECOND_NONE, 0);
    run("convdiff_bicgstab_ilu0", &C, SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0, 0);
    printf("\n}}\n");
    sla_pattern_free(&p);
    free(cv);
    grid_free(&g);
    return 0;
}
