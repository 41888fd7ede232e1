/* Matrix Market reading and writing: the shared matrices and header edge cases, every error
 * class on small in-memory texts, number scanning, gzip, writer round trips, allocation
 * failures. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define BANNER "%%MatrixMarket matrix coordinate real general\n"

/* ---- helpers ---- */

static sla_status read_text(const char *text, sla_coo **out)
{
    return sla_mm_read_buffer(text, strlen(text), "t.mtx", out);
}

/* The text fails with `status`, a message naming t.mtx and the line, and containing phrase. */
static void expect_error_at(const char *text, sla_status status, int line, const char *phrase)
{
    sla_coo *a = (sla_coo *)0x1;
    sla_status st = read_text(text, &a);
    char where[32];
    snprintf(where, sizeof where, "t.mtx:%d: ", line);
    if (st != status || a != NULL || !strstr(sla_last_error(), where) ||
        !strstr(sla_last_error(), phrase))
        fail_msg("text:\n%s\n-> status %d, message '%s'; expected status %d with '%s' and '%s'",
                 text, (int)st, sla_last_error(), (int)status, where, phrase);
}

static void expect_parse_error(const char *text, int line, const char *phrase)
{
    expect_error_at(text, SLA_EPARSE, line, phrase);
}

static sla_coo *read_ok(const char *text)
{
    sla_coo *a = NULL;
    TU_OK(read_text(text, &a));
    assert_non_null(a);
    return a;
}

static void assert_entry(const sla_coo *a, int64_t k, int64_t i, int64_t j, double re, double im)
{
    int nv = a->field == SLA_MM_COMPLEX ? 2 : 1;
    if (a->row[k] != i || a->col[k] != j || a->values[k * nv] != re ||
        (nv == 2 && a->values[k * nv + 1] != im))
        fail_msg("entry %lld = (%lld, %lld, %.17g, %.17g), expected (%lld, %lld, %.17g, %.17g)",
                 (long long)k, (long long)a->row[k], (long long)a->col[k], a->values[k * nv],
                 nv == 2 ? a->values[k * nv + 1] : 0.0, (long long)i, (long long)j, re, im);
}

/* Checks the counts (-1: not checked) and the listed entries {k, i, j, re, im}, 0-based. */
typedef struct entry { double k, i, j, re, im; } entry;

static void assert_coo(const sla_coo *a, int64_t stored, int64_t nnz, const entry *e, size_t n)
{
    if (stored >= 0) assert_int_equal(a->nnz_stored, stored);
    if (nnz >= 0) assert_int_equal(a->nnz, nnz);
    for (size_t t = 0; t < n; t++)
        assert_entry(a, (int64_t)e[t].k, (int64_t)e[t].i, (int64_t)e[t].j, e[t].re, e[t].im);
}

#define ASSERT_COO(a, stored, nnz, ...) do { const entry e_[] = {__VA_ARGS__}; \
    assert_coo((a), (stored), (nnz), e_, sizeof e_ / sizeof *e_); } while (0)

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int next = 0;
    char *b = buf[next++ % 4];
    const char *dir = getenv("TMPDIR");
    snprintf(b, 512, "%s/sla_test_mmio_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(), name);
    return b;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t k; (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[n] = '\0';                                      /* for strstr */
    *len = n;
    return buf;
}

/* gzip member holding `len` ≤ 65535 bytes in one stored (uncompressed) deflate block, built by
 * hand so that the tests can make any gzip layout without linking zlib. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t k = 0; k < n; k++) {
        c ^= p[k];
        for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return ~c;
}

static size_t gzip_stored(const char *text, size_t len, unsigned char *out)
{
    static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
    size_t n = 0;
    memcpy(out, head, 10);
    n = 10;
    out[n++] = 1;                                       /* final block, stored */
    out[n++] = len & 0xff; out[n++] = (len >> 8) & 0xff;
    out[n++] = ~len & 0xff; out[n++] = (~len >> 8) & 0xff;
    memcpy(out + n, text, len);
    n += len;
    uint32_t crc = crc32_of((const unsigned char *)text, len);
    for (int b = 0; b < 4; b++) out[n++] = (crc >> (8 * b)) & 0xff;
    for (int b = 0; b < 4; b++) out[n++] = (len >> (8 * b)) & 0xff;
    return n;
}

/* ---- the shared matrices ---- */

typedef struct known {
    const char *name;
    int64_t nrows, ncols, stored, expanded;
    sla_mm_field field;
    sla_mm_symmetry symmetry;
} known;

static const known KNOWN[] = {
    {"1138_bus.mtx", 1138, 1138, 2596, 4054, SLA_MM_REAL, SLA_MM_SYMMETRIC},
    {"494_bus.mtx", 494, 494, 1080, 1666, SLA_MM_REAL, SLA_MM_SYMMETRIC},
    {"nos6.mtx", 675, 675, 1965, 3255, SLA_MM_REAL, SLA_MM_SYMMETRIC},
    {"bcsstk13.mtx", 2003, 2003, 42943, 83883, SLA_MM_REAL, SLA_MM_SYMMETRIC},
    {"Laplace3D10.mtx", 1000, 1000, 6400, 6400, SLA_MM_REAL, SLA_MM_GENERAL},
    {"hangGlider_2.mtx", 1647, 1647, 7834, 14754, SLA_MM_REAL, SLA_MM_SYMMETRIC},
    {"west0479.mtx", 479, 479, 1910, 1910, SLA_MM_REAL, SLA_MM_GENERAL},
    {"pores_1.mtx", 30, 30, 180, 180, SLA_MM_REAL, SLA_MM_GENERAL},
    {"rajat19.mtx", 1157, 1157, 5399, 5399, SLA_MM_REAL, SLA_MM_GENERAL},
    {"illc1850.mtx", 1850, 712, 8758, 8758, SLA_MM_REAL, SLA_MM_GENERAL},
    {"arrow46500.mtx", 46500, 46500, 139498, 139498, SLA_MM_INTEGER, SLA_MM_GENERAL},
    {"bcspwr10.mtx", 5300, 5300, 13571, 21842, SLA_MM_PATTERN, SLA_MM_SYMMETRIC},
    {"young1c.mtx", 841, 841, 4089, 4089, SLA_MM_COMPLEX, SLA_MM_GENERAL},
};

