/* sla-mpi eigsh FILE -k K [--mass MFILE]: a few eigenvalues of a symmetric matrix (or pencil
 * A − λM) by the distributed LOBPCG (sla_dist_eigsh), printed as 'sla eigsh' prints them
 * (cli_eigsh_print), once, on rank 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_cli.h"

static const char help[] =
    "usage: mpirun -np N sla-mpi eigsh FILE -k K [--mass MFILE] [--which SA|LA] [--sigma S]\n"
    "                                  [--tol T] [--maxiter N] [--precond none|jacobi]\n"
    "                                  [--partition P] [--json]\n"
    "\n"
    "Prints what 'sla eigsh' prints: K eigenvalues (ascending) of the symmetric matrix\n"
    "scattered over the ranks, computed by libsla's LOBPCG on the distributed matrix\n"
    "(sla_dist_eigsh: the same iteration as 'sla eigsh --method lobpcg'), with the true\n"
    "residuals ||A v - lambda v|| / ||A||_1; with --mass, of the generalized problem\n"
    "A v = lambda M v.\n"
    "\n"
    "  -k K, --k K     number of eigenvalues (required, 1 <= K <= n/3: LOBPCG's basis)\n"
    "  --mass MFILE    symmetric positive definite mass matrix M, n x n, any pattern (its\n"
    "                  rows on the ranks of A's rows; with --sigma, inside A's pattern)\n"
    "  --which W       SA (smallest algebraic, default) or LA (largest algebraic); LM, SM\n"
    "                  and the other --method choices are serial only\n"
    "  --sigma S       shift-invert: the K eigenvalues nearest S (A - S I factored by the\n"
    "                  distributed LU, SuperLU_DIST; LOBPCG on the inverse; --which ignored)\n"
    "  --tol T         relative residual tolerance (default 1e-10; 0: 1e-14)\n"
    "  --maxiter N     LOBPCG iteration limit (N >= 1; default 2000)\n"
    "  --precond P     none (default) or jacobi (the residuals times diag(A)^-1)\n"
    "  --partition P   contiguous (default), metis, ptscotch\n"
    "  --json          one JSON object, the keys of 'sla eigsh --json' and \"ranks\", \"partition\"\n"
    "\n"
    "exit codes (the same on every rank): 0 converged, 1 not converged, 2 bad input or usage,\n"
    "3 failure\n";

typedef struct {
    const char *file, *mass;
    long long k;
    int json;
    sla_dist_partitioner part;
    sla_dist_eigsh_options opt;
} eigsh_args;

/* the value of --which: SA or LA (the kinds LOBPCG computes without a shift) */
static int parse_which(const char *v, sla_eigsh_which *w)
{
    if (sla_eigsh_which_from_name(v, w)) return cli_fail("eigsh", SLA_EINVAL, "--which");
    if (*w != SLA_EIGSH_SA && *w != SLA_EIGSH_LA)
        return cli_usage_error("eigsh", "--which %s is not available under MPI (SA or LA: the "
                               "distributed LOBPCG; run the serial 'sla eigsh' for LM or SM)", v);
    return EXIT_OK;
}

