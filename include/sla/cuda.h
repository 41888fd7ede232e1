/* sla/cuda.h: libsla_cuda, the CUDA backend of sla (src/cuda, docs/cuda.md). A separate shared
 * library on top of libsla, built when CMake finds the CUDA toolkit (option SLA_CUDA): a vector
 * space of device vectors for the Krylov operator table of <sla/backend.h>, a device CSR
 * operator (cuSPARSE SpMV, or own kernels), Jacobi on the device, the pattern outer product of
 * the VJPs as a device kernel, and the solver backend "cuda" that runs libsla's own CG,
 * BiCGStab, GMRES and MINRES sources on them for device matrix views (sla_matrix.space =
 * SLA_MEM_DEVICE).
 *
 * Memory and streams: every pointer named "device" is CUDA device memory (cudaMalloc'd, or a
 * CUDA tensor's data_ptr()) on the current device; work runs on the legacy default stream, so
 * it is ordered after work queued on that stream (PyTorch's default stream) and every reduction
 * returns to the host synchronously. Reductions use a fixed grid and a fixed tree, so results
 * are bit-identical run to run on one device.
 *
 * No device at run time is not an error of the build: sla_cuda_available() says why, the
 * backend is listed as unavailable with that reason, and every call that needs a device returns
 * SLA_EUNSUPPORTED with it ("no CUDA device: cudaGetDeviceCount: ..."). */
#ifndef SLA_CUDA_H
#define SLA_CUDA_H

#include "sla/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** SLA_OK when a CUDA device is usable (the runtime found a driver and at least one device);
 *  else SLA_EUNSUPPORTED with the message "no CUDA device: cudaGetDeviceCount: <CUDA's
 *  reason>" (sla_last_error()). Probes once; thread-safe. */
SLA_API sla_status sla_cuda_available(void);

/** The reason of sla_cuda_available() as static text ("" when a device is usable). */
SLA_API const char *sla_cuda_unavailable_reason(void);

/** Registers the solver backend "cuda" (CG, BiCGStab, GMRES, MINRES; float64 and float32;
 *  preconditioners none and Jacobi; device views only: sla_backend.memory = SLA_MEM_DEVICE).
 *  Without a device it is registered as unavailable with the reason, so that asking for it
 *  names the cause. Idempotent; thread-safe.
 *  @return SLA_OK; an error of sla_backend_register(). */
SLA_API sla_status sla_cuda_register(void);

/* ---- the device vector space ---- */

/** Blocks of the fixed reduction grid (partial sums per block, then one block sums them). */
#define SLA_CUDA_REDUCE_BLOCKS 1024

/** The context of a device space: the reduction scratch on the device. */
typedef struct sla_cuda_space {
    double *partials;            /**< device [3][SLA_CUDA_REDUCE_BLOCKS] */
    double *result;              /**< device [3] */
} sla_cuda_space;

/** Fills V with device kernels for vectors of n elements of dtype (float64, float32) in device
 *  memory: vec_create = cudaMalloc, dot/norm/fused CG updates with fixed-order reductions
 *  accumulated in double, and the checks of the solver layer. concurrent = 0. c is the context
 *  (V->ctx = c); free it with sla_cuda_space_free().
 *  @return SLA_OK; SLA_EUNSUPPORTED (no device); SLA_ENOMEM; SLA_EDTYPE. */
SLA_API sla_status sla_cuda_space_init(sla_space *V, sla_cuda_space *c, int64_t n,
                                       sla_dtype dtype);
SLA_API void sla_cuda_space_free(sla_cuda_space *c);

/* ---- the device CSR matrix and its operator ---- */

/** The structure of a pattern on the device (int64 row pointers, int32 column indices, and the
 *  CSR of Aᵀ with the map from its slots to A's, so that op = T is a deterministic op = N on
 *  Aᵀ) with a batch of device values borrowed from the caller. Opaque. */
typedef struct sla_cuda_csr sla_cuda_csr;

