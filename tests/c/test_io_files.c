/* Files of every reader and writer in sla/io.h: a failed write leaves what was there (every
 * writer, under a file size limit), devices are written in place and never removed, symbolic
 * links are followed, directories are I/O errors for readers and writers, allocation failures
 * name the function and the file, safetensors header lengths that would point outside the
 * file, and the cap on decompressed gzip text. */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

static char dir[512];

static int setup(void **state)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sla_test_io_files_XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *path_in(const char *name)
{
    static char buf[4][600];
    static int next = 0;
    char *b = buf[next++ % 4];
    snprintf(b, 600, "%s/%s", dir, name);
    return b;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_true(fwrite(data, 1, len, f) == len);
    assert_int_equal(fclose(f), 0);
}

/* Names in the test directory, for "no temporary file left behind". */
static int count_entries(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void expect(sla_status got, sla_status want, const char *p1, const char *p2)
{
    const char *m = sla_last_error();
    if (got != want || (p1 && !strstr(m, p1)) || (p2 && !strstr(m, p2)))
        fail_msg("status %d (want %d), message '%s' (want '%s' and '%s')", (int)got, (int)want, m,
                 p1 ? p1 : "", p2 ? p2 : "");
}

/* ---- writers ---- */

typedef struct fixture {
    sla_pattern *p;
    double *v;
    sla_matrix A;
    sla_coo coo;             /* the same entries, for sla_safetensors_write */
} fixture;

static void fixture_make(fixture *f, int64_t n)
{
    tu_poisson2d(n, n, &f->p, &f->v);
    f->A = sla_matrix_view(f->p, SLA_FLOAT64, 1, f->v);
    int64_t nnz = sla_pattern_nnz(f->p);
    const int64_t *rp = sla_pattern_rowptr(f->p);
    const int32_t *ci = sla_pattern_colind(f->p);
    f->coo = (sla_coo){n * n, n * n, nnz, nnz, malloc(sizeof(int64_t) * (size_t)nnz),
                       malloc(sizeof(int64_t) * (size_t)nnz), f->v, SLA_MM_REAL, SLA_MM_GENERAL, 0};
    assert_true(f->coo.row && f->coo.col);
    for (int64_t i = 0; i < n * n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            f->coo.row[s] = i;
            f->coo.col[s] = ci[s];
        }
}

static void fixture_free(fixture *f)
{
    sla_pattern_free(&f->p);
    free(f->v);
    free(f->coo.row);
    free(f->coo.col);
}

/* Writer w of the fixture to path: 0 mm, 1 mm.gz, 2 dense array, 3 RB, 4 safetensors. */
static sla_status write_with(int w, const char *path, const fixture *f)
{
    switch (w) {
    case 0: case 1: return sla_mm_write(path, &f->A, 0, SLA_MM_REAL, SLA_MM_GENERAL, "test");
    case 2: return sla_mm_write_dense(path, sla_pattern_nnz(f->p), 1, SLA_FLOAT64, f->v, NULL);
    case 3: return sla_rb_write(path, &f->A, 0, SLA_MM_REAL, "test");
    default: return sla_safetensors_write(path, &f->coo, SLA_FLOAT64);
    }
}

static const char *const names[] = {"w.mtx", "w.mtx.gz", "d.mtx", "w.rua", "w.safetensors"};
static const char *const funcs[] = {"sla_mm_write: ", "sla_mm_write: ", "sla_mm_write_dense: ",
                                    "sla_rb_write: ", "sla_safetensors_write: "};

/* The old code removed its target on any failure: under a file size limit every writer fails
 * (EFBIG), and the file that was there, its permissions and the directory stay as they were. */
static void failed_write_keeps_old_file(void **state)
{
    fixture f;
    fixture_make(&f, 40);                                   /* 1600 unknowns, 7840 entries */
    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    for (int w = 0; w < 5; w++) {
        char path[600];
        snprintf(path, sizeof path, "%s", path_in(names[w]));
        write_file(path, "old contents\n", 13);
        assert_int_equal(chmod(path, 0640), 0);
        int before = count_entries();
        struct rlimit lim = {4096, old.rlim_max};
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        sla_status st = write_with(w, path, &f);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        expect(st, SLA_EIO, funcs[w], names[w]);
        char buf[64] = {0};
        FILE *in = fopen(path, "rb");
        assert_non_null(in);
        size_t got = fread(buf, 1, sizeof buf - 1, in);
        fclose(in);
        assert_int_equal(got, 13);
        assert_string_equal(buf, "old contents\n");
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0640);
        assert_int_equal(count_entries(), before);            /* no temporary file left */
        /* without the limit the same call replaces the file, keeping its permissions */
        TU_OK(write_with(w, path, &f));
        assert_int_equal(stat(path, &sb), 0);
        assert_true(sb.st_size > 4096);
        assert_int_equal(sb.st_mode & 0777, 0640);
        assert_int_equal(count_entries(), before);
        unlink(path);
    }
    signal(SIGXFSZ, prev);
    fixture_free(&f);
}

