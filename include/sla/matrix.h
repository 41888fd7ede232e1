/* sla/matrix.h: the matrix view (pattern + dtype + batch + values), value gather/scatter,
 * properties and conversions. */
#ifndef SLA_MATRIX_H
#define SLA_MATRIX_H

#include "sla/base.h"
#include "sla/pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where the values of a matrix view and the dense blocks handed with it live. Host memory is
 *  the default (0), so a view filled by hand or by sla_matrix_view() is a host view. A device
 *  view (values a CUDA device pointer; the pattern stays a host object) is accepted only by
 *  sla_solver_create() with a backend that takes device memory (the "cuda" backend of
 *  libsla_cuda, <sla/cuda.h>), whose solves then take device blocks B, X, G, dB, dvalues; every
 *  other function that takes a view refuses a device one with SLA_EINVAL ("A is in device
 *  memory; sla_spmv reads host memory"), so that host code never dereferences a device pointer. */
typedef enum sla_memspace {
    SLA_MEM_HOST = 0,
    SLA_MEM_DEVICE = 1
} sla_memspace;

/** A borrowed view of a batch of sparse matrices that share one pattern.
 *  values has layout [batch][nnz] in the pattern's CSR order, of the given dtype. sla never
 *  copies or frees the values it is handed; the view must outlive calls that use it. */
typedef struct sla_matrix {
    const sla_pattern *pattern;
    sla_dtype dtype;
    int64_t batch;           /**< number of matrices B ≥ 1 */
    const void *values;      /**< [batch][nnz] in CSR order */
    sla_memspace space;      /**< of values (and of the blocks solved with it); default host */
} sla_matrix;

/** Makes a view (no copy). Equivalent to filling the struct by hand. */
SLA_API sla_matrix sla_matrix_view(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                   const void *values);

/** Checks a view: non-NULL pattern, valid dtype, batch ≥ 1, batch·nnz within int64, values
 *  non-NULL when nnz > 0. Messages call the view "A" ("sla_matrix_check: A->values is NULL").
 *  @param[in] check_finite  also reject NaN/Inf values (SLA_ENONFINITE naming batch, slot, row
 *                           and column).
 *  @return SLA_OK or an error naming the argument. */
SLA_API sla_status sla_matrix_check(const sla_matrix *A, int check_finite);

/** Sums values given in the caller's COO input order into CSR order (duplicates summed).
 *  @param[in]  coo_values [batch][nnz_input] of dtype.
 *  @param[out] csr_values [batch][nnz] of dtype (overwritten); must not overlap coo_values.
 *  @return SLA_OK, SLA_EINVAL (NULL, sizes overflowing, or overlapping arrays: checked before
 *          anything is written), SLA_EDTYPE. */
SLA_API sla_status sla_values_gather(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                     const void *coo_values, void *csr_values);

/** Scatters CSR-ordered values (typically gradients) back to the caller's COO order: every input
 *  entry, duplicates included, receives the value of its slot.
 *  @param[in]  csr_values [batch][nnz]; @param[out] coo_values [batch][nnz_input] (overwritten,
 *  must not overlap csr_values).
 *  @return SLA_OK, SLA_EINVAL (NULL, sizes overflowing, overlapping arrays), SLA_EDTYPE. */
SLA_API sla_status sla_values_scatter(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                      const void *csr_values, void *coo_values);

/** 1 if every matrix of the batch is numerically symmetric:
 *  |a_ij − a_ji| ≤ atol + rtol·max(|a_ij|, |a_ji|) for all stored entries, an entry missing on
 *  one side counting as 0; equal values match, infinite ones included, and NaN matches NaN (so
 *  a NaN or inf on the diagonal, its own mirror, does not make A unsymmetric), for complex
 *  values in the real and the imaginary part separately; a non-finite value matches nothing
 *  but itself (an inf mirrored by a finite value is unsymmetric for any rtol). Non-square
 *  gives 0. Every dtype (complex: Aᵀ = A, complex symmetric; see sla_matrix_is_hermitian).
 *  @return SLA_OK, SLA_EINVAL. */
SLA_API sla_status sla_matrix_is_symmetric(const sla_matrix *A, double rtol, double atol,
                                           int *is_symmetric);

/** Hermitian test A = Aᴴ for every matrix of the batch, with the tolerance of
 *  sla_matrix_is_symmetric (|a_ij − conj(a_ji)| ≤ atol + rtol·max(|a_ij|, |a_ji|); a diagonal
 *  entry needs |Im a_ii| within it). For real dtypes the same as sla_matrix_is_symmetric;
 *  complex dtypes: is_symmetric tests Aᵀ = A (complex symmetric, not Hermitian). */
SLA_API sla_status sla_matrix_is_hermitian(const sla_matrix *A, double rtol, double atol,
                                           int *is_hermitian);

/** Diagonal of a square or rectangular batch: counts over all batch elements. */
typedef struct sla_diag_info {
    int64_t present;    /**< stored diagonal entries (per matrix; same for the whole batch) */
    int64_t missing;    /**< min(nrows, ncols) − present */
    int64_t positive, negative, zero;  /**< among stored diagonal values, summed over the batch
                                            (±inf counts as positive or negative) */
    int64_t nan;        /**< stored diagonal values that are NaN (none of the three above) */
} sla_diag_info;

/** Real dtypes only (sign counts): SLA_EDTYPE for complex ones.
 *  @return SLA_OK, SLA_EINVAL, SLA_EDTYPE. */
SLA_API sla_status sla_matrix_diag_info(const sla_matrix *A, sla_diag_info *info);

/** Copies the diagonal, [batch][min(nrows, ncols)] of dtype, 0 where not stored (every dtype). */
SLA_API sla_status sla_matrix_diagonal(const sla_matrix *A, void *diag);

/** Matrix norm per batch element, as double: which = 'F' (Frobenius), '1' (max column sum of
 *  |a_ij|), 'I' (max row sum), 'M' (max |a_ij|); |a_ij| is the modulus for complex dtypes.
 *  Non-finite values are not an error: an
 *  infinite entry gives inf, a NaN entry NaN (for every which). The Frobenius norm is scaled
 *  as LAPACK's dlassq, so entries near the overflow threshold do not overflow.
 *  @param[out] norms [batch].
 *  @return SLA_OK, SLA_EINVAL (unknown which). */
SLA_API sla_status sla_matrix_norm(const sla_matrix *A, char which, double *norms);

/** Writes the dense matrices, row-major [batch][nrows][ncols] of dtype (zeros where not stored;
 *  every dtype).
 *  Meant for small matrices; refuses more than 2^31 dense elements per matrix (SLA_ESHAPE). */
SLA_API sla_status sla_matrix_to_dense(const sla_matrix *A, void *dense);

/** Builds a pattern and CSR values from row-major dense matrices [batch][nrows][ncols]: an entry
 *  is kept if |a_ij| > drop_tol in any batch element (drop_tol < 0 keeps every entry).
 *  @param[out] pattern  new pattern (input order = CSR order).
 *  @param[out] values   new [batch][nnz] array allocated with malloc; the caller frees it.
 *  @return SLA_OK, SLA_EINVAL, SLA_ENOMEM, SLA_ESHAPE (ncols > INT32_MAX). */
SLA_API sla_status sla_matrix_from_dense(int64_t nrows, int64_t ncols, sla_dtype dtype,
                                         int64_t batch, const void *dense, double drop_tol,
                                         sla_pattern **pattern, void **values);

/** Values of Aᵀ in the CSR order of sla_pattern_cached_transpose(A->pattern):
 *  out [batch][nnz], must not overlap A->values. @return SLA_OK, SLA_EINVAL, SLA_ENOMEM. */
SLA_API sla_status sla_matrix_transpose_values(const sla_matrix *A, void *out);

/** out = alpha · diag(row_scale) · A · diag(col_scale); row_scale [nrows] and col_scale [ncols]
 *  of dtype may be NULL (meaning ones). out is [batch][nnz]; it may be A->values itself (in
 *  place) but must not overlap it partially, nor overlap row_scale or col_scale (SLA_EINVAL). */
SLA_API sla_status sla_matrix_scale(const sla_matrix *A, double alpha, const void *row_scale,
                                    const void *col_scale, void *out);

/** out = alpha·A + beta·B for two views on the same pattern object, same dtype and batch.
 *  out [batch][nnz] may be A->values or B->values itself (in place) but must not overlap them
 *  partially. @return SLA_OK, SLA_EINVAL, SLA_ESHAPE. */
SLA_API sla_status sla_matrix_add(double alpha, const sla_matrix *A, double beta,
                                  const sla_matrix *B, void *out);

#ifdef __cplusplus
}
#endif
#endif