static void shared_matrices(void **state)
{
    if (!tu_have_matrices()) skip();
    for (size_t t = 0; t < sizeof KNOWN / sizeof *KNOWN; t++) {
        const known *k = &KNOWN[t];
        sla_coo *a = NULL;
        TU_OK(sla_mm_read(tu_matrix_path(k->name), &a));
        if (a->nrows != k->nrows || a->ncols != k->ncols || a->nnz_stored != k->stored ||
            a->nnz != k->expanded || a->field != k->field || a->symmetry != k->symmetry ||
            a->is_array)
            fail_msg("%s: %lld × %lld, %lld stored, %lld expanded, field %d, symmetry %d",
                     k->name, (long long)a->nrows, (long long)a->ncols, (long long)a->nnz_stored,
                     (long long)a->nnz, a->field, a->symmetry);
        sla_coo_free(&a);
        assert_null(a);
        /* the pattern route: everything but complex; these files hold no duplicates */
        sla_pattern *p = (sla_pattern *)0x1;
        void *v = (void *)0x1;
        sla_mm_field field;
        sla_mm_symmetry sym;
        sla_status st = sla_mm_read_matrix(tu_matrix_path(k->name), SLA_FLOAT64, &p, &v, &field,
                                           &sym);
        if (k->field == SLA_MM_COMPLEX) {
            assert_int_equal(st, SLA_EDTYPE);
            assert_null(p);
            assert_null(v);
            assert_non_null(strstr(sla_last_error(), "complex"));
            assert_non_null(strstr(sla_last_error(), k->name));
            continue;
        }
        TU_OK(st);
        assert_int_equal(field, k->field);
        assert_int_equal(sym, k->symmetry);
        assert_int_equal(sla_pattern_nnz(p), k->expanded);
        assert_int_equal(sla_pattern_nnz_input(p), k->expanded);
        assert_int_equal(sla_pattern_nrows(p), k->nrows);
        assert_int_equal(sla_pattern_ncols(p), k->ncols);
        free(v);
        sla_pattern_free(&p);
    }
}

static void shared_matrix_facts(void **state)
{
    if (!tu_have_matrices()) skip();
    sla_pattern *p = NULL;
    double *v = NULL, nrm;
    /* bcsstk13: max |a_ij| is the stored "1613 1613 1.19178564127e12" */
    tu_load("bcsstk13.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    TU_OK(sla_matrix_norm(&A, 'M', &nrm));
    assert_true(nrm == 1.19178564127e12);
    assert_true(v[sla_pattern_find(p, 1612, 1612)] == 1.19178564127e12);
    int sym = 0;
    TU_OK(sla_matrix_is_symmetric(&A, 0, 0, &sym));
    assert_true(sym);
    free(v);
    sla_pattern_free(&p);
    /* Laplace3D10: general storage, numerically symmetric, 6 on the diagonal */
    tu_load("Laplace3D10.mtx", &p, &v);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    TU_OK(sla_matrix_is_symmetric(&A, 0, 0, &sym));
    assert_true(sym);
    sla_diag_info di;
    TU_OK(sla_matrix_diag_info(&A, &di));
    assert_int_equal(di.present, 1000);
    assert_int_equal(di.positive, 1000);
    free(v);
    sla_pattern_free(&p);
    /* west0479: 8 stored diagonal entries */
    tu_load("west0479.mtx", &p, &v);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    TU_OK(sla_matrix_diag_info(&A, &di));
    assert_int_equal(di.present, 8);
    assert_int_equal(di.missing, 471);
    TU_OK(sla_matrix_is_symmetric(&A, 1e-8, 0, &sym));
    assert_false(sym);
    free(v);
    sla_pattern_free(&p);
    /* pores_1 in float32: max |a_ij| = 2.4613410870000e+07 rounded to float */
    float *f = NULL;
    TU_OK(sla_mm_read_matrix(tu_matrix_path("pores_1.mtx"), SLA_FLOAT32, &p, (void **)&f, NULL,
                             NULL));
    A = sla_matrix_view(p, SLA_FLOAT32, 1, f);
    TU_OK(sla_matrix_norm(&A, 'M', &nrm));
    assert_true(nrm == (double)(float)2.4613410870000e+07);
    free(f);
    sla_pattern_free(&p);
    /* arrow46500: integer field, dense first row and column */
    tu_load("arrow46500.mtx", &p, &v);
    sla_pattern_stats st;
    TU_OK(sla_pattern_get_stats(p, &st));
    assert_int_equal(st.max_row_nnz, 46500);
    assert_true(v[0] == 2);
    free(v);
    sla_pattern_free(&p);
    /* young1c: complex values kept as (re, im) pairs; first entry "1 1 -218.46 0" */
    sla_coo *a = NULL;
    TU_OK(sla_mm_read(tu_matrix_path("young1c.mtx"), &a));
    assert_entry(a, 0, 0, 0, -218.46, 0);
    sla_coo_free(&a);
}

/* ---- header edge cases from the shared folder ---- */

static sla_coo *read_header_file(const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "headers/%s", name);
    sla_coo *a = NULL;
    TU_OK(sla_mm_read(tu_matrix_path(path), &a));
    return a;
}

