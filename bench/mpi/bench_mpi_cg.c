/* libsla_mpi CG + Jacobi per-iteration micro-benchmark, the peer of bench_petsc_cg (same
 * problem, same split of rows, same stopping rule), one case per run, one JSON object on
 * stdout (rank 0).
 *
 *   mpirun -np P bench_mpi_cg [--dim 2|3] [--n N] [--rtol R] [--maxit M] [--reps K]
 *
 * Problem: the 5-point (2D, N × N) or 7-point (3D, N³) Laplacian, Dirichlet boundaries, each
 * rank assembling its own rows of the balanced contiguous layout (sla_dist_layout_create(-1),
 * PETSc's PETSC_DECIDE split) and building the distributed pattern from its COO entries.
 * b = 1, x0 = 0, stop when ‖r‖₂ ≤ rtol·‖b‖₂ (r the recursively updated residual; the true
 * residual is reported after).
 *
 * The loop is preconditioned CG written with the public kernels only, as the distributed
 * vector space will run it: per iteration one sla_dist_spmv (split-phase halo exchange),
 * one dot (pᵀq), sla_dist_vec_cg_update (x += αp, r −= αq, rᵀr and rᵀD⁻¹r in one pass and one
 * reduction) and sla_dist_vec_cg_direction (p = D⁻¹r + βp): one SpMV, the work of 2 dots and
 * 3 axpys, 2 reductions. Hestenes & Stiefel (1952); Saad, Iterative Methods, Alg. 9.1.
 *
 * Timings (wall, max over ranks): assembly_s (pattern from COO + values), setup_s (the
 * inverse diagonal), solve_s (fastest of reps solves), ms_per_iteration = solve_s / iterations;
 * peak_rss_mb the largest ru_maxrss of the ranks (assembly included), solve_peak_rss_mb the
 * largest peak of the solve phase alone (VmHWM reset before the solves). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sla/mpi.h>

#include "bench_mem.h"

#define CHECK(call) do { sla_status st_ = (call); if (st_ < 0) { \
    fprintf(stderr, "%s: %s\n", #call, sla_last_error()); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

typedef struct opts {
    int dim, reps;
    int64_t n, maxit;
    double rtol;
} opts;

static void parse(int argc, char **argv, opts *o)
{
    o->dim = 2, o->n = 1000, o->maxit = 100000, o->reps = 2, o->rtol = 1e-8;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--dim")) o->dim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--n")) o->n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--rtol")) o->rtol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--maxit")) o->maxit = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps")) o->reps = atoi(argv[++i]);
    }
}

/* COO entries of rows [r0, r1) of the grid Laplacian; returns their number. */
static int64_t assemble(const opts *o, int64_t r0, int64_t r1, int64_t *row, int64_t *col,
                        double *val)
{
    int64_t n = o->n, nz = o->dim == 3 ? n : 1, k = 0;
    double diag = o->dim == 3 ? 6 : 4;
    for (int64_t i = r0; i < r1; i++) {
        int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
        int64_t nb[7] = {z > 0 ? i - n * n : -1, y > 0 ? i - n : -1, x > 0 ? i - 1 : -1, i,
                         x < n - 1 ? i + 1 : -1, y < n - 1 ? i + n : -1,
                         z < nz - 1 ? i + n * n : -1};
        for (int q = 0; q < 7; q++)
            if (nb[q] >= 0) row[k] = i, col[k] = nb[q], val[k++] = nb[q] == i ? diag : -1;
    }
    return k;
}

