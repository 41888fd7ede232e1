/* Private to the distributed eigensolver (src/mpi/eigsh.c, eigsh_vjp.c). Not installed. */
#ifndef SLA_MPI_DEIG_H
#define SLA_MPI_DEIG_H

#include "mpi/dsolver.h"

/* A is non-NULL with a pattern, square, float64 and locally well formed (the message names
 * `name` and starts with func). Local. */
sla_status dist_eig_check_matrix(const char *func, const sla_dist_matrix *A, const char *name);

/* norm[b] = ‖A_b‖₁ = max row sum of |a| (A symmetric) over all ranks, for every batch element
 * (exact: a maximum). Collective. */
sla_status dist_eig_norm1(const sla_dist_matrix *A, const char *func, double *norm);

#endif
