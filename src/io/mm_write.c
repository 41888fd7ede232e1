/* Matrix Market writer: one batch element of a matrix view as a coordinate file, in CSR order
 * (row by row), plain or gzip-compressed. Lines are formatted into a 64 KiB buffer written in
 * large blocks. float64 values are printed with %.17g and float32 with %.9g: enough digits for
 * the text to read back to the same bits. The file is written through io_out (io_file.h): a
 * failed write leaves whatever was at the path before untouched. */
#define _POSIX_C_SOURCE 200809L      /* fdopen */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "io/mm_internal.h"

#define SINK_SIZE 65536
#define LINE_MAX_CHARS 128   /* "row col value\n" with int64 indices and a %.17g value */

typedef struct sink {
    io_out out;
    FILE *f;
    gzFile gz;
    char *buf;
    size_t n;
    int err;                 /* errno of the first failure, or -1 for a zlib failure */
    const char *path, *func;
} sink;

static void sink_flush(sink *s)
{
    if (s->err || s->n == 0) {
        s->n = 0;
        return;
    }
    errno = 0;
    if (s->gz) {
        if (gzwrite(s->gz, s->buf, (unsigned)s->n) != (int)s->n) s->err = errno ? errno : -1;
    } else if (fwrite(s->buf, 1, s->n, s->f) != s->n) {
        s->err = errno ? errno : EIO;
    }
    s->n = 0;
}

/* Room for one more line (lines are shorter than LINE_MAX_CHARS). */
static char *sink_line(sink *s)
{
    if (SINK_SIZE - s->n < LINE_MAX_CHARS) sink_flush(s);
    return s->buf + s->n;
}

static void sink_write(sink *s, const char *text, size_t len)
{
    while (len > 0) {
        if (s->n == SINK_SIZE) sink_flush(s);
        size_t k = SINK_SIZE - s->n < len ? SINK_SIZE - s->n : len;
        memcpy(s->buf + s->n, text, k);
        s->n += k;
        text += k;
        len -= k;
    }
}

static int ends_with_gz(const char *path)
{
    size_t n = strlen(path);
    return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

static sla_status sink_open(sink *s, const char *path, const char *func)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->func = func;
    s->buf = sla_malloc(SINK_SIZE, 1, "the write buffer");
    if (!s->buf) return io_name_error(SLA_ENOMEM, func, path);
    sla_status st = io_out_open(&s->out, path, func);
    if (st != SLA_OK) {
        sla_free(s->buf);
        return st;
    }
    errno = 0;
    if (ends_with_gz(path)) s->gz = gzdopen(s->out.fd, "wb6");
    else s->f = fdopen(s->out.fd, "wb");
    if (s->gz || s->f) {
        s->out.fd = -1;                      /* the stream owns it now */
        return SLA_OK;
    }
    int e = errno;
    io_out_abort(&s->out);
    sla_free(s->buf);
    return sla_error_set(SLA_EIO, func, "cannot create '%s': %s", path,
                         e ? strerror(e) : "gzdopen failed");
}

static sla_status sink_close(sink *s)
{
    sink_flush(s);
    errno = 0;
    if (s->gz) {
        int ret = gzclose(s->gz);
        if (ret != Z_OK && !s->err) s->err = ret == Z_ERRNO && errno ? errno : -1;
    } else if (fclose(s->f) != 0 && !s->err) {
        s->err = errno ? errno : EIO;
    }
    sla_free(s->buf);
    if (!s->err) return io_out_commit(&s->out);
    io_out_abort(&s->out);
    return sla_error_set(SLA_EIO, s->func, "cannot write '%s': %s", s->path,
                         s->err > 0 ? strerror(s->err) : "compression failed");
}

/* ---- checks ---- */

/* part p (0 real, 1 imaginary: complex dtypes only) of CSR slot s */
static double value_part(const sla_matrix *A, const void *v, int64_t s, int p)
{
    int parts = sla_dtype_is_complex(A->dtype) ? 2 : 1;
    return sla_dtype_real(A->dtype) == SLA_FLOAT64 ? ((const double *)v)[parts * s + p]
                                                   : ((const float *)v)[parts * s + p];
}

