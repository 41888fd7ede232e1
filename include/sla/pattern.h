/* sla/pattern.h: sparsity patterns (CSR structure + the map from the caller's COO order). */
#ifndef SLA_PATTERN_H
#define SLA_PATTERN_H

#include "sla/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque, immutable, reference-counted sparsity pattern of an nrows × ncols matrix in CSR form:
 *  row pointers (int64, nrows + 1), column indices (int32, sorted and unique within each row),
 *  and the map from the caller's input entries to CSR slots (duplicates share one slot). */
typedef struct sla_pattern sla_pattern;

/** Builds a pattern from COO indices given in any order.
 *
 *  @param[in]  nrows, ncols  matrix shape, ≥ 0; ncols ≤ INT32_MAX (column indices are int32).
 *  @param[in]  nnz_in        number of input entries, ≥ 0.
 *  @param[in]  row, col      [nnz_in] 0-based int64 indices (may be NULL when nnz_in = 0).
 *  @param[out] out           new pattern (refcount 1); release with sla_pattern_free().
 *  Entries with equal (row, col) are duplicates: they map to one CSR slot, whose value is the
 *  sum of theirs (sla_values_gather) and whose gradient each of them receives (sla_values_scatter).
 *  Cost O(nnz_in log(max row length) + nrows).
 *  @return SLA_OK; SLA_EINVAL (NULL argument, negative size); SLA_EINDEX naming the first entry
 *          with a negative or out-of-range index; SLA_ENOMEM. *out is NULL on error. */
SLA_API sla_status sla_pattern_from_coo(int64_t nrows, int64_t ncols, int64_t nnz_in,
                                        const int64_t *row, const int64_t *col, sla_pattern **out);

/** Builds a pattern from CSR arrays (validated; unsorted columns are sorted, repeated columns in a
 *  row are treated as COO duplicates). The input entry order is the CSR order given, so the map
 *  tells where input entry k went.
 *
 *  @param[in]  nrows, ncols  shape, ≥ 0; ncols ≤ INT32_MAX.
 *  @param[in]  rowptr        [nrows + 1] int64, rowptr[0] = 0, non-decreasing.
 *  @param[in]  colind        [rowptr[nrows]] int64 column indices in [0, ncols).
 *  @param[out] out           new pattern; release with sla_pattern_free().
 *  @return SLA_OK; SLA_EINVAL naming a bad row pointer; SLA_EINDEX naming the first bad column
 *          index; SLA_ENOMEM. */
SLA_API sla_status sla_pattern_from_csr(int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                        const int64_t *colind, sla_pattern **out);

/** Builds a pattern ON the caller's CSR arrays, without copying them (the exception to the
 *  ownership convention of sla.h: these arrays are borrowed beyond the call). For a caller that
 *  already holds a large matrix's structure (a torch CSR tensor, a generator's arrays): the
 *  pattern then costs its header only, against 12 bytes per entry and 8 per row for the copy
 *  of sla_pattern_from_csr (whose int64 columns the caller must also hold).
 *
 *  @param[in]  nrows, ncols  shape, ≥ 0; ncols ≤ INT32_MAX.
 *  @param[in]  rowptr        [nrows + 1] int64 row pointers, rowptr[0] = 0, non-decreasing:
 *                            borrowed. NULL when rowptr32 is given.
 *  @param[in]  rowptr32      [nrows + 1] int32 row pointers (enough while nnz ≤ INT32_MAX,
 *                            torch's int32 CSR): widened into the pattern's own int64 array
 *                            (8 bytes per row; the kernels read int64, or
 *                            the pattern's own int32 copy): read during the call only. NULL
 *                            when rowptr is given. Exactly one of rowptr, rowptr32.
 *  @param[in]  colind        [nnz = rowptr[nrows]] int32 column indices in [0, ncols), strictly
 *                            increasing within each row (sorted, no repeats: use
 *                            sla_pattern_from_csr otherwise): borrowed. NULL allowed if nnz = 0.
 *  @param[in]  release       called once as release(owner) after the pattern's last reference
 *                            is dropped (sla_pattern_free from any thread; objects that retain
 *                            the pattern — matrices' solvers, preconditioners, caches — hold it
 *                            that long), e.g. to free the arrays or drop a reference on their
 *                            owner. NULL: the caller keeps the arrays alive and unchanged by its
 *                            own means until every object built on the pattern is freed.
 *  @param[in]  owner         passed to release; not used otherwise.
 *  @param[out] out           new pattern (refcount 1, input order = CSR order, so values are
 *                            [nnz] in the caller's order and gather/scatter are copies).
 *  The borrowed arrays are read, never written, and must not change while the pattern lives:
 *  the pattern is checked once here, and a column changed later could be read out of range.
 *  Cost O(nrows + nnz), one pass, no allocation except the header (and the int64 row pointers
 *  for rowptr32).
 *  @return SLA_OK; SLA_EINVAL (NULL or both row pointer arrays, rowptr[0] ≠ 0, a decreasing row
 *          pointer naming the row, a column not above its predecessor naming its index);
 *          SLA_EINDEX naming the first column out of range (negative included); SLA_ENOMEM.
 *          On error *out is NULL, release is not called and nothing is kept. Not collective. */