static void header_files_valid(void **state)
{
    if (!tu_have_matrices()) skip();
    /* Hermitian lower triangle: mirrors conjugated, 5 stored -> 7 */
    sla_coo *a = read_header_file("c_hermitian.mtx");
    assert_int_equal(a->field, SLA_MM_COMPLEX);
    assert_int_equal(a->symmetry, SLA_MM_HERMITIAN);
    ASSERT_COO(a, 5, 7, {0, 0, 0, 1, 0}, {1, 2, 0, 2, -1}, {2, 0, 2, 2, 1}, {3, 1, 1, 1, 0},
               {4, 2, 1, 3, 0}, {5, 1, 2, 3, 0}, {6, 2, 2, 42, 0});
    sla_coo_free(&a);
    /* skew-symmetric with inf: mirrors negated */
    a = read_header_file("skew_fp64.mtx");
    assert_int_equal(a->symmetry, SLA_MM_SKEW_SYMMETRIC);
    ASSERT_COO(a, 10, 20, {0, 3, 0, -.12565458736262625, 0}, {1, 0, 3, .12565458736262625, 0},
               {2, 4, 0, INFINITY, 0}, {3, 0, 4, -INFINITY, 0}, {19, 4, 5, .18161721472946568, 0});
    sla_coo_free(&a);
    /* pattern symmetric, no diagonal */
    a = read_header_file("fmm_pattern_sym_row.mtx");
    assert_int_equal(a->field, SLA_MM_PATTERN);
    ASSERT_COO(a, -1, 4, {0, 2, 0, 1, 0}, {1, 0, 2, 1, 0}, {2, 2, 1, 1, 0}, {3, 1, 2, 1, 0});
    sla_coo_free(&a);
    /* array symmetric: lower triangle column-major, blank and comment lines between values */
    a = read_header_file("fullrsa_array_sym.mtx");
    assert_true(a->is_array);
    ASSERT_COO(a, 3, 4, {0, 0, 0, 1.3, 0}, {1, 1, 0, 3.4, 0}, {2, 0, 1, 3.4, 0}, {3, 1, 1, 7.7, 0});
    sla_coo_free(&a);
    /* empty 3×4 with a second %% line; empty 0×4 */
    a = read_header_file("empty_3x4.mtx");
    assert_int_equal(a->nrows, 3);
    assert_int_equal(a->ncols, 4);
    assert_int_equal(a->nnz, 0);
    sla_coo_free(&a);
    a = read_header_file("a04_0x4.mtx");
    assert_int_equal(a->nrows, 0);
    assert_int_equal(a->ncols, 4);
    assert_int_equal(a->nnz, 0);
    sla_coo_free(&a);
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_load("headers/a04_0x4.mtx", &p, &v);
    assert_int_equal(sla_pattern_nrows(p), 0);
    assert_int_equal(sla_pattern_ncols(p), 4);
    free(v);
    sla_pattern_free(&p);
    /* LFAT5: SPD 14×14 after ruled comment lines */
    tu_load("headers/LFAT5.mtx", &p, &v);
    assert_int_equal(sla_pattern_nrows(p), 14);
    assert_int_equal(sla_pattern_nnz(p), 46);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_diag_info di;
    TU_OK(sla_matrix_diag_info(&A, &di));
    assert_int_equal(di.positive, 14);
    assert_true(v[sla_pattern_find(p, 3, 0)] == -94.2528 && v[sla_pattern_find(p, 0, 3)] == -94.2528);
    free(v);
    sla_pattern_free(&p);
    /* jumbled order: file order kept in the COO */
    a = read_header_file("west0067_jumbled.mtx");
    assert_int_equal(a->nrows, 67);
    ASSERT_COO(a, -1, 294, {0, 46, 44, -.8242248, 0}, {1, 11, 21, -1, 0});
    sla_coo_free(&a);
    /* mixed-case banner, extra spaces, blank lines everywhere */
    a = read_header_file("fmm_nist_ex1_freeformat.mtx");
    assert_int_equal(a->nrows, 5);
    assert_int_equal(a->nnz, 8);
    const double want[8][3] = {{0, 0, 1},  {1, 1, 10.5},  {2, 2, 1.5e-2}, {3, 3, -2.8E2},
                               {4, 4, 12}, {0, 3, 6}, {3, 1, 250.5}, {3, 4, 33.32}};
    for (int k = 0; k < 8; k++) assert_entry(a, k, (int64_t)want[k][0], (int64_t)want[k][1], want[k][2], 0);
    sla_coo_free(&a);
}

static void header_files_invalid(void **state)
{
    if (!tu_have_matrices()) skip();
    static const struct { const char *name; int line; const char *phrase; } bad[] = {
        {"fmm_invalid_index_oob.mtx", 5, "row index 5000 out of range [1, 7]"},
        {"fmm_invalid_truncated.mtx", 1, "illegal field word 'double'"},
        {"bad_zero_based_index.mtx", 3, "index 0"},
        {"bad_mangled9_sym_rect.mtx", 4, "must be square"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        char path[600], where[700];
        snprintf(path, sizeof path, "headers/%s", bad[t].name);
        snprintf(where, sizeof where, "%s:%d: ", tu_matrix_path(path), bad[t].line);
        sla_coo *a = (sla_coo *)0x1;
        assert_int_equal(sla_mm_read(tu_matrix_path(path), &a), SLA_EPARSE);
        assert_null(a);
        if (!strstr(sla_last_error(), where) || !strstr(sla_last_error(), bad[t].phrase))
            fail_msg("%s: message '%s'", bad[t].name, sla_last_error());
        sla_pattern *p = (sla_pattern *)0x1;
        void *v = (void *)0x1;
        assert_int_equal(sla_mm_read_matrix(tu_matrix_path(path), SLA_FLOAT64, &p, &v, NULL, NULL),
                         SLA_EPARSE);
        assert_null(p);
        assert_null(v);
        assert_non_null(strstr(sla_last_error(), "sla_mm_read_matrix"));
    }
    /* the truncated file with a legal field word fails where the entries end */
    size_t len;
    char *text = read_bytes(tu_matrix_path("headers/fmm_invalid_truncated.mtx"), &len);
    char *nl = memchr(text, '\n', len);
    char fixed[256];
    snprintf(fixed, sizeof fixed, "%s%.*s", BANNER, (int)(len - (size_t)(nl + 1 - text)), nl + 1);
    expect_parse_error(fixed, 4, "end of file after 2 of the 12 entries");
    free(text);
}

/* ---- every error class, in memory ---- */

static void errors_banner_and_size(void **state)
{
    expect_parse_error("", 1, "not a Matrix Market file");
    expect_parse_error("\n" BANNER "1 1 0\n", 1, "not a Matrix Market file");
    expect_parse_error("%%MatrixMarkt matrix coordinate real general\n1 1 0\n", 1,
                       "must start with '%%MatrixMarket'");
    expect_parse_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "4 of 5 words");
    expect_parse_error("%%MatrixMarket vector coordinate real general\n", 1, "object 'vector'");
    expect_parse_error("%%MatrixMarket matrix coord real general\n", 1, "format word 'coord'");
    expect_parse_error("%%MatrixMarket matrix coordinate double general\n", 1,
                       "illegal field word 'double'");
    expect_parse_error("%%MatrixMarket matrix coordinate real symmetrical\n", 1,
                       "symmetry word 'symmetrical'");
    expect_parse_error("%%MatrixMarket matrix coordinate real general extra\n", 1,
                       "unexpected 'extra'");
    expect_parse_error("%%MatrixMarket matrix array pattern general\n", 1, "pattern");
    expect_parse_error("%%MatrixMarket matrix coordinate pattern skew-symmetric\n", 1,
                       "cannot be skew-symmetric");
    expect_parse_error(BANNER, 2, "missing size line");
    expect_parse_error(BANNER "% only a comment\n\n", 4, "missing size line");
    expect_parse_error(BANNER "2 2\n1 1 1\n", 2, "the size line has 2 numbers, expected 3");
    expect_parse_error("%%MatrixMarket matrix array real general\n2\n", 2, "has 1 numbers, expected 2");
    expect_parse_error(BANNER "2 -2 0\n", 2, "number of columns -2 is negative");
    expect_parse_error(BANNER "99999999999999999999 2 0\n", 2, "'99999999999999999999' overflows int64");
    expect_parse_error(BANNER "2 2.5 0\n", 2, "number of columns '2.5' is not an integer");
    expect_parse_error(BANNER "2 2 1 7\n1 1 1\n", 2, "unexpected '7' after the size line");
    expect_parse_error(BANNER "2 2 1x\n", 2, "number of entries '1x' is not an integer");
    expect_parse_error("%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", 2,
                       "symmetric matrix must be square");
    expect_parse_error("%%MatrixMarket matrix coordinate complex hermitian\n3 4 0\n", 2,
                       "hermitian matrix must be square");
    expect_parse_error("%%MatrixMarket matrix array real skew-symmetric\n4 3\n", 2, "must be square");
    expect_parse_error("%%MatrixMarket matrix array real general\n4294967296 4294967296\n", 2,
                       "overflows int64");
}

