/* sla info FILE: what the matrix is, and what method=auto would do with it. */
#include <math.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: sla info FILE [--json]\n"
    "\n"
    "Prints shape, nnz, field and symmetry from the header, structural and numerical symmetry,\n"
    "the diagonal (present, signs, NaN; inf counts by its sign), norms (1, inf, Frobenius, max), nnz per row, bandwidth, and\n"
    "what 'sla solve --method auto' would choose and why (this runs the analysis and the\n"
    "factorization or preconditioner set-up). A complex file also reports whether A is\n"
    "Hermitian (A^H = A), complex symmetric (A^T = A) or general (JSON: hermitian,\n"
    "complex_class; numerically_symmetric is A^T = A), and counts diagonal entries with a\n"
    "nonzero imaginary part as 'not real' (diagonal.nonreal).\n"
    "\n"
    "  --json   print one JSON object instead of text. Besides the facts above it has the keys\n"
    "           every sla --json object has: method (= auto_method: the method 'sla solve'\n"
    "           would use, null when none applies), time_s (of the analysis), and reason,\n"
    "           converged, iterations, residual, which are null (info solves nothing)\n";

/* sla_matrix_diag_info counts signs of real values; a complex diagonal entry is counted by
 * its real part when its imaginary part is 0 (a Hermitian diagonal), else as nonreal */
static void complex_diag_info(const cli_matrix *m, cli_info_facts *f)
{
    const int64_t *rp = sla_pattern_rowptr(m->pattern);
    const int32_t *ci = sla_pattern_colind(m->pattern);
    int64_t nr = sla_pattern_nrows(m->pattern), nc = sla_pattern_ncols(m->pattern);
    for (int64_t i = 0; i < nr && i < nc; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            if (ci[s] != i) continue;
            double re = m->values[2 * s], im = m->values[2 * s + 1];
            f->diag.present++;
            if (isnan(re) || isnan(im)) f->diag.nan++;
            else if (im != 0) f->diag_nonreal++;
            else if (re > 0) f->diag.positive++;
            else if (re < 0) f->diag.negative++;
            else f->diag.zero++;
        }
    f->diag.missing = (nr < nc ? nr : nc) - f->diag.present;
}

void cli_info_facts_gather(const cli_matrix *m, cli_info_facts *f)
{
    memset(f, 0, sizeof *f);
    sla_matrix A = sla_matrix_view(m->pattern, m->dtype, 1, m->values);
    f->structural = sla_pattern_is_structurally_symmetric(m->pattern);
    sla_matrix_is_symmetric(&A, 1e-12, 0, &f->numerical);
    f->complex_ = m->dtype == SLA_COMPLEX128;
    if (f->complex_) {
        sla_matrix_is_hermitian(&A, 1e-12, 0, &f->hermitian);
        complex_diag_info(m, f);
    } else {
        f->hermitian = f->numerical;
        sla_matrix_diag_info(&A, &f->diag);
    }
    sla_pattern_get_stats(m->pattern, &f->stats);
    sla_matrix_norm(&A, '1', &f->norm1);
    sla_matrix_norm(&A, 'I', &f->norminf);
    sla_matrix_norm(&A, 'F', &f->normF);
    sla_matrix_norm(&A, 'M', &f->normmax);
}

const char *cli_info_complex_class(const cli_info_facts *f)
{
    /* both: the values are real (or a real diagonal with an imaginary part 0 elsewhere) */
    return f->hermitian ? "hermitian" : f->numerical ? "complex symmetric" : "general";
}

/* what 'sla solve --method auto' would do */
static void auto_facts(const cli_matrix *m, cli_info_facts *f)
{
    sla_matrix A = sla_matrix_view(m->pattern, m->dtype, 1, m->values);
    sla_solver *s = NULL;
    sla_status st = sla_solver_create(&A, NULL, &s);
    if (st == SLA_OK) {
        snprintf(f->auto_choice, sizeof f->auto_choice, "%s", sla_solver_describe(s));
        f->auto_method = sla_solver_method(s);
        f->auto_ok = 1;
    } else {
        snprintf(f->auto_choice, sizeof f->auto_choice, "fails: %s", sla_last_error());
    }
    sla_solver_free(&s);
}

void cli_info_print_text(const cli_matrix *m, const cli_info_facts *f, const char *extra_text)
{
    const sla_coo *c = m->coo;
    printf("file:        %s (%s)\n", m->path, m->format);
    printf("shape:       %lld × %lld\n", (long long)c->nrows, (long long)c->ncols);
    printf("entries:     %lld stored, %lld after symmetric expansion, nnz %lld (duplicates summed)\n",
           (long long)c->nnz_stored, (long long)c->nnz, (long long)sla_pattern_nnz(m->pattern));
    printf("header:      %s %s%s\n", cli_field_name(c->field), cli_symmetry_name(c->symmetry),
           c->is_array ? " (array format)" : "");
    if (f->complex_)
        printf("symmetry:    structural %s, complex symmetric (A^T = A) %s, Hermitian (A^H = A) "
               "%s: %s\n", f->structural ? "yes" : "no", f->numerical ? "yes" : "no",
               f->hermitian ? "yes" : "no", cli_info_complex_class(f));
    else
        printf("symmetry:    structural %s, numerical %s\n", f->structural ? "yes" : "no",
               f->numerical ? "yes" : "no");
    printf("diagonal:    %lld present, %lld missing; %lld positive, %lld negative, %lld zero, "
           "%lld NaN", (long long)f->diag.present, (long long)f->diag.missing,
           (long long)f->diag.positive, (long long)f->diag.negative, (long long)f->diag.zero,
           (long long)f->diag.nan);
    if (f->complex_) printf(", %lld not real", f->diag_nonreal);
    printf("\n");
    printf("norms:       1-norm %.6g, inf-norm %.6g, Frobenius %.6g, max |a_ij| %.6g\n", f->norm1,
           f->norminf, f->normF, f->normmax);
    printf("rows:        nnz per row min %lld, max %lld, mean %.2f, std %.2f; %lld empty rows, "
           "%lld empty columns\n", (long long)f->stats.min_row_nnz, (long long)f->stats.max_row_nnz,
           f->stats.mean_row_nnz, f->stats.std_row_nnz, (long long)f->stats.empty_rows,
           (long long)f->stats.empty_cols);
    printf("bandwidth:   lower %lld, upper %lld\n", (long long)f->stats.lower_bandwidth,
           (long long)f->stats.upper_bandwidth);
    if (extra_text) fputs(extra_text, stdout);
    printf("auto:        %s\n", f->auto_choice);
}

