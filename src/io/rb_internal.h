/* Rutherford–Boeing internals (src/io/rb_*.c): Fortran edit descriptors and fixed-width
 * fields. Not installed. */
#ifndef SLA_RB_INTERNAL_H
#define SLA_RB_INTERNAL_H

#include "io/mm_internal.h"

/* Longest record a data format may describe (count × width): RB files use 80 columns. */
#define RB_RECORD_MAX 4096

/** One repeated edit descriptor such as (16I5), (1P,5E15.8) or (4D20.12): `count` fields of
 *  `width` columns per line; kind 'I' (integer) or 'R' (E, D, F, G: real); `decimals` = d of
 *  w.d (0 when absent), `scale` = k of kP (0 when absent). */
typedef struct rb_format {
    int count, width, decimals, scale;
    char kind;
    char text[24];           /**< as written in the header, for messages */
} rb_format;

/** Parses a format of header line 4 (the 16- or 20-column field `text`, blank-padded).
 *  @return SLA_OK; SLA_EPARSE "FILE:4: WHAT format 'TEXT' ..." through mm_fail. */
sla_status rb_parse_format(const mm_cursor *c, const char *text, size_t len, const char *what,
                           rb_format *f);

typedef enum rb_field {
    RB_FIELD_OK = 0,
    RB_FIELD_BLANK,          /**< nothing but blanks */
    RB_FIELD_BAD,            /**< not a number of the format's kind */
    RB_FIELD_RANGE,          /**< beyond int64, or a finite value beyond double */
    RB_FIELD_NO_POINT        /**< a real field without a decimal point under w.d, d > 0 */
} rb_field;

/** Reads one field (len columns, blanks on either side allowed, none inside) as Fortran
 *  formatted input would, with one difference: a field Fortran would read with an implied
 *  decimal point ("15" under E15.8 is 15e-8) is refused (RB_FIELD_NO_POINT) instead, since C
 *  writers mean 15. Integers: optional sign and digits. Reals: [sign] digits [. digits]
 *  [exponent], the exponent being E, D or Q followed by a signed integer, or a sign followed by
 *  digits ("1.0-100", as Fortran writes three-digit exponents); kP scales a field without an
 *  exponent by 10^-k; inf, infinity and nan in any case. */
rb_field rb_read_int(const char *s, size_t len, int64_t *v);
rb_field rb_read_real(const char *s, size_t len, const rb_format *f, double *v);

/** Reads a Rutherford–Boeing file (sla_rb_read), messages in the name of `func`. */
sla_status rb_read_file(const char *path, const char *func, sla_coo **out);

#endif
