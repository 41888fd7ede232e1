/* sla/mpi.h: libsla_mpi, distributed sparse matrices over MPI (link with sla::sla_mpi or
 * `pkg-config sla_mpi`).
 *
 * ============================================================================================
 * Conventions of the distributed layer (in addition to those of sla.h)
 * ============================================================================================
 * Layout     an sla_dist_layout says which rank owns which of N global indices (rows of a
 *            matrix, entries of a vector). Ownership is contiguous ranges or any partition
 *            (non-contiguous: a rank may own global indices 3, 17 and 40). A rank's owned
 *            indices are numbered 0 … n_local − 1 in ascending global order (the local index);
 *            a distributed vector is, on each rank, the array of its owned entries in that order.
 * Matrix     each rank owns the rows of its row layout. Its local rows split into a diagonal
 *            block (columns owned by this rank in the column layout, local column indices) and
 *            an off-diagonal block (every other column, compressed into "ghost" columns
 *            0 … nghost − 1 with a ghost-to-global map): hypre's ParCSR, PETSc's MPIAIJ. Both
 *            blocks are sla_patterns; one sla_dist_pattern serves a batch of value sets.
 * Values     a rank's local values are [batch][nnz_local] with, in each batch element, the
 *            diagonal block's nnz_diag slots (its CSR order) followed by the off-diagonal
 *            block's nnz_offd slots. sla_dist_values_gather() builds them from the caller's COO
 *            values (in the order each rank handed its entries in), sla_dist_values_scatter()
 *            takes gradients back to that order.
 * Halo plan  computed once when the pattern is built and kept with it: the neighbours this
 *            rank receives ghost values from and sends owned values to, with their index
 *            lists. New values never rebuild it.
 * Indices    global indices int64, 0-based; local block column indices int32 (sla_pattern's).
 * Collective every function marked "collective" must be called by every rank of the layout's
 *            communicator, in the same order, with the same dtype, batch, k, op and flags. They
 *            never hang on bad input: an error found on any rank (bad argument, NaN, index out
 *            of range, failed allocation, arguments that differ between ranks) is agreed on,
 *            and every rank returns the same status and the same message, which names the
 *            lowest failing rank: "sla_dist_spmv: rank 2: x is NULL". The exception is a
 *            NULL layout, pattern or matrix, whose communicator is unknown: that rank returns
 *            SLA_EINVAL alone. Outputs are untouched on error on every rank. The library never
 *            calls MPI_Abort, prints or exits.
 * Communica- layouts duplicate the communicator they are given (MPI_Comm_dup) and send only
 * tors       on the duplicate, so sla's messages never meet the caller's. MPI must be
 *            initialized (MPI_Init or MPI_Init_thread) before any call; a layout and the objects
 *            built on it are used by one thread at a time.
 * Determinism results are bit-identical run to run for a fixed number of ranks, partition and
 *            thread count: incoming halo contributions are added in ascending rank order, and
 *            reductions (dots, norms) are summed locally in fixed chunks (independent of the
 *            thread count) and across ranks by a recursive-doubling tree of fixed shape, so
 *            that every rank holds the same bits. They differ from serial results by rounding
 *            only (a row is summed as diagonal block, then off-diagonal block).
 * ============================================================================================
 */
#ifndef SLA_MPI_H
#define SLA_MPI_H

#include <mpi.h>

