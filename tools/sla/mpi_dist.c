/* sla-mpi: reading a matrix file on rank 0 and distributing it over the ranks. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "mpi_cli.h"

int cli_mpi_bcast_rc(int rc)
{
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

int cli_mpi_parse_partition(const char *cmd, const char *name, sla_dist_partitioner *out)
{
    static const sla_dist_partitioner known[] = {SLA_DIST_PART_CONTIGUOUS, SLA_DIST_PART_METIS,
                                                 SLA_DIST_PART_PTSCOTCH};
    if (!name) { cli_usage_error(cmd, "option --partition needs a value"); return 0; }
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(name, sla_dist_partitioner_name(known[i]))) { *out = known[i]; return 1; }
    cli_usage_error(cmd, "--partition '%s': expected contiguous, metis or ptscotch", name);
    return 0;
}

int cli_mpi_parse_args(const char *cmd, const char *help, int argc, char **argv,
                       int (*method)(const char *value), cli_mpi_args *a)
{
    int rank, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *a = (cli_mpi_args){.part = SLA_DIST_PART_CONTIGUOUS};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { if (rank == 0) fputs(help, stdout); return -1; }
        if (!strcmp(o, "--json")) a->json = 1;
        else if (method && !strcmp(o, "--method") && v) { if ((rc = method(v))) return rc; i++; }
        else if (!strcmp(o, "--partition")) { if (!cli_mpi_parse_partition(cmd, v, &a->part)) return EXIT_USAGE; i++; }
        else if (o[0] == '-') return cli_usage_error(cmd, "unknown option '%s'", o);
        else if (a->file) return cli_usage_error(cmd, "more than one FILE given ('%s', '%s')", a->file, o);
        else a->file = o;
    }
    return a->file ? EXIT_OK : cli_usage_error(cmd, "missing FILE");
}

int cli_mpi_fail(const char *cmd, sla_status st, const char *what)
{
    return cli_fail(cmd, st, what);     /* quiet on ranks other than 0: printed once */
}

/* the pattern and values of d->m (on rank 0) scattered by the row layout d->rows */
static sla_status scatter(cli_dist *d)
{
    sla_matrix A0;
    if (d->rank == 0) A0 = sla_matrix_view(d->m.pattern, SLA_FLOAT64, 1, d->m.values);
    return sla_dist_matrix_scatter(d->rows, d->cols, 0, d->rank == 0 ? &A0 : NULL, &d->P,
                                   (void **)&d->values, NULL, NULL);
}

/* a balanced contiguous split first, then the partition, and the matrix scattered again by it
 * (sla_dist_partition works on a distributed pattern) */
static sla_status distribute(cli_dist *d)
{
    MPI_Comm w = MPI_COMM_WORLD;
    sla_status st = sla_dist_layout_create(w, d->nrows, -1, &d->rows);
    if (st) return st;
    if (d->nrows == d->ncols) d->cols = sla_dist_layout_retain(d->rows);
    else if ((st = sla_dist_layout_create(w, d->ncols, -1, &d->cols))) return st;
    if ((st = scatter(d))) return st;
    if (d->nrows != d->ncols) return SLA_OK;   /* partitions are of square matrices */
    sla_dist_layout *L = NULL;
    if ((st = sla_dist_partition(d->P, d->part, 0, NULL, &L, &d->pinfo))) return st;
    d->have_info = 1;
    sla_dist_pattern_free(&d->P);
    sla_free(d->values);
    d->values = NULL;
    sla_dist_layout_free(&d->cols);
    sla_dist_layout_free(&d->rows);
    d->rows = L;
    d->cols = sla_dist_layout_retain(L);
    return scatter(d);
}

/* FILE read on rank 0 into d->m, its shape broadcast into d->nrows, d->ncols (collective).
 * Returns 0 or the same exit code on every rank (d empty then). */
