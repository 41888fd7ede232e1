/* Private layout of sla_pattern (src/core only; other layers use the accessors). */
#ifndef SLA_PATTERN_IMPL_H
#define SLA_PATTERN_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/internal.h"

struct sla_pattern {
    atomic_int refcount;
    int64_t nrows, ncols;
    int64_t nnz;            /* CSR slots */
    int64_t nnz_in;         /* input entries */
    int64_t *rowptr;        /* [nrows + 1] */
    int32_t *colind;        /* [nnz], sorted unique per row */
    /* sla_pattern_borrow_csr: arrays the caller owns (never written, never freed here) and the
     * caller's release(owner), called once when the last reference goes */
    int rowptr_borrowed, colind_borrowed;
    void (*release)(void *owner);
    void *owner;
    int64_t *_Atomic map;   /* [nnz_in] input entry -> slot; NULL until first asked for when
                             * identity_map (built lazily under `lock` by sla_pattern_map) */
    int identity_map;       /* input order = CSR order (from sorted CSR, gallery): map[k] = k */
    int has_duplicates;
    /* caches built on first use under `lock` (the pattern stays logically immutable) */
    pthread_mutex_t lock;
    int64_t *_Atomic rowind;                /* [nnz] row of each slot */
    int32_t *_Atomic rowptr32;              /* [nrows + 1] when nnz ≤ INT32_MAX (SpMV) */
    struct sla_pattern *_Atomic transpose;  /* pattern of Aᵀ */
    int64_t *tperm;                         /* values_T[j] = values[tperm[j]] */
};

/* SLA_EINVAL for a negative shape or entry count, SLA_EINDEX for ncols > INT32_MAX, named
 * after func */
sla_status sla_pattern_check_shape(const char *func, int64_t nrows, int64_t ncols, int64_t nnz_in);

#endif
