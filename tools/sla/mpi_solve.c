/* sla-mpi solve FILE: the distributed solve of A x = b, reported as 'sla solve' reports. */
#include <stdlib.h>
#include <string.h>

#include "mpi_cli.h"

static const char help[] =
    "usage: mpirun -np N sla-mpi solve FILE [options]\n"
    "\n"
    "Solves A x = b over the MPI ranks and reports what 'sla solve' reports (method, iterations,\n"
    "the relative residual ||b - A x|| / ||b|| recomputed from x, time, peak memory: the\n"
    "largest over the ranks), once, and how the matrix was distributed. Rank 0 reads FILE and\n"
    "the --rhs file; the matrix is scattered by --partition. A rectangular A is solved in the\n"
    "least-squares sense by lsqr (rows and columns split contiguously).\n"
    "\n"
    "  --partition P           contiguous (default: ranges balanced by nonzeros), metis (METIS on\n"
    "                          rank 0), ptscotch (PT-Scotch, in parallel)\n"
    "  --rhs ones|random|FILE  right-hand side, as 'sla solve' (default ones)\n"
    "  --method M              auto (default: the distributed rules: rectangular -> lsqr,\n"
    "                          symmetric with a positive diagonal -> cg, symmetric -> minres,\n"
    "                          else gmres), cg, bicgstab, gmres, minres, lsqr, or lu (the\n"
    "                          distributed direct LU, SuperLU_DIST). cholesky, ldlt and klu are\n"
    "                          serial only\n"
    "  --precond P             auto (default), none, jacobi, ic0 / ilu0 / amg (libsla's IC(0),\n"
    "                          ILU(0), AMG on each rank's diagonal block: block Jacobi; also\n"
    "                          named bjacobi-ic0, bjacobi-ilu0, bjacobi-amg), boomeramg (hypre)\n"
    "  --rtol R                stop when ||b - A x|| <= max(rtol ||b||, atol) (default 1e-10)\n"
    "  --atol A                absolute tolerance >= 0 (default 0)\n"
    "  --maxiter N             iteration limit, N >= 1 (default 10 max(m, n) + 100)\n"
    "  --restart N             GMRES restart length, N >= 1 (default 50)\n"
    "  -o X.mtx                gather the solution on rank 0 and write it as 'sla solve -o' does\n"
    "                          (checked before the solve; never FILE or the --rhs file; an\n"
    "                          existing X is replaced only once written completely)\n"
    "  --json                  one JSON object, the keys of 'sla solve --json' and \"ranks\",\n"
    "                          \"partition\"\n"
    "\n"
    "--monitor is not available under MPI.\n"
    "\n"
    "exit codes (the same on every rank): 0 converged, 1 not converged, 2 bad input or usage,\n"
    "3 failure (a failed write of -o; a singular matrix with method lu)\n";

typedef struct {
    const char *file, *rhs, *out;
    sla_dist_solver_options opt;
    sla_dist_partitioner part;
    int json, lu, precond_given;
} solve_args;

/* the serial tool's preconditioner names, mapped to the distributed ones (block Jacobi for the
 * local factorizations, which equal the serial ones at one rank), and the distributed names */
static int parse_precond(const char *v, sla_dist_precond *out)
{
    static const struct { const char *name; sla_dist_precond pc; } alias[] = {
        {"ic0", SLA_DIST_PC_BJACOBI_IC0}, {"ilu0", SLA_DIST_PC_BJACOBI_ILU0},
        {"amg", SLA_DIST_PC_BJACOBI_AMG}};
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (!strcmp(v, alias[i].name)) { *out = alias[i].pc; return 1; }
    for (int p = 0; p < SLA_DIST_PC_COUNT; p++)
        if (!strcmp(v, sla_dist_precond_name((sla_dist_precond)p))) { *out = (sla_dist_precond)p; return 1; }
    return 0;
}

static int parse_method(const char *v, solve_args *a)
{
    sla_method m;
    if (sla_method_from_name(v, &m)) return cli_fail("solve", SLA_EINVAL, "--method");
    if (m == SLA_METHOD_LU) { a->lu = 1; return EXIT_OK; }
    if (m != SLA_METHOD_AUTO && !sla_method_is_iterative(m))
        return cli_usage_error("solve", "--method %s is not available under MPI (distributed "
                               "methods: auto, cg, bicgstab, gmres, minres, lsqr, lu)", v);
    a->opt.method = m;
    return EXIT_OK;
}

