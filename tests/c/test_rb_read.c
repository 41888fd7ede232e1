/* Rutherford–Boeing reading by the header's Fortran field widths: touching fields, D and
 * three-digit exponents, scale factors, columns past the format ignored, and everything that
 * does not match the header refused with the line (an extra value used to shift every later
 * value with success; "1.0D+05" read as 1.0). Storage kinds and their expansion, and the
 * structural checks. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* Files in a new folder under $TMPDIR: FOLDER/t.rua (messages read ".../t.rua:LINE: ..."). */
static char folder[512], text_file[600], written[600];

static int setup(void **state)
{
    const char *t = getenv("TMPDIR");
    snprintf(folder, sizeof folder, "%s/sla_test_rb_read_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(folder)) return -1;
    snprintf(text_file, sizeof text_file, "%s/t.rua", folder);
    snprintf(written, sizeof written, "%s/w.rua", folder);
    return 0;
}

static int teardown(void **state)
{
    unlink(text_file);
    unlink(written);
    return rmdir(folder);
}

static sla_status read_text(const char *text, sla_coo **c)
{
    FILE *f = fopen(text_file, "wb");
    assert_non_null(f);
    assert_true(fwrite(text, 1, strlen(text), f) == strlen(text));
    assert_int_equal(fclose(f), 0);
    return sla_rb_read(text_file, c);
}

static sla_coo *read_ok(const char *text)
{
    sla_coo *c = NULL;
    sla_status st = read_text(text, &c);
    if (st != SLA_OK) fail_msg("%s\n-> %d: %s", text, (int)st, sla_last_error());
    return c;
}

/* status `want` with "t.rua:LINE: " and phrase in the message */
static void expect_error(const char *text, sla_status want, int line, const char *phrase)
{
    sla_coo *c = (sla_coo *)0x1;
    sla_status st = read_text(text, &c);
    char where[64];
    snprintf(where, sizeof where, "t.rua:%d: ", line);
    const char *m = sla_last_error();
    if (st != want || c != NULL || !strstr(m, where) || !strstr(m, phrase) ||
        strncmp(m, "sla_rb_read: ", 13) != 0)
        fail_msg("%s\n-> status %d, '%s'; expected %d with '%s' and '%s'", text, (int)st, m,
                 (int)want, where, phrase);
}

/* entries k: (i, j, re, im), 0-based */
static void expect_entries(const sla_coo *c, int64_t n, const double (*e)[4])
{
    assert_int_equal(c->nnz, n);
    int nv = c->field == SLA_MM_COMPLEX ? 2 : 1;
    for (int64_t k = 0; k < n; k++)
        if (c->row[k] != e[k][0] || c->col[k] != e[k][1] || c->values[nv * k] != e[k][2] ||
            (nv == 2 && c->values[nv * k + 1] != e[k][3]))
            fail_msg("entry %lld = (%lld, %lld, %.17g, %.17g), expected (%g, %g, %.17g, %.17g)",
                     (long long)k, (long long)c->row[k], (long long)c->col[k],
                     c->values[nv * k], nv == 2 ? c->values[nv * k + 1] : 0.0, e[k][0], e[k][1],
                     e[k][2], e[k][3]);
}

/* A = [1 0 4; 2 3 0; 0 0 5]: pointers 1 3 4 6, rows 1 2 | 2 | 1 3. Lines 5 (pointers), 6-7
 * (indices), 8-9 (values). */
#define TITLE "test matrix                                                             KEY     \n"
#define COUNTS "             5             1             2             2\n"
#define DIMS(t) t "                        3             3             5             0\n"
#define FMTS "(4I3)           (4I3)           (3E12.4)            \n"
#define PTRS "  1  3  4  6\n"
#define INDS "  1  2  2  1\n  3\n"
#define VALS "  1.0000E+00  2.0000E+00  3.0000E+00\n  4.0000E+00  5.0000E+00\n"
#define RUA TITLE COUNTS DIMS("RUA") FMTS PTRS INDS VALS

static const double A_ENTRIES[5][4] = {{0, 0, 1}, {1, 0, 2}, {1, 1, 3}, {0, 2, 4}, {2, 2, 5}};

static void fixed_width_fields(void **state)
{
    sla_coo *c = read_ok(RUA);
    assert_int_equal(c->field, SLA_MM_REAL);
    assert_int_equal(c->symmetry, SLA_MM_GENERAL);
    assert_int_equal(c->nnz_stored, 5);
    expect_entries(c, 5, A_ENTRIES);
    sla_coo_free(&c);
    /* touching fields, D and Q exponents, a three-digit exponent without its letter, CRLF,
     * and tokens past each line's record (4 × 3 or 3 × 12 columns) that Fortran never reads */
    c = read_ok(TITLE COUNTS DIMS("RUA") FMTS "  1  3  4  6 99\r\n  1  2  2  1 77\r\n  3\r\n"
                " -1.0000D+051.000000-100  2.5000Q+00 9.9\r\n  4.0000E+00  5.0000E+00\r\n\r\n");
    const double want[5][4] = {{0, 0, -1e5}, {1, 0, 1e-100}, {1, 1, 2.5}, {0, 2, 4}, {2, 2, 5}};
    expect_entries(c, 5, want);
    sla_coo_free(&c);
    /* the scale factor 1P divides a field without exponent by 10 (F editing), and leaves one
     * with an exponent alone; lower-case type letters */
    c = read_ok(TITLE COUNTS DIMS("rua") "(4I3)           (4I3)           (1P,3F12.4)         \n"
                PTRS INDS "      1.0000     20.0000  3.0000E+00\n     -4.5000  5.0000E+00\n");
    const double scaled[5][4] = {{0, 0, 0.1}, {1, 0, 2}, {1, 1, 3}, {0, 2, -0.45}, {2, 2, 5}};
    expect_entries(c, 5, scaled);
    sla_coo_free(&c);
}

/* The instance and its relatives: data that do not fit the format are refused. */
static void data_beyond_the_format(void **state)
{
    /* an extra token inside a value line shifts the fields: refused where it happens */
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS INDS
                 "  1.0000E+00 7.0  2.0000E+00  3.0000E+00\n  4.0000E+00  5.0000E+00\n",
                 SLA_EPARSE, 8, "value 2 (' 7.0  2.0000', columns 13-24 of (3E12.4)) is not a number");
    /* an extra value on the short last line of a section */
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS INDS
                 "  1.0000E+00  2.0000E+00  3.0000E+00\n  4.0000E+00  5.0000E+00  6.0000E+00\n",
                 SLA_EPARSE, 9, "data beyond the 5 values the header declares: '6.0000E+00' in columns 25-36");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS "  1  2  2  1\n  3  3\n" VALS, SLA_EPARSE, 7,
                 "data beyond the 5 row indices");
    expect_error(TITLE COUNTS DIMS("RUA") "(5I3)           (4I3)           (3E12.4)            \n"
                 "  1  3  4  6  7\n" INDS VALS, SLA_EPARSE, 5, "data beyond the 4 column pointers");
    /* a line with a field missing (Fortran would read a blank field as 0) */
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS INDS
                 "  1.0000E+00  2.0000E+00\n  4.0000E+00  5.0000E+00\n", SLA_EPARSE, 8,
                 "value 3 ('', columns 25-36 of (3E12.4)) is blank");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS "  1  3  4\n" INDS VALS, SLA_EPARSE, 5,
                 "column pointer 4 ('', columns 10-12 of (4I3)) is blank");
    /* a line too many, a line too few */
    expect_error(RUA "  6.0000E+00\n", SLA_EPARSE, 10, "unexpected '6.0000E+00' after the data");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS INDS "  1.0000E+00  2.0000E+00  3.0000E+00\n",
                 SLA_EPARSE, 8, "end of file after 3 of the 5 values");
    /* fields that are not numbers of the format's kind */
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS "  1  2 2.  1\n  3\n" VALS, SLA_EPARSE, 6,
                 "row index 3 (' 2.', columns 7-9 of (4I3)) is not an integer");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS "  12 1  2  1\n  3\n" VALS, SLA_EPARSE, 6,
                 "row index 2 ('2 1', columns 4-6 of (4I3)) is not an integer");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS INDS
                 "           1  2.0000E+00  3.0000E+00\n  4.0000E+00  5.0000E+00\n", SLA_EPARSE, 8,
                 "has no decimal point");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS INDS
                 "  1.0000E+00  2.0000X+00  3.0000E+00\n  4.0000E+00  5.0000E+00\n", SLA_EPARSE, 8,
                 "value 2 ('  2.0000X+00', columns 13-24 of (3E12.4)) is not a number");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS INDS
                 "  1.0000E+00  2.0000E999  3.0000E+00\n  4.0000E+00  5.0000E+00\n", SLA_EPARSE, 8,
                 "is out of range");
}

