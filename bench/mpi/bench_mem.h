/* Memory figures shared by the distributed benchmarks (bench_mpi_cg, bench_petsc_cg). */
#ifndef SLA_BENCH_MEM_H
#define SLA_BENCH_MEM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Peak resident memory of the solve phase alone (Linux): writing 5 to /proc/self/clear_refs
 * resets VmHWM to the current RSS; VmHWM read after the solves is the phase's peak, in MiB. */
static inline void hwm_reset(void)
{
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

/* Peak RSS of the whole run (ru_maxrss), in MiB. */
static inline double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

#endif
