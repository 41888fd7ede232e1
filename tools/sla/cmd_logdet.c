/* sla logdet FILE: sign and log|det| from a direct factorization. */
#include <math.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: sla logdet FILE [--method M] [--json]\n"
    "\n"
    "Prints sign(det A) and log|det A| from a direct factorization (method auto picks Cholesky,\n"
    "LDLT or LU; or give --method cholesky|ldlt|lu|klu). A singular matrix (a zero pivot, or\n"
    "numerically: a reciprocal condition estimate below 2.2e-13) gives sign 0 and\n"
    "log|det| = -inf (method cholesky may refuse it: not positive definite).\n"
    "A complex matrix (complex128: LU, KLU, Cholesky of a Hermitian positive definite A, LDLT\n"
    "of a complex symmetric A) has a phase det/|det| = exp(i theta) instead of a sign: printed\n"
    "as 'phase: re+imi (theta = ...)'; in JSON sign is [re, im] and phase_angle is theta.\n"
    "\n"
    "  --method M   direct method (default auto)\n"
    "  --json       print one JSON object: method, description, sign (-1, 0, 1), logabsdet\n"
    "               (null when the matrix is singular: JSON has no -inf), singular (true/false),\n"
    "               reason \"converged\", converged true, iterations 0, residual null (no system\n"
    "               is solved), time_s\n";

void cli_logdet_print(const cli_logdet_print_args *r)
{
    if (r->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", r->file);
        cJSON_AddStringToObject(o, "method", r->method);
        cJSON_AddStringToObject(o, "description", r->description);
        cJSON_AddStringToObject(o, "reason", "converged");
        cJSON_AddBoolToObject(o, "converged", 1);
        cJSON_AddNumberToObject(o, "iterations", 0);
        cJSON_AddNullToObject(o, "residual");
        if (r->phase) {        /* complex: the unit-modulus det/|det|, and its angle */
            cJSON *p = cJSON_AddArrayToObject(o, "sign");
            cJSON_AddItemToArray(p, cJSON_CreateNumber(r->phase[0]));
            cJSON_AddItemToArray(p, cJSON_CreateNumber(r->phase[1]));
            if (r->phase[0] != 0 || r->phase[1] != 0)
                cJSON_AddNumberToObject(o, "phase_angle", atan2(r->phase[1], r->phase[0]));
            else cJSON_AddNullToObject(o, "phase_angle");
        } else {
            cJSON_AddNumberToObject(o, "sign", r->sign);
        }
        if (isfinite(r->logabsdet)) cJSON_AddNumberToObject(o, "logabsdet", r->logabsdet);
        else cJSON_AddNullToObject(o, "logabsdet");
        cJSON_AddBoolToObject(o, "singular", r->phase ? r->phase[0] == 0 && r->phase[1] == 0
                                                      : r->sign == 0);
        cJSON_AddNumberToObject(o, "time_s", r->time_s);
        cli_json_merge(o, r->extra_json);
        cli_print_json(o);
        return;
    }
    printf("method:      %s\n", r->description);
    if (r->phase && (r->phase[0] != 0 || r->phase[1] != 0))
        printf("phase:       %.17g%+.17gi (theta = %.17g)\n", r->phase[0], r->phase[1],
               atan2(r->phase[1], r->phase[0]));
    else if (r->phase) printf("phase:       0\n");
    else printf("sign:        %s\n", r->sign > 0 ? "+1" : r->sign < 0 ? "-1" : "0");
    printf("log|det|:    %.17g\n", r->logabsdet);
    printf("time:        %.3f s\n", r->time_s);
    if (r->extra_text) fputs(r->extra_text, stdout);
}

int cmd_logdet(int argc, char **argv)
{
    cli_begin(argc, argv);
    int json = 0;
    const char *file = NULL;
    sla_solver_options opt;
    sla_solver_options_init(&opt);
    opt.need_determinant = 1;          /* method auto: direct methods only */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(help, stdout); return EXIT_OK; }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--method") && i + 1 < argc) {
            if (sla_method_from_name(argv[++i], &opt.method)) return cli_fail("logdet", SLA_EINVAL, "--method");
            if (sla_method_is_iterative(opt.method))
                return cli_usage_error("logdet", "--method %s is iterative; log|det| needs a direct "
                                       "method (cholesky, ldlt, lu, klu)", argv[i]);
        } else if (argv[i][0] == '-') return cli_usage_error("logdet", "unknown option '%s'", argv[i]);
        else if (file) return cli_usage_error("logdet", "more than one FILE given");
        else file = argv[i];
    }
    if (!file) return cli_usage_error("logdet", "missing FILE");
    cli_matrix m;
    int rc = cli_load("logdet", file, CLI_COMPLEX_OK, &m);
    if (rc) return rc;
    if (m.coo->nrows != m.coo->ncols) {
        long long r = (long long)m.coo->nrows, c = (long long)m.coo->ncols;
        cli_matrix_free(&m);
        return cli_error("logdet", EXIT_USAGE, "shape", "%s: the matrix is %lld × %lld: a "
                         "determinant needs a square matrix", file, r, c);
    }
    sla_matrix A = sla_matrix_view(m.pattern, m.dtype, 1, m.values);
    sla_solver *s = NULL;
    double sign[2] = {0, 0}, lad = 0, t0 = cli_now();   /* complex: sign is {re, im} */
    sla_status st = sla_solver_create(&A, &opt, &s);
    if (st == SLA_OK) st = sla_solver_logdet(s, sign, &lad);
    double t = cli_now() - t0;
    if (st) rc = cli_fail("logdet", st, file);
    else cli_logdet_print(&(cli_logdet_print_args){
        .file = file, .json = json, .method = sla_method_name(sla_solver_method(s)),
        .description = sla_solver_describe(s), .sign = sign[0], .logabsdet = lad, .time_s = t,
        .phase = m.dtype == SLA_COMPLEX128 ? sign : NULL});
    sla_solver_free(&s);
    cli_matrix_free(&m);
    return rc;
}