#include "sla/sla.h"
#include "sla/mpi_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/** Agrees on a status across comm. Collective.
 *  Every rank passes its local status; if some rank's is an error (< 0), every rank returns
 *  the status of the lowest such rank r, and sla_last_error() on every rank becomes
 *  "func: rank r: <r's message>" (r's own "func: " prefix removed). Otherwise each rank
 *  returns its own status (0 or a warning). func names the caller's operation (NULL: "sla").
 *  @return the agreed status; SLA_EBACKEND if MPI itself failed. */
SLA_API sla_status sla_dist_agree(MPI_Comm comm, const char *func, sla_status status);

/* ---------------------------------------------------------------------------------------------
 * Layouts: who owns which global index
 * ------------------------------------------------------------------------------------------- */

/** Opaque, immutable, reference-counted ownership map of N global indices over the ranks of a
 *  communicator (duplicated inside). */
typedef struct sla_dist_layout sla_dist_layout;

/** Contiguous layout: rank r owns [offset_r, offset_r + n_r) with offsets in rank order.
 *  Collective.
 *  @param[in] comm     communicator (duplicated; the caller keeps its own).
 *  @param[in] N        global size ≥ 0, the same on every rank.
 *  @param[in] n_local  rows owned here, ≥ 0, summing to N; or −1 on every rank for the
 *                      balanced split (rank r owns ⌊N/p⌋ or ⌊N/p⌋ + 1, the larger first).
 *  @param[out] out     new layout; free with sla_dist_layout_free() (collective).
 *  @return SLA_OK; SLA_EINVAL (negative N or n_local, counts not summing to N, −1 on some
 *          ranks only); SLA_ESHAPE (N differs between ranks); SLA_ENOMEM; SLA_EBACKEND. */
SLA_API sla_status sla_dist_layout_create(MPI_Comm comm, int64_t N, int64_t n_local,
                                          sla_dist_layout **out);

/** Layout from the indices each rank owns (any order): together they must be a partition of
 *  [0, N) (each index owned by exactly one rank). Ownership need not be contiguous; when it is
 *  (ascending ranges in rank order) the layout is recognised as contiguous. Collective.
 *  Owners are found through a distributed directory (the index range split evenly over the
 *  ranks, each rank answering for its part, as hypre's assumed partition), so no rank stores
 *  O(N) data. Cost: two all-to-all exchanges of O(n_local) data.
 *  @param[in] owned  [n_local] int64 global indices.
 *  @return SLA_OK; SLA_EINDEX naming an index out of [0, N), owned twice (and by which ranks)
 *          or by no rank; SLA_EINVAL; SLA_ESHAPE (N differs); SLA_ENOMEM; SLA_EBACKEND. */
SLA_API sla_status sla_dist_layout_create_owned(MPI_Comm comm, int64_t N, int64_t n_local,
                                                const int64_t *owned, sla_dist_layout **out);

/** Layout from a partition vector on one rank: global index g goes to rank part[g].
 *  Collective. part is [N] int and read on rank root only (NULL elsewhere).
 *  @return SLA_OK; SLA_EINDEX naming the first part[g] outside [0, p); SLA_EINVAL (root out of
 *          range, part NULL on root); SLA_ESHAPE; SLA_ENOMEM; SLA_EBACKEND. */
SLA_API sla_status sla_dist_layout_create_partition(MPI_Comm comm, int64_t N, const int *part,
                                                    int root, sla_dist_layout **out);

/** Layout from a distributed partition vector: this rank assigns global indices global[i] to
 *  ranks part[i] (i < n); the indices of all ranks together must cover [0, N) once (e.g. each
 *  rank assigns the rows it owns in another layout, as PT-Scotch returns a partition).
 *  Collective; O(n) data per rank.
 *  @return as sla_dist_layout_create_owned(), and SLA_EINDEX for part[i] outside [0, p). */
SLA_API sla_status sla_dist_layout_create_assigned(MPI_Comm comm, int64_t N, int64_t n,
                                                   const int64_t *global, const int *part,
                                                   sla_dist_layout **out);

/** Adds a reference; returns L. Local. */
SLA_API sla_dist_layout *sla_dist_layout_retain(sla_dist_layout *L);

/** Drops a reference and sets *L to NULL; the last reference frees the duplicated
 *  communicator, so dropping it is collective (every rank, same order). NULL allowed. */
SLA_API void sla_dist_layout_free(sla_dist_layout **L);

/** The layout's private communicator (borrowed; pass it to the sla_dist_vec_* functions). */
SLA_API MPI_Comm sla_dist_layout_comm(const sla_dist_layout *L);
/** Global size N. */
SLA_API int64_t sla_dist_layout_size(const sla_dist_layout *L);
/** Number of indices this rank owns. */
SLA_API int64_t sla_dist_layout_local_size(const sla_dist_layout *L);
/** Borrowed [local size] int64: the global index of each local index, ascending. */
SLA_API const int64_t *sla_dist_layout_global(const sla_dist_layout *L);
/** 1 if ownership is contiguous ranges in rank order, else 0. */
SLA_API int sla_dist_layout_is_contiguous(const sla_dist_layout *L);
/** Local index of global index g on this rank, or −1 if this rank does not own it. Local;
 *  O(1) for contiguous layouts, O(log n_local) otherwise. */
SLA_API int64_t sla_dist_layout_local_index(const sla_dist_layout *L, int64_t g);

/* ---------------------------------------------------------------------------------------------
 * Distributed patterns and matrices
 * ------------------------------------------------------------------------------------------- */

/** Opaque, immutable, reference-counted distributed sparsity pattern: this rank's rows as a
 *  diagonal and an off-diagonal block, the ghost-to-global map, the halo plan, and the map
 *  from this rank's COO input entries to local value slots (on whichever rank owns them; for
 *  CSR rows the slots are this rank's, and rows in order with ascending columns need no map). */
typedef struct sla_dist_pattern sla_dist_pattern;

/** A borrowed view of this rank's local values on a distributed pattern, like sla_matrix:
 *  values [batch][nnz_local] of dtype (diagonal block slots, then off-diagonal block slots). */
typedef struct sla_dist_matrix {
    const sla_dist_pattern *pattern;
    sla_dtype dtype;
    int64_t batch;           /**< B ≥ 1, the same on every rank */
    const void *values;      /**< [batch][nnz_local] */
} sla_dist_matrix;

/** Makes a view (no copy). Local. */
SLA_API sla_dist_matrix sla_dist_matrix_view(const sla_dist_pattern *P, sla_dtype dtype,
                                             int64_t batch, const void *values);

/** Builds a distributed pattern from each rank's own COO entries (the scalable path).
 *  Collective.
 *  Each rank hands any entries (row, col) of the M × N global matrix, in any order, for rows it
 *  owns or not: entries of rows owned elsewhere are sent to their owner. Entries with equal
 *  (row, col), on one rank or several, are duplicates: one slot, whose value is their sum
 *  (added in ascending order of (sending rank, entry index), so deterministically) and whose
 *  gradient each of them receives.
 *  @param[in] rows  layout of the M rows (range space); cols layout of the N columns (domain:
 *                   x in y = A x). Pass the same layout twice for a square matrix whose x and
 *                   y are distributed alike. Both on the same communicator.
 *  @param[in] nnz_in  number of entries this rank hands in, ≥ 0.
 *  @param[in] row, col  [nnz_in] int64 global indices (NULL when nnz_in = 0).
 *  @param[out] out  new pattern; free with sla_dist_pattern_free() (collective).
 *  Cost: O(nnz_in) local work and one all-to-all exchange of the entries, one for the halo
 *  requests (and directory look-ups for non-contiguous layouts).
 *  @return SLA_OK; SLA_EINDEX naming the rank and entry with an index out of range;
 *          SLA_EINVAL (NULL array, negative nnz_in, layouts on different communicators);
 *          SLA_ENOMEM; SLA_EUNSUPPORTED (a local block wider than 2^31 − 1 columns, more than
 *          2^31 − 1 entries sent to one rank); SLA_EBACKEND (MPI failed). */
SLA_API sla_status sla_dist_pattern_from_coo(const sla_dist_layout *rows,
                                             const sla_dist_layout *cols, int64_t nnz_in,
                                             const int64_t *row, const int64_t *col,
                                             sla_dist_pattern **out);

/** Builds a distributed pattern from each rank's own rows in CSR (the lean path for a caller
 *  that assembles the rows it owns: a generator, a finite-element code). Collective.
 *  Nothing is exchanged and no COO copy is made: the rows are split where they are into the
 *  diagonal and off-diagonal blocks, with the ghost columns and halo plan of
 *  sla_dist_pattern_from_coo, so every solver, SpMV and gradient works on the result alike
 *  (the blocks, and so every result, are identical to those of the COO path on the same
 *  entries). Input entries, for sla_dist_values_gather/_scatter, are this rank's CSR entries
 *  in the caller's order (k = 0 … rowptr[nrows_in] − 1).
 *  @param[in] rows, cols  layouts as in sla_dist_pattern_from_coo.
 *  @param[in] nrows_in    number of rows handed in, ≥ 0.
 *  @param[in] row_global  [nrows_in] int64 global indices of the rows, each owned by this rank
 *                         (in rows) and listed once, in any order; rows not listed are empty.
 *                         NULL: the rows are this rank's owned rows in local (ascending
 *                         global) order, nrows_in = its local size.
 *  @param[in] rowptr      [nrows_in + 1] int64, rowptr[0] = 0, non-decreasing.
 *  @param[in] colind      [rowptr[nrows_in]] int64 global column indices in [0, N), or NULL
 *                         when colind32 is given; colind32 the same as int32 (N ≤ 2^31 − 1:
 *                         4 bytes an entry). Exactly one of them (both may be NULL with no
 *                         entries). Columns in any order within a row; a column repeated in a
 *                         row is a duplicate, summed as in sla_dist_pattern_from_coo.
 *  @param[out] out        new pattern; free with sla_dist_pattern_free() (collective).
 *  Cost: O(nrows_in + nnz) local work (ownership tests of the columns: O(1) each for
 *  contiguous column layouts, O(log n_local) otherwise), plus a look-up of the owners and a sort
 *  of the off-diagonal entries' columns only, and the halo requests. Memory: the two blocks
 *  (8 bytes a row and 4 an entry each, built in place) and 28 bytes per off-diagonal entry
 *  while building. With row_global NULL (or the owned rows in local order) and every row's
 *  columns strictly ascending, the pattern keeps no entry-to-slot map (the entry order is the
 *  merge of the blocks' rows by global column); otherwise it keeps 8 bytes an entry. The COO
 *  path's exchange map (16 bytes an entry more) is never needed.
 *  @return SLA_OK; SLA_EINDEX naming the rank and the entry (index, value, global row) with a
 *          column out of range, or a row_global entry not owned by the rank or listed twice;
 *          SLA_EINVAL (NULL rowptr, rowptr[0] ≠ 0 or decreasing, naming the row; no or both
 *          column arrays; nrows_in ≠ the local size with row_global NULL; negative nrows_in;
 *          layouts on different communicators); SLA_ENOMEM; SLA_EUNSUPPORTED (more than
 *          2^31 − 1 ghost columns); SLA_EBACKEND. Every rank returns the same status and
 *          message ("sla_dist_pattern_from_csr: rank 1: colind[7] = 90 (row 12) is out of
 *          range [0, 64)"). */
SLA_API sla_status sla_dist_pattern_from_csr(const sla_dist_layout *rows,
                                             const sla_dist_layout *cols, int64_t nrows_in,
                                             const int64_t *row_global, const int64_t *rowptr,
                                             const int64_t *colind, const int32_t *colind32,
                                             sla_dist_pattern **out);

/** Scatters a global matrix held on rank root into a distributed pattern and local values.
 *  Collective. A is read on root only (pass NULL elsewhere): its nrows/ncols must equal
 *  the layouts' sizes. The pattern's input entries are, on root, A's CSR slots in order (so
 *  sla_dist_values_gather() with A's values on root and nothing elsewhere rebuilds the local
 *  values, and sla_dist_values_scatter() returns gradients in A's CSR order on root).
 *  @param[out] P       new pattern.
 *  @param[out] values  new [batch][nnz_local] local values of A's dtype (sla_free()),
 *                      dtype and batch are broadcast from root into *dtype_out, *batch_out
 *                      (either may be NULL).
 *  @return as sla_dist_pattern_from_coo(), and SLA_ESHAPE if A's shape differs from the
 *          layouts'. */
SLA_API sla_status sla_dist_matrix_scatter(const sla_dist_layout *rows,
                                           const sla_dist_layout *cols, int root,
                                           const sla_matrix *A, sla_dist_pattern **P,
                                           void **values, sla_dtype *dtype_out,
                                           int64_t *batch_out);

/** Adds a reference; returns P. Local. */
SLA_API sla_dist_pattern *sla_dist_pattern_retain(sla_dist_pattern *P);
/** Drops a reference, sets *P to NULL; collective when it releases the last reference to a
 *  layout (see sla_dist_layout_free). NULL allowed. */
SLA_API void sla_dist_pattern_free(sla_dist_pattern **P);

/** Borrowed layouts of the rows (range) and columns (domain). */
SLA_API const sla_dist_layout *sla_dist_pattern_rows(const sla_dist_pattern *P);
SLA_API const sla_dist_layout *sla_dist_pattern_cols(const sla_dist_pattern *P);
/** Borrowed local blocks: diagonal (n_rows_local × n_cols_local, local column indices) and
 *  off-diagonal (n_rows_local × nghost, ghost column indices). */
SLA_API const sla_pattern *sla_dist_pattern_diag(const sla_dist_pattern *P);
SLA_API const sla_pattern *sla_dist_pattern_offd(const sla_dist_pattern *P);
/** Local value slots nnz_diag + nnz_offd. */
SLA_API int64_t sla_dist_pattern_nnz(const sla_dist_pattern *P);
/** Number of COO entries this rank handed in. */
SLA_API int64_t sla_dist_pattern_nnz_input(const sla_dist_pattern *P);
/** Borrowed [*nghost] int64: global column of each ghost column, ordered by owning rank, then
 *  ascending global index. */
SLA_API const int64_t *sla_dist_pattern_ghosts(const sla_dist_pattern *P, int64_t *nghost);
/** Global (row, col) of each local value slot: row, col caller-allocated [nnz_local] int64
 *  (either may be NULL). For filling local values directly, without the COO exchange.
 *  @return SLA_OK, SLA_EINVAL. Local. */
SLA_API sla_status sla_dist_pattern_global_coo(const sla_dist_pattern *P, int64_t *row,
                                               int64_t *col);

/** The halo plan (borrowed arrays, valid as long as the pattern). Receives: ghost columns
 *  [recv_ptr[q], recv_ptr[q + 1]) come from rank recv_rank[q]; sends: the owned (column layout)
 *  local indices send_idx[send_ptr[q] … send_ptr[q + 1]) go to rank send_rank[q]. Ranks
 *  ascending; a rank never appears in its own lists. */
typedef struct sla_dist_halo_info {
    int nrecv;
    const int *recv_rank;
    const int64_t *recv_ptr;    /**< [nrecv + 1] into the ghost columns */
    int nsend;
    const int *send_rank;
    const int64_t *send_ptr;    /**< [nsend + 1] into send_idx */
    const int64_t *send_idx;    /**< [send_ptr[nsend]] local column indices */
} sla_dist_halo_info;
SLA_API sla_status sla_dist_pattern_halo(const sla_dist_pattern *P, sla_dist_halo_info *halo);

/** Sums this rank's COO values (in the order it handed its entries to
 *  sla_dist_pattern_from_coo, or its CSR entries' order for sla_dist_pattern_from_csr, where
 *  no values leave the rank) into the local value slots of their owners. Collective.
 *  @param[in]  coo_values    [batch][nnz_input] of dtype.
 *  @param[out] local_values  [batch][nnz_local] of dtype, overwritten (must not overlap
 *                            coo_values). Duplicates are summed in the order stated at
 *                            sla_dist_pattern_from_coo. No finiteness check (see
 *                            sla_dist_matrix_check).
 *  @return SLA_OK; SLA_EINVAL; SLA_EDTYPE; SLA_ESHAPE (dtype or batch differ between ranks);
 *          SLA_ENOMEM; SLA_EBACKEND. */
SLA_API sla_status sla_dist_values_gather(const sla_dist_pattern *P, sla_dtype dtype,
                                          int64_t batch, const void *coo_values,
                                          void *local_values);

/** The reverse of sla_dist_values_gather (for gradients): every COO entry handed in on this
 *  rank, duplicates included, receives the value of its slot, wherever that slot lives.
 *  Collective. local_values [batch][nnz_local] → coo_values [batch][nnz_input] (overwritten).
 *  @return as sla_dist_values_gather(). */
SLA_API sla_status sla_dist_values_scatter(const sla_dist_pattern *P, sla_dtype dtype,
                                           int64_t batch, const void *local_values,
                                           void *coo_values);

/** Checks a view on every rank: pattern, dtype, batch ≥ 1, values non-NULL when needed; with
 *  check_finite, that no value is NaN or Inf. Collective. Messages name the rank, batch
 *  element, slot and the global row and column:
 *  "sla_dist_matrix_check: rank 1: A->values[0][7] (row 12, col 40) is not finite".
 *  @return SLA_OK, SLA_EINVAL, SLA_EDTYPE, SLA_ESHAPE (dtype or batch differ between ranks),
 *          SLA_ENONFINITE. */
SLA_API sla_status sla_dist_matrix_check(const sla_dist_matrix *A, int check_finite);

/* ---------------------------------------------------------------------------------------------
 * SpMV and its adjoint
 * ------------------------------------------------------------------------------------------- */

/** y = alpha · op(A) · x + beta · y on every rank's slices, for every matrix of the batch.
 *  Collective.
 *  Shapes (local, row-major, dtype of A): with (ny, nx) = local sizes of op(A)'s range and
 *  domain layouts (rows, cols for op = N; cols, rows for op = T):
 *    x [nx][k] (x_batched = 0, broadcast to the batch) or [batch][nx][k]; y [batch][ny][k].
 *  op = N: the halo exchange is split-phase (receives and sends posted, diagonal block
 *  applied, exchange finished, off-diagonal block applied). op = T: the off-diagonal block is
 *  applied transposed into ghost contributions, which are sent back to their owners (the
 *  reverse exchange) while the transposed diagonal block runs, then added in ascending rank
 *  order. beta = 0 overwrites y without reading it. Local products are sla_spmv().
 *  @return SLA_OK; SLA_EINVAL (NULL array, k < 1, bad op or flag, overlap of y with x or the
 *          values); SLA_EDTYPE; SLA_ESHAPE (op, k, batch, x_batched or dtype differ between
 *          ranks); SLA_ENOMEM; SLA_EBACKEND. y untouched on error. */
SLA_API sla_status sla_dist_spmv(sla_op op, double alpha, const sla_dist_matrix *A,
                                 const void *x, int x_batched, int64_t k, double beta, void *y);

/** Vector–Jacobian product of y = alpha · op(A) · x, as sla_spmv_vjp(). Collective.
 *    dx = alpha · op(A)ᵀ · g (the other op's distributed product: a reverse exchange for
 *         op = N), the shape of x (summed over the batch in batch order when x_batched = 0);
 *    dvalues [batch][nnz_local]: ∂a_s = alpha · Σ_j g[r_s][j]·x[c_s][j] (op = N) or
 *         alpha · Σ_j x[r_s][j]·g[c_s][j] (op = T), local: the diagonal block by the pattern
 *         outer product with owned entries, the off-diagonal block with the ghost values of x
 *         (op = N) or g (op = T) from one forward halo exchange.
 *  Either output may be NULL (skipped; x may then be NULL if dvalues is). Use
 *  sla_dist_values_scatter() to take dvalues to the callers' COO order.
 *  @return as sla_dist_spmv(); outputs untouched on error. */
SLA_API sla_status sla_dist_spmv_vjp(sla_op op, double alpha, const sla_dist_matrix *A,
                                     const void *x, int x_batched, int64_t k, const void *g,
                                     void *dx, void *dvalues);

/* ---------------------------------------------------------------------------------------------
 * Distributed direct LU (SuperLU_DIST)
 * ---------------------------------------------------------------------------------------------
 * A sparse LU of a square distributed matrix by SuperLU_DIST (Li & Demmel, ACM TOMS 29(2), 2003;
 * static pivoting after a maximum-transversal row permutation (Debian's build has no MC64),
 * equilibration, METIS ordering of Aᵀ + A; libsla's own iterative refinement to a normwise
 * backward error ≤ 1e-12, checked at every solve), chosen over parallel MUMPS because libsla links sequential MUMPS, whose symbols
 * have the same names (the two cannot share a process). Rows keep this rank's layout: B and X
 * are this rank's owned rows in local order, whatever the partition. Transposed solves (op = T,
 * the adjoint) factor Aᵀ on first use (SuperLU_DIST 8 has no transposed solve). The
 * numerical-singularity rule is libsla's (sla/solver.h, docs/direct.md): the reciprocal
 * condition estimate of the row-equilibrated A by Higham's 1-norm estimator on distributed
 * vectors (it factors Aᵀ too) below SLA_RCOND_SINGULAR makes solves refuse (SLA_ESINGULAR) and
 * logdet give (0, −inf). SuperLU_DIST aborts the process (MPI_Abort) when it runs out of memory:
 * a limit of that library, not of libsla. float32 values are factored in float64. N < 2^31.
 * Without SuperLU_DIST in the build every function returns SLA_EUNSUPPORTED. */
typedef struct sla_dist_lu sla_dist_lu;

/** Factors every matrix of the batch A (square; rows and columns on one layout; finite).
 *  Collective. A's values are borrowed for the VJP's outer product and the residuals of info
 *  (keep them valid and unchanged until the next refactor or free); the pattern is retained.
 *  @return SLA_OK (a numerically singular matrix is SLA_OK here: its solves refuse);
 *          SLA_EINVAL (layouts differ, N ≥ 2^31), SLA_ESHAPE (rectangular), SLA_EDTYPE,
 *          SLA_ENONFINITE naming rank and entry, SLA_EUNSUPPORTED (no SuperLU_DIST),
 *          SLA_ENOMEM, SLA_EBACKEND. Agreed on every rank; *out NULL on error. */
SLA_API sla_status sla_dist_lu_create(const sla_dist_matrix *A, sla_dist_lu **out);

/** New values on the same pattern (a full factorization again; Aᵀ again on demand).
 *  Collective. values [batch][nnz_local], borrowed as at create, checked finite first.
 *  @return as sla_dist_lu_create(). */
SLA_API sla_status sla_dist_lu_refactor(sla_dist_lu *F, const void *values);

/** X_b = op(A_b)⁻¹ B_b for every batch element and the nrhs columns. Collective.
 *  @param[in]  B  [batch][n_local][nrhs] of A's dtype (row-major, this rank's rows), finite.
 *  @param[out] X  [batch][n_local][nrhs]; may alias B only if equal (in place is allowed).
 *  @param[out] info  may be NULL: method lu, rcond (min over the batch), the true residuals of
 *                 X (one distributed SpMV per batch element), description.
 *  @return SLA_OK; SLA_ESINGULAR (rcond < SLA_RCOND_SINGULAR, naming the batch element);
 *          SLA_EINVAL, SLA_ESHAPE (op or nrhs differ between ranks), SLA_ENONFINITE, SLA_ENOMEM,
 *          SLA_EBACKEND. The same status on every rank. */
SLA_API sla_status sla_dist_lu_solve(sla_dist_lu *F, sla_op op, int64_t nrhs, const void *B,
                                     void *X, sla_solve_info *info);

/** Backward of X = op(A)⁻¹ B: λ = op(A)⁻ᵀ G (one solve with the other op), dB = λ and
 *  ∂a_s = −Σ_j λ[r_s][j]·X[c_s][j] (op = N; op = T: −Σ_j X[r_s][j]·λ[c_s][j]) on this rank's
 *  slots (sla_dist_spmv_vjp). Collective. X, G, dB [batch][n_local][nrhs]; dvalues
 *  [batch][nnz_local]; dB or dvalues may be NULL.
 *  @return as sla_dist_lu_solve(). */
SLA_API sla_status sla_dist_lu_solve_vjp(sla_dist_lu *F, sla_op op, int64_t nrhs, const void *X,
                                         const void *G, void *dB, void *dvalues,
                                         sla_solve_info *info);

/** sign[b] · exp(logabsdet[b]) = det A_b from the factors (Π u_ii over the scalings and the
 *  parity of the row permutation); (0, −inf) for a numerically singular A_b. sign, logabsdet
 *  [batch], the same on every rank. Collective. */
SLA_API sla_status sla_dist_lu_logdet(sla_dist_lu *F, double *sign, double *logabsdet);

/* ---- log-determinant gradient (src/mpi/lu_logdet_grad.c) ---- */

/** How sla_dist_lu_logdet_grad_with() computes the entries of A⁻¹ (docs/mpi.md,
 *  "Log-determinant gradient"). */
typedef enum sla_dist_logdet_grad_method {
    SLA_DIST_LOGDET_GRAD_AUTO = 0,   /**< MUMPS when every rank can load it, else GATHER */
    SLA_DIST_LOGDET_GRAD_MUMPS = 1,  /**< parallel MUMPS: distributed factors, selected inverse */
    SLA_DIST_LOGDET_GRAD_GATHER = 2, /**< A gathered to rank 0, libsla's serial selected inverse */
} sla_dist_logdet_grad_method;

/** Gradient of L = Σ_b g[b]·log|det A_b|, as sla_solver_logdet_grad(): dvalues[b][s] =
 *  g[b]·(A_b⁻¹)[c_s, r_s] for this rank's local slot s (global row r_s, column c_s),
 *  [batch][nnz_local] of A's dtype (float32 computed in double), overwritten. g [batch]
 *  doubles, finite: each rank's own weights, applied to its own slots (pass the same on every
 *  rank for the gradient of one loss, as a replicated scalar loss does); NULL means ones.
 *  method the same on every rank. Collective.
 *  Methods and cost:
 *  - MUMPS (auto's choice when parallel MUMPS, libmumps-dev, was found at configure time and
 *    loads on every rank): A_b is factored again by parallel MUMPS from the distributed slots
 *    (ICNTL(18) = 3) and the requested entries computed by its selected-inverse solve
 *    (ICNTL(30) = 1; Amestoy, Buttari, L'Excellent & Mary 2012) on the distributed factors.
 *    The requested entries go to rank 0 and back in chunks of max(2^20, N) entries (one
 *    selected-inverse call each), so rank 0 holds about 40 bytes per chunk entry plus 4 per row,
 *    O(N), besides MUMPS's centralized analysis of the graph; the factors are distributed.
 *  - GATHER (auto's fallback, e.g. the sanitizer build): A is gathered to rank 0, which runs
 *    libsla's serial sparse inverse subset from a UMFPACK LU (Takahashi–Fagan–Chin /
 *    Erisman–Tinney on the factors; never n dense solves); the gradient is scattered back.
 *    Not scalable: rank 0 holds about (16 + 24·batch) bytes per global entry plus the serial
 *    factors and the closure of their structure.
 *  Both are exact to the direct solvers' accuracy; the other ranks hold O(nnz_local).
 *  @return SLA_OK; SLA_ESINGULAR if some A_b is numerically singular by F's rule (its logdet
 *          is (0, −inf)) or by MUMPS's or the serial factorization's, naming the batch element;
 *          SLA_EUNSUPPORTED above 2^31 − 1 global entries, without SuperLU_DIST, or method
 *          MUMPS where parallel MUMPS is not available (the message says why);
 *          SLA_ENOMEM (on any rank, e.g. rank 0's vectors or factors not fitting), SLA_EINVAL
 *          (dvalues NULL, method unknown), SLA_ESHAPE (method not the same on every rank),
 *          SLA_ENONFINITE (g),
 *          SLA_EBACKEND. The same status on every rank; dvalues unspecified on error. */
SLA_API sla_status sla_dist_lu_logdet_grad_with(sla_dist_lu *F,
                                                sla_dist_logdet_grad_method method,
                                                const double *g, void *dvalues);
/** sla_dist_lu_logdet_grad_with(F, SLA_DIST_LOGDET_GRAD_AUTO, g, dvalues). Collective. */
SLA_API sla_status sla_dist_lu_logdet_grad(sla_dist_lu *F, const double *g, void *dvalues);
/** 1 if parallel MUMPS is compiled in and loads in this process (method MUMPS above). Local. */
SLA_API int sla_dist_have_parallel_mumps(void);

/** Smallest rcond estimate over the batch (NaN for NULL). Local. */
SLA_API double sla_dist_lu_rcond(const sla_dist_lu *F);
/** One line: library, version, ranks, process grid, rcond. Local. */
SLA_API const char *sla_dist_lu_describe(const sla_dist_lu *F);
/** Frees *F (collective) and sets it to NULL. */
SLA_API void sla_dist_lu_free(sla_dist_lu **F);
/** 1 if this build has SuperLU_DIST. */
SLA_API int sla_dist_have_superlu(void);

/* ---------------------------------------------------------------------------------------------
 * Distributed vectors: scatter/gather and the kernels of a Krylov vector space
 * ------------------------------------------------------------------------------------------- */

/** Scatters global vectors on root, [batch][N][k] of dtype (read on root only), into each
 *  rank's owned slices [batch][n_local][k]. Collective.
 *  @return SLA_OK, SLA_EINVAL, SLA_EDTYPE, SLA_ESHAPE (arguments differ between ranks),
 *          SLA_ENOMEM, SLA_EBACKEND. */
SLA_API sla_status sla_dist_vec_scatter(const sla_dist_layout *L, sla_dtype dtype,
                                        int64_t batch, int64_t k, int root, const void *global,
                                        void *local);

/** Gathers each rank's slices [batch][n_local][k] into [batch][N][k] on root (written on root
 *  only; NULL elsewhere). Collective. @return as sla_dist_vec_scatter(). */
SLA_API sla_status sla_dist_vec_gather(const sla_dist_layout *L, sla_dtype dtype,
                                       int64_t batch, int64_t k, int root, const void *local,
                                       void *global);

/** Deterministic sum over the ranks of m doubles: global[i] = Σ_r local_r[i], the same bits on
 *  every rank and in every run with the same rank count (recursive doubling with a fixed
 *  pairing, 32 values per round). Collective. global may equal local.
 *  comm: a layout's communicator (point-to-point messages with sla's reserved tags).
 *  @return SLA_OK, SLA_EINVAL (m < 0, NULL arrays, m differing between ranks), SLA_EBACKEND. */
SLA_API sla_status sla_dist_allsum(MPI_Comm comm, int m, const double *local, double *global);

/* The vector-space kernels below work on this rank's n local entries of dtype. Reductions are
 * accumulated in double, in fixed chunks of the local range (so independent of the thread
 * count), then summed across ranks by sla_dist_allsum's tree: collective, one reduction each.
 * Local kernels (axpby, cg_direction) are not collective. All return SLA_EINVAL for NULL
 * arrays with n > 0, negative n, and SLA_EDTYPE, agreed across ranks when collective. */

/** *out = xᵀy over all ranks. Collective. */
SLA_API sla_status sla_dist_vec_dot(MPI_Comm comm, sla_dtype dtype, int64_t n, const void *x,
                                    const void *y, double *out);
/** out[i] = x_iᵀ y for i < m (m ≥ 0, the same on all ranks), one reduction (classical
 *  Gram–Schmidt, block methods). x[i] each [n]. Collective. */
SLA_API sla_status sla_dist_vec_mdot(MPI_Comm comm, sla_dtype dtype, int64_t n, int m,
                                     const void *const *x, const void *y, double *out);
/** *out = ‖x‖₂ = sqrt(xᵀx) over all ranks. Collective. */
SLA_API sla_status sla_dist_vec_norm2(MPI_Comm comm, sla_dtype dtype, int64_t n, const void *x,
                                      double *out);
/** y = a·x + b·y; b = 0 overwrites y without reading it; a = b = 0 sets y = 0 without reading
 *  x. Local. */
SLA_API sla_status sla_dist_vec_axpby(sla_dtype dtype, int64_t n, double a, const void *x,
                                      double b, void *y);
/** CG's fused update in one pass: x += α·p; r −= α·q; *rr = rᵀr; *rz = rᵀ·diag(inv_diag)·r
 *  when inv_diag is not NULL (Jacobi, z never stored), else *rz = *rr. One reduction of two
 *  values. Collective. */
SLA_API sla_status sla_dist_vec_cg_update(MPI_Comm comm, sla_dtype dtype, int64_t n,
                                          double alpha, const void *p, const void *q, void *x,
                                          void *r, const void *inv_diag, double *rr,
                                          double *rz);
/** CG's new direction p = z + β·p, with z = diag(inv_diag)·z when inv_diag is not NULL; β = 0
 *  writes p without reading it (p may be uninitialised).
 *  Local. */
SLA_API sla_status sla_dist_vec_cg_direction(sla_dtype dtype, int64_t n, double beta,
                                             const void *z, const void *inv_diag, void *p);

/* ---------------------------------------------------------------------------------------------
 * Partitioning
 * ------------------------------------------------------------------------------------------- */

/** How sla_dist_partition() assigns rows to ranks (one part per rank). Every method balances
 *  the vertex weight nnz(row) + 1 (the cost of a row in an SpMV). */
typedef enum sla_dist_partitioner {
    SLA_DIST_PART_CONTIGUOUS = 0, /**< contiguous ranges in global order, balanced by weight */
    SLA_DIST_PART_METIS = 1,      /**< METIS_PartGraphKway on rank 0 of the gathered graph */
    SLA_DIST_PART_PTSCOTCH = 2,   /**< SCOTCH_dgraphPart, in parallel (PT-Scotch) */
    SLA_DIST_PART_RCB = 3,        /**< recursive coordinate bisection (needs coordinates) */
    SLA_DIST_PART_HILBERT = 4     /**< Hilbert-curve order cut into balanced pieces (coords) */
} sla_dist_partitioner;

/** Figures of a distribution of a square matrix A over p parts (ranks). The graph is that of
 *  A + Aᵀ without self loops. */
typedef struct sla_dist_partition_info {
    int nparts;
    int64_t edge_cut;          /**< undirected edges {i, j} with i, j in different parts */
    int64_t halo_total;        /**< ghost columns, summed over parts */
    int64_t halo_max;          /**< most ghost columns of one part */
    int64_t neighbours_max;    /**< most ranks one part receives ghosts from */
    int64_t neighbours_total;  /**< receive neighbours, summed over parts (messages per SpMV) */
    int64_t rows_min, rows_max;
    double rows_imbalance;     /**< max rows / mean rows (1 = perfect; 0 for an empty matrix) */
    int64_t nnz_min, nnz_max;
    double nnz_imbalance;      /**< max nnz / mean nnz */
} sla_dist_partition_info;

/** Partitions the rows of a square distributed pattern (rows and columns distributed alike)
 *  into one part per rank and returns the new layout. Collective. Redistribute by calling
 *  sla_dist_pattern_from_coo() (or sla_dist_matrix_scatter) again with the new layout.
 *  @param[in] P       the current distribution (any layout).
 *  @param[in] method  see sla_dist_partitioner. METIS gathers the graph on rank 0 (moderate
 *                     sizes; a METIS seed is fixed, so runs repeat); PT-Scotch partitions the
 *                     distributed graph (its random generator is reset first, so runs repeat);
 *                     RCB and Hilbert use coordinates and exact weighted quantiles (bisection
 *                     over (coordinate, global index), so equal coordinates still split).
 *  @param[in] dim, coords  for RCB and Hilbert: coords [n_local][dim] (dim 1, 2 or 3) of this
 *                     rank's rows in P's row layout; ignored (may be NULL) otherwise.
 *  @param[out] out    new layout on P's communicator.
 *  @param[out] info   the new distribution's figures (may be NULL), computed from A's pattern
 *                     as it would be redistributed; sla_dist_pattern_info() on the rebuilt
 *                     pattern gives the same numbers.
 *  Sources: METIS (Karypis & Kumar 1998), PT-Scotch (Chevalier & Pellegrini 2008), RCB (Berger
 *  & Bokhari 1987), Hilbert curve indices by Skilling's transpose algorithm (2004).
 *  @return SLA_OK; SLA_ESHAPE (not square, or rows and columns distributed differently);
 *          SLA_EINVAL (coords NULL or dim not in 1..3 for RCB/Hilbert, bad method);
 *          SLA_ENONFINITE (a NaN or Inf coordinate, naming rank and row); SLA_EUNSUPPORTED
 *          (METIS or PT-Scotch not compiled in, or sizes beyond their 32-bit indices);
 *          SLA_EBACKEND (the partitioner failed, its message quoted); SLA_ENOMEM. */
SLA_API sla_status sla_dist_partition(const sla_dist_pattern *P, sla_dist_partitioner method,
                                      int dim, const double *coords, sla_dist_layout **out,
                                      sla_dist_partition_info *info);

/** Partitions the rows of P into nparts parts, any count ≥ 1 (more or fewer than the ranks:
 *  a partition computed for another run, or for a torch-sla style partition vector), by the
 *  same methods and balance as sla_dist_partition(). Collective.
 *  @param[in]  nparts  ≥ 1, the same on every rank.
 *  @param[out] part    [n_local] int: the part of each of this rank's owned rows (P's local
 *                      order), in [0, nparts); may be NULL where n_local = 0. Some parts
 *                      may be empty when nparts exceeds the rows.
 *  @return as sla_dist_partition(), and SLA_EINVAL for nparts < 1, SLA_ESHAPE when nparts
 *          differs between ranks. part is untouched on error. */
SLA_API sla_status sla_dist_partition_parts(const sla_dist_pattern *P, sla_dist_partitioner method,
                                            int nparts, int dim, const double *coords,
                                            int *part);

/** The figures of P's current distribution (see sla_dist_partition_info). Collective.
 *  @return SLA_OK, SLA_ESHAPE (not square or rows and columns distributed differently),
 *          SLA_ENOMEM, SLA_EBACKEND. */
SLA_API sla_status sla_dist_pattern_info(const sla_dist_pattern *P,
                                         sla_dist_partition_info *info);

/** Name of a partitioner ("contiguous", "metis", "ptscotch", "rcb", "hilbert"; "invalid"). */
SLA_API const char *sla_dist_partitioner_name(sla_dist_partitioner method);

/* ---------------------------------------------------------------------------------------------
 * Distributed Krylov solvers
 * ---------------------------------------------------------------------------------------------
 * The serial lifecycle (create, solve op N/T, refactor, VJP, free) on a distributed matrix.
 * The methods are libsla's own CG, BiCGStab, GMRES(m), MINRES and LSQR (sla_krylov_run, one
 * source each) running on a distributed vector space: this rank's owned entries as a host space
 * whose reductions (dots, norms, CG's fused ‖r‖²) are summed across the ranks by
 * sla_dist_allsum's fixed tree, and a distributed operator whose apply is the split-phase SpMV
 * (op = T: the reverse exchange). Every system of a batch or of several right-hand sides runs
 * one after another on the calling thread (MPI forbids interleaving collectives of several
 * threads on one communicator); kernels inside a system may use OpenMP threads.
 * Results are bit-identical run to run for a fixed rank count, partition and thread count, and
 * equal the serial solver's up to rounding and the stopping rule.
 * Matrices must be square with rows and columns distributed alike (the same layout), except for
 * lsqr (any shape: B on the row layout, X on the column layout for op = N). */

/** Preconditioners of a distributed solver. Block Jacobi kinds apply libsla's serial
 *  preconditioner (sla_pc_create) of each rank's diagonal block (its rows × its columns), so
 *  their strength falls with the rank count; BoomerAMG is hypre's parallel AMG on a ParCSR copy
 *  of the matrix, the scalable choice for SPD (elliptic) problems. */
typedef enum sla_dist_precond {
    SLA_DIST_PC_AUTO = 0,      /**< by method: see sla_dist_solver_create() */
    SLA_DIST_PC_NONE,
    SLA_DIST_PC_JACOBI,        /**< M = diag(A) (MINRES: diag(|A|), SPD) */
    SLA_DIST_PC_BJACOBI_IC0,   /**< block Jacobi, IC(0) of each diagonal block (SPD A) */
    SLA_DIST_PC_BJACOBI_ILU0,  /**< block Jacobi, ILU(0) of each diagonal block */
    SLA_DIST_PC_BJACOBI_AMG,   /**< block Jacobi, libsla's AMG V-cycle on each diagonal block */
    SLA_DIST_PC_BOOMERAMG,     /**< hypre BoomerAMG, one V-cycle (float64, N < 2^31) */
    SLA_DIST_PC_COUNT
} sla_dist_precond;

/** Options of a distributed solver (sla_dist_solver_options_init() for the defaults). */
typedef struct sla_dist_solver_options {
    sla_method method;          /**< SLA_METHOD_AUTO (default), CG, BICGSTAB, GMRES, MINRES or
                                 *   LSQR; direct methods are refused (SLA_EUNSUPPORTED) */
    sla_dist_precond precond;   /**< default SLA_DIST_PC_AUTO */
    double rtol, atol;          /**< stop when ‖b − op(A)x‖₂ ≤ max(rtol·‖b‖₂, atol) (global
                                 *   norms); defaults 1e-10 and 0 */
    int64_t maxiter;            /**< ≥ 1, or SLA_MAXITER_DEFAULT (default): 10·max(M, N) + 100 */
    int64_t restart;            /**< GMRES restart ≥ 1, default 50 */
    double damp;                /**< LSQR's Tikhonov damping ≥ 0, default 0 */
    int initial_guess_nonzero;  /**< 1: X holds the initial guess on entry; default 0 */
} sla_dist_solver_options;

typedef struct sla_dist_solver sla_dist_solver;

/** Fills *o with the defaults above. Local. */
SLA_API void sla_dist_solver_options_init(sla_dist_solver_options *o);

/** Creates a distributed Krylov solver for the matrices A (batch B ≥ 1 on one pattern).
 *  Collective. A's values are borrowed (read at every solve) and must stay valid and unchanged
 *  until the next sla_dist_solver_refactor() or free; the pattern is retained, with its halo
 *  plan, reused by every solve.
 *  Method auto (the serial rules of src/solve/auto.c where they apply to a distributed matrix,
 *  docs in sla_dist_solver_describe()): rectangular → lsqr; symmetric (the test of
 *  sla_symlower_check, |a_ij − a_ji| ≤ 1000ε·max(|a_ij|, |a_ji|) + ε·max|a|, on every pair across
 *  the ranks) with a positive diagonal → cg; symmetric otherwise → minres; else gmres.
 *  Precond auto: cg → BoomerAMG from 5000 unknowns (when hypre is in the build), else Jacobi;
 *  minres → Jacobi on |diag|; gmres, bicgstab → block-Jacobi ILU(0), then Jacobi; lsqr → none.
 *  A candidate whose set-up fails on some rank for a reason of the values (zero pivot, zero
 *  diagonal) gives way to the next, and describe() says why.
 *  Transposed solves (op = T, the VJP's adjoint solve) apply M⁻ᵀ: Jacobi and IC(0) are
 *  symmetric, ILU(0) and libsla's AMG have transposed applications; BoomerAMG's V-cycle (its
 *  default symmetric hybrid Gauss–Seidel smoothing) is used as its own transpose, which is exact
 *  only for symmetric A: BoomerAMG on a matrix that is not symmetric refuses op = T
 *  (SLA_EUNSUPPORTED naming the reason).
 *  @param[in] opt  NULL for defaults.
 *  @return SLA_OK; SLA_EINVAL (bad option, layouts that differ for a square method);
 *          SLA_ESHAPE (a non-lsqr method on a rectangular A); SLA_ENONFINITE (naming rank, slot,
 *          row and column); SLA_EBREAKDOWN (an explicitly requested preconditioner failed on some
 *          rank: the message names the rank and row); SLA_EUNSUPPORTED (direct method, BoomerAMG
 *          without hypre or with float32); SLA_ENOMEM; SLA_EBACKEND. Agreed on every rank;
 *          *out NULL on error. */
SLA_API sla_status sla_dist_solver_create(const sla_dist_matrix *A,
                                          const sla_dist_solver_options *opt,
                                          sla_dist_solver **out);

/** Solves op(A_b) X_b = B_b for every batch element and column. Collective.
 *  @param[in] B   [batch][n_b][nrhs] of the solver's dtype, this rank's rows of op(A)'s range
 *                 layout (rows for op = N), finite (checked on every rank).
 *  @param[in,out] X  [batch][n_x][nrhs] on op(A)'s domain layout; initial guess if
 *                 initial_guess_nonzero, else never read.
 *  @param[out] info  may be NULL; the same on every rank: the worst case over the systems
 *                 (iterations, true global residuals, reason), converged 0 on any error.
 *  @return SLA_OK; SLA_NOT_CONVERGED (warning: X holds the best iterate, info says why:
 *          maxiter, breakdown, stagnation, indefinite); SLA_ENONFINITE naming rank and entry;
 *          SLA_EINVAL; SLA_EUNSUPPORTED (BoomerAMG op = T on a nonsymmetric A); SLA_ENOMEM;
 *          SLA_EBACKEND. The same status on every rank. */
SLA_API sla_status sla_dist_solver_solve(sla_dist_solver *s, sla_op op, int64_t nrhs,
                                         const void *B, void *X, sla_solve_info *info);

/** New values on the same pattern, dtype and batch: the numeric set-up only (the halo plan and
 *  the preconditioner's structure are kept; BoomerAMG is set up again on the new ParCSR
 *  values). Collective. values [batch][nnz_local] borrowed as at create. Checked first (NULL,
 *  non-finite: the solver stays as it was); a failed numeric set-up leaves a solver that
 *  refuses to solve (SLA_EINVAL) until a refactor succeeds.
 *  @return SLA_OK, SLA_EINVAL, SLA_ENONFINITE, SLA_EBREAKDOWN, SLA_ENOMEM, SLA_EBACKEND. */
SLA_API sla_status sla_dist_solver_refactor(sla_dist_solver *s, const void *values);

/** Backward of X = op(A)⁻¹ B, as sla_solver_solve_vjp(): λ = op(A)⁻ᵀ G by one transposed
 *  distributed solve on the same object (G scaled by a power of two near 1/‖G‖∞, atol alike),
 *  then dB = λ and ∂a_s = −Σ_j λ[r_s][j]·X[c_s][j] (op = N; op = T: −Σ_j X[r_s][j]·λ[c_s][j]),
 *  local: the diagonal block with owned entries, the off-diagonal block with the ghost values
 *  of X (one halo exchange; sla_dist_spmv_vjp). Collective.
 *  @param[in] X, G  [batch][n_local][nrhs]; X needed (finite) only for dvalues.
 *  @param[out] dB      [batch][n_local][nrhs] or NULL; dvalues [batch][nnz_local] (A's local
 *                      slots: sla_dist_values_scatter() takes them to the COO order) or NULL.
 *                      Written only when the solve succeeded or did not converge (then with
 *                      the status SLA_NOT_CONVERGED).
 *  @return as sla_dist_solver_solve(); SLA_EUNSUPPORTED for lsqr (use
 *          sla_dist_solver_lstsq_vjp) or damp ≠ 0. */
SLA_API sla_status sla_dist_solver_solve_vjp(sla_dist_solver *s, sla_op op, int64_t nrhs,
                                             const void *X, const void *G, void *dB,
                                             void *dvalues, sla_solve_info *info);

/* ---- least-squares VJP (src/mpi/solver_lstsq_vjp.c) ---- */

/** Backward of the distributed least-squares solution X = op(A)⁺ B (method lsqr, damp = 0, A of
 *  any shape; the minimum-norm solution when A is rank deficient), as sla_solver_lstsq_vjp()
 *  (sla/solver.h gives the formulas, Golub & Pereyra 1973): three distributed LSQR solves from
 *  x₀ = 0 on the same solver (op(A)ᵀ, op(A), and op(A)ᵀ again only when w = g − op(A)ᵀc is
 *  above rtol·‖g‖, both norms global), then ∂op(A) = r λᵀ − c xᵀ + z wᵀ on this rank's slots by
 *  distributed SpMV VJPs (one halo exchange each). Collective.
 *  @param[in] B  [batch][n_b][nrhs], this rank's rows of op(A)'s range layout (rows for op = N,
 *                columns for op = T): the forward's right-hand side (needed for dvalues only;
 *                may be NULL otherwise).
 *  @param[in] X  the forward's solution [batch][n_x][nrhs] on op(A)'s domain layout (needed
 *                for dvalues only). G = ∂L/∂X, shape of X, finite.
 *  @param[out] dB  shape of B or NULL; dvalues [batch][nnz_local] or NULL.
 *  @param[out] info  may be NULL: the worst case over the solves, iterations summed.
 *  G is scaled by a power of two near 1/‖G‖∞ (global) before the solves.
 *  @return SLA_OK; SLA_NOT_CONVERGED (outputs written from the best iterates); SLA_EUNSUPPORTED
 *          (method not lsqr, damp ≠ 0); SLA_EINVAL; SLA_ENONFINITE naming rank and entry;
 *          SLA_ESHAPE (op, nrhs or which outputs differ between ranks); SLA_ENOMEM;
 *          SLA_EBACKEND. The same status on every rank. */
SLA_API sla_status sla_dist_solver_lstsq_vjp(sla_dist_solver *s, sla_op op, int64_t nrhs,
                                             const void *B, const void *X, const void *G,
                                             void *dB, void *dvalues, sla_solve_info *info);

/** One line: method, preconditioner, tolerances and, for auto, why ("auto: symmetric, positive
 *  diagonal → cg; precond auto → boomeramg (N = 10000 ≥ 5000)"). The same on every rank; owned
 *  by the solver. Local. */
SLA_API const char *sla_dist_solver_describe(const sla_dist_solver *s);
/** The method and preconditioner in use (never auto). Local. */
SLA_API sla_method sla_dist_solver_method(const sla_dist_solver *s);
SLA_API sla_dist_precond sla_dist_solver_precond(const sla_dist_solver *s);
/** "none", "jacobi", "bjacobi-ic0", "bjacobi-ilu0", "bjacobi-amg", "boomeramg", "auto";
 *  "invalid" otherwise. */
SLA_API const char *sla_dist_precond_name(sla_dist_precond p);
/** 1 if this build has hypre BoomerAMG. */
SLA_API int sla_dist_have_boomeramg(void);

/** Frees *s (collective: the pattern's and hypre's communicators) and sets it to NULL. */
SLA_API void sla_dist_solver_free(sla_dist_solver **s);

/* ---------------------------------------------------------------------------------------------
 * Distributed eigsh (LOBPCG) and its VJP
 * ---------------------------------------------------------------------------------------------
 * The k smallest (SA) or largest (LA) eigenpairs of a symmetric distributed matrix A_b, or of
 * the pencil (A_b, M_b) with M SPD, by libsla's own LOBPCG (src/eig/lobpcg.c, Knyazev 2001
 * with Hetmaniuk & Lehoucq's orthonormal basis and SVQB, Duersch et al. 2018; the source that
 * sla_eigsh runs) on this rank's rows: its Gram products and norms are the local row blocks'
 * partial products summed over the ranks by sla_dist_allsum's fixed tree (sla_lobpcg_run,
 * sla/backend.h), so every rank solves the same small eigenproblems and results are
 * bit-identical run to run for a fixed rank count, partition and thread count; A·X and M·X are
 * distributed SpMVs with block-size columns (one halo exchange each). The start block is the
 * serial one restricted to the owned rows, so results equal sla_eigsh (method lobpcg, the same
 * which, k, block_size and tol) up to rounding. float64 only. Errors of the input (checks,
 * non-finite values, symmetry) and of the SpMVs are agreed; a failed allocation of LOBPCG's
 * small workspaces inside the iteration on one rank only is not (a limit of this version).
 * Shift-invert (options.sigma finite): S_b = A_b − σM_b (M = I without M) is factored once by
 * the distributed LU (sla_dist_lu, SuperLU_DIST; without it SLA_EUNSUPPORTED) on A's pattern,
 * so M must be on A's pattern or have diagonal-block entries only, each stored in A (a
 * diagonal M); without M, A's diagonal must be stored. The same LOBPCG then runs on
 * K = S⁻¹ (standard, with an identity mass so its test is relative to |θ|) or K = M S⁻¹ M with
 * mass M (symmetric: K x = θ M x ⇔ S⁻¹ M x = θ x), θ = 1/(λ − σ), twice: the k largest and
 * the k smallest θ (the eigenvalues just above and just below σ); of the 2k the k with the
 * largest |θ| are kept, λ is their Rayleigh quotient on (A, M) and the residuals, the
 * convergence count and SLA_NOT_CONVERGED are those of the original problem (to tol), never
 * of K's. Results: the k eigenvalues nearest σ in ascending order, as sla_eigsh with sigma up
 * to rounding. A numerically singular S (σ an eigenvalue to working accuracy: rcond of S
 * below SLA_RCOND_SINGULAR) is SLA_ESINGULAR on every rank; σ is not moved. The VJP
 * (sla_dist_eigsh_vjp) takes these interior eigenpairs as they are: its tie test with
 * uncomputed eigenvalues already covers both ends of the block. */

/** Options of sla_dist_eigsh (sla_dist_eigsh_options_init() for the defaults). */
typedef struct sla_dist_eigsh_options {
    sla_eigsh_which which;       /**< SLA_EIGSH_SA (default) or SLA_EIGSH_LA */
    double tol;                  /**< ‖A v − λ M v‖₂ ≤ tol·(‖A‖₁ + |λ|‖M‖₁)·‖v‖₂, default
                                  *   1e-10; 0 means 1e-14 (as sla_eigsh) */
    int64_t maxiter;             /**< LOBPCG iterations, ≤ 0: 2000 */
    int64_t block_size;          /**< ≤ 0: max(2k, k + 4), lowered to ⌊N/3⌋ (not below k);
                                  *   a value given must satisfy k ≤ block_size ≤ N/3 */
    sla_dist_precond precond;    /**< SLA_DIST_PC_NONE (default) or SLA_DIST_PC_JACOBI: the
                                  *   residual block times diag(A_b)⁻¹ (as sla_eigsh with a
                                  *   callback doing r_i / a_ii; LA: applied as given) */
    const sla_dist_matrix *M;    /**< NULL: the standard problem; else symmetric positive
                                  *   definite on A's row layout, float64, batch 1 or A's */
    double *residuals;           /**< optional [batch][k]: the final relative residuals */
    double sigma;                /**< NAN (default): off. Else shift-invert mode: the k
                                  *   eigenvalues nearest sigma (which is then ignored;
                                  *   precond must be none), see below */
} sla_dist_eigsh_options;

/** Fills *o with the defaults above. Local. */
SLA_API void sla_dist_eigsh_options_init(sla_dist_eigsh_options *o);

/** k eigenpairs of each symmetric matrix of the batch A (square, rows and columns on one
 *  layout, float64, finite, numerically symmetric to 1000ε relative). Collective.
 *  @param[in]  A             batch of B matrices on one distributed pattern.
 *  @param[in]  k             1 ≤ k ≤ N, and k ≤ N/3 (LOBPCG's basis has 3·block columns).
 *  @param[in]  opt           NULL for the defaults (SA).
 *  @param[out] eigenvalues   [batch][k] double, ascending, the same on every rank.
 *  @param[out] eigenvectors  [batch][n_local][k] double (row-major: this rank's rows of the
 *                            unit, with M M-normalized, eigenvectors), or NULL. Sign
 *                            convention of sla_eigsh: the component of largest magnitude (the
 *                            lowest global index among exact ties) is positive.
 *  @param[out] info          may be NULL: iterations, operator and preconditioner
 *                            applications, converged count (min over the batch), max
 *                            residual, ‖A‖₁, ‖M‖₁, description.
 *  @return SLA_OK; SLA_NOT_CONVERGED (warning; outputs hold the best approximations);
 *          SLA_EINVAL (NULL, k, which not SA/LA, block_size, precond not none/jacobi, a zero
 *          diagonal for Jacobi naming the row, layouts, not symmetric, M's batch);
 *          SLA_ESHAPE (not square, arguments differ between ranks); SLA_EDTYPE (float32);
 *          SLA_ENONFINITE naming rank and entry; SLA_ENOTSPD (M's diagonal not positive);
 *          SLA_EBREAKDOWN; SLA_ENOMEM; SLA_EBACKEND; with sigma also SLA_ESINGULAR (A − σM
 *          singular), SLA_EUNSUPPORTED (no SuperLU_DIST, M's entries outside A's pattern).
 *          The same status on every rank. */
SLA_API sla_status sla_dist_eigsh(const sla_dist_matrix *A, int64_t k,
                                  const sla_dist_eigsh_options *opt, void *eigenvalues,
                                  void *eigenvectors, sla_eigsh_info *info);

/** VJP of (Λ, V) = sla_dist_eigsh(A[, M]): the math and the tie rule of sla_eigsh_vjp and
 *  sla_eigsh_generalized_vjp (src/eig/vjp.c), on this rank's rows. Collective.
 *    dA[b][s] = Σ_i gλ_i·v_i[r_s]·v_i[c_s] − Σ_i w_i[r_s]·v_i[c_s]          on A's slots,
 *    dM[b][t] = −Σ_i (gλ_i·λ_i + ½ g_iᵀv_i)·v_i[r_t]·v_i[c_t] + Σ_i λ_i·w_i[r_t]·v_i[c_t]
 *                                                          on M's (a batch-1 M: summed over
 *                                                          A's batch in dM[0]),
 *  with w_i = (A − λ_i M)⁺ g_i: its part inside the block explicit (Σ_{j≠i} v_j v_jᵀg_i /
 *  (λ_j − λ_i), sla_eig_vjp_in_block: the serial code), the rest Q (A − λ_i M)⁻¹ Qᵀ g_i
 *  (Q = I − V VᵀM) by MINRES (libsla's, through sla_krylov_run on the distributed space) on the
 *  symmetric projected operator Qᵀ(A − λ_i M)Q, to relative residual 1e-13 within
 *  min(10·N + 100, 100000) iterations; each pattern
 *  outer product is local with the ghost values of V (one forward halo exchange). Only
 *  eigenvectors with a nonzero cotangent cost a solve; each MINRES iteration is 2 SpMVs
 *  (3 with M) and ~7 reductions of ≤ k values.
 *  Ties: a loss that depends on the basis of a repeated eigenvalue is refused (SLA_EINVAL,
 *  naming the eigenvalue): inside the block by the serial rule (|λ_i − λ_j| ≤ 1e-8·scale with
 *  v_jᵀg_i ≠ v_iᵀg_j; scale ‖A‖₁, with M max|λ|); with an uncomputed eigenvalue when the
 *  projected solve for an eigenvalue at an end of the block does not converge (the system is
 *  then inconsistent) or its solution shows a near-null vector (‖(A − λ_i M)y‖/‖My‖ ≤
 *  1e-8·scale). Accuracy: the serial VJP's direct solve is exact for eigenpairs to working
 *  accuracy only; for eigenpairs from a tolerance of 1e-12 the two may differ by ~1e-8 (this
 *  one does not amplify the eigenpairs' residual), from 1e-14 by ≤ 1e-11.
 *  Each stored entry is an independent variable; sla_dist_values_scatter() takes the slots to
 *  the callers' COO order.
 *  @param[in] M              NULL for the standard problem.
 *  @param[in] eigenvalues    [batch][k], eigenvectors [batch][n_local][k]: sla_dist_eigsh's.
 *  @param[in] g_eigenvalues  [batch][k] or NULL.
 *  @param[in] g_eigenvectors [batch][n_local][k] or NULL (the same on every rank: NULL or not).
 *  @param[out] dA            [batch][nnz_local(A)], dM [batch of M][nnz_local(M)], double,
 *                            overwritten; either may be NULL.
 *  @return SLA_OK; SLA_NOT_CONVERGED (warning: a projected solve for an eigenvalue inside the
 *          block stopped short; the gradient from its best iterate); SLA_EINVAL (arguments,
 *          ties); SLA_EDTYPE; SLA_ESHAPE; SLA_ENONFINITE (g_eigenvectors or eigenvectors,
 *          naming rank and entry); SLA_ENOMEM; SLA_EBACKEND. The same status on every rank. */
SLA_API sla_status sla_dist_eigsh_vjp(const sla_dist_matrix *A, const sla_dist_matrix *M,
                                      int64_t k, const void *eigenvalues,
                                      const void *eigenvectors, const void *g_eigenvalues,
                                      const void *g_eigenvectors, void *dA, void *dM);

#ifdef __cplusplus
}
#endif
#endif
