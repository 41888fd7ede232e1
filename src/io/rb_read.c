/* Rutherford–Boeing / Harwell–Boeing reader (Duff, Grimes, Lewis, "The Rutherford–Boeing
 * Sparse Matrix Collection", RAL-TR-97-031): a header of 4 lines (5 for a Harwell–Boeing file
 * with right-hand sides), then column pointers, row indices and values in the fixed-width
 * Fortran formats the header gives.
 *
 * Why not RBio's RBread: it reads blank-separated tokens with sscanf, so a value line with one
 * token too many shifted every later value and still returned success, "1.0D+05" read as 1.0
 * (sscanf stops at the D), touching fields needed a re-spaced copy, and the line counts of the
 * header were not checked. Here every field is read from its columns as Fortran would read it,
 * columns past the format are ignored as in Fortran, and everything the header declares is
 * checked: the number of lines of each section, the values on each line, nothing left over.
 * Structural checks are RBio's (pointers from 1 to nnz + 1 and non-decreasing, row indices in
 * range and increasing within a column, only the lower triangle for symmetric storage). */
#include <stdio.h>
#include <string.h>

#include "io/rb_internal.h"

typedef struct rb_header {
    int64_t crd[5];          /* TOTCRD PTRCRD INDCRD VALCRD [RHSCRD] */
    char mtype[4];           /* e.g. "RSA", upper case */
    int64_t nrow, ncol, nnz;
    rb_format ptr, ind, val;
    int64_t nval;            /* numbers in the value section: nnz, 2 nnz (complex) or 0 */
} rb_header;

/* The next line without its newline (and a '\r' before it); 0 at the end of the text.
 * c->line becomes its number. */
static int next_line(mm_cursor *c, const char **s, size_t *len)
{
    if (c->p >= c->end) return 0;
    const char *q = memchr(c->p, '\n', (size_t)(c->end - c->p));
    const char *stop = q ? q : c->end;
    *s = c->p;
    *len = (size_t)(stop - c->p);
    if (*len > 0 && stop[-1] == '\r') (*len)--;
    c->p = q ? q + 1 : c->end;
    c->line++;
    return 1;
}

static int blank(const char *s, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (!mm_is_blank(s[k])) return 0;
    return 1;
}

/* Between min and max non-negative integers on a header line; returns how many, or -1 after
 * raising the error. */
static int header_ints(mm_cursor *c, const char *s, size_t len, int min, int max,
                       const char *names, int64_t *v)
{
    const char *p = s, *end = s + len;
    int k = 0;
    for (;;) {
        int64_t x;
        char tok[40];
        mm_num st = mm_scan_int64(&p, end, &x);
        if (st == MM_NUM_MISSING) break;
        if (st != MM_NUM_OK || x < 0 || k == max) {
            mm_fail(c, c->line, st != MM_NUM_OK ? "'%s' is not a non-negative integer (%s)"
                                : x < 0 ? "'%s' is negative (%s)"
                                        : "unexpected '%s' after the numbers %s",
                    mm_token(p, end, tok, sizeof tok), names);
            return -1;
        }
        v[k++] = x;
    }
    if (k < min) {
        mm_fail(c, c->line, "%d numbers where %s are expected", k, names);
        return -1;
    }
    return k;
}

static sla_status parse_type(mm_cursor *c, rb_header *h)
{
    const char *t = h->mtype;
    if (!strchr("RCPI", t[0]) || !strchr("SUHZR", t[1]) || !strchr("AE", t[2]))
        return mm_fail(c, 3, "matrix type '%s' is not one of [RCPI][SUHZR][AE] (RUA, RSA, PSA, "
                       "CHA, ...)", t);
    if (t[2] == 'E')
        return sla_error_set(SLA_EUNSUPPORTED, c->func, "%s:3: matrix type '%s': elemental "
                             "(finite-element) form is not supported", c->name, t);
    if (strchr("SHZ", t[1]) && h->nrow != h->ncol)
        return mm_fail(c, 3, "a %s matrix must be square, but it is %lld × %lld", t,
                       (long long)h->nrow, (long long)h->ncol);
    return SLA_OK;
}

