/* Reference for bench_amg: hypre's BoomerAMG (its 2.26 defaults: HMIS coarsening, extended+i
 * interpolation truncated to 4 entries, θ = 0.25, l1 hybrid Gauss–Seidel forward down / backward
 * up, Gaussian elimination on the coarsest level) as the preconditioner of hypre's PCG, on the same
 * problems, stopping rule (‖r‖₂ ≤ 1e-8 ‖b‖₂, two-norm), b = 1 and x0 = 0. Runs on any number of
 * MPI ranks (contiguous blocks of rows); the Debian build of hypre has no OpenMP, so
 * `mpirun -np 2` is the way to use both cores. Prints one JSON object like bench_amg.
 *
 * Usage: [mpirun -np P] bench_amg_hypre [repeat] [case ...]   cases: p2d:N, p3d:N. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "HYPRE.h"
#include "HYPRE_krylov.h"
#include "HYPRE_parcsr_ls.h"
#include "grid_laplacian.h"

/* Process CPU time (all threads): on a shared machine it shows the work when wall times are
 * inflated by other jobs. */
static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct hypre_problem {
    HYPRE_IJMatrix ij;
    HYPRE_IJVector ijb, ijx;
    HYPRE_ParCSRMatrix A;
    HYPRE_ParVector b, x;
} hypre_problem;

static void make_vector(int lo, int hi, const int *rows, const double *values, HYPRE_IJVector *ij,
                        HYPRE_ParVector *par)
{
    HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi - 1, ij);
    HYPRE_IJVectorSetObjectType(*ij, HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(*ij);
    HYPRE_IJVectorSetValues(*ij, hi - lo, rows, values);
    HYPRE_IJVectorAssemble(*ij);
    HYPRE_IJVectorGetObject(*ij, (void **)par);
}

/* Rows [lo, hi) of the grid Laplacian on this rank. */
static void assemble(const grid_csr *g, int lo, int hi, hypre_problem *h)
{
    int nloc = hi - lo;
    HYPRE_IJMatrixCreate(MPI_COMM_WORLD, lo, hi - 1, lo, hi - 1, &h->ij);
    HYPRE_IJMatrixSetObjectType(h->ij, HYPRE_PARCSR);
    HYPRE_IJMatrixInitialize(h->ij);
    int *rows = malloc(sizeof(int) * (size_t)nloc), *ncols = malloc(sizeof(int) * (size_t)nloc);
    int64_t k0 = g->rp[lo], nnz = g->rp[hi] - k0;
    int *cols = malloc(sizeof(int) * (size_t)nnz);
    for (int i = lo; i < hi; i++) {
        rows[i - lo] = i;
        ncols[i - lo] = (int)(g->rp[i + 1] - g->rp[i]);
    }
    for (int64_t k = 0; k < nnz; k++) cols[k] = (int)g->ci[k0 + k];
    HYPRE_IJMatrixSetValues(h->ij, nloc, ncols, rows, cols, g->v + k0);
    HYPRE_IJMatrixAssemble(h->ij);
    HYPRE_IJMatrixGetObject(h->ij, (void **)&h->A);
    double *ones = malloc(sizeof(double) * (size_t)nloc);
    double *zeros = calloc((size_t)nloc, sizeof(double));
    for (int i = 0; i < nloc; i++) ones[i] = 1;
    make_vector(lo, hi, rows, ones, &h->ijb, &h->b);
    make_vector(lo, hi, rows, zeros, &h->ijx, &h->x);
    free(rows); free(ncols); free(cols); free(ones); free(zeros);
}

