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

/* Batch element b's m local values of A (A's dtype) as double, into out [m]; and the gradient
 * back: dvalues[b][s] = gb · buf[s] in A's dtype (lu_logdet_grad.c, both methods). */
void dist_lu_values_double(const dist_lu_view *v, int64_t b, int64_t m, double *out);
void dist_lu_grad_store(const dist_lu_view *v, int64_t b, int64_t m, double gb,
                        const double *buf, void *dvalues);

/* What the parallel-MUMPS gradient reads (lu_logdet_grad.c fills it): this rank's m slots with
 * global row[] and col[], every rank's count and displacement in the gathered (rank) order,
 * total = global nnz, the weights g [batch] (NULL: 1), a work buffer [m] and the output
 * dvalues [batch][m] of A's dtype. */
typedef struct dist_logdet_slots {
    const dist_lu_view *v;
    MPI_Comm comm;
    const char *func;
    int64_t m, total;
    const int64_t *row, *col;
    const int *cnt, *dsp;
    const double *g;
    double *buf;
    void *dvalues;
} dist_logdet_slots;

/* dvalues[b][s] = g_b · (A_b⁻¹)[col[s], row[s]] by parallel MUMPS's selected inverse on its
 * distributed factors (lu_logdet_mumps.c), the entries requested in chunks of max(2^20, N) so
 * that rank 0 holds O(N), not O(nnz). Collective; the same status on every rank. */
sla_status dist_pmumps_logdet_grad(const dist_logdet_slots *r);

/* Test hook: the number of entries per selected-inverse request, exactly (≤ 0: the default,
 * max(2^20, N)); rank 0's setting is used on every rank. Returns the previous setting (0: the
 * default). */
SLA_API int64_t dist_test_pmumps_chunk(int64_t entries);

#endif
