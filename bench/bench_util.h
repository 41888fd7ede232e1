/* Small helpers shared by the C benchmarks. */
#ifndef SLA_BENCH_UTIL_H
#define SLA_BENCH_UTIL_H

#include <time.h>

/* Wall-clock seconds (monotonic). */
static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* qsort comparison of doubles, ascending (medians of repeated runs). */
static inline int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