static int parse_args(int argc, char **argv, solve_args *a)
{
    memset(a, 0, sizeof *a);
    sla_dist_solver_options_init(&a->opt);
    a->rhs = "ones";
    a->part = SLA_DIST_PART_CONTIGUOUS;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        long long n;
        int rc;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) return -1;
        else if (!strcmp(o, "--json")) a->json = 1;
        else if (!strcmp(o, "--monitor") || !strcmp(o, "--monitor-every"))
            return cli_usage_error("solve", "%s is not available under MPI", o);
        else if (!strcmp(o, "--rhs") && v) { a->rhs = v; i++; }
        else if (!strcmp(o, "-o") && v) { a->out = v; i++; }
        else if (!strcmp(o, "--partition")) { if (!cli_mpi_parse_partition("solve", v, &a->part)) return EXIT_USAGE; i++; }
        else if (!strcmp(o, "--method") && v) { if ((rc = parse_method(v, a))) return rc; i++; }
        else if (!strcmp(o, "--precond") && v) {
            if (!parse_precond(v, &a->opt.precond))
                return cli_usage_error("solve", "--precond '%s': expected auto, none, jacobi, ic0, "
                                       "ilu0, amg, bjacobi-ic0, bjacobi-ilu0, bjacobi-amg or "
                                       "boomeramg", v);
            a->precond_given = 1;
            i++;
        } else if (!strcmp(o, "--rtol")) { if (!cli_parse_double("solve", o, v, 0, &d)) return EXIT_USAGE; a->opt.rtol = d; i++; }
        else if (!strcmp(o, "--atol")) { if (!cli_parse_double("solve", o, v, 0, &d)) return EXIT_USAGE; a->opt.atol = d; i++; }
        else if (!strcmp(o, "--maxiter")) { if (!cli_parse_int("solve", o, v, 1, &n)) return EXIT_USAGE; a->opt.maxiter = n; i++; }
        else if (!strcmp(o, "--restart")) { if (!cli_parse_int("solve", o, v, 1, &n)) return EXIT_USAGE; a->opt.restart = n; i++; }
        else if (o[0] == '-' && o[1]) return cli_usage_error("solve", "unknown option '%s'%s", o, v ? "" : " or missing value");
        else if (a->file) return cli_usage_error("solve", "more than one FILE given ('%s', '%s')", a->file, o);
        else a->file = o;
    }
    if (!a->file) return cli_usage_error("solve", "missing FILE");
    return EXIT_OK;
}

/* The solver's objects: one of the two is used. */
typedef struct { sla_dist_solver *krylov; sla_dist_lu *lu; } solvers;

static sla_status create(const solve_args *a, const cli_dist *d, solvers *s)
{
    return a->lu ? sla_dist_lu_create(&d->A, &s->lu)
                 : sla_dist_solver_create(&d->A, &a->opt, &s->krylov);
}

static const char *precond_name(const solvers *s)
{
    return s->lu ? "none" : sla_dist_precond_name(sla_dist_solver_precond(s->krylov));
}

static void report(const solve_args *a, const cli_dist *d, const solvers *s,
                   const sla_solve_info *info, double relres, double setup, double solve,
                   double rss)
{
    if (d->rank != 0) return;
    char line[400];
    cli_dist_describe(d, line, sizeof line);
    cJSON *extra = NULL;
    if (a->json) cli_dist_json(d, extra = cJSON_CreateObject());
    cli_solve_report(&(cli_solve_report_args){
        .file = a->file, .json = a->json, .info = info, .precond = precond_name(s),
        .relres = relres, .setup = setup, .solve = solve, .rss = rss, .extra_json = extra,
        .extra_text = line, .rss_note = " (largest rank)"});
}

/* b read on rank 0 (the serial tool's rules) and scattered on the row layout */
static int load_rhs(const solve_args *a, const cli_dist *d, double *b)
{
    double *global = NULL;
    int rc = EXIT_OK;
    if (d->rank == 0) {
        global = malloc(sizeof(double) * (size_t)(d->nrows ? d->nrows : 1));
        rc = global ? cli_make_rhs("solve", a->rhs, d->nrows, 1, global)
                    : cli_error("solve", EXIT_FAILURE_, sla_status_string(SLA_ENOMEM),
                                "cannot allocate vectors of %lld entries", (long long)d->nrows);
    }
    if (!(rc = cli_mpi_bcast_rc(rc))) {
        sla_status st = sla_dist_vec_scatter(d->rows, SLA_FLOAT64, 1, 1, 0, global, b);
        if (st) rc = cli_mpi_fail("solve", st, "--rhs");
    }
    free(global);
    return rc;
}