SLA_API sla_status sla_pattern_borrow_csr(int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                          const int32_t *rowptr32, const int32_t *colind,
                                          void (*release)(void *owner), void *owner,
                                          sla_pattern **out);

/** Builds the pattern of Aᵀ (ncols × nrows) and, if perm is not NULL, the permutation between the
 *  two CSR orders: values_T[j] = values_A[perm[j]] for j in [0, nnz). perm is caller-allocated
 *  [nnz] int64. The new pattern's input order is A's CSR order (its map is the inverse of perm).
 *  @return SLA_OK, SLA_EINVAL, SLA_ENOMEM. */
SLA_API sla_status sla_pattern_transpose(const sla_pattern *p, sla_pattern **out, int64_t *perm);

/** Adds a reference; returns p. */
SLA_API sla_pattern *sla_pattern_retain(sla_pattern *p);

/** Drops a reference and sets *p to NULL; the pattern is freed with its last reference.
 *  NULL and *p == NULL are allowed. */
SLA_API void sla_pattern_free(sla_pattern **p);

SLA_API int64_t sla_pattern_nrows(const sla_pattern *p);
SLA_API int64_t sla_pattern_ncols(const sla_pattern *p);
/** Number of CSR slots (unique entries). */
SLA_API int64_t sla_pattern_nnz(const sla_pattern *p);
/** Number of input entries the pattern was built from (≥ nnz when there were duplicates). */
SLA_API int64_t sla_pattern_nnz_input(const sla_pattern *p);
/** Borrowed [nrows + 1] int64 row pointers. */
SLA_API const int64_t *sla_pattern_rowptr(const sla_pattern *p);
/** Borrowed [nnz] int32 column indices, sorted within each row. */
SLA_API const int32_t *sla_pattern_colind(const sla_pattern *p);
/** Borrowed [nnz_input] int64 map: input entry k lives in CSR slot map[k]. */
SLA_API const int64_t *sla_pattern_map(const sla_pattern *p);
/** Borrowed [nnz] int64 row index of each CSR slot (built on first use, thread-safe). NULL only
 *  if that allocation failed. */
SLA_API const int64_t *sla_pattern_rowind(const sla_pattern *p);
/** 1 if input entry k is CSR slot k for every k (sorted unique CSR input, gallery matrices), so
 *  gather and scatter are copies; answered without building the map (sla_pattern_map builds it
 *  on first request, 8 bytes per entry). 0 otherwise or for NULL. */
SLA_API int sla_pattern_map_is_identity(const sla_pattern *p);
/** 1 if some input entries were duplicates, else 0. */
SLA_API int sla_pattern_has_duplicates(const sla_pattern *p);

/** The cached transpose of p (built on first use, thread-safe, owned by p: do not free) and its
 *  permutation (values_T[j] = values_A[perm[j]]). Used by Aᵀ·x kernels so that they run as
 *  row-parallel gathers with results independent of the thread count.
 *  @return SLA_OK, SLA_EINVAL, SLA_ENOMEM. */
SLA_API sla_status sla_pattern_cached_transpose(const sla_pattern *p, const sla_pattern **pt,
                                                const int64_t **perm);

/** Slot of entry (i, j), or -1 if it is not in the pattern (binary search in row i). */
SLA_API int64_t sla_pattern_find(const sla_pattern *p, int64_t i, int64_t j);

/** 1 if p is structurally symmetric (square, and (i,j) present iff (j,i) present), else 0. */
SLA_API int sla_pattern_is_structurally_symmetric(const sla_pattern *p);

/** Connected components of the graph of a square pattern, each stored (i, j) an undirected
 *  edge i — j (self-loops ignored): labels[i] in [0, *ncomponents), components numbered in
 *  order of their smallest node (so node 0 is in component 0). Union–find, O(nnz α(n)).
 *  @param[out] labels       caller-allocated [nrows] int64.
 *  @param[out] ncomponents  number of components (0 for a 0 × 0 pattern).
 *  @return SLA_OK; SLA_ESHAPE (not square); SLA_EINVAL (NULL argument); SLA_ENOMEM. */
SLA_API sla_status sla_pattern_connected_components(const sla_pattern *p, int64_t *labels,
                                                    int64_t *ncomponents);

/** Row-length statistics and bandwidth of a pattern. */
typedef struct sla_pattern_stats {
    int64_t min_row_nnz, max_row_nnz;   /**< 0 for an empty pattern */
    double mean_row_nnz, std_row_nnz;   /**< population standard deviation */
    int64_t empty_rows, empty_cols;
    int64_t lower_bandwidth;            /**< max(i - j) over entries with i > j, else 0 */
    int64_t upper_bandwidth;            /**< max(j - i) over entries with j > i, else 0 */
    int64_t diag_present;               /**< number of i < min(nrows, ncols) with (i,i) stored */
} sla_pattern_stats;

/** Fills *stats. @return SLA_OK, SLA_EINVAL. */
SLA_API sla_status sla_pattern_get_stats(const sla_pattern *p, sla_pattern_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
