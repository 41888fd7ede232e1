/* For libFuzzer targets of readers that take a path: the input bytes in an in-memory file
 * (memfd), named by /proc/self/fd/N. One file serves all runs; nothing touches the disk. */
#ifndef SLA_FUZZ_FILE_H
#define SLA_FUZZ_FILE_H

#define _GNU_SOURCE             /* memfd_create; include this header first */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* The path of a file holding exactly data[0, size); NULL if the memfd cannot be set up. */
static const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("sla-fuzz", MFD_CLOEXEC);
        if (fd < 0) return NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) return NULL;
    for (size_t done = 0; done < size;) {
        ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
        if (w <= 0) return NULL;
        done += (size_t)w;
    }
    return path;
}

static void fuzz_check(int ok)
{
    if (!ok) __builtin_trap();
}

#endif
