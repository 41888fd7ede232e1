/* The device vector space (sla/cuda.h): the slots of sla_space (sla/backend.h) on cudaMalloc'd
 * vectors. Arithmetic is in the vectors' dtype as in the host space (t_host_space.h); sums are
 * accumulated in double by the fixed-order reduction of reduce.cuh. */
#include <math.h>

#include "cuda/reduce.cuh"

#define CTX(V) ((const sla_cuda_space *)(V)->ctx)

/* ---- functors (one per kernel; T = double or float) ---- */

template <typename T> struct DotF {
    const T *x, *y;
    __device__ void operator()(int64_t i, double *a) const { a[0] += (double)x[i] * (double)y[i]; }
};

template <typename T> struct AxpbyF {
    T a, b;
    const T *x;
    T *y;
    int mode;          /* 0: y = 0; 1: y = a x; 2: y = a x + b y */
    __device__ void operator()(int64_t i) const
    {
        y[i] = mode == 0 ? (T)0 : mode == 1 ? a * x[i] : a * x[i] + b * y[i];
    }
};

/* x += α p; r −= α q; a[0] = rᵀr; a[1] = rᵀ diag(d) r (d NULL: = a[0]) */
template <typename T> struct CgUpdateF {
    T alpha;
    const T *p, *q, *d;
    T *x, *r;
    __device__ void operator()(int64_t i, double *a) const
    {
        x[i] += alpha * p[i];
        T ri = r[i] - alpha * q[i];
        r[i] = ri;
        a[0] += (double)ri * (double)ri;
        a[1] += d ? (double)ri * (double)(d[i] * ri) : (double)ri * (double)ri;
    }
};

template <typename T> struct CgDirectionF {
    T beta;
    const T *z, *d;
    T *p;
    __device__ void operator()(int64_t i) const { p[i] = (d ? d[i] * z[i] : z[i]) + beta * p[i]; }
};

/* NaN entries are skipped (fmax), as the host's amax: callers check finiteness first */
template <typename T> struct AmaxF {
    const T *x;
    __device__ void operator()(int64_t i, double *a) const { a[0] = fmax(a[0], fabs((double)x[i])); }
};

template <typename T> struct ScaleF {
    int e;
    const T *x;
    T *y;
    __device__ void operator()(int64_t i) const { y[i] = (T)ldexp((double)x[i], e); }
};

/* smallest index of a non-finite entry (as a double: exact below 2⁵³) */
template <typename T> struct NonfiniteF {
    const T *x;
    __device__ void operator()(int64_t i, double *a) const
    {
        if (!isfinite((double)x[i])) a[0] = fmin(a[0], (double)i);
    }
};

/* ---- the slots ---- */

/* The generic layer hands the caller's blocks to the checks (find_nonfinite, amax,
 * scale_pow2) and copies (axpby with a = 1, b = 0) before the backend sees them: a host
 * pointer there is refused by name instead of faulting on the device, which would poison the
 * CUDA context for the rest of the process. A pointer query costs about a microsecond: the
 * methods pay it only where they copy a vector (a = 1, b = 0), not in their other updates. */
static sla_status need_device(const sla_space *V, const void *p, const char *slot)
{
    if (V->n == 0 || sla_cuda_is_device_pointer(p)) return SLA_OK;
    return sla_error_set(SLA_EINVAL, "cuda", "%s: a block of %lld entries is not CUDA device "
                         "memory, but the solver's matrix is a device view (pass device blocks, "
                         "or solve a host view with a host backend)", slot, (long long)V->n);
}

static sla_status cs_create(const sla_space *V, void **v)
{
    *v = NULL;
    size_t bytes = (size_t)(V->n > 0 ? V->n : 1) * sla_dtype_size(V->dtype);
    cudaError_t e = cudaMalloc(v, bytes);
    if (e != cudaSuccess) {
        *v = NULL;
        cudaGetLastError();
        return sla_error_set(SLA_ENOMEM, "cudaMalloc", "device vector of %lld × %s (%zu bytes): "
                             "%s", (long long)V->n, sla_dtype_name(V->dtype), bytes,
                             cudaGetErrorString(e));
    }
    return SLA_OK;
}

static void cs_free(const sla_space *V, void *v)
{
    (void)V;
    if (v) cudaFree(v);
}

template <typename T>
static sla_status dot_t(const sla_space *V, const void *x, const void *y, double *xy)
{
    return sla_reduce<1, SLA_RSUM>(CTX(V), V->n, DotF<T>{(const T *)x, (const T *)y}, xy);
}

static sla_status cs_dot(const sla_space *V, const void *x, const void *y, double *xy)
{
    return V->dtype == SLA_FLOAT64 ? dot_t<double>(V, x, y, xy) : dot_t<float>(V, x, y, xy);
}

static sla_status cs_norm(const sla_space *V, const void *x, double *nrm)
{
    double s = 0;
    SLA_TRY(cs_dot(V, x, x, &s));
    *nrm = sqrt(s);
    return SLA_OK;
}

template <typename T>
static sla_status axpby_t(const sla_space *V, double a, const void *x, double b, void *y)
{
    int mode = a == 0 && b == 0 ? 0 : b == 0 ? 1 : 2;
    return sla_for_each(V->n, AxpbyF<T>{(T)a, (T)b, (const T *)x, (T *)y, mode}, "axpby kernel");
}

