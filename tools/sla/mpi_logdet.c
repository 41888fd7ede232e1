/* sla-mpi logdet FILE: sign and log|det| from the distributed LU (SuperLU_DIST). */
#include <math.h>
#include <string.h>

#include "mpi_cli.h"

static const char help[] =
    "usage: mpirun -np N sla-mpi logdet FILE [--method auto|lu] [--partition P] [--json]\n"
    "\n"
    "Prints what 'sla logdet' prints, sign(det A) and log|det A|, from the distributed direct\n"
    "LU (SuperLU_DIST) of the matrix scattered over the ranks. A numerically singular matrix\n"
    "(reciprocal condition estimate below 2.2e-13) gives sign 0 and log|det| = -inf.\n"
    "\n"
    "  --method M      auto or lu (both the distributed LU; cholesky, ldlt, klu are serial only)\n"
    "  --partition P   contiguous (default), metis, ptscotch\n"
    "  --json          one JSON object, the keys of 'sla logdet --json' and \"ranks\", \"partition\"\n";

static int parse_method(const char *v)
{
    sla_method m;
    if (sla_method_from_name(v, &m)) return cli_fail("logdet", SLA_EINVAL, "--method");
    if (sla_method_is_iterative(m))
        return cli_usage_error("logdet", "--method %s is iterative; log|det| needs a direct "
                               "method (lu under MPI)", v);
    if (m != SLA_METHOD_AUTO && m != SLA_METHOD_LU)
        return cli_usage_error("logdet", "--method %s is not available under MPI (the "
                               "distributed direct method is lu)", v);
    return EXIT_OK;
}

static void print(const char *file, const cli_dist *d, const sla_dist_lu *F, int json,
                  double sign, double lad, double t)
{
    if (d->rank != 0) return;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", file);
        cJSON_AddStringToObject(o, "method", "lu");
        cJSON_AddStringToObject(o, "description", sla_dist_lu_describe(F));
        cJSON_AddStringToObject(o, "reason", "converged");
        cJSON_AddBoolToObject(o, "converged", 1);
        cJSON_AddNumberToObject(o, "iterations", 0);
        cJSON_AddNullToObject(o, "residual");
        cJSON_AddNumberToObject(o, "sign", sign);
        if (isfinite(lad)) cJSON_AddNumberToObject(o, "logabsdet", lad);
        else cJSON_AddNullToObject(o, "logabsdet");
        cJSON_AddBoolToObject(o, "singular", sign == 0);
        cJSON_AddNumberToObject(o, "time_s", t);
        cli_dist_json(d, o);
        cli_print_json(o);
        return;
    }
    char line[400];
    cli_dist_describe(d, line, sizeof line);
    printf("method:      %s\n", sla_dist_lu_describe(F));
    printf("sign:        %s\n", sign > 0 ? "+1" : sign < 0 ? "-1" : "0");
    printf("log|det|:    %.17g\n", lad);
    printf("time:        %.3f s\n", t);
    printf("%s\n", line);
}

int cmd_mpi_logdet(int argc, char **argv)
{
    cli_begin(argc, argv);
    int rank, json = 0, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *file = NULL;
    sla_dist_partitioner part = SLA_DIST_PART_CONTIGUOUS;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { if (rank == 0) fputs(help, stdout); return EXIT_OK; }
        if (!strcmp(o, "--json")) json = 1;
        else if (!strcmp(o, "--method") && v) { if ((rc = parse_method(v))) return rc; i++; }
        else if (!strcmp(o, "--partition")) { if (!cli_mpi_parse_partition("logdet", v, &part)) return EXIT_USAGE; i++; }
        else if (o[0] == '-') return cli_usage_error("logdet", "unknown option '%s'", o);
        else if (file) return cli_usage_error("logdet", "more than one FILE given");
        else file = o;
    }
    if (!file) return cli_usage_error("logdet", "missing FILE");
    cli_dist d;
    if ((rc = cli_dist_load("logdet", file, part, &d))) return rc;
    if (d.nrows != d.ncols) {
        rc = cli_error("logdet", EXIT_USAGE, "shape", "%s: the matrix is %lld × %lld: a "
                       "determinant needs a square matrix", file, (long long)d.nrows,
                       (long long)d.ncols);
        cli_dist_free(&d);
        return rc;
    }
    sla_dist_lu *F = NULL;
    double sign = 0, lad = 0, t0 = cli_now();
    sla_status st = sla_dist_lu_create(&d.A, &F);
    if (st == SLA_OK) st = sla_dist_lu_logdet(F, &sign, &lad);
    double t = cli_now() - t0;
    if (st) rc = cli_mpi_fail("logdet", st, file);
    else print(file, &d, F, json, sign, lad, t);
    sla_dist_lu_free(&F);
    cli_dist_free(&d);
    return rc;
}
