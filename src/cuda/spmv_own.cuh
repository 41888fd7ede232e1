/* The library's own CSR SpMV: L threads per row (L = 1..32, a power of two near the mean row
 * length), each summing the row's slots lane, lane + L, ... in the vectors' dtype, then a
 * butterfly of shuffles over the L lanes: the order depends on the row only, so y is the same
 * for any grid. With DOT, *partials gets Σ_i w_i·y_i per block over the fixed reduction grid
 * (CG's pᵀAp fused into the product), summed by sla_reduce_final. */
#ifndef SLA_CUDA_SPMV_OWN_CUH
#define SLA_CUDA_SPMV_OWN_CUH

#include "cuda/reduce.cuh"

template <typename T, int L, bool DOT>
__global__ void sla_spmv_own(int64_t nrows, const int64_t *__restrict__ rp,
                             const int32_t *__restrict__ ci, const T *__restrict__ v,
                             const T *__restrict__ x, T *y, T alpha, T beta, int beta_zero,
                             const T *w, double *partials)
{
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t ngroups = (int64_t)gridDim.x * blockDim.x / L;
    const int64_t g = tid / L, lane = tid % L;
    const int64_t warp_g0 = (tid & ~(int64_t)31) / L;   /* first group of this thread's warp */
    double acc = 0;
    for (int64_t it = 0; warp_g0 + it * ngroups < nrows; it++) {
        int64_t row = g + it * ngroups;
        T s = 0;
        if (row < nrows)
            for (int64_t k = rp[row] + lane; k < rp[row + 1]; k += L) s += v[k] * x[ci[k]];
        for (int o = L / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (row < nrows && lane == 0) {
            T yi = beta_zero ? alpha * s : alpha * s + beta * y[row];
            y[row] = yi;
            if (DOT) acc += (double)w[row] * (double)yi;
        }
    }
    if (!DOT) return;
    __shared__ double sh[SLA_CUDA_THREADS];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s2 = blockDim.x / 2; s2 > 0; s2 >>= 1) {
        if ((int)threadIdx.x < s2) sh[threadIdx.x] += sh[threadIdx.x + s2];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = sh[0];
}

#endif
