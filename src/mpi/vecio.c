/* Global vectors on one rank ↔ owned slices: the root learns every rank's owned indices (one
 * gather, O(N) on the root only), then one message per rank carries its entries. */
#include <string.h>

#include "mpi/dist.h"

/* The owned lists of all ranks on root (*lists [N], laid out by X->rdispl; NULL elsewhere);
 * X: every rank sends its n indices to root. Collective. */
static sla_status owned_on_root(const sla_dist_layout *L, const char *func, int root,
                                dist_xchg *X, int64_t **lists)
{
    *lists = NULL;
    sla_status st = dist_agree(L->comm, func, dist_xchg_init(X, L->size, func));
    if (st < 0) {
        dist_xchg_free(X);                      /* allocated here if another rank failed */
        return st;
    }
    X->scount[root] = L->n;
    st = dist_xchg_counts(X, L->comm, func);
    if (st == SLA_OK) {
        *lists = sla_malloc((size_t)X->rdispl[L->size], sizeof **lists, "owned lists");
        st = dist_agree(L->comm, func, *lists ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(X, L->comm, func, sizeof(int64_t), L->global, *lists, 0);
    if (st < 0) {
        dist_xchg_free(X);
        sla_free(*lists);
        *lists = NULL;
    }
    return st;
}

/* Local checks and the agreement of both directions; *X and *lists as owned_on_root, *buf a
 * staging buffer of message entries ([batch][k] each; root: N, others: n), *mine this rank's
 * entries (*buf itself except on the root). */
static sla_status prepare(const char *func, const sla_dist_layout *L, sla_dtype dtype,
                          int64_t batch, int64_t k, int root, const void *global,
                          const void *local, dist_xchg *X, int64_t **lists, char **buf,
                          char **mine)
{
    *buf = *mine = NULL;
    int64_t same[4] = {dtype, batch, k, root};
    static const char *const names[4] = {"dtype", "batch", "k", "root"};
    sla_status st = SLA_OK;
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        st = sla_error_set(SLA_EDTYPE, func, "dtype %d is not float64 or float32", (int)dtype);
    else if (batch < 1 || k < 1)
        st = sla_error_set(SLA_EINVAL, func, "%s = %lld < 1", batch < 1 ? "batch" : "k",
                           (long long)(batch < 1 ? batch : k));
    else if (root < 0 || root >= L->size)
        st = sla_error_set(SLA_EINVAL, func, "root = %d is not a rank of the %d", root, L->size);
    else if (L->n > 0 && !local)
        st = sla_error_set(SLA_EINVAL, func, "local is NULL");
    else if (L->rank == root && L->N > 0 && !global)
        st = sla_error_set(SLA_EINVAL, func, "global is NULL on the root");
    int64_t rows = L->rank == root ? L->N : L->n;
    size_t unit = st == SLA_OK ? (size_t)(batch * k) * sla_dtype_size(dtype) : 0;
    if (st == SLA_OK && !(*buf = sla_malloc((size_t)rows, unit, "vector staging buffer")))
        st = sla_error_attribute(SLA_ENOMEM, func);
    if (st == SLA_OK)
        *mine = L->rank == root ? sla_malloc((size_t)L->n, unit, "own slice") : *buf;
    if (st == SLA_OK && !*mine) st = sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree_same(L->comm, func, st, 4, same, names);
    if (st == SLA_OK) st = owned_on_root(L, func, root, X, lists);
    if (st < 0) {
        if (*mine != *buf) sla_free(*mine);
        sla_free(*buf);
        *buf = *mine = NULL;
    }
    return st;
}

/* Copies between [batch][n][k] (the vector) and [n][batch][k] (the messages): to_msg = 1
 * packs rows idx[i] of the vector (idx NULL: i) into message entry i. */
static void repack(int to_msg, int64_t batch, int64_t n, int64_t nvec, int64_t k, size_t es,
                   const int64_t *idx, char *vec, char *msg)
{
    size_t row = (size_t)k * es;
    for (int64_t i = 0; i < n; i++)
        for (int64_t b = 0; b < batch; b++) {
            char *v = vec + ((size_t)b * (size_t)nvec + (size_t)(idx ? idx[i] : i)) * row;
            char *m = msg + ((size_t)i * (size_t)batch + (size_t)b) * row;
            if (to_msg) memcpy(m, v, row); else memcpy(v, m, row);
        }
}

/* One direction of the transfer: to_root = 0 scatters global (root) into local, 1 gathers. */
static sla_status transfer(const char *func, const sla_dist_layout *L, sla_dtype dtype,
                           int64_t batch, int64_t k, int root, void *global, void *local,
                           int to_root)
{
    SLA_CHECK_ARG_AS(func, L, "L is NULL");
    dist_xchg X;
    int64_t *lists = NULL;
    char *buf = NULL, *mine = NULL;
    SLA_TRY(prepare(func, L, dtype, batch, k, root, global, local, &X, &lists, &buf, &mine));
    size_t es = sla_dtype_size(dtype), unit = (size_t)(batch * k) * es;
    sla_status st;
    if (to_root) {
        repack(1, batch, L->n, L->n, k, es, NULL, local, mine);
        st = dist_xchg_run(&X, L->comm, func, unit, mine, buf, 0);
        if (st == SLA_OK && L->rank == root) repack(0, batch, L->N, L->N, k, es, lists, global, buf);
    } else {
        if (L->rank == root) repack(1, batch, L->N, L->N, k, es, lists, global, buf);
        /* root's entries for rank r are at rdispl[r]: sent back along the gather's layout */
        st = dist_xchg_run(&X, L->comm, func, unit, buf, mine, 1);
        if (st == SLA_OK) repack(0, batch, L->n, L->n, k, es, NULL, local, mine);
    }
    if (mine != buf) sla_free(mine);
    sla_free(buf);
    sla_free(lists);
    dist_xchg_free(&X);
    return st;
}

sla_status sla_dist_vec_scatter(const sla_dist_layout *L, sla_dtype dtype, int64_t batch,
                                int64_t k, int root, const void *global, void *local)
{
    return transfer(__func__, L, dtype, batch, k, root, (void *)global, local, 0);
}

sla_status sla_dist_vec_gather(const sla_dist_layout *L, sla_dtype dtype, int64_t batch,
                               int64_t k, int root, const void *local, void *global)
{
    return transfer(__func__, L, dtype, batch, k, root, global, (void *)local, 1);
}
