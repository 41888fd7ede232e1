/* Rutherford–Boeing writing through SuiteSparse's RBio (RBwrite, 64-bit integer version),
 * into a temporary file that replaces the target only once it reads back (io_file.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <RBio.h>

#include "io/rb_internal.h"

static const char *rbio_error(SuiteSparse_long code)
{
    switch (code) {
    case RBIO_CP_INVALID: return "column pointers are invalid";
    case RBIO_ROW_INVALID: return "row indices are out of range";
    case RBIO_DUPLICATE: return "duplicate entry";
    case RBIO_EXTRANEOUS: return "entries in the upper triangle of a symmetric matrix";
    case RBIO_TYPE_INVALID: return "matrix type (RUA, RSA, ...) is invalid";
    case RBIO_DIM_INVALID: return "matrix dimensions are invalid";
    case RBIO_JUMBLED: return "columns are unsorted";
    case RBIO_ARG_ERROR: return "invalid arguments";
    case RBIO_OUT_OF_MEMORY: return "out of memory";
    case RBIO_MKIND_INVALID: return "matrix kind is invalid";
    case RBIO_UNSUPPORTED: return "finite-element (elemental) form is not supported";
    case RBIO_HEADER_IOERROR: return "writing the header failed";
    case RBIO_CP_IOERROR: return "writing the column pointers failed";
    case RBIO_ROW_IOERROR: return "writing the row indices failed";
    case RBIO_VALUE_IOERROR: return "writing the numerical values failed";
    case RBIO_FILE_IOERROR: return "cannot open the file";
    default: return "unknown RBio error";
    }
}

/* RBwrite ignores the status of its final fclose, so a disk that fills up while its buffers
 * are flushed goes unnoticed: what it wrote is read back before it replaces anything. */
static sla_status write_checked(const char *file, const char *path, int64_t m, int64_t n,
                                SuiteSparse_long *Ap, SuiteSparse_long *Ai, double *Ax,
                                sla_mm_field field, const char *title)
{
    char name[4096], ttl[73], key[9] = "sla", mtype[4];
    if (snprintf(name, sizeof name, "%s", file) >= (int)sizeof name)
        return SLA_FAIL_AS("sla_rb_write", SLA_EIO, "cannot create '%s': %s", path,
                           strerror(ENAMETOOLONG));
    snprintf(ttl, sizeof ttl, "%s", title ? title : "written by sla");
    /* mkind 4: complex values interleaved in Ax ("Cmerged"), the layout of sla's complex dtypes */
    SuiteSparse_long mkind = field == SLA_MM_PATTERN ? 1 : field == SLA_MM_INTEGER ? 3
                           : field == SLA_MM_COMPLEX ? 4 : 0;
    errno = 0;
    SuiteSparse_long rc = RBwrite(name, ttl, key, m, n, Ap, Ai, Ax, NULL, NULL, NULL, mkind, mtype);
    int io = rc == RBIO_FILE_IOERROR || rc == RBIO_HEADER_IOERROR || rc == RBIO_CP_IOERROR ||
             rc == RBIO_ROW_IOERROR || rc == RBIO_VALUE_IOERROR, e = errno;
    if (rc < 0)
        return SLA_FAIL_AS("sla_rb_write", io ? SLA_EIO : SLA_EINTERNAL, "cannot write '%s': %s "
                           "(RBio %ld)%s%s", path, rbio_error(rc), (long)rc, io && e ? ": " : "",
                           io && e ? strerror(e) : "");
    sla_coo *back = NULL;
    sla_status st = rb_read_file(file, "sla_rb_write", &back);
    if (st == SLA_OK && (back->nrows != m || back->ncols != n))
        st = SLA_FAIL_AS("sla_rb_write", SLA_EINTERNAL, "the file RBwrite wrote holds a %lld × "
                         "%lld matrix, not %lld × %lld", (long long)back->nrows,
                         (long long)back->ncols, (long long)m, (long long)n);
    sla_coo_free(&back);
    if (st == SLA_OK || st == SLA_ENOMEM) return st;
    char why[700];
    snprintf(why, sizeof why, "%s", sla_last_error());
    return SLA_FAIL_AS("sla_rb_write", SLA_EIO, "cannot write '%s': what RBwrite wrote does not "
                       "read back (disk full?): %s", path, why);
}

/* A device or FIFO target: RBwrite writes a private temporary file, which is checked and
 * then copied (RBwrite cannot report a failed write to the device itself). */
