/* libsla_mpi CG + Jacobi per-iteration micro-benchmark, the peer of bench_petsc_cg (same
 * problem, same split of rows, same stopping rule), one case per run, one JSON object on
 * stdout (rank 0).
 *
 *   mpirun -np P bench_mpi_cg [--dim 2|3] [--n N] [--rtol R] [--maxit M] [--reps K]
 *                             [--assembly csr|coo]
 *
 * Problem: the 5-point (2D, N × N) or 7-point (3D, N³) Laplacian, Dirichlet boundaries, each
 * rank assembling its own rows of the balanced contiguous layout (sla_dist_layout_create(-1),
 * PETSc's PETSC_DECIDE split) and building the distributed pattern from them: by default as
 * CSR (sla_dist_pattern_from_csr, int64 row pointers and int32 global columns, the natural
 * form for a generator of its own rows, as PETSc's MatSetValues row by row), or as int64 COO
 * triplets (--assembly coo, sla_dist_pattern_from_coo).
 * b = 1, x0 = 0, stop when ‖r‖₂ ≤ rtol·‖b‖₂ (r the recursively updated residual; the true
 * residual is reported after).
 *
 * The loop is preconditioned CG written with the public kernels only, as the distributed
 * vector space will run it: per iteration one sla_dist_spmv (split-phase halo exchange),
 * one dot (pᵀq), sla_dist_vec_cg_update (x += αp, r −= αq, rᵀr and rᵀD⁻¹r in one pass and one
 * reduction) and sla_dist_vec_cg_direction (p = D⁻¹r + βp): one SpMV, the work of 2 dots and
 * 3 axpys, 2 reductions. Hestenes & Stiefel (1952); Saad, Iterative Methods, Alg. 9.1.
 *
 * Timings (wall, max over ranks): assembly_s (the caller's arrays, the pattern and the local
 * values), setup_s (the inverse diagonal, from the diagonal block), solve_s (fastest of reps
 * solves), ms_per_iteration = solve_s / iterations; memory (MiB, the largest of the ranks):
 * assembly_peak_rss_mb the peak up to the end of assembly (the caller's arrays still held),
 * peak_rss_mb the whole run's, solve_peak_rss_mb the solve phase's alone (VmHWM reset, after
 * the caller's arrays are freed, before the solves). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sla/mpi.h>

#include "bench_mem.h"

#define CHECK(call) do { sla_status st_ = (call); if (st_ < 0) { \
    fprintf(stderr, "%s: %s\n", #call, sla_last_error()); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

typedef struct opts {
    int dim, reps, csr;
    int64_t n, maxit;
    double rtol;
} opts;

static void parse(int argc, char **argv, opts *o)
{
    o->dim = 2, o->n = 1000, o->maxit = 100000, o->reps = 2, o->rtol = 1e-8, o->csr = 1;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--dim")) o->dim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--n")) o->n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--rtol")) o->rtol = atof(argv[++i]);
        else if (!strcmp(argv[i], "--maxit")) o->maxit = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps")) o->reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--assembly")) o->csr = strcmp(argv[++i], "coo") != 0;
    }
}

/* Entries of rows [r0, r1) of the grid Laplacian, row by row with ascending columns: as COO
 * (row, col64) or as CSR (rowptr [r1 − r0 + 1], col32); returns their number. */
