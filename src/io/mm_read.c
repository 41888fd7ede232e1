/* Matrix Market reader: entries of coordinate and array files into an sla_coo, symmetric
 * storage expanded in place (each stored off-diagonal entry followed by its mirror).
 *
 * The whole text is in memory, so the number of entries it can hold is bounded by its length:
 * the arrays are allocated once with capacity min(declared, what fits in the remaining bytes)
 * and never grow. A header declaring 10^18 entries in a 100-byte file allocates for ~25. */
#include <string.h>

#include "io/mm_internal.h"

/* ---- one entry ---- */

static sla_status read_index(mm_cursor *c, const char *what, int64_t n, int64_t *out)
{
    int64_t v = 0;
    char tok[40];
    switch (mm_scan_int64(&c->p, c->end, &v)) {
    case MM_NUM_OK: break;
    case MM_NUM_MISSING: return mm_fail(c, c->line, "missing %s index", what);
    case MM_NUM_RANGE:
        return mm_fail(c, c->line, "%s index '%s' overflows int64", what,
                       mm_token(c->p, c->end, tok, sizeof tok));
    default:
        return mm_fail(c, c->line, "%s index '%s' is not an integer", what,
                       mm_token(c->p, c->end, tok, sizeof tok));
    }
    if (v == 0) return mm_fail(c, c->line, "%s index 0 (Matrix Market indices start at 1)", what);
    if (v < 1 || v > n)
        return mm_fail(c, c->line, "%s index %lld out of range [1, %lld]", what, (long long)v,
                       (long long)n);
    *out = v - 1;
    return SLA_OK;
}

/* One number of an entry: part 0 is the value (or real part), part 1 the imaginary part. */
static sla_status read_number(mm_cursor *c, sla_mm_field field, int part, double *out)
{
    static const char *const parts[] = {"value", "imaginary part"};
    char tok[40];
    mm_num st;
    if (field == SLA_MM_INTEGER) {
        int64_t k = 0;
        st = mm_scan_int64(&c->p, c->end, &k);
        *out = (double)k;    /* exact up to 2^53, rounded beyond */
        if (st == MM_NUM_BAD)
            return mm_fail(c, c->line, "value '%s' is not an integer (the field is 'integer')",
                           mm_token(c->p, c->end, tok, sizeof tok));
    } else {
        st = mm_scan_double(&c->p, c->end, out);
    }
    switch (st) {
    case MM_NUM_OK: return SLA_OK;
    case MM_NUM_MISSING: return mm_fail(c, c->line, "missing %s", parts[part]);
    case MM_NUM_RANGE:
        return mm_fail(c, c->line, "%s '%s' overflows %s", parts[part],
                       mm_token(c->p, c->end, tok, sizeof tok),
                       field == SLA_MM_INTEGER ? "int64" : "double");
    case MM_NUM_LONG:
        return mm_fail(c, c->line, "%s '%s' is longer than %d characters", parts[part],
                       mm_token(c->p, c->end, tok, sizeof tok), MM_NUM_MAX_CHARS);
    default:
        return mm_fail(c, c->line, "%s '%s' is not a number", parts[part],
                       mm_token(c->p, c->end, tok, sizeof tok));
    }
}

static sla_status read_values(mm_cursor *c, sla_mm_field field, double v[2])
{
    v[0] = 1.0;              /* pattern entries */
    v[1] = 0.0;
    if (field == SLA_MM_PATTERN) return SLA_OK;
    SLA_TRY(read_number(c, field, 0, &v[0]));
    return field == SLA_MM_COMPLEX ? read_number(c, field, 1, &v[1]) : SLA_OK;
}

/* ---- the body ---- */

static sla_status end_of_text(mm_cursor *c, int64_t read, int64_t declared, const char *what)
{
    return mm_fail(c, c->line, "end of file after %lld of the %lld %s declared by the size line",
                   (long long)read, (long long)declared, what);
}

static sla_status parse_coordinate(mm_cursor *c, const mm_header *h, sla_coo *a)
{
    for (int64_t k = 0; k < h->nstored; k++) {
        if (!mm_next_data_line(c)) return end_of_text(c, k, h->nstored, "entries");
        int64_t line = c->line, i, j;
        double v[2];
        SLA_TRY(read_index(c, "row", h->nrows, &i));
        SLA_TRY(read_index(c, "column", h->ncols, &j));
        SLA_TRY(read_values(c, h->field, v));
        SLA_TRY(mm_end_line(c, "entry"));
        SLA_TRY(mm_coo_store(c, line, a, i, j, v));
    }
    if (mm_next_data_line(c))
        return mm_fail(c, c->line, "more entries than the %lld declared by the size line",
                       (long long)h->nstored);
    return SLA_OK;
}

