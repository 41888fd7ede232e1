/* Fortran edit descriptors and fixed-width fields of Rutherford–Boeing data (rb_internal.h).
 * A field is the `width` columns the format gives it, whatever they hold: "1.0E+00-2.0E+00"
 * is two fields of (2E7.1), and columns past count × width are not read at all, as in Fortran.
 * Numbers are converted by the Matrix Market scanners (correctly rounded) after the field is
 * rewritten in their syntax (a D exponent becomes e, a scale factor an exponent). */
#include <stdio.h>
#include <string.h>

#include "io/rb_internal.h"

static int is_space(char ch) { return ch == ' '; }

/* An unsigned decimal at *p (at most 9 digits); -1 if there is none. */
static int read_count(const char **p, const char *end)
{
    int v = -1, n = 0;
    for (; *p < end && mm_is_digit(**p) && n < 9; (*p)++, n++) v = (v < 0 ? 0 : v * 10) + (**p - '0');
    return *p < end && mm_is_digit(**p) ? -1 : v;
}

/* [kP[,]] [r] L w [.d] [E e], inside the parentheses. */
sla_status rb_parse_format(const mm_cursor *c, const char *text, size_t len, const char *what,
                           rb_format *f)
{
    memset(f, 0, sizeof *f);
    while (len > 0 && is_space(text[len - 1])) len--;
    while (len > 0 && is_space(*text)) { text++; len--; }
    snprintf(f->text, sizeof f->text, "%.*s", (int)(len < 23 ? len : 23), text);
    for (char *q = f->text; *q; q++)
        if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f) *q = '?';
    const char *p = text, *end = text + len;
    int ok = len >= 2 && *p == '(' && end[-1] == ')';
    if (ok) {
        p++;
        end--;
        int n = read_count(&p, end);
        if (n >= 0 && p < end && mm_lower(*p) == 'p') {      /* scale factor kP */
            f->scale = n;
            p++;
            if (p < end && *p == ',') p++;
            n = read_count(&p, end);
        }
        f->count = n < 0 ? 1 : n;
        char letter = p < end ? mm_lower(*p++) : '\0';
        f->kind = letter == 'i' ? 'I' : letter && strchr("edfg", letter) ? 'R' : '\0';
        f->width = read_count(&p, end);
        if (p < end && *p == '.') {
            p++;
            f->decimals = read_count(&p, end);
            ok = f->decimals >= 0;
        }
        if (ok && f->kind == 'R' && p < end && mm_lower(*p) == 'e') {   /* exponent digits Ee */
            p++;
            ok = read_count(&p, end) >= 0;
        }
        ok = ok && p == end && f->kind && f->count > 0 && f->width > 0 && f->width <= 100 &&
             f->count <= RB_RECORD_MAX / f->width;
    }
    if (!ok)
        return mm_fail(c, 4, "%s format '%s' is not a Fortran format of the form (rIw), (rEw.d), "
                       "(rDw.d), (rFw.d), (rGw.d) or (kP,rEw.d) with r·w at most %d columns", what,
                       f->text, RB_RECORD_MAX);
    return SLA_OK;
}

/* Trims blanks; 0 if nothing is left, -1 if a blank is left inside. */
static int trim(const char **s, size_t *len)
{
    while (*len > 0 && is_space(**s)) { (*s)++; (*len)--; }
    while (*len > 0 && is_space((*s)[*len - 1])) (*len)--;
    if (*len == 0) return 0;
    return memchr(*s, ' ', *len) ? -1 : 1;
}

static rb_field from_num(mm_num st)
{
    return st == MM_NUM_OK ? RB_FIELD_OK : st == MM_NUM_RANGE ? RB_FIELD_RANGE : RB_FIELD_BAD;
}

rb_field rb_read_int(const char *s, size_t len, int64_t *v)
{
    int t = trim(&s, &len);
    if (t <= 0) return t == 0 ? RB_FIELD_BLANK : RB_FIELD_BAD;
    const char *p = s;
    mm_num st = mm_scan_int64(&p, s + len, v);
    return st == MM_NUM_OK && p != s + len ? RB_FIELD_BAD : from_num(st);
}

rb_field rb_read_real(const char *s, size_t len, const rb_format *f, double *v)
{
    int t = trim(&s, &len);
    if (t <= 0) return t == 0 ? RB_FIELD_BLANK : RB_FIELD_BAD;
    char buf[160];                                 /* fields have at most 100 columns */
    size_t n = 0, k = 0;
    if (s[k] == '+' || s[k] == '-') buf[n++] = s[k++];
    if (k < len && (mm_lower(s[k]) == 'i' || mm_lower(s[k]) == 'n')) {   /* inf, nan words */
        memcpy(buf + n, s + k, len - k);
        n += len - k;
    } else {
        size_t mant = k;
        int point = 0;
        while (k < len && (mm_is_digit(s[k]) || (s[k] == '.' && !point))) point |= s[k++] == '.';
        if (k == mant + (size_t)point) return RB_FIELD_BAD;          /* no digit */
        memcpy(buf + n, s + mant, k - mant);
        n += k - mant;
        int has_exp = k < len;
        if (has_exp) {
            /* E, D or Q then a signed integer, or just a signed integer */
            if (strchr("eEdDqQ", s[k])) k++;
            else if (s[k] != '+' && s[k] != '-') return RB_FIELD_BAD;
            buf[n++] = 'e';
            memcpy(buf + n, s + k, len - k);      /* the scanner checks what follows */
            n += len - k;
            if (k == len) return RB_FIELD_BAD;
        }
        if (!point && f->decimals > 0) return RB_FIELD_NO_POINT;
        if (!has_exp && f->scale) n += (size_t)snprintf(buf + n, sizeof buf - n, "e%d", -f->scale);
    }
    const char *p = buf;
    mm_num st = mm_scan_double(&p, buf + n, v);
    return st == MM_NUM_OK && p != buf + n ? RB_FIELD_BAD : from_num(st);
}
