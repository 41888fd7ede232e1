/* The sla command-line tool: shared declarations. */
#ifndef SLA_CLI_H
#define SLA_CLI_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "sla/sla.h"

/* Exit codes (documented in --help and the README). */
enum { EXIT_OK = 0, EXIT_NOT_CONVERGED = 1, EXIT_USAGE = 2, EXIT_FAILURE_ = 3 };

/* A matrix loaded from a file, with what the file said about it. */
typedef struct cli_matrix {
    const char *path;
    sla_coo *coo;            /* as read (expanded symmetric storage) */
    sla_pattern *pattern;    /* NULL for complex matrices (unless loaded with CLI_COMPLEX_OK) */
    double *values;          /* [nnz] float64 or [nnz][2] complex128 (dtype), CSR order */
    sla_dtype dtype;         /* SLA_FLOAT64, or SLA_COMPLEX128 for a complex file (CLI_COMPLEX_OK) */
    const char *format;      /* "matrix market", "rutherford-boeing", "safetensors" */
} cli_matrix;

/* Errors. Every message goes to stderr as "sla CMD: message"; when the command line holds --json
 * (see cli_begin), the same message is also printed on stdout as one JSON object
 * {"error": "sla CMD: message", "status": "<status>", "command": CMD, "exit_code": N}, so that a
 * caller parsing stdout always gets JSON. Exit codes are unchanged by --json. */

/* Called first by every command with its arguments: notes whether --json was given. */
void cli_begin(int argc, char **argv);

/* sla-mpi: q = 1 silences every message of this process (errors, warnings, the JSON error
 * object) so that only rank 0 prints; exit codes are unchanged. */
void cli_set_quiet(int q);
/* The program named in "(run 'PROGRAM CMD --help' for usage)" hints (default "sla"). */
void cli_set_program(const char *name);

/* b [n] from "ones", "random" (uniform in [-1, 1), seed 1) or a Matrix Market n × 1 file; the
 * file's errors name --rhs. Returns 0 or the exit code after printing the error. */
int cli_make_rhs(const char *cmd, const char *spec, int64_t n, int parts, double *b);

/* Loads FILE by its extension (.mtx, .mtx.gz, .rb/.rua/.rsa/..., .safetensors). On failure prints
 * "sla CMD: FILE: message" (the file named once) and returns the exit code (2 for bad input,
 * 3 otherwise). need_real: 1 refuses complex files (the command does not take them yet), 0
 * leaves them as COO only (no pattern), CLI_COMPLEX_OK converts them to complex128 values,
 * CLI_COMPLEX_FORCE converts every file to complex128 (real ones with zero imaginary parts). */
#define CLI_COMPLEX_OK 2
#define CLI_COMPLEX_FORCE 3
int cli_load(const char *cmd, const char *path, int need_real, cli_matrix *m);
void cli_matrix_free(cli_matrix *m);

/* --device cuda (device.c): device copies of the matrix values and b, room for x, through
 * libsla_cuda loaded at run time. cli_cuda_end copies x back (x may be NULL: only free). */
typedef struct cli_cuda {
    void *values, *b, *x;
    void (*release)(void *);
    sla_status (*copy)(void *, const void *, size_t, int);
} cli_cuda;
int cli_cuda_begin(const char *cmd, const cli_matrix *m, const double *b, int64_t n, int64_t nx,
                   cli_cuda *d);
int cli_cuda_end(const char *cmd, cli_cuda *d, double *x, int64_t nx);

/* Prints "sla CMD: WHAT: message" for a failed status (WHAT left out when the library's message
 * already names it, e.g. a file path) and returns the matching exit code. */
int cli_fail(const char *cmd, sla_status st, const char *what);

/* A failed write of an output file (the library's status st, its message naming the file):
 * exit 3 for every failure to create or write it (SLA_EIO, SLA_ENOMEM, ...), the usual code for
 * a refusal of what is to be written (SLA_EUNSUPPORTED, SLA_EINVAL: exit 2). */
int cli_fail_write(const char *cmd, sla_status st, const char *path);

/* Before any work on an output file given as `opt` (e.g. "-o", or "OUT"): refuses an output that
 * is one of the n input files (same device and inode: other spellings, hard and symbolic links;
 * usage error, exit 2), and one that cannot be created or replaced (a directory, no permission,
 * a missing or read-only directory: exit 3), without creating or changing anything. Returns 0
 * or the exit code after printing the error. */