static sla_status cs_axpby(const sla_space *V, double a, const void *x, double b, void *y)
{
    if (a == 1 && b == 0) {
        SLA_TRY(need_device(V, x, "copy source"));
        SLA_TRY(need_device(V, y, "copy destination"));
    }
    return V->dtype == SLA_FLOAT64 ? axpby_t<double>(V, a, x, b, y) : axpby_t<float>(V, a, x, b, y);
}

template <typename T>
static sla_status cg_update_t(const sla_space *V, double alpha, const void *p, const void *q,
                              void *x, void *r, const void *d, double *rr, double *rz)
{
    double out[2];
    CgUpdateF<T> f{(T)alpha, (const T *)p, (const T *)q, (const T *)d, (T *)x, (T *)r};
    SLA_TRY((sla_reduce<2, SLA_RSUM>(CTX(V), V->n, f, out)));
    *rr = out[0];
    *rz = out[1];
    return SLA_OK;
}

static sla_status cs_cg_update(const sla_space *V, double alpha, const void *p, const void *q,
                               void *x, void *r, const void *inv_diag, double *rr, double *rz)
{
    return V->dtype == SLA_FLOAT64 ? cg_update_t<double>(V, alpha, p, q, x, r, inv_diag, rr, rz)
                                   : cg_update_t<float>(V, alpha, p, q, x, r, inv_diag, rr, rz);
}

template <typename T>
static sla_status cg_direction_t(const sla_space *V, double beta, const void *z, const void *d,
                                 void *p)
{
    return sla_for_each(V->n, CgDirectionF<T>{(T)beta, (const T *)z, (const T *)d, (T *)p},
                        "CG direction kernel");
}

static sla_status cs_cg_direction(const sla_space *V, double beta, const void *z,
                                  const void *inv_diag, void *p)
{
    return V->dtype == SLA_FLOAT64 ? cg_direction_t<double>(V, beta, z, inv_diag, p)
                                   : cg_direction_t<float>(V, beta, z, inv_diag, p);
}

static sla_status cs_amax(const sla_space *V, const void *x, double *m)
{
    SLA_TRY(need_device(V, x, "amax"));
    if (V->dtype == SLA_FLOAT64)
        return sla_reduce<1, SLA_RMAX>(CTX(V), V->n, AmaxF<double>{(const double *)x}, m);
    return sla_reduce<1, SLA_RMAX>(CTX(V), V->n, AmaxF<float>{(const float *)x}, m);
}

static sla_status cs_scale_pow2(const sla_space *V, int e, const void *x, void *y)
{
    SLA_TRY(need_device(V, x, "scale source"));
    SLA_TRY(need_device(V, y, "scale destination"));
    if (V->dtype == SLA_FLOAT64)
        return sla_for_each(V->n, ScaleF<double>{e, (const double *)x, (double *)y}, "scale kernel");
    return sla_for_each(V->n, ScaleF<float>{e, (const float *)x, (float *)y}, "scale kernel");
}

static sla_status cs_find_nonfinite(const sla_space *V, const void *x, int64_t *bad)
{
    double first = INFINITY;
    *bad = -1;
    SLA_TRY(need_device(V, x, "finiteness check"));
    if (V->dtype == SLA_FLOAT64)
        SLA_TRY((sla_reduce<1, SLA_RMIN>(CTX(V), V->n, NonfiniteF<double>{(const double *)x}, &first)));
    else
        SLA_TRY((sla_reduce<1, SLA_RMIN>(CTX(V), V->n, NonfiniteF<float>{(const float *)x}, &first)));
    *bad = isfinite(first) ? (int64_t)first : -1;
    return *bad >= 0 ? SLA_ENONFINITE : SLA_OK;
}

extern "C" sla_status sla_cuda_space_init(sla_space *V, sla_cuda_space *c, int64_t n,
                                          sla_dtype dtype)
{
    SLA_CHECK_ARG(V && c, "V or c is NULL");
    SLA_CHECK_ARG(n >= 0, "n = %lld < 0", (long long)n);
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64 or float32", (int)dtype);
    c->partials = c->result = NULL;
    SLA_CU_NEED_DEVICE();
    SLA_CU(cudaMalloc(&c->partials, 3 * SLA_CUDA_REDUCE_BLOCKS * sizeof(double)),
           "cudaMalloc (reduction scratch)");
    cudaError_t e = cudaMalloc(&c->result, 3 * sizeof(double));
    if (e != cudaSuccess) {
        sla_cuda_space_free(c);
        return sla_cuda_status(e, __func__, "cudaMalloc (reduction result)");
    }
    *V = (sla_space){.n = n, .dtype = dtype, .concurrent = 0, .ctx = c,
                     .vec_create = cs_create, .vec_free = cs_free, .dot = cs_dot,
                     .norm = cs_norm, .axpby = cs_axpby, .cg_update = cs_cg_update,
                     .cg_direction = cs_cg_direction, .amax = cs_amax,
                     .scale_pow2 = cs_scale_pow2, .find_nonfinite = cs_find_nonfinite,
                     .reduce = NULL, .reduce_ctx = NULL, .zdot = NULL, .zaxpby = NULL};
    return SLA_OK;
}

extern "C" void sla_cuda_space_free(sla_cuda_space *c)
{
    if (!c) return;
    if (c->partials) cudaFree(c->partials);
    if (c->result) cudaFree(c->result);
    c->partials = c->result = NULL;
}

/* the space's dot for the matrix's fused products (csr.cu) */
sla_status sla_cuda_dot(const sla_space *V, const void *x, const void *y, double *xy)
{
    return cs_dot(V, x, y, xy);
}
