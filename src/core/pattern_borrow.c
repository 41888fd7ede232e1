/* A pattern on the caller's CSR arrays (sla_pattern_borrow_csr): int32 column indices and int64
 * row pointers are used where they lie, so a matrix held by its caller (a torch CSR tensor, a
 * generator's arrays) costs the pattern nothing but its header; int32 row pointers are widened
 * into the pattern's own int64 array (8 bytes per row) and not kept: the caller may free them
 * after the call (sla.h's ownership rule), so the SpMV kernels' int32 copy
 * (sla_pattern_rowptr32) is the pattern's own. The
 * arrays are validated once, in one pass, and never written: sorted unique rows are required,
 * since sorting or merging would mean writing (sla_pattern_from_csr does both, on a copy). */
#include "core/pattern_impl.h"

/* row pointer i of whichever array was given */
static int64_t rp(const int64_t *r64, const int32_t *r32, int64_t i)
{
    return r64 ? r64[i] : (int64_t)r32[i];
}

static sla_status check_rowptr(const char *func, int64_t nrows, const int64_t *r64,
                               const int32_t *r32)
{
    if (rp(r64, r32, 0) != 0)
        return SLA_FAIL_AS(func, SLA_EINVAL, "rowptr[0] = %lld, expected 0",
                           (long long)rp(r64, r32, 0));
    for (int64_t i = 0; i < nrows; i++)
        if (rp(r64, r32, i + 1) < rp(r64, r32, i))
            return SLA_FAIL_AS(func, SLA_EINVAL, "rowptr decreases at row %lld (rowptr[%lld] = "
                               "%lld > rowptr[%lld] = %lld)", (long long)i, (long long)i,
                               (long long)rp(r64, r32, i), (long long)(i + 1),
                               (long long)rp(r64, r32, i + 1));
    return SLA_OK;
}

/* columns in [0, ncols) and strictly increasing within each row */
static sla_status check_colind(const char *func, int64_t nrows, int64_t ncols, const int64_t *r64,
                               const int32_t *r32, const int32_t *colind)
{
    for (int64_t i = 0; i < nrows; i++) {
        int64_t e = rp(r64, r32, i + 1);
        for (int64_t k = rp(r64, r32, i); k < e; k++) {
            if (colind[k] < 0 || colind[k] >= ncols)
                return SLA_FAIL_AS(func, SLA_EINDEX, "colind[%lld] = %d is out of range [0, %lld)",
                                   (long long)k, (int)colind[k], (long long)ncols);
            if (k > rp(r64, r32, i) && colind[k] <= colind[k - 1])
                return SLA_FAIL_AS(func, SLA_EINVAL, "colind[%lld] = %d follows %d in row %lld: "
                                   "borrowed columns must increase within each row "
                                   "(sla_pattern_from_csr sorts and merges a copy)",
                                   (long long)k, (int)colind[k], (int)colind[k - 1], (long long)i);
        }
    }
    return SLA_OK;
}

sla_status sla_pattern_borrow_csr(int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                  const int32_t *rowptr32, const int32_t *colind,
                                  void (*release)(void *owner), void *owner, sla_pattern **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(sla_pattern_check_shape(__func__, nrows, ncols, 0));
    SLA_CHECK_ARG(rowptr || rowptr32, "rowptr and rowptr32 are both NULL (give one)");
    SLA_CHECK_ARG(!rowptr || !rowptr32, "rowptr and rowptr32 are both given (give one)");
    SLA_TRY(check_rowptr(__func__, nrows, rowptr, rowptr32));
    int64_t nnz = rp(rowptr, rowptr32, nrows);
    SLA_CHECK_ARG(nnz == 0 || colind, "colind is NULL with %lld entries", (long long)nnz);
    SLA_TRY(check_colind(__func__, nrows, ncols, rowptr, rowptr32, colind));

    sla_pattern *p = sla_calloc(1, sizeof *p, "pattern");
    if (!p) return sla_error_attribute(SLA_ENOMEM, __func__);
    atomic_init(&p->refcount, 1);
    pthread_mutex_init(&p->lock, NULL);
    p->nrows = nrows;
    p->ncols = ncols;
    p->nnz = p->nnz_in = nnz;
    p->identity_map = 1;
    p->colind = (int32_t *)colind;           /* never written: patterns are immutable */
    p->colind_borrowed = 1;
    if (rowptr) {
        p->rowptr = (int64_t *)rowptr;
        p->rowptr_borrowed = 1;
    } else if ((p->rowptr = sla_malloc((size_t)nrows + 1, sizeof(int64_t), "row pointers"))) {
        for (int64_t i = 0; i <= nrows; i++) p->rowptr[i] = rowptr32[i];
    } else {
        sla_pattern_free(&p);                /* release is not set yet: the caller keeps all */
        return sla_error_attribute(SLA_ENOMEM, __func__);
    }
    p->release = release;
    p->owner = owner;
    *out = p;
    return SLA_OK;
}
