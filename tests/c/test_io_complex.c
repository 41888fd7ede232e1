/* Complex matrices in Rutherford–Boeing (CUA general, CSA complex symmetric, CHA Hermitian:
 * RBwrite chooses the type, sla_rb_read reads it back by its Fortran field widths) and
 * safetensors (C128 / C64 values) files: exact round trips of the values and patterns, the
 * type written for each kind, batches, and the refusals of mismatched dtypes and fields. */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "testutil.h"

typedef double complex zc;

static const char *tmp_path(const char *name)
{
    static char buf[2][512];
    static int next = 0;
    char *b = buf[next++ % 2];
    const char *dir = getenv("TMPDIR");
    snprintf(b, 512, "%s/sla_test_io_complex_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(),
             name);
    return b;
}

/* kind 0: general; 1: complex symmetric (a_ij = a_ji); 2: Hermitian (a_ij = conj(a_ji), real
 * diagonal). Values with many digits, tiny and huge magnitudes, so that a round trip through
 * the text format must keep every bit. */
static void make(int kind, int64_t n, sla_pattern **p, zc **values)
{
    int64_t cap = 8 * n, k = 0;
    int64_t *r = malloc((size_t)cap * sizeof *r), *c = malloc((size_t)cap * sizeof *c);
    zc *v = malloc((size_t)cap * sizeof *v);
    uint64_t st = 77 + (uint64_t)kind;
    for (int64_t i = 0; i < n; i++) {
        r[k] = c[k] = i;
        v[k++] = kind == 2 ? 3 + tu_rand(&st) : (3 + tu_rand(&st)) + I * tu_rand(&st) * 1e-300;
        for (int q = 0; q < 2; q++) {
            int64_t j = (int64_t)((tu_rand(&st) + 1) * 0.5 * (double)n);
            if (j >= n || j == i) continue;
            zc a = tu_rand(&st) / 3 + I * tu_rand(&st) * (q ? 1e250 : 1.0 / 7);
            r[k] = i; c[k] = j; v[k++] = a;
            if (kind) { r[k] = j; c[k] = i; v[k++] = kind == 2 ? conj(a) : a; }
        }
    }
    /* duplicates summed by the gather: keep mirrors consistent by building from unique pairs */
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc((size_t)sla_pattern_nnz(*p) * sizeof **values);
    TU_OK(sla_values_gather(*p, SLA_COMPLEX128, 1, v, *values));
    free(r); free(c); free(v);
}

/* the matrix of a COO as complex128 on its own pattern, compared with (p, a) exactly */
static void expect_same(const sla_coo *c, const sla_pattern *p, const zc *a)
{
    sla_pattern *q;
    zc *w;
    TU_OK(sla_coo_to_matrix(c, SLA_COMPLEX128, &q, (void **)&w));
    int64_t n = sla_pattern_nrows(p);
    assert_int_equal(sla_pattern_nrows(q), n);
    assert_int_equal(sla_pattern_nnz(q), sla_pattern_nnz(p));
    assert_memory_equal(sla_pattern_rowptr(q), sla_pattern_rowptr(p), sizeof(int64_t) * (size_t)(n + 1));
    assert_memory_equal(sla_pattern_colind(q), sla_pattern_colind(p),
                        sizeof(int32_t) * (size_t)sla_pattern_nnz(p));
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++)
        if (w[s] != a[s])
            fail_msg("slot %lld: %.17g%+.17gi read back as %.17g%+.17gi", (long long)s,
                     creal(a[s]), cimag(a[s]), creal(w[s]), cimag(w[s]));
    sla_free(w);
    sla_pattern_free(&q);
}

