/* Rutherford–Boeing writing (pattern matrices, empty matrices) and safetensors headers that must
 * be refused (non-integer shapes and offsets, duplicate keys). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static const char *tmp_path(const char *name)
{
    static char buf[2][512];
    static int next = 0;
    char *b = buf[next++ % 2];
    const char *dir = getenv("TMPDIR");
    snprintf(b, 512, "%s/sla_test_io_formats_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(),
             name);
    return b;
}

static void expect_error(sla_status got, sla_status want, const char *phrase)
{
    if (got != want)
        fail_msg("status %d, expected %d; message: %s", (int)got, (int)want, sla_last_error());
    if (!strstr(sla_last_error(), phrase))
        fail_msg("message '%s' lacks '%s'", sla_last_error(), phrase);
}

/* ---- Rutherford–Boeing ---------------------------------------------------------------------- */

static void rb_pattern_round_trip(void **state)
{
    if (!tu_have_matrices()) skip();
    /* bcspwr10: 5300 × 5300 symmetric pattern (README of the shared matrices) */
    sla_pattern *p;
    double *v;
    tu_load("bcspwr10.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    const char *path = tmp_path("bcspwr10.psa");
    /* failed with "invalid arguments (RBio -8)": RBwrite needs Ax even for a pattern */
    TU_OK(sla_rb_write(path, &A, 0, SLA_MM_PATTERN, "bcspwr10 pattern"));
    sla_coo *c = NULL;
    TU_OK(sla_rb_read(path, &c));
    assert_int_equal(c->field, SLA_MM_PATTERN);
    assert_int_equal(c->symmetry, SLA_MM_SYMMETRIC);
    /* one triangle is written: the stored count is the .mtx file's, 13571 with 5300 diagonal */
    assert_int_equal(c->nnz_stored, (sla_pattern_nnz(p) + 5300) / 2);
    assert_int_equal(c->nnz, sla_pattern_nnz(p));
    sla_pattern *q;
    double *w;
    TU_OK(sla_coo_to_matrix(c, SLA_FLOAT64, &q, (void **)&w));
    assert_int_equal(sla_pattern_nrows(q), 5300);
    assert_int_equal(sla_pattern_nnz(q), sla_pattern_nnz(p));
    assert_memory_equal(sla_pattern_rowptr(q), sla_pattern_rowptr(p),
                        sizeof(int64_t) * (size_t)(sla_pattern_nrows(p) + 1));
    assert_memory_equal(sla_pattern_colind(q), sla_pattern_colind(p),
                        sizeof(int32_t) * (size_t)sla_pattern_nnz(p));
    for (int64_t s = 0; s < sla_pattern_nnz(q); s++) assert_true(w[s] == 1);
    sla_coo_free(&c);
    sla_pattern_free(&q);
    free(w);
    unlink(path);

    /* a real matrix written as a pattern: structure only */
    double *ones = malloc(sizeof(double) * (size_t)sla_pattern_nnz(p));
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++) ones[s] = 2.5;
    A.values = ones;
    TU_OK(sla_rb_write(path, &A, 0, SLA_MM_PATTERN, NULL));
    TU_OK(sla_rb_read(path, &c));
    assert_int_equal(c->field, SLA_MM_PATTERN);
    sla_coo_free(&c);
    unlink(path);
    free(ones);
    sla_pattern_free(&p);
    free(v);
}

/* bcsstk01.rsa (shared README): 48 × 48 symmetric, lower triangle stored, 224 entries in the
 * file (header line 3), 400 after expansion. */
static void rb_stored_count(void **state)
{
    if (!tu_have_matrices()) skip();
    sla_coo *c = NULL;
    TU_OK(sla_rb_read(tu_matrix_path("rb/bcsstk01.rsa"), &c));
    assert_int_equal(c->symmetry, SLA_MM_SYMMETRIC);
    assert_int_equal(c->nnz_stored, 224);
    assert_int_equal(c->nnz, 400);
    sla_coo_free(&c);
}