static double value_at(const sla_matrix *A, const void *v, int64_t s)
{
    return value_part(A, v, s, 0);
}

static int same_value(double x, double y) { return x == y || (isnan(x) && isnan(y)); }

/* Exact symmetry, since only the lower triangle is written: every a_ij must equal a_ji (an
 * entry missing on one side counts as 0; NaN matches NaN). For a pattern file (v = NULL) only
 * the structure must be symmetric. */
/* the checks below report errors in the name of the public function */
#define MMW_FAIL(status, ...) sla_error_set((status), "sla_mm_write", __VA_ARGS__)
#define MMW_CHECK(cond, ...) do { if (!(cond)) return MMW_FAIL(SLA_EINVAL, __VA_ARGS__); } while (0)

static sla_status check_symmetric(const sla_matrix *A, const void *v, int herm)
{
    const sla_pattern *p = A->pattern;
    if (sla_pattern_nrows(p) != sla_pattern_ncols(p))
        return MMW_FAIL(SLA_EINVAL, "symmetric storage needs a square matrix, A is %lld × %lld",
                        (long long)sla_pattern_nrows(p), (long long)sla_pattern_ncols(p));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < sla_pattern_nrows(p); i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t t = sla_pattern_find(p, ci[s], i);
            if (!v && t < 0)
                return MMW_FAIL(SLA_EINVAL, "the pattern of A is not symmetric: (%lld, %d) is "
                                "stored but (%d, %lld) is not (write it with SLA_MM_GENERAL)",
                                (long long)i, ci[s], ci[s], (long long)i);
            double x = v ? value_at(A, v, s) : 0.0, y = v && t >= 0 ? value_at(A, v, t) : 0.0;
            if (!same_value(x, y))
                return MMW_FAIL(SLA_EINVAL, "A is not %s: Re A[%lld][%d] = %.17g but "
                                "Re A[%d][%lld] = %.17g (write it with SLA_MM_GENERAL)",
                                herm ? "Hermitian" : "symmetric", (long long)i, ci[s], x, ci[s],
                                (long long)i, y);
            if (!v || !sla_dtype_is_complex(A->dtype)) continue;
            /* complex: the imaginary parts equal (symmetric) or opposite (Hermitian) */
            double xi = value_part(A, v, s, 1), yi = t >= 0 ? value_part(A, v, t, 1) : 0.0;
            if (!same_value(xi, herm ? -yi : yi))
                return MMW_FAIL(SLA_EINVAL, "A is not %s: Im A[%lld][%d] = %.17g but "
                                "Im A[%d][%lld] = %.17g (write it with SLA_MM_GENERAL)",
                                herm ? "Hermitian" : "symmetric", (long long)i, ci[s], xi, ci[s],
                                (long long)i, yi);
        }
    return SLA_OK;
}

/* Integer files need integral values that fit in int64. */
static sla_status check_integers(const sla_matrix *A, const void *v)
{
    int64_t nnz = sla_pattern_nnz(A->pattern);
    for (int64_t s = 0; s < nnz; s++) {
        double x = value_at(A, v, s);
        if (!(x == floor(x) && fabs(x) < 9223372036854775808.0))
            return MMW_FAIL(SLA_EINVAL, "value %.17g in CSR slot %lld is not an integer in the "
                                        "int64 range (field SLA_MM_INTEGER)", x, (long long)s);
    }
    return SLA_OK;
}

