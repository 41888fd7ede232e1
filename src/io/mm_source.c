/* In-memory gzip decompression for the Matrix Market reader, so that a compressed file or
 * buffer is recognised by its magic bytes whatever its name. zlib allocates through
 * sla_malloc, so the allocation-failure test hook reaches it too.
 *
 * The decompressed size is capped by what the header declares (MM_GZ_* in mm_internal.h): a
 * few megabytes of gzip can expand to gigabytes of blanks, and a reader must not hold
 * 1000 times its input because a file says nothing. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "io/mm_internal.h"

/* Grows the buffer to ncap bytes (> used), keeping the first `used` bytes. */
static sla_status grow(char **buf, size_t *cap, size_t used, size_t ncap)
{
    char *nbuf = sla_malloc(ncap, 1, "decompressed text");
    if (!nbuf) return SLA_ENOMEM;
    if (used) memcpy(nbuf, *buf, used);
    sla_free(*buf);
    *buf = nbuf;
    *cap = ncap;
    return SLA_OK;
}

int mm_is_gzip(const char *data, size_t len)
{
    return len >= 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b;
}

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    return sla_malloc(items, size, "zlib state");
}

static void z_free(voidpf opaque, voidpf p) { sla_free(p); }

static sla_status z_error(int ret, const z_stream *zs, const char *name, const char *func)
{
    if (ret == Z_MEM_ERROR) return SLA_ENOMEM;        /* sla_malloc has set the message */
    return sla_error_set(SLA_EIO, func, "cannot read '%s': %s", name,
                         ret == Z_BUF_ERROR ? "truncated gzip data"
                         : zs->msg          ? zs->msg : "corrupt gzip data");
}

/* Output limit: MM_GZ_HEADER_MAX until the size line is complete, then what the header
 * allows. A header that does not parse is reported at once (the parser would refuse it too). */
typedef struct gz_limit {
    size_t bytes;
    int known;
    mm_header h;
} gz_limit;

static sla_status update_limit(gz_limit *lim, const char *text, size_t used, const char *name,
                               const char *func)
{
    if (lim->known) return SLA_OK;
    size_t hlen = mm_header_length(text, used);
    if (hlen == 0) return SLA_OK;
    mm_cursor c = {text, text + hlen, 1, name, func};
    SLA_TRY(mm_parse_header(&c, &lim->h));
    lim->bytes = mm_gz_limit(&lim->h, hlen);
    lim->known = 1;
    return SLA_OK;
}

static sla_status too_long(const gz_limit *lim, const char *name, const char *func)
{
    if (!lim->known)
        return sla_error_set(SLA_EIO, func, "cannot read '%s': more than %zu bytes of "
                             "decompressed text before the end of the size line (the limit for "
                             "gzip data; decompress the file to read it)", name, lim->bytes);
    return sla_error_set(SLA_EIO, func, "cannot read '%s': the decompressed text exceeds %zu "
                         "bytes, the limit for gzip data whose size line declares %lld %s (%d "
                         "bytes per number, plus the header and %d MiB; decompress the file to "
                         "read it)", name, lim->bytes, (long long)lim->h.nstored,
                         lim->h.is_array ? "values" : "entries", MM_GZ_BYTES_PER_NUMBER,
                         (int)(MM_GZ_SLACK >> 20));
}

/* Inflates all members of a gzip stream (a concatenation of members is one valid file). */
static sla_status inflate_all(z_stream *zs, const char *data, size_t len, const char *name,
                              const char *func, char **buf, size_t *cap, size_t *used)
{
    gz_limit lim = {MM_GZ_HEADER_MAX, 0, {0}};
    size_t in = 0;
    for (;;) {
        if (zs->avail_in == 0 && in < len) {
            zs->next_in = (Bytef *)(uintptr_t)(data + in);
            zs->avail_in = (uInt)(len - in < UINT_MAX ? len - in : UINT_MAX);
            in += zs->avail_in;
        }
        SLA_TRY(update_limit(&lim, *buf, *used, name, func));
        if (*used > lim.bytes) return too_long(&lim, name, func);
        if (*used == *cap) {
            /* double, but never past one byte beyond the limit (that byte proves it exceeded) */
            size_t ncap = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
            if (ncap > lim.bytes + 1) ncap = lim.bytes + 1;
            SLA_TRY(grow(buf, cap, *used, ncap > *used ? ncap : *used + 1));
        }
        size_t room = *cap - *used < UINT_MAX ? *cap - *used : UINT_MAX;
        zs->next_out = (Bytef *)(*buf + *used);
        zs->avail_out = (uInt)room;
        int ret = inflate(zs, Z_NO_FLUSH);
        *used += room - zs->avail_out;
        if (ret == Z_STREAM_END) {
            size_t at = in - zs->avail_in, rest = len - at;
            if (rest == 0) {
                SLA_TRY(update_limit(&lim, *buf, *used, name, func));
                return *used > lim.bytes ? too_long(&lim, name, func) : SLA_OK;
            }
            if (!mm_is_gzip(data + at, rest))
                return sla_error_set(SLA_EIO, func, "cannot read '%s': %zu bytes of trailing "
                                                    "garbage after the gzip data", name, rest);
            ret = inflateReset(zs);
        } else if (ret == Z_BUF_ERROR && zs->avail_out > 0 && zs->avail_in == 0 && in == len) {
            return z_error(Z_BUF_ERROR, zs, name, func);
        }
        if (ret != Z_OK && ret != Z_BUF_ERROR) return z_error(ret, zs, name, func);
        if (ret == Z_OK && zs->avail_in == 0 && in == len && zs->avail_out > 0) {
            /* all input consumed, output room left, no stream end: the data stops early */
            return z_error(Z_BUF_ERROR, zs, name, func);
        }
    }
}

sla_status mm_gunzip(const char *data, size_t len, const char *name, const char *func,
                     char **out, size_t *outlen)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    zs.zalloc = z_alloc;
    zs.zfree = z_free;
    int ret = inflateInit2(&zs, 16 + MAX_WBITS);          /* 16: gzip wrapper only */
    if (ret != Z_OK) return z_error(ret, &zs, name, func);
    size_t cap = len < MM_GZ_HEADER_MAX / 4 ? len * 4 + 4096 : MM_GZ_HEADER_MAX;
    size_t used = 0;
    char *buf = sla_malloc(cap, 1, "decompressed text");
    sla_status st = buf ? inflate_all(&zs, data, len, name, func, &buf, &cap, &used) : SLA_ENOMEM;
    inflateEnd(&zs);
    if (st != SLA_OK) {
        sla_free(buf);
        return st;
    }
    *out = buf;
    *outlen = used;
    return SLA_OK;
}