static void rb_empty_refused(void **state)
{
    const char *path = tmp_path("empty.rua");
    int64_t shapes[4][2] = {{0, 0}, {0, 4}, {3, 0}, {3, 3}};
    for (int t = 0; t < 4; t++) {
        sla_pattern *p;
        TU_OK(sla_pattern_from_coo(shapes[t][0], shapes[t][1], 0, NULL, NULL, &p));
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, NULL);
        expect_error(sla_rb_write(path, &A, 0, SLA_MM_REAL, NULL), SLA_EUNSUPPORTED,
                     "without stored entries cannot be written in Rutherford");
        assert_non_null(strstr(sla_last_error(), "sla_rb_write: "));
        assert_int_equal(access(path, F_OK), -1);            /* no file left behind */
        sla_pattern_free(&p);
    }
}

/* ---- safetensors ---------------------------------------------------------------------------- */

/* A 2 × 2 matrix with two entries; header is the JSON text, data the 64-byte buffer. */
static sla_status read_header(const char *name, const char *json, sla_coo **c)
{
    static const struct { double v[2]; int64_t r[2], c[2], s[2]; } data = {
        {1.5, 2.5}, {0, 1}, {0, 1}, {2, 2}};
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t hl = strlen(json);
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)(hl >> (8 * i));
    assert_true(fwrite(len8, 1, 8, f) == 8 && fwrite(json, 1, hl, f) == hl &&
                fwrite(&data, 1, sizeof data, f) == sizeof data);
    fclose(f);
    sla_status st = sla_safetensors_read(path, c);
    unlink(path);
    return st;
}

#define T_VALUES(shape, off) "\"values\":{\"dtype\":\"F64\",\"shape\":" shape ",\"data_offsets\":" off "}"
#define T_ROWS "\"row_indices\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[16,32]}"
#define T_COLS "\"col_indices\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[32,48]}"
#define T_SHAPE "\"shape\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[48,64]}"

/* torch-sla's batched layout: values [*batch, nnz], shape the matrix's [M, N] */
static void safetensors_batch_round_trip(void **state)
{
    int64_t row[2] = {0, 1}, col[2] = {1, 0};
    double vals[6 * 2];
    for (int k = 0; k < 12; k++) vals[k] = 0.5 * k - 1;
    sla_coo coo = {.nrows = 2, .ncols = 3, .nnz = 2, .nnz_stored = 2, .row = row, .col = col,
                   .values = vals, .field = SLA_MM_REAL};
    int64_t batch[2] = {2, 3};
    const char *meta[] = {"sparse_dim_0", "2", "version", "9.9", NULL};
    const char *path = tmp_path("batch.safetensors");
    for (int dt = 0; dt < 2; dt++) {
        TU_OK(sla_safetensors_write_batch(path, &coo, dt ? SLA_FLOAT32 : SLA_FLOAT64, 2, batch,
                                          meta));
        sla_coo *c = NULL;
        int nd = -1;
        int64_t dims[SLA_SAFETENSORS_MAX_DIMS];
        TU_OK(sla_safetensors_read_batch(path, &c, &nd, dims));
        assert_true(nd == 2 && dims[0] == 2 && dims[1] == 3);
        assert_true(c->nnz == 2 && c->nrows == 2 && c->ncols == 3 && c->row[0] == 0 &&
                    c->col[0] == 1);
        for (int k = 0; k < 12; k++) assert_true(c->values[k] == vals[k]);   /* exact: k/2 */
        sla_coo_free(&c);
        /* the one-matrix reader refuses a batch, naming the batched reader */
        expect_error(sla_safetensors_read(path, &c), SLA_EPARSE, "sla_safetensors_read_batch");
        assert_null(c);
    }
    /* the metadata replaced the writer's "version" and added "sparse_dim_0" */
    FILE *f = fopen(path, "rb");
    char head[2048] = {0};
    assert_true(fread(head, 1, sizeof head - 1, f) > 8);
    fclose(f);
    assert_non_null(strstr(head + 8, "\"sparse_dim_0\":\"2\""));
    assert_non_null(strstr(head + 8, "\"version\":\"9.9\""));
    assert_null(strstr(head + 8, "\"version\":\"1.0\""));
    assert_non_null(strstr(head + 8, "\"shape\":[2,3,2]"));
    /* an unbatched file reads through the batched reader with 0 batch dimensions */
    TU_OK(sla_safetensors_write(path, &coo, SLA_FLOAT64));
    sla_coo *c = NULL;
    int nd = -1;
    int64_t dims[SLA_SAFETENSORS_MAX_DIMS];
    TU_OK(sla_safetensors_read_batch(path, &c, &nd, dims));
    assert_true(nd == 0 && c->nnz == 2 && c->values[1] == vals[1]);
    sla_coo_free(&c);
    const char *bad[] = {"key", NULL};
    expect_error(sla_safetensors_write_batch(path, &coo, SLA_FLOAT64, 0, NULL, bad), SLA_EINVAL,
                 "metadata key \"key\" has no value");
    int64_t neg[1] = {-1};
    expect_error(sla_safetensors_write_batch(path, &coo, SLA_FLOAT64, 1, neg, NULL), SLA_EINVAL,
                 "batch_shape[0]");
    unlink(path);
}