static void errors_entries(void **state)
{
    expect_parse_error(BANNER "2 2 2\n1 0 1\n", 3, "column index 0 (Matrix Market indices start at 1)");
    expect_parse_error(BANNER "2 2 2\n1 1 1\n3 1 1\n", 4, "row index 3 out of range [1, 2]");
    expect_parse_error(BANNER "2 3 1\n1 4 1\n", 3, "column index 4 out of range [1, 3]");
    expect_parse_error(BANNER "2 2 1\n-1 1 1\n", 3, "row index -1 out of range");
    expect_parse_error(BANNER "2 2 1\n1 99999999999999999999 1\n", 3, "column index '99999999999999999999' overflows int64");
    expect_parse_error(BANNER "2 2 1\n1.0 1 1\n", 3, "row index '1.0' is not an integer");
    expect_parse_error(BANNER "2 2 1\n1\n", 3, "missing column index");
    expect_parse_error(BANNER "2 2 1\n1 1\n", 3, "missing value");
    expect_parse_error(BANNER "2 2 1\n1\n1 1\n", 3, "missing column index");
    expect_parse_error(BANNER "2 2 3\n1 1 1\n2 2 1\n", 5, "end of file after 2 of the 3 entries");
    expect_parse_error(BANNER "2 2 3\n1 1 1\n2 2 1", 4, "end of file after 2 of the 3 entries");
    expect_parse_error(BANNER "2 2 1\n1 1 1\n\n% c\n2 2 1\n", 6, "more entries than the 1 declared");
    expect_parse_error(BANNER "2 2 0\n1 1 1\n", 3, "more entries than the 0 declared");
    expect_parse_error(BANNER "2 2 1\n1 1 1e999\n", 3, "value '1e999' overflows double");
    expect_parse_error(BANNER "2 2 1\n1 1 -1e400\n", 3, "overflows double");
    expect_parse_error(BANNER "2 2 1\n1 1 1.5x\n", 3, "value '1.5x' is not a number");
    expect_parse_error(BANNER "2 2 1\n1 1 0x10\n", 3, "is not a number");
    expect_parse_error(BANNER "2 2 1\n1 1 1.0D+00\n", 3, "is not a number");
    expect_parse_error(BANNER "2 2 1\n1 1 infinite\n", 3, "is not a number");
    expect_parse_error(BANNER "2 2 1\n1 1 e5\n", 3, "is not a number");
    expect_parse_error(BANNER "2 2 1\n1 1 1e\n", 3, "is not a number");
    expect_parse_error(BANNER "2 2 1\n1 1 1 x\n", 3, "unexpected 'x' after the entry");
    expect_parse_error(BANNER "2 2 1\n1 1 1 % note\n", 3, "unexpected '%'");
    expect_parse_error(BANNER "2 2 1\n1 1 1 2\n", 3, "unexpected '2' after the entry");
    static const char nul[] = BANNER "2 2 1\n1 1 1\0\n";
    sla_coo *a = (sla_coo *)0x1;
    assert_int_equal(sla_mm_read_buffer(nul, sizeof nul - 1, NULL, &a), SLA_EPARSE);
    assert_null(a);
    assert_non_null(strstr(sla_last_error(), "(buffer):3: value '1?' is not a number"));
    /* integer field */
    expect_parse_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
                       "value '1.5' is not an integer");
    expect_parse_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 9223372036854775808\n",
                       3, "value '9223372036854775808' overflows int64");
    /* pattern lines carry no value; complex ones carry two */
    expect_parse_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n", 3,
                       "unexpected '5'");
    expect_parse_error("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 5\n", 3,
                       "missing imaginary part");
    /* diagonals of skew-symmetric and Hermitian matrices */
    expect_parse_error("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n",
                       4, "diagonal entry (2, 2) of a skew-symmetric matrix must be 0");
    expect_parse_error("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 nan\n", 3,
                       "must be 0");
    expect_parse_error("%%MatrixMarket matrix coordinate complex hermitian\n3 3 1\n3 3 1 0.5\n", 3,
                       "imaginary part 0.5");
    /* array format */
    expect_parse_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 6,
                       "end of file after 3 of the 4 values");
    expect_parse_error("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n", 6,
                       "more values than the 3");
    expect_parse_error("%%MatrixMarket matrix array real general\n1 2\n1 2\n", 3, "unexpected '2'");
    /* a number longer than any double needs */
    char longnum[700];
    snprintf(longnum, sizeof longnum, "%s1 1 1\n1 1 1.%0600d\n", BANNER, 0);
    expect_parse_error(longnum, 3, "longer than 500 characters");
}

