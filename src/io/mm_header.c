/* Matrix Market header: the banner line
 *     %%MatrixMarket matrix <coordinate|array> <real|integer|pattern|complex> <symmetry>
 * (keywords in any case, any blanks between them), comment lines, and the size line
 * "rows cols entries" (coordinate) or "rows cols" (array). */
#include <string.h>

#include "io/mm_internal.h"

#define WORD_MAX 40

static int same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (mm_lower(*a) != *b) return 0;
    return *a == *b;
}

/* Index of `word` in the NULL-terminated list `names`, or -1. */
static int lookup(const char *word, const char *const *names)
{
    for (int k = 0; names[k]; k++)
        if (same_word(word, names[k])) return k;
    return -1;
}

/* Next blank-separated word of the current line into buf; 0 at the end of the line. */
static int next_word(mm_cursor *c, char *buf)
{
    while (c->p < c->end && mm_is_blank(*c->p)) c->p++;
    if (c->p == c->end || *c->p == '\n') return 0;
    mm_token(c->p, c->end, buf, WORD_MAX);
    while (c->p < c->end && *c->p != '\n' && !mm_is_blank(*c->p)) c->p++;
    return 1;
}

static sla_status parse_banner(mm_cursor *c, mm_header *h)
{
    static const char *const formats[] = {"coordinate", "array", NULL};
    static const char *const fields[] = {"real", "integer", "pattern", "complex", NULL};
    static const char *const symmetries[] = {"general", "symmetric", "skew-symmetric",
                                             "hermitian", NULL};
    static const char usage[] = "expected '%%MatrixMarket matrix coordinate|array "
                                "real|integer|pattern|complex general|symmetric|skew-symmetric|hermitian'";
    if (c->end - c->p >= 3 && memcmp(c->p, "\xEF\xBB\xBF", 3) == 0) c->p += 3;   /* UTF-8 BOM */
    char w[5][WORD_MAX];
    int n = 0;
    while (n < 5 && next_word(c, w[n])) n++;
    if (n == 0 || !same_word(w[0], "%%matrixmarket"))
        return mm_fail(c, 1, "not a Matrix Market file: the first line must start with "
                             "'%%%%MatrixMarket'");
    if (n < 5) return mm_fail(c, 1, "the banner has %d of 5 words; %s", n, usage);
    if (!same_word(w[1], "matrix"))
        return mm_fail(c, 1, "unsupported object '%s' (only 'matrix' is supported)", w[1]);
    int format = lookup(w[2], formats), field = lookup(w[3], fields);
    int symmetry = lookup(w[4], symmetries);
    if (format < 0) return mm_fail(c, 1, "illegal format word '%s'; %s", w[2], usage);
    if (field < 0) return mm_fail(c, 1, "illegal field word '%s'; %s", w[3], usage);
    if (symmetry < 0) return mm_fail(c, 1, "illegal symmetry word '%s'; %s", w[4], usage);
    h->is_array = format == 1;
    h->field = (sla_mm_field)field;
    h->symmetry = (sla_mm_symmetry)symmetry;
    if (h->is_array && h->field == SLA_MM_PATTERN)
        return mm_fail(c, 1, "the array format cannot have the field 'pattern'");
    if (h->field == SLA_MM_PATTERN && h->symmetry == SLA_MM_SKEW_SYMMETRIC)
        return mm_fail(c, 1, "a pattern matrix cannot be skew-symmetric");
    return mm_end_line(c, "symmetry word in the banner");
}

/* Count of values an array file holds: m·n, or a triangle of an n × n matrix. */
static sla_status array_count(mm_cursor *c, int64_t line, mm_header *h)
{
    int64_t m = h->nrows, n = h->ncols;
    if (h->symmetry == SLA_MM_GENERAL) {
        if (m != 0 && n > INT64_MAX / m)
            return mm_fail(c, line, "array of %lld × %lld values overflows int64", (long long)m,
                           (long long)n);
        h->nstored = m * n;
    } else {
        /* n(n ± 1)/2 without overflow: halve whichever factor is even */
        int64_t a = n, b = h->symmetry == SLA_MM_SKEW_SYMMETRIC ? n - 1 : n + 1;
        if (a % 2 == 0) a /= 2; else b /= 2;
        if (a != 0 && b > INT64_MAX / a)
            return mm_fail(c, line, "array triangle of a %lld × %lld matrix overflows int64",
                           (long long)n, (long long)n);
        h->nstored = n == 0 ? 0 : a * b;
    }
    return SLA_OK;
}

static sla_status parse_size_line(mm_cursor *c, mm_header *h)
{
    static const char *const names[] = {"number of rows", "number of columns", "number of entries"};
    if (!mm_next_data_line(c))
        return mm_fail(c, c->line, "missing size line (end of file after the header)");
    int want = h->is_array ? 2 : 3;
    int64_t v[3] = {0, 0, 0};
    for (int k = 0; k < want; k++) {
        char tok[40];
        switch (mm_scan_int64(&c->p, c->end, &v[k])) {
        case MM_NUM_OK: break;
        case MM_NUM_MISSING:
            return mm_fail(c, c->line, "the size line has %d numbers, expected %d (%s)", k, want,
                           h->is_array ? "rows columns" : "rows columns entries");
        case MM_NUM_RANGE:
            return mm_fail(c, c->line, "%s '%s' overflows int64", names[k],
                           mm_token(c->p, c->end, tok, sizeof tok));
        default:
            return mm_fail(c, c->line, "%s '%s' is not an integer", names[k],
                           mm_token(c->p, c->end, tok, sizeof tok));
        }
        if (v[k] < 0) return mm_fail(c, c->line, "%s %lld is negative", names[k], (long long)v[k]);
    }
    int64_t line = c->line;
    SLA_TRY(mm_end_line(c, "size line"));
    h->nrows = v[0];
    h->ncols = v[1];
    h->nstored = v[2];
    if (h->symmetry != SLA_MM_GENERAL && h->nrows != h->ncols) {
        static const char *const sym[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
        return mm_fail(c, line, "a %s matrix must be square, but the size line says %lld × %lld",
                       sym[h->symmetry], (long long)h->nrows, (long long)h->ncols);
    }
    return h->is_array ? array_count(c, line, h) : SLA_OK;
}

sla_status mm_parse_header(mm_cursor *c, mm_header *h)
{
    SLA_TRY(parse_banner(c, h));
    return parse_size_line(c, h);
}

size_t mm_header_length(const char *text, size_t len)
{
    const char *p = memchr(text, '\n', len), *end = text + len;
    while (p && ++p < end) {                       /* p: the start of a line after the banner */
        const char *q = p;
        while (q < end && mm_is_blank(*q)) q++;
        if (q == end) return 0;
        int data = *q != '\n' && *q != '%';
        p = memchr(q, '\n', (size_t)(end - q));
        if (data) return p ? (size_t)(p + 1 - text) : 0;
    }
    return 0;
}

size_t mm_gz_limit(const mm_header *h, size_t hlen)
{
    uint64_t nv = h->field == SLA_MM_COMPLEX ? 2 : h->field == SLA_MM_PATTERN ? 0 : 1;
    uint64_t per_entry = MM_GZ_BYTES_PER_NUMBER * (nv + (h->is_array ? 0 : 2));
    uint64_t room = SIZE_MAX - hlen - MM_GZ_SLACK;
    uint64_t n = (uint64_t)h->nstored;
    return per_entry && n > room / per_entry ? SIZE_MAX : hlen + MM_GZ_SLACK + (size_t)(n * per_entry);
}
