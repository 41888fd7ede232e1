/* Distributed Krylov solvers of libsla_mpi (sla_dist_solver_*) on 2D Poisson 1000² and 3D
 * Poisson 100³ (b = 1, x0 = 0, rtol 1e-8), at whatever rank count mpirun gives, printing one
 * JSON object on rank 0:
 *   - CG + Jacobi: set-up, solve, iterations and time per iteration; at 1 rank also serial
 *     libsla's CG + Jacobi on the same matrix in the same run, and the ratio distributed / serial
 *     (the cost of the distributed space and operator: the same method source on both);
 *   - BoomerAMG-PCG (hypre on a ParCSR copy): set-up + solve;
 *   - block-Jacobi AMG-PCG (libsla's serial AMG on each rank's diagonal block): set-up + solve.
 * Each rank builds its own rows (contiguous balanced layout) and hands them in as COO. Every
 * figure is the best of `repeat` runs (wall clock, max over the ranks).
 *
 * Usage: mpirun -np P bench_mpi_krylov [repeat (3)] [maxiter cap (0: none)] [case ...]
 *        cases: p2d1000 p3d100 (default both); bench/mpi_krylov.sh runs 1 and 2 ranks. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench_util.h"
#include "sla/mpi.h"

static int rank, size;

typedef struct problem {
    const char *name;
    int64_t nx, ny, nz;
} problem;

/* this rank's rows of the grid Laplacian as COO */
static void rows_coo(const problem *p, const sla_dist_layout *L, int64_t *nnz, int64_t **row,
                     int64_t **col, double **val)
{
    int64_t n = sla_dist_layout_local_size(L);
    const int64_t *g = sla_dist_layout_global(L);
    *row = malloc((size_t)(7 * n + 1) * sizeof **row);
    *col = malloc((size_t)(7 * n + 1) * sizeof **col);
    *val = malloc((size_t)(7 * n + 1) * sizeof **val);
    int64_t k = 0, nx = p->nx, ny = p->ny, nz = p->nz;
    double diag = nz > 1 ? 6 : 4;
    for (int64_t l = 0; l < n; l++) {
        int64_t i = g[l], x = i % nx, y = i / nx % ny, z = i / (nx * ny);
        int64_t nb[7] = {z > 0 ? i - nx * ny : -1, y > 0 ? i - nx : -1, x > 0 ? i - 1 : -1, i,
                         x < nx - 1 ? i + 1 : -1, y < ny - 1 ? i + nx : -1,
                         z < nz - 1 ? i + nx * ny : -1};
        for (int q = 0; q < 7; q++) {
            if (nb[q] < 0) continue;
            (*row)[k] = i;
            (*col)[k] = nb[q];
            (*val)[k++] = nb[q] == i ? diag : -1;
        }
    }
    *nnz = k;
}