static void bad_arguments_and_io(void **state)
{
    sla_coo *a = (sla_coo *)0x1;
    assert_int_equal(sla_mm_read(NULL, &a), SLA_EINVAL);
    assert_null(a);
    assert_int_equal(sla_mm_read("x", NULL), SLA_EINVAL);
    assert_int_equal(sla_mm_read_buffer(NULL, 3, "x", &a), SLA_EINVAL);
    /* an empty buffer, even NULL, is a text without a banner */
    assert_int_equal(sla_mm_read_buffer(NULL, 0, "x", &a), SLA_EPARSE);
    const char *missing = tmp_path("does_not_exist.mtx");
    assert_int_equal(sla_mm_read(missing, &a), SLA_EIO);
    assert_null(a);
    assert_non_null(strstr(sla_last_error(), missing));
    assert_non_null(strstr(sla_last_error(), "No such file"));
    assert_int_equal(sla_mm_read("/", &a), SLA_EIO);
    assert_non_null(strstr(sla_last_error(), "'/'"));
    sla_pattern *p = (sla_pattern *)0x1;
    void *v = (void *)0x1;
    assert_int_equal(sla_mm_read_matrix(missing, SLA_FLOAT64, &p, &v, NULL, NULL), SLA_EIO);
    assert_null(p);
    assert_null(v);
    assert_int_equal(sla_mm_read_matrix(missing, (sla_dtype)7, &p, &v, NULL, NULL), SLA_EDTYPE);
    assert_int_equal(sla_mm_read_matrix(missing, SLA_FLOAT64, NULL, &v, NULL, NULL), SLA_EINVAL);
    sla_coo_free(NULL);
    sla_coo *none = NULL;
    sla_coo_free(&none);
}

/* ---- accepted variations ---- */

static void lenient_layout(void **state)
{
    /* CRLF, tabs, trailing blanks, blank and comment lines between entries, no final newline */
    sla_coo *a = read_ok("%%MatrixMarket matrix coordinate real general  \r\n% c\r\n\r\n"
                         " 3 \t3  3 \r\n\r\n1 1 1.5\r\n \t\r\n  % indented comment\r\n"
                         "2\t2\t-2.5 \r\n3 1 +3e0");
    ASSERT_COO(a, -1, 3, {0, 0, 0, 1.5, 0}, {1, 1, 1, -2.5, 0}, {2, 2, 0, 3, 0});
    sla_coo_free(&a);
    /* keywords in any case, a UTF-8 byte order mark */
    a = read_ok("\xEF\xBB\xBF%%matrixmarket MATRIX Coordinate PATTERN Symmetric\n2 2 1\n2 1\n");
    assert_int_equal(a->field, SLA_MM_PATTERN);
    ASSERT_COO(a, -1, 2, {1, 0, 1, 1, 0});
    sla_coo_free(&a);
    /* entries in the upper triangle of a symmetric file are mirrored too; zero diagonal of a
     * skew-symmetric file is accepted */
    a = read_ok("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n1 2 4\n1 1 0\n");
    ASSERT_COO(a, -1, 3, {0, 0, 1, 4, 0}, {1, 1, 0, -4, 0}, {2, 0, 0, 0, 0});
    sla_coo_free(&a);
    /* duplicates stay in the COO and are summed by the pattern */
    a = read_ok(BANNER "2 2 3\n1 1 1\n1 1 2\n2 2 4\n");
    assert_int_equal(a->nnz, 3);
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(a->nrows, a->ncols, a->nnz, a->row, a->col, &p));
    double csr[2];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, a->values, csr));
    assert_true(csr[0] == 3 && csr[1] == 4);
    sla_pattern_free(&p);
    sla_coo_free(&a);
    /* integer values, real field accepting integers, Hermitian real field = symmetric */
    a = read_ok("%%MatrixMarket matrix coordinate integer general\n1 2 2\n1 1 -9007199254740992\n"
                "1 2 +17\n");
    ASSERT_COO(a, -1, -1, {0, 0, 0, -9007199254740992.0, 0}, {1, 0, 1, 17, 0});
    sla_coo_free(&a);
    a = read_ok("%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 3\n");
    assert_entry(a, 1, 0, 1, 3, 0);
    sla_coo_free(&a);
}

