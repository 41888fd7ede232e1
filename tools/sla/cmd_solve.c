/* sla solve FILE: solve A x = b, report what was done and how well. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: sla solve FILE [options]\n"
    "\n"
    "Solves A x = b and reports the method and why it was chosen, iterations, the relative\n"
    "residual ||b - A x|| / ||b|| recomputed from x, time and peak memory. Complex files are\n"
    "solved in complex128 (b real unless --rhs FILE is complex; -o writes a complex array\n"
    "file). A rectangular\n"
    "m x n A is solved in the least-squares sense, min ||b - A x|| (method auto or lsqr; b has\n"
    "m entries, x n), and ||A^T r|| (r = b - A x, 0 at the minimum) is reported too.\n"
    "\n"
    "  --rhs ones|random|FILE  right-hand side (default ones; random: uniform in [-1, 1), seed 1;\n"
    "                          FILE: a Matrix Market n x 1 array or coordinate file)\n"
    "  --method M              auto (default), cholesky, ldlt, lu, klu, cg, bicgstab, gmres, minres,\n"
    "                          lsqr, cocg (complex symmetric)\n"
    "  --precond P             auto (default), none, jacobi, ic0, ilu0, amg (iterative methods;\n"
    "                          with a direct method it is ignored, with a warning on stderr)\n"
    "  --rtol R                relative tolerance >= 0: stop when\n"
    "                          ||b - A x|| <= max(rtol ||b||, atol); LSQR (rectangular A):\n"
    "                          ||r|| <= rtol (||A|| ||x|| + ||b||) or ||A^T r|| <= rtol ||A|| ||r||\n"
    "                          (default: with method auto, a backward error\n"
    "                          ||b - A x|| / (||A||_F ||x|| + ||b||) <= 1e-12; else rtol 1e-10)\n"
    "  --atol A                absolute tolerance >= 0 (default 0)\n"
    "  --maxiter N             iteration limit, N >= 1 (default 10 max(m, n) + 100)\n"
    "  --restart N             GMRES restart length, N >= 1 (default 50)\n"
    "  -o X.mtx                write the solution as a Matrix Market array file (checked before\n"
    "                          the solve, so a bad path fails at once; X must not be FILE or\n"
    "                          the --rhs file; an existing X is replaced only once the solution\n"
    "                          is written completely)\n"
    "  --monitor               print 'iteration residual' to stderr every --monitor-every (10)\n"
    "                          iterations; without it a one-line progress indicator is shown\n"
    "                          when stderr is a terminal\n"
    "  --monitor-every N       iterations between monitor lines, N >= 1\n"
    "  --device cpu|cuda       where to solve (default cpu); cuda: on libsla's CUDA backend\n"
    "                          (methods cg, bicgstab, gmres, minres; precond none or jacobi;\n"
    "                          auto is bicgstab + jacobi), values and b copied to the GPU\n"
    "  --json                  print one JSON object (method, reason, converged, iterations,\n"
    "                          residual, time_s, ...) instead of text; on an error the object is\n"
    "                          {\"error\": message, \"status\": ..., \"exit_code\": ...}\n"
    "\n"
    "exit codes: 0 converged, 1 not converged, 2 bad input or usage, 3 failure (a failed write\n"
    "of -o included; also a singular matrix: a zero pivot, or a reciprocal condition estimate\n"
    "below 2.2e-13)\n";

typedef struct {
    const char *file, *rhs, *out;
    sla_solver_options opt;
    int json, monitor, cuda;
} solve_args;

typedef struct { int lines, tty; double last; } monitor_state;

static int monitor_cb(void *ctx, int64_t b, int64_t j, int64_t it, double res)
{
    monitor_state *m = ctx;
    if (m->lines) {
        fprintf(stderr, "iteration %8lld  residual %.6e\n", (long long)it, res);
    } else if (m->tty) {
        double t = cli_now();
        if (t - m->last > 0.2) {
            fprintf(stderr, "\rsla solve: iteration %lld, residual %.3e   ", (long long)it, res);
            m->last = t;
        }
    }
    return 0;
}

static int parse_args(int argc, char **argv, solve_args *a)
{
    memset(a, 0, sizeof *a);
    sla_solver_options_init(&a->opt);
    a->opt.monitor_every = 0;    /* 0 = not given: 10 */
    a->rhs = "ones";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        long long n;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { fputs(help, stdout); return -1; }
        else if (!strcmp(o, "--json")) a->json = 1;
        else if (!strcmp(o, "--monitor")) a->monitor = 1;
        else if (!strcmp(o, "--rhs") && v) { a->rhs = v; i++; }
        else if (!strcmp(o, "-o") && v) { a->out = v; i++; }
        else if (!strcmp(o, "--device") && v) {
            if (strcmp(v, "cpu") && strcmp(v, "cuda"))
                return cli_usage_error("solve", "--device %s: expected cpu or cuda", v);
            a->cuda = !strcmp(v, "cuda");
            i++;
        }
        else if (!strcmp(o, "--method") && v) {
            if (sla_method_from_name(v, &a->opt.method)) return cli_fail("solve", SLA_EINVAL, "--method");
            i++;
        } else if (!strcmp(o, "--precond") && v) {
            if (sla_precond_from_name(v, &a->opt.precond)) return cli_fail("solve", SLA_EINVAL, "--precond");
            i++;
        } else if (!strcmp(o, "--rtol")) { if (!cli_parse_double("solve", o, v, 0, &d)) return EXIT_USAGE; a->opt.rtol = d; i++; }
        else if (!strcmp(o, "--atol")) { if (!cli_parse_double("solve", o, v, 0, &d)) return EXIT_USAGE; a->opt.atol = d; i++; }
        else if (!strcmp(o, "--maxiter")) { if (!cli_parse_int("solve", o, v, 1, &n)) return EXIT_USAGE; a->opt.maxiter = n; i++; }
        else if (!strcmp(o, "--restart")) { if (!cli_parse_int("solve", o, v, 1, &n)) return EXIT_USAGE; a->opt.restart = n; i++; }
        else if (!strcmp(o, "--monitor-every")) { if (!cli_parse_int("solve", o, v, 1, &n)) return EXIT_USAGE; a->opt.monitor_every = n; i++; }
        else if (o[0] == '-' && o[1]) return cli_usage_error("solve", "unknown option '%s'%s", o, v ? "" : " or missing value");
        else if (a->file) return cli_usage_error("solve", "more than one FILE given ('%s', '%s')", a->file, o);
        else a->file = o;
    }
    if (!a->file) return cli_usage_error("solve", "missing FILE");
    return EXIT_OK;
}

