/* Agreement on errors across the ranks, and the deterministic sum.
 *
 * An agreement is one MPI_Allreduce (MPI_MIN) of "the lowest failing rank" (size when none);
 * only on failure does that rank broadcast its status and message, which every rank adopts.
 * The sum is recursive doubling (Rabenseifner's scheme without the reduce-scatter) with a fixed
 * pairing: every partial sum is formed from the same two operands on every rank and in every
 * run, so the result has the same bits everywhere; it carries the agreement in its header. */
#include <stdio.h>
#include <string.h>

#include "mpi/dist.h"

#define DIST_MSG_LEN 1024
#define DIST_SUM_CHUNK 32
#define DIST_SUM_HEAD 3                 /* lowest failing rank, m, −m (all reduced by min) */
#define DIST_SUM_LEN (DIST_SUM_HEAD + DIST_SUM_CHUNK)

sla_status dist_mpi_error(const char *func, const char *call, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", rc);
    return sla_error_set(SLA_EBACKEND, func, "%s failed: %s", call, text);
}

/* The message of this rank's last error without a leading "func: ". */
static const char *strip_func(const char *msg, const char *func)
{
    size_t fl = strlen(func);
    if (strncmp(msg, func, fl) == 0 && msg[fl] == ':' && msg[fl + 1] == ' ') return msg + fl + 2;
    return msg;
}

sla_status dist_agree_fail(MPI_Comm comm, const char *func, int first, sla_status st)
{
    struct { int status; char msg[DIST_MSG_LEN]; } m;
    int rank;
    MPI_Comm_rank(comm, &rank);
    memset(&m, 0, sizeof m);
    if (rank == first) {
        m.status = st;
        snprintf(m.msg, sizeof m.msg, "%s", strip_func(sla_last_error(), func));
        if (!m.msg[0]) snprintf(m.msg, sizeof m.msg, "%s", sla_status_string(st));
    }
    int rc = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Bcast", rc);
    /* a message agreed on before (a helper's) already names its rank */
    int r, used = 0;
    if (sscanf(m.msg, "rank %d: %n", &r, &used) == 1 && used > 0)
        return sla_error_set(m.status, func, "%s", m.msg);
    return sla_error_set(m.status, func, "rank %d: %s", first, m.msg);
}

sla_status dist_agree(MPI_Comm comm, const char *func, sla_status st)
{
    return dist_agree_same(comm, func, st, 0, NULL, NULL);
}

sla_status sla_dist_agree(MPI_Comm comm, const char *func, sla_status status)
{
    if (comm == MPI_COMM_NULL) return SLA_FAIL(SLA_EINVAL, "comm is MPI_COMM_NULL");
    return dist_agree(comm, func ? func : "sla", status);
}

/* Names the first value that differs between rank 0 and some rank (all values already known
 * to differ somewhere). Collective. */
static sla_status name_mismatch(MPI_Comm comm, const char *func, int n, const int64_t *vals,
                                const char *const *names)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t v0[8], vr[8];
    memcpy(v0, vals, (size_t)n * sizeof *v0);
    int rc = MPI_Bcast(v0, n, MPI_INT64_T, 0, comm);
    int64_t code = size;
    for (int i = 0; i < n; i++)
        if (vals[i] != v0[i]) code = rank;
    if (rc == MPI_SUCCESS) rc = MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT64_T, MPI_MIN, comm);
    if (rc != MPI_SUCCESS || code >= size) return dist_mpi_error(func, "MPI_Allreduce", rc);
    memcpy(vr, vals, (size_t)n * sizeof *vr);
    rc = MPI_Bcast(vr, n, MPI_INT64_T, (int)code, comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Bcast", rc);
    int i = 0;
    while (i < n - 1 && vr[i] == v0[i]) i++;
    return sla_error_set(SLA_ESHAPE, func, "%s = %lld on rank %d but %lld on rank 0 (it must "
                         "be the same on every rank)", names[i], (long long)vr[i], (int)code,
                         (long long)v0[i]);
}

sla_status dist_agree_same(MPI_Comm comm, const char *func, sla_status st, int n,
                           const int64_t *vals, const char *const *names)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (n > 8) n = 8;
    int64_t buf[1 + 2 * 8];
    buf[0] = st < 0 ? rank : size;
    for (int i = 0; i < n; i++) {
        buf[1 + i] = vals[i];
        buf[1 + n + i] = -vals[i];
    }
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, 1 + 2 * n, MPI_INT64_T, MPI_MIN, comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Allreduce", rc);
    if (buf[0] < size) return dist_agree_fail(comm, func, (int)buf[0], st);
    for (int i = 0; i < n; i++)
        if (buf[1 + i] != -buf[1 + n + i]) return name_mismatch(comm, func, n, vals, names);
    return st;
}

