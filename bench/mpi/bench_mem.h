/* Memory figures shared by the distributed benchmarks (bench_mpi_cg, bench_petsc_cg). */
#ifndef SLA_BENCH_MEM_H
#define SLA_BENCH_MEM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <malloc.h>

/* Peak resident memory of the solve phase alone (Linux): writing 5 to /proc/self/clear_refs
 * resets VmHWM to the current RSS (after malloc_trim); VmHWM read after the solves is the phase's peak, in MiB. */
static inline void hwm_reset(void)
{
    malloc_trim(0);    /* hand the heap freed after assembly back first (glibc keeps it) */
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) fputs("5", f), fclose(f);
}

static inline double hwm_mb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb / 1024.0;
}

/* Peak RSS so far (ru_maxrss, in MiB; hwm_reset() resets it too on Linux). */
static inline double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

#endif
