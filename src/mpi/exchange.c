/* Sparse all-to-all with int64 counts: point-to-point messages only between ranks that have
 * something to say to each other, elements of any size (a contiguous MPI datatype of es bytes,
 * so a message may hold up to 2^31 − 1 elements of any width). Used to move COO entries to
 * their owners, directory queries, halo requests and vector slices. */
#include <limits.h>
#include <string.h>

#include "mpi/dist.h"

sla_status dist_xchg_init(dist_xchg *X, int size, const char *func)
{
    memset(X, 0, sizeof *X);
    X->size = size;
    X->scount = sla_calloc((size_t)size, sizeof(int64_t), "send counts");
    X->rcount = sla_calloc((size_t)size, sizeof(int64_t), "receive counts");
    X->sdispl = sla_calloc((size_t)size + 1, sizeof(int64_t), "send offsets");
    X->rdispl = sla_calloc((size_t)size + 1, sizeof(int64_t), "receive offsets");
    if (!X->scount || !X->rcount || !X->sdispl || !X->rdispl) {
        dist_xchg_free(X);
        return sla_error_attribute(SLA_ENOMEM, func);
    }
    return SLA_OK;
}

void dist_xchg_free(dist_xchg *X)
{
    sla_free(X->scount);
    sla_free(X->rcount);
    sla_free(X->sdispl);
    sla_free(X->rdispl);
    X->scount = X->rcount = X->sdispl = X->rdispl = NULL;
}

static void prefix(const int64_t *count, int n, int64_t *displ)
{
    displ[0] = 0;
    for (int r = 0; r < n; r++) displ[r + 1] = displ[r] + count[r];
}

sla_status dist_xchg_counts(dist_xchg *X, MPI_Comm comm, const char *func)
{
    prefix(X->scount, X->size, X->sdispl);
    int rc = MPI_Alltoall(X->scount, 1, MPI_INT64_T, X->rcount, 1, MPI_INT64_T, comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Alltoall", rc);
    prefix(X->rcount, X->size, X->rdispl);
    sla_status st = SLA_OK;
    for (int r = 0; r < X->size && st == SLA_OK; r++)
        if (X->scount[r] > INT_MAX || X->rcount[r] > INT_MAX)
            st = sla_error_set(SLA_EUNSUPPORTED, func, "%lld elements to exchange with rank %d "
                               "(at most 2^31 - 1 per message)",
                               (long long)(X->scount[r] > INT_MAX ? X->scount[r] : X->rcount[r]),
                               r);
    return dist_agree(comm, func, st);
}

sla_status dist_xchg_run(const dist_xchg *X, MPI_Comm comm, const char *func, size_t es,
                         const void *sendbuf, void *recvbuf, int reverse)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    const int64_t *sc = reverse ? X->rcount : X->scount, *sd = reverse ? X->rdispl : X->sdispl;
    const int64_t *rcnt = reverse ? X->scount : X->rcount, *rd = reverse ? X->sdispl : X->rdispl;
    int nreq = 0;
    for (int r = 0; r < X->size; r++) nreq += (r != rank && sc[r] > 0) + (r != rank && rcnt[r] > 0);
    MPI_Request *req = sla_malloc((size_t)nreq, sizeof *req, "exchange requests");
    sla_status st = dist_agree(comm, func, req ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    if (st < 0) {                   /* another rank may have failed: ours is freed too */
        sla_free(req);
        return st;
    }
    MPI_Datatype type;
    int rc = MPI_Type_contiguous((int)es, MPI_BYTE, &type);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&type);
    if (rc != MPI_SUCCESS) {
        sla_free(req);
        return dist_mpi_error(func, "MPI_Type_contiguous", rc);
    }
    char *rb = recvbuf;
    const char *sb = sendbuf;
    int q = 0;
    for (int r = 0; r < X->size && rc == MPI_SUCCESS; r++)
        if (r != rank && rcnt[r] > 0)
            rc = MPI_Irecv(rb + (size_t)rd[r] * es, (int)rcnt[r], type, r, DIST_TAG_XCHG, comm,
                           &req[q++]);
    for (int r = 0; r < X->size && rc == MPI_SUCCESS; r++)
        if (r != rank && sc[r] > 0)
            rc = MPI_Isend(sb + (size_t)sd[r] * es, (int)sc[r], type, r, DIST_TAG_XCHG, comm,
                           &req[q++]);
    if (sc[rank] > 0) memcpy(rb + (size_t)rd[rank] * es, sb + (size_t)sd[rank] * es,
                             (size_t)sc[rank] * es);
    if (rc == MPI_SUCCESS) rc = MPI_Waitall(q, req, MPI_STATUSES_IGNORE);
    MPI_Type_free(&type);
    sla_free(req);
    return rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error(func, "point-to-point exchange", rc);
}
