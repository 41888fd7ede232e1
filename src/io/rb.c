/* Rutherford–Boeing files through SuiteSparse's RBio (RBread, 64-bit integer version). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <RBio.h>

#include "core/internal.h"

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
    case RBIO_HEADER_IOERROR: return "cannot read the header";
    case RBIO_CP_IOERROR: return "cannot read the column pointers";
    case RBIO_ROW_IOERROR: return "cannot read the row indices";
    case RBIO_VALUE_IOERROR: return "cannot read the numerical values";
    case RBIO_FILE_IOERROR: return "cannot read the file";
    default: return "unknown RBio error";
    }
}

/* RBread with build_upper = 1 already expands symmetric (S), skew (Z) and Hermitian (H)
 * storage into both triangles, so the CSC arrays are the whole matrix. */
static sla_status csc_to_coo(SuiteSparse_long nrow, SuiteSparse_long ncol, SuiteSparse_long mkind,
                             SuiteSparse_long skind, const SuiteSparse_long *Ap,
                             const SuiteSparse_long *Ai, const double *Ax, const double *Az,
                             sla_coo **out)
{
    int64_t nnz = Ap[ncol];
    int cplx = mkind == 2;
    sla_coo *c = sla_calloc(1, sizeof *c, "coo");
    if (!c) return SLA_ENOMEM;
    c->row = sla_malloc((size_t)nnz, sizeof(int64_t), "rows");
    c->col = sla_malloc((size_t)nnz, sizeof(int64_t), "cols");
    c->values = sla_malloc((size_t)nnz * (cplx ? 2 : 1), sizeof(double), "values");
    if (!c->row || !c->col || !c->values) { sla_coo_free(&c); return SLA_ENOMEM; }
    c->nrows = nrow;
    c->ncols = ncol;
    c->nnz = nnz;
    c->field = mkind == 1 ? SLA_MM_PATTERN : mkind == 3 ? SLA_MM_INTEGER
             : cplx ? SLA_MM_COMPLEX : SLA_MM_REAL;
    c->symmetry = skind == 1 ? SLA_MM_SYMMETRIC : skind == 2 ? SLA_MM_HERMITIAN
                : skind == 3 ? SLA_MM_SKEW_SYMMETRIC : SLA_MM_GENERAL;
    int64_t stored = 0;
    for (SuiteSparse_long j = 0; j < ncol; j++)
        for (SuiteSparse_long q = Ap[j]; q < Ap[j + 1]; q++) {
            c->row[q] = Ai[q];
            c->col[q] = j;
            if (skind == 0 || Ai[q] >= j) stored++;   /* one triangle was in the file */
            if (cplx) {
                c->values[2 * q] = Ax ? Ax[q] : 1;
                c->values[2 * q + 1] = Az ? Az[q] : 0;
            } else {
                c->values[q] = (mkind == 1 || !Ax) ? 1.0 : Ax[q];
            }
        }
    c->nnz_stored = stored;
    *out = c;
    return SLA_OK;
}

/* ---- fixed-width fields --------------------------------------------------------------------
 * RBio reads values as blank-separated tokens, but Rutherford–Boeing data are Fortran
 * fixed-width fields that may touch ("4.00000000E+00-1.00000000E+00", as in the Harwell–Boeing
 * g20.rua). When RBio fails on the data, the file is copied with one blank between fields (the
 * widths come from the header's Fortran formats, e.g. (16I5), (5E15.8), (1P4D20.12)) and RBio
 * reads the copy. */

/* Fields per line and field width of a Fortran format such as "(1P,5E15.8)"; 0 on failure. */
static int fortran_format(const char *fmt, int *count, int *width)
{
    const char *p = strchr(fmt, '(');
    if (!p) return 0;
    p++;
    while (*p == ' ') p++;
    const char *q = p;
    while (isdigit((unsigned char)*q)) q++;
    if (q > p && (*q == 'P' || *q == 'p')) {           /* scale factor: skip "1P" and a comma */
        p = q + 1;
        while (*p == ',' || *p == ' ') p++;
    }
    *count = isdigit((unsigned char)*p) ? (int)strtol(p, (char **)&p, 10) : 1;
    if (!strchr("IiEeDdFfGg", *p) || !*p) return 0;
    p++;
    *width = (int)strtol(p, NULL, 10);
    return *count > 0 && *width > 0;
}