/** Copies the structure of p to the device (once; values are not copied) for `batch` matrices
 *  of dtype. SpMV: cuSPARSE (CUSPARSE_SPMV_CSR_ALG2, deterministic) unless the environment
 *  variable SLA_CUDA_SPMV=own asks for the library's own warp-per-row kernel; a cuSPARSE that
 *  refuses the int64/int32 index pair falls back to the own kernel (sla_cuda_csr_describe()).
 *  @return SLA_OK; SLA_EUNSUPPORTED (no device); SLA_ENOMEM; SLA_EBACKEND; SLA_EINVAL. */
SLA_API sla_status sla_cuda_csr_create(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                       sla_cuda_csr **out);
/** Borrows device values [batch][nnz] in CSR order (they must stay valid while the matrix is
 *  used) and gathers Aᵀ's values. Checks them on the device: SLA_ENONFINITE naming batch
 *  element, slot, row and column of the first non-finite value. */
SLA_API sla_status sla_cuda_csr_set_values(sla_cuda_csr *c, const void *values);
/** "cusparse" or "own kernel (...reason...)": what SpMV runs. */
SLA_API const char *sla_cuda_csr_describe(const sla_cuda_csr *c);
SLA_API void sla_cuda_csr_free(sla_cuda_csr **c);

/** y = alpha·op(A_b)·x + beta·y for device vectors (beta = 0: y not read). */
SLA_API sla_status sla_cuda_spmv(sla_cuda_csr *c, sla_op op, int64_t b, double alpha,
                                 const void *x, double beta, void *y);

/** dvalues[b][k] = alpha · Σ_j u[b][r_k][j] · v[b][c_k][j] (overwritten) for device blocks u
 *  [batch][nrows][nrhs], v [batch][ncols][nrhs], dvalues [batch][nnz]: the SpMV and solve VJPs'
 *  ∂a, one thread per slot (no atomics: deterministic). */
SLA_API sla_status sla_cuda_pattern_outer(const sla_cuda_csr *c, double alpha, const void *u,
                                          const void *v, int64_t nrhs, void *dvalues);

/** The inverse diagonal of A_b on the device into inv_diag (a vector of n), |a_ii| when
 *  absolute (MINRES). SLA_EBREAKDOWN naming the first row whose diagonal is zero or missing. */
SLA_API sla_status sla_cuda_jacobi(const sla_cuda_csr *c, int64_t b, int absolute,
                                   void *inv_diag);

/** The operator of batch element b: apply (op N and T) on the device space V of n = rows of a
 *  square A, with Jacobi when inv_diag (a device vector of V) is not NULL. Fills the table in
 *  place; the matrix and V must outlive it. */
typedef struct sla_cuda_operator {
    sla_operator op;
    sla_cuda_csr *csr;
    int64_t b;
} sla_cuda_operator;
SLA_API void sla_cuda_operator_init(sla_cuda_operator *o, sla_cuda_csr *c, int64_t b,
                                    const sla_space *V, const void *inv_diag);

/** Device memory for callers built without the CUDA runtime (the sla tool loads libsla_cuda
 *  with dlopen): *ptr = cudaMalloc(bytes) (bytes = 0: a valid 1-byte allocation).
 *  @return SLA_OK; SLA_EUNSUPPORTED (no device); SLA_ENOMEM naming the size. */
SLA_API sla_status sla_cuda_alloc(size_t bytes, void **ptr);
SLA_API void sla_cuda_free(void *ptr);
/** Copies bytes host → device (to_device = 1) or device → host (0), synchronously. */
SLA_API sla_status sla_cuda_copy(void *dst, const void *src, size_t bytes, int to_device);

/** Whether ptr is device memory that the current device can read (cudaPointerGetAttributes:
 *  device or managed memory): 1, else 0 (host memory, or no device). */
SLA_API int sla_cuda_is_device_pointer(const void *ptr);

#ifdef __cplusplus
}
#endif
#endif
