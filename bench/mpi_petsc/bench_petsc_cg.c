/* PETSc peer benchmark for libsla_mpi: KSPCG on a grid Poisson matrix in MPIAIJ, one case per
 * run, one JSON object on stdout (rank 0).
 *
 *   mpirun -np P bench_petsc_cg [--dim 2|3] [--n N] [--pc jacobi|hypre] [--rtol R]
 *                               [--maxit M] [--reps K] [PETSc options]
 *
 * The matrix is the 5-point (2D, N × N) or 7-point (3D, N × N × N) finite-difference Laplacian
 * with Dirichlet boundaries (diagonal 4 or 6, −1 per neighbour: bench/grid_laplacian.h's), rows
 * split contiguously by PETSc (PETSC_DECIDE, the split sla_dist_layout_create(-1) makes), each
 * rank inserting its own rows. b = 1, x0 = 0, stopping rule ‖b − A x‖₂ ≤ rtol·‖b‖₂
 * (KSP_NORM_UNPRECONDITIONED, the rule bench_mpi_cg uses), so iteration counts compare.
 * pc = hypre is BoomerAMG with PETSc's defaults (override with -pc_hypre_boomeramg_* options:
 * KSPSetFromOptions runs after the types are set).
 *
 * Timings (wall, MPI_Wtime, max over ranks): assembly_s (create, insert, assemble), setup_s
 * (KSPSetUp: the preconditioner), solve_s (the fastest of reps KSPSolve calls),
 * ms_per_iteration = solve_s / iterations. peak_rss_mb: the largest ru_maxrss of the ranks
 * (assembly included); solve_peak_rss_mb: the largest peak of the solve phase alone (VmHWM
 * reset before the solves). */
#include <petscksp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../mpi/bench_mem.h"

typedef struct opts {
    int dim, reps;
    PetscInt n, maxit;
    double rtol;
    char pc[32];
} opts;

static void parse(int argc, char **argv, opts *o)
{
    o->dim = 2, o->n = 1000, o->maxit = 100000, o->reps = 2, o->rtol = 1e-8;
    strcpy(o->pc, "jacobi");
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--dim")) o->dim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--n")) o->n = atol(argv[++i]);
        else if (!strcmp(argv[i], "--pc")) snprintf(o->pc, sizeof o->pc, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--rtol")) o->rtol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--maxit")) o->maxit = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reps")) o->reps = atoi(argv[++i]);
    }
}

/* Inserts this rank's rows [r0, r1) of the grid Laplacian. */
static PetscErrorCode assemble(Mat A, const opts *o, PetscInt r0, PetscInt r1)
{
    PetscInt n = o->n, ny = n, nz = o->dim == 3 ? n : 1;
    PetscScalar diag = o->dim == 3 ? 6 : 4;
    for (PetscInt i = r0; i < r1; i++) {
        PetscInt x = i % n, y = (i / n) % ny, z = i / (n * ny), cols[7], k = 0;
        PetscScalar v[7];
        if (z > 0) cols[k] = i - n * ny, v[k++] = -1;
        if (y > 0) cols[k] = i - n, v[k++] = -1;
        if (x > 0) cols[k] = i - 1, v[k++] = -1;
        cols[k] = i, v[k++] = diag;
        if (x < n - 1) cols[k] = i + 1, v[k++] = -1;
        if (y < ny - 1) cols[k] = i + n, v[k++] = -1;
        if (z < nz - 1) cols[k] = i + n * ny, v[k++] = -1;
        PetscCall(MatSetValues(A, 1, &i, k, cols, v, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    return 0;
}

static double tmax(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    return m;
}

static PetscErrorCode run(const opts *o)
{
    int size, rank;
    MPI_Comm_size(PETSC_COMM_WORLD, &size);
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    PetscInt N = o->dim == 3 ? o->n * o->n * o->n : o->n * o->n, r0, r1;
    Mat A;
    Vec b, x, r;
    KSP ksp;
    PC pc;

    MPI_Barrier(PETSC_COMM_WORLD);
    double t0 = MPI_Wtime();
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N, 7, NULL, 7, NULL, &A));
    PetscCall(MatGetOwnershipRange(A, &r0, &r1));
    PetscCall(assemble(A, o, r0, r1));
    double t_asm = tmax(MPI_Wtime() - t0);

    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecSet(b, 1.0));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetTolerances(ksp, o->rtol, 0.0, PETSC_DEFAULT, o->maxit));
    PetscCall(KSPGetPC(ksp, &pc));
    if (!strcmp(o->pc, "hypre")) {
        PetscCall(PCSetType(pc, PCHYPRE));
        PetscCall(PCHYPRESetType(pc, "boomeramg"));
    } else {
        PetscCall(PCSetType(pc, PCJACOBI));
    }
    PetscCall(KSPSetFromOptions(ksp));

    MPI_Barrier(PETSC_COMM_WORLD);
    t0 = MPI_Wtime();
    PetscCall(KSPSetUp(ksp));
    PetscCall(PCSetUp(pc));
    double t_setup = tmax(MPI_Wtime() - t0), t_solve = 1e300;
    PetscInt its = 0;
    KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
    double rss_setup = peak_rss_mb();   /* before the reset, which also resets ru_maxrss */
    hwm_reset();
    for (int rep = 0; rep < o->reps; rep++) {
        PetscCall(VecSet(x, 0.0));
        MPI_Barrier(PETSC_COMM_WORLD);
        t0 = MPI_Wtime();
        PetscCall(KSPSolve(ksp, b, x));
        double t = tmax(MPI_Wtime() - t0);
        if (t < t_solve) t_solve = t;
        PetscCall(KSPGetIterationNumber(ksp, &its));
        PetscCall(KSPGetConvergedReason(ksp, &reason));
    }
    /* the true relative residual, independent of what KSP tracked */
    PetscReal rn, bn;
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &rn));
    PetscCall(VecNorm(b, NORM_2, &bn));

    double mem[2] = {fmax(rss_setup, hwm_mb()), hwm_mb()}, mem_max[2];
    MPI_Reduce(mem, mem_max, 2, MPI_DOUBLE, MPI_MAX, 0, PETSC_COMM_WORLD);
    if (rank == 0)
        printf("{\"library\": \"petsc %d.%d.%d\", \"problem\": \"poisson%dd_%ld\", \"n\": %ld, "
               "\"ranks\": %d, \"method\": \"cg\", \"pc\": \"%s\", \"rtol\": %.1e, "
               "\"iterations\": %ld, \"converged\": %s, \"relative_residual\": %.3e, "
               "\"assembly_s\": %.4f, \"setup_s\": %.4f, \"solve_s\": %.4f, "
               "\"setup_plus_solve_s\": %.4f, \"ms_per_iteration\": %.4f, \"peak_rss_mb\": %.1f, "
               "\"solve_peak_rss_mb\": %.1f}\n",
               PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, o->dim,
               (long)o->n, (long)N, size, o->pc, o->rtol, (long)its, reason > 0 ? "true" : "false",
               (double)(rn / bn), t_asm, t_setup, t_solve, t_setup + t_solve,
               its > 0 ? 1e3 * t_solve / (double)its : 0.0, mem_max[0], mem_max[1]);
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&r));
    PetscCall(MatDestroy(&A));
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    parse(argc, argv, &o);
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscCall(run(&o));
    PetscCall(PetscFinalize());
    return 0;
}