/* A device is written in place and never removed (as root, the old remove() on failure
 * unlinked /dev/full); a symbolic link to it is followed and kept. */
static void devices_and_links(void **state)
{
    fixture f;
    fixture_make(&f, 5);
    struct stat sb;
    for (int w = 0; w < 5; w++) {
        expect(write_with(w, "/dev/full", &f), SLA_EIO, funcs[w], "No space left on device");
        assert_int_equal(stat("/dev/full", &sb), 0);
        assert_true(S_ISCHR(sb.st_mode));
        TU_OK(write_with(w, "/dev/null", &f));
        assert_int_equal(stat("/dev/null", &sb), 0);
        assert_true(S_ISCHR(sb.st_mode));
        /* a link to a device: the device is written, the link stays */
        char link[600];
        snprintf(link, sizeof link, "%s", path_in(names[w]));
        assert_int_equal(symlink("/dev/full", link), 0);
        expect(write_with(w, link, &f), SLA_EIO, funcs[w], names[w]);
        assert_int_equal(lstat(link, &sb), 0);
        assert_true(S_ISLNK(sb.st_mode));
        unlink(link);
        /* a link to a regular file: the file is replaced, the link stays */
        char target[600];
        snprintf(target, sizeof target, "%s", path_in("target"));
        write_file(target, "x", 1);
        assert_int_equal(symlink("target", link), 0);
        TU_OK(write_with(w, link, &f));
        assert_int_equal(lstat(link, &sb), 0);
        assert_true(S_ISLNK(sb.st_mode));
        assert_int_equal(stat(target, &sb), 0);
        assert_true(sb.st_size > 100);
        unlink(target);
        /* a dangling link: its target is created */
        TU_OK(write_with(w, link, &f));
        assert_int_equal(lstat(link, &sb), 0);
        assert_true(S_ISLNK(sb.st_mode));
        assert_int_equal(stat(target, &sb), 0);
        unlink(target);
        unlink(link);
    }
    assert_int_equal(count_entries(), 0);
    fixture_free(&f);
}

/* Directories and missing directories are I/O errors for writers and readers, and nothing is
 * created. The safetensors reader took a directory's size from ftell (8 EiB, SLA_ENOMEM), the
 * RB reader reported a parse error. */
static void directories(void **state)
{
    fixture f;
    fixture_make(&f, 3);
    char sub[600];
    snprintf(sub, sizeof sub, "%s", path_in("x.safetensors"));
    assert_int_equal(mkdir(sub, 0755), 0);
    for (int w = 0; w < 5; w++) {
        expect(write_with(w, sub, &f), SLA_EIO, funcs[w], "Is a directory");
        expect(write_with(w, path_in("missing/x"), &f), SLA_EIO, funcs[w], "No such file");
    }
    sla_coo *c = (sla_coo *)0x1;
    expect(sla_safetensors_read(sub, &c), SLA_EIO, "sla_safetensors_read: ", "Is a directory");
    assert_null(c);
    expect(sla_rb_read(sub, &c), SLA_EIO, "sla_rb_read: ", "Is a directory");
    expect(sla_mm_read(sub, &c), SLA_EIO, "sla_mm_read: ", "Is a directory");
    assert_null(c);
    assert_int_equal(count_entries(), 1);
    rmdir(sub);
    fixture_free(&f);
}

/* ---- readers ---- */

/* Header lengths near 2^64: UBSan aborted on the pointer formed from 2^63 before the check. */
static void safetensors_header_length(void **state)
{
    static const uint64_t lengths[] = {(uint64_t)1 << 63, UINT64_MAX, UINT64_MAX - 7,
                                       (uint64_t)100 << 20, 9};
    unsigned char bytes[16] = {0};
    memcpy(bytes + 8, "{}      ", 8);
    char path[600];
    snprintf(path, sizeof path, "%s", path_in("h.safetensors"));
    for (size_t t = 0; t < sizeof lengths / sizeof lengths[0]; t++) {
        for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)(lengths[t] >> (8 * i));
        write_file(path, bytes, sizeof bytes);
        sla_coo *c = (sla_coo *)0x1;
        expect(sla_safetensors_read(path, &c), SLA_EPARSE, "not a safetensors file", "header length");
        assert_null(c);
    }
    write_file(path, bytes, 5);
    sla_coo *c = NULL;
    expect(sla_safetensors_read(path, &c), SLA_EPARSE, "shorter than the 8-byte header length", NULL);
    unlink(path);
}

/* Every allocation of every reader fails in turn: the message names the public function and
 * the file ("sla_malloc: cannot allocate ..." named neither). */