/* Column-major values; symmetric and Hermitian files hold the lower triangle with the
 * diagonal, skew-symmetric ones the strict lower triangle (the MM definition). */
static sla_status parse_array(mm_cursor *c, const mm_header *h, sla_coo *a)
{
    int64_t skip = h->symmetry == SLA_MM_GENERAL ? -1 : h->symmetry == SLA_MM_SKEW_SYMMETRIC;
    int64_t i = skip < 0 ? 0 : skip, j = 0;    /* first row of column j: 0, j or j + 1 */
    for (int64_t k = 0; k < h->nstored; k++) {
        if (!mm_next_data_line(c)) return end_of_text(c, k, h->nstored, "values");
        int64_t line = c->line;
        double v[2];
        SLA_TRY(read_values(c, h->field, v));
        SLA_TRY(mm_end_line(c, "value"));
        SLA_TRY(mm_coo_store(c, line, a, i, j, v));
        if (++i == h->nrows) {
            j++;
            i = skip < 0 ? 0 : j + skip;
        }
    }
    if (mm_next_data_line(c))
        return mm_fail(c, c->line, "more values than the %lld an array of this size holds",
                       (long long)h->nstored);
    return SLA_OK;
}

/* Entries (after expansion) the text can hold: an entry takes at least "1 1\n" plus "1 " per
 * value (coordinate), or "1\n" per value (array); the last one may lack its newline. */
static int64_t capacity(const mm_header *h, size_t remaining)
{
    size_t nv = h->field == SLA_MM_COMPLEX ? 2 : h->field == SLA_MM_PATTERN ? 0 : 1;
    size_t minlen = h->is_array ? 2 * nv : 4 + 2 * nv;
    uint64_t fit = ((uint64_t)remaining + 1) / minlen;
    int64_t stored = (uint64_t)h->nstored < fit ? h->nstored : (int64_t)fit;
    return h->symmetry == SLA_MM_GENERAL ? stored : 2 * stored;
}

static sla_status parse(const char *text, size_t len, const char *name, const char *func,
                        sla_coo **out)
{
    mm_cursor c = {text, text + len, 1, name, func};
    mm_header h;
    SLA_TRY(mm_parse_header(&c, &h));
    sla_coo *a = NULL;
    SLA_TRY(mm_coo_create(h.nrows, h.ncols, h.field, h.symmetry,
                          capacity(&h, (size_t)(c.end - c.p)), &a));
    a->is_array = h.is_array;
    sla_status st = h.is_array ? parse_array(&c, &h, a) : parse_coordinate(&c, &h, a);
    if (st != SLA_OK) {
        sla_coo_free(&a);
        return st;
    }
    *out = a;
    return SLA_OK;
}

sla_status mm_read_text(const char *text, size_t len, const char *name, const char *func,
                        sla_coo **out)
{
    if (!mm_is_gzip(text, len)) return io_name_error(parse(text, len, name, func, out), func, name);
    char *plain = NULL;
    size_t plain_len = 0;
    SLA_TRY(io_name_error(mm_gunzip(text, len, name, func, &plain, &plain_len), func, name));
    sla_status st = parse(plain, plain_len, name, func, out);
    sla_free(plain);
    return io_name_error(st, func, name);
}

sla_status mm_read_path(const char *path, const char *func, sla_coo **out)
{
    return io_read_file(path, func, mm_read_text, out);
}

/* ---- public ---- */

sla_status sla_mm_read(const char *path, sla_coo **out)
{
    return mm_read_path(path, __func__, out);
}

sla_status sla_mm_read_buffer(const char *text, size_t len, const char *name, sla_coo **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(text || len == 0, "text is NULL but len = %zu", len);
    return mm_read_text(text ? text : "", len, name ? name : "(buffer)", __func__, out);
}

void sla_coo_free(sla_coo **coo)
{
    if (!coo || !*coo) return;
    sla_free((*coo)->row);
    sla_free((*coo)->col);
    sla_free((*coo)->values);
    sla_free(*coo);
    *coo = NULL;
}