/* Lines 1-4 (and 5 when Harwell–Boeing right-hand sides follow). */
static sla_status parse_header(mm_cursor *c, rb_header *h)
{
    const char *s;
    size_t len;
    memset(h, 0, sizeof *h);
    if (!next_line(c, &s, &len)) return mm_fail(c, 1, "empty file (no Rutherford–Boeing header)");
    if (!next_line(c, &s, &len)) return mm_fail(c, 2, "end of file in the header (line counts)");
    if (header_ints(c, s, len, 4, 5, "TOTCRD PTRCRD INDCRD VALCRD [RHSCRD]", h->crd) < 0)
        return SLA_EPARSE;
    if (!next_line(c, &s, &len) || len < 3)
        return mm_fail(c, 3, "end of line or file where the matrix type (RUA, RSA, ...) is expected");
    for (int k = 0; k < 3; k++) {
        char ch = s[k] >= 'a' && s[k] <= 'z' ? (char)(s[k] - 'a' + 'A') : s[k];
        h->mtype[k] = ch >= 'A' && ch <= 'Z' ? ch : '?';
    }
    int64_t dims[4];
    if (header_ints(c, s + 3, len - 3, 3, 4, "NROW NCOL NNZ [NELTVL]", dims) < 0) return SLA_EPARSE;
    h->nrow = dims[0];
    h->ncol = dims[1];
    h->nnz = dims[2];
    if (h->ncol == INT64_MAX || h->nnz > INT64_MAX / 2)       /* NCOL + 1 and 2 NNZ must fit */
        return mm_fail(c, 3, "NCOL = %lld or NNZ = %lld is too large", (long long)h->ncol,
                       (long long)h->nnz);
    SLA_TRY(parse_type(c, h));
    if (!next_line(c, &s, &len)) return mm_fail(c, 4, "end of file where the formats are expected");
    SLA_TRY(rb_parse_format(c, s, len < 16 ? len : 16, "the column pointer", &h->ptr));
    SLA_TRY(rb_parse_format(c, s + (len < 16 ? len : 16), len < 16 ? 0 : len < 32 ? len - 16 : 16,
                            "the row index", &h->ind));
    if (h->ptr.kind != 'I' || h->ind.kind != 'I')
        return mm_fail(c, 4, "pointer and index formats must be integer (I) formats, not '%s', '%s'",
                       h->ptr.text, h->ind.text);
    h->nval = h->mtype[0] == 'P' ? 0 : h->mtype[0] == 'C' ? 2 * h->nnz : h->nnz;
    if (h->nval > 0) {
        SLA_TRY(rb_parse_format(c, s + (len < 32 ? len : 32), len < 32 ? 0 : len < 52 ? len - 32 : 20,
                                "the value", &h->val));
        if ((h->val.kind == 'I') != (h->mtype[0] == 'I'))
            return mm_fail(c, 4, "a %s matrix needs %s value format, not '%s'", h->mtype,
                           h->mtype[0] == 'I' ? "an integer (I)" : "a real (E, D, F, G)", h->val.text);
    }
    if (h->crd[4] > 0 && !next_line(c, &s, &len))        /* right-hand side types: not read */
        return mm_fail(c, 5, "end of file where the right-hand side line is expected");
    return SLA_OK;
}

/* The declared line counts must be what the counts and formats take, and the text must be
 * long enough for the counts (every number takes at least one byte): nothing is allocated
 * for a header that declares more than the file holds. */
static sla_status check_counts(mm_cursor *c, const rb_header *h)
{
    static const char *const crd[] = {"PTRCRD", "INDCRD", "VALCRD"};
    static const char *const what[] = {"column pointers", "row indices", "values"};
    const rb_format *f[] = {&h->ptr, &h->ind, &h->val};
    int64_t n[] = {h->ncol + 1, h->nnz, h->nval};
    size_t left = (size_t)(c->end - c->p);
    for (int s = 0; s < 3; s++) {
        int64_t lines = n[s] == 0 ? 0 : (n[s] - 1) / f[s]->count + 1;
        if (h->crd[s + 1] != lines)
            return mm_fail(c, 2, "%s = %lld, but %lld %s%s%s take %lld line%s", crd[s],
                           (long long)h->crd[s + 1], (long long)n[s], what[s],
                           n[s] ? " in " : "", n[s] ? f[s]->text : "", (long long)lines,
                           lines == 1 ? "" : "s");
        if ((uint64_t)n[s] > left)
            return mm_fail(c, 3, "the header declares %lld %s, more than the %zu bytes after the "
                           "header can hold", (long long)n[s], what[s], left);
    }
    return SLA_OK;
}

static sla_status field_error(const mm_cursor *c, rb_field r, const char *one, int64_t k,
                              const rb_format *f, size_t col, const char *s, size_t len)
{
    char tok[48];
    snprintf(tok, sizeof tok, "%.*s", (int)(len < 40 ? len : 40), s);
    for (char *q = tok; *q; q++)
        if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f) *q = '?';
    const char *why = r == RB_FIELD_BLANK ? "is blank"
                    : r == RB_FIELD_RANGE ? "is out of range"
                    : r == RB_FIELD_NO_POINT ? "has no decimal point (Fortran would read it with "
                                               "the format's implied decimals; write it with a '.')"
                    : f->kind == 'I' ? "is not an integer" : "is not a number";
    return mm_fail(c, c->line, "%s %lld ('%s', columns %zu-%zu of %s) %s", one, (long long)k + 1,
                   tok, col + 1, col + (size_t)f->width, f->text, why);
}