static void allocation_messages_name_the_file(void **state)
{
    fixture f;
    fixture_make(&f, 4);
    char paths[4][512];
    const char *const base[] = {"a.mtx", "a.mtx.gz", "a.rua", "a.safetensors"};
    for (int r = 0; r < 4; r++) snprintf(paths[r], sizeof paths[r], "%s", path_in(base[r]));
    TU_OK(write_with(0, paths[0], &f));
    TU_OK(write_with(1, paths[1], &f));
    TU_OK(write_with(3, paths[2], &f));
    TU_OK(write_with(4, paths[3], &f));
    const char *func[] = {"sla_mm_read: ", "sla_mm_read: ", "sla_rb_read: ", "sla_safetensors_read: "};
    for (int r = 0; r < 4; r++) {
        int failures = 0;
        for (int64_t k = 0;; k++) {
            sla_coo *c = NULL;
            sla_test_fail_alloc_after(k);
            sla_status st = r < 2 ? sla_mm_read(paths[r], &c)
                          : r == 2 ? sla_rb_read(paths[r], &c) : sla_safetensors_read(paths[r], &c);
            sla_test_fail_alloc_after(-1);
            if (st == SLA_OK) {
                sla_coo_free(&c);
                break;
            }
            expect(st, SLA_ENOMEM, func[r], "cannot allocate");
            char start[800];
            snprintf(start, sizeof start, "%s%s: cannot allocate", func[r], paths[r]);
            if (strncmp(sla_last_error(), start, strlen(start)) != 0)
                fail_msg("reader %d, allocation %lld: '%s' does not start with '%s'", r,
                         (long long)k, sla_last_error(), start);
            failures++;
        }
        assert_true(failures >= 3);
    }
    /* writers too (the safetensors writer allocates through cJSON only, which the hook does not
     * reach) */
    for (int w = 0; w < 4; w++) {
        sla_test_fail_alloc_after(0);
        sla_status st = write_with(w, paths[0], &f);
        sla_test_fail_alloc_after(-1);
        expect(st, SLA_ENOMEM, funcs[w], paths[0]);
    }
    fixture_free(&f);
}

/* gzip text of a size line, then `pad` bytes of blanks (or comments, before the size line). */
static unsigned char *gzip_padded(const char *head, const char *tail, size_t pad, char fill,
                                  size_t *len)
{
    size_t hl = strlen(head), tl = strlen(tail), n = hl + pad + tl;
    char *text = malloc(n);
    assert_non_null(text);
    memcpy(text, head, hl);
    memset(text + hl, fill, pad);
    for (size_t k = hl + 999; fill == ' ' && k < hl + pad; k += 1000) text[k] = '\n';
    memcpy(text + hl + pad, tail, tl);
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, n);
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    zs.next_in = (unsigned char *)text;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *len = zs.total_out;
    deflateEnd(&zs);
    free(text);
    return out;
}

/* A 3 MB file made sla hold 3.2 GB: decompressed text is capped by what the header declares. */
static void gzip_limit(void **state)
{
    const char *head = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n";
    size_t len;
    sla_coo *c = NULL;
    /* 32 MiB of blank lines after a size line declaring 2 entries: refused */
    unsigned char *gz = gzip_padded(head, "\n2 2 2\n", (size_t)32 << 20, ' ', &len);
    assert_true(len < ((size_t)1 << 20));
    expect(sla_mm_read_buffer((const char *)gz, len, "bomb.mtx.gz", &c), SLA_EIO,
           "sla_mm_read_buffer: cannot read 'bomb.mtx.gz': the decompressed text exceeds",
           "declares 2 entries");
    assert_null(c);
    free(gz);
    /* the same with 512 KiB of blanks is within the limit (1 MiB + 64 bytes per number) */
    gz = gzip_padded(head, "\n2 2 2\n", (size_t)512 << 10, ' ', &len);
    TU_OK(sla_mm_read_buffer((const char *)gz, len, "ok.mtx.gz", &c));
    assert_int_equal(c->nnz, 2);
    assert_true(c->values[1] == 2);
    sla_coo_free(&c);
    free(gz);
    /* 17 MiB of comment before the size line */
    gz = gzip_padded("%%MatrixMarket matrix coordinate real general\n%", "\n1 1 0\n",
                     (size_t)17 << 20, 'c', &len);
    expect(sla_mm_read_buffer((const char *)gz, len, "c.mtx.gz", &c), SLA_EIO,
           "before the end of the size line", NULL);
    free(gz);
    /* a header that does not parse is reported as such, not as a limit */
    gz = gzip_padded("%%MatrixMarket matrix coordinate real general\n2 2 x\n", "", 1 << 20, ' ', &len);
    expect(sla_mm_read_buffer((const char *)gz, len, "h.mtx.gz", &c), SLA_EPARSE,
           "h.mtx.gz:2: number of entries 'x' is not an integer", NULL);
    free(gz);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failed_write_keeps_old_file),
        cmocka_unit_test(devices_and_links),
        cmocka_unit_test(directories),
        cmocka_unit_test(safetensors_header_length),
        cmocka_unit_test(allocation_messages_name_the_file),
        cmocka_unit_test(gzip_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
