/* sla eigsh FILE -k K: a few eigenvalues of a symmetric matrix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: sla eigsh FILE -k K [--mass MFILE] [--which SA|LA|SM|LM] [--sigma S] [--tol T]\n"
    "                 [--maxiter N] [--method M] [--json]\n"
    "\n"
    "Computes K eigenvalues of a symmetric matrix (ascending), with the true residuals\n"
    "||A v - lambda v|| / ||A||_1; with --mass, of the generalized problem A v = lambda M v\n"
    "(residuals ||A v - lambda M v|| / ((||A||_1 + |lambda| ||M||_1) ||v||)).\n"
    "A complex file must be Hermitian (A^H = A; its eigenvalues are real), and so must a\n"
    "complex MFILE (a real MFILE with a complex A is taken as complex); a complex matrix\n"
    "that is not Hermitian is refused (exit 2; use 'sla info' to see its class).\n"
    "\n"
    "  -k K          number of eigenvalues (required, 1 <= K <= n)\n"
    "  --mass MFILE  symmetric positive definite mass matrix M, n x n, any pattern\n"
    "  --which W     LM (largest magnitude, default), SM (smallest magnitude), LA (largest\n"
    "                algebraic), SA (smallest algebraic)\n"
    "  --sigma S     shift-invert mode: the K eigenvalues nearest S\n"
    "  --tol T       relative residual tolerance (default 1e-10; 0: 1e-14)\n"
    "  --maxiter N   iteration / restart limit (N >= 1; default 2000 LOBPCG, 300 restarts)\n"
    "  --method M    auto (default), lanczos (shift-invert), lobpcg, arpack, dense\n"
    "  --json        print one JSON object (method, converged, iterations, eigenvalues,\n"
    "                residual, time_s)\n"
    "\n"
    "exit codes: 0 converged, 1 not converged, 2 bad input or usage, 3 failure\n";

typedef struct {
    const char *file, *mass;
    long long k;
    sla_eigsh_options opt;
    int json;
} eigsh_args;

static int parse(int argc, char **argv, eigsh_args *a)
{
    memset(a, 0, sizeof *a);
    sla_eigsh_options_init(&a->opt);
    a->k = -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        long long n;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { fputs(help, stdout); return -1; }
        else if (!strcmp(o, "--json")) a->json = 1;
        else if (!strcmp(o, "--mass") && v) { a->mass = v; i++; }
        else if (!strcmp(o, "-k")) { if (!cli_parse_int("eigsh", o, v, 1, &a->k)) return EXIT_USAGE; i++; }
        else if (!strcmp(o, "--which") && v) {
            if (sla_eigsh_which_from_name(v, &a->opt.which)) return cli_fail("eigsh", SLA_EINVAL, "--which");
            i++;
        } else if (!strcmp(o, "--method") && v) {
            if (sla_eigsh_method_from_name(v, &a->opt.method)) return cli_fail("eigsh", SLA_EINVAL, "--method");
            i++;
        } else if (!strcmp(o, "--sigma")) { if (!cli_parse_double("eigsh", o, v, -HUGE_VAL, &d)) return EXIT_USAGE; a->opt.sigma = d; i++; }
        else if (!strcmp(o, "--tol")) { if (!cli_parse_double("eigsh", o, v, 0, &d)) return EXIT_USAGE; a->opt.tol = d; i++; }
        else if (!strcmp(o, "--maxiter")) { if (!cli_parse_int("eigsh", o, v, 1, &n)) return EXIT_USAGE; a->opt.maxiter = n; i++; }
        else if (o[0] == '-' && o[1]) return cli_usage_error("eigsh", "unknown option '%s'%s", o, v ? "" : " or missing value");
        else if (a->file) return cli_usage_error("eigsh", "more than one FILE given ('%s', '%s')", a->file, o);
        else a->file = o;
    }
    if (!a->file) return cli_usage_error("eigsh", "missing FILE");
    if (a->k < 1) return cli_usage_error("eigsh", "-k K (K ≥ 1) is required");
    return EXIT_OK;
}

/* A complex matrix must be Hermitian: refused here with its class, before the eigensolver's
 * own check (same tolerance, eig/hermitian.c: 1e-10 relative) names the entry. opt: "--mass " */
static int check_hermitian(const char *file, const char *opt, const cli_matrix *m)
{
    if (m->dtype != SLA_COMPLEX128 || m->coo->nrows != m->coo->ncols) return EXIT_OK;
    sla_matrix A = sla_matrix_view(m->pattern, m->dtype, 1, m->values);
    int h = 0, sym = 0;
    sla_matrix_is_hermitian(&A, 1e-10, 0, &h);
    if (h) return EXIT_OK;
    sla_matrix_is_symmetric(&A, 1e-10, 0, &sym);
    return cli_error("eigsh", EXIT_USAGE, sla_status_string(SLA_EINVAL), "%s%s: the matrix is "
                     "complex and not Hermitian (%s): eigsh needs A = A^H (real eigenvalues); "
                     "eigenvalues of a non-Hermitian complex matrix are not available in sla",
                     opt ? opt : "", file, sym ? "complex symmetric, A^T = A" : "general");
}

