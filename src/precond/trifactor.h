/* Sparse triangular factors of IC(0) and ILU(0) (private to precond/).
 *
 * A factor is the strictly lower or strictly upper part of a square CSR pattern (its own row
 * pointers and column indices, sorted), its values [batch][nnz] kept by the owner, and a
 * diagonal given at solve time as 1/d (or none: unit diagonal). Solves are row-oriented
 * gathers, lower by forward and upper by backward substitution, each row summed in stored
 * order in double. With threads they run by level schedule (Saad 2003, §11.6.1: level of row
 * i = 1 + max level of the rows it reads); every row is still computed by one thread in the
 * same order, so results do not depend on the thread count or on timing.
 * The transposed solves of ILU(0) (op = T) run the same kernels on the transposed factors
 * (sla_tri_transpose), so every solve is a gather. */
#ifndef SLA_PRECOND_TRIFACTOR_H
#define SLA_PRECOND_TRIFACTOR_H

#include "core/internal.h"

typedef struct sla_tri {
    int64_t n, nnz;
    int upper;                   /* 0: strictly lower (forward), 1: strictly upper (backward) */
    int64_t *rowptr;             /* [n + 1] */
    int32_t *colind;             /* [nnz], sorted within rows */
    int64_t nlevels;             /* 0: no schedule (serial solve) */
    int64_t *levptr;             /* [nlevels + 1] into levrows */
    int32_t *levrows;            /* [n] rows by level, ascending within a level */
} sla_tri;

/* The strictly lower (upper = 0) or upper (upper = 1) part of the square pattern p, and
 * slot[k] = the slot of p holding entry k of the factor ([nnz], allocated here). Also the
 * diagonal slots diag[i] (-1 if not stored), when diag is not NULL ([n], caller-allocated).
 * @return SLA_OK, SLA_ENOMEM. */
sla_status sla_tri_from_pattern(const sla_pattern *p, int upper, sla_tri *T, int64_t **slot,
                                int64_t *diag);

/* Tt = Tᵀ (lower ↔ upper) and perm[k] = the entry of T that entry k of Tt comes from
 * ([Tt.nnz], allocated here). @return SLA_OK, SLA_ENOMEM. */
sla_status sla_tri_transpose(const sla_tri *T, sla_tri *Tt, int64_t **perm);

/* Builds T's level schedule when the current thread count and the level widths make a
 * parallel solve worthwhile; otherwise leaves nlevels = 0. @return SLA_OK, SLA_ENOMEM. */
sla_status sla_tri_schedule(sla_tri *T);

void sla_tri_free(sla_tri *T);

/* out = T̂⁻¹ rhs for T̂ = unit or diagonal-scaled triangular: row i of the result is
 *   out_i = (rhs_i − Σ_j t_ij out_j) · inv_diag_i   (inv_diag NULL: · 1),
 * values [T.nnz] and inv_diag [n] of dtype. out may alias rhs. */
void sla_tri_solve(const sla_tri *T, sla_dtype dtype, const void *values, const void *inv_diag,
                   const void *rhs, void *out);

/* Batch element b of factor values [batch][T->nnz] of dtype. */
void *sla_tri_values(const sla_tri *T, sla_dtype dtype, const void *values, int64_t b);

/* Tᵀ kept as a factor of its own (so its substitution is a row gather too), with values for
 * every batch element gathered from those of the source factor. */
typedef struct sla_tri_mirror {
    sla_tri T;                   /* the transposed factor, with its level schedule */
    int64_t *perm;               /* [nnz]: entry of the source factor for each entry of T */
    void *values;                /* [batch][nnz] of dtype */
} sla_tri_mirror;

/* Symbolic part of the mirror of src (pattern, schedule, value storage). @return SLA_OK, SLA_ENOMEM. */
sla_status sla_tri_mirror_create(const sla_tri *src, sla_dtype dtype, int64_t batch,
                                 sla_tri_mirror *M);

/* M's values from the source factor's values [batch][nnz] (numeric part, after each factorization). */
void sla_tri_mirror_gather(sla_tri_mirror *M, sla_dtype dtype, int64_t batch, const void *src_values);

void sla_tri_mirror_free(sla_tri_mirror *M);

/* Row-by-row numeric factorization driver (IC(0), ILU(0)). Runs row(ctx, b, i, marker) for
 * every batch element b and row i, in an order where row i comes after the rows named by the
 * columns of row i of the strictly lower factor L (all that a zero-fill row reads): in
 * parallel over the batch when it has at least as many elements as threads, else by L's level
 * schedule when it has one, else serially. marker is a per-thread [n] int64 array, all −1
 * between rows (row() must restore it). row() returns nonzero for a failed pivot; the first
 * failure (smallest batch element, then smallest row: the same whatever the thread count) is
 * returned in *fail_b, *fail_row (−1 if none). @return SLA_OK, SLA_ENOMEM. */
typedef int (*sla_tri_row_fn)(void *ctx, int64_t b, int64_t i, int64_t *marker);
sla_status sla_tri_factor(const sla_tri *L, int64_t batch, sla_tri_row_fn row, void *ctx,
                          int64_t *fail_b, int64_t *fail_row);

#endif

