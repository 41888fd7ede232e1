/* sla-mpi info FILE: 'sla info' of the file, with method=auto's distributed choice and the
 * distribution's figures. */
#include <string.h>

#include "mpi_cli.h"

static const char help[] =
    "usage: mpirun -np N sla-mpi info FILE [--partition P] [--json]\n"
    "\n"
    "Prints what 'sla info' prints (the facts are computed on rank 0, which reads the file),\n"
    "except that \"auto\" is what 'sla-mpi solve --method auto' would choose for the matrix\n"
    "distributed over the ranks (the distributed solver's rules and preconditioner set-up),\n"
    "and a \"distributed\" line gives the partition's edge cut, halo sizes and imbalance.\n"
    "\n"
    "  --partition P   contiguous (default), metis, ptscotch\n"
    "  --json          one JSON object: the keys of 'sla info --json' and \"ranks\",\n"
    "                  \"partition\" {name, edge_cut, halo_max, halo_total, neighbours_max,\n"
    "                  rows_imbalance, nnz_imbalance}\n";

/* the distributed solver's method=auto (collective) */
static void auto_facts(const cli_dist *d, cli_info_facts *f)
{
    sla_dist_solver *s = NULL;
    sla_status st = sla_dist_solver_create(&d->A, NULL, &s);
    if (st == SLA_OK) {
        snprintf(f->auto_choice, sizeof f->auto_choice, "%s", sla_dist_solver_describe(s));
        f->auto_method = sla_dist_solver_method(s);
        f->auto_ok = 1;
    } else {
        snprintf(f->auto_choice, sizeof f->auto_choice, "fails: %s", sla_last_error());
    }
    sla_dist_solver_free(&s);
}

int cmd_mpi_info(int argc, char **argv)
{
    cli_begin(argc, argv);
    int rank, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_mpi_args a;
    if ((rc = cli_mpi_parse_args("info", help, argc, argv, NULL, &a))) return rc < 0 ? EXIT_OK : rc;
    const char *file = a.file;
    int json = a.json;
    cli_dist d;
    if ((rc = cli_dist_load("info", file, a.part, &d))) return rc;
    cli_info_facts f;
    memset(&f, 0, sizeof f);
    double t0 = cli_now();
    if (rank == 0) cli_info_facts_gather(&d.m, &f);
    auto_facts(&d, &f);
    f.time_s = cli_now() - t0;
    if (rank == 0 && json) {
        cJSON *extra = cJSON_CreateObject();
        cli_dist_json(&d, extra);
        cli_info_print_json(&d.m, &f, extra);
    } else if (rank == 0) {
        char line[420];
        cli_dist_describe(&d, line, sizeof line);
        cli_info_print_text(&d.m, &f, line);
    }
    cli_dist_free(&d);
    return EXIT_OK;
}