static void array_formats(void **state)
{
    /* general 2×3, column-major */
    sla_coo *a = read_ok("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
    assert_true(a->is_array);
    assert_int_equal(a->nnz, 6);
    ASSERT_COO(a, 6, -1, {1, 1, 0, 2, 0}, {2, 0, 1, 3, 0}, {5, 1, 2, 6, 0});
    sla_coo_free(&a);
    /* skew-symmetric 3×3: strict lower triangle, 3 values */
    a = read_ok("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
    ASSERT_COO(a, 3, 6, {0, 1, 0, 1, 0}, {1, 0, 1, -1, 0}, {2, 2, 0, 2, 0}, {4, 2, 1, 3, 0},
               {5, 1, 2, -3, 0});
    sla_coo_free(&a);
    /* complex Hermitian 2×2 */
    a = read_ok("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n");
    ASSERT_COO(a, -1, 4, {1, 1, 0, 2, 3}, {2, 0, 1, 2, -3}, {3, 1, 1, 4, 0});
    sla_coo_free(&a);
    /* integer symmetric, and empty arrays */
    a = read_ok("%%MatrixMarket matrix array integer symmetric\n2 2\n1\n-2\n3\n");
    assert_int_equal(a->field, SLA_MM_INTEGER);
    assert_entry(a, 2, 0, 1, -2, 0);
    sla_coo_free(&a);
    a = read_ok("%%MatrixMarket matrix array real general\n0 5\n");
    assert_int_equal(a->nnz, 0);
    sla_coo_free(&a);
    a = read_ok("%%MatrixMarket matrix array real skew-symmetric\n1 1\n");
    assert_int_equal(a->nnz, 0);
    sla_coo_free(&a);
}

static double parse_one(const char *num)
{
    char text[700];
    snprintf(text, sizeof text, "%s1 1 1\n1 1 %s\n", BANNER, num);
    sla_coo *a = read_ok(text);
    double x = a->values[0];
    sla_coo_free(&a);
    return x;
}

#define ZEROS10 "0000000000"
#define ZEROS89 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 "000000000"
#define ZEROS100 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10 ZEROS10

static void number_scanning(void **state)
{
    static const char *const nums[] = {
        "0", "-0", "1", "-1.5", ".5", "5.", "+.25e+2", "1E-3", "0.1", "0.3", "3.141592653589793",
        "1.7976931348623157e308", "2.2250738585072014e-308", "4.9e-324", "2e-324", "1e-400",
        "9007199254740993", "9007199254740995", "123456789012345678901234567890", "1e22", "1e23",
        "0.000000000000000000000000000001", "00000123.4500000", "1.19178564127e12",
        "-.12565458736262625", "7.2610443166483190e-01", "1e-5000000000", "0e999999",
        "0.0000000000000000000000000000000000000000000000000000000000001e61",
        "1797693134862315708145274237317043567980705675258449965989174768031572607800285387605895"
        "58632766878171540458953514382464234321326889464182768467546703537516986049910576551282076"
        "24549009038932894407586850845513394230458323690322294816580855933212334827479782620414472"
        "3168738177180919299881250404026184124858368.4",           /* DBL_MAX + 0.4 */
        "17976931348623158079" ZEROS100 ZEROS100 ZEROS89,           /* rounds to DBL_MAX */
    };
    for (size_t k = 0; k < sizeof nums / sizeof *nums; k++) {
        double want = strtod(nums[k], NULL), got = parse_one(nums[k]);
        if (memcmp(&want, &got, sizeof want) != 0)
            fail_msg("'%s' read as %.17g, strtod gives %.17g", nums[k], got, want);
    }
    expect_parse_error(BANNER "1 1 1\n1 1 17976931348623158080" ZEROS100 ZEROS100 ZEROS89 "\n", 3,
                       "overflows double");                  /* halfway above DBL_MAX */
    assert_true(isinf(parse_one("inf")) && parse_one("-Infinity") < 0);
    assert_true(isinf(parse_one("+INF")));
    assert_true(isnan(parse_one("nan")) && isnan(parse_one("-NaN")));
    /* random bit patterns: %.17g text reads back to the same bits */
    enum { N = 3000 };
    size_t cap = 64 * N + 128, n = 0;
    char *text = malloc(cap);
    double *want = malloc(N * sizeof *want);
    n += (size_t)snprintf(text, cap, "%s1 %d %d\n", BANNER, N, N);
    uint64_t s = 12345;
    for (int k = 0; k < N; k++) {
        uint64_t bits;
        do {
            s += 0x9E3779B97F4A7C15ull;
            uint64_t z = (s ^ (s >> 31)) * 0xBF58476D1CE4E5B9ull;
            bits = z ^ (z >> 29);
            memcpy(&want[k], &bits, sizeof bits);
        } while (!isfinite(want[k]));
        if (k % 3 == 1) want[k] = ldexp(want[k], -(int)(bits % 40)) / 1e3;  /* short ones too */
        if (k % 3 == 2) want[k] = (double)(int64_t)(bits % 100000) / 1000.0;
        n += (size_t)snprintf(text + n, cap - n, "1 %d %.17g\n", k + 1, want[k]);
    }
    sla_coo *a = read_ok(text);
    for (int k = 0; k < N; k++)
        if (memcmp(&a->values[k], &want[k], sizeof(double)) != 0)
            fail_msg("value %d: %.17g read back as %.17g", k, want[k], a->values[k]);
    sla_coo_free(&a);
    free(text);
    free(want);
}

/* A header declaring an absurd count must not preallocate it: the text bounds the capacity
 * (ASan would fail a 10^18-entry allocation loudly; here the read just says EOF). */
static void absurd_declared_count(void **state)
{
    expect_parse_error(BANNER "2 2 1000000000000000000\n1 1 1\n", 4,
                       "end of file after 1 of the 1000000000000000000 entries");
    expect_parse_error("%%MatrixMarket matrix array real general\n3037000499 3037000499\n1\n", 4,
                       "end of file after 1 of the");
}

/* ---- gzip ---- */

static void gzip_buffers(void **state)
{
    static const char text[] = BANNER "2 2 2\n1 1 1.25\n2 1 -3\n";
    unsigned char gz[2 * sizeof text + 64];
    size_t len = gzip_stored(text, sizeof text - 1, gz);
    sla_coo *a = NULL;
    TU_OK(sla_mm_read_buffer((const char *)gz, len, "g.mtx.gz", &a));
    ASSERT_COO(a, -1, 2, {1, 1, 0, -3, 0});
    sla_coo_free(&a);
    /* two members make one text */
    size_t half = 40;
    size_t n1 = gzip_stored(text, half, gz);
    size_t n2 = gzip_stored(text + half, sizeof text - 1 - half, gz + n1);
    TU_OK(sla_mm_read_buffer((const char *)gz, n1 + n2, "g.mtx.gz", &a));
    assert_int_equal(a->nnz, 2);
    sla_coo_free(&a);
    /* truncated, corrupt, trailing garbage: SLA_EIO naming the file */
    assert_int_equal(sla_mm_read_buffer((const char *)gz, n1 - 5, "g.mtx.gz", &a), SLA_EIO);
    assert_null(a);
    assert_non_null(strstr(sla_last_error(), "g.mtx.gz"));
    assert_non_null(strstr(sla_last_error(), "truncated"));
    len = gzip_stored(text, sizeof text - 1, gz);
    gz[len - 6] ^= 0x55;                                 /* CRC */
    assert_int_equal(sla_mm_read_buffer((const char *)gz, len, "g.mtx.gz", &a), SLA_EIO);
    gz[len - 6] ^= 0x55;
    gz[len++] = 'x';
    gz[len++] = 'y';
    assert_int_equal(sla_mm_read_buffer((const char *)gz, len, "g.mtx.gz", &a), SLA_EIO);
    assert_non_null(strstr(sla_last_error(), "trailing"));
    gz[2] = 9;                                           /* unknown compression method */
    assert_int_equal(sla_mm_read_buffer((const char *)gz, len, "g.mtx.gz", &a), SLA_EIO);
    assert_int_equal(sla_mm_read_buffer("\x1f\x8b", 2, "g.mtx.gz", &a), SLA_EIO);
    /* parse errors inside a compressed text still name the line */
    static const char bad[] = BANNER "2 2 2\n1 1 1.25\n3 1 -3\n";
    len = gzip_stored(bad, sizeof bad - 1, gz);
    assert_int_equal(sla_mm_read_buffer((const char *)gz, len, "g.mtx.gz", &a), SLA_EPARSE);
    assert_non_null(strstr(sla_last_error(), "g.mtx.gz:4: row index 3"));
}

/* ---- writer ---- */

/* A 5×4 float64 matrix with values over the whole double range, batch of 2. */
static void make_general(sla_pattern **p, double **v)
{
    int64_t r[] = {0, 0, 1, 2, 2, 3, 4, 4, 1};
    int64_t c[] = {0, 3, 1, 0, 2, 3, 1, 2, 2};
    TU_OK(sla_pattern_from_coo(5, 4, 9, r, c, p));
    double vals[18] = {1.0 / 3, -2.5e-310, 1e308, -0.0, 123456789.123456789, INFINITY, 5, 7e-5, 42,
                       2, 3, 4, 5, 6, 7, 8, 9, 10};
    *v = malloc(sizeof vals);
    memcpy(*v, vals, sizeof vals);
}

static void write_read_general(void **state)
{
    sla_pattern *p = NULL, *q = NULL;
    double *v = NULL, *w = NULL;
    make_general(&p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, v);
    const char *names[] = {"general.mtx", "general.mtx.gz"};
    for (int t = 0; t < 2; t++) {
        const char *path = tmp_path(names[t]);
        TU_OK(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_GENERAL, "written by test_mmio\nline 2"));
        sla_mm_field field;
        sla_mm_symmetry sym;
        TU_OK(sla_mm_read_matrix(path, SLA_FLOAT64, &q, (void **)&w, &field, &sym));
        assert_int_equal(field, SLA_MM_REAL);
        assert_int_equal(sym, SLA_MM_GENERAL);
        assert_int_equal(sla_pattern_nnz(q), 9);
        assert_memory_equal(sla_pattern_rowptr(q), sla_pattern_rowptr(p), 6 * sizeof(int64_t));
        assert_memory_equal(sla_pattern_colind(q), sla_pattern_colind(p), 9 * sizeof(int32_t));
        assert_memory_equal(w, v, 9 * sizeof(double));          /* bit-exact, -0 and inf too */
        free(w);
        sla_pattern_free(&q);
        size_t len;
        char *bytes = read_bytes(path, &len);
        if (t == 0) assert_non_null(strstr(bytes, "%written by test_mmio\n%line 2\n5 4 9\n"));
        else assert_true((unsigned char)bytes[0] == 0x1f && (unsigned char)bytes[1] == 0x8b);
        /* the same bytes through the buffer reader */
        sla_coo *a = NULL;
        TU_OK(sla_mm_read_buffer(bytes, len, path, &a));
        assert_int_equal(a->nnz, 9);
        sla_coo_free(&a);
        free(bytes);
        remove(path);
    }
    /* second batch element, integer field, pattern field */
    const char *path = tmp_path("batch1.mtx");
    TU_OK(sla_mm_write(path, &A, 1, SLA_MM_INTEGER, SLA_MM_GENERAL, NULL));
    sla_coo *a = NULL;
    TU_OK(sla_mm_read(path, &a));
    assert_int_equal(a->field, SLA_MM_INTEGER);
    for (int k = 0; k < 9; k++) assert_true(a->values[k] == v[9 + k]);
    sla_coo_free(&a);
    TU_OK(sla_mm_write(path, &A, 1, SLA_MM_PATTERN, SLA_MM_GENERAL, ""));
    TU_OK(sla_mm_read(path, &a));
    assert_int_equal(a->field, SLA_MM_PATTERN);
    assert_int_equal(a->nnz, 9);
    assert_true(a->values[3] == 1);
    sla_coo_free(&a);
    /* refused: non-integer values as integer, bad index, complex field, skew symmetry */
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_INTEGER, SLA_MM_GENERAL, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not an integer"));
    assert_int_equal(sla_mm_write(path, &A, 2, SLA_MM_REAL, SLA_MM_GENERAL, NULL), SLA_EINVAL);
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_COMPLEX, SLA_MM_GENERAL, NULL), SLA_EINVAL);
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_SKEW_SYMMETRIC, NULL), SLA_EINVAL);
    assert_int_equal(sla_mm_write(NULL, &A, 0, SLA_MM_REAL, SLA_MM_GENERAL, NULL), SLA_EINVAL);
    assert_int_equal(sla_mm_write(path, NULL, 0, SLA_MM_REAL, SLA_MM_GENERAL, NULL), SLA_EINVAL);
    remove(path);
    /* a folder that does not exist: SLA_EIO naming the file */
    const char *nowhere = "/nonexistent-sla-dir/x.mtx";
    assert_int_equal(sla_mm_write(nowhere, &A, 0, SLA_MM_REAL, SLA_MM_GENERAL, NULL), SLA_EIO);
    assert_non_null(strstr(sla_last_error(), nowhere));
    assert_int_equal(sla_mm_write("/nonexistent-sla-dir/x.mtx.gz", &A, 0, SLA_MM_REAL,
                                  SLA_MM_GENERAL, NULL), SLA_EIO);
    free(v);
    sla_pattern_free(&p);
}