void cli_eigsh_print(const cli_eigsh_print_args *r)
{
    const sla_eigsh_info *info = r->info;
    if (r->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", r->file);
        cJSON_AddStringToObject(o, "method", sla_eigsh_method_name(info->method));
        cJSON_AddStringToObject(o, "which", sla_eigsh_which_name(info->which));
        cJSON_AddStringToObject(o, "description", info->description);
        cJSON_AddBoolToObject(o, "converged", info->converged >= r->k);
        cJSON_AddStringToObject(o, "reason", info->converged >= r->k ? "converged" : "max iterations");
        cJSON_AddNumberToObject(o, "iterations", (double)info->iterations);
        cJSON_AddNumberToObject(o, "operator_applications", (double)info->operator_applications);
        cJSON_AddNumberToObject(o, "residual", info->max_residual);
        cJSON *e = cJSON_AddArrayToObject(o, "eigenvalues");
        for (long long i = 0; i < r->k; i++) cJSON_AddItemToArray(e, cJSON_CreateNumber(r->eigenvalues[i]));
        cJSON_AddNumberToObject(o, "time_s", r->time_s);
        cli_json_merge(o, r->extra_json);
        cli_print_json(o);
        return;
    }
    printf("method:      %s\n", info->description);
    printf("converged:   %lld of %lld, max residual %s = %.3e\n", (long long)info->converged,
           r->k, r->mass ? "||A v - l M v|| / ((||A||_1 + |l| ||M||_1) ||v||)"
                         : "||A v - l v|| / ||A||_1", info->max_residual);
    printf("work:        %lld iterations, %lld operator applications\n",
           (long long)info->iterations, (long long)info->operator_applications);
    for (long long i = 0; i < r->k; i++) printf("lambda[%lld] = %.15g\n", i, r->eigenvalues[i]);
    printf("time:        %.3f s\n", r->time_s);
    if (r->extra_text) fputs(r->extra_text, stdout);
}

int cmd_eigsh(int argc, char **argv)
{
    cli_begin(argc, argv);
    eigsh_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    cli_matrix m;
    if ((rc = cli_load("eigsh", a.file, CLI_COMPLEX_OK, &m))) return rc;
    if ((rc = check_hermitian(a.file, NULL, &m))) { cli_matrix_free(&m); return rc; }
    long long n = (long long)m.coo->nrows;
    if (m.coo->nrows == m.coo->ncols && a.k > n) {
        cli_matrix_free(&m);
        return cli_usage_error("eigsh", "-k %lld: the %lld × %lld matrix has only %lld eigenvalues",
                               a.k, n, n, n);
    }
    cli_matrix mm = {0};
    sla_matrix M;
    if (a.mass) {
        /* M in A's dtype: a real M with a complex A is read as complex */
        int mode = m.dtype == SLA_COMPLEX128 ? CLI_COMPLEX_FORCE : CLI_COMPLEX_OK;
        if (!(rc = cli_load("eigsh", a.mass, mode, &mm)) && mm.dtype != m.dtype)
            rc = cli_error("eigsh", EXIT_USAGE, sla_status_string(SLA_EDTYPE), "--mass %s is "
                           "complex but %s is real: give a complex (Hermitian) A or a real M",
                           a.mass, a.file);
        if (!rc) rc = check_hermitian(a.mass, "--mass ", &mm);
        if (rc) { cli_matrix_free(&m); cli_matrix_free(&mm); return rc; }
        M = sla_matrix_view(mm.pattern, mm.dtype, 1, mm.values);
        a.opt.M = &M;
    }
    double *ev = calloc((size_t)a.k, sizeof(double));
    sla_matrix A = sla_matrix_view(m.pattern, m.dtype, 1, m.values);    /* ev real either way */
    sla_eigsh_info info;
    double t0 = cli_now();
    sla_status st = ev ? sla_eigsh(&A, a.k, &a.opt, ev, NULL, &info) : SLA_ENOMEM;
    double t = cli_now() - t0;
    char what[600];
    snprintf(what, sizeof what, a.mass ? "%s with --mass %s" : "%s", a.file, a.mass);
    if (st < 0) rc = cli_fail("eigsh", st, what);
    else {
        cli_eigsh_print(&(cli_eigsh_print_args){.file = a.file, .json = a.json, .mass = a.mass != NULL,
                                                .k = a.k, .info = &info, .eigenvalues = ev,
                                                .time_s = t});
        if (st == SLA_NOT_CONVERGED) rc = EXIT_NOT_CONVERGED;
    }
    free(ev);
    cli_matrix_free(&m);
    cli_matrix_free(&mm);
    return rc;
}
