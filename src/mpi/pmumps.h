/* The one loader of parallel MUMPS (pmumps.c), shared by every libsla_mpi use of it (the
 * log-determinant gradient's selected inverse, lu_logdet_mumps.c). Not installed.
 * Why it is loaded and not linked: see pmumps.c. */
#ifndef SLA_MPI_PMUMPS_H
#define SLA_MPI_PMUMPS_H

#include "sla/mpi_config.h"
#include "sla/base.h"

/* NULL when parallel MUMPS can be used in this process, else why not. Local. */
const char *dist_pmumps_unavailable(void);

#if SLA_HAVE_PMUMPS
#include <dmumps_c.h>

#define PMUMPS_ICNTL(I) icntl[(I) - 1]
#define PMUMPS_INFOG(I) infog[(I) - 1]

/* id->job ← job, then dmumps_c(id), one call at a time in the process (MUMPS instances share
 * Fortran module state). Only after dist_pmumps_unavailable() returned NULL. Collective over
 * id's communicator. */
void dist_pmumps_call(DMUMPS_STRUC_C *id, int job);

/* dist_pmumps_call, retried with more workspace (ICNTL(14)) when MUMPS asks for it; INFOG(1)
 * < 0 becomes a status naming phase. INFOG is global, so every rank returns the same status.
 * Collective. */
sla_status dist_pmumps_run(DMUMPS_STRUC_C *id, int job, const char *phase);
#endif

#endif