/* x gathered on rank 0 and written there; the write's exit code on every rank */
static int write_solution(const char *path, const cli_dist *d, const double *x)
{
    double *global = NULL;
    if (d->rank == 0) global = malloc(sizeof(double) * (size_t)(d->ncols ? d->ncols : 1));
    int rc = cli_mpi_bcast_rc(d->rank == 0 && !global ? cli_error("solve", EXIT_FAILURE_,
                              sla_status_string(SLA_ENOMEM), "cannot allocate %lld entries",
                              (long long)d->ncols) : EXIT_OK);
    sla_status st = rc ? SLA_OK : sla_dist_vec_gather(d->cols, SLA_FLOAT64, 1, 1, 0, x, global);
    if (!rc && st) rc = cli_mpi_fail("solve", st, "-o");
    if (!rc && d->rank == 0) {
        st = sla_mm_write_dense(path, d->ncols, 1, SLA_FLOAT64, global,
                                " solution written by sla solve");
        if (st) rc = cli_fail_write("solve", st, path);
    }
    free(global);
    return cli_mpi_bcast_rc(rc);
}

/* ‖b − A x‖ / ‖b‖ by a distributed SpMV and norms */
static int relative_residual(const cli_dist *d, const double *b, const double *x, double *r,
                             double *out)
{
    int64_t n = sla_dist_layout_local_size(d->rows);
    MPI_Comm comm = sla_dist_layout_comm(d->rows);
    memcpy(r, b, sizeof(double) * (size_t)n);
    double nb = 0, nr = 0;
    sla_status st = sla_dist_spmv(SLA_OP_N, -1.0, &d->A, x, 0, 1, 1.0, r);
    if (!st) st = sla_dist_vec_norm2(comm, SLA_FLOAT64, n, b, &nb);
    if (!st) st = sla_dist_vec_norm2(comm, SLA_FLOAT64, n, r, &nr);
    if (st) return cli_mpi_fail("solve", st, "residual");
    *out = nb > 0 ? nr / nb : nr;
    return EXIT_OK;
}

static int run(const solve_args *a, cli_dist *d)
{
    int64_t nb = sla_dist_layout_local_size(d->rows), nx = sla_dist_layout_local_size(d->cols);
    double *b = malloc(sizeof(double) * (size_t)(nb ? nb : 1));
    double *r = malloc(sizeof(double) * (size_t)(nb ? nb : 1));
    double *x = calloc((size_t)(nx ? nx : 1), sizeof(double));
    int bad = !b || !r || !x, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int rc = any ? cli_error("solve", EXIT_FAILURE_, sla_status_string(SLA_ENOMEM),
                             "cannot allocate vectors of %lld entries", (long long)nb) : EXIT_OK;
    if (!rc) rc = load_rhs(a, d, b);
    solvers s = {0};
    sla_solve_info info;
    double t0 = cli_now(), t1 = t0, t2 = t0;
    if (!rc) {
        sla_status st = create(a, d, &s);
        t1 = cli_now();
        if (st) rc = cli_mpi_fail("solve", st, a->file);
    }
    if (!rc && a->lu && a->precond_given && a->opt.precond != SLA_DIST_PC_AUTO)
        cli_warn("solve", "--precond %s is ignored: method lu is direct",
                 sla_dist_precond_name(a->opt.precond));
    if (!rc) {
        sla_status st = s.lu ? sla_dist_lu_solve(s.lu, SLA_OP_N, 1, b, x, &info)
                             : sla_dist_solver_solve(s.krylov, SLA_OP_N, 1, b, x, &info);
        t2 = cli_now();
        if (st < 0) rc = cli_mpi_fail("solve", st, a->file);
        else if (st == SLA_NOT_CONVERGED) rc = EXIT_NOT_CONVERGED;
    }
    if (!rc || rc == EXIT_NOT_CONVERGED) {
        int w = a->out ? write_solution(a->out, d, x) : EXIT_OK;
        double relres = 0;
        if (!w) w = relative_residual(d, b, x, r, &relres);
        double rss = cli_mpi_peak_rss();
        if (w) rc = w;
        else report(a, d, &s, &info, relres, t1 - t0, t2 - t1, rss);
    }
    sla_dist_solver_free(&s.krylov);
    sla_dist_lu_free(&s.lu);
    free(b); free(r); free(x);
    return rc;
}

int cmd_mpi_solve(int argc, char **argv)
{
    cli_begin(argc, argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    solve_args a;
    int rc = parse_args(argc, argv, &a);      /* the same command line on every rank */
    if (rc < 0) { if (rank == 0) fputs(help, stdout); return EXIT_OK; }
    if (rc) return rc;
    const char *inputs[] = {a.file, strcmp(a.rhs, "ones") && strcmp(a.rhs, "random") ? a.rhs : NULL};
    if (a.out && (rc = cli_mpi_bcast_rc(rank == 0 ? cli_check_output("solve", "-o", a.out, inputs, 2) : 0)))
        return rc;
    cli_dist d;
    if ((rc = cli_dist_load("solve", a.file, a.part, &d))) return rc;
    rc = run(&a, &d);
    cli_dist_free(&d);
    return rc;
}
