/* sla-mpi logdet FILE: sign and log|det| from the distributed LU (SuperLU_DIST). */
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
    char line[400];
    cli_dist_describe(d, line, sizeof line);
    cJSON *extra = NULL;
    if (json) cli_dist_json(d, extra = cJSON_CreateObject());
    cli_logdet_print(&(cli_logdet_print_args){
        .file = file, .json = json, .method = "lu", .description = sla_dist_lu_describe(F),
        .sign = sign, .logabsdet = lad, .time_s = t, .extra_json = extra, .extra_text = line});
}

int cmd_mpi_logdet(int argc, char **argv)
{
    cli_begin(argc, argv);
    int rc;
    cli_mpi_args a;
    if ((rc = cli_mpi_parse_args("logdet", help, argc, argv, parse_method, &a)))
        return rc < 0 ? EXIT_OK : rc;
    const char *file = a.file;
    int json = a.json;
    cli_dist d;
    if ((rc = cli_dist_load("logdet", file, a.part, &d))) return rc;
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
