/* sla-mpi: the sla tool under MPI. The serial `sla` is a separate executable without MPI. */
#include <signal.h>
#include <string.h>

#include "mpi_cli.h"

static const char usage[] =
    "usage: mpirun -np N sla-mpi COMMAND [OPTIONS] FILE\n"
    "\n"
    "The sla tool on a matrix distributed over MPI ranks (libsla_mpi): rank 0 reads FILE\n"
    "(Matrix Market .mtx or .mtx.gz, Rutherford-Boeing, safetensors), the matrix is\n"
    "partitioned (--partition contiguous|metis|ptscotch) and scattered, and rank 0 prints what\n"
    "the serial 'sla' prints, once. It also runs without mpirun (one rank).\n"
    "\n"
    "commands:\n"
    "  info FILE     the facts of 'sla info', the distributed method=auto choice, the partition\n"
    "  solve FILE    solve A x = b by a distributed Krylov method or the distributed LU\n"
    "  logdet FILE   sign and log|det| by the distributed LU (SuperLU_DIST)\n"
    "  eigsh FILE    a few eigenvalues of a symmetric matrix by the distributed LOBPCG\n"
    "\n"
    "convert is serial only ('sla convert'); so are eigsh's LM, SM and --method.\n"
    "\n"
    "Run 'sla-mpi COMMAND --help' for the options of a command.\n"
    "\n"
    "exit codes (the same on every rank): 0 success, 1 not converged, 2 bad input or usage,\n"
    "3 failure\n";

static int dispatch(int argc, char **argv, int rank)
{
    if (argc < 2) { if (rank == 0) fputs(usage, stderr); return EXIT_USAGE; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (rank == 0) fputs(usage, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        if (rank == 0) printf("sla-mpi %s\n", sla_version());
        return EXIT_OK;
    }
    if (!strcmp(cmd, "info")) return cmd_mpi_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "solve")) return cmd_mpi_solve(argc - 1, argv + 1);
    if (!strcmp(cmd, "logdet")) return cmd_mpi_logdet(argc - 1, argv + 1);
    if (!strcmp(cmd, "eigsh")) return cmd_mpi_eigsh(argc - 1, argv + 1);
    cli_begin(argc, argv);
    if (!strcmp(cmd, "convert"))
        return cli_error("", EXIT_USAGE, "usage", "'%s' is not available under MPI: run the "
                         "serial 'sla %s'", cmd, cmd);
    if (rank == 0) fputs(usage, stderr);
    return cli_error("", EXIT_USAGE, "usage", "unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* a write past RLIMIT_FSIZE (`ulimit -f`) is then EFBIG, a failed write (exit 3, the old
     * OUT kept, the temporary file removed), instead of SIGXFSZ killing sla mid-write */
    signal(SIGXFSZ, SIG_IGN);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_set_quiet(rank != 0);
    cli_set_program("sla-mpi");
    int rc = dispatch(argc, argv, rank);
    fflush(stdout);
    MPI_Finalize();
    return rc;
}
