/* Shared pieces of the sla tool: loading files, errors, timing, JSON output. */
#define _GNU_SOURCE             /* AT_EACCESS */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int is_rb(const char *path)
{
    static const char *const ext[] = {".rb", ".rua", ".rsa", ".rra", ".rza", ".pua", ".psa",
                                      ".pra", ".pza", ".cua", ".csa", ".cha", ".iua", ".isa"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (ends_with(path, ext[i])) return 1;
    return 0;
}

static int json_errors;
static int quiet;              /* sla-mpi: ranks other than 0 print nothing */

static const char *program = "sla";

void cli_set_quiet(int q)
{
    quiet = q;
}

void cli_set_program(const char *name)
{
    program = name;
}

void cli_begin(int argc, char **argv)
{
    json_errors = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json")) json_errors = 1;
}

/* One error: the line on stderr, and the JSON object on stdout under --json. */
static int report_error(const char *cmd, int exit_code, const char *status, const char *msg)
{
    char full[1400];                   /* "sla CMD: msg", or "sla: msg" outside a command (the
                                        * program's name: sla-mpi for the MPI tool) */
    snprintf(full, sizeof full, "%s%s%s: %s", program, *cmd ? " " : "", cmd, msg);
    if (quiet) return exit_code;
    fprintf(stderr, "%s\n", full);
    if (json_errors) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "error", full);
        cJSON_AddStringToObject(o, "status", status);
        cJSON_AddStringToObject(o, "command", cmd);
        cJSON_AddNumberToObject(o, "exit_code", exit_code);
        cli_print_json(o);
    }
    return exit_code;
}

static int exit_code_of(sla_status st)
{
    switch (st) {
    case SLA_EINVAL: case SLA_EINDEX: case SLA_ESHAPE: case SLA_EDTYPE: case SLA_EPARSE:
    case SLA_EIO: case SLA_ENONFINITE: case SLA_EUNSUPPORTED:
        return EXIT_USAGE;
    case SLA_NOT_CONVERGED:
        return EXIT_NOT_CONVERGED;
    default:
        return EXIT_FAILURE_;
    }
}

int cli_fail(const char *cmd, sla_status st, const char *what)
{
    const char *err = sla_last_error();
    char msg[1300];
    if (what && *what && !strstr(err, what)) snprintf(msg, sizeof msg, "%s: %s", what, err);
    else snprintf(msg, sizeof msg, "%s", err);
    return report_error(cmd, exit_code_of(st), sla_status_string(st), msg);
}

int cli_fail_write(const char *cmd, sla_status st, const char *path)
{
    int refused = st == SLA_EUNSUPPORTED || st == SLA_EINVAL || st == SLA_EDTYPE;
    if (refused) return cli_fail(cmd, st, path);
    const char *err = sla_last_error();
    char msg[1300];
    if (strstr(err, path)) snprintf(msg, sizeof msg, "%s", err);
    else snprintf(msg, sizeof msg, "%s: %s", path, err);
    return report_error(cmd, EXIT_FAILURE_, "io", msg);
}

/* 1 if a and b name the same existing file (same device and inode) */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 0 if the library's writers (io_file.c) can create or replace path, else an errno value: an
 * existing file must be writable, and a regular or new file's directory too (the data go to a
 * temporary file there that is renamed over the target). */
static int output_problem(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return EISDIR;
        if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0) return errno;
        if (!S_ISREG(sb.st_mode)) return 0;            /* a device is written in place */
    } else if (errno != ENOENT) {
        return errno;
    }
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 ? 0 : errno;
}

int cli_check_output(const char *cmd, const char *opt, const char *out, const char *const *inputs,
                     int n)
{
    for (int k = 0; k < n; k++)
        if (inputs[k] && (!strcmp(inputs[k], out) || same_file(inputs[k], out)))
            return cli_usage_error(cmd, "%s '%s' is the input file '%s': writing it would destroy "
                                   "the input", opt, out, inputs[k]);
    int e = output_problem(out);
    if (e) return cli_error(cmd, EXIT_FAILURE_, "io", "%s %s: cannot create: %s", opt, out, strerror(e));
    return EXIT_OK;
}