/* x as a Matrix Market n × 1 array (a failed write is exit 3, like every output file) */
static int write_vector(const char *path, sla_dtype dtype, const double *x, int64_t n)
{
    sla_status st = sla_mm_write_dense(path, n, 1, dtype, x, " solution written by sla solve");
    return st ? cli_fail_write("solve", st, path) : EXIT_OK;
}

static double norm2(const double *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

void cli_solve_report(const cli_solve_report_args *r)
{
    const sla_solve_info *info = r->info;
    int lsq = isfinite(info->normal_residual);      /* LSQR: ‖Aᵀr‖ */
    if (r->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", r->file);
        cJSON_AddStringToObject(o, "method", sla_method_name(info->method));
        cJSON_AddStringToObject(o, "precond", r->precond);
        cJSON_AddStringToObject(o, "reason", sla_reason_name(info->reason));
        cJSON_AddStringToObject(o, "description", info->description);
        cJSON_AddBoolToObject(o, "converged", info->converged);
        cJSON_AddNumberToObject(o, "iterations", (double)info->iterations);
        cJSON_AddNumberToObject(o, "residual", r->relres);
        if (lsq) cJSON_AddNumberToObject(o, "normal_residual", info->normal_residual);
        if (isfinite(info->rcond)) cJSON_AddNumberToObject(o, "rcond", info->rcond);
        cJSON_AddNumberToObject(o, "time_s", r->setup + r->solve);
        cJSON_AddNumberToObject(o, "setup_s", r->setup);
        cJSON_AddNumberToObject(o, "solve_s", r->solve);
        cJSON_AddNumberToObject(o, "peak_memory_bytes", r->rss);
        cJSON_AddNumberToObject(o, "peak_bytes", (double)info->peak_bytes);
        if (info->peak_bytes > 0 && r->unknowns > 0)
            cJSON_AddNumberToObject(o, "peak_bytes_per_unknown",
                                    (double)info->peak_bytes / (double)r->unknowns);
        cli_json_merge(o, r->extra_json);
        cli_print_json(o);
        return;
    }
    printf("method:      %s\n", info->description);
    printf("result:      %s after %lld iteration%s\n", sla_reason_name(info->reason),
           (long long)info->iterations, info->iterations == 1 ? "" : "s");
    printf("residual:    ||b - A x|| / ||b|| = %.3e\n", r->relres);
    if (lsq) printf("normal eq.:  ||A^T (b - A x)|| = %.3e (least squares)\n", info->normal_residual);
    if (isfinite(info->rcond)) printf("rcond:       %.3e\n", info->rcond);
    printf("time:        %.3f s (set-up %.3f s, solve %.3f s)\n", r->setup + r->solve, r->setup,
           r->solve);
    printf("peak memory: %.1f MB", r->rss / 1e6);
    if (info->peak_bytes > 0 && r->unknowns > 0)
        printf(" (%.0f bytes per unknown)", (double)info->peak_bytes / (double)r->unknowns);
    printf("%s\n", r->rss_note ? r->rss_note : "");
    if (r->extra_text) fputs(r->extra_text, stdout);
}

int cmd_solve(int argc, char **argv)
{
    cli_begin(argc, argv);
    solve_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    /* a bad -o path fails before the work, and -o must not overwrite an input */
    const char *inputs[] = {a.file, strcmp(a.rhs, "ones") && strcmp(a.rhs, "random") ? a.rhs : NULL};
    if (a.out && (rc = cli_check_output("solve", "-o", a.out, inputs, 2))) return rc;
    cli_matrix m;
    if ((rc = cli_load("solve", a.file, CLI_COMPLEX_OK, &m))) return rc;
    int parts = m.dtype == SLA_COMPLEX128 ? 2 : 1;    /* doubles per entry */
    int64_t n = m.coo->nrows, nx = m.coo->ncols;   /* b and r have n entries, x has nx */
    double *b = malloc(sizeof(double) * (size_t)(n ? parts * n : 1));
    double *x = calloc((size_t)(nx ? parts * nx : 1), sizeof(double));
    double *r = malloc(sizeof(double) * (size_t)(n ? parts * n : 1));
    monitor_state mon = {a.monitor, isatty(2), 0};
    a.opt.monitor = monitor_cb;
    a.opt.monitor_ctx = &mon;
    if (a.opt.monitor_every <= 0) a.opt.monitor_every = 10;
    if (!b || !x || !r) rc = cli_error("solve", EXIT_FAILURE_, sla_status_string(SLA_ENOMEM),
                                       "cannot allocate vectors of %lld entries", (long long)n);
    if (!rc) rc = cli_make_rhs("solve", a.rhs, n, parts, b);
    sla_solver *s = NULL;
    sla_solve_info info;
    sla_matrix A = sla_matrix_view(m.pattern, m.dtype, 1, m.values);
    sla_matrix Asolve = A;                   /* the device view with --device cuda */
    cli_cuda dev = {0};
    double t0 = cli_now(), t1 = t0, t2 = t0;
    if (!rc && a.cuda) {
        rc = cli_cuda_begin("solve", &m, b, n, nx, &dev);
        Asolve.values = dev.values;
        Asolve.space = SLA_MEM_DEVICE;
        a.opt.backend = "cuda";
    }
    if (!rc) {
        sla_status st = sla_solver_create(&Asolve, &a.opt, &s);
        t1 = cli_now();
        if (st) rc = cli_fail("solve", st, a.file);
    }
    if (!rc && a.opt.precond != SLA_PRECOND_AUTO && !sla_method_is_iterative(sla_solver_method(s)))
        cli_warn("solve", "--precond %s is ignored: method %s is direct", sla_precond_name(a.opt.precond),
                 sla_method_name(sla_solver_method(s)));
    if (!rc) {
        sla_status st = a.cuda ? sla_solver_solve(s, SLA_OP_N, 1, dev.b, dev.x, &info)
                               : sla_solver_solve(s, SLA_OP_N, 1, b, x, &info);
        if (a.cuda && st >= 0) {
            int c = cli_cuda_end("solve", &dev, x, nx);
            if (c) st = SLA_EBACKEND, rc = c;
        }
        t2 = cli_now();
        if (mon.tty && !mon.lines && mon.last > 0) fputc('\n', stderr);
        if (st < 0 && !rc) rc = cli_fail("solve", st, a.file);
        else if (st == SLA_NOT_CONVERGED) rc = EXIT_NOT_CONVERGED;
    }
    if (a.cuda) cli_cuda_end("solve", &dev, NULL, 0);      /* frees (a no-op once ended) */
    if (!rc || rc == EXIT_NOT_CONVERGED) {
        int w = a.out ? write_vector(a.out, m.dtype, x, nx) : EXIT_OK;
        if (w) rc = w;
        else {
            memcpy(r, b, sizeof(double) * (size_t)(parts * n));
            sla_spmv(SLA_OP_N, -1.0, &A, x, 0, 1, 1.0, r);       /* r = b − A x */
            double nb = norm2(b, parts * n), nr = norm2(r, parts * n);   /* complex: |z|² */
            cli_solve_report(&(cli_solve_report_args){
                .file = a.file, .json = a.json, .info = &info,
                .precond = sla_precond_name(info.precond),
                .relres = nb > 0 ? nr / nb : nr, .setup = t1 - t0,
                .solve = t2 - t1, .rss = cli_peak_rss(), .unknowns = nx});
        }
    }
    sla_solver_free(&s);
    free(b); free(x); free(r);
    cli_matrix_free(&m);
    return rc;
}