static void write_read_symmetric(void **state)
{
    sla_pattern *p = NULL, *q = NULL;
    double *v = NULL, *w = NULL;
    tu_poisson2d(7, 5, &p, &v);                          /* 35 × 35, 5-point */
    int64_t nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < 35; i++)                     /* distinct symmetric values */
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t lo = ci[s] < i ? ci[s] : i, hi = ci[s] < i ? i : ci[s];
            v[s] = ci[s] == i ? 4 + i : -1.0 / (double)(lo * 35 + hi + 1);
        }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    const char *path = tmp_path("sym.mtx.gz");
    TU_OK(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_SYMMETRIC, NULL));
    sla_coo *a = NULL;
    TU_OK(sla_mm_read(path, &a));
    assert_int_equal(a->symmetry, SLA_MM_SYMMETRIC);
    assert_int_equal(a->nnz_stored, (nnz + 35) / 2);
    assert_int_equal(a->nnz, nnz);
    sla_coo_free(&a);
    TU_OK(sla_mm_read_matrix(path, SLA_FLOAT64, &q, (void **)&w, NULL, NULL));
    assert_memory_equal(sla_pattern_rowptr(q), rp, 36 * sizeof(int64_t));
    assert_memory_equal(sla_pattern_colind(q), ci, (size_t)nnz * sizeof(int32_t));
    assert_memory_equal(w, v, (size_t)nnz * sizeof(double));
    free(w);
    sla_pattern_free(&q);
    /* pattern symmetric */
    TU_OK(sla_mm_write(path, &A, 0, SLA_MM_PATTERN, SLA_MM_SYMMETRIC, NULL));
    TU_OK(sla_mm_read(path, &a));
    assert_int_equal(a->nnz, nnz);
    sla_coo_free(&a);
    /* one value off: refused, naming the pair, and no file is written */
    remove(path);
    int64_t s01 = sla_pattern_find(p, 0, 1);
    v[s01] += 1e-15;
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_SYMMETRIC, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not symmetric"));
    assert_non_null(strstr(sla_last_error(), "A[0][1]"));
    assert_int_equal(sla_mm_read(path, &a), SLA_EIO);
    /* ...but the pattern is still symmetric, and general storage is fine */
    TU_OK(sla_mm_write(path, &A, 0, SLA_MM_PATTERN, SLA_MM_SYMMETRIC, NULL));
    TU_OK(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_GENERAL, NULL));
    remove(path);
    free(v);
    sla_pattern_free(&p);
    /* a structurally unsymmetric or rectangular matrix cannot be written symmetric */
    make_general(&p, &v);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_PATTERN, SLA_MM_SYMMETRIC, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "square"));
    free(v);
    sla_pattern_free(&p);
    int64_t r[] = {0, 1}, c[] = {1, 1};
    TU_OK(sla_pattern_from_coo(2, 2, 2, r, c, &p));
    A = sla_matrix_view(p, SLA_FLOAT64, 1, (double[]){0, 1});
    TU_OK(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_SYMMETRIC, NULL));   /* a_01 = 0 = a_10 */
    assert_int_equal(sla_mm_write(path, &A, 0, SLA_MM_PATTERN, SLA_MM_SYMMETRIC, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "pattern of A is not symmetric"));
    remove(path);
    sla_pattern_free(&p);
}

