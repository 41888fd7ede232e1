/* Loading parallel MUMPS (Amestoy, Duff, L'Excellent & Koster, SIAM J. Matrix Anal. Appl.
 * 23(1), 2001; Debian's libmumps-dev: libdmumps over MPI) at run time: the one loader every
 * libsla_mpi use of it goes through (pmumps.h).
 *
 * Why dlopen and RTLD_DEEPBIND: libsla links sequential MUMPS (libdmumps_seq), whose symbols
 * (dmumps_c, every Fortran routine, mumps_common's, even a fake MPI's C and Fortran entry
 * points) have the names of parallel MUMPS's. Linked normally, one of the two would bind to the
 * other's routines. Loaded with RTLD_LOCAL | RTLD_DEEPBIND, libdmumps and its dependencies
 * (libmumps_common, Open MPI's Fortran bindings, ScaLAPACK) resolve their symbols in their own
 * tree first, so both MUMPS coexist in one process (checked: the sequential solver gives the
 * same bits after the parallel one ran). The library is never closed (Fortran runtimes do not
 * unload cleanly). Never in a sanitizer build (cmake/sla_mpi.cmake: the ASan runtime refuses
 * RTLD_DEEPBIND and ends the process). */
#define _GNU_SOURCE
#include <stdio.h>

#include "direct/direct.h"
#include "mpi/dist.h"
#include "mpi/pmumps.h"

#if SLA_HAVE_PMUMPS
#include <dlfcn.h>
#include <pthread.h>

static const char *const ROUTINE = "dmumps_c (parallel MUMPS)";

static pthread_once_t pm_once = PTHREAD_ONCE_INIT;
static void (*pm_fn)(DMUMPS_STRUC_C *);
static char pm_why[512];
/* MUMPS instances share Fortran module state: one call at a time in the process */
static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;

static void pm_load(void)
{
    void *h = dlopen(SLA_PMUMPS_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) {
        snprintf(pm_why, sizeof pm_why, "parallel MUMPS could not be loaded: %s", dlerror());
        return;
    }
    pm_fn = (void (*)(DMUMPS_STRUC_C *))dlsym(h, "dmumps_c");
    if (!pm_fn) snprintf(pm_why, sizeof pm_why, "%s has no dmumps_c", SLA_PMUMPS_PATH);
}

int sla_dist_have_parallel_mumps(void)
{
    pthread_once(&pm_once, pm_load);
    return pm_fn != NULL;
}

const char *dist_pmumps_unavailable(void)
{
    return sla_dist_have_parallel_mumps() ? NULL : pm_why;
}

void dist_pmumps_call(DMUMPS_STRUC_C *id, int job)
{
    pthread_mutex_lock(&pm_lock);
    id->job = job;
    pm_fn(id);
    pthread_mutex_unlock(&pm_lock);
}

sla_status dist_pmumps_run(DMUMPS_STRUC_C *id, int job, const char *phase)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        dist_pmumps_call(id, job);
        if (id->PMUMPS_INFOG(1) >= 0) return SLA_OK;
        if (!sla_mumps_retry_workspace(id->PMUMPS_INFOG(1), &id->PMUMPS_ICNTL(14))) break;
    }
    return sla_mumps_error(ROUTINE, id->PMUMPS_INFOG(1), id->PMUMPS_INFOG(2), phase);
}

#else

int sla_dist_have_parallel_mumps(void) { return 0; }

const char *dist_pmumps_unavailable(void)
{
    return "libsla_mpi was built without parallel MUMPS (libmumps-dev: libdmumps, dmumps_c.h; "
           "never in a sanitizer build)";
}

#endif