/* Copies `lines` data lines of f to out, splitting each into fields of `width` characters. */
static int respace(FILE *f, FILE *out, long lines, int count, int width, char *buf, size_t cap)
{
    for (long l = 0; l < lines; l++) {
        if (!fgets(buf, (int)cap, f)) return 0;
        size_t len = strcspn(buf, "\r\n");
        for (int k = 0; k < count && (size_t)k * (size_t)width < len; k++) {
            for (size_t c = (size_t)k * (size_t)width; c < (size_t)(k + 1) * (size_t)width && c < len; c++)
                fputc(buf[c] == 'D' || buf[c] == 'd' ? 'E' : buf[c], out);
            fputc(' ', out);
        }
        fputc('\n', out);
    }
    return 1;
}

/* Writes the respaced copy of path into a new temporary file; returns its name in tmp. */
static int respaced_copy(const char *path, char *tmp, size_t tmpcap)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[1024], fmt[4][24] = {{0}};
    long crd[5] = {0};
    int ok = 1;
    char *l1 = fgets(buf, sizeof buf, f) ? buf : NULL;          /* title and key */
    snprintf(tmp, tmpcap, "/tmp/sla-rb-XXXXXX");
    int fd = l1 ? mkstemp(tmp) : -1;
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    ok = out != NULL;
    if (ok) fputs(buf, out);
    ok = ok && fgets(buf, sizeof buf, f) &&
         sscanf(buf, "%ld %ld %ld %ld %ld", &crd[0], &crd[1], &crd[2], &crd[3], &crd[4]) >= 4;
    if (ok) fputs(buf, out);
    ok = ok && fgets(buf, sizeof buf, f);                          /* type and sizes */
    if (ok) fputs(buf, out);
    ok = ok && fgets(buf, sizeof buf, f);                          /* formats: A16 A16 A20 A20 */
    if (ok) {
        fputs(buf, out);
        memcpy(fmt[0], buf, 16);
        memcpy(fmt[1], buf + 16, 16);
        memcpy(fmt[2], buf + 32, 20);
    }
    if (ok && crd[4] > 0) ok = fgets(buf, sizeof buf, f) && fputs(buf, out) >= 0;
    int n[3], w[3];
    for (int s = 0; ok && s < 3; s++) {
        if (crd[s + 1] == 0) continue;
        ok = fortran_format(fmt[s], &n[s], &w[s]) && respace(f, out, crd[s + 1], n[s], w[s], buf, sizeof buf);
    }
    fclose(f);
    if (out && fclose(out) != 0) ok = 0;
    if (!ok && fd >= 0) unlink(tmp);
    return ok;
}

static SuiteSparse_long rb_read_any(const char *path, char title[73], char key[9], char mtype[4],
                                    SuiteSparse_long *nrow, SuiteSparse_long *ncol,
                                    SuiteSparse_long *mkind, SuiteSparse_long *skind,
                                    SuiteSparse_long **Ap, SuiteSparse_long **Ai, double **Ax,
                                    double **Az)
{
    SuiteSparse_long asize = 0, znz = 0, *Zp = NULL, *Zi = NULL;
    char name[4096];
    snprintf(name, sizeof name, "%s", path);    /* RBread takes a non-const name */
    SuiteSparse_long rc = RBread(name, 1, 0, title, key, mtype, nrow, ncol, mkind, skind, &asize,
                                 &znz, Ap, Ai, Ax, Az, &Zp, &Zi);
    if (rc == RBIO_CP_IOERROR || rc == RBIO_ROW_IOERROR || rc == RBIO_VALUE_IOERROR) {
        char tmp[64];
        if (respaced_copy(path, tmp, sizeof tmp)) {
            SuiteSparse_long rc2 = RBread(tmp, 1, 0, title, key, mtype, nrow, ncol, mkind, skind,
                                          &asize, &znz, Ap, Ai, Ax, Az, &Zp, &Zi);
            unlink(tmp);
            if (rc2 >= 0) rc = rc2;
        }
    }
    SuiteSparse_free(Zp);
    SuiteSparse_free(Zi);
    return rc;
}

