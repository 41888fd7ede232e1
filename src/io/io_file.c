/* Input files read whole, output files replaced only once written completely (see io_file.h).
 * The output rule exists because a writer that removes its target on failure destroys what was
 * there before (an older file of that name, or a device node when run as root): the data go to
 * a temporary file in the same directory (so that rename(2) is atomic) and the target is
 * touched only by the final rename. */
#define _GNU_SOURCE             /* AT_EACCESS, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/io_file.h"

/* ---- messages ---- */

sla_status io_name_error(sla_status st, const char *func, const char *name)
{
    static const char *const allocators[] = {"sla_malloc: ", "sla_calloc: "};
    if (st != SLA_ENOMEM) return st;
    const char *msg = sla_last_error();
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(allocators[i]);
        if (strncmp(msg, allocators[i], n) == 0) {
            char rest[900];
            snprintf(rest, sizeof rest, "%s", msg + n);
            return sla_error_set(st, func, "%s: %s", name, rest);
        }
    }
    return st;
}

/* ---- input ---- */

/* Doubles *cap (at least to `need`), keeping the first `used` bytes. */
static sla_status grow(char **buf, size_t *cap, size_t used, size_t need)
{
    size_t ncap = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
    if (ncap < need) ncap = need;
    char *nbuf = sla_malloc(ncap, 1, "the file contents");
    if (!nbuf) return SLA_ENOMEM;
    if (used) memcpy(nbuf, *buf, used);
    sla_free(*buf);
    *buf = nbuf;
    *cap = ncap;
    return SLA_OK;
}

sla_status io_load_file(const char *path, const char *func, char **out, size_t *outlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return sla_error_set(SLA_EIO, func, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    int known = fstat(fileno(f), &sb) == 0;
    if (known && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return sla_error_set(SLA_EIO, func, "cannot read '%s': %s", path, strerror(EISDIR));
    }
    /* a regular file is read in one go; pipes and devices grow the buffer as they go */
    size_t cap = known && S_ISREG(sb.st_mode) && sb.st_size > 0 ? (size_t)sb.st_size + 1 : 65536;
    char *buf = sla_malloc(cap, 1, "the file contents");
    sla_status st = buf ? SLA_OK : SLA_ENOMEM;
    size_t len = 0;
    while (st == SLA_OK) {
        len += fread(buf + len, 1, cap - len, f);
        if (ferror(f))
            st = sla_error_set(SLA_EIO, func, "cannot read '%s': %s", path, strerror(errno));
        else if (len < cap || feof(f)) break;
        else st = grow(&buf, &cap, len, cap + 1);
    }
    fclose(f);
    if (st != SLA_OK) {
        sla_free(buf);
        return io_name_error(st, func, path);
    }
    *out = buf;
    *outlen = len;
    return SLA_OK;
}

sla_status io_read_file(const char *path, const char *func, io_parse_fn parse, sla_coo **out)
{
    SLA_CHECK_ARG_AS(func, out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG_AS(func, path, "path is NULL");
    char *buf = NULL;
    size_t len = 0;
    SLA_TRY(io_load_file(path, func, &buf, &len));
    sla_status st = parse(buf, len, path, func, out);
    sla_free(buf);
    return io_name_error(st, func, path);
}

/* ---- output ---- */

static sla_status fail_create(io_out *o, int err, const char *how)
{
    free(o->target);
    o->target = NULL;
    return sla_error_set(SLA_EIO, o->func, "cannot create '%s'%s: %s", o->path, how,
                         strerror(err));
}

/* Directory part of a path ("." when there is none), malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* The name a path that does not exist (yet) stands for: itself, or for a dangling symbolic
 * link the name at the end of its chain, so that the link is kept and its target created. */
static char *final_name(const char *path)
{
    char *cur = strdup(path);
    for (int hop = 0; cur && hop < 40; hop++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0 || !S_ISLNK(sb.st_mode)) return cur;
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) break;
        link[n] = '\0';
        char *dir = link[0] == '/' ? NULL : dir_of(cur);
        char *next = malloc((dir ? strlen(dir) + 1 : 0) + (size_t)n + 1);
        if (next) sprintf(next, "%s%s%s", dir ? dir : "", dir ? "/" : "", link);
        free(dir);
        free(cur);
        cur = next;
    }
    if (cur) errno = ELOOP;
    free(cur);
    return NULL;
}

