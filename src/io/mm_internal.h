/* Matrix Market internals shared by src/io/mm_*.c (and the Rutherford–Boeing reader, which
 * uses the cursor and the number scanners): the text cursor, number scanners, the header
 * parser and gzip decompression. Not installed. */
#ifndef SLA_MM_INTERNAL_H
#define SLA_MM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "io/io_file.h"

/* ---- character classes (table in mm_text.c) ---- */

/* Blanks separate the numbers of a line; '\r' is one, so CRLF files need no special case. */
extern const unsigned char mm_blank[256];

static inline int mm_is_blank(char ch) { return mm_blank[(unsigned char)ch]; }

static inline int mm_is_digit(char ch) { return (unsigned)(ch - '0') < 10u; }

static inline char mm_lower(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

/** 1 if a token ends at p: a blank, a newline or the end of the text. */
static inline int mm_is_delim(const char *p, const char *end)
{
    return p == end || *p == '\n' || mm_is_blank(*p);
}

/* ---- cursor over the text being parsed (mm_text.c) ---- */

/** Position in a text of known length (not NUL-terminated: sla_mm_read_buffer borrows the
 *  caller's bytes). `line` is the 1-based line of `p`; `name` and `func` go into messages. */
typedef struct mm_cursor {
    const char *p, *end;
    int64_t line;
    const char *name;        /**< file name, or "(buffer)" */
    const char *func;        /**< public function reported in messages */
} mm_cursor;

/** Raises SLA_EPARSE with the message "NAME:LINE: what". */
sla_status mm_fail(const mm_cursor *c, int64_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Skips blank and comment lines (first non-blank character '%'). Returns 1 with c->p on the
 *  first non-blank character of a data line, 0 at the end of the text. */
int mm_next_data_line(mm_cursor *c);

/** After the last number of a line: only blanks may follow before the newline (consumed) or
 *  the end of the text; otherwise SLA_EPARSE "unexpected 'TOKEN' after the WHAT". */
sla_status mm_end_line(mm_cursor *c, const char *what);

/** Copies the token at p (up to a blank, a newline or the end, at most size − 1 characters,
 *  unprintable bytes as '?') into buf, for messages. Returns buf. */
const char *mm_token(const char *p, const char *end, char *buf, size_t size);

/* ---- numbers (mm_number.c) ---- */

typedef enum mm_num {
    MM_NUM_OK = 0,
    MM_NUM_MISSING,          /**< no token before the end of the line */
    MM_NUM_BAD,              /**< the token is not a number of the wanted kind */
    MM_NUM_RANGE,            /**< a number, but out of range (int64, or finite double) */
    MM_NUM_LONG              /**< longer than MM_NUM_MAX_CHARS */
} mm_num;

#define MM_NUM_MAX_CHARS 500

/** Scans a decimal integer (optional sign) ending at a blank, a newline or the end, after
 *  skipping blanks. On MM_NUM_OK *p moves past it; otherwise *p is left on the token (or the
 *  end of the line) so that the caller can quote it. */
mm_num mm_scan_int64(const char **p, const char *end, int64_t *v);

/** As mm_scan_int64 for a decimal floating-point number (digits, optional '.', optional
 *  exponent) or inf, infinity, nan (any case, optional sign); correctly rounded. A finite
 *  number beyond the double range gives MM_NUM_RANGE; one below it rounds to 0 or a
 *  subnormal. Hexadecimal and Fortran 'D' exponents are refused. */
mm_num mm_scan_double(const char **p, const char *end, double *v);

/* ---- header (mm_header.c) ---- */

typedef struct mm_header {
    sla_mm_field field;
    sla_mm_symmetry symmetry;
    int is_array;
    int64_t nrows, ncols;
    int64_t nstored;         /**< entries declared (coordinate) or values expected (array) */
} mm_header;

/** Parses the banner and the size line; on success c->p is at the start of the line after the
 *  size line. */
sla_status mm_parse_header(mm_cursor *c, mm_header *h);

/** Length of the text up to and including the newline that ends the size line (the first line
 *  after the banner that is neither blank nor a comment); 0 when that newline is not in
 *  text[0, len) yet. */
size_t mm_header_length(const char *text, size_t len);

/* Limits of decompressed gzip text (documented at sla_mm_read): at most MM_GZ_HEADER_MAX bytes
 * up to the end of the size line, then the header, MM_GZ_SLACK bytes, and
 * MM_GZ_BYTES_PER_NUMBER bytes for each number the size line declares (indices and values of
 * each entry). Numbers written by any writer take 1-25 characters with their separator. */
#define MM_GZ_HEADER_MAX ((size_t)16 << 20)
#define MM_GZ_SLACK ((size_t)1 << 20)
#define MM_GZ_BYTES_PER_NUMBER 64

/** The limit for a parsed header h that took hlen bytes (saturating at SIZE_MAX). */
size_t mm_gz_limit(const mm_header *h, size_t hlen);

/* ---- gzip (mm_source.c) ---- */

/** 1 if the bytes start with the gzip magic number 1f 8b. */
int mm_is_gzip(const char *data, size_t len);

/** Decompresses gzip data (one or more members) into a new buffer, within the MM_GZ_* limits.
 *  @return SLA_OK, SLA_EIO (corrupt or truncated data, or beyond the limit, naming `name`),
 *          SLA_EPARSE (the header, once decompressed, does not parse), SLA_ENOMEM. */
sla_status mm_gunzip(const char *data, size_t len, const char *name, const char *func,
                     char **out, size_t *outlen);

/* ---- building the result (coo.c), shared with the Rutherford–Boeing reader ---- */

/** A new COO matrix (nnz = 0) with room for cap entries (values interleaved for complex). */
sla_status mm_coo_create(int64_t nrows, int64_t ncols, sla_mm_field field,
                         sla_mm_symmetry symmetry, int64_t cap, sla_coo **out);

/** Appends a stored entry (0-based; v[1] is the imaginary part) and, for symmetric storage off
 *  the diagonal, its mirror: the same, negated (skew-symmetric) or conjugated (Hermitian).
 *  Refuses with SLA_EPARSE at `line` a diagonal that the storage forbids: non-zero in
 *  skew-symmetric, non-real in Hermitian storage. The capacity must suffice. */
sla_status mm_coo_store(const mm_cursor *c, int64_t line, sla_coo *a, int64_t i, int64_t j,
                        const double v[2]);

/* ---- reader entry point shared by the public functions (mm_read.c) ---- */

/** Parses text (plain or gzip) into a new COO matrix; messages name `name` and `func`. */
sla_status mm_read_text(const char *text, size_t len, const char *name, const char *func,
                        sla_coo **out);

/** Loads and parses a file; messages name `func`. */
sla_status mm_read_path(const char *path, const char *func, sla_coo **out);

#endif
