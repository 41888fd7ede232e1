/* Jacobi on the device: inv_diag = 1 / a_ii (|a_ii| for MINRES, which needs an SPD M), one
 * thread per row scanning its slots; the first row with a zero or missing diagonal comes back
 * through a fixed-order min reduction so that the error names it. */
#include "cuda/reduce.cuh"

template <typename T> struct InvDiagF {
    const int64_t *rp;
    const int32_t *ci;
    const T *v;
    T *d;
    int absolute;
    __device__ void operator()(int64_t i, double *a) const
    {
        T s = 0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
            if (ci[k] == i) s += v[k];
        if (absolute && s < 0) s = -s;
        if (s == 0) a[0] = fmin(a[0], (double)i);
        d[i] = s != 0 ? (T)1 / s : (T)0;
    }
};

extern "C" sla_status sla_cuda_jacobi(const sla_cuda_csr *c, int64_t b, int absolute,
                                      void *inv_diag)
{
    SLA_CHECK_ARG(c && c->values, "matrix is NULL or has no values");
    SLA_CHECK_ARG(inv_diag, "inv_diag is NULL");
    SLA_CHECK_ARG(c->nrows == c->ncols, "Jacobi needs a square matrix (%lld × %lld)",
                  (long long)c->nrows, (long long)c->ncols);
    size_t off = (size_t)(b * c->nnz);
    double first = INFINITY;
    if (c->dtype == SLA_FLOAT64)
        SLA_TRY((sla_reduce<1, SLA_RMIN>(&c->scratch, c->nrows, InvDiagF<double>{c->rowptr, c->colind,
                 (const double *)c->values + off, (double *)inv_diag, absolute}, &first)));
    else
        SLA_TRY((sla_reduce<1, SLA_RMIN>(&c->scratch, c->nrows, InvDiagF<float>{c->rowptr, c->colind,
                 (const float *)c->values + off, (float *)inv_diag, absolute}, &first)));
    if (isfinite(first))
        return SLA_FAIL(SLA_EBREAKDOWN, "Jacobi: zero or missing diagonal entry in row %lld "
                        "(batch element %lld)", (long long)first, (long long)b);
    return SLA_OK;
}
