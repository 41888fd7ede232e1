/* Distributed patterns from each rank's own rows in CSR (sla_dist_pattern_from_csr). The rows
 * are owned here, so no entry moves and no COO copy is made:
 *
 * 1. one pass checks the arrays and counts the entries of owned columns (diagonal block) and
 *    of the others (off-diagonal block);
 * 2. the off-diagonal entries' columns alone are looked up (their owners) and give the ghost
 *    columns by the COO path's rules (dist_pattern_make_ghosts), the only sort;
 * 3. both blocks are filled by local row in one allocation each (row pointers, then int32
 *    columns); a block whose rows come out sorted and unique is adopted as it is
 *    (sla_pattern_borrow_csr, freed with the pattern), any other goes through
 *    sla_pattern_from_csr (sorts, merges repeats: duplicates, as in the COO path);
 * 4. rows handed in local order with ascending columns need no entry-to-slot map: the entry
 *    order is the merge of the blocks' rows by global column (values.c walks it); otherwise
 *    recv_slot[k] gives entry k's slot;
 * 5. the halo plan as for the COO path (halo.c). */
#include <string.h>

#include "mpi/dist.h"

typedef struct csr_in {
    int64_t n;                  /* rows handed in */
    const int64_t *grow;        /* [n] global rows; NULL: the owned rows in local order */
    const int64_t *rowptr;      /* [n + 1] */
    const int64_t *c64;         /* exactly one of c64, c32 when rowptr[n] > 0 */
    const int32_t *c32;
} csr_in;

/* One block being built: CSR by local row in one allocation (mem), adopted by its pattern. */
typedef struct block {
    void *mem;
    int64_t *rp;                /* [nrows + 1] */
    int32_t *ci;                /* [nnz] */
    int64_t nnz;
} block;

static int64_t col_at(const csr_in *A, int64_t k) { return A->c64 ? A->c64[k] : A->c32[k]; }

static int64_t local_row(const sla_dist_pattern *P, const csr_in *A, int64_t i)
{
    return A->grow ? sla_dist_layout_local_index(P->rows, A->grow[i]) : i;
}

static int owned_col(const sla_dist_pattern *P, int64_t c)
{
    return sla_dist_layout_local_index(P->cols, c) >= 0;
}

static sla_status check_rowptr(const char *func, const csr_in *A)
{
    if (!A->rowptr) return sla_error_set(SLA_EINVAL, func, "rowptr is NULL");
    if (A->rowptr[0] != 0)
        return sla_error_set(SLA_EINVAL, func, "rowptr[0] = %lld, expected 0",
                             (long long)A->rowptr[0]);
    for (int64_t i = 0; i < A->n; i++)
        if (A->rowptr[i + 1] < A->rowptr[i])
            return sla_error_set(SLA_EINVAL, func, "rowptr decreases at row %lld (rowptr[%lld] = "
                                 "%lld > rowptr[%lld] = %lld)", (long long)i, (long long)i,
                                 (long long)A->rowptr[i], (long long)(i + 1),
                                 (long long)A->rowptr[i + 1]);
    if (A->c64 && A->c32)
        return sla_error_set(SLA_EINVAL, func, "colind and colind32 are both given (give one)");
    if (A->rowptr[A->n] > 0 && !A->c64 && !A->c32)
        return sla_error_set(SLA_EINVAL, func, "colind and colind32 are both NULL with %lld "
                             "entries", (long long)A->rowptr[A->n]);
    return SLA_OK;
}

/* The row list: rows owned here, each once. *in_order: it is the owned list in local order. */
static sla_status check_rows(const char *func, const sla_dist_pattern *P, const csr_in *A,
                             int *in_order)
{
    int64_t n = P->rows->n;
    *in_order = !A->grow || A->n == n;
    if (!A->grow) {
        if (A->n != n)
            return sla_error_set(SLA_EINVAL, func, "nrows_in = %lld but this rank owns %lld rows "
                                 "(row_global NULL: its owned rows in local order)",
                                 (long long)A->n, (long long)n);
        return SLA_OK;
    }
    char *seen = sla_calloc((size_t)n + 1, 1, "listed rows");
    if (!seen) return sla_error_attribute(SLA_ENOMEM, func);
    sla_status st = SLA_OK;
    for (int64_t i = 0; i < A->n && st == SLA_OK; i++) {
        int64_t lr = sla_dist_layout_local_index(P->rows, A->grow[i]);
        if (lr < 0)
            st = sla_error_set(SLA_EINDEX, func, "row_global[%lld] = %lld is not a row this rank "
                               "owns", (long long)i, (long long)A->grow[i]);
        else if (seen[lr]++)
            st = sla_error_set(SLA_EINDEX, func, "row_global[%lld] = %lld is listed twice",
                               (long long)i, (long long)A->grow[i]);
        else if (lr != i)
            *in_order = 0;
    }
    sla_free(seen);
    return st;
}

