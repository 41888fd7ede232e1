/* Raw bytes for the Matrix Market reader: a whole file in one buffer (one read instead of a
 * stdio call per line), and in-memory gzip decompression, so that a compressed file or buffer
 * is recognised by its magic bytes whatever its name. zlib allocates through sla_malloc, so
 * the allocation-failure test hook reaches it too. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "io/mm_internal.h"

/* Doubles *cap (at least to `need`), keeping the first `used` bytes. */
static sla_status grow(char **buf, size_t *cap, size_t used, size_t need, const char *what)
{
    size_t ncap = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
    if (ncap < need) ncap = need;
    char *nbuf = sla_malloc(ncap, 1, what);
    if (!nbuf) return SLA_ENOMEM;
    if (used) memcpy(nbuf, *buf, used);
    sla_free(*buf);
    *buf = nbuf;
    *cap = ncap;
    return SLA_OK;
}

sla_status mm_load_file(const char *path, const char *func, char **out, size_t *outlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return sla_error_set(SLA_EIO, func, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    /* a regular file is read in one go; pipes and devices grow the buffer as they go */
    size_t cap = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0
                     ? (size_t)sb.st_size + 1 : 65536;
    char *buf = sla_malloc(cap, 1, "file contents");
    sla_status st = buf ? SLA_OK : SLA_ENOMEM;
    size_t len = 0;
    while (st == SLA_OK) {
        len += fread(buf + len, 1, cap - len, f);
        if (ferror(f))
            st = sla_error_set(SLA_EIO, func, "cannot read '%s': %s", path, strerror(errno));
        else if (len < cap || feof(f)) break;
        else st = grow(&buf, &cap, len, cap + 1, "file contents");
    }
    fclose(f);
    if (st != SLA_OK) {
        sla_free(buf);
        return st;
    }
    *out = buf;
    *outlen = len;
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

/* Inflates all members of a gzip stream (a concatenation of members is one valid file). */
static sla_status inflate_all(z_stream *zs, const char *data, size_t len, const char *name,
                              const char *func, char **buf, size_t *cap, size_t *used)
{
    size_t in = 0;
    for (;;) {
        if (zs->avail_in == 0 && in < len) {
            zs->next_in = (Bytef *)(uintptr_t)(data + in);
            zs->avail_in = (uInt)(len - in < UINT_MAX ? len - in : UINT_MAX);
            in += zs->avail_in;
        }
        if (*used == *cap) SLA_TRY(grow(buf, cap, *used, *used + 1, "decompressed text"));
        size_t room = *cap - *used < UINT_MAX ? *cap - *used : UINT_MAX;
        zs->next_out = (Bytef *)(*buf + *used);
        zs->avail_out = (uInt)room;
        int ret = inflate(zs, Z_NO_FLUSH);
        *used += room - zs->avail_out;
        if (ret == Z_STREAM_END) {
            size_t at = in - zs->avail_in, rest = len - at;
            if (rest == 0) return SLA_OK;
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
    size_t cap = len < SIZE_MAX / 4 ? len * 4 + 4096 : len, used = 0;
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