static void header_checks(void **state)
{
    /* line counts that do not match the counts and formats */
    expect_error(TITLE "             5             2             2             2\n" DIMS("RUA")
                 FMTS PTRS INDS VALS, SLA_EPARSE, 2,
                 "PTRCRD = 2, but 4 column pointers in (4I3) take 1 line");
    expect_error(TITLE "             5             1             2             3\n" DIMS("RUA")
                 FMTS PTRS INDS VALS, SLA_EPARSE, 2, "VALCRD = 3, but 5 values in (3E12.4) take 2 lines");
    /* a count far beyond what the file holds: refused before anything is allocated for it */
    expect_error(TITLE "             5             1             2             2\n"
                 "RUA                        3             3  999999999999             0\n" FMTS
                 PTRS INDS VALS, SLA_EPARSE, 2, "INDCRD = 2");
    expect_error(TITLE "             5  100000000000             2             2\n"
                 "RUA                        3  399999999999             5             0\n"
                 FMTS PTRS INDS VALS, SLA_EPARSE, 3, "more than the");
    /* found by fuzz_rb_read: 2 NNZ for the complex values overflowed int64 */
    expect_error(TITLE COUNTS "CHA                        3             3 9223372036854775807             0\n"
                 FMTS PTRS INDS VALS, SLA_EPARSE, 3, "NNZ = 9223372036854775807 is too large");
    expect_error(TITLE COUNTS DIMS("RUA") "(4X3)           (4I3)           (3E12.4)            \n"
                 PTRS INDS VALS, SLA_EPARSE, 4, "the column pointer format '(4X3)' is not a Fortran format");
    expect_error(TITLE COUNTS DIMS("RUA") "(4I3)           (4I3)           (3I12)              \n"
                 PTRS INDS VALS, SLA_EPARSE, 4, "a RUA matrix needs a real (E, D, F, G) value format");
    expect_error(TITLE COUNTS DIMS("RXA") FMTS PTRS INDS VALS, SLA_EPARSE, 3, "matrix type 'RXA'");
    expect_error(TITLE COUNTS DIMS("RUE") FMTS PTRS INDS VALS, SLA_EUNSUPPORTED, 3, "elemental");
    expect_error(TITLE "             5             1             2\n" DIMS("RUA") FMTS PTRS INDS VALS,
                 SLA_EPARSE, 2, "3 numbers where TOTCRD PTRCRD INDCRD VALCRD [RHSCRD] are expected");
    expect_error(TITLE, SLA_EPARSE, 2, "end of file in the header");
    expect_error("", SLA_EPARSE, 1, "empty file");
    /* a Harwell–Boeing file with right-hand sides: line 5 and the RHS lines are skipped */
    sla_coo *c = read_ok(TITLE "             6             1             2             2             1\n"
                         DIMS("RUA") "(4I3)           (4I3)           (3E12.4)            (3E12.4)\n"
                         "F                          1             0\n" PTRS INDS VALS
                         "  7.0000E+00  8.0000E+00  9.0000E+00\n");
    expect_entries(c, 5, A_ENTRIES);
    sla_coo_free(&c);
}

