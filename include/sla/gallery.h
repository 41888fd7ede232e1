/* sla/gallery.h: test and benchmark matrices built directly in CSR form (structured-grid
 * stencils, graph Laplacians), shared by torch_sla.datasets, tests and benchmarks. */
#ifndef SLA_GALLERY_H
#define SLA_GALLERY_H

#include "sla/base.h"
#include "sla/pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most grid dimensions of sla_gallery_grid. */
#define SLA_GALLERY_MAX_DIMS 8

/** The finite-difference stencil matrix of a structured grid, built row by row in CSR order
 *  (no COO pass, no sort): nodes dims[0] × … × dims[ndim−1] numbered row-major (the last axis
 *  fastest, node p = ((i0·d1 + i1)·d2 + i2)…), n = Π dims. Row p holds `diag` on the diagonal,
 *  `lower[a]` at the neighbour one step down axis a (i_a − 1) and `upper[a]` one step up
 *  (i_a + 1), where those neighbours exist (Dirichlet boundary: no entry outside the grid).
 *  Examples: 1D Laplacian tridiag(−1, 2, −1) is ndim 1, diag 2, lower = upper = {−1}; the
 *  5-point Laplacian ndim 2, diag 4, all −1; first-order upwind convection adds to lower.
 *  @param[in]  ndim            1 ≤ ndim ≤ SLA_GALLERY_MAX_DIMS.
 *  @param[in]  dims            [ndim] sizes ≥ 1 (n must fit int32 columns: n ≤ INT32_MAX).
 *  @param[in]  lower, upper    [ndim] couplings.
 *  @param[out] pattern         new pattern (input order = CSR order); sla_pattern_free().
 *  @param[out] values          new [nnz] float64 values in CSR order; sla_free().
 *  @return SLA_OK; SLA_EINVAL naming the bad argument (ndim, a size, n too large, NULL);
 *          SLA_ENOMEM. Not collective. */
SLA_API sla_status sla_gallery_grid(int ndim, const int64_t *dims, double diag,
                                    const double *lower, const double *upper,
                                    sla_pattern **pattern, double **values);

/** The Laplacian L = D − W + shift·I of an undirected weighted graph on n nodes: for every
 *  edge k, (src[k], dst[k], w_k) adds −w_k at (src, dst) and (dst, src) and w_k to both
 *  diagonal entries (repeated edges add up; self-loops are ignored). Every diagonal entry is
 *  stored (an isolated node's is `shift`). Built as CSR rows (counting pass, then the entries
 *  of each row; duplicates summed by the pattern), without a COO copy of the matrix.
 *  @param[in]  weights  [nedges] or NULL (all 1).
 *  @param[out] pattern, values  as sla_gallery_grid (values summed, CSR order).
 *  @return SLA_OK; SLA_EINDEX naming the first edge with an endpoint outside [0, n);
 *          SLA_EINVAL (negative sizes, NULL, a non-finite weight or shift); SLA_ENOMEM. */
SLA_API sla_status sla_gallery_graph_laplacian(int64_t n, int64_t nedges, const int64_t *src,
                                               const int64_t *dst, const double *weights,
                                               double shift, sla_pattern **pattern,
                                               double **values);

#ifdef __cplusplus
}
#endif
#endif
