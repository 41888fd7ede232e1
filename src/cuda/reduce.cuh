/* Fixed-order reductions on the device: a grid of SLA_CUDA_REDUCE_BLOCKS blocks, each thread
 * visiting i = global thread id + k · (grid size), a shared-memory tree per block, then one
 * block summing the block partials by the same tree. The order depends on n only, never on
 * timing (no atomics), so results are bit-identical run to run. Up to three sums at once (CG's
 * fused update needs two). F is a functor f(i, acc[K]) that may also write entry i. */
#ifndef SLA_CUDA_REDUCE_CUH
#define SLA_CUDA_REDUCE_CUH

#include <math.h>

#include "cuda/cuda_internal.h"

enum { SLA_RSUM = 0, SLA_RMAX = 1, SLA_RMIN = 2 };

template <int OP> __device__ __forceinline__ double sla_rinit()
{
    return OP == SLA_RSUM ? 0.0 : OP == SLA_RMAX ? 0.0 : INFINITY;
}

template <int OP> __device__ __forceinline__ double sla_rjoin(double a, double b)
{
    return OP == SLA_RSUM ? a + b : OP == SLA_RMAX ? fmax(a, b) : fmin(a, b);
}

template <int K, int OP, typename F>
__global__ void sla_reduce_partial(int64_t n, F f, double *partials)
{
    __shared__ double sh[K][SLA_CUDA_THREADS];
    double acc[K];
    for (int k = 0; k < K; k++) acc[k] = sla_rinit<OP>();
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) f(i, acc);
    for (int k = 0; k < K; k++) sh[k][threadIdx.x] = acc[k];
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            for (int k = 0; k < K; k++)
                sh[k][threadIdx.x] = sla_rjoin<OP>(sh[k][threadIdx.x], sh[k][threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int k = 0; k < K; k++) partials[k * SLA_CUDA_REDUCE_BLOCKS + blockIdx.x] = sh[k][0];
}

/* one block of SLA_CUDA_REDUCE_BLOCKS threads */
template <int K, int OP>
__global__ void sla_reduce_final(const double *partials, double *result)
{
    __shared__ double sh[K][SLA_CUDA_REDUCE_BLOCKS];
    for (int k = 0; k < K; k++) sh[k][threadIdx.x] = partials[k * SLA_CUDA_REDUCE_BLOCKS + threadIdx.x];
    __syncthreads();
    for (int s = SLA_CUDA_REDUCE_BLOCKS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            for (int k = 0; k < K; k++)
                sh[k][threadIdx.x] = sla_rjoin<OP>(sh[k][threadIdx.x], sh[k][threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int k = 0; k < K; k++) result[k] = sh[k][0];
}

/* out[K] on the host = the reduction of f over [0, n), with scratch c */
template <int K, int OP, typename F>
static sla_status sla_reduce(const sla_cuda_space *c, int64_t n, F f, double *out)
{
    sla_reduce_partial<K, OP><<<SLA_CUDA_REDUCE_BLOCKS, SLA_CUDA_THREADS>>>(n, f, c->partials);
    SLA_CU_LAUNCH("reduction kernel");
    sla_reduce_final<K, OP><<<1, SLA_CUDA_REDUCE_BLOCKS>>>(c->partials, c->result);
    SLA_CU_LAUNCH("reduction kernel (final)");
    SLA_CU(cudaMemcpy(out, c->result, K * sizeof(double), cudaMemcpyDeviceToHost),
           "reduction result to host");
    return SLA_OK;
}

/* a grid-stride elementwise loop */
template <typename F>
__global__ void sla_each(int64_t n, F f)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

template <typename F>
static sla_status sla_for_each(int64_t n, F f, const char *what)
{
    if (n <= 0) return SLA_OK;
    sla_each<<<sla_cuda_blocks(n), SLA_CUDA_THREADS>>>(n, f);
    SLA_CU_LAUNCH(what);
    return SLA_OK;
}

#endif