static double tmax(double t)
{
    double r;
    MPI_Allreduce(&t, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

typedef struct result {
    double setup, solve;
    int64_t iterations;
    double relres;
    int converged;
} result;

static result run_dist(const sla_dist_matrix *A, sla_dist_precond pc, int64_t maxiter,
                       int repeat, const double *b, double *x)
{
    result best = {INFINITY, INFINITY, 0, NAN, 0};
    for (int r = 0; r < repeat; r++) {
        sla_dist_solver_options o;
        sla_dist_solver_options_init(&o);
        o.method = SLA_METHOD_CG;
        o.precond = pc;
        o.rtol = 1e-8;
        if (maxiter > 0) o.maxiter = maxiter;
        sla_dist_solver *s = NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        sla_status st = sla_dist_solver_create(A, &o, &s);
        double t1 = now();
        if (st != SLA_OK) {
            if (rank == 0) fprintf(stderr, "create: %s\n", sla_last_error());
            return best;
        }
        sla_solve_info info;
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = now();
        st = sla_dist_solver_solve(s, SLA_OP_N, 1, b, x, &info);
        double t3 = now();
        double setup = tmax(t1 - t0), solve = tmax(t3 - t2);
        if (setup + solve < best.setup + best.solve)
            best = (result){setup, solve, info.iterations, info.relative_residual, info.converged};
        sla_dist_solver_free(&s);
    }
    return best;
}

/* serial libsla on the whole matrix (1 rank only) */
static result run_serial(const problem *p, const sla_dist_pattern *P, const double *lv,
                         int64_t maxiter, int repeat, const double *b, double *x)
{
    result best = {INFINITY, INFINITY, 0, NAN, 0};
    const sla_pattern *D = sla_dist_pattern_diag(P);     /* 1 rank: the whole matrix */
    sla_matrix A = sla_matrix_view(D, SLA_FLOAT64, 1, lv);
    (void)p;
    for (int r = 0; r < repeat; r++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_CG;
        o.precond = SLA_PRECOND_JACOBI;
        o.rtol = 1e-8;
        o.atol = 0;
        if (maxiter > 0) o.maxiter = maxiter;
        sla_solver *s = NULL;
        double t0 = now();
        if (sla_solver_create(&A, &o, &s) != SLA_OK) return best;
        double t1 = now();
        sla_solve_info info;
        sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
        double t2 = now();
        if (t2 - t0 < best.setup + best.solve)
            best = (result){t1 - t0, t2 - t1, info.iterations, info.relative_residual, info.converged};
        sla_solver_free(&s);
    }
    return best;
}

static void print_result(const char *precond, const result *r, int last)
{
    printf("      {\"method\": \"cg\", \"precond\": \"%s\", \"setup_s\": %.6g, \"solve_s\": %.6g, "
           "\"total_s\": %.6g, \"iterations\": %lld, \"per_iteration_s\": %.6g, "
           "\"relative_residual\": %.3g, \"converged\": %d}%s\n", precond, r->setup, r->solve,
           r->setup + r->solve, (long long)r->iterations,
           r->iterations ? r->solve / (double)r->iterations : 0.0, r->relres, r->converged,
           last ? "" : ",");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int repeat = argc > 1 ? atoi(argv[1]) : 3;
    int64_t maxiter = argc > 2 ? atoll(argv[2]) : 0;
    static const problem all[] = {{"p2d1000", 1000, 1000, 1}, {"p3d100", 100, 100, 100}};
    if (rank == 0)
        printf("{\"benchmark\": \"mpi_krylov\", \"ranks\": %d, \"threads\": %d, \"repeat\": %d, "
               "\"rtol\": 1e-8, \"maxiter_cap\": %lld, \"hypre\": %d, \"problems\": [\n", size,
               omp_get_max_threads(), repeat, (long long)maxiter, sla_dist_have_boomeramg());
    int first = 1;
    for (size_t c = 0; c < sizeof all / sizeof all[0]; c++) {
        const problem *p = &all[c];
        int wanted = argc <= 3;
        for (int a = 3; a < argc; a++) wanted |= strcmp(argv[a], p->name) == 0;
        if (!wanted) continue;
        int64_t N = p->nx * p->ny * p->nz, nnz, *row, *col;
        double *val;
        sla_dist_layout *L = NULL;
        sla_dist_pattern *P = NULL;
        sla_dist_layout_create(MPI_COMM_WORLD, N, -1, &L);
        rows_coo(p, L, &nnz, &row, &col, &val);
        double t0 = now();
        sla_dist_pattern_from_coo(L, L, nnz, row, col, &P);
        double *lv = malloc((size_t)sla_dist_pattern_nnz(P) * sizeof *lv);
        sla_dist_values_gather(P, SLA_FLOAT64, 1, val, lv);
        double build = tmax(now() - t0);
        int64_t n = sla_dist_layout_local_size(L);
        double *b = malloc((size_t)(n + 1) * sizeof *b), *x = malloc((size_t)(n + 1) * sizeof *x);
        for (int64_t i = 0; i < n; i++) b[i] = 1;
        sla_dist_matrix A = sla_dist_matrix_view(P, SLA_FLOAT64, 1, lv);
        result jac = run_dist(&A, SLA_DIST_PC_JACOBI, maxiter, repeat, b, x);
        result bja = run_dist(&A, SLA_DIST_PC_BJACOBI_AMG, maxiter, repeat, b, x);
        result boo = {0};
        if (sla_dist_have_boomeramg()) boo = run_dist(&A, SLA_DIST_PC_BOOMERAMG, maxiter, repeat, b, x);
        result ser = {0};
        if (size == 1) ser = run_serial(p, P, lv, maxiter, repeat, b, x);
        if (rank == 0) {
            printf("%s  {\"name\": \"%s\", \"n\": %lld, \"build_s\": %.6g, \"runs\": [\n",
                   first ? "" : ",\n", p->name, (long long)N, build);
            print_result("jacobi", &jac, 0);
            print_result("bjacobi-amg", &bja, !sla_dist_have_boomeramg());
            if (sla_dist_have_boomeramg()) print_result("boomeramg", &boo, 1);
            printf("    ]");
            if (size == 1)
                printf(", \"serial_cg_jacobi\": {\"solve_s\": %.6g, \"iterations\": %lld, "
                       "\"per_iteration_s\": %.6g}, \"ratio_per_iteration_dist_over_serial\": %.4g",
                       ser.solve, (long long)ser.iterations,
                       ser.iterations ? ser.solve / (double)ser.iterations : 0.0,
                       ser.iterations && jac.iterations
                           ? (jac.solve / (double)jac.iterations) / (ser.solve / (double)ser.iterations)
                           : 0.0);
            printf("}");
            first = 0;
        }
        free(row); free(col); free(val); free(lv); free(b); free(x);
        sla_dist_pattern_free(&P);
        sla_dist_layout_free(&L);
    }
    if (rank == 0) printf("\n]}\n");
    MPI_Finalize();
    return 0;
}