/* One field into iv[k] (integer sections) or dv[k] (values: an I format gives integers). */
static rb_field read_field(const char *s, size_t len, const rb_format *f, int64_t *iv, double *dv,
                           int64_t k)
{
    if (iv) return rb_read_int(s, len, &iv[k]);
    if (f->kind != 'I') return rb_read_real(s, len, f, &dv[k]);
    int64_t t = 0;
    rb_field r = rb_read_int(s, len, &t);
    dv[k] = (double)t;
    return r;
}

/* n numbers in the lines the header declares, `count` fields of `width` columns per line (the
 * last line may hold fewer: the rest of its record must be blank). */
static sla_status read_section(mm_cursor *c, const rb_format *f, int64_t n, const char *what,
                               const char *one, int64_t *iv, double *dv, int64_t *first_line)
{
    *first_line = c->line + 1;
    for (int64_t k = 0; k < n;) {
        const char *s;
        size_t len;
        if (!next_line(c, &s, &len))
            return mm_fail(c, c->line, "end of file after %lld of the %lld %s", (long long)k,
                           (long long)n, what);
        int64_t here = n - k < f->count ? n - k : f->count;
        size_t w = (size_t)f->width;
        for (int64_t q = 0; q < here; q++, k++) {
            size_t a = (size_t)q * w, b = a + w;
            const char *fs = s + (a < len ? a : len);
            size_t fl = (b < len ? b : len) - (a < len ? a : len);
            rb_field r = read_field(fs, fl, f, iv, dv, k);
            if (r != RB_FIELD_OK) return field_error(c, r, one, k, f, a, fs, fl);
        }
        size_t a = (size_t)here * w, rec = (size_t)f->count * w, b = rec < len ? rec : len;
        if (a < b && !blank(s + a, b - a)) {
            char tok[40];
            return mm_fail(c, c->line, "data beyond the %lld %s the header declares: '%s' in "
                           "columns %zu-%zu of %s", (long long)n, what,
                           mm_token(s + a + strspn(s + a, " "), s + b, tok, sizeof tok), a + 1, b,
                           f->text);
        }
    }
    return SLA_OK;
}

/* Right-hand sides (not read) and then nothing but blank lines. */
static sla_status check_end(mm_cursor *c, const rb_header *h)
{
    const char *s;
    size_t len;
    for (int64_t k = 0; k < h->crd[4] && next_line(c, &s, &len); k++) {}
    while (next_line(c, &s, &len))
        if (!blank(s, len)) {
            char tok[40];
            return mm_fail(c, c->line, "unexpected '%s' after the data the header declares",
                           mm_token(s + strspn(s, " \t"), s + len, tok, sizeof tok));
        }
    return SLA_OK;
}

typedef struct rb_data {
    int64_t *ap, *ai;
    double *x;
    int64_t line[3];         /* first line of each section */
} rb_data;

/* Line of number k of section s. */
static int64_t line_of(const rb_header *h, const rb_data *d, int s, int64_t k)
{
    const rb_format *f = s == 0 ? &h->ptr : s == 1 ? &h->ind : &h->val;
    return d->line[s] + k / f->count;
}

static sla_status check_structure(const mm_cursor *c, const rb_header *h, const rb_data *d)
{
    const int64_t *ap = d->ap, *ai = d->ai;
    if (ap[0] != 1)
        return mm_fail(c, d->line[0], "the first column pointer is %lld (must be 1)", (long long)ap[0]);
    for (int64_t j = 0; j < h->ncol; j++)
        if (ap[j + 1] < ap[j])
            return mm_fail(c, line_of(h, d, 0, j + 1), "column pointer %lld (%lld) is less than "
                           "the one before it (%lld)", (long long)j + 2, (long long)ap[j + 1],
                           (long long)ap[j]);
    if (ap[h->ncol] != h->nnz + 1)
        return mm_fail(c, line_of(h, d, 0, h->ncol), "the last column pointer is %lld, but the "
                       "header declares NNZ = %lld (it must be %lld)", (long long)ap[h->ncol],
                       (long long)h->nnz, (long long)h->nnz + 1);
    int sym = strchr("SHZ", h->mtype[1]) != NULL;
    for (int64_t j = 0; j < h->ncol; j++)
        for (int64_t p = ap[j] - 1; p < ap[j + 1] - 1; p++) {
            int64_t i = ai[p], line = line_of(h, d, 1, p);
            if (i < 1 || i > h->nrow)
                return mm_fail(c, line, "row index %lld (entry %lld) is out of range [1, %lld]",
                               (long long)i, (long long)p + 1, (long long)h->nrow);
            if (p > ap[j] - 1 && i <= ai[p - 1])
                return mm_fail(c, line, "row indices of column %lld are not increasing: %lld "
                               "after %lld%s", (long long)j + 1, (long long)i, (long long)ai[p - 1],
                               i == ai[p - 1] ? " (a duplicate entry)" : "");
            if (sym && i < j + 1)
                return mm_fail(c, line, "entry (%lld, %lld) is above the diagonal, but a %s file "
                               "stores the lower triangle only", (long long)i, (long long)j + 1,
                               h->mtype);
        }
    return SLA_OK;
}