void cli_info_print_json(const cli_matrix *m, const cli_info_facts *f, cJSON *extra)
{
    const sla_coo *c = m->coo;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", m->path);
    cJSON_AddStringToObject(o, "format", m->format);
    cJSON_AddNumberToObject(o, "rows", (double)c->nrows);
    cJSON_AddNumberToObject(o, "cols", (double)c->ncols);
    cJSON_AddNumberToObject(o, "entries_stored", (double)c->nnz_stored);
    cJSON_AddNumberToObject(o, "nnz", (double)sla_pattern_nnz(m->pattern));
    cJSON_AddStringToObject(o, "field", cli_field_name(c->field));
    cJSON_AddStringToObject(o, "symmetry", cli_symmetry_name(c->symmetry));
    cJSON_AddBoolToObject(o, "structurally_symmetric", f->structural);
    cJSON_AddBoolToObject(o, "numerically_symmetric", f->numerical);
    if (f->complex_) {             /* numerically_symmetric is Aᵀ = A (complex symmetric) */
        cJSON_AddBoolToObject(o, "hermitian", f->hermitian);
        cJSON_AddStringToObject(o, "complex_class", cli_info_complex_class(f));
    }
    cJSON *d = cJSON_AddObjectToObject(o, "diagonal");
    cJSON_AddNumberToObject(d, "present", (double)f->diag.present);
    cJSON_AddNumberToObject(d, "missing", (double)f->diag.missing);
    cJSON_AddNumberToObject(d, "positive", (double)f->diag.positive);
    cJSON_AddNumberToObject(d, "negative", (double)f->diag.negative);
    cJSON_AddNumberToObject(d, "zero", (double)f->diag.zero);
    cJSON_AddNumberToObject(d, "nan", (double)f->diag.nan);
    if (f->complex_) cJSON_AddNumberToObject(d, "nonreal", (double)f->diag_nonreal);
    cJSON *n = cJSON_AddObjectToObject(o, "norms");
    cJSON_AddNumberToObject(n, "one", f->norm1);
    cJSON_AddNumberToObject(n, "inf", f->norminf);
    cJSON_AddNumberToObject(n, "fro", f->normF);
    cJSON_AddNumberToObject(n, "max", f->normmax);
    cJSON *r = cJSON_AddObjectToObject(o, "row_nnz");
    cJSON_AddNumberToObject(r, "min", (double)f->stats.min_row_nnz);
    cJSON_AddNumberToObject(r, "max", (double)f->stats.max_row_nnz);
    cJSON_AddNumberToObject(r, "mean", f->stats.mean_row_nnz);
    cJSON_AddNumberToObject(r, "std", f->stats.std_row_nnz);
    cJSON_AddNumberToObject(o, "empty_rows", (double)f->stats.empty_rows);
    cJSON_AddNumberToObject(o, "empty_cols", (double)f->stats.empty_cols);
    cJSON_AddNumberToObject(o, "lower_bandwidth", (double)f->stats.lower_bandwidth);
    cJSON_AddNumberToObject(o, "upper_bandwidth", (double)f->stats.upper_bandwidth);
    cJSON_AddStringToObject(o, "auto", f->auto_choice);
    /* the keys every --json object has (README): null where they do not apply */
    const char *method = f->auto_ok ? sla_method_name(f->auto_method) : NULL;
    if (method) {
        cJSON_AddStringToObject(o, "method", method);
        cJSON_AddStringToObject(o, "auto_method", method);
    } else {
        cJSON_AddNullToObject(o, "method");
        cJSON_AddNullToObject(o, "auto_method");
    }
    cJSON_AddNullToObject(o, "reason");
    cJSON_AddNullToObject(o, "converged");
    cJSON_AddNullToObject(o, "iterations");
    cJSON_AddNullToObject(o, "residual");
    cJSON_AddNumberToObject(o, "time_s", f->time_s);
    cli_json_merge(o, extra);
    cli_print_json(o);
}

int cmd_info(int argc, char **argv)
{
    cli_begin(argc, argv);
    int json = 0;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(help, stdout); return EXIT_OK; }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-') return cli_usage_error("info", "unknown option '%s'", argv[i]);
        else if (file) return cli_usage_error("info", "more than one FILE given ('%s', '%s')", file, argv[i]);
        else file = argv[i];
    }
    if (!file) return cli_usage_error("info", "missing FILE");
    cli_matrix m;
    int rc = cli_load("info", file, CLI_COMPLEX_OK, &m);
    if (rc) return rc;
    cli_info_facts f;
    double t0 = cli_now();
    cli_info_facts_gather(&m, &f);
    auto_facts(&m, &f);
    f.time_s = cli_now() - t0;
    if (json) cli_info_print_json(&m, &f, NULL); else cli_info_print_text(&m, &f, NULL);
    cli_matrix_free(&m);
    return EXIT_OK;
}