static int read_root(const char *cmd, const char *path, cli_dist *d)
{
    memset(d, 0, sizeof *d);
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    int rc = d->rank == 0 ? cli_load(cmd, path, 1, &d->m) : EXIT_OK;
    if ((rc = cli_mpi_bcast_rc(rc))) {
        if (d->rank == 0) memset(&d->m, 0, sizeof d->m);    /* cli_load freed it */
        return rc;
    }
    int64_t shape[2] = {0, 0};
    if (d->rank == 0) { shape[0] = d->m.coo->nrows; shape[1] = d->m.coo->ncols; }
    MPI_Bcast(shape, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    d->nrows = shape[0];
    d->ncols = shape[1];
    return EXIT_OK;
}

int cli_dist_load(const char *cmd, const char *path, sla_dist_partitioner part, cli_dist *d)
{
    int rc = read_root(cmd, path, d);
    if (rc) return rc;
    d->part = d->nrows == d->ncols ? part : SLA_DIST_PART_CONTIGUOUS;
    if (part != d->part)
        cli_warn(cmd, "--partition %s is ignored: the matrix is %lld × %lld (rectangular: "
                 "contiguous rows and columns)", sla_dist_partitioner_name(part),
                 (long long)d->nrows, (long long)d->ncols);
    sla_status st = distribute(d);
    if (st) {
        rc = cli_mpi_fail(cmd, st, path);
        cli_dist_free(d);
        return rc;
    }
    d->A = sla_dist_matrix_view(d->P, SLA_FLOAT64, 1, d->values);
    return EXIT_OK;
}

int cli_dist_load_like(const char *cmd, const char *path, const char *opt, const cli_dist *like,
                       cli_dist *d)
{
    int rc = read_root(cmd, path, d);
    if (rc) return rc;
    if (d->nrows != like->nrows || d->ncols != like->ncols) {
        rc = cli_error(cmd, EXIT_USAGE, "shape", "%s%s is %lld × %lld but the matrix is %lld × "
                       "%lld: it must have the same shape", opt, path, (long long)d->nrows,
                       (long long)d->ncols, (long long)like->nrows, (long long)like->ncols);
        cli_dist_free(d);
        return rc;
    }
    d->part = like->part;
    d->rows = sla_dist_layout_retain(like->rows);
    d->cols = sla_dist_layout_retain(like->cols);
    sla_status st = scatter(d);
    if (st) {
        char what[600];
        snprintf(what, sizeof what, "%s%s", opt, path);
        rc = cli_mpi_fail(cmd, st, what);
        cli_dist_free(d);
        return rc;
    }
    d->A = sla_dist_matrix_view(d->P, SLA_FLOAT64, 1, d->values);
    return EXIT_OK;
}

void cli_dist_free(cli_dist *d)
{
    sla_dist_pattern_free(&d->P);
    sla_free(d->values);
    d->values = NULL;
    sla_dist_layout_free(&d->cols);
    sla_dist_layout_free(&d->rows);
    if (d->rank == 0) cli_matrix_free(&d->m);
}

void cli_dist_describe(const cli_dist *d, char *buf, size_t size)
{
    const sla_dist_partition_info *p = &d->pinfo;
    int n = snprintf(buf, size, "distributed: %d rank%s, partition %s", d->size,
                     d->size == 1 ? "" : "s", sla_dist_partitioner_name(d->part));
    if (d->have_info && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " (edge cut %lld, halo max %lld, total %lld; "
                      "imbalance rows %.3f, nnz %.3f)", (long long)p->edge_cut,
                      (long long)p->halo_max, (long long)p->halo_total, p->rows_imbalance,
                      p->nnz_imbalance);
    if (n >= 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, "\n");
}

void cli_dist_json(const cli_dist *d, cJSON *o)
{
    cJSON_AddNumberToObject(o, "ranks", d->size);
    cJSON *p = cJSON_AddObjectToObject(o, "partition");
    cJSON_AddStringToObject(p, "name", sla_dist_partitioner_name(d->part));
    if (!d->have_info) return;
    cJSON_AddNumberToObject(p, "edge_cut", (double)d->pinfo.edge_cut);
    cJSON_AddNumberToObject(p, "halo_max", (double)d->pinfo.halo_max);
    cJSON_AddNumberToObject(p, "halo_total", (double)d->pinfo.halo_total);
    cJSON_AddNumberToObject(p, "neighbours_max", (double)d->pinfo.neighbours_max);
    cJSON_AddNumberToObject(p, "rows_imbalance", d->pinfo.rows_imbalance);
    cJSON_AddNumberToObject(p, "nnz_imbalance", d->pinfo.nnz_imbalance);
}

double cli_mpi_peak_rss(void)
{
    double mine = cli_peak_rss(), most = mine;
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return most;
}
