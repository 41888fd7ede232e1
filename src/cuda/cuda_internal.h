/* The private half of libsla_cuda (CUDA C++, compiled by nvcc): error conversion, the launch
 * geometry and the dtype dispatch shared by the kernels of space.cu, csr.cu, jacobi.cu,
 * outer.cu and the backend (backend.cu). */
#ifndef SLA_CUDA_INTERNAL_H
#define SLA_CUDA_INTERNAL_H

#include <cuda_runtime.h>

#include "sla/cuda.h"

/* threads per block of every kernel; the reduction grid is SLA_CUDA_REDUCE_BLOCKS of them */
#define SLA_CUDA_THREADS 256

/* An error of CUDA call `what` as SLA_EBACKEND (SLA_ENOMEM for allocation failures) with
 * CUDA's name and text; cudaSuccess → SLA_OK. The sticky error state is cleared where CUDA
 * allows (cudaGetLastError), so that one failed launch does not poison the next call. */
sla_status sla_cuda_status(cudaError_t e, const char *func, const char *what);

#define SLA_CU(call, what)                                                   \
    do {                                                                     \
        cudaError_t sla_cu_e_ = (call);                                      \
        if (sla_cu_e_ != cudaSuccess) return sla_cuda_status(sla_cu_e_, __func__, (what)); \
    } while (0)

/* after a kernel launch: launch errors (bad configuration, no device) */
#define SLA_CU_LAUNCH(what) SLA_CU(cudaGetLastError(), (what))

/* SLA_EINVAL with a message naming the argument unless cond */
#define SLA_CHECK_ARG(cond, ...) \
    do { if (!(cond)) return SLA_FAIL(SLA_EINVAL, __VA_ARGS__); } while (0)

/* SLA_EUNSUPPORTED with the no-device reason unless a device is usable (cached probe) */
#define SLA_CU_NEED_DEVICE() SLA_TRY(sla_cuda_available())

/* blocks for n elements at SLA_CUDA_THREADS each, capped (grid-stride loops cover the rest) */
static inline unsigned sla_cuda_blocks(int64_t n)
{
    int64_t b = (n + SLA_CUDA_THREADS - 1) / SLA_CUDA_THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

/* The device CSR matrix (sla/cuda.h). Aᵀ (rowptr_t, colind_t, perm_t, values_t) is built on
 * the first op = T, so that a forward-only solve does not pay its memory. */
struct sla_cuda_csr {
    sla_pattern *pattern;            /* retained */
    int64_t nrows, ncols, nnz, batch;
    sla_dtype dtype;
    int64_t *rowptr;                 /* device [nrows + 1] */
    int32_t *colind;                 /* device [nnz] */
    const void *values;              /* device [batch][nnz], borrowed */
    int64_t *rowptr_t;               /* device [ncols + 1]: the CSR of Aᵀ, or NULL */
    int32_t *colind_t;               /* device [nnz] */
    int64_t *perm_t;                 /* device [nnz]: values_t[j] = values[perm_t[j]] */
    void *values_t;                  /* device [batch][nnz], owned */
    int lanes;                       /* own kernel: threads per row (1..32), from nnz / rows */
    int use_cusparse;
    void *sp;                        /* the cuSPARSE state (csr.cu), or NULL */
    sla_cuda_space scratch;          /* for the matrix's own reductions */
    char describe[160];
};

/* the device space's dot (space.cu), for the matrix's products on its scratch */
sla_status sla_cuda_dot(const sla_space *V, const void *x, const void *y, double *xy);

/* Aᵀ on the device (built once, values gathered per set_values) */
sla_status sla_cuda_csr_transpose(sla_cuda_csr *c);

/* the backend table (backend.cu) */
extern const sla_backend sla_cuda_backend_table;

#endif
