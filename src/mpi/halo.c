/* The halo plan of a distributed pattern and its two exchanges.
 *
 * Plan: the ghost columns are sorted by (owner, global index), so those of one owner form one
 * segment, received straight into the ghost array; each owner learns, once, which of its
 * entries every neighbour needs (in that neighbour's ghost order) and keeps them as local
 * indices (send_idx). Blocks of nb vectors [nb][n][k] travel as one message per neighbour
 * laid out [nb][segment][k].
 *
 * Forward (owned → ghosts, for A·x): receives posted, owned entries packed and sent; the caller
 * computes meanwhile; finish waits (and unpacks when nb > 1).
 * Reverse (ghost contributions → owners, for Aᵀ·x): the owners post receives, the ghost
 * holders send their contributions, the owners add them into their entries neighbour by
 * neighbour in ascending rank order, so the sum order is fixed (hypre's
 * hypre_ParCSRMatrixMatvecT, PETSc's MatMultTranspose_MPIAIJ with ADD_VALUES). */
#include <limits.h>
#include <string.h>

#include "mpi/dist.h"

void dist_halo_free(dist_halo *H)
{
    sla_free(H->recv_rank);
    sla_free(H->recv_ptr);
    sla_free(H->send_rank);
    sla_free(H->send_ptr);
    sla_free(H->send_idx);
    memset(H, 0, sizeof *H);
}

/* Receive side from the sorted ghost owners: neighbours and segments. */
static sla_status recv_side(sla_dist_pattern *P, const char *func)
{
    dist_halo *H = &P->halo;
    int n = 0;
    for (int64_t g = 0; g < P->nghost; g++) n += g == 0 || P->ghost_owner[g] != P->ghost_owner[g - 1];
    H->recv_rank = sla_malloc((size_t)n, sizeof *H->recv_rank, "halo neighbours");
    H->recv_ptr = sla_malloc((size_t)n + 1, sizeof *H->recv_ptr, "halo segments");
    if (!H->recv_rank || !H->recv_ptr) return sla_error_attribute(SLA_ENOMEM, func);
    H->nrecv = 0;
    for (int64_t g = 0; g < P->nghost; g++)
        if (g == 0 || P->ghost_owner[g] != P->ghost_owner[g - 1]) {
            H->recv_rank[H->nrecv] = P->ghost_owner[g];
            H->recv_ptr[H->nrecv++] = g;
        }
    H->recv_ptr[H->nrecv] = P->nghost;
    return SLA_OK;
}

/* Send side from the requests received (global indices in X's receive layout). */
static sla_status send_side(sla_dist_pattern *P, const char *func, const dist_xchg *X)
{
    dist_halo *H = &P->halo;
    int n = 0, size = P->rows->size;
    for (int r = 0; r < size; r++) n += X->rcount[r] > 0;
    H->send_rank = sla_malloc((size_t)n, sizeof *H->send_rank, "halo neighbours");
    H->send_ptr = sla_malloc((size_t)n + 1, sizeof *H->send_ptr, "halo send segments");
    if (!H->send_rank || !H->send_ptr) return sla_error_attribute(SLA_ENOMEM, func);
    H->nsend = 0;
    for (int r = 0; r < size; r++)
        if (X->rcount[r] > 0) {
            H->send_rank[H->nsend] = r;
            H->send_ptr[H->nsend++] = X->rdispl[r];
        }
    H->send_ptr[H->nsend] = X->rdispl[size];
    for (int64_t i = 0; i < X->rdispl[size]; i++) {
        int64_t l = sla_dist_layout_local_index(P->cols, H->send_idx[i]);
        if (l < 0)
            return sla_error_set(SLA_EINTERNAL, func, "halo request for column %lld, which "
                                 "this rank does not own", (long long)H->send_idx[i]);
        H->send_idx[i] = l;
    }
    return SLA_OK;
}

