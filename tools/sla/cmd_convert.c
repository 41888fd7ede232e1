/* sla convert IN OUT: Matrix Market (.mtx, .mtx.gz), Rutherford–Boeing, safetensors. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <strings.h>

#include "cli.h"

static const char help[] =
    "usage: sla convert IN OUT [--float32]\n"
    "\n"
    "Converts a sparse matrix between formats chosen by file extension:\n"
    "  .mtx, .mtx.gz                 Matrix Market (gzip when the name ends in .gz); a symmetric\n"
    "                                input is written as symmetric (lower triangle)\n"
    "  .rb .rua .rsa .psa .pua ...   Rutherford-Boeing (SuiteSparse RBio)\n"
    "  .safetensors                  torch-sla layout: values, row_indices, col_indices, shape\n"
    "\n"
    "  --float32   store safetensors values as F32 (default F64)\n"
    "OUT must not be IN (also not through another path or a link): refused with exit code 2.\n"
    "OUT is replaced only once written completely (a failed write leaves it as it was); a\n"
    "failed write exits 3.\n"
    "Complex matrices are converted as complex128 (Matrix Market 'complex', written as\n"
    "hermitian or symmetric when the input says so and the values agree; Rutherford-Boeing\n"
    "CUA/CSA/CHA; safetensors C128, or C64 with --float32). Rutherford-Boeing cannot hold a matrix without\n"
    "stored entries (RBio refuses it): use .mtx or .safetensors for those.\n";

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* The input's symmetry when the values agree with it exactly (lower triangle written), else
 * general: symmetric (Aᵀ = A, also complex symmetric) or hermitian (A = Aᴴ, complex). */
static sla_mm_symmetry mm_symmetry(const cli_matrix *m, const sla_matrix *A)
{
    int yes = 0;
    if (m->coo->symmetry == SLA_MM_SYMMETRIC) sla_matrix_is_symmetric(A, 0, 0, &yes);
    if (m->coo->symmetry == SLA_MM_HERMITIAN && m->dtype == SLA_COMPLEX128)
        sla_matrix_is_hermitian(A, 0, 0, &yes);
    return yes ? m->coo->symmetry : SLA_MM_GENERAL;
}

int cmd_convert(int argc, char **argv)
{
    cli_begin(argc, argv);
    const char *in = NULL, *out = NULL;
    sla_dtype st_dtype = SLA_FLOAT64;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(help, stdout); return EXIT_OK; }
        if (!strcmp(argv[i], "--float32")) st_dtype = SLA_FLOAT32;
        else if (argv[i][0] == '-') return cli_usage_error("convert", "unknown option '%s'", argv[i]);
        else if (!in) in = argv[i];
        else if (!out) out = argv[i];
        else return cli_usage_error("convert", "too many files ('%s')", argv[i]);
    }
    if (!in || !out) return cli_usage_error("convert", "need IN and OUT files");
    int rc = cli_check_output("convert", "OUT", out, &in, 1);
    if (rc) return rc;
    cli_matrix m;
    rc = cli_load("convert", in, CLI_COMPLEX_OK, &m);
    if (rc) return rc;
    sla_matrix A = sla_matrix_view(m.pattern, m.dtype, 1, m.values);
    sla_mm_field field = m.coo->field;
    sla_status st;
    if (st_dtype == SLA_FLOAT32 && !ends_with(out, ".safetensors"))
        cli_warn("convert", "--float32 applies to .safetensors output only; '%s' keeps float64", out);
    if (ends_with(out, ".safetensors")) {
        int cplx = m.dtype == SLA_COMPLEX128;     /* the COO holds (re, im) pairs */
        st = sla_safetensors_write(out, m.coo, !cplx ? st_dtype : st_dtype == SLA_FLOAT32
                                                   ? SLA_COMPLEX64 : SLA_COMPLEX128);
    } else if (ends_with(out, ".mtx") || ends_with(out, ".mtx.gz")) {
        st = sla_mm_write(out, &A, 0, field, mm_symmetry(&m, &A), "converted by sla convert");
    } else if (ends_with(out, ".rb") || ends_with(out, ".rua") || ends_with(out, ".rsa") ||
               ends_with(out, ".psa") || ends_with(out, ".pua") || ends_with(out, ".cua") ||
               ends_with(out, ".csa") || ends_with(out, ".cha")) {
        st = sla_rb_write(out, &A, 0, field, in);
    } else {
        cli_matrix_free(&m);
        return cli_usage_error("convert", "unknown output format for '%s' (use .mtx, .mtx.gz, "
                               ".rb/.rua/.rsa, .safetensors)", out);
    }
    if (st) rc = cli_fail_write("convert", st, out);
    cli_matrix_free(&m);
    return rc;
}
