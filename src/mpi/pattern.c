/* Distributed patterns from each rank's COO entries.
 *
 * 1. the owner of each entry's row is looked up, entries are sorted by owner (stable) and sent
 *    there; the position of entry k in the send buffer (coo_pos) and the counts are kept;
 * 2. the owner splits what it received (in rank order) by column owner: owned columns form the
 *    diagonal block with local column indices, the others the off-diagonal block with ghost
 *    columns numbered by (owner, global index); both blocks are sla_patterns built from the
 *    received order, so the slot of every received entry is known (recv_slot);
 * 3. the halo plan is built from the ghost columns (halo.c). */
#include <stdlib.h>
#include <string.h>

#include "mpi/dist.h"

typedef dist_ghost_key ghost_key;

static int cmp_ghost(const void *a, const void *b)
{
    const ghost_key *x = a, *y = b;
    if (x->owner != y->owner) return (x->owner > y->owner) - (x->owner < y->owner);
    return (x->global > y->global) - (x->global < y->global);
}

void dist_pattern_destroy(sla_dist_pattern *P)
{
    if (!P) return;
    sla_pattern_free(&P->diag);
    sla_pattern_free(&P->offd);
    sla_free(P->offd_rows);
    sla_free(P->ghost_global);
    sla_free(P->ghost_owner);
    dist_halo_free(&P->halo);
    dist_xchg_free(&P->coo);
    sla_free(P->coo_pos);
    sla_free(P->recv_slot);
    sla_dist_layout_free(&P->rows);
    sla_dist_layout_free(&P->cols);
    sla_free(P);
}

sla_status dist_pattern_check_layouts(const char *func, const sla_dist_layout *rows,
                                      const sla_dist_layout *cols, sla_dist_pattern **out)
{
    int cmp;
    MPI_Comm_compare(rows->comm, cols->comm, &cmp);
    if (cmp != MPI_CONGRUENT && cmp != MPI_IDENT)
        return sla_error_set(SLA_EINVAL, func, "the row and column layouts are on different "
                             "communicators");
    if (!out) return sla_error_set(SLA_EINVAL, func, "out is NULL");
    return SLA_OK;
}

sla_dist_pattern *dist_pattern_new(const sla_dist_layout *rows, const sla_dist_layout *cols)
{
    sla_dist_pattern *P = sla_calloc(1, sizeof *P, "distributed pattern");
    if (!P) return NULL;
    atomic_init(&P->refcount, 1);
    P->rows = sla_dist_layout_retain((sla_dist_layout *)rows);
    P->cols = sla_dist_layout_retain((sla_dist_layout *)cols);
    P->comm = rows->comm;
    return P;
}

/* Local checks of the entries handed in. */
static sla_status check_entries(const char *func, const sla_dist_layout *rows,
                                const sla_dist_layout *cols, int64_t nnz_in, const int64_t *row,
                                const int64_t *col, sla_dist_pattern **out)
{
    SLA_TRY(dist_pattern_check_layouts(func, rows, cols, out));
    if (nnz_in < 0) return sla_error_set(SLA_EINVAL, func, "nnz_in = %lld < 0", (long long)nnz_in);
    if (nnz_in > 0 && (!row || !col))
        return sla_error_set(SLA_EINVAL, func, "%s is NULL", row ? "col" : "row");
    for (int64_t k = 0; k < nnz_in; k++) {
        if (row[k] < 0 || row[k] >= rows->N)
            return sla_error_set(SLA_EINDEX, func, "row[%lld] = %lld is out of range [0, %lld)",
                                 (long long)k, (long long)row[k], (long long)rows->N);
        if (col[k] < 0 || col[k] >= cols->N)
            return sla_error_set(SLA_EINDEX, func, "col[%lld] = %lld is out of range [0, %lld)",
                                 (long long)k, (long long)col[k], (long long)cols->N);
    }
    return SLA_OK;
}

