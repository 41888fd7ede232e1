/* Status strings, the thread-local error message, checked allocation. */
#define _DEFAULT_SOURCE               /* MAP_ANONYMOUS, madvise */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#if defined(__linux__)
#include <pthread.h>
#include <sys/mman.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 uapi; older C headers lack the name */
#endif
#endif

#include "core/internal.h"

/* messages are bounded: a long one (a wrapped message with context) is cut on purpose */
#pragma GCC diagnostic ignored "-Wformat-truncation"

static _Thread_local char last_error[1024];

const char *sla_status_string(sla_status status)
{
    switch (status) {
    case SLA_OK: return "success";
    case SLA_NOT_CONVERGED: return "not converged";
    case SLA_EINVAL: return "invalid argument";
    case SLA_ENOMEM: return "out of memory";
    case SLA_EINDEX: return "index out of range";
    case SLA_ESHAPE: return "shape mismatch";
    case SLA_EDTYPE: return "unsupported dtype";
    case SLA_EPARSE: return "parse error";
    case SLA_EIO: return "input/output error";
    case SLA_ENONFINITE: return "non-finite value";
    case SLA_ESINGULAR: return "singular matrix";
    case SLA_ENOTSPD: return "matrix not symmetric positive definite";
    case SLA_EBREAKDOWN: return "breakdown";
    case SLA_EUNSUPPORTED: return "unsupported";
    case SLA_EBACKEND: return "backend error";
    case SLA_EINTERNAL: return "internal error";
    case SLA_ECALLBACK: return "callback failed";
    }
    return "unknown status";
}

const char *sla_last_error(void) { return last_error; }

void sla_clear_error(void) { last_error[0] = '\0'; }

sla_status sla_error_set(sla_status status, const char *func, const char *fmt, ...)
{
    int len = snprintf(last_error, sizeof last_error, "%s: ", func);
    if (len < 0 || (size_t)len >= sizeof last_error) return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error + len, sizeof last_error - (size_t)len, fmt, ap);
    va_end(ap);
    return status;
}

sla_status sla_error_wrap(sla_status status, const char *func, const char *fmt, ...)
{
    char prev[sizeof last_error];
    memcpy(prev, last_error, sizeof prev);
    char ctx[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    snprintf(last_error, sizeof last_error, "%s: %s: %s", func, ctx, prev);
    return status;
}

sla_status sla_error_attribute(sla_status status, const char *func)
{
    if (status >= 0) return status;
    static const char *const allocators[] = {"sla_malloc: ", "sla_calloc: "};
    const char *rest = last_error;
    for (int i = 0; i < 2; i++)
        if (strncmp(last_error, allocators[i], strlen(allocators[i])) == 0)
            rest = last_error + strlen(allocators[i]);
    size_t fl = strlen(func);
    if (rest == last_error && strncmp(last_error, func, fl) == 0 && last_error[fl] == ':')
        return status;                               /* already the caller's message */
    char prev[sizeof last_error];
    snprintf(prev, sizeof prev, "%s", rest);
    snprintf(last_error, sizeof last_error, "%s: %s", func, prev[0] ? prev : sla_status_string(status));
    return status;
}

size_t sla_dtype_size(sla_dtype dtype)
{
    switch (dtype) {
    case SLA_FLOAT64: return sizeof(double);
    case SLA_FLOAT32: return sizeof(float);
    case SLA_COMPLEX128: return 2 * sizeof(double);
    case SLA_COMPLEX64: return 2 * sizeof(float);
    }
    return 0;
}

const char *sla_dtype_name(sla_dtype dtype)
{
    switch (dtype) {
    case SLA_FLOAT64: return "float64";
    case SLA_FLOAT32: return "float32";
    case SLA_COMPLEX128: return "complex128";
    case SLA_COMPLEX64: return "complex64";
    }
    return "invalid";
}

const char *sla_version(void) { return SLA_VERSION_STRING; }

/* ---- allocation with a failure-injection hook for tests ---- */

static _Atomic int64_t alloc_countdown = -1;
static _Atomic int64_t alloc_count = 0;

int64_t sla_test_fail_alloc_after(int64_t n)
{
    int64_t c = alloc_count;
    alloc_count = 0;
    alloc_countdown = n;
    return c;
}

static int injected_failure(void)
{
    alloc_count++;
    if (alloc_countdown < 0) return 0;
    return alloc_countdown-- == 0;
}

void *sla_malloc(size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size) {
        sla_error_set(SLA_ENOMEM, "sla_malloc", "cannot allocate %s: %zu × %zu bytes overflow "
                      "the address space", what, count, size);
        return NULL;
    }
    size_t bytes = count * size;
    if (bytes > PTRDIFF_MAX) {                   /* no malloc can succeed: do not ask */
        sla_error_set(SLA_ENOMEM, "sla_malloc", "cannot allocate %zu bytes for %s (more than "
                      "the address space allows)", bytes, what);
        return NULL;
    }
    void *p = injected_failure() ? NULL : malloc(bytes ? bytes : 1);
    if (!p) sla_error_set(SLA_ENOMEM, "sla_malloc", "cannot allocate %zu bytes for %s", bytes, what);
    return p;
}

