/* sla: command-line tool for Matrix Market (and Rutherford–Boeing, safetensors) files. */
#include <signal.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: sla COMMAND [OPTIONS] FILE ...\n"
    "\n"
    "Differentiable sparse linear algebra on matrix files (Matrix Market .mtx or .mtx.gz,\n"
    "Rutherford-Boeing .rb/.rua/.rsa/..., safetensors in torch-sla's layout).\n"
    "\n"
    "commands:\n"
    "  info FILE       shape, nnz, symmetry, diagonal, norms, and what method=auto would choose\n"
    "  solve FILE      solve A x = b and report method, iterations, residual, time, memory\n"
    "  eigsh FILE      a few eigenvalues of a symmetric matrix\n"
    "  logdet FILE     sign and log|det| of a square matrix\n"
    "  convert IN OUT  convert between formats (chosen by file extension)\n"
    "\n"
    "Run 'sla COMMAND --help' for the options of a command.\n"
    "\n"
    "exit codes: 0 success, 1 not converged, 2 bad input or usage, 3 failure\n";

int main(int argc, char **argv)
{
    /* a write past RLIMIT_FSIZE (`ulimit -f`) is then EFBIG, a failed write (exit 3, the old
     * OUT kept, the temporary file removed), instead of SIGXFSZ killing sla mid-write */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) { fputs(usage, stderr); return EXIT_USAGE; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) { printf("sla %s\n", sla_version()); return EXIT_OK; }
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "solve")) return cmd_solve(argc - 1, argv + 1);
    if (!strcmp(cmd, "eigsh")) return cmd_eigsh(argc - 1, argv + 1);
    if (!strcmp(cmd, "logdet")) return cmd_logdet(argc - 1, argv + 1);
    if (!strcmp(cmd, "convert")) return cmd_convert(argc - 1, argv + 1);
    /* under --json (e.g. 'sla --json'), stdout still gets one JSON error object */
    cli_begin(argc, argv);
    fputs(usage, stderr);
    return cli_error("", EXIT_USAGE, "usage", "unknown command '%s'", cmd);
}
