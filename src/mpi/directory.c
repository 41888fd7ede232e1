/* The directory of a non-contiguous layout, and owner look-ups.
 *
 * The global index range is split into p even blocks (dist_block_lo); the rank of block b
 * records, for each index of its block, the owner and the owner's local index. Building it
 * sends every owned index to its block's rank once (which also proves the owned lists a
 * partition: an index claimed twice or never is named); a look-up sends each query to the
 * block's rank and gets (owner, local index) back: hypre's "assumed partition". */
#include <string.h>

#include "mpi/dist.h"

/* Counting sort of n global indices by directory block: order[k] is the position of query k
 * in the sorted (send) array, counts in X->scount. */
static void sort_by_block(const sla_dist_layout *L, int64_t n, const int64_t *g, dist_xchg *X,
                          int64_t *order, int64_t *sorted)
{
    int64_t *pos = X->rdispl;                  /* scratch until the counts are exchanged */
    for (int64_t k = 0; k < n; k++) X->scount[dist_block_of(L->N, L->size, g[k])]++;
    pos[0] = 0;
    for (int r = 0; r < L->size; r++) pos[r + 1] = pos[r] + X->scount[r];
    for (int64_t k = 0; k < n; k++) {
        int64_t at = pos[dist_block_of(L->N, L->size, g[k])]++;
        order[k] = at;
        sorted[at] = g[k];
    }
}

/* Records received claims (global index, local index) from every rank in the directory. */
static sla_status record_claims(sla_dist_layout *L, const char *func, const dist_xchg *X,
                                const int64_t *recv, int64_t lo, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) L->dir_owner[i] = -1;
    for (int r = 0; r < L->size; r++)
        for (int64_t e = X->rdispl[r]; e < X->rdispl[r + 1]; e++) {
            int64_t at = recv[2 * e] - lo;
            if (L->dir_owner[at] >= 0)
                return sla_error_set(SLA_EINDEX, func, "global index %lld is owned by ranks %d "
                                     "and %d", (long long)recv[2 * e], L->dir_owner[at], r);
            L->dir_owner[at] = r;
            L->dir_local[at] = recv[2 * e + 1];
        }
    for (int64_t i = 0; i < nb; i++)
        if (L->dir_owner[i] < 0)
            return sla_error_set(SLA_EINDEX, func, "global index %lld is owned by no rank",
                                 (long long)(lo + i));
    return SLA_OK;
}

sla_status dist_directory_build(sla_dist_layout *L, const char *func)
{
    int64_t lo = dist_block_lo(L->N, L->size, L->rank);
    int64_t nb = dist_block_lo(L->N, L->size, L->rank + 1) - lo;
    dist_xchg X;
    sla_status st = dist_xchg_init(&X, L->size, func);
    int64_t *order = NULL, *sorted = NULL, *send = NULL, *recv = NULL;
    if (st == SLA_OK) {
        L->dir_owner = sla_malloc((size_t)nb, sizeof *L->dir_owner, "directory owners");
        L->dir_local = sla_malloc((size_t)nb, sizeof *L->dir_local, "directory indices");
        order = sla_malloc((size_t)L->n, sizeof *order, "directory order");
        sorted = sla_malloc((size_t)L->n, sizeof *sorted, "directory claims");
        send = sla_malloc((size_t)L->n * 2, sizeof *send, "directory claims");
        if (!L->dir_owner || !L->dir_local || !order || !sorted || !send)
            st = sla_error_attribute(SLA_ENOMEM, func);
    }
    st = dist_agree(L->comm, func, st);
    if (st == SLA_OK) {
        sort_by_block(L, L->n, L->global, &X, order, sorted);
        for (int64_t k = 0; k < L->n; k++) {
            send[2 * order[k]] = L->global[k];
            send[2 * order[k] + 1] = k;
        }
        st = dist_xchg_counts(&X, L->comm, func);
    }
    if (st == SLA_OK) {
        recv = sla_malloc((size_t)X.rdispl[L->size] * 2, sizeof *recv, "directory claims");
        st = dist_agree(L->comm, func, recv ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(&X, L->comm, func, 2 * sizeof(int64_t), send, recv, 0);
    if (st == SLA_OK) {
        st = dist_agree(L->comm, func, record_claims(L, func, &X, recv, lo, nb));
    }
    dist_xchg_free(&X);
    sla_free(order);
    sla_free(sorted);
    sla_free(send);
    sla_free(recv);
    return st;
}

/* Owners from a contiguous layout's offsets (binary search; empty ranks are skipped). */
static void lookup_contiguous(const sla_dist_layout *L, int64_t nq, const int64_t *g,
                              int *owner, int64_t *local)
{
    for (int64_t k = 0; k < nq; k++) {
        int a = 0, b = L->size;   /* the last r with offsets[r] <= g: never an empty rank */
        while (b - a > 1) {
            int mid = a + (b - a) / 2;
            if (L->offsets[mid] <= g[k]) a = mid; else b = mid;
        }
        owner[k] = a;
        if (local) local[k] = g[k] - L->offsets[a];
    }
}

sla_status dist_layout_lookup(const sla_dist_layout *L, const char *func, int64_t nq,
                              const int64_t *g, int *owner, int64_t *local)
{
    if (L->contiguous) {
        lookup_contiguous(L, nq, g, owner, local);
        return SLA_OK;
    }
    dist_xchg X;
    sla_status st = dist_xchg_init(&X, L->size, func);
    int64_t *order = NULL, *sorted = NULL, *queries = NULL, *answers = NULL, *back = NULL;
    if (st == SLA_OK) {
        order = sla_malloc((size_t)nq, sizeof *order, "look-up order");
        sorted = sla_malloc((size_t)nq, sizeof *sorted, "look-up queries");
        back = sla_malloc((size_t)nq * 2, sizeof *back, "look-up answers");
        if (!order || !sorted || !back) st = sla_error_attribute(SLA_ENOMEM, func);
    }
    st = dist_agree(L->comm, func, st);
    if (st == SLA_OK) {
        sort_by_block(L, nq, g, &X, order, sorted);
        st = dist_xchg_counts(&X, L->comm, func);
    }
    int64_t nr = st == SLA_OK ? X.rdispl[L->size] : 0;
    if (st == SLA_OK) {
        queries = sla_malloc((size_t)nr, sizeof *queries, "look-up queries");
        answers = sla_malloc((size_t)nr * 2, sizeof *answers, "look-up answers");
        st = dist_agree(L->comm, func, queries && answers ? SLA_OK
                                                         : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(&X, L->comm, func, sizeof(int64_t), sorted, queries, 0);
    if (st == SLA_OK) {
        int64_t lo = dist_block_lo(L->N, L->size, L->rank);
        for (int64_t e = 0; e < nr; e++) {
            answers[2 * e] = L->dir_owner[queries[e] - lo];
            answers[2 * e + 1] = L->dir_local[queries[e] - lo];
        }
        st = dist_xchg_run(&X, L->comm, func, 2 * sizeof(int64_t), answers, back, 1);
    }
    if (st == SLA_OK)
        for (int64_t k = 0; k < nq; k++) {
            owner[k] = (int)back[2 * order[k]];
            if (local) local[k] = back[2 * order[k] + 1];
        }
    dist_xchg_free(&X);
    sla_free(order);
    sla_free(sorted);
    sla_free(queries);
    sla_free(answers);
    sla_free(back);
    return st;
}