/* Step 1: entries to the owners of their rows; *recv gets [nrecv][2] (row, col). */
static sla_status send_entries(sla_dist_pattern *P, const char *func, const int64_t *row,
                               const int64_t *col, int64_t **recv)
{
    int size = P->rows->size;
    int *owner = sla_malloc((size_t)P->nnz_in, sizeof *owner, "entry owners");
    int64_t *send = sla_malloc((size_t)P->nnz_in * 2, sizeof *send, "entries");
    P->coo_pos = sla_malloc((size_t)P->nnz_in, sizeof *P->coo_pos, "entry positions");
    sla_status st = owner && send && P->coo_pos ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(P->comm, func, st);
    if (st == SLA_OK) st = dist_layout_lookup(P->rows, func, P->nnz_in, row, owner, NULL);
    if (st == SLA_OK) {
        int64_t *pos = P->coo.rdispl;          /* scratch until the counts are exchanged */
        for (int64_t k = 0; k < P->nnz_in; k++) P->coo.scount[owner[k]]++;
        pos[0] = 0;
        for (int r = 0; r < size; r++) pos[r + 1] = pos[r] + P->coo.scount[r];
        for (int64_t k = 0; k < P->nnz_in; k++) {
            int64_t at = pos[owner[k]]++;
            P->coo_pos[k] = at;
            send[2 * at] = row[k];
            send[2 * at + 1] = col[k];
        }
        st = dist_xchg_counts(&P->coo, P->comm, func);
    }
    if (st == SLA_OK) {
        P->nrecv = P->coo.rdispl[size];
        *recv = sla_malloc((size_t)P->nrecv * 2, sizeof **recv, "received entries");
        st = dist_agree(P->comm, func, *recv ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK)
        st = dist_xchg_run(&P->coo, P->comm, func, 2 * sizeof(int64_t), send, *recv, 0);
    sla_free(owner);
    sla_free(send);
    return st;
}

/* The ghost columns: unique (owner, global) of the off-diagonal entries, sorted. */
sla_status dist_pattern_make_ghosts(sla_dist_pattern *P, const char *func, int64_t no,
                                    ghost_key *keys)
{
    qsort(keys, (size_t)no, sizeof *keys, cmp_ghost);
    int64_t ng = 0;
    for (int64_t i = 0; i < no; i++)
        if (ng == 0 || cmp_ghost(&keys[ng - 1], &keys[i]) != 0) keys[ng++] = keys[i];
    P->nghost = ng;
    P->ghost_global = sla_malloc((size_t)ng, sizeof *P->ghost_global, "ghost columns");
    P->ghost_owner = sla_malloc((size_t)ng, sizeof *P->ghost_owner, "ghost owners");
    if (!P->ghost_global || !P->ghost_owner) return sla_error_attribute(SLA_ENOMEM, func);
    if (ng > INT32_MAX)
        return sla_error_set(SLA_EUNSUPPORTED, func, "%lld ghost columns on this rank (at most "
                             "2^31 - 1)", (long long)ng);
    for (int64_t i = 0; i < ng; i++) {
        P->ghost_global[i] = keys[i].global;
        P->ghost_owner[i] = (int)keys[i].owner;
    }
    return SLA_OK;
}

/* Ghost index of (owner, global) by binary search. */
int64_t dist_pattern_ghost_index(const sla_dist_pattern *P, int64_t owner, int64_t global)
{
    int64_t a = 0, b = P->nghost;
    ghost_key key = {owner, global};
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        ghost_key m = {P->ghost_owner[mid], P->ghost_global[mid]};
        if (cmp_ghost(&m, &key) < 0) a = mid + 1; else b = mid;
    }
    return a;
}