static sla_status check_args(const char *path, const sla_matrix *A, int64_t index,
                             sla_mm_field field, sla_mm_symmetry symmetry)
{
    MMW_CHECK(path, "path is NULL");
    SLA_TRY(sla_matrix_check_for("sla_mm_write", "A", A, SLA_CHECK_COMPLEX_OK));
    MMW_CHECK(index >= 0 && index < A->batch, "index = %lld is not in [0, batch = %lld)",
                  (long long)index, (long long)A->batch);
    int cplx = sla_dtype_is_complex(A->dtype);
    MMW_CHECK(field == SLA_MM_REAL || field == SLA_MM_INTEGER || field == SLA_MM_PATTERN ||
              field == SLA_MM_COMPLEX, "field = %d is not SLA_MM_REAL, SLA_MM_INTEGER, "
              "SLA_MM_PATTERN or SLA_MM_COMPLEX", (int)field);
    MMW_CHECK(!cplx || field == SLA_MM_COMPLEX || field == SLA_MM_PATTERN,
              "A is %s: field must be SLA_MM_COMPLEX (or SLA_MM_PATTERN)",
              sla_dtype_name(A->dtype));
    MMW_CHECK(cplx || field != SLA_MM_COMPLEX, "field SLA_MM_COMPLEX needs a complex A (A is %s)",
              sla_dtype_name(A->dtype));
    MMW_CHECK(symmetry == SLA_MM_GENERAL || symmetry == SLA_MM_SYMMETRIC ||
              (symmetry == SLA_MM_HERMITIAN && field == SLA_MM_COMPLEX),
              "symmetry = %d is not SLA_MM_GENERAL or SLA_MM_SYMMETRIC (or SLA_MM_HERMITIAN "
              "with SLA_MM_COMPLEX)", (int)symmetry);
    return SLA_OK;
}

/* ---- text ---- */

/* The banner, the comment lines and the size line (count < 0: "rows cols" of an array). */
static void write_header(sink *s, const char *banner, const char *comment, int64_t nrows,
                         int64_t ncols, int64_t count)
{
    sink_write(s, banner, strlen(banner));
    /* each comment line gets its '%', so a caller's newline cannot break the format */
    for (const char *c = comment; c && *c;) {
        size_t len = strcspn(c, "\n");
        sink_write(s, "%", 1);
        sink_write(s, c, len);
        sink_write(s, "\n", 1);
        c += len + (c[len] == '\n');
    }
    char line[LINE_MAX_CHARS];
    int n = count < 0 ? snprintf(line, sizeof line, "%lld %lld\n", (long long)nrows, (long long)ncols)
                      : snprintf(line, sizeof line, "%lld %lld %lld\n", (long long)nrows,
                                 (long long)ncols, (long long)count);
    sink_write(s, line, (size_t)n);
}

static void write_entries(sink *s, const sla_matrix *A, const void *v, sla_mm_field field,
                          int lower_only)
{
    const int64_t *rp = sla_pattern_rowptr(A->pattern);
    const int32_t *ci = sla_pattern_colind(A->pattern);
    int dbl = sla_dtype_real(A->dtype) == SLA_FLOAT64;
    const char *real_fmt = dbl ? "%lld %lld %.17g\n" : "%lld %lld %.9g\n";
    const char *cplx_fmt = dbl ? "%lld %lld %.17g %.17g\n" : "%lld %lld %.9g %.9g\n";
    for (int64_t i = 0; i < sla_pattern_nrows(A->pattern) && !s->err; i++)
        for (int64_t t = rp[i]; t < rp[i + 1]; t++) {
            if (lower_only && ci[t] > i) break;      /* columns are sorted */
            char *line = sink_line(s);
            long long r = (long long)i + 1, c = (long long)ci[t] + 1;
            int n;
            if (field == SLA_MM_PATTERN) n = snprintf(line, LINE_MAX_CHARS, "%lld %lld\n", r, c);
            else if (field == SLA_MM_INTEGER)
                n = snprintf(line, LINE_MAX_CHARS, "%lld %lld %" PRId64 "\n", r, c,
                             (int64_t)value_at(A, v, t));
            else if (field == SLA_MM_COMPLEX)
                n = snprintf(line, LINE_MAX_CHARS, cplx_fmt, r, c, value_part(A, v, t, 0),
                             value_part(A, v, t, 1));
            else n = snprintf(line, LINE_MAX_CHARS, real_fmt, r, c, value_at(A, v, t));
            s->n += (size_t)n;
        }
}