static void write_read_float32(void **state)
{
    int64_t r[] = {0, 1, 2, 2}, c[] = {0, 1, 0, 2};
    float vals[] = {1.0f / 3, 16777217.0f, -1e-40f, 3.4028235e38f};
    sla_pattern *p = NULL, *q = NULL;
    TU_OK(sla_pattern_from_coo(3, 3, 4, r, c, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vals);
    const char *path = tmp_path("f32.mtx");
    TU_OK(sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_GENERAL, NULL));
    float *w = NULL;
    TU_OK(sla_mm_read_matrix(path, SLA_FLOAT32, &q, (void **)&w, NULL, NULL));
    assert_memory_equal(w, vals, sizeof vals);
    free(w);
    sla_pattern_free(&q);
    remove(path);
    sla_pattern_free(&p);
}

/* ---- allocation failures ---- */

static void alloc_failures_read(void **state)
{
    static const char text[] = "%%MatrixMarket matrix coordinate complex hermitian\n3 3 3\n"
                               "1 1 1 0\n2 1 2 5\n3 3 -1 0\n";
    unsigned char gz[512];
    size_t gzlen = gzip_stored(text, sizeof text - 1, gz);
    const char *path = tmp_path("alloc.mtx");
    write_bytes(path, BANNER "3 3 4\n1 1 1\n2 1 2\n3 3 -1\n1 1 5\n",
                strlen(BANNER "3 3 4\n1 1 1\n2 1 2\n3 3 -1\n1 1 5\n"));
    for (int which = 0; which < 5; which++) {
        int64_t k;
        for (k = 0;; k++) {
            sla_coo *a = NULL;
            sla_pattern *p = NULL;
            void *v = NULL;
            sla_test_fail_alloc_after(k);
            sla_status st;
            if (which == 0) st = read_text(text, &a);
            else if (which == 1) st = sla_mm_read_buffer((const char *)gz, gzlen, "gz", &a);
            else if (which == 2) st = sla_mm_read(path, &a);
            else st = sla_mm_read_matrix(path, which == 4 ? SLA_FLOAT32 : SLA_FLOAT64, &p, &v, NULL, NULL);
            int64_t used = sla_test_fail_alloc_after(-1);
            if (st == SLA_OK) {
                assert_true(k >= used);
                sla_coo_free(&a);
                sla_pattern_free(&p);
                free(v);
                break;
            }
            if (st != SLA_ENOMEM) fail_msg("case %d, allocation %lld: status %d: %s", which,
                                           (long long)k, (int)st, sla_last_error());
            assert_null(a);
            assert_null(p);
            assert_null(v);
        }
        assert_true(k >= 3);
    }
    remove(path);
}

static void alloc_failures_write(void **state)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(3, 3, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    const char *path = tmp_path("alloc_w.mtx.gz");
    for (int64_t k = 0;; k++) {
        sla_test_fail_alloc_after(k);
        sla_status st = sla_mm_write(path, &A, 0, SLA_MM_REAL, SLA_MM_SYMMETRIC, "c");
        int64_t used = sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) {
            assert_true(k >= used);
            break;
        }
        assert_int_equal(st, SLA_ENOMEM);
    }
    sla_coo *a = NULL;
    TU_OK(sla_mm_read(path, &a));
    assert_int_equal(a->nnz, sla_pattern_nnz(p));
    sla_coo_free(&a);
    remove(path);
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shared_matrices),
        cmocka_unit_test(shared_matrix_facts),
        cmocka_unit_test(header_files_valid),
        cmocka_unit_test(header_files_invalid),
        cmocka_unit_test(errors_banner_and_size),
        cmocka_unit_test(errors_entries),
        cmocka_unit_test(bad_arguments_and_io),
        cmocka_unit_test(lenient_layout),
        cmocka_unit_test(array_formats),
        cmocka_unit_test(number_scanning),
        cmocka_unit_test(absurd_declared_count),
        cmocka_unit_test(gzip_buffers),
        cmocka_unit_test(write_read_general),
        cmocka_unit_test(write_read_symmetric),
        cmocka_unit_test(write_read_float32),
        cmocka_unit_test(alloc_failures_read),
        cmocka_unit_test(alloc_failures_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
