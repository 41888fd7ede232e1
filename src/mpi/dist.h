/* Private structures and helpers of libsla_mpi (src/mpi). Not installed.
 *
 * Every collective function is written as phases: local work that may fail (checks,
 * allocations) ends in an agreement (dist_agree), after which every rank either returns the
 * same error or goes on to communicate. Nothing that can fail locally happens between an
 * agreement and the communication it guards, so a failure on one rank never leaves the others
 * waiting for it. */
#ifndef SLA_MPI_DIST_H
#define SLA_MPI_DIST_H

#include <stdatomic.h>

#include "core/internal.h"
#include "sla/mpi.h"

/* Tags of sla's point-to-point messages (on a layout's private communicator). */
enum { DIST_TAG_XCHG = 0x51a0, DIST_TAG_HALO = 0x51a1, DIST_TAG_REVERSE = 0x51a2,
       DIST_TAG_SUM = 0x51a3 };

/* ---- agreement (agree.c) ---- */

/* As sla_dist_agree, and also checks that each of the n values vals[i] (named names[i]) is the
 * same on every rank: if not, every rank returns SLA_ESHAPE with a message naming the value, a
 * rank whose value differs from rank 0's, and both values. One MPI_Allreduce when all is well. */
sla_status dist_agree_same(MPI_Comm comm, const char *func, sla_status st, int n,
                           const int64_t *vals, const char *const *names);

sla_status dist_agree(MPI_Comm comm, const char *func, sla_status st);

/* The failure half of an agreement: rank `first` broadcasts its status and message, every rank
 * adopts them ("func: rank first: ..."). Collective. */
sla_status dist_agree_fail(MPI_Comm comm, const char *func, int first, sla_status st);

/* Deterministic sum of m doubles over the ranks (sla_dist_allsum), carrying each rank's status
 * along: returns the agreed status (as dist_agree), vals summed in place on success. */
sla_status dist_sum(MPI_Comm comm, const char *func, sla_status st, int m, double *vals);

/* SLA_EBACKEND with the MPI error string, for an MPI call that returned rc. */
sla_status dist_mpi_error(const char *func, const char *call, int rc);

/* ---- layouts (layout.c, directory.c) ---- */

struct sla_dist_layout {
    atomic_int refcount;
    MPI_Comm comm;          /* private duplicate, errors returned */
    int rank, size;
    int64_t N;              /* global size */
    int64_t n;              /* owned here */
    int64_t *global;        /* [n] owned global indices, ascending */
    int contiguous;         /* rank r owns [offsets[r], offsets[r + 1]) */
    int64_t *offsets;       /* [size + 1] when contiguous, else NULL */
    /* directory, non-contiguous layouts only: this rank answers for the global indices of
     * its block [dist_block_lo(N, size, rank), ... of rank + 1) */
    int32_t *dir_owner;     /* [block] owner of each index of the block */
    int64_t *dir_local;     /* [block] its local index on the owner */
};

/* Even split of [0, N) into p blocks (the first N mod p one longer): start of block r, and the
 * block of global index g. */
int64_t dist_block_lo(int64_t N, int p, int r);
int dist_block_of(int64_t N, int p, int64_t g);

/* Owner rank (and its local index, if local != NULL) of nq global indices, valid ones, in
 * [0, N). Collective (directory look-ups for non-contiguous layouts; none otherwise). */
sla_status dist_layout_lookup(const sla_dist_layout *L, const char *func, int64_t nq,
                              const int64_t *g, int *owner, int64_t *local);

/* Layout on an already duplicated communicator from owned lists (takes ownership of comm: it
 * is freed on failure). owned is sorted in place. Collective. */
sla_status dist_layout_build(MPI_Comm dupcomm, const char *func, int64_t N, int64_t n,
                             int64_t *owned, sla_dist_layout **out);

/* Contiguous layout on a duplicated communicator from the counts of every rank ([size]);
 * takes ownership of comm as above. */
sla_status dist_layout_build_contiguous(MPI_Comm dupcomm, const char *func, int64_t N,
                                        const int64_t *counts, sla_dist_layout **out);

/* Duplicates comm with errors returned (MPI_ERRORS_RETURN). */
sla_status dist_comm_dup(MPI_Comm comm, const char *func, MPI_Comm *out);

/* Directory of a non-contiguous layout (directory.c). Collective. */
sla_status dist_directory_build(sla_dist_layout *L, const char *func);

/* 1 if the two layouts assign every index alike (agreed over the ranks). Collective. */
sla_status dist_layouts_same(const sla_dist_layout *a, const sla_dist_layout *b,
                             const char *func, int *same);

/* ---- sparse all-to-all with int64 counts (exchange.c) ---- */