static double tmax(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* Jacobi-preconditioned CG from x = 0; returns the iterations, *rr the final rᵀr. */
static int64_t pcg(const sla_dist_matrix *A, const double *b, const double *dinv, double *x,
                   double *r, double *p, double *q, double tol, int64_t maxit, double *rr)
{
    MPI_Comm comm = sla_dist_layout_comm(sla_dist_pattern_rows(A->pattern));
    int64_t n = sla_dist_layout_local_size(sla_dist_pattern_rows(A->pattern)), it = 0;
    double rz, pq, rz_new;
    CHECK(sla_dist_vec_axpby(SLA_FLOAT64, n, 0.0, b, 0.0, x));
    CHECK(sla_dist_vec_axpby(SLA_FLOAT64, n, 1.0, b, 0.0, r));
    /* p = D⁻¹ r: cg_direction reads p even with β = 0 (0·NaN of stale memory is NaN) */
    CHECK(sla_dist_vec_axpby(SLA_FLOAT64, n, 0.0, b, 0.0, p));
    CHECK(sla_dist_vec_cg_direction(SLA_FLOAT64, n, 0.0, r, dinv, p));
    CHECK(sla_dist_vec_dot(comm, SLA_FLOAT64, n, r, p, &rz));
    CHECK(sla_dist_vec_dot(comm, SLA_FLOAT64, n, r, r, rr));
    while (sqrt(*rr) > tol && it < maxit) {
        CHECK(sla_dist_spmv(SLA_OP_N, 1.0, A, p, 0, 1, 0.0, q));
        CHECK(sla_dist_vec_dot(comm, SLA_FLOAT64, n, p, q, &pq));
        CHECK(sla_dist_vec_cg_update(comm, SLA_FLOAT64, n, rz / pq, p, q, x, r, dinv, rr,
                                     &rz_new));
        CHECK(sla_dist_vec_cg_direction(SLA_FLOAT64, n, rz_new / rz, r, dinv, p));
        rz = rz_new;
        it++;
    }
    return it;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    opts o;
    parse(argc, argv, &o);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t N = o.dim == 3 ? o.n * o.n * o.n : o.n * o.n;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    sla_dist_layout *L;
    sla_dist_pattern *P;
    CHECK(sla_dist_layout_create(MPI_COMM_WORLD, N, -1, &L));
    int64_t n = sla_dist_layout_local_size(L), r0 = n ? sla_dist_layout_global(L)[0] : 0;
    int64_t *row = malloc(sizeof *row * (size_t)(7 * n + 1));
    int64_t *col = malloc(sizeof *col * (size_t)(7 * n + 1));
    double *val = malloc(sizeof *val * (size_t)(7 * n + 1));
    int64_t nnz_in = assemble(&o, r0, r0 + n, row, col, val);
    CHECK(sla_dist_pattern_from_coo(L, L, nnz_in, row, col, &P));
    int64_t nnz = sla_dist_pattern_nnz(P);
    double *lv = malloc(sizeof *lv * (size_t)(nnz + 1));
    CHECK(sla_dist_values_gather(P, SLA_FLOAT64, 1, val, lv));
    double t_asm = tmax(MPI_Wtime() - t0);

    /* Jacobi: the inverse diagonal from the local slots' global (row, col) */
    t0 = MPI_Wtime();
    double *dinv = calloc((size_t)n + 1, sizeof *dinv);
    CHECK(sla_dist_pattern_global_coo(P, row, col));
    for (int64_t s = 0; s < nnz; s++)
        if (row[s] == col[s]) dinv[sla_dist_layout_local_index(L, row[s])] = 1.0 / lv[s];
    double t_setup = tmax(MPI_Wtime() - t0);
    free(row), free(col), free(val);    /* the COO input is not needed by the solve */

    double *b = malloc(sizeof *b * (size_t)(n + 1)), *x = malloc(sizeof *x * (size_t)(n + 1));
    double *r = malloc(sizeof *r * (size_t)(n + 1)), *p = malloc(sizeof *p * (size_t)(n + 1));
    double *q = malloc(sizeof *q * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) b[i] = 1.0;
    sla_dist_matrix A = sla_dist_matrix_view(P, SLA_FLOAT64, 1, lv);
    double bn, rr = 0, t_solve = 1e300;
    CHECK(sla_dist_vec_norm2(sla_dist_layout_comm(L), SLA_FLOAT64, n, b, &bn));
    int64_t its = 0;
    double rss_setup = peak_rss_mb();   /* before the reset, which also resets ru_maxrss */
    hwm_reset();
    for (int rep = 0; rep < o.reps; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        its = pcg(&A, b, dinv, x, r, p, q, o.rtol * bn, o.maxit, &rr);
        double t = tmax(MPI_Wtime() - t0);
        if (t < t_solve) t_solve = t;
    }
    /* true residual b − A x */
    double tn;
    CHECK(sla_dist_spmv(SLA_OP_N, -1.0, &A, x, 0, 1, 0.0, q));
    CHECK(sla_dist_vec_axpby(SLA_FLOAT64, n, 1.0, b, 1.0, q));
    CHECK(sla_dist_vec_norm2(sla_dist_layout_comm(L), SLA_FLOAT64, n, q, &tn));

    int64_t nghost;
    sla_dist_pattern_ghosts(P, &nghost);
    int64_t ghost_max;
    MPI_Reduce(&nghost, &ghost_max, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    double mem[2] = {fmax(rss_setup, hwm_mb()), hwm_mb()}, mem_max[2];
    MPI_Reduce(mem, mem_max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"library\": \"sla_mpi\", \"problem\": \"poisson%dd_%lld\", \"n\": %lld, "
               "\"ranks\": %d, \"method\": \"cg\", \"pc\": \"jacobi\", \"rtol\": %.1e, "
               "\"iterations\": %lld, \"converged\": %s, \"relative_residual\": %.3e, "
               "\"ghosts_max\": %lld, \"assembly_s\": %.4f, \"setup_s\": %.4f, "
               "\"solve_s\": %.4f, \"setup_plus_solve_s\": %.4f, \"ms_per_iteration\": %.4f, "
               "\"peak_rss_mb\": %.1f, \"solve_peak_rss_mb\": %.1f}\n",
               o.dim, (long long)o.n, (long long)N, size, o.rtol, (long long)its,
               sqrt(rr) <= o.rtol * bn ? "true" : "false", tn / bn, (long long)ghost_max, t_asm,
               t_setup, t_solve, t_setup + t_solve, its ? 1e3 * t_solve / (double)its : 0.0,
               mem_max[0], mem_max[1]);
    free(lv), free(dinv);
    free(b), free(x), free(r), free(p), free(q);
    sla_dist_pattern_free(&P);
    sla_dist_layout_free(&L);
    MPI_Finalize();
    return 0;
}