/* Step 2 once the column owners are known: the two blocks and recv_slot. */
static sla_status split_blocks(sla_dist_pattern *P, const char *func, const int64_t *recv,
                               const int *cowner, const int64_t *clocal)
{
    int me = P->rows->rank;
    int64_t nr = P->rows->n, nd = 0, no = 0;
    for (int64_t e = 0; e < P->nrecv; e++) nd += cowner[e] == me;
    no = P->nrecv - nd;
    int64_t *dr = sla_malloc((size_t)nd, sizeof *dr, "diagonal block rows");
    int64_t *dc = sla_malloc((size_t)nd, sizeof *dc, "diagonal block columns");
    int64_t *orow = sla_malloc((size_t)no, sizeof *orow, "off-diagonal block rows");
    int64_t *ocol = sla_malloc((size_t)no, sizeof *ocol, "off-diagonal block columns");
    ghost_key *keys = sla_malloc((size_t)no, sizeof *keys, "ghost columns");
    P->recv_slot = sla_malloc((size_t)P->nrecv, sizeof *P->recv_slot, "entry slots");
    sla_status st = dr && dc && orow && ocol && keys && P->recv_slot
                    ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    for (int64_t e = 0, i = 0, j = 0; st == SLA_OK && e < P->nrecv; e++) {
        int64_t lr = sla_dist_layout_local_index(P->rows, recv[2 * e]);
        if (cowner[e] == me) {
            dr[i] = lr;
            dc[i++] = clocal[e];
        } else {
            orow[j] = lr;
            keys[j++] = (ghost_key){cowner[e], recv[2 * e + 1]};
        }
    }
    if (st == SLA_OK) st = dist_pattern_make_ghosts(P, func, no, keys);
    for (int64_t e = 0, j = 0; st == SLA_OK && e < P->nrecv; e++)
        if (cowner[e] != me) ocol[j++] = dist_pattern_ghost_index(P, cowner[e], recv[2 * e + 1]);
    if (st == SLA_OK) st = sla_pattern_from_coo(nr, P->cols->n, nd, dr, dc, &P->diag);
    if (st == SLA_OK) st = sla_pattern_from_coo(nr, P->nghost, no, orow, ocol, &P->offd);
    if (st == SLA_OK) {
        const int64_t *md = sla_pattern_map(P->diag), *mo = sla_pattern_map(P->offd);
        P->nnz_diag = sla_pattern_nnz(P->diag);
        P->nnz_offd = sla_pattern_nnz(P->offd);
        for (int64_t e = 0, i = 0, j = 0; e < P->nrecv; e++)
            P->recv_slot[e] = cowner[e] == me ? md[i++] : P->nnz_diag + mo[j++];
    }
    sla_free(dr);
    sla_free(dc);
    sla_free(orow);
    sla_free(ocol);
    sla_free(keys);
    return sla_error_attribute(st, func);
}

/* Step 2: column owners (a collective look-up), then the blocks. */
static sla_status assemble(sla_dist_pattern *P, const char *func, const int64_t *recv)
{
    int *cowner = sla_malloc((size_t)P->nrecv, sizeof *cowner, "column owners");
    int64_t *clocal = sla_malloc((size_t)P->nrecv, sizeof *clocal, "local columns");
    int64_t *gcol = sla_malloc((size_t)P->nrecv, sizeof *gcol, "received columns");
    sla_status st = cowner && clocal && gcol ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(P->comm, func, st);
    if (st == SLA_OK) {
        for (int64_t e = 0; e < P->nrecv; e++) gcol[e] = recv[2 * e + 1];
        st = dist_layout_lookup(P->cols, func, P->nrecv, gcol, cowner, clocal);
    }
    if (st == SLA_OK) st = dist_agree(P->comm, func, split_blocks(P, func, recv, cowner, clocal));
    sla_free(cowner);
    sla_free(clocal);
    sla_free(gcol);
    return st;
}

sla_status dist_pattern_finish(sla_dist_pattern *P, const char *func, sla_status st,
                               sla_dist_pattern **out)
{
    if (st == SLA_OK) st = dist_halo_build(P, func);
    if (st < 0) {
        dist_pattern_destroy(P);
        return st;
    }
    *out = P;
    return SLA_OK;
}