static void structure_checks(void **state)
{
    expect_error(TITLE COUNTS DIMS("RUA") FMTS "  0  3  4  6\n" INDS VALS, SLA_EPARSE, 5,
                 "the first column pointer is 0 (must be 1)");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS "  1  4  3  6\n" INDS VALS, SLA_EPARSE, 5,
                 "column pointer 3 (3) is less than the one before it (4)");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS "  1  3  4  5\n" INDS VALS, SLA_EPARSE, 5,
                 "the last column pointer is 5, but the header declares NNZ = 5 (it must be 6)");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS "  1  2  2  1\n  4\n" VALS, SLA_EPARSE, 7,
                 "row index 4 (entry 5) is out of range [1, 3]");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS "  2  1  2  1\n  3\n" VALS, SLA_EPARSE, 6,
                 "row indices of column 1 are not increasing: 1 after 2");
    expect_error(TITLE COUNTS DIMS("RUA") FMTS PTRS "  1  1  2  1\n  3\n" VALS, SLA_EPARSE, 6,
                 "(a duplicate entry)");
    expect_error(TITLE COUNTS DIMS("RSA") FMTS PTRS INDS VALS, SLA_EPARSE, 6,
                 "entry (1, 3) is above the diagonal, but a RSA file stores the lower triangle only");
    expect_error(TITLE COUNTS "RSA                        3             4             5             0\n"
                 FMTS PTRS INDS VALS, SLA_EPARSE, 3, "a RSA matrix must be square");
}