/* out = a ⊕ b: minima of the header, sums of the values (a is the lower rank's: fixed). */
static void combine(const double *a, double *b, int len)
{
    for (int i = 0; i < DIST_SUM_HEAD; i++) b[i] = a[i] < b[i] ? a[i] : b[i];
    for (int i = DIST_SUM_HEAD; i < len; i++) b[i] = a[i] + b[i];
}

/* Recursive doubling over len doubles in buf; ranks beyond the largest power of two first fold
 * into an odd partner and get the result back at the end (MPICH's allreduce layout). */
static int rd_allreduce(MPI_Comm comm, double *buf, int len)
{
    int rank, size, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double tmp[DIST_SUM_LEN];
    int pof2 = 1;
    while (pof2 * 2 <= size) pof2 *= 2;
    int rem = size - pof2, newrank;
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            rc = MPI_Send(buf, len, MPI_DOUBLE, rank + 1, DIST_TAG_SUM, comm);
            newrank = -1;
        } else {
            rc = MPI_Recv(tmp, len, MPI_DOUBLE, rank - 1, DIST_TAG_SUM, comm, MPI_STATUS_IGNORE);
            combine(tmp, buf, len);
            newrank = rank / 2;
        }
    } else {
        newrank = rank - rem;
    }
    for (int mask = 1; newrank >= 0 && rc == MPI_SUCCESS && mask < pof2; mask <<= 1) {
        int newdst = newrank ^ mask;
        int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        rc = MPI_Sendrecv(buf, len, MPI_DOUBLE, dst, DIST_TAG_SUM, tmp, len, MPI_DOUBLE, dst,
                          DIST_TAG_SUM, comm, MPI_STATUS_IGNORE);
        if (newdst < newrank) {
            combine(tmp, buf, len);
        } else {
            combine(buf, tmp, len);
            memcpy(buf, tmp, (size_t)len * sizeof *buf);
        }
    }
    if (rc == MPI_SUCCESS && rank < 2 * rem) {
        if (rank % 2)
            rc = MPI_Send(buf, len, MPI_DOUBLE, rank - 1, DIST_TAG_SUM, comm);
        else
            rc = MPI_Recv(buf, len, MPI_DOUBLE, rank + 1, DIST_TAG_SUM, comm, MPI_STATUS_IGNORE);
    }
    return rc;
}

/* The sum of sla_dist_allsum: rounds of DIST_SUM_CHUNK values; the first round's header agrees
 * on the status and on m, so a later round runs on every rank or on none. out may be in. */
static sla_status sum_rounds(MPI_Comm comm, const char *func, sla_status st, int m,
                             const double *in, double *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int r0 = 0;; r0 += DIST_SUM_CHUNK) {
        double buf[DIST_SUM_LEN];
        int w = m - r0 < DIST_SUM_CHUNK ? m - r0 : DIST_SUM_CHUNK;
        if (w < 0 || st < 0) w = 0;
        memset(buf, 0, sizeof buf);
        buf[0] = st < 0 ? rank : size;
        buf[1] = m;
        buf[2] = -(double)m;
        for (int i = 0; i < w; i++) buf[DIST_SUM_HEAD + i] = in[r0 + i];
        int rc = rd_allreduce(comm, buf, DIST_SUM_LEN);
        if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Sendrecv", rc);
        if (r0 == 0 && buf[0] < size) return dist_agree_fail(comm, func, (int)buf[0], st);
        if (r0 == 0 && buf[1] != -buf[2])
            return sla_error_set(SLA_EINVAL, func, "the number of values to sum differs between "
                                 "ranks (from %.0f to %.0f)", buf[1], -buf[2]);
        for (int i = 0; i < w; i++) out[r0 + i] = buf[DIST_SUM_HEAD + i];
        if (r0 + DIST_SUM_CHUNK >= m) return st;
    }
}

sla_status dist_sum(MPI_Comm comm, const char *func, sla_status st, int m, double *vals)
{
    return sum_rounds(comm, func, st, m, vals, vals);
}

sla_status sla_dist_allsum(MPI_Comm comm, int m, const double *local, double *global)
{
    if (comm == MPI_COMM_NULL) return SLA_FAIL(SLA_EINVAL, "comm is MPI_COMM_NULL");
    sla_status st = SLA_OK;
    if (m < 0) st = SLA_FAIL(SLA_EINVAL, "m = %d < 0", m);
    else if (m > 0 && (!local || !global))
        st = SLA_FAIL(SLA_EINVAL, "%s is NULL", local ? "global" : "local");
    return sum_rounds(comm, __func__, st, m < 0 ? 0 : m, local, global);
}