sla_status sla_rb_read(const char *path, sla_coo **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(path, "path is NULL");
    FILE *f = fopen(path, "rb");
    if (!f) return SLA_FAIL(SLA_EIO, "%s: %s", path, strerror(errno));
    fclose(f);
    char title[73], key[9], mtype[4];
    SuiteSparse_long nrow = 0, ncol = 0, mkind = 0, skind = 0, *Ap = NULL, *Ai = NULL;
    double *Ax = NULL, *Az = NULL;
    SuiteSparse_long rc = rb_read_any(path, title, key, mtype, &nrow, &ncol, &mkind, &skind, &Ap,
                                      &Ai, &Ax, &Az);
    sla_status st;
    if (rc < 0)
        st = SLA_FAIL(rc == RBIO_OUT_OF_MEMORY ? SLA_ENOMEM : SLA_EPARSE, "%s: %s (RBio %ld)", path,
                      rbio_error(rc), (long)rc);
    else st = csc_to_coo(nrow, ncol, mkind, skind, Ap, Ai, Ax, Az, out);
    SuiteSparse_free(Ap);
    SuiteSparse_free(Ai);
    SuiteSparse_free(Ax);
    SuiteSparse_free(Az);
    return st;
}

sla_status sla_rb_write(const char *path, const sla_matrix *A, int64_t index, sla_mm_field field,
                        const char *title)
{
    SLA_CHECK_ARG(path, "path is NULL");
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, 0));
    SLA_CHECK_ARG(index >= 0 && index < A->batch, "index %lld out of range [0, %lld)",
                  (long long)index, (long long)A->batch);
    SLA_CHECK_ARG(field == SLA_MM_REAL || field == SLA_MM_INTEGER || field == SLA_MM_PATTERN,
                  "field must be real, integer or pattern");
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
    double *Ax = sla_malloc((size_t)nnz, sizeof *Ax, "values");
    sla_status st = Ap && Ai && Ax ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        const int64_t *rp = sla_pattern_rowptr(t);
        const int32_t *ci = sla_pattern_colind(t);
        for (int64_t j = 0; j <= n; j++) Ap[j] = rp[j];
        /* RBwrite needs Ax even for a pattern matrix (it returns RBIO_ARG_ERROR when Ax is
         * NULL); with mkind 1 it writes no values, so ones stand in */
        for (int64_t q = 0; q < nnz; q++) {
            int64_t s = index * nnz + perm[q];
            Ai[q] = ci[q];
            Ax[q] = field == SLA_MM_PATTERN ? 1.0
                  : A->dtype == SLA_FLOAT64 ? ((const double *)A->values)[s]
                                            : ((const float *)A->values)[s];
        }
        char name[4096], ttl[73], key[9] = "sla", mtype[4];
        snprintf(name, sizeof name, "%s", path);
        snprintf(ttl, sizeof ttl, "%s", title ? title : "written by sla");
        SuiteSparse_long mkind = field == SLA_MM_PATTERN ? 1 : field == SLA_MM_INTEGER ? 3 : 0;
        SuiteSparse_long rc = RBwrite(name, ttl, key, sla_pattern_nrows(A->pattern), n, Ap, Ai,
                                      Ax, NULL, NULL, NULL, mkind, mtype);
        if (rc < 0)
            st = SLA_FAIL(rc == RBIO_FILE_IOERROR ? SLA_EIO : SLA_EPARSE, "%s: %s (RBio %ld)", path,
                          rbio_error(rc), (long)rc);
    }
    sla_free(Ap);
    sla_free(Ai);
    sla_free(Ax);
    return st;
}