/* Entries in column order, each stored off-diagonal entry of symmetric storage followed by its
 * mirror (as sla_mm_read does). */
static sla_status build_coo(const mm_cursor *c, const rb_header *h, const rb_data *d,
                            sla_coo **out)
{
    char t0 = h->mtype[0], t1 = h->mtype[1];
    int sym = strchr("SHZ", t1) != NULL, nv = t0 == 'C' ? 2 : 1;
    int64_t total = h->nnz;
    for (int64_t j = 0; sym && j < h->ncol; j++)
        for (int64_t p = d->ap[j] - 1; p < d->ap[j + 1] - 1; p++) total += d->ai[p] != j + 1;
    sla_coo *a = NULL;
    SLA_TRY(mm_coo_create(h->nrow, h->ncol, t0 == 'P' ? SLA_MM_PATTERN : t0 == 'I' ? SLA_MM_INTEGER
                          : t0 == 'C' ? SLA_MM_COMPLEX : SLA_MM_REAL,
                          t1 == 'S' ? SLA_MM_SYMMETRIC : t1 == 'H' ? SLA_MM_HERMITIAN
                          : t1 == 'Z' ? SLA_MM_SKEW_SYMMETRIC : SLA_MM_GENERAL, total, &a));
    for (int64_t j = 0; j < h->ncol; j++)
        for (int64_t p = d->ap[j] - 1; p < d->ap[j + 1] - 1; p++) {
            /* pattern entries are 1 (a PZA mirror -1, RBio's convention) */
            double v[2] = {t0 == 'P' ? 1.0 : d->x[nv * p], nv == 2 ? d->x[2 * p + 1] : 0.0};
            int64_t line = t0 == 'P' ? line_of(h, d, 1, p) : line_of(h, d, 2, nv * p);
            sla_status st = mm_coo_store(c, line, a, d->ai[p] - 1, j, v);
            if (st != SLA_OK) {
                sla_coo_free(&a);
                return st;
            }
        }
    *out = a;
    return SLA_OK;
}

static sla_status parse(const char *text, size_t len, const char *name, const char *func,
                        sla_coo **out)
{
    mm_cursor c = {text, text + len, 0, name, func};
    rb_header h;
    SLA_TRY(parse_header(&c, &h));
    SLA_TRY(check_counts(&c, &h));
    rb_data d = {0};
    d.ap = sla_malloc((size_t)h.ncol + 1, sizeof(int64_t), "column pointers");
    d.ai = d.ap ? sla_malloc((size_t)h.nnz, sizeof(int64_t), "row indices") : NULL;
    d.x = d.ai ? sla_malloc((size_t)h.nval, sizeof(double), "values") : NULL;
    sla_status st = d.x ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK)
        st = read_section(&c, &h.ptr, h.ncol + 1, "column pointers", "column pointer", d.ap, NULL,
                          &d.line[0]);
    if (st == SLA_OK)
        st = read_section(&c, &h.ind, h.nnz, "row indices", "row index", d.ai, NULL, &d.line[1]);
    if (st == SLA_OK && h.nval > 0)
        st = read_section(&c, &h.val, h.nval, "values", "value", NULL, d.x, &d.line[2]);
    if (st == SLA_OK) st = check_end(&c, &h);
    if (st == SLA_OK) st = check_structure(&c, &h, &d);
    if (st == SLA_OK) st = build_coo(&c, &h, &d, out);
    sla_free(d.ap);
    sla_free(d.ai);
    sla_free(d.x);
    return st;
}

sla_status rb_read_file(const char *path, const char *func, sla_coo **out)
{
    return io_read_file(path, func, parse, out);
}

sla_status sla_rb_read(const char *path, sla_coo **out)
{
    return rb_read_file(path, __func__, out);
}