/* lower triangle [1; 2 3; 0 4 5] in 5 entries: pointers 1 3 5 6, rows 1 2 | 2 3 | 3 */
#define LOWER(t, fmt, vals) TITLE COUNTS DIMS(t) "(4I3)           (4I3)           " fmt "\n" \
                            "  1  3  5  6\n  1  2  2  3\n  3\n" vals

static void storage_kinds(void **state)
{
    sla_coo *c = read_ok(LOWER("RSA", "(3E12.4)            ",
                               "  1.0000E+00  2.0000E+00  3.0000E+00\n  4.0000E+00  5.0000E+00\n"));
    assert_int_equal(c->symmetry, SLA_MM_SYMMETRIC);
    assert_int_equal(c->nnz_stored, 5);
    const double sym[7][4] = {{0, 0, 1}, {1, 0, 2}, {0, 1, 2}, {1, 1, 3}, {2, 1, 4}, {1, 2, 4}, {2, 2, 5}};
    expect_entries(c, 7, sym);
    sla_coo_free(&c);
    /* skew-symmetric: zero diagonal, mirrors negated; a non-zero diagonal is refused */
    c = read_ok(LOWER("RZA", "(3E12.4)            ",
                      "  0.0000E+00  2.0000E+00  0.0000E+00\n  4.0000E+00  0.0000E+00\n"));
    assert_int_equal(c->symmetry, SLA_MM_SKEW_SYMMETRIC);
    const double skew[7][4] = {{0, 0, 0}, {1, 0, 2}, {0, 1, -2}, {1, 1, 0}, {2, 1, 4}, {1, 2, -4}, {2, 2, 0}};
    expect_entries(c, 7, skew);
    sla_coo_free(&c);
    expect_error(LOWER("RZA", "(3E12.4)            ",
                       "  0.0000E+00  2.0000E+00  1.0000E+00\n  4.0000E+00  0.0000E+00\n"),
                 SLA_EPARSE, 8, "diagonal entry (2, 2) of a skew-symmetric matrix must be 0");
    /* pattern: no values; PZA mirrors are -1 (RBio's convention) */
    c = read_ok(TITLE "             4             1             2             0\n" DIMS("PSA")
                "(4I3)           (4I3)                               \n"
                "  1  3  5  6\n  1  2  2  3\n  3\n");
    assert_int_equal(c->field, SLA_MM_PATTERN);
    assert_int_equal(c->nnz, 7);
    for (int k = 0; k < 7; k++) assert_true(c->values[k] == 1);
    sla_coo_free(&c);
    /* integer values in an I format */
    c = read_ok(LOWER("ISA", "(3I12)              ",
                      "           1          -2           3\n           4           5\n"));
    assert_int_equal(c->field, SLA_MM_INTEGER);
    assert_true(c->values[1] == -2 && c->values[6] == 5);
    sla_coo_free(&c);
    /* complex Hermitian: (re, im) pairs, mirrors conjugated, real diagonal */
    c = read_ok(TITLE "             7             1             2             4\n" DIMS("CHA")
                "(4I3)           (4I3)           (3E12.4)            \n"
                "  1  3  5  6\n  1  2  2  3\n  3\n"
                "  1.0000E+00  0.0000E+00  2.0000E+00\n -1.0000E+00  3.0000E+00  0.0000E+00\n"
                "  4.0000E+00  0.5000E+00  5.0000E+00\n  0.0000E+00\n");
    assert_int_equal(c->field, SLA_MM_COMPLEX);
    assert_int_equal(c->symmetry, SLA_MM_HERMITIAN);
    const double herm[7][4] = {{0, 0, 1, 0}, {1, 0, 2, -1}, {0, 1, 2, 1}, {1, 1, 3, 0},
                               {2, 1, 4, 0.5}, {1, 2, 4, -0.5}, {2, 2, 5, 0}};
    expect_entries(c, 7, herm);
    sla_coo_free(&c);
    /* rectangular */
    c = read_ok(TITLE "             4             1             1             1\n"
                "RRA                        4             2             3             0\n"
                "(4I3)           (4I3)           (3E12.4)            \n"
                "  1  3  4\n  1  4  2\n  1.0000E+00  2.0000E+00  3.0000E+00\n");
    assert_true(c->nrows == 4 && c->ncols == 2 && c->nnz == 3 && c->row[1] == 3);
    sla_coo_free(&c);
}