int cli_error(const char *cmd, int exit_code, const char *status, const char *fmt, ...)
{
    char msg[1300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return report_error(cmd, exit_code, status, msg);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[1300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report_error(cmd, EXIT_USAGE, "usage", msg);
    if (!quiet) fprintf(stderr, "(run '%s %s --help' for usage)\n", program, cmd);
    return EXIT_USAGE;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
    if (quiet) return;
    fprintf(stderr, "%s %s: warning: ", program, cmd);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_parse_double(const char *cmd, const char *opt, const char *s, double min, double *out)
{
    char *end = NULL;
    if (!s) { cli_usage_error(cmd, "option %s needs a value", opt); return 0; }
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) { cli_usage_error(cmd, "option %s: '%s' is not a number", opt, s); return 0; }
    if (!isfinite(v)) { cli_usage_error(cmd, "option %s: '%s' is not finite", opt, s); return 0; }
    if (v < min) { cli_usage_error(cmd, "option %s: %s is below the minimum %g", opt, s, min); return 0; }
    *out = v;
    return 1;
}

int cli_parse_int(const char *cmd, const char *opt, const char *s, long long min, long long *out)
{
    char *end = NULL;
    if (!s) { cli_usage_error(cmd, "option %s needs a value", opt); return 0; }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end) { cli_usage_error(cmd, "option %s: '%s' is not an integer", opt, s); return 0; }
    if (errno == ERANGE) {
        cli_usage_error(cmd, "option %s: %s is out of range (at most %lld)", opt, s, LLONG_MAX);
        return 0;
    }
    if (v < min) { cli_usage_error(cmd, "option %s: %lld is below the minimum %lld", opt, v, min); return 0; }
    *out = v;
    return 1;
}

int cli_load(const char *cmd, const char *path, int need_real, cli_matrix *m)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    sla_status st;
    if (ends_with(path, ".safetensors")) {
        m->format = "safetensors";
        st = sla_safetensors_read(path, &m->coo);
    } else if (is_rb(path)) {
        m->format = "rutherford-boeing";
        st = sla_rb_read(path, &m->coo);
    } else {
        m->format = "matrix market";
        st = sla_mm_read(path, &m->coo);
    }
    m->dtype = SLA_FLOAT64;
    int cplx = st == SLA_OK && (m->coo->field == SLA_MM_COMPLEX || need_real == CLI_COMPLEX_FORCE);
    if (cplx && need_real >= CLI_COMPLEX_OK) {
        m->dtype = SLA_COMPLEX128;
        st = sla_coo_to_matrix(m->coo, SLA_COMPLEX128, &m->pattern, (void **)&m->values);
    } else if (st == SLA_OK && m->coo->field == SLA_MM_COMPLEX && need_real) {
        cli_matrix_free(m);
        return cli_error(cmd, EXIT_USAGE, sla_status_string(SLA_EDTYPE), "%s: the matrix is "
                         "complex; complex matrices are read but not supported by '%s %s' yet",
                         path, program, cmd);
    }
    if (st == SLA_OK && !m->pattern && m->coo->field != SLA_MM_COMPLEX)
        st = sla_coo_to_matrix(m->coo, SLA_FLOAT64, &m->pattern, (void **)&m->values);
    if (st != SLA_OK) {
        int rc = cli_fail(cmd, st, path);
        cli_matrix_free(m);
        return rc;
    }
    return EXIT_OK;
}

/* b from "ones", "random" or a Matrix Market n × 1 file; parts = 2 for a complex b (pairs:
 * ones and random give real entries, a complex file its values) */
int cli_make_rhs(const char *cmd, const char *spec, int64_t n, int parts, double *b)
{
    memset(b, 0, sizeof(double) * (size_t)(parts * n));
    if (!strcmp(spec, "ones")) { for (int64_t i = 0; i < n; i++) b[parts * i] = 1; return EXIT_OK; }
    if (!strcmp(spec, "random")) {
        uint64_t s = 1;
        for (int64_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            b[parts * i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
        }
        return EXIT_OK;
    }
    sla_coo *c = NULL;
    sla_status st = sla_mm_read(spec, &c);
    if (st) return cli_fail(cmd, st, "--rhs");
    int rc = EXIT_OK;
    int cfile = c->field == SLA_MM_COMPLEX;
    if (c->nrows != n || c->ncols != 1 || (cfile && parts == 1)) {
        rc = cli_error(cmd, EXIT_USAGE, sla_status_string(SLA_ESHAPE), "--rhs %s: expected a "
                       "%s %lld × 1 matrix, got %lld × %lld%s", spec,
                       parts == 1 ? "real" : "real or complex", (long long)n,
                       (long long)c->nrows, (long long)c->ncols, cfile ? " complex" : "");
    } else {
        for (int64_t k = 0; k < c->nnz; k++)
            for (int q = 0; q < (cfile ? 2 : 1); q++)
                b[parts * c->row[k] + q] += c->values[(cfile ? 2 : 1) * k + q];
        /* checked here, so that the message names this file and not the matrix */
        for (int64_t i = 0; i < parts * n && !rc; i++)
            if (!isfinite(b[i]))
                rc = cli_error(cmd, EXIT_USAGE, sla_status_string(SLA_ENONFINITE), "--rhs %s: "
                               "b[%lld] (row %lld) is %g: the right-hand side must be "
                               "finite", spec, (long long)(i / parts), (long long)(i / parts) + 1,
                               b[i]);
    }
    sla_coo_free(&c);
    return rc;
}

void cli_matrix_free(cli_matrix *m)
{
    sla_coo_free(&m->coo);
    sla_pattern_free(&m->pattern);
    free(m->values);
    m->values = NULL;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cli_peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return 1024.0 * (double)ru.ru_maxrss;   /* Linux reports kilobytes */
}

void cli_json_merge(cJSON *o, cJSON *extra)
{
    for (cJSON *e = extra ? extra->child : NULL; e; e = extra->child)
        cJSON_AddItemToObject(o, e->string, cJSON_DetachItemViaPointer(extra, e));
    cJSON_Delete(extra);
}

void cli_print_json(cJSON *obj)
{
    char *s = cJSON_Print(obj);
    if (s) { puts(s); cJSON_free(s); }
    cJSON_Delete(obj);
}

const char *cli_field_name(sla_mm_field f)
{
    switch (f) {
    case SLA_MM_REAL: return "real";
    case SLA_MM_INTEGER: return "integer";
    case SLA_MM_PATTERN: return "pattern";
    case SLA_MM_COMPLEX: return "complex";
    }
    return "?";
}

const char *cli_symmetry_name(sla_mm_symmetry s)
{
    switch (s) {
    case SLA_MM_GENERAL: return "general";
    case SLA_MM_SYMMETRIC: return "symmetric";
    case SLA_MM_SKEW_SYMMETRIC: return "skew-symmetric";
    case SLA_MM_HERMITIAN: return "hermitian";
    }
    return "?";
}