static void run_case(const char *name, int64_t nx, int64_t ny, int64_t nz, int repeat, int first)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    grid_csr g = grid_laplacian(nx, ny, nz);
    int lo = (int)(g.n * rank / size), hi = (int)(g.n * (rank + 1) / size);
    double ts[2] = {INFINITY, 0}, tsol[2] = {INFINITY, 0}, ttot[2] = {INFINITY, 0}, relres = 0;
    double cs = INFINITY, csol = INFINITY;
    int iters = 0;
    for (int rep = 0; rep < repeat; rep++) {
        hypre_problem h;
        assemble(&g, lo, hi, &h);
        HYPRE_Solver pcg, amg;
        HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg);
        HYPRE_PCGSetTol(pcg, 1e-8);
        HYPRE_PCGSetTwoNorm(pcg, 1);
        HYPRE_PCGSetMaxIter(pcg, 500);
        HYPRE_BoomerAMGCreate(&amg);
        HYPRE_BoomerAMGSetMaxIter(amg, 1);
        HYPRE_BoomerAMGSetTol(amg, 0.0);
        HYPRE_BoomerAMGSetPrintLevel(amg, 0);
        HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                            (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), c0 = cpu_seconds();
        HYPRE_ParCSRPCGSetup(pcg, h.A, h.b, h.x);
        double c1 = cpu_seconds();
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        HYPRE_ParCSRPCGSolve(pcg, h.A, h.b, h.x);
        double c2 = cpu_seconds();
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        cs = fmin(cs, c1 - c0);
        csol = fmin(csol, c2 - c1);
        HYPRE_PCGGetNumIterations(pcg, &iters);
        HYPRE_PCGGetFinalRelativeResidualNorm(pcg, &relres);
        HYPRE_BoomerAMGDestroy(amg);
        HYPRE_ParCSRPCGDestroy(pcg);
        HYPRE_IJMatrixDestroy(h.ij);
        HYPRE_IJVectorDestroy(h.ijb);
        HYPRE_IJVectorDestroy(h.ijx);
        double s = t1 - t0, v = t2 - t1;
        ts[0] = fmin(ts[0], s); ts[1] = fmax(ts[1], s);
        tsol[0] = fmin(tsol[0], v); tsol[1] = fmax(tsol[1], v);
        ttot[0] = fmin(ttot[0], s + v); ttot[1] = fmax(ttot[1], s + v);
    }
    if (rank == 0)
        printf("%s    {\"name\": \"%s\", \"n\": %lld, \"setup_s\": %.4f, \"setup_s_max\": %.4f, "
               "\"iterations\": %d, \"relative_residual\": %.3g, \"solve_s\": %.4f, "
               "\"solve_s_max\": %.4f, \"total_s\": %.4f, \"total_s_max\": %.4f, "
               "\"setup_cpu_s\": %.4f, \"solve_cpu_s\": %.4f, \"total_cpu_s\": %.4f}",
               first ? "" : ",\n", name, (long long)g.n, ts[0], ts[1], iters, relres, tsol[0],
               tsol[1], ttot[0], ttot[1], cs, csol, cs + csol);
    fflush(stdout);
    grid_free(&g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    HYPRE_Init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int repeat = argc > 1 ? atoi(argv[1]) : 3;
    if (repeat < 1) repeat = 1;
    const char *defaults[] = {"p2d:256", "p2d:512", "p2d:1000", "p3d:100"};
    const char **cases = argc > 2 ? (const char **)argv + 2 : defaults;
    int ncases = argc > 2 ? argc - 2 : 4;
    if (rank == 0)
        printf("{\"bench\": \"amg_hypre\", \"hypre\": \"%s\", \"mpi_ranks\": %d, \"rtol\": 1e-8, "
               "\"repeat\": %d, \"problems\": [\n", HYPRE_RELEASE_VERSION, size, repeat);
    for (int c = 0; c < ncases; c++) {
        int64_t m = atoll(cases[c] + 4);
        char name[64];
        int three = !strncmp(cases[c], "p3d:", 4);
        snprintf(name, sizeof name, "poisson%s_%lld", three ? "3d" : "2d", (long long)m);
        run_case(name, m, m, three ? m : 1, repeat, c == 0);
    }
    if (rank == 0) printf("\n]}\n");
    HYPRE_Finalize();
    MPI_Finalize();
    return 0;
}