typedef struct dist_xchg {
    int size;
    int64_t *scount, *sdispl;   /* [size], [size + 1] elements sent to each rank */
    int64_t *rcount, *rdispl;   /* [size], [size + 1] elements received from each rank */
} dist_xchg;

/* Allocates the count arrays (zeroed). Local; may fail (SLA_ENOMEM). */
sla_status dist_xchg_init(dist_xchg *X, int size, const char *func);
void dist_xchg_free(dist_xchg *X);
/* Sets sdispl from scount, exchanges the counts (MPI_Alltoall) and sets rcount, rdispl.
 * Collective; its status is agreed. */
sla_status dist_xchg_counts(dist_xchg *X, MPI_Comm comm, const char *func);
/* Sends scount[r] elements of es bytes from sendbuf + sdispl[r] to every rank r and receives
 * rcount[r] into recvbuf + rdispl[r] (reverse = 1: the other way round: rcount out of
 * recvbuf... i.e. sends from `sendbuf` laid out by rdispl and receives by sdispl). The own
 * rank's part is copied. Collective; agreed. */
sla_status dist_xchg_run(const dist_xchg *X, MPI_Comm comm, const char *func, size_t es,
                         const void *sendbuf, void *recvbuf, int reverse);

/* ---- distributed patterns (pattern.c, halo.c) ---- */

/* The halo plan of a pattern's column space (sla_dist_halo_info, owned arrays). */
typedef struct dist_halo {
    int nrecv, nsend;
    int *recv_rank;             /* [nrecv] ascending */
    int64_t *recv_ptr;          /* [nrecv + 1] segments of the ghost columns */
    int *send_rank;             /* [nsend] ascending */
    int64_t *send_ptr;          /* [nsend + 1] */
    int64_t *send_idx;          /* [send_ptr[nsend]] local column indices */
} dist_halo;

struct sla_dist_pattern {
    atomic_int refcount;
    sla_dist_layout *rows, *cols;
    MPI_Comm comm;              /* rows->comm */
    sla_pattern *diag;          /* n_rows_local × n_cols_local */
    sla_pattern *offd;          /* n_rows_local × nghost */
    int64_t nnz_diag, nnz_offd;
    /* the local rows with off-diagonal entries, ascending (hypre's rownnz of the offd block):
     * y += A_offd·ghost visits these only, not every local row (dist_offd_rows) */
    int64_t n_offd_rows;
    int64_t *offd_rows;         /* [n_offd_rows] */
    int64_t nghost;
    int64_t *ghost_global;      /* [nghost] by (owner, global) */
    int *ghost_owner;           /* [nghost] */
    dist_halo halo;
    /* the COO map: entry k of this rank went to rank d (counts in coo.scount) at position
     * coo_pos[k] of the send buffer; received entry e (in rank order) fills slot recv_slot[e] */
    int64_t nnz_in;
    dist_xchg coo;
    int64_t *coo_pos;           /* [nnz_in] */
    int64_t nrecv;
    int64_t *recv_slot;         /* [nrecv] */
    /* CSR input (pattern_csr.c): the entries never left this rank, so there is no exchange
     * (coo, coo_pos unset) and nrecv = nnz_in; recv_slot[k] is the slot of entry k, or NULL
     * when entry order is the merge by global column of the two blocks' rows in local order
     * (rows handed in local order, columns ascending): the slots are then found by walking
     * the blocks (values.c), and no map is stored */
    int csr_input;
};

/* A pattern shell on the two layouts (retained), for the constructors; NULL if out of
 * memory. Local. */
sla_dist_pattern *dist_pattern_new(const sla_dist_layout *rows, const sla_dist_layout *cols);
void dist_pattern_destroy(sla_dist_pattern *P);
/* A constructor's last step: on st == SLA_OK the halo plan is built (collective) and P goes to
 * *out; on any failure P is destroyed and the status returned (P may be NULL then). */
sla_status dist_pattern_finish(sla_dist_pattern *P, const char *func, sla_status st,
                               sla_dist_pattern **out);
/* Common checks of a constructor's layouts and out (local). */
sla_status dist_pattern_check_layouts(const char *func, const sla_dist_layout *rows,
                                      const sla_dist_layout *cols, sla_dist_pattern **out);

/* Ghost columns of an off-diagonal block: the unique (owner, global) of its nkeys entries
 * (keys [nkeys][2], sorted and compacted in place) become P->ghost_global/ghost_owner, and
 * dist_pattern_ghost_index() finds an entry's ghost by binary search. Local; may fail. */
typedef struct dist_ghost_key { int64_t owner, global; } dist_ghost_key;
sla_status dist_pattern_make_ghosts(sla_dist_pattern *P, const char *func, int64_t nkeys,
                                    dist_ghost_key *keys);
int64_t dist_pattern_ghost_index(const sla_dist_pattern *P, int64_t owner, int64_t global);