static sla_status write_device(io_out *o, int64_t m, int64_t n, SuiteSparse_long *Ap,
                               SuiteSparse_long *Ai, double *Ax, sla_mm_field field,
                               const char *title)
{
    const char *dir = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/sla-rb-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return SLA_FAIL_AS("sla_rb_write", SLA_EIO, "cannot write '%s': no temporary file in "
                           "%s: %s", o->path, dir && *dir ? dir : "/tmp", strerror(errno));
    close(fd);
    sla_status st = write_checked(tmp, o->path, m, n, Ap, Ai, Ax, field, title);
    char *buf = NULL;
    size_t len = 0;
    if (st == SLA_OK) st = io_load_file(tmp, "sla_rb_write", &buf, &len);
    unlink(tmp);
    for (size_t done = 0; st == SLA_OK && done < len;) {
        ssize_t w = write(o->fd, buf + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            st = SLA_FAIL_AS("sla_rb_write", SLA_EIO, "cannot write '%s': %s", o->path,
                             strerror(w < 0 ? errno : EIO));
        else done += (size_t)w;
    }
    sla_free(buf);
    return st;
}

sla_status sla_rb_write(const char *path, const sla_matrix *A, int64_t index, sla_mm_field field,
                        const char *title)
{
    SLA_CHECK_ARG(path, "path is NULL");
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, SLA_CHECK_COMPLEX_OK));
    SLA_CHECK_ARG(index >= 0 && index < A->batch, "index %lld out of range [0, %lld)",
                  (long long)index, (long long)A->batch);
    SLA_CHECK_ARG(field == SLA_MM_REAL || field == SLA_MM_INTEGER || field == SLA_MM_PATTERN ||
                  field == SLA_MM_COMPLEX, "field must be real, integer, pattern or complex");
    int cplx = sla_dtype_is_complex(A->dtype);
    SLA_CHECK_ARG(field == SLA_MM_PATTERN || (field == SLA_MM_COMPLEX) == cplx,
                  "field %s does not match the %s values of A (complex values are written with "
                  "field complex, real ones with real or integer; pattern takes either)",
                  field == SLA_MM_COMPLEX ? "complex" : field == SLA_MM_INTEGER ? "integer"
                  : "real", sla_dtype_name(A->dtype));
    if (sla_pattern_nnz(A->pattern) == 0)
        return SLA_FAIL(SLA_EUNSUPPORTED, "%s: a %lld × %lld matrix without stored entries cannot "
                        "be written in Rutherford–Boeing format (RBio's RBwrite refuses it: "
                        "\"matrix dimensions are invalid\"); use Matrix Market or safetensors",
                        path, (long long)sla_pattern_nrows(A->pattern),
                        (long long)sla_pattern_ncols(A->pattern));
    /* RBio wants CSC = the CSR of Aᵀ, with double values */
    const sla_pattern *t;
    const int64_t *perm;
    SLA_TRY(sla_pattern_cached_transpose(A->pattern, &t, &perm));
    int64_t n = sla_pattern_ncols(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    SuiteSparse_long *Ap = sla_malloc((size_t)n + 1, sizeof *Ap, "column pointers");
    SuiteSparse_long *Ai = sla_malloc((size_t)nnz, sizeof *Ai, "row indices");
    int nv = field == SLA_MM_COMPLEX ? 2 : 1;       /* doubles per value: (re, im) pairs */
    double *Ax = sla_malloc((size_t)nnz, (size_t)nv * sizeof *Ax, "values");
    sla_status st = Ap && Ai && Ax ? SLA_OK : io_name_error(SLA_ENOMEM, __func__, path);
    if (st == SLA_OK) {
        const int64_t *rp = sla_pattern_rowptr(t);
        const int32_t *ci = sla_pattern_colind(t);
        for (int64_t j = 0; j <= n; j++) Ap[j] = rp[j];
        /* RBwrite needs Ax even for a pattern matrix (it returns RBIO_ARG_ERROR when Ax is
         * NULL); with mkind 1 it writes no values, so ones stand in */
        for (int64_t q = 0; q < nnz; q++) {
            int64_t s = index * nnz + perm[q];
            Ai[q] = ci[q];
            for (int c = 0; c < nv; c++) {
                /* entry s as doubles: one for a real dtype, two for a complex one */
                int64_t e = cplx ? 2 * s + c : s;
                Ax[nv * q + c] = field == SLA_MM_PATTERN ? 1.0
                    : A->dtype == SLA_FLOAT64 || A->dtype == SLA_COMPLEX128
                        ? ((const double *)A->values)[e] : ((const float *)A->values)[e];
            }
        }
        io_out o;
        st = io_out_open(&o, path, __func__);
        int64_t m = sla_pattern_nrows(A->pattern);
        if (st == SLA_OK && o.tmp) {
            close(o.fd);                         /* RBwrite opens the file by its name */
            o.fd = -1;
            st = write_checked(o.tmp, path, m, n, Ap, Ai, Ax, field, title);
        } else if (st == SLA_OK) {
            st = write_device(&o, m, n, Ap, Ai, Ax, field, title);
        }
        if (st == SLA_OK) st = io_out_commit(&o);
        else if (o.target) io_out_abort(&o);
    }
    sla_free(Ap);
    sla_free(Ai);
    sla_free(Ax);
    return st;
}
