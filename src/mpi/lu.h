/* Private parts of the distributed LU (lu_superlu.c, lu_condest.c). Not installed. */
#ifndef SLA_MPI_LU_H
#define SLA_MPI_LU_H

#include "mpi/dist.h"
#include "mpi/pmumps.h"   /* dist_pmumps_unavailable */

/* y ← op(A_b)⁻¹ y for one batch element, y [n_local] double, in place. Collective. */
typedef sla_status (*dist_lu_apply_fn)(void *ctx, int64_t b, sla_op op, double *y);

/* rcond of the row-equilibrated A_b (as src/direct/condest.c: 1/(‖RA‖₁·est‖(RA)⁻¹‖₁), Higham's
 * estimator) over the ranks, with solves by fn. values: A_b's [nnz_local] of A's dtype.
 * Collective; the same *rcond on every rank. */
sla_status dist_lu_rcond(const sla_dist_pattern *P, sla_dtype dtype, const void *values,
                         int64_t b, dist_lu_apply_fn fn, void *ctx, double *rcond);

/* What the log-determinant gradient (lu_logdet_grad.c) reads of a factorization: borrowed,
 * valid as long as F. rcond [batch], the same on every rank. */
typedef struct dist_lu_view {
    const sla_dist_pattern *P;
    sla_dtype dtype;
    int64_t batch;
    const void *values;         /* [batch][nnz_local] */
    const double *rcond;
} dist_lu_view;
dist_lu_view dist_lu_parts(const sla_dist_lu *F);

/* Parallel MUMPS's selected inverse (lu_logdet_mumps.c): on rank 0, ggrad[b·total + q] =
 * (A_b⁻¹)[gcol[q], grow[q]] for every gathered slot q (each rank's m slots, global row[] and
 * col[], concatenated in rank order). grow and gcol (rank 0's gathered [total], NULL elsewhere)
 * are consumed: freed and set to NULL before MUMPS allocates. Collective; the same status on
 * every rank. */
sla_status dist_pmumps_inverse_entries(const dist_lu_view *v, MPI_Comm comm, const char *func,
                                       int64_t m, const int64_t *row, const int64_t *col,
                                       int64_t total, int64_t **grow, int64_t **gcol,
                                       double *ggrad);

#endif
