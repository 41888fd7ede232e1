/* Process facts libsla reports: its own thread count (rule: sla/base.h, sla_set_num_threads), kept apart from OpenMP's
 * global nthreads-var so that a host that set it (torch sets 1) neither slows libsla nor is
 * changed by it. Every parallel region in libsla passes sla_threads() as num_threads. */
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "core/internal.h"

static int user_threads;          /* > 0: set by sla_set_num_threads */
static int default_threads = 1;   /* rules 2–4, computed once */
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

/* a positive integer at the start of s (OMP_NUM_THREADS may be a list "4,2"), else 0 */
static int leading_count(const char *s)
{
    if (!s) return 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || v <= 0 || v > 4096 || (*end != '\0' && *end != ',')) return 0;
    return (int)v;
}

static void compute_default(void)
{
    int n = leading_count(getenv("SLA_NUM_THREADS"));
    if (n == 0) n = leading_count(getenv("OMP_NUM_THREADS"));
    if (n == 0) {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    }
    if (n <= 0) n = omp_get_num_procs();
    default_threads = n > 0 ? n : 1;
}

int sla_threads_configured(void)
{
    int u = __atomic_load_n(&user_threads, __ATOMIC_RELAXED);
    if (u > 0) return u;
    pthread_once(&default_once, compute_default);
    return default_threads;
}

int sla_threads(void)
{
    return omp_in_parallel() ? 1 : sla_threads_configured();
}

sla_status sla_set_num_threads(int n)
{
    if (n < 0)
        return sla_error_set(SLA_EINVAL, __func__, "n = %d is negative (0 restores the default)", n);
    __atomic_store_n(&user_threads, n, __ATOMIC_RELAXED);
    return SLA_OK;
}

int sla_get_num_threads(void)
{
    return sla_threads_configured();
}

int64_t sla_peak_rss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss <= 0) return -1;
    return 1024 * (int64_t)ru.ru_maxrss;      /* Linux reports kilobytes */
}
