/* sla-mpi: the sla tool under MPI (mpirun -np N sla-mpi solve|logdet|info|eigsh FILE ...).
 *
 * Every rank runs the same command line. Rank 0 reads the file with the serial tool's reader
 * (cli_load), the matrix is scattered over the ranks by a partition (sla_dist_partition), the
 * work is collective (libsla_mpi), and only rank 0 prints (cli_set_quiet on the others).
 * Every step that only rank 0 performs (reading, checking -o, writing -o) broadcasts its exit
 * code, and every library status is agreed across the ranks by libsla_mpi, so all ranks exit
 * with the same code and the message is printed once. */
#ifndef SLA_MPI_CLI_H
#define SLA_MPI_CLI_H

#include "sla/mpi.h"

#include "cli.h"

/* A matrix file distributed over MPI_COMM_WORLD. */
typedef struct cli_dist {
    int rank, size;
    cli_matrix m;                  /* the whole file, on rank 0 only */
    int64_t nrows, ncols;          /* the same on every rank */
    sla_dist_partitioner part;     /* as used (contiguous for a rectangular matrix) */
    sla_dist_layout *rows, *cols;  /* cols is rows (a second reference) for a square matrix */
    sla_dist_pattern *P;
    double *values;                /* [nnz_local] float64, this rank's slots */
    sla_dist_matrix A;             /* view of P and values */
    int have_info;                 /* pinfo valid (square matrices) */
    sla_dist_partition_info pinfo; /* the distribution's edge cut, halo, imbalance */
} cli_dist;

/* Rank 0's exit code on every rank (collective). */
int cli_mpi_bcast_rc(int rc);

/* "--partition NAME": contiguous, metis or ptscotch. 0 after a usage error. */
int cli_mpi_parse_partition(const char *cmd, const char *name, sla_dist_partitioner *out);

/* The command line of info and logdet: FILE [--partition P] [--json] [--method M]. */
typedef struct cli_mpi_args {
    const char *file;
    int json;
    sla_dist_partitioner part;
} cli_mpi_args;
/* Parses it (every rank: the same argv); --method only when method is not NULL (it checks the
 * value, returning 0 or the exit code). Returns 0, −1 after printing help (rank 0), or the exit
 * code of a usage error. */
int cli_mpi_parse_args(const char *cmd, const char *help, int argc, char **argv,
                       int (*method)(const char *value), cli_mpi_args *a);

/* Reads FILE on rank 0, partitions it by part and scatters it (collective). Returns 0, or the
 * same exit code on every rank after rank 0 printed the error; d is then empty. */
int cli_dist_load(const char *cmd, const char *path, sla_dist_partitioner part, cli_dist *d);
/* Reads FILE on rank 0 and scatters it on the layouts of `like` (a second matrix of the same
 * problem, e.g. eigsh's --mass: its rows where like's rows are). Its shape must equal like's.
 * opt names it in messages ("--mass "). Returns 0, or the same exit code on every rank after
 * rank 0 printed the error; d is then empty. Collective. */
int cli_dist_load_like(const char *cmd, const char *path, const char *opt, const cli_dist *like,
                       cli_dist *d);
/* Frees d (collective). */
void cli_dist_free(cli_dist *d);

/* An agreed library status (the same on every rank): prints on rank 0, returns the exit code
 * on every rank (as cli_fail). */
int cli_mpi_fail(const char *cmd, sla_status st, const char *what);

/* The "distributed:" line of the text output (ranks, partition, its figures; with its newline)
 * into buf. */
void cli_dist_describe(const cli_dist *d, char *buf, size_t size);
/* The same as JSON: adds "ranks" and "partition" {name, edge_cut, halo_max, halo_total,
 * neighbours_max, rows_imbalance, nnz_imbalance} to o. */
void cli_dist_json(const cli_dist *d, cJSON *o);

/* Largest peak resident set size over the ranks, in bytes (collective). */
double cli_mpi_peak_rss(void);

int cmd_mpi_solve(int argc, char **argv);
int cmd_mpi_logdet(int argc, char **argv);
int cmd_mpi_info(int argc, char **argv);
int cmd_mpi_eigsh(int argc, char **argv);

#endif