/* Columns in range; counts of the off-diagonal entries; *sorted: every row ascending. */
static sla_status check_cols(const char *func, const sla_dist_pattern *P, const csr_in *A,
                             int64_t *no, int *sorted)
{
    const char *name = A->c64 ? "colind" : "colind32";
    *no = 0;
    *sorted = 1;
    for (int64_t i = 0; i < A->n; i++)
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int64_t c = col_at(A, k);
            if (c < 0 || c >= P->cols->N)
                return sla_error_set(SLA_EINDEX, func, "%s[%lld] = %lld (row %lld) is out of "
                                     "range [0, %lld)", name, (long long)k, (long long)c,
                                     (long long)(A->grow ? A->grow[i] : P->rows->global[i]),
                                     (long long)P->cols->N);
            if (k > A->rowptr[i] && c <= col_at(A, k - 1)) *sorted = 0;
            *no += !owned_col(P, c);
        }
    return SLA_OK;
}

static sla_status block_alloc(block *b, int64_t nrows, int64_t nnz, const char *func)
{
    size_t bytes = ((size_t)nrows + 1) * sizeof(int64_t) + (size_t)nnz * sizeof(int32_t);
    b->mem = sla_calloc(1, bytes, "block");
    if (!b->mem) return sla_error_attribute(SLA_ENOMEM, func);
    b->rp = b->mem;
    b->ci = (int32_t *)(b->rp + nrows + 1);
    b->nnz = nnz;
    return SLA_OK;
}

/* rp[i] = start of row i from counts in rp[i + 1] */
static void counts_to_starts(int64_t *rp, int64_t n)
{
    for (int64_t i = 0; i < n; i++) rp[i + 1] += rp[i];
}

/* after filling with rp[i]++ as the cursor of row i: back to row starts */
static void cursors_to_starts(int64_t *rp, int64_t n)
{
    for (int64_t i = n; i > 0; i--) rp[i] = rp[i - 1];
    rp[0] = 0;
}

static int rows_sorted_unique(const block *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = b->rp[i] + 1; s < b->rp[i + 1]; s++)
            if (b->ci[s] <= b->ci[s - 1]) return 0;
    return 1;
}

/* Row counts of both blocks and the off-diagonal columns in entry order. */
static void count_rows(const sla_dist_pattern *P, const csr_in *A, block *d, block *o,
                       int64_t *gcol)
{
    for (int64_t i = 0, j = 0; i < A->n; i++) {
        int64_t lr = local_row(P, A, i);
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int64_t c = col_at(A, k);
            if (owned_col(P, c)) {
                d->rp[lr + 1]++;
            } else {
                o->rp[lr + 1]++;
                gcol[j++] = c;
            }
        }
    }
    counts_to_starts(d->rp, P->rows->n);
    counts_to_starts(o->rp, P->rows->n);
}

/* The blocks' columns: local columns, ghost indices (ghosts made). */
static void fill_rows(const sla_dist_pattern *P, const csr_in *A, block *d, block *o,
                      const int64_t *gcol, const int *gowner)
{
    for (int64_t i = 0, j = 0; i < A->n; i++) {
        int64_t lr = local_row(P, A, i);
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            int64_t c = col_at(A, k), lc = sla_dist_layout_local_index(P->cols, c);
            if (lc >= 0) {
                d->ci[d->rp[lr]++] = (int32_t)lc;
            } else {
                o->ci[o->rp[lr]++] = (int32_t)dist_pattern_ghost_index(P, gowner[j], gcol[j]);
                j++;
            }
        }
    }
    cursors_to_starts(d->rp, P->rows->n);
    cursors_to_starts(o->rp, P->rows->n);
}

/* A block's pattern: adopted when sorted, else sorted and merged by sla_pattern_from_csr. */
static sla_status block_pattern(block *b, int64_t nrows, int64_t ncols, const char *func,
                                sla_pattern **out)
{
    sla_status st;
    if (rows_sorted_unique(b, nrows)) {
        st = sla_pattern_borrow_csr(nrows, ncols, b->rp, NULL, b->ci, sla_free, b->mem, out);
        if (st == SLA_OK) b->mem = NULL;                 /* the pattern frees it */
        return sla_error_attribute(st, func);
    }
    int64_t *c = sla_malloc((size_t)b->nnz, sizeof *c, "block columns");
    if (!c) return sla_error_attribute(SLA_ENOMEM, func);
    for (int64_t s = 0; s < b->nnz; s++) c[s] = b->ci[s];
    st = sla_pattern_from_csr(nrows, ncols, b->rp, c, out);
    sla_free(c);
    return sla_error_attribute(st, func);
}

/* recv_slot[k]: entry k's local slot, through the blocks' own maps (block input order = fill
 * order, by local row and then entry order). */