sla_status sla_dist_pattern_from_coo(const sla_dist_layout *rows, const sla_dist_layout *cols,
                                     int64_t nnz_in, const int64_t *row, const int64_t *col,
                                     sla_dist_pattern **out)
{
    if (out) *out = NULL;
    if (!rows || !cols) return SLA_FAIL(SLA_EINVAL, "%s is NULL", rows ? "cols" : "rows");
    sla_status st = check_entries(__func__, rows, cols, nnz_in, row, col, out);
    sla_dist_pattern *P = dist_pattern_new(rows, cols);
    if (P) {
        P->nnz_in = st == SLA_OK ? nnz_in : 0;
        if (st == SLA_OK) st = dist_xchg_init(&P->coo, rows->size, __func__);
    } else if (st == SLA_OK) {
        st = sla_error_attribute(SLA_ENOMEM, __func__);
    }
    st = dist_agree(rows->comm, __func__, st);
    int64_t *recv = NULL;
    if (st == SLA_OK) st = send_entries(P, __func__, row, col, &recv);
    if (st == SLA_OK) st = assemble(P, __func__, recv);
    sla_free(recv);
    return dist_pattern_finish(P, __func__, st, out);
}

sla_dist_pattern *sla_dist_pattern_retain(sla_dist_pattern *P)
{
    if (P) atomic_fetch_add(&P->refcount, 1);
    return P;
}

void sla_dist_pattern_free(sla_dist_pattern **P)
{
    if (!P || !*P) return;
    if (atomic_fetch_sub(&(*P)->refcount, 1) == 1) dist_pattern_destroy(*P);
    *P = NULL;
}

const sla_dist_layout *sla_dist_pattern_rows(const sla_dist_pattern *P) { return P ? P->rows : NULL; }
const sla_dist_layout *sla_dist_pattern_cols(const sla_dist_pattern *P) { return P ? P->cols : NULL; }
const sla_pattern *sla_dist_pattern_diag(const sla_dist_pattern *P) { return P ? P->diag : NULL; }
const sla_pattern *sla_dist_pattern_offd(const sla_dist_pattern *P) { return P ? P->offd : NULL; }
int64_t sla_dist_pattern_nnz(const sla_dist_pattern *P) { return P ? P->nnz_diag + P->nnz_offd : 0; }
int64_t sla_dist_pattern_nnz_input(const sla_dist_pattern *P) { return P ? P->nnz_in : 0; }

const int64_t *sla_dist_pattern_ghosts(const sla_dist_pattern *P, int64_t *nghost)
{
    if (nghost) *nghost = P ? P->nghost : 0;
    return P ? P->ghost_global : NULL;
}

int64_t dist_pattern_global_col(const sla_dist_pattern *P, int offd, int64_t j)
{
    return offd ? P->ghost_global[j] : P->cols->global[j];
}

sla_status sla_dist_pattern_global_coo(const sla_dist_pattern *P, int64_t *row, int64_t *col)
{
    SLA_CHECK_ARG(P, "P is NULL");
    for (int blk = 0; blk < 2; blk++) {
        const sla_pattern *p = blk ? P->offd : P->diag;
        const int64_t *rp = sla_pattern_rowptr(p);
        const int32_t *ci = sla_pattern_colind(p);
        int64_t base = blk ? P->nnz_diag : 0;
        for (int64_t i = 0; i < P->rows->n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                if (row) row[base + s] = P->rows->global[i];
                if (col) col[base + s] = dist_pattern_global_col(P, blk, ci[s]);
            }
    }
    return SLA_OK;
}

sla_dist_matrix sla_dist_matrix_view(const sla_dist_pattern *P, sla_dtype dtype, int64_t batch,
                                     const void *values)
{
    sla_dist_matrix A = {P, dtype, batch, values};
    return A;
}