static void safetensors_refused(void **state)
{
    sla_coo *c = NULL;
    /* the valid file first, so that each refusal below is about one change */
    TU_OK(read_header("valid.safetensors",
                      "{" T_VALUES("[2]", "[0,16]") "," T_ROWS "," T_COLS "," T_SHAPE "}", &c));
    assert_true(c->nnz == 2 && c->values[1] == 2.5);
    sla_coo_free(&c);
    /* shape [2.5] was read as [2] */
    expect_error(read_header("frac.safetensors",
                             "{" T_VALUES("[2.5]", "[0,16]") "," T_ROWS "," T_COLS "," T_SHAPE "}", &c),
                 SLA_EPARSE, "tensor \"values\": shape[0] is not a non-negative integer");
    assert_null(c);
    assert_non_null(strstr(sla_last_error(), "sla_safetensors_read: "));
    expect_error(read_header("strshape.safetensors",
                             "{" T_VALUES("[\"2\"]", "[0,16]") "," T_ROWS "," T_COLS "," T_SHAPE "}", &c),
                 SLA_EPARSE, "shape[0] is not a non-negative integer");
    expect_error(read_header("fracoff.safetensors",
                             "{" T_VALUES("[2]", "[0,16.5]") "," T_ROWS "," T_COLS "," T_SHAPE "}", &c),
                 SLA_EPARSE, "tensor \"values\": data_offsets are not non-negative integers");
    expect_error(read_header("stroff.safetensors",
                             "{" T_VALUES("[2]", "[\"0\",16]") "," T_ROWS "," T_COLS "," T_SHAPE "}", &c),
                 SLA_EPARSE, "data_offsets are not non-negative integers");
    /* duplicate tensor names: cJSON keeps both, lookups saw the first */
    expect_error(read_header("dup.safetensors",
                             "{" T_VALUES("[2]", "[0,16]") "," T_VALUES("[2]", "[16,32]") "," T_ROWS
                             "," T_COLS "," T_SHAPE "}", &c),
                 SLA_EPARSE, "duplicate key \"values\" in the safetensors header");
    /* a duplicate field inside one tensor */
    expect_error(read_header("dupfield.safetensors",
                             "{\"values\":{\"dtype\":\"F64\",\"dtype\":\"F32\",\"shape\":[2],"
                             "\"data_offsets\":[0,16]}," T_ROWS "," T_COLS "," T_SHAPE "}", &c),
                 SLA_EPARSE, "duplicate key \"dtype\" in tensor \"values\"");
    assert_null(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rb_pattern_round_trip),
        cmocka_unit_test(rb_stored_count),
        cmocka_unit_test(rb_empty_refused),
        cmocka_unit_test(safetensors_refused),
        cmocka_unit_test(safetensors_batch_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
