/* Sparsity patterns: construction from COO / CSR, transpose, accessors, lazy caches.
 * Construction buckets entries by row (counting sort, O(nnz + nrows)), sorts each row by column
 * and merges duplicates into one slot, recording input entry -> slot in `map`. */
#include <string.h>

#include "core/pattern_impl.h"

typedef struct { int64_t col, id; } entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static void sort_row(entry *e, int64_t len)
{
    if (len < 32) {           /* insertion sort: rows of a PDE matrix are short */
        for (int64_t i = 1; i < len; i++) {
            entry t = e[i];
            int64_t j = i - 1;
            while (j >= 0 && entry_cmp(&e[j], &t) > 0) { e[j + 1] = e[j]; j--; }
            e[j + 1] = t;
        }
    } else {
        qsort(e, (size_t)len, sizeof *e, entry_cmp);
    }
}

/* a pattern with row pointers allocated, and the input-to-slot map unless identity */
static sla_pattern *pattern_alloc_map(int64_t nrows, int64_t ncols, int64_t nnz_in, int identity)
{
    sla_pattern *p = sla_calloc(1, sizeof *p, "pattern");
    if (!p) return NULL;
    atomic_init(&p->refcount, 1);
    p->nrows = nrows;
    p->ncols = ncols;
    p->nnz_in = nnz_in;
    pthread_mutex_init(&p->lock, NULL);
    p->rowptr = sla_malloc((size_t)nrows + 1, sizeof(int64_t), "row pointers");
    p->identity_map = identity;
    if (!identity) p->map = sla_malloc((size_t)nnz_in, sizeof(int64_t), "COO-to-CSR map");
    if (!p->rowptr || (!identity && !p->map)) sla_pattern_free(&p);
    return p;
}

static sla_pattern *pattern_alloc(int64_t nrows, int64_t ncols, int64_t nnz_in)
{
    return pattern_alloc_map(nrows, ncols, nnz_in, 0);
}

/* 1 if every row's columns strictly increase: the CSR input is its own pattern (no sort, no
 * merge, identity map) */
static int rows_sorted_unique(int64_t nrows, const int64_t *rowptr, const int64_t *colind)
{
    for (int64_t i = 0; i < nrows; i++)
        for (int64_t k = rowptr[i] + 1; k < rowptr[i + 1]; k++)
            if (colind[k] <= colind[k - 1]) return 0;
    return 1;
}

/* Sorted unique CSR copied straight into the pattern: 28 bytes per entry-and-row less than the
 * general path's entry array and map (the peak of building a large grid matrix). */
static sla_status from_sorted_csr(int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                  const int64_t *colind, sla_pattern **out)
{
    int64_t nnz = rowptr[nrows];
    sla_pattern *p = pattern_alloc_map(nrows, ncols, nnz, 1);
    if (p) p->colind = sla_malloc((size_t)nnz, sizeof(int32_t), "column indices");
    if (!p || !p->colind) { sla_pattern_free(&p); return SLA_ENOMEM; }
    memcpy(p->rowptr, rowptr, ((size_t)nrows + 1) * sizeof(int64_t));
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (sla_par(12.0 * (double)nnz))
    for (int64_t k = 0; k < nnz; k++) p->colind[k] = (int32_t)colind[k];
    p->nnz = nnz;
    *out = p;
    return SLA_OK;
}

sla_status sla_pattern_adopt_csr(int64_t nrows, int64_t ncols, int64_t *rowptr, int32_t *colind,
                                 sla_pattern **out)
{
    *out = NULL;
    sla_pattern *p = sla_calloc(1, sizeof *p, "pattern");
    if (!p) { sla_free(rowptr); sla_free(colind); return SLA_ENOMEM; }
    atomic_init(&p->refcount, 1);
    pthread_mutex_init(&p->lock, NULL);
    p->nrows = nrows;
    p->ncols = ncols;
    p->rowptr = rowptr;
    p->colind = colind;
    p->nnz = p->nnz_in = rowptr[nrows];
    p->identity_map = 1;
    *out = p;
    return SLA_OK;
}

/* Entries e[rowstart[i] .. rowstart[i+1]) belong to row i. Sorts each row, merges duplicates,
 * fills p->rowptr, p->colind, p->map. */