/* every rank parses the same argv, so every rank returns the same code (rank 0 prints) */
static int parse(int argc, char **argv, int rank, eigsh_args *a)
{
    memset(a, 0, sizeof *a);
    sla_dist_eigsh_options_init(&a->opt);
    a->k = -1;
    a->part = SLA_DIST_PART_CONTIGUOUS;
    int rc;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        long long n;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { if (rank == 0) fputs(help, stdout); return -1; }
        else if (!strcmp(o, "--json")) a->json = 1;
        else if (!strcmp(o, "-k") || !strcmp(o, "--k")) { if (!cli_parse_int("eigsh", o, v, 1, &a->k)) return EXIT_USAGE; i++; }
        else if (!strcmp(o, "--which") && v) { if ((rc = parse_which(v, &a->opt.which))) return rc; i++; }
        else if (!strcmp(o, "--tol")) { if (!cli_parse_double("eigsh", o, v, 0, &d)) return EXIT_USAGE; a->opt.tol = d; i++; }
        else if (!strcmp(o, "--maxiter")) { if (!cli_parse_int("eigsh", o, v, 1, &n)) return EXIT_USAGE; a->opt.maxiter = n; i++; }
        else if (!strcmp(o, "--precond") && v) {
            if (!strcmp(v, "none")) a->opt.precond = SLA_DIST_PC_NONE;
            else if (!strcmp(v, "jacobi")) a->opt.precond = SLA_DIST_PC_JACOBI;
            else return cli_usage_error("eigsh", "--precond '%s': expected none or jacobi", v);
            i++;
        } else if (!strcmp(o, "--partition")) { if (!cli_mpi_parse_partition("eigsh", v, &a->part)) return EXIT_USAGE; i++; }
        else if (!strcmp(o, "--sigma")) { if (!cli_parse_double("eigsh", o, v, -HUGE_VAL, &d)) return EXIT_USAGE; a->opt.sigma = d; i++; }
        else if (!strcmp(o, "--mass") && v) { a->mass = v; i++; }
        else if (!strcmp(o, "--method"))
            return cli_usage_error("eigsh", "%s is not available under MPI: run the serial 'sla "
                                   "eigsh'", o);
        else if (o[0] == '-' && o[1]) return cli_usage_error("eigsh", "unknown option '%s'%s", o, v ? "" : " or missing value");
        else if (a->file) return cli_usage_error("eigsh", "more than one FILE given ('%s', '%s')", a->file, o);
        else a->file = o;
    }
    if (!a->file) return cli_usage_error("eigsh", "missing FILE");
    if (a->k < 1) return cli_usage_error("eigsh", "-k K (K ≥ 1) is required");
    return EXIT_OK;
}

static void print(const eigsh_args *a, const cli_dist *d, const sla_eigsh_info *info,
                  const double *ev, double t)
{
    if (d->rank != 0) return;
    char line[400];
    cli_dist_describe(d, line, sizeof line);
    cJSON *extra = NULL;
    if (a->json) cli_dist_json(d, extra = cJSON_CreateObject());
    cli_eigsh_print(&(cli_eigsh_print_args){.file = a->file, .json = a->json, .k = a->k,
                                            .mass = a->mass != NULL,
                                            .info = info, .eigenvalues = ev, .time_s = t,
                                            .extra_json = extra, .extra_text = line});
}

int cmd_mpi_eigsh(int argc, char **argv)
{
    cli_begin(argc, argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    eigsh_args a;
    int rc = parse(argc, argv, rank, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    cli_dist d;
    if ((rc = cli_dist_load("eigsh", a.file, a.part, &d))) return rc;
    long long n = (long long)d.nrows;
    if (d.nrows != d.ncols || a.k > n) {
        rc = d.nrows != d.ncols
                 ? cli_error("eigsh", EXIT_USAGE, "shape", "%s: the matrix is %lld × %lld: "
                             "eigsh needs a square matrix", a.file, n, (long long)d.ncols)
                 : cli_usage_error("eigsh", "-k %lld: the %lld × %lld matrix has only %lld "
                                   "eigenvalues", a.k, n, n, n);
        cli_dist_free(&d);
        return rc;
    }
    cli_dist dm = {0};
    if (a.mass) {
        if ((rc = cli_dist_load_like("eigsh", a.mass, "--mass ", &d, &dm))) {
            cli_dist_free(&d);
            return rc;
        }
        a.opt.M = &dm.A;
    }
    double *ev = calloc((size_t)a.k, sizeof *ev);
    int ok = ev != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    sla_eigsh_info info;
    double t0 = cli_now();
    sla_status st = all ? sla_dist_eigsh(&d.A, a.k, &a.opt, ev, NULL, &info) : SLA_ENOMEM;
    double t = cli_now() - t0;
    char what[600];
    snprintf(what, sizeof what, a.mass ? "%s with --mass %s" : "%s", a.file, a.mass);
    if (st < 0) rc = cli_mpi_fail("eigsh", st, what);
    else {
        print(&a, &d, &info, ev, t);
        if (st == SLA_NOT_CONVERGED) rc = EXIT_NOT_CONVERGED;
    }
    free(ev);
    if (a.mass) cli_dist_free(&dm);
    cli_dist_free(&d);
    return rc;
}