static void rb_round_trip(void **state)
{
    (void)state;
    const char *types[] = {"CUA", "CSA", "CHA"};
    const sla_mm_symmetry sym[] = {SLA_MM_GENERAL, SLA_MM_SYMMETRIC, SLA_MM_HERMITIAN};
    for (int kind = 0; kind < 3; kind++) {
        sla_pattern *p;
        zc *a;
        make(kind, 60, &p, &a);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
        const char *path = tmp_path("m.rb");
        TU_OK(sla_rb_write(path, &A, 0, SLA_MM_COMPLEX, types[kind]));
        FILE *f = fopen(path, "r");
        char line[128];
        for (int l = 0; l < 3; l++) assert_non_null(fgets(line, sizeof line, f));
        fclose(f);
        if (strncasecmp(line, types[kind], 3) != 0)
            fail_msg("kind %d written as %.3s, expected %s", kind, line, types[kind]);
        sla_coo *c = NULL;
        TU_OK(sla_rb_read(path, &c));
        assert_int_equal(c->field, SLA_MM_COMPLEX);
        assert_int_equal(c->symmetry, sym[kind]);
        expect_same(c, p, a);
        sla_coo_free(&c);
        /* complex64: the float values, widened, read back exactly */
        int64_t nnz = sla_pattern_nnz(p);
        float complex *af = malloc((size_t)nnz * sizeof *af);
        zc *aw = malloc((size_t)nnz * sizeof *aw);
        for (int64_t s = 0; s < nnz; s++) {
            zc x = kind == 2 || cabs(a[s]) < 1e30 ? a[s] : creal(a[s]);   /* in float range */
            af[s] = (float complex)x;
            aw[s] = af[s];
        }
        A = sla_matrix_view(p, SLA_COMPLEX64, 1, af);
        if (kind != 2) {         /* rounding may break exact Hermitian symmetry: skip CHA */
            TU_OK(sla_rb_write(path, &A, 0, SLA_MM_COMPLEX, NULL));
            TU_OK(sla_rb_read(path, &c));
            expect_same(c, p, aw);
            sla_coo_free(&c);
        }
        unlink(path);
        free(af); free(aw); free(a);
        sla_pattern_free(&p);
    }
}

static void rb_refusals(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    make(0, 10, &p, &a);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, a);
    const char *path = tmp_path("bad.rb");
    assert_int_equal(sla_rb_write(path, &A, 0, SLA_MM_REAL, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "does not match"));
    double *r = calloc((size_t)sla_pattern_nnz(p), sizeof *r);
    sla_matrix R = sla_matrix_view(p, SLA_FLOAT64, 1, r);
    assert_int_equal(sla_rb_write(path, &R, 0, SLA_MM_COMPLEX, NULL), SLA_EINVAL);
    /* pattern takes a complex matrix */
    TU_OK(sla_rb_write(path, &A, 0, SLA_MM_PATTERN, NULL));
    sla_coo *c = NULL;
    TU_OK(sla_rb_read(path, &c));
    assert_int_equal(c->field, SLA_MM_PATTERN);
    assert_int_equal(c->nnz, sla_pattern_nnz(p));
    sla_coo_free(&c);
    unlink(path);
    free(r); free(a);
    sla_pattern_free(&p);
}

/* a COO of the matrix (p, a) in CSR order, values (re, im) */
static sla_coo coo_of(const sla_pattern *p, const zc *a, int64_t *rows, int64_t *cols)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) { rows[s] = i; cols[s] = ci[s]; }
    sla_coo c = {.nrows = n, .ncols = n, .nnz = sla_pattern_nnz(p), .nnz_stored = sla_pattern_nnz(p),
                 .row = rows, .col = cols, .values = (double *)a, .field = SLA_MM_COMPLEX,
                 .symmetry = SLA_MM_GENERAL};
    return c;
}