sla_status sla_mm_write(const char *path, const sla_matrix *A, int64_t index,
                        sla_mm_field field, sla_mm_symmetry symmetry, const char *comment)
{
    SLA_TRY(check_args(path, A, index, field, symmetry));
    int64_t nnz = sla_pattern_nnz(A->pattern);
    const void *v = A->values ? (const char *)A->values +
                                    (size_t)index * (size_t)nnz * sla_dtype_size(A->dtype)
                              : NULL;
    int lower_only = symmetry != SLA_MM_GENERAL;
    if (lower_only)
        SLA_TRY(check_symmetric(A, field == SLA_MM_PATTERN ? NULL : v,
                                symmetry == SLA_MM_HERMITIAN));
    if (field == SLA_MM_INTEGER) SLA_TRY(check_integers(A, v));
    int64_t count = nnz;
    if (lower_only) {
        const int64_t *rp = sla_pattern_rowptr(A->pattern);
        const int32_t *ci = sla_pattern_colind(A->pattern);
        count = 0;
        for (int64_t i = 0; i < sla_pattern_nrows(A->pattern); i++)
            for (int64_t t = rp[i]; t < rp[i + 1] && ci[t] <= i; t++) count++;
    }
    static const char *const fields[] = {"real", "integer", "pattern", "complex"};
    static const char *const symmetries[] = {"general", "symmetric", "", "hermitian"};
    char banner[LINE_MAX_CHARS];
    snprintf(banner, sizeof banner, "%%%%MatrixMarket matrix coordinate %s %s\n", fields[field],
             symmetries[symmetry]);
    sink s;
    SLA_TRY(sink_open(&s, path, "sla_mm_write"));
    write_header(&s, banner, comment, sla_pattern_nrows(A->pattern), sla_pattern_ncols(A->pattern),
                 count);
    write_entries(&s, A, v, field, lower_only);
    return sink_close(&s);
}

sla_status sla_mm_write_dense(const char *path, int64_t nrows, int64_t ncols, sla_dtype dtype,
                              const void *x, const char *comment)
{
    const char *func = __func__;
    SLA_CHECK_ARG(path, "path is NULL");
    SLA_CHECK_ARG(nrows >= 0 && ncols >= 0, "nrows = %lld and ncols = %lld must be >= 0",
                  (long long)nrows, (long long)ncols);
    SLA_CHECK_ARG(ncols == 0 || nrows <= INT64_MAX / ncols, "%lld × %lld values overflow int64",
                  (long long)nrows, (long long)ncols);
    if (sla_dtype_real(dtype) != SLA_FLOAT64 && sla_dtype_real(dtype) != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64, float32, complex128 or complex64",
                        (int)dtype);
    SLA_CHECK_ARG(x || nrows * ncols == 0, "x is NULL");
    int parts = sla_dtype_is_complex(dtype) ? 2 : 1, dbl = sla_dtype_real(dtype) == SLA_FLOAT64;
    sink s;
    SLA_TRY(sink_open(&s, path, func));
    write_header(&s, parts == 2 ? "%%MatrixMarket matrix array complex general\n"
                                : "%%MatrixMarket matrix array real general\n",
                 comment, nrows, ncols, -1);
    const double *xd = x;
    const float *xf = x;
    for (int64_t j = 0; j < ncols && !s.err; j++)         /* the format is column-major */
        for (int64_t i = 0; i < nrows; i++) {
            char *line = sink_line(&s);
            int64_t k = parts * (i * ncols + j);           /* complex: "re im" on one line */
            int n = 0;
            for (int p = 0; p < parts; p++)
                n += dbl ? snprintf(line + n, LINE_MAX_CHARS - (size_t)n, "%.17g%s", xd[k + p],
                                    p + 1 < parts ? " " : "\n")
                         : snprintf(line + n, LINE_MAX_CHARS - (size_t)n, "%.9g%s",
                                    (double)xf[k + p], p + 1 < parts ? " " : "\n");
            s.n += (size_t)n;
        }
    return sink_close(&s);
}