int cli_check_output(const char *cmd, const char *opt, const char *out, const char *const *inputs,
                     int n);

/* An error that is not a library status (status names it, e.g. "usage", "io"); returns exit. */
int cli_error(const char *cmd, int exit_code, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Usage error: prints the message and a hint to run --help, returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "sla CMD: warning: ..." on stderr (never on stdout, so --json output stays one object). */
void cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse an option's value; return 0 after a usage error (missing value, not a number, not
 * finite, out of the int64 range, or below min). */
int cli_parse_double(const char *cmd, const char *opt, const char *s, double min, double *out);
int cli_parse_int(const char *cmd, const char *opt, const char *s, long long min, long long *out);

/* Seconds since an arbitrary origin (monotonic). */
double cli_now(void);
/* Peak resident set size of this process in bytes. */
double cli_peak_rss(void);

/* Prints a cJSON object to stdout (formatted) and deletes it. */
void cli_print_json(cJSON *obj);

/* Moves every item of extra (may be NULL) into o and deletes extra. */
void cli_json_merge(cJSON *o, cJSON *extra);

/* Names of the Matrix Market header words. */
const char *cli_field_name(sla_mm_field f);
const char *cli_symmetry_name(sla_mm_symmetry s);

/* What 'sla solve' prints after a solve (cmd_solve.c), text or one JSON object. extra_json:
 * more keys (moved into the object; may be NULL); extra_text: lines printed last (may be NULL);
 * rss_note: text after the peak memory figure (may be NULL). */
typedef struct cli_solve_report_args {
    const char *file;
    int json;
    const sla_solve_info *info;
    const char *precond;
    double relres, setup, solve, rss;
    int64_t unknowns;            /* for info->peak_bytes per unknown (0: not printed) */
    cJSON *extra_json;
    const char *extra_text, *rss_note;
} cli_solve_report_args;
void cli_solve_report(const cli_solve_report_args *r);

/* What 'sla logdet' prints (cmd_logdet.c); extra_json / extra_text as for cli_solve_report. */
typedef struct cli_logdet_print_args {
    const char *file;
    int json;
    const char *method, *description;
    double sign, logabsdet, time_s;
    const double *phase;         /* complex A: det/|det| as {re, im} ({0, 0} singular); else NULL */
    cJSON *extra_json;
    const char *extra_text;
} cli_logdet_print_args;
void cli_logdet_print(const cli_logdet_print_args *r);

/* What 'sla eigsh' prints (cmd_eigsh.c); extra_json / extra_text as for cli_solve_report. */
typedef struct cli_eigsh_print_args {
    const char *file;
    int json, mass;              /* mass: the generalized problem (names its residual) */
    long long k;
    const sla_eigsh_info *info;
    const double *eigenvalues;   /* [k] */
    double time_s;
    cJSON *extra_json;
    const char *extra_text;
} cli_eigsh_print_args;
void cli_eigsh_print(const cli_eigsh_print_args *r);

/* What 'sla info' reports about a matrix (cmd_info.c). Complex: numerical is Aᵀ = A (complex
 * symmetric), hermitian A = Aᴴ, and the diagonal's sign counts are of the entries with a zero
 * imaginary part (diag_nonreal counts the others). */
typedef struct cli_info_facts {
    int structural, numerical;
    int complex_, hermitian;
    long long diag_nonreal;
    sla_diag_info diag;
    sla_pattern_stats stats;
    double norm1, norminf, normF, normmax;
    char auto_choice[600];
    sla_method auto_method;
    int auto_ok;
    double time_s;
} cli_info_facts;

/* The facts of m, all but auto_choice/auto_method/auto_ok (the caller's method=auto). */
void cli_info_facts_gather(const cli_matrix *m, cli_info_facts *f);
/* Prints them as 'sla info' does (text or one JSON object); extra: more JSON keys (moved into
 * the object, may be NULL), or for text extra_text lines printed before "auto:" (may be NULL). */
/* "hermitian", "complex symmetric" or "general" (for a complex matrix's facts) */
const char *cli_info_complex_class(const cli_info_facts *f);
void cli_info_print_text(const cli_matrix *m, const cli_info_facts *f, const char *extra_text);
void cli_info_print_json(const cli_matrix *m, const cli_info_facts *f, cJSON *extra);

/* Subcommands: argc/argv start at the subcommand name. */
int cmd_info(int argc, char **argv);
int cmd_solve(int argc, char **argv);
int cmd_eigsh(int argc, char **argv);
int cmd_logdet(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif
