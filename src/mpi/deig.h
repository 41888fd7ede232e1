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

/* The shift-invert operator of sla_dist_eigsh (eigsh_sinv.c): S_b = A_b − σM_b (M NULL: I)
 * formed on A's pattern and factored by sla_dist_lu. Collective; SLA_ESINGULAR (agreed) when
 * some S_b is numerically singular, SLA_EUNSUPPORTED when M's entries are not in A's pattern
 * (or A lacks a diagonal entry without M). */
typedef struct dist_sinv dist_sinv;
sla_status dist_sinv_create(const sla_dist_matrix *A, const sla_dist_matrix *M, double sigma,
                            dist_sinv **out);
/* sla_block_fn: Y = S_b⁻¹ X (standard) or M_b S_b⁻¹ M_b X (generalized), column-major n × m.
 * Collective. */
sla_status dist_sinv_block(void *ctx, int64_t b, int64_t n, int64_t m, const double *X,
                           double *Y);
void dist_sinv_free(dist_sinv **s);

#endif