/* The shared Harwell–Boeing files read as before (their facts: the shared README), and what
 * sla_rb_write writes reads back with the same values. */
static void shared_files_and_round_trip(void **state)
{
    if (!tu_have_matrices()) skip();
    sla_coo *c = NULL;
    TU_OK(sla_rb_read(tu_matrix_path("rb/g20.rua"), &c));          /* touching fields */
    assert_true(c->nrows == 400 && c->nnz == 1920);
    sla_coo_free(&c);
    TU_OK(sla_rb_read(tu_matrix_path("rb/west0067.rua"), &c));
    assert_true(c->nrows == 67 && c->nnz == 294);
    sla_coo_free(&c);
    sla_pattern *p;
    double *v;
    tu_load("west0479.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    const char *path = written;
    TU_OK(sla_rb_write(path, &A, 0, SLA_MM_REAL, "west0479"));
    sla_pattern *q;
    double *w;
    TU_OK(sla_rb_read(path, &c));
    TU_OK(sla_coo_to_matrix(c, SLA_FLOAT64, &q, (void **)&w));
    assert_int_equal(sla_pattern_nnz(q), sla_pattern_nnz(p));
    double maxrel = 0;
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++) {
        double d = fabs(w[s] - v[s]) / fabs(v[s]);
        if (d > maxrel) maxrel = d;
    }
    assert_true(maxrel <= 1e-15);
    unlink(path);
    sla_coo_free(&c);
    sla_pattern_free(&p);
    sla_pattern_free(&q);
    free(v);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_width_fields),
        cmocka_unit_test(data_beyond_the_format),
        cmocka_unit_test(header_checks),
        cmocka_unit_test(structure_checks),
        cmocka_unit_test(storage_kinds),
        cmocka_unit_test(shared_files_and_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