static int64_t assemble(const opts *o, int64_t r0, int64_t r1, int64_t *row, int64_t *col64,
                        int64_t *rowptr, int32_t *col32, double *val)
{
    int64_t n = o->n, nz = o->dim == 3 ? n : 1, k = 0;
    double diag = o->dim == 3 ? 6 : 4;
    if (rowptr) rowptr[0] = 0;
    for (int64_t i = r0; i < r1; i++) {
        int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
        int64_t nb[7] = {z > 0 ? i - n * n : -1, y > 0 ? i - n : -1, x > 0 ? i - 1 : -1, i,
                         x < n - 1 ? i + 1 : -1, y < n - 1 ? i + n : -1,
                         z < nz - 1 ? i + n * n : -1};
        for (int q = 0; q < 7; q++) {
            if (nb[q] < 0) continue;
            if (row) row[k] = i, col64[k] = nb[q];
            else col32[k] = (int32_t)nb[q];
            val[k++] = nb[q] == i ? diag : -1;
        }
        if (rowptr) rowptr[i - r0 + 1] = k;
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
    if (o.csr && N > INT32_MAX) {
        fprintf(stderr, "bench_mpi_cg: N = %lld needs int64 columns: use --assembly coo\n",
                (long long)N);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t cap = (size_t)(7 * n + 1);
    int64_t *row = o.csr ? NULL : malloc(sizeof *row * cap);
    int64_t *col = o.csr ? NULL : malloc(sizeof *col * cap);
    int64_t *rowptr = o.csr ? malloc(sizeof *rowptr * (size_t)(n + 1)) : NULL;
    int32_t *col32 = o.csr ? malloc(sizeof *col32 * cap) : NULL;
    double *val = malloc(sizeof *val * cap);
    int64_t nnz_in = assemble(&o, r0, r0 + n, row, col, rowptr, col32, val);
    if (o.csr) CHECK(sla_dist_pattern_from_csr(L, L, n, NULL, rowptr, NULL, col32, &P));
    else CHECK(sla_dist_pattern_from_coo(L, L, nnz_in, row, col, &P));
    int64_t nnz = sla_dist_pattern_nnz(P);
    double *lv = malloc(sizeof *lv * (size_t)(nnz + 1));
    CHECK(sla_dist_values_gather(P, SLA_FLOAT64, 1, val, lv));
    double t_asm = tmax(MPI_Wtime() - t0);
    double rss_asm = peak_rss_mb();
    free(row), free(col), free(rowptr), free(col32), free(val);  /* not needed by the solve */

    /* Jacobi: the inverse diagonal from the diagonal block (rows and columns on one layout,
     * so local row i's diagonal entry is local column i) */
    t0 = MPI_Wtime();
    double *dinv = calloc((size_t)n + 1, sizeof *dinv);
    const sla_pattern *pd = sla_dist_pattern_diag(P);
    const int64_t *drp = sla_pattern_rowptr(pd);
    const int32_t *dci = sla_pattern_colind(pd);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = drp[i]; s < drp[i + 1]; s++)
            if (dci[s] == i) dinv[i] = 1.0 / lv[s];
    double t_setup = tmax(MPI_Wtime() - t0);

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
    double mem[3] = {fmax(rss_setup, hwm_mb()), hwm_mb(), rss_asm}, mem_max[3];
    MPI_Reduce(mem, mem_max, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"library\": \"sla_mpi\", \"assembly\": \"%s\", "
               "\"problem\": \"poisson%dd_%lld\", \"n\": %lld, "
               "\"ranks\": %d, \"method\": \"cg\", \"pc\": \"jacobi\", \"rtol\": %.1e, "
               "\"iterations\": %lld, \"converged\": %s, \"relative_residual\": %.3e, "
               "\"ghosts_max\": %lld, \"assembly_s\": %.4f, \"setup_s\": %.4f, "
               "\"solve_s\": %.4f, \"setup_plus_solve_s\": %.4f, \"ms_per_iteration\": %.4f, "
               "\"assembly_peak_rss_mb\": %.1f, \"peak_rss_mb\": %.1f, "
               "\"solve_peak_rss_mb\": %.1f}\n", o.csr ? "csr" : "coo", o.dim, (long long)o.n, (long long)N, size, o.rtol, (long long)its,
               sqrt(rr) <= o.rtol * bn ? "true" : "false", tn / bn, (long long)ghost_max, t_asm,
               t_setup, t_solve, t_setup + t_solve, its ? 1e3 * t_solve / (double)its : 0.0,
               mem_max[2], mem_max[0], mem_max[1]);
    free(lv), free(dinv);
    free(b), free(x), free(r), free(p), free(q);
    sla_dist_pattern_free(&P);
    sla_dist_layout_free(&L);
    MPI_Finalize();
    return 0;
}
