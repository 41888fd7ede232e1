/* Line-level helpers of the Matrix Market reader: blank and comment lines, end-of-line checks,
 * messages "NAME:LINE: what". The reader is line oriented (one entry per line) but never
 * copies lines: it walks the whole text once with a cursor. */
#include <stdarg.h>
#include <stdio.h>

#include "io/mm_internal.h"

const unsigned char mm_blank[256] = {[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\f'] = 1, ['\v'] = 1};

sla_status mm_fail(const mm_cursor *c, int64_t line, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sla_error_set(SLA_EPARSE, c->func, "%s:%lld: %s", c->name, (long long)line, what);
}

int mm_next_data_line(mm_cursor *c)
{
    const char *p = c->p, *end = c->end;
    for (;;) {
        while (p < end && mm_is_blank(*p)) p++;
        if (p == end) break;
        if (*p == '\n') {
            p++;
            c->line++;
            continue;
        }
        if (*p != '%') break;
        while (p < end && *p != '\n') p++;      /* the newline itself is counted above */
    }
    c->p = p;
    return p < end;
}

const char *mm_token(const char *p, const char *end, char *buf, size_t size)
{
    size_t n = 0;
    while (p < end && n + 1 < size && *p != '\n' && !mm_is_blank(*p)) {
        unsigned char ch = (unsigned char)*p++;
        buf[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    int cut = p < end && *p != '\n' && !mm_is_blank(*p);
    if (cut && n >= 3) buf[n - 3] = buf[n - 2] = buf[n - 1] = '.';
    buf[n] = '\0';
    return buf;
}

sla_status mm_end_line(mm_cursor *c, const char *what)
{
    const char *p = c->p;
    while (p < c->end && mm_is_blank(*p)) p++;
    if (p < c->end && *p != '\n') {
        char tok[40];
        return mm_fail(c, c->line, "unexpected '%s' after the %s", mm_token(p, c->end, tok, sizeof tok),
                       what);
    }
    if (p < c->end) {
        p++;
        c->line++;
    }
    c->p = p;
    return SLA_OK;
}
