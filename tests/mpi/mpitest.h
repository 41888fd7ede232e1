/* Helpers of the MPI tests (not part of libsla_mpi). A failed check is recorded and the test
 * goes on, so that every rank reaches the same collectives; mt_finish() reduces the failures
 * and gives the exit code. Every rank builds the global test matrices itself, so that the
 * serial reference is available everywhere. */
#ifndef SLA_MPITEST_H
#define SLA_MPITEST_H

#include <stdint.h>

#include "sla/mpi.h"

extern int mt_rank, mt_size;

void mt_init(int *argc, char ***argv);
/* Reduces the failures over the ranks, prints a summary on rank 0, finalizes MPI; returns
 * the process exit code. */
int mt_finish(const char *name);
void mt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Failures recorded on this rank so far. */
int mt_failures(void);

#define MT_CHECK(cond, ...) \
    do { if (!(cond)) mt_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define MT_OK(expr) \
    do { sla_status mt_st_ = (expr); if (mt_st_ != SLA_OK) \
        mt_fail(__FILE__, __LINE__, "%s -> %d: %s", #expr, (int)mt_st_, sla_last_error()); \
    } while (0)

/* A global matrix as COO (any order; duplicates allowed). */
typedef struct mt_coo {
    int64_t m, n, nnz;
    int64_t *row, *col;
    double *val;
} mt_coo;

void mt_coo_free(mt_coo *A);
/* 5-point Laplacian on nx × ny (row-major grid numbering), 7-point on nx × ny × nz. */
void mt_poisson2d(int64_t nx, int64_t ny, mt_coo *A);
void mt_poisson3d(int64_t nx, int64_t ny, int64_t nz, mt_coo *A);
/* A shared matrix (symmetric storage expanded); 0 (and a note) if the folder is missing. */
int mt_load(const char *name, mt_coo *A);
/* Serial pattern and CSR values of A (duplicates summed). */
void mt_serial(const mt_coo *A, sla_pattern **p, double **csr);

/* Uniform in [-1, 1) (tests/c testutil's splitmix64): the same on every rank for a seed. */
double mt_rand(uint64_t *state);
void mt_fill(double *x, int64_t n, uint64_t seed);
/* A random partition: part[g] uniform over the ranks (the same on every rank). */
void mt_random_part(int64_t N, int p, uint64_t seed, int *part);
/* A layout on MPI_COMM_WORLD from mt_random_part(N, mt_size, seed) (collective). */
sla_dist_layout *mt_random_layout(int64_t N, uint64_t seed);
/* The owned list of this rank under part ([N]): malloc'ed, count in *n. */
int64_t *mt_owned(const int *part, int64_t N, int rank, int64_t *n);

/* Global reductions for test figures. */
double mt_max(double v);
int64_t mt_sum(int64_t v);

/* Normwise error of a distributed block against a global one, over all ranks:
 * max |local − global| / max(scale, tiny) with local [batch][n_local][k] on layout L and
 * global [batch][N][k]. */
double mt_error(const sla_dist_layout *L, int64_t batch, int64_t k, const double *local,
                const double *global, double scale);
/* max |v| over a global array (the same on every rank). */
double mt_amax(const double *v, int64_t n);

/* This rank's part of a global block [batch][N][k] on layout L (malloc'ed). */
double *mt_slice(const sla_dist_layout *L, int64_t batch, int64_t k, const double *global);

#endif