static void safetensors_round_trip(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *a;
    make(0, 50, &p, &a);
    int64_t nnz = sla_pattern_nnz(p);
    int64_t *rows = malloc((size_t)nnz * sizeof *rows), *cols = malloc((size_t)nnz * sizeof *cols);
    sla_coo c = coo_of(p, a, rows, cols);
    const char *path = tmp_path("m.safetensors");
    TU_OK(sla_safetensors_write(path, &c, SLA_COMPLEX128));
    sla_coo *back = NULL;
    TU_OK(sla_safetensors_read(path, &back));
    assert_int_equal(back->field, SLA_MM_COMPLEX);
    expect_same(back, p, a);
    sla_coo_free(&back);
    /* the header names C128 and torch.complex128 */
    FILE *f = fopen(path, "rb");
    char hdr[2048] = {0};
    assert_true(fread(hdr, 1, sizeof hdr - 1, f) > 8);
    fclose(f);
    assert_non_null(strstr(hdr + 8, "\"C128\""));
    assert_non_null(strstr(hdr + 8, "torch.complex128"));
    /* complex64 (C64): the values rounded to float */
    TU_OK(sla_safetensors_write(path, &c, SLA_COMPLEX64));
    TU_OK(sla_safetensors_read(path, &back));
    /* rounded through a float array: GCC folds (double complex)(float complex)x back to x
     * in registers at -O2 */
    zc *ar = calloc((size_t)nnz, sizeof *ar);
    float complex *af = malloc((size_t)nnz * sizeof *af);
    for (int64_t s = 0; s < nnz; s++) af[s] = (float complex)a[s];
    for (int64_t s = 0; s < nnz; s++) ar[s] = af[s];
    free(af);
    expect_same(back, p, ar);
    sla_coo_free(&back);
    /* a batch of 2 × 3 */
    zc *ab = malloc((size_t)(6 * nnz) * sizeof *ab);
    for (int64_t t = 0; t < 6 * nnz; t++) ab[t] = a[t % nnz] * (1 + (double)(t / nnz) * I);
    c.values = (double *)ab;
    const int64_t bs[2] = {2, 3};
    TU_OK(sla_safetensors_write_batch(path, &c, SLA_COMPLEX128, 2, bs, NULL));
    int nd = 0;
    int64_t dims[SLA_SAFETENSORS_MAX_DIMS];
    TU_OK(sla_safetensors_read_batch(path, &back, &nd, dims));
    assert_int_equal(nd, 2);
    assert_true(dims[0] == 2 && dims[1] == 3);
    assert_memory_equal(back->values, ab, (size_t)(6 * nnz) * sizeof *ab);
    sla_coo_free(&back);
    /* a metadata dtype of the other class than the values (the header patched in place, as
     * another writer would leave it): refused at read, naming both; the writer refuses the
     * reserved key */
    const char *as_real[] = {"dtype", "torch.float64", NULL};
    const int64_t one[1] = {1};
    c.values = (double *)a;
    assert_int_equal(sla_safetensors_write_batch(path, &c, SLA_COMPLEX128, 0, one, as_real),
                     SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "reserved"));
    TU_OK(sla_safetensors_write(path, &c, SLA_COMPLEX128));
    f = fopen(path, "r+b");
    assert_non_null(f);
    size_t got = fread(hdr, 1, sizeof hdr - 1, f);
    assert_true(got > 8);
    char *at = strstr(hdr + 8, "torch.complex128");
    assert_non_null(at);
    memcpy(at, "torch.float64   ", 16);                    /* same length: offsets unchanged */
    assert_int_equal(fseek(f, at - hdr, SEEK_SET), 0);
    assert_int_equal(fwrite(at, 1, 16, f), 16);
    fclose(f);
    assert_int_equal(sla_safetensors_read(path, &back), SLA_EPARSE);
    assert_non_null(strstr(sla_last_error(), "disagrees with \"values\" dtype C128"));
    assert_null(back);
    c.values = (double *)ab;
    /* mismatches refused */
    assert_int_equal(sla_safetensors_write(path, &c, SLA_FLOAT64), SLA_EDTYPE);
    assert_non_null(strstr(sla_last_error(), "does not match"));
    c.field = SLA_MM_REAL;
    assert_int_equal(sla_safetensors_write(path, &c, SLA_COMPLEX128), SLA_EDTYPE);
    unlink(path);
    free(rows); free(cols); free(ar); free(ab); free(a);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rb_round_trip),
        cmocka_unit_test(rb_refusals),
        cmocka_unit_test(safetensors_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