sla_status dist_halo_build(sla_dist_pattern *P, const char *func)
{
    dist_xchg X;
    sla_status st = dist_xchg_init(&X, P->rows->size, func);
    /* every constructor ends here once its blocks are built: the rows with ghosts too */
    if (st == SLA_OK) st = dist_offd_rows(P);
    if (st == SLA_OK) st = recv_side(P, func);
    st = dist_agree(P->comm, func, st);
    if (st == SLA_OK) {
        for (int q = 0; q < P->halo.nrecv; q++)
            X.scount[P->halo.recv_rank[q]] = P->halo.recv_ptr[q + 1] - P->halo.recv_ptr[q];
        st = dist_xchg_counts(&X, P->comm, func);
    }
    if (st == SLA_OK) {
        P->halo.send_idx = sla_malloc((size_t)X.rdispl[X.size], sizeof *P->halo.send_idx,
                                      "halo send lists");
        st = dist_agree(P->comm, func, P->halo.send_idx ? SLA_OK
                                                        : sla_error_attribute(SLA_ENOMEM, func));
    }
    /* the ghost list, grouped by owner in rank order, is the request to send */
    if (st == SLA_OK)
        st = dist_xchg_run(&X, P->comm, func, sizeof(int64_t), P->ghost_global,
                           P->halo.send_idx, 0);
    if (st == SLA_OK) st = dist_agree(P->comm, func, send_side(P, func, &X));
    dist_xchg_free(&X);
    return st;
}

sla_status sla_dist_pattern_halo(const sla_dist_pattern *P, sla_dist_halo_info *halo)
{
    SLA_CHECK_ARG(P && halo, "%s is NULL", P ? "halo" : "P");
    const dist_halo *H = &P->halo;
    *halo = (sla_dist_halo_info){H->nrecv, H->recv_rank, H->recv_ptr, H->nsend, H->send_rank,
                                 H->send_ptr, H->send_idx};
    return SLA_OK;
}

/* ---- exchanges ---- */

sla_status dist_halo_buf_init(dist_halo_buf *B, const sla_dist_pattern *P, size_t es, int64_t k,
                              int64_t nb, const char *func)
{
    const dist_halo *H = &P->halo;
    memset(B, 0, sizeof *B);
    B->unit = (size_t)k * es;
    B->nb = nb;
    int64_t ns = H->send_ptr ? H->send_ptr[H->nsend] : 0;
    for (int q = 0; q < H->nrecv; q++)
        if ((double)(H->recv_ptr[q + 1] - H->recv_ptr[q]) * nb * B->unit > INT_MAX)
            return sla_error_set(SLA_EUNSUPPORTED, func, "a halo message from rank %d would "
                                 "exceed 2^31 bytes", H->recv_rank[q]);
    for (int q = 0; q < H->nsend; q++)
        if ((double)(H->send_ptr[q + 1] - H->send_ptr[q]) * nb * B->unit > INT_MAX)
            return sla_error_set(SLA_EUNSUPPORTED, func, "a halo message to rank %d would "
                                 "exceed 2^31 bytes", H->send_rank[q]);
    B->send = sla_malloc((size_t)(ns * nb), B->unit, "halo send buffer");
    B->recv = nb > 1 ? sla_malloc((size_t)(P->nghost * nb), B->unit, "halo receive buffer")
                     : NULL;
    B->req = sla_malloc((size_t)(H->nrecv + H->nsend), sizeof *B->req, "halo requests");
    if (!B->send || (nb > 1 && !B->recv) || !B->req) {
        dist_halo_buf_free(B);
        return sla_error_attribute(SLA_ENOMEM, func);
    }
    return SLA_OK;
}

void dist_halo_buf_free(dist_halo_buf *B)
{
    sla_free(B->send);
    sla_free(B->recv);
    sla_free(B->req);
    B->send = B->recv = NULL;
    B->req = NULL;
}

/* Byte offset of index i of block b in an array [nb][n][k]. */
static size_t at(const dist_halo_buf *B, int64_t b, int64_t n, int64_t i)
{
    return ((size_t)b * (size_t)n + (size_t)i) * B->unit;
}

static sla_status mpi_status(int rc, const char *call)
{
    return rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error("halo exchange", call, rc);
}

sla_status dist_halo_start(const sla_dist_pattern *P, dist_halo_buf *B, const void *x,
                           void *ghost)
{
    const dist_halo *H = &P->halo;
    int64_t nc = P->cols->n, nb = B->nb;
    int rc = MPI_SUCCESS;
    B->nreq = 0;
    for (int q = 0; q < H->nrecv && rc == MPI_SUCCESS; q++) {
        int64_t len = H->recv_ptr[q + 1] - H->recv_ptr[q];
        char *dst = nb == 1 ? (char *)ghost + at(B, 0, 0, H->recv_ptr[q])
                            : (char *)B->recv + at(B, 0, 0, nb * H->recv_ptr[q]);
        rc = MPI_Irecv(dst, (int)(len * nb * (int64_t)B->unit), MPI_BYTE, H->recv_rank[q],
                       DIST_TAG_HALO, P->comm, &B->req[B->nreq++]);
    }
    for (int q = 0; q < H->nsend && rc == MPI_SUCCESS; q++) {
        int64_t s0 = H->send_ptr[q], len = H->send_ptr[q + 1] - s0;
        char *buf = (char *)B->send + at(B, 0, 0, nb * s0);
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = 0; i < len; i++)
                memcpy(buf + at(B, b, len, i), (const char *)x + at(B, b, nc, H->send_idx[s0 + i]),
                       B->unit);
        rc = MPI_Isend(buf, (int)(len * nb * (int64_t)B->unit), MPI_BYTE, H->send_rank[q],
                       DIST_TAG_HALO, P->comm, &B->req[B->nreq++]);
    }
    return mpi_status(rc, "MPI_Isend/MPI_Irecv");
}

