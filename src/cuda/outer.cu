/* The pattern outer product of the VJPs on the device (DESIGN.md: ∂a_k = α Σ_j u[r_k][j]·v[c_k][j]),
 * one thread per (batch element, row) walking the row's slots: every slot is written by one
 * thread with the columns summed in order j = 0..nrhs−1, so the result is deterministic. */
#include "cuda/reduce.cuh"

template <typename T> struct OuterF {
    int64_t nrows, ncols, nnz, k;
    const int64_t *rp;
    const int32_t *ci;
    T alpha;
    const T *u, *v;
    T *dv;
    __device__ void operator()(int64_t t) const
    {
        int64_t b = t / nrows, i = t % nrows;
        const T *ub = u + (b * nrows + i) * k, *vb = v + b * ncols * k;
        T *db = dv + b * nnz;
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            const T *vc = vb + (int64_t)ci[s] * k;
            T acc = 0;
            for (int64_t j = 0; j < k; j++) acc += ub[j] * vc[j];
            db[s] = alpha * acc;
        }
    }
};

extern "C" sla_status sla_cuda_pattern_outer(const sla_cuda_csr *c, double alpha, const void *u,
                                             const void *v, int64_t nrhs, void *dvalues)
{
    SLA_CHECK_ARG(c, "matrix is NULL");
    SLA_CHECK_ARG(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    SLA_CHECK_ARG((u && v && dvalues) || c->nnz == 0, "u, v or dvalues is NULL");
    int64_t n = c->batch * c->nrows;
    if (c->dtype == SLA_FLOAT64)
        return sla_for_each(n, OuterF<double>{c->nrows, c->ncols, c->nnz, nrhs, c->rowptr, c->colind,
                            alpha, (const double *)u, (const double *)v, (double *)dvalues},
                            "pattern outer product kernel");
    return sla_for_each(n, OuterF<float>{c->nrows, c->ncols, c->nnz, nrhs, c->rowptr, c->colind,
                        (float)alpha, (const float *)u, (const float *)v, (float *)dvalues},
                        "pattern outer product kernel");
}