void *sla_calloc(size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size) {
        sla_error_set(SLA_ENOMEM, "sla_calloc", "cannot allocate %s: %zu × %zu bytes overflow "
                      "the address space", what, count, size);
        return NULL;
    }
    if (count * size > PTRDIFF_MAX) {
        sla_error_set(SLA_ENOMEM, "sla_calloc", "cannot allocate %zu bytes for %s (more than "
                      "the address space allows)", count * size, what);
        return NULL;
    }
    void *p = injected_failure() ? NULL : calloc(count ? count : 1, size ? size : 1);
    if (!p) sla_error_set(SLA_ENOMEM, "sla_calloc", "cannot allocate %zu bytes for %s",
                          count * size, what);
    return p;
}

void sla_free(void *p) { free(p); }

/* Large work arrays on transparent huge pages. Why: a multifrontal factorization writes its
 * workspace once, front after front, and every 4 KiB page it touches first costs a page
 * fault, ~6 µs on this project's virtual machines (the hypervisor's interrupt path): MUMPS's
 * 1 GB workspace of the 2D Helmholtz 1000² LDLᵀ spent a third of a 9 s factorization in
 * faults. madvise(MADV_HUGEPAGE) asks Linux for 2 MiB pages (honoured where THP is "madvise"
 * or "always"): 512 times fewer faults. The block is a private anonymous mapping, 2 MiB
 * aligned (huge pages need aligned ranges), zero-filled, unmapped by sla_huge_free; elsewhere
 * a calloc. */
#if defined(__linux__)
#define HUGE_PAGE ((size_t)2 << 20)

static size_t huge_round(size_t bytes) { return (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE; }

void *sla_huge_alloc(size_t bytes, const char *what)
{
    if (bytes > PTRDIFF_MAX / 2) {
        sla_error_set(SLA_ENOMEM, "sla_huge_alloc", "cannot map %zu bytes for %s (more than the "
                      "address space allows)", bytes, what);
        return NULL;
    }
    size_t body = huge_round(bytes ? bytes : 1), len = body + HUGE_PAGE;
    char *base = injected_failure() ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE,
                                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        sla_error_set(SLA_ENOMEM, "sla_huge_alloc", "cannot map %zu bytes for %s", bytes, what);
        return NULL;
    }
    size_t head = (HUGE_PAGE - (size_t)((uintptr_t)base % HUGE_PAGE)) % HUGE_PAGE;
    if (head) munmap(base, head);
    if (len - head > body) munmap(base + head + body, len - head - body);
    (void)madvise(base + head, body, MADV_HUGEPAGE);      /* advice: ignored where unsupported */
    return base + head;
}

void sla_huge_free(void *p, size_t bytes)
{
    if (p) munmap(p, huge_round(bytes ? bytes : 1));
}

/* The prefault thread: MADV_POPULATE_WRITE (Linux 5.14) maps the pages writable as a write
 * would, without writing, so it may race with the owner's own writes; chunks of 64 MiB from
 * the start (where a multifrontal factorization stores its factors as it goes). An old kernel
 * answers EINVAL on the first chunk and the thread stops: the owner faults as before. */
static void *prefault_run(void *arg)
{
    sla_prefault *h = arg;
    const size_t chunk = (size_t)64 << 20;
    for (size_t off = 0; off < h->bytes; off += chunk) {
        size_t len = h->bytes - off < chunk ? h->bytes - off : chunk;
        if (madvise((char *)h->p + off, huge_round(len), MADV_POPULATE_WRITE) != 0) break;
    }
    return NULL;
}

void sla_huge_prefault_start(sla_prefault *h, void *p, size_t bytes)
{
    h->p = p;
    h->bytes = huge_round(bytes ? bytes : 1);
    h->running = pthread_create(&h->thread, NULL, prefault_run, h) == 0;
}

void sla_huge_prefault_join(sla_prefault *h)
{
    if (h->running) pthread_join(h->thread, NULL);
    h->running = 0;
}
#else
void *sla_huge_alloc(size_t bytes, const char *what) { return sla_calloc(bytes ? bytes : 1, 1, what); }

void sla_huge_free(void *p, size_t bytes)
{
    (void)bytes;
    sla_free(p);
}

void sla_huge_prefault_start(sla_prefault *h, void *p, size_t bytes)
{
    (void)p;
    (void)bytes;
    h->running = 0;
}

void sla_huge_prefault_join(sla_prefault *h) { h->running = 0; }
#endif

void sla_partition_rows(const int64_t *rowptr, int64_t nrows, int nparts, int64_t *bounds)
{
    int64_t nnz = rowptr[nrows];
    bounds[0] = 0;
    for (int t = 1; t < nparts; t++) {
        /* first row whose start is ≥ t·nnz/nparts, also balancing rows when nnz is tiny */
        int64_t target = (int64_t)((double)nnz * t / nparts);
        int64_t lo = bounds[t - 1], hi = nrows;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (rowptr[mid] < target) lo = mid + 1; else hi = mid;
        }
        bounds[t] = lo;
    }
    bounds[nparts] = nrows;
}

int sla_all_finite(sla_dtype dtype, const void *x, int64_t n, int64_t *bad)
{
    if (sla_dtype_is_complex(dtype)) {
        /* an entry is finite when both parts are: test 2n reals, report the entry */
        int64_t b2 = 0;
        int ok = sla_all_finite(sla_dtype_real(dtype), x, 2 * n, &b2);
        if (!ok && bad) *bad = b2 / 2;
        return ok;
    }
    if (dtype == SLA_FLOAT64) {
        const double *v = x;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(v[i])) { if (bad) *bad = i; return 0; }
    } else {
        const float *v = x;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(v[i])) { if (bad) *bad = i; return 0; }
    }
    return 1;
}