/* Builds the halo plan of P (ghost arrays already set). Collective. */
sla_status dist_halo_build(sla_dist_pattern *P, const char *func);
void dist_halo_free(dist_halo *H);

/* Buffers of one halo exchange of nb blocks [nb][n][k] of es-byte elements. */
typedef struct dist_halo_buf {
    size_t unit;                /* bytes per index and block: k · es */
    int64_t nb;
    void *send;                 /* forward: packed owned values; reverse: received values */
    void *recv;                 /* forward with nb > 1: received ghosts before unpacking;
                                 * reverse with nb > 1: packed ghost contributions */
    MPI_Request *req;           /* [nrecv + nsend] */
    int nreq;                   /* requests posted and not yet completed */
} dist_halo_buf;

/* Allocates the buffers for nb blocks of width k (local; may fail). */
sla_status dist_halo_buf_init(dist_halo_buf *B, const sla_dist_pattern *P, size_t es, int64_t k,
                              int64_t nb, const char *func);
void dist_halo_buf_free(dist_halo_buf *B);

/* Forward exchange of a column-space block x [nb][n_cols_local][k] into ghost [nb][nghost][k]:
 * start posts receives and sends, finish waits and unpacks. Unchecked; SLA_EBACKEND if MPI
 * fails (local). */
sla_status dist_halo_start(const sla_dist_pattern *P, dist_halo_buf *B, const void *x,
                           void *ghost);
sla_status dist_halo_finish(const sla_dist_pattern *P, dist_halo_buf *B, void *ghost);

/* Reverse exchange: ghost contributions z [nb][nghost][k] go back to their owners, which add
 * them into y [nb][n_cols_local][k] in ascending rank order (accumulate: all nb blocks into
 * one y [n_cols_local][k], block by block). rstart posts the receives, rsend the sends (z
 * complete), rfinish waits and adds. */
sla_status dist_halo_rstart(const sla_dist_pattern *P, dist_halo_buf *B);
sla_status dist_halo_rsend(const sla_dist_pattern *P, dist_halo_buf *B, const void *z);
sla_status dist_halo_rfinish(const sla_dist_pattern *P, dist_halo_buf *B, sla_dtype dtype,
                             int accumulate, void *y);

/* SLA_EINVAL unless the view is usable (local check; messages name "A"). */
sla_status dist_matrix_check_local(const char *func, const sla_dist_matrix *A);

/* Global column of local column j of P's column space (owned: j < ncols_local; ghost:
 * ncols_local + g). */
int64_t dist_pattern_global_col(const sla_dist_pattern *P, int offd, int64_t j);

/* y = op(A)·x, one vector (k = 1) of a batch-1 view, on the caller's halo buffers B (for one
 * block of width 1) and ghost [nghost]; op = T needs dist_spmv_prepare_transpose() first.
 * Unchecked, not agreed (spmv.c). */
sla_status dist_spmv_vec(const sla_dist_matrix *A, sla_op op, const void *x, void *y,
                         dist_halo_buf *B, void *ghost);
/* Builds the transposed local blocks of P (cached in the patterns). Local; may fail. */
sla_status dist_spmv_prepare_transpose(const sla_dist_pattern *P, const char *func);

/* ---- local kernels (t_dist.h through kernels.c) ---- */

/* y[b][idx[i]][j] += buf[b][i][j] for a segment of a reverse exchange, y's blocks ny rows
 * apart (ny = 0: every block into the one y). */
/* y[b][r][j] += alpha·Σ_s a_s·g[b][c_s][j] over the rows r = rows[i] of the CSR block (rp, ci,
 * values va [b][nnz] apart by nnz) with n_rows listed rows: the off-diagonal product on the rows
 * that have ghosts. Each y entry gets alpha·sum + y, sum in CSR order: the bits of sla_spmv
 * with beta = 1 (row-parallel, so independent of the thread count). */
void dist_offd_add(sla_dtype dtype, int64_t batch, int64_t k, int64_t nr, int64_t ng, int64_t nnz,
                   const int64_t *rp, const int32_t *ci, int64_t n_rows, const int64_t *rows,
                   double alpha, const void *va, const void *g, void *y);
/* P->offd_rows from P->offd (dist_halo_build calls it: every constructor's last step). */
sla_status dist_offd_rows(sla_dist_pattern *P);

void dist_add_rows(sla_dtype dtype, int64_t nb, int64_t k, int64_t ny, int64_t n,
                   const int64_t *idx, const void *buf, void *y);
/* local[b][slot[e]] (zeroed first, −0) += recv[e][b]: COO values into local slots. */
void dist_gather_slots(sla_dtype dtype, int64_t batch, int64_t nloc, int64_t nrecv,
                       const int64_t *slot, const void *recv, void *local);

#endif