static sla_status slot_map(sla_dist_pattern *P, const char *func, const csr_in *A,
                           const block *d, const block *o)
{
    P->recv_slot = sla_malloc((size_t)P->nnz_in, sizeof *P->recv_slot, "entry slots");
    if (!P->recv_slot) return sla_error_attribute(SLA_ENOMEM, func);
    const int64_t *md = sla_pattern_map_is_identity(P->diag) ? NULL : sla_pattern_map(P->diag);
    const int64_t *mo = sla_pattern_map_is_identity(P->offd) ? NULL : sla_pattern_map(P->offd);
    if ((!md && !sla_pattern_map_is_identity(P->diag)) ||
        (!mo && !sla_pattern_map_is_identity(P->offd)))
        return sla_error_attribute(SLA_ENOMEM, func);
    for (int64_t i = 0; i < A->n; i++) {
        int64_t lr = local_row(P, A, i), qd = d->rp[lr], qo = o->rp[lr];
        for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (owned_col(P, col_at(A, k))) {
                P->recv_slot[k] = md ? md[qd] : qd;
                qd++;
            } else {
                P->recv_slot[k] = P->nnz_diag + (mo ? mo[qo] : qo);
                qo++;
            }
        }
    }
    return SLA_OK;
}

/* Steps 2–4 once the off-diagonal columns' owners are known (local; may fail). */
static sla_status build_blocks(sla_dist_pattern *P, const char *func, const csr_in *A,
                               int merge_order, block *d, block *o, const int64_t *gcol,
                               const int *gowner, dist_ghost_key *keys)
{
    for (int64_t j = 0; j < o->nnz; j++) keys[j] = (dist_ghost_key){gowner[j], gcol[j]};
    SLA_TRY(dist_pattern_make_ghosts(P, func, o->nnz, keys));
    fill_rows(P, A, d, o, gcol, gowner);
    /* the entry order is the blocks' merge when each row's ghosts come in ascending order */
    merge_order = merge_order && rows_sorted_unique(o, P->rows->n);
    SLA_TRY(block_pattern(d, P->rows->n, P->cols->n, func, &P->diag));
    SLA_TRY(block_pattern(o, P->rows->n, P->nghost, func, &P->offd));
    P->nnz_diag = sla_pattern_nnz(P->diag);
    P->nnz_offd = sla_pattern_nnz(P->offd);
    return merge_order ? SLA_OK : slot_map(P, func, A, d, o);
}

/* Step 1 (local): checks and the allocations of steps 2–3. */
static sla_status prepare(sla_dist_pattern *P, const char *func, const csr_in *A, block *d,
                          block *o, int64_t **gcol, int **gowner, dist_ghost_key **keys,
                          int *merge_order)
{
    int in_order, sorted;
    int64_t no;
    SLA_TRY(check_rows(func, P, A, &in_order));
    SLA_TRY(check_rowptr(func, A));
    SLA_TRY(check_cols(func, P, A, &no, &sorted));
    *merge_order = in_order && sorted;
    P->nnz_in = P->nrecv = A->rowptr[A->n];
    SLA_TRY(block_alloc(d, P->rows->n, P->nnz_in - no, func));
    SLA_TRY(block_alloc(o, P->rows->n, no, func));
    *gcol = sla_malloc((size_t)no, sizeof **gcol, "off-diagonal columns");
    *gowner = sla_malloc((size_t)no, sizeof **gowner, "their owners");
    *keys = sla_malloc((size_t)no, sizeof **keys, "ghost columns");
    return *gcol && *gowner && *keys ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
}

sla_status sla_dist_pattern_from_csr(const sla_dist_layout *rows, const sla_dist_layout *cols,
                                     int64_t nrows_in, const int64_t *row_global,
                                     const int64_t *rowptr, const int64_t *colind,
                                     const int32_t *colind32, sla_dist_pattern **out)
{
    if (out) *out = NULL;
    if (!rows || !cols) return SLA_FAIL(SLA_EINVAL, "%s is NULL", rows ? "cols" : "rows");
    csr_in A = {nrows_in, row_global, rowptr, colind, colind32};
    block d = {0}, o = {0};
    int64_t *gcol = NULL;
    int *gowner = NULL, merge_order = 0;
    dist_ghost_key *keys = NULL;
    sla_status st = dist_pattern_check_layouts(__func__, rows, cols, out);
    if (st == SLA_OK && nrows_in < 0)
        st = SLA_FAIL(SLA_EINVAL, "nrows_in = %lld < 0", (long long)nrows_in);
    sla_dist_pattern *P = dist_pattern_new(rows, cols);
    if (!P && st == SLA_OK) st = sla_error_attribute(SLA_ENOMEM, __func__);
    if (st == SLA_OK) {
        P->csr_input = 1;
        st = prepare(P, __func__, &A, &d, &o, &gcol, &gowner, &keys, &merge_order);
    }
    st = dist_agree(rows->comm, __func__, st);
    if (st == SLA_OK) {
        count_rows(P, &A, &d, &o, gcol);
        st = dist_layout_lookup(P->cols, __func__, o.nnz, gcol, gowner, NULL);
    }
    if (st == SLA_OK)
        st = dist_agree(rows->comm, __func__, build_blocks(P, __func__, &A, merge_order, &d,
                                                           &o, gcol, gowner, keys));
    sla_free(d.mem);
    sla_free(o.mem);
    sla_free(gcol);
    sla_free(gowner);
    sla_free(keys);
    return dist_pattern_finish(P, __func__, st, out);
}