/* A new temporary file ".BASE.sla-XXXXXXXX" next to o->target, created with O_EXCL. */
static int create_temp(io_out *o, mode_t mode)
{
    static atomic_uint counter;
    char *dir = dir_of(o->target);
    const char *slash = strrchr(o->target, '/');
    const char *base = slash ? slash + 1 : o->target;
    size_t cap = (dir ? strlen(dir) : 0) + strlen(base) + 32;
    o->tmp = dir ? malloc(cap) : NULL;
    int fd = -1;
    if (!o->tmp) errno = ENOMEM;
    for (int attempt = 0; o->tmp && fd < 0 && attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long r = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)getpid() ^
                               ((unsigned long long)atomic_fetch_add(&counter, 1) << 40);
        char suffix[9];
        for (int k = 0; k < 8; k++, r >>= 5) suffix[k] = "abcdefghijklmnopqrstuvwxyz234567"[r & 31];
        suffix[8] = '\0';
        /* a base near NAME_MAX is shortened so that the temporary name still fits */
        snprintf(o->tmp, cap, "%s/.%.200s.sla-%s", dir, base, suffix);
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST) break;
    }
    free(dir);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        errno = e;
    }
    return fd;
}

sla_status io_out_open(io_out *o, const char *path, const char *func)
{
    *o = (io_out){path, func, NULL, NULL, -1};
    if (!*path) return fail_create(o, ENOENT, "");
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    if (!exists && errno != ENOENT) return fail_create(o, errno, "");
    o->target = exists ? realpath(path, NULL) : final_name(path);
    if (!o->target) return fail_create(o, errno, "");
    if (exists && S_ISDIR(sb.st_mode)) return fail_create(o, EISDIR, "");
    if (exists && !S_ISREG(sb.st_mode)) {          /* device, FIFO, socket: in place */
        o->fd = open(o->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        return o->fd >= 0 ? SLA_OK : fail_create(o, errno, "");
    }
    if (exists && faccessat(AT_FDCWD, o->target, W_OK, AT_EACCESS) != 0)
        return fail_create(o, errno, "");
    o->fd = create_temp(o, exists ? 0600 : 0666);  /* 0666: the umask applies, as for fopen */
    if (o->fd < 0)
        return fail_create(o, errno, exists ? " (a temporary file in its directory, renamed "
                                              "over it once written)" : "");
    if (exists) {
        /* the new file gets the old one's permissions (and owner, where we may set it) */
        if (fchmod(o->fd, sb.st_mode & 07777) != 0) { /* keep 0600: stricter, not looser */ }
        if ((sb.st_uid != geteuid() || sb.st_gid != getegid()) &&
            fchown(o->fd, sb.st_uid, sb.st_gid) != 0) { /* not ours to give away: keep ours */ }
    }
    return SLA_OK;
}

static void out_free(io_out *o)
{
    free(o->target);
    free(o->tmp);
    o->target = o->tmp = NULL;
}

sla_status io_out_commit(io_out *o)
{
    sla_status st = SLA_OK;
    if (o->fd >= 0 && close(o->fd) != 0)
        st = sla_error_set(SLA_EIO, o->func, "cannot write '%s': %s", o->path, strerror(errno));
    o->fd = -1;
    if (st == SLA_OK && o->tmp && rename(o->tmp, o->target) != 0)
        st = sla_error_set(SLA_EIO, o->func, "cannot replace '%s': %s", o->path, strerror(errno));
    if (st != SLA_OK && o->tmp) unlink(o->tmp);
    out_free(o);
    return st;
}

void io_out_abort(io_out *o)
{
    if (o->fd >= 0) close(o->fd);
    o->fd = -1;
    if (o->tmp) unlink(o->tmp);
    out_free(o);
}