static sla_status assemble_rows(sla_pattern *p, const int64_t *rowstart, entry *e)
{
    int64_t m = p->nrows;
    #pragma omp parallel for num_threads(sla_threads()) schedule(dynamic, 256)
    for (int64_t i = 0; i < m; i++) sort_row(e + rowstart[i], rowstart[i + 1] - rowstart[i]);

    /* count unique entries per row */
    p->rowptr[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t u = 0;
        for (int64_t q = rowstart[i]; q < rowstart[i + 1]; q++)
            if (q == rowstart[i] || e[q].col != e[q - 1].col) u++;
        p->rowptr[i + 1] = p->rowptr[i] + u;
    }
    p->nnz = p->rowptr[m];
    p->has_duplicates = p->nnz != p->nnz_in;
    p->colind = sla_malloc((size_t)p->nnz, sizeof(int32_t), "column indices");
    if (!p->colind) return SLA_ENOMEM;
    #pragma omp parallel for num_threads(sla_threads()) schedule(dynamic, 256)
    for (int64_t i = 0; i < m; i++) {
        int64_t s = p->rowptr[i] - 1;
        for (int64_t q = rowstart[i]; q < rowstart[i + 1]; q++) {
            if (q == rowstart[i] || e[q].col != e[q - 1].col) p->colind[++s] = (int32_t)e[q].col;
            p->map[e[q].id] = s;
        }
    }
    return SLA_OK;
}

sla_status sla_pattern_check_shape(const char *func, int64_t nrows, int64_t ncols, int64_t nnz_in)
{
    if (nrows < 0 || ncols < 0)
        return sla_error_set(SLA_EINVAL, func, "negative shape %lld × %lld",
                             (long long)nrows, (long long)ncols);
    if (ncols > INT32_MAX)
        return sla_error_set(SLA_EINDEX, func, "ncols = %lld does not fit the int32 column "
                             "indices of a pattern", (long long)ncols);
    if (nnz_in < 0)
        return sla_error_set(SLA_EINVAL, func, "negative number of entries %lld", (long long)nnz_in);
    return SLA_OK;
}

/* frees the work arrays; on failure frees p too and attributes an allocation failure to func */
static sla_status finish(const char *func, sla_pattern *p, sla_status st, entry *e,
                         int64_t *rowstart, sla_pattern **out)
{
    sla_free(e);
    sla_free(rowstart);
    if (st != SLA_OK) {
        sla_pattern_free(&p);
        return sla_error_attribute(st, func);
    }
    *out = p;
    return SLA_OK;
}

