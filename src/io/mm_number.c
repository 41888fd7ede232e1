/* Number scanners of the Matrix Market reader. They work on a text that is not NUL-terminated
 * and demand that a number end at a blank, a newline or the end of the text, so "1.5x" or
 * "12abc" is refused instead of being read as 1.5 or 12.
 *
 * Doubles, all correctly rounded, so the result never depends on the path taken:
 *  1. m ≤ 2^53 and |e| ≤ 22 (value m · 10^e): m and 10^|e| are exact doubles, so one IEEE
 *     multiplication or division is correctly rounded (Clinger's fast path).
 *  2. m < 2^64 and |e| ≤ 27, on x86 (the 17-digit numbers that %.17g writes): the same in x87
 *     extended precision, then rounded to double, unless the extended result lies within one
 *     unit of a double halfway point (where double rounding could err).
 *  3. Everything else: strtod on a bounded copy of the token. */
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <string.h>

#include "io/mm_internal.h"

/* Skips blanks; returns 0 if the line (or text) ends first. */
static int token_start(const char **pp, const char *end)
{
    const char *p = *pp;
    while (p < end && mm_is_blank(*p)) p++;
    *pp = p;
    return p < end && *p != '\n';
}

mm_num mm_scan_int64(const char **pp, const char *end, int64_t *v)
{
    if (!token_start(pp, end)) return MM_NUM_MISSING;
    const char *p = *pp;
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    const char *digits = p;
    while (p < end && *p == '0') p++;
    const char *first = p;
    uint64_t u = 0;          /* exact for up to 19 significant digits; longer ones overflow */
    for (; p < end && mm_is_digit(*p); p++) u = u * 10 + (uint64_t)(*p - '0');
    if (p == digits || !mm_is_delim(p, end)) return MM_NUM_BAD;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (p - first > 19 || u > limit) return MM_NUM_RANGE;
    *v = !neg ? (int64_t)u : u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    *pp = p;
    return MM_NUM_OK;
}

/* Case-insensitive match of a word at p; returns its length or 0. */
static size_t match_word(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - p) < n) return 0;
    for (size_t k = 0; k < n; k++)
        if (mm_lower(p[k]) != word[k]) return 0;
    return n;
}

static mm_num scan_special(const char **pp, const char *p, const char *end, int neg, double *v)
{
    size_t n;
    double x;
    if ((n = match_word(p, end, "infinity")) || (n = match_word(p, end, "inf"))) x = INFINITY;
    else if ((n = match_word(p, end, "nan"))) x = NAN;
    else return MM_NUM_BAD;
    if (!mm_is_delim(p + n, end)) return MM_NUM_BAD;
    *v = neg ? -x : x;
    *pp = p + n;
    return MM_NUM_OK;
}

#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
/* m · 10^e10 with m < 2^64 and 10^|e10| ≤ 10^27 exact in the 64-bit significand: one operation
 * rounds once to 64 bits (error ≤ half a unit there). Rounding that to double's 53 bits gives
 * the correctly rounded result unless the 11 dropped bits are within one unit of the halfway
 * pattern 100 0000 0000; those rare cases return 0 and go to strtod. */
static int scan_extended(uint64_t m, int64_t e10, double *v)
{
    static const long double pow10l[] = {
        1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
        1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
        1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
    if (e10 < -27 || e10 > 27) return 0;
    long double r = e10 < 0 ? (long double)m / pow10l[-e10] : (long double)m * pow10l[e10];
    uint64_t significand;
    memcpy(&significand, &r, sizeof significand);      /* x87 format: significand first */
    uint64_t dropped = significand & 0x7FF;
    if (dropped >= 0x3FF && dropped <= 0x401) return 0;
    *v = (double)r;
    return 1;
}
#else
static int scan_extended(uint64_t m, int64_t e10, double *v) { return 0; }
#endif

/* strtod on a NUL-terminated copy. The locale's decimal point replaces '.', since Matrix Market
 * always uses '.' while strtod follows LC_NUMERIC (a host program may have set "de_DE"). */
static mm_num scan_slow(const char *tok, size_t len, double *v)
{
    char buf[MM_NUM_MAX_CHARS + 8];
    if (len > MM_NUM_MAX_CHARS) return MM_NUM_LONG;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] && dp[0] != '.' && !dp[1]) {
        char *dot = memchr(buf, '.', len);
        if (dot) *dot = dp[0];
    }
    char *stop;
    errno = 0;
    double x = strtod(buf, &stop);
    if (stop != buf + len) return MM_NUM_BAD;
    if (errno == ERANGE && isinf(x)) return MM_NUM_RANGE;
    *v = x;
    return MM_NUM_OK;
}

mm_num mm_scan_double(const char **pp, const char *end, double *v)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (!token_start(pp, end)) return MM_NUM_MISSING;
    const char *tok = *pp, *p = tok;
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (p < end && (mm_lower(*p) == 'i' || mm_lower(*p) == 'n')) return scan_special(pp, p, end, neg, v);

    uint64_t m = 0;          /* first 19 significant digits */
    int nsig = 0, digits = 0, inexact = 0;
    int64_t e10 = 0;         /* value = m · 10^e10 (before the written exponent) */
    for (; p < end && mm_is_digit(*p); p++, digits++) {
        if (m == 0 && *p == '0') continue;
        if (nsig < 19) { m = m * 10 + (uint64_t)(*p - '0'); nsig++; }
        else { e10++; inexact |= *p != '0'; }
    }
    if (p < end && *p == '.') {
        for (p++; p < end && mm_is_digit(*p); p++, digits++) {
            if (m == 0 && *p == '0') { e10--; continue; }
            if (nsig < 19) { m = m * 10 + (uint64_t)(*p - '0'); nsig++; e10--; }
            else inexact |= *p != '0';
        }
    }
    if (digits == 0) return MM_NUM_BAD;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p == end || !mm_is_digit(*p)) return MM_NUM_BAD;
        int64_t e = 0;
        for (; p < end && mm_is_digit(*p); p++)
            if (e < 100000) e = e * 10 + (*p - '0');      /* saturate: 10^±100000 is 0 or inf */
        e10 += eneg ? -e : e;
    }
    if (!mm_is_delim(p, end)) return MM_NUM_BAD;
    if (p - tok > MM_NUM_MAX_CHARS) return MM_NUM_LONG;  /* whichever path would take it */
    if (m == 0 && !inexact) {
        *v = neg ? -0.0 : 0.0;
    } else if (!inexact && m <= ((uint64_t)1 << 53) && e10 >= -22 && e10 <= 22) {
        double x = (double)m;
        x = e10 < 0 ? x / pow10[-e10] : x * pow10[e10];
        *v = neg ? -x : x;
    } else if (!inexact && scan_extended(m, e10, v)) {
        if (neg) *v = -*v;
    } else {
        mm_num st = scan_slow(tok, (size_t)(p - tok), v);
        if (st != MM_NUM_OK) return st;
    }
    *pp = p;
    return MM_NUM_OK;
}