sla_status dist_halo_finish(const sla_dist_pattern *P, dist_halo_buf *B, void *ghost)
{
    const dist_halo *H = &P->halo;
    int rc = MPI_Waitall(B->nreq, B->req, MPI_STATUSES_IGNORE);
    B->nreq = 0;
    if (rc != MPI_SUCCESS || B->nb == 1) return mpi_status(rc, "MPI_Waitall");
    for (int q = 0; q < H->nrecv; q++) {
        int64_t g0 = H->recv_ptr[q], len = H->recv_ptr[q + 1] - g0;
        const char *buf = (const char *)B->recv + at(B, 0, 0, B->nb * g0);
        for (int64_t b = 0; b < B->nb; b++)
            memcpy((char *)ghost + at(B, b, P->nghost, g0), buf + at(B, b, len, 0),
                   (size_t)len * B->unit);
    }
    return SLA_OK;
}

sla_status dist_halo_rstart(const sla_dist_pattern *P, dist_halo_buf *B)
{
    const dist_halo *H = &P->halo;
    int rc = MPI_SUCCESS;
    B->nreq = 0;
    for (int q = 0; q < H->nsend && rc == MPI_SUCCESS; q++) {
        int64_t s0 = H->send_ptr[q], len = H->send_ptr[q + 1] - s0;
        rc = MPI_Irecv((char *)B->send + at(B, 0, 0, B->nb * s0),
                       (int)(len * B->nb * (int64_t)B->unit), MPI_BYTE, H->send_rank[q],
                       DIST_TAG_REVERSE, P->comm, &B->req[B->nreq++]);
    }
    return mpi_status(rc, "MPI_Irecv");
}

sla_status dist_halo_rsend(const sla_dist_pattern *P, dist_halo_buf *B, const void *z)
{
    const dist_halo *H = &P->halo;
    int rc = MPI_SUCCESS;
    for (int q = 0; q < H->nrecv && rc == MPI_SUCCESS; q++) {
        int64_t g0 = H->recv_ptr[q], len = H->recv_ptr[q + 1] - g0;
        const char *src = (const char *)z + at(B, 0, 0, g0);
        if (B->nb > 1) {
            char *buf = (char *)B->recv + at(B, 0, 0, B->nb * g0);
            for (int64_t b = 0; b < B->nb; b++)
                memcpy(buf + at(B, b, len, 0), (const char *)z + at(B, b, P->nghost, g0),
                       (size_t)len * B->unit);
            src = buf;
        }
        rc = MPI_Isend(src, (int)(len * B->nb * (int64_t)B->unit), MPI_BYTE, H->recv_rank[q],
                       DIST_TAG_REVERSE, P->comm, &B->req[B->nreq++]);
    }
    return mpi_status(rc, "MPI_Isend");
}

sla_status dist_halo_rfinish(const sla_dist_pattern *P, dist_halo_buf *B, sla_dtype dtype,
                             int accumulate, void *y)
{
    const dist_halo *H = &P->halo;
    int rc = MPI_Waitall(B->nreq, B->req, MPI_STATUSES_IGNORE);
    B->nreq = 0;
    if (rc != MPI_SUCCESS) return mpi_status(rc, "MPI_Waitall");
    int64_t k = (int64_t)(B->unit / sla_dtype_size(dtype));
    for (int q = 0; q < H->nsend; q++) {
        int64_t s0 = H->send_ptr[q], len = H->send_ptr[q + 1] - s0;
        dist_add_rows(dtype, B->nb, k, accumulate ? 0 : P->cols->n, len, H->send_idx + s0,
                      (const char *)B->send + at(B, 0, 0, B->nb * s0), y);
    }
    return SLA_OK;
}