sla_status sla_pattern_from_coo(int64_t nrows, int64_t ncols, int64_t nnz_in, const int64_t *row,
                                const int64_t *col, sla_pattern **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(sla_pattern_check_shape(__func__, nrows, ncols, nnz_in));
    SLA_CHECK_ARG(nnz_in == 0 || (row && col), "row or col is NULL with %lld entries",
                  (long long)nnz_in);
    for (int64_t k = 0; k < nnz_in; k++) {
        if (row[k] < 0 || row[k] >= nrows)
            return SLA_FAIL(SLA_EINDEX, "row[%lld] = %lld is out of range [0, %lld)",
                            (long long)k, (long long)row[k], (long long)nrows);
        if (col[k] < 0 || col[k] >= ncols)
            return SLA_FAIL(SLA_EINDEX, "col[%lld] = %lld is out of range [0, %lld)",
                            (long long)k, (long long)col[k], (long long)ncols);
    }
    sla_pattern *p = pattern_alloc(nrows, ncols, nnz_in);
    int64_t *rowstart = sla_calloc((size_t)nrows + 1, sizeof(int64_t), "row buckets");
    entry *e = sla_malloc((size_t)nnz_in, sizeof(entry), "entries");
    if (!p || !rowstart || !e) return finish(__func__, p, SLA_ENOMEM, e, rowstart, out);
    for (int64_t k = 0; k < nnz_in; k++) rowstart[row[k] + 1]++;
    for (int64_t i = 0; i < nrows; i++) rowstart[i + 1] += rowstart[i];
    /* p->rowptr serves as the fill cursor; assemble_rows overwrites it afterwards */
    memcpy(p->rowptr, rowstart, ((size_t)nrows + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nnz_in; k++) e[p->rowptr[row[k]]++] = (entry){col[k], k};
    return finish(__func__, p, assemble_rows(p, rowstart, e), e, rowstart, out);
}

sla_status sla_pattern_from_csr(int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                const int64_t *colind, sla_pattern **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(sla_pattern_check_shape(__func__, nrows, ncols, 0));
    SLA_CHECK_ARG(rowptr, "rowptr is NULL");
    if (rowptr[0] != 0) return SLA_FAIL(SLA_EINVAL, "rowptr[0] = %lld, expected 0", (long long)rowptr[0]);
    for (int64_t i = 0; i < nrows; i++)
        if (rowptr[i + 1] < rowptr[i])
            return SLA_FAIL(SLA_EINVAL, "rowptr decreases at row %lld (%lld > %lld)", (long long)i,
                            (long long)rowptr[i], (long long)rowptr[i + 1]);
    int64_t nnz_in = rowptr[nrows];
    SLA_CHECK_ARG(nnz_in == 0 || colind, "colind is NULL with %lld entries", (long long)nnz_in);
    for (int64_t k = 0; k < nnz_in; k++)
        if (colind[k] < 0 || colind[k] >= ncols)
            return SLA_FAIL(SLA_EINDEX, "colind[%lld] = %lld is out of range [0, %lld)",
                            (long long)k, (long long)colind[k], (long long)ncols);
    if (rows_sorted_unique(nrows, rowptr, colind))
        return sla_error_attribute(from_sorted_csr(nrows, ncols, rowptr, colind, out), __func__);
    sla_pattern *p = pattern_alloc(nrows, ncols, nnz_in);
    entry *e = sla_malloc((size_t)nnz_in, sizeof(entry), "entries");
    if (!p || !e) return finish(__func__, p, SLA_ENOMEM, e, NULL, out);
    for (int64_t k = 0; k < nnz_in; k++) e[k] = (entry){colind[k], k};
    return finish(__func__, p, assemble_rows(p, rowptr, e), e, NULL, out);
}

/* Aᵀ by a counting sort over columns; rows of A are visited in order, so each row of Aᵀ comes
 * out sorted. */
static sla_status build_transpose(const sla_pattern *p, sla_pattern **out, int64_t *perm)
{
    sla_pattern *t = pattern_alloc(p->ncols, p->nrows, p->nnz);
    if (!t) return SLA_ENOMEM;
    t->nnz = p->nnz;
    t->colind = sla_malloc((size_t)p->nnz, sizeof(int32_t), "column indices");
    if (!t->colind) { sla_pattern_free(&t); return SLA_ENOMEM; }
    memset(t->rowptr, 0, ((size_t)t->nrows + 1) * sizeof(int64_t));
    for (int64_t s = 0; s < p->nnz; s++) t->rowptr[p->colind[s] + 1]++;
    for (int64_t j = 0; j < t->nrows; j++) t->rowptr[j + 1] += t->rowptr[j];
    /* t->map doubles as the fill cursor per row of Aᵀ through `next` */
    int64_t *next = sla_malloc((size_t)t->nrows + 1, sizeof(int64_t), "transpose cursor");
    if (!next) { sla_pattern_free(&t); return SLA_ENOMEM; }
    memcpy(next, t->rowptr, ((size_t)t->nrows + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < p->nrows; i++)
        for (int64_t s = p->rowptr[i]; s < p->rowptr[i + 1]; s++) {
            int64_t q = next[p->colind[s]]++;
            t->colind[q] = (int32_t)i;
            t->map[s] = q;
            if (perm) perm[q] = s;
        }
    sla_free(next);
    *out = t;
    return SLA_OK;
}

sla_status sla_pattern_transpose(const sla_pattern *p, sla_pattern **out, int64_t *perm)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(p, "pattern is NULL");
    if (p->nrows > INT32_MAX)
        return SLA_FAIL(SLA_EINDEX, "nrows = %lld does not fit the int32 column indices of Aᵀ",
                        (long long)p->nrows);
    sla_status st = build_transpose(p, out, perm);
    return sla_error_attribute(st, __func__);
}

sla_status sla_pattern_cached_transpose(const sla_pattern *p, const sla_pattern **pt,
                                        const int64_t **perm)
{
    SLA_CHECK_ARG(p && pt, "NULL argument");
    sla_pattern *q = (sla_pattern *)p;
    sla_status st = SLA_OK;
    if (!atomic_load(&q->transpose)) {
        pthread_mutex_lock(&q->lock);
        if (!atomic_load(&q->transpose)) {
            int64_t *tp = sla_malloc((size_t)p->nnz, sizeof(int64_t), "transpose permutation");
            sla_pattern *t = NULL;
            st = tp ? sla_pattern_transpose(p, &t, tp) : sla_error_attribute(SLA_ENOMEM, __func__);
            if (st == SLA_OK) { q->tperm = tp; atomic_store(&q->transpose, t); }
            else sla_free(tp);
        }
        pthread_mutex_unlock(&q->lock);
    }
    if (st != SLA_OK) return st;
    *pt = atomic_load(&q->transpose);
    if (perm) *perm = q->tperm;
    return SLA_OK;
}

const int64_t *sla_pattern_rowind(const sla_pattern *p)
{
    if (!p) return NULL;
    sla_pattern *q = (sla_pattern *)p;
    if (!atomic_load(&q->rowind)) {
        pthread_mutex_lock(&q->lock);
        if (!atomic_load(&q->rowind)) {
            int64_t *r = sla_malloc((size_t)p->nnz, sizeof(int64_t), "row indices");
            if (r) {
                for (int64_t i = 0; i < p->nrows; i++)
                    for (int64_t s = p->rowptr[i]; s < p->rowptr[i + 1]; s++) r[s] = i;
                atomic_store(&q->rowind, r);
            }
        }
        pthread_mutex_unlock(&q->lock);
    }
    return atomic_load(&q->rowind);
}

static _Atomic int rowptr32_enabled = 1;

int sla_test_rowptr32(int enable) { return atomic_exchange(&rowptr32_enabled, enable != 0); }

const int32_t *sla_pattern_rowptr32(const sla_pattern *p)
{
    if (!p || p->nnz > INT32_MAX || !atomic_load(&rowptr32_enabled)) return NULL;
    sla_pattern *q = (sla_pattern *)p;
    if (!atomic_load(&q->rowptr32)) {
        pthread_mutex_lock(&q->lock);
        if (!atomic_load(&q->rowptr32)) {
            /* no error on failure: the kernels fall back to the int64 row pointers */
            int32_t *r = malloc(((size_t)p->nrows + 1) * sizeof *r);
            if (r) {
                for (int64_t i = 0; i <= p->nrows; i++) r[i] = (int32_t)p->rowptr[i];
                atomic_store(&q->rowptr32, r);
            }
        }
        pthread_mutex_unlock(&q->lock);
    }
    return atomic_load(&q->rowptr32);
}

sla_pattern *sla_pattern_retain(sla_pattern *p)
{
    if (p) atomic_fetch_add(&p->refcount, 1);
    return p;
}

void sla_pattern_free(sla_pattern **pp)
{
    if (!pp || !*pp) return;
    sla_pattern *p = *pp;
    *pp = NULL;
    if (atomic_fetch_sub(&p->refcount, 1) != 1) return;
    if (!p->rowptr_borrowed) sla_free(p->rowptr);
    if (!p->colind_borrowed) sla_free(p->colind);
    sla_free(atomic_load(&p->map));
    sla_free(atomic_load(&p->rowind));
    free(atomic_load(&p->rowptr32));
    sla_pattern *t = atomic_load(&p->transpose);
    sla_pattern_free(&t);
    sla_free(p->tperm);
    pthread_mutex_destroy(&p->lock);
    void (*release)(void *) = p->release;
    void *owner = p->owner;
    sla_free(p);
    if (release) release(owner);     /* last: the caller may free the arrays right away */
}

int64_t sla_pattern_nrows(const sla_pattern *p) { return p ? p->nrows : 0; }
int64_t sla_pattern_ncols(const sla_pattern *p) { return p ? p->ncols : 0; }
int64_t sla_pattern_nnz(const sla_pattern *p) { return p ? p->nnz : 0; }
int64_t sla_pattern_nnz_input(const sla_pattern *p) { return p ? p->nnz_in : 0; }
const int64_t *sla_pattern_rowptr(const sla_pattern *p) { return p ? p->rowptr : NULL; }
const int32_t *sla_pattern_colind(const sla_pattern *p) { return p ? p->colind : NULL; }
const int64_t *sla_pattern_map(const sla_pattern *p)
{
    if (!p) return NULL;
    sla_pattern *q = (sla_pattern *)p;
    if (q->identity_map && !atomic_load(&q->map)) {
        pthread_mutex_lock(&q->lock);
        if (!atomic_load(&q->map)) {
            int64_t *m = sla_malloc((size_t)p->nnz_in, sizeof(int64_t), "COO-to-CSR map");
            if (m) {
                for (int64_t k = 0; k < p->nnz_in; k++) m[k] = k;
                atomic_store(&q->map, m);
            }
        }
        pthread_mutex_unlock(&q->lock);
    }
    return atomic_load(&q->map);
}

int sla_pattern_identity_map(const sla_pattern *p) { return p ? p->identity_map : 0; }
int sla_pattern_map_is_identity(const sla_pattern *p) { return sla_pattern_identity_map(p); }
int sla_pattern_has_duplicates(const sla_pattern *p) { return p ? p->has_duplicates : 0; }

int64_t sla_pattern_find(const sla_pattern *p, int64_t i, int64_t j)
{
    if (!p || i < 0 || i >= p->nrows || j < 0 || j >= p->ncols) return -1;
    int64_t lo = p->rowptr[i], hi = p->rowptr[i + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (p->colind[mid] < j) lo = mid + 1; else hi = mid;
    }
    return (lo < p->rowptr[i + 1] && p->colind[lo] == j) ? lo : -1;
}
