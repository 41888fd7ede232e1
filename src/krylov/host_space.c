/* The host vector space (sla/backend.h): contiguous host arrays of n elements, chunked for
 * deterministic OpenMP reductions. Each reduction sums its chunks in chunk order and then, when
 * the space has a reduce hook (a distributed space of locally owned entries), combines the
 * process partials through it: one call per kernel, so CG costs two reductions per iteration
 * (pᵀAp, and ‖r‖² with rᵀD⁻¹r together). */
#include <math.h>
#include <omp.h>

#include "krylov/krylov.h"

/* partial sums of the chunks, added in chunk order */
static double sla_ksum_parts(const double *part, int nc)
{
    double s = 0;
    for (int c = 0; c < nc; c++) s += part[c];
    return s;
}

/* the team of a kernel over nc chunks: one thread per chunk, at most the configured count (the
 * chunks of libsla_mpi's vector kernels outnumber the threads; the sums do not depend on it) */
static int hs_team(int nc)
{
    int t = sla_threads();
    return nc < t ? nc : t;
}

#define SLA_TEMPLATE "krylov/t_host_space.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

static const sla_host_space *H(const sla_space *V) { return V->ctx; }

/* The real view of a space: a complex space's vectors are 2n reals of the real dtype, so the
 * real kernels (dot = Re(xᴴy), norm, axpby and CG's updates with real scalars, amax, scaling)
 * run on them with every chunk bound doubled; a real space is its own view. */
typedef struct real_view {
    sla_dtype dtype;
    const int64_t *bd;
    int64_t twice[SLA_HOST_MAX_CHUNKS + 1];
} real_view;

static const real_view *view_of(const sla_space *V, real_view *w)
{
    const sla_host_space *h = H(V);
    w->dtype = V->dtype;
    w->bd = h->bounds;
    if (sla_dtype_is_complex(V->dtype)) {
        w->dtype = sla_dtype_real(V->dtype);
        for (int c = 0; c <= h->nchunks; c++) w->twice[c] = 2 * h->bounds[c];
        w->bd = w->twice;
    }
    return w;
}

/* 1 if a kernel moving `bytes` bytes runs its chunks on the OpenMP team (sla_par()); else the
 * calling thread runs the same chunks in the same order, so the result is the same. Each kernel
 * decides for itself: with the SpMV on the team, CG's smaller vector updates may still run on
 * one thread and skip a synchronisation. */
int sla_host_par(const sla_host_space *h, double bytes)
{
    return h->nchunks > 1 && sla_par(bytes);
}

/* bytes a kernel moves per element of each vector it streams */
static double bytes_of(const sla_space *V, int streams)
{
    return (double)V->n * (double)streams * (double)sla_dtype_size(V->dtype);
}

sla_status sla_space_reduce(const sla_space *V, sla_reduce_op op, double *values, int count)
{
    return V->reduce ? V->reduce(V, op, values, count) : SLA_OK;
}

static sla_status hs_create(const sla_space *V, void **v)
{
    *v = sla_malloc((size_t)V->n, sla_dtype_size(V->dtype), "Krylov vector");
    return *v ? SLA_OK : SLA_ENOMEM;
}

static void hs_free(const sla_space *V, void *v)
{
    (void)V;
    sla_free(v);
}

static sla_status hs_dot(const sla_space *V, const void *x, const void *y, double *xy)
{
    const sla_host_space *h = H(V);
    int par = sla_host_par(h, bytes_of(V, 2));
    real_view w;
    const real_view *R = view_of(V, &w);
    *xy = SLA_DISPATCH(R->dtype, hs_dot, (h->nchunks, par, R->bd, x, y));
    return sla_space_reduce(V, SLA_REDUCE_SUM, xy, 1);
}

static sla_status hs_norm(const sla_space *V, const void *x, double *nrm)
{
    SLA_TRY(hs_dot(V, x, x, nrm));
    *nrm = sqrt(*nrm);
    return SLA_OK;
}

static sla_status hs_axpby(const sla_space *V, double a, const void *x, double b, void *y)
{
    const sla_host_space *h = H(V);
    int par = sla_host_par(h, bytes_of(V, b == 0 ? 2 : 3));
    real_view w;
    const real_view *R = view_of(V, &w);
    SLA_DISPATCH(R->dtype, hs_axpby, (h->nchunks, par, R->bd, a, x, b, y));
    return SLA_OK;
}

/* CG's kernels run on the real view, except complex Jacobi, whose diagonal scaling is a complex
 * product: then the complex instance on the complex entries */
static const real_view *cg_view_of(const sla_space *V, const void *inv_diag, real_view *w)
{
    if (!inv_diag || !sla_dtype_is_complex(V->dtype)) return view_of(V, w);
    w->dtype = V->dtype;
    w->bd = H(V)->bounds;
    return w;
}

static sla_status hs_cg_update(const sla_space *V, double alpha, const void *p, const void *q,
                               void *x, void *r, const void *inv_diag, double *rr, double *rz)
{
    const sla_host_space *h = H(V);
    int par = sla_host_par(h, bytes_of(V, inv_diag ? 7 : 6));
    double s[2];
    real_view w;
    const real_view *R = cg_view_of(V, inv_diag, &w);
    SLA_DISPATCH_ALL(R->dtype, hs_cg_update, (h->nchunks, par, R->bd, alpha, p, q, x, r,
                                              inv_diag, &s[0], &s[1]));
    SLA_TRY(sla_space_reduce(V, SLA_REDUCE_SUM, s, 2));
    *rr = s[0];
    *rz = s[1];
    return SLA_OK;
}

static sla_status hs_cg_direction(const sla_space *V, double beta, const void *z,
                                  const void *inv_diag, void *p)
{
    const sla_host_space *h = H(V);
    int par = sla_host_par(h, bytes_of(V, inv_diag ? 4 : 3));
    real_view w;
    const real_view *R = cg_view_of(V, inv_diag, &w);
    SLA_DISPATCH_ALL(R->dtype, hs_cg_direction, (h->nchunks, par, R->bd, beta, z, inv_diag, p));
    return SLA_OK;
}

static sla_status hs_amax(const sla_space *V, const void *x, double *m)
{
    int parts = sla_dtype_is_complex(V->dtype) ? 2 : 1;    /* of the parts */
    *m = SLA_DISPATCH(sla_dtype_real(V->dtype), hs_amax, (parts * V->n, x));
    return sla_space_reduce(V, SLA_REDUCE_MAX, m, 1);
}

static sla_status hs_scale_pow2(const sla_space *V, int e, const void *x, void *y)
{
    int parts = sla_dtype_is_complex(V->dtype) ? 2 : 1;
    SLA_DISPATCH(sla_dtype_real(V->dtype), hs_scale_pow2, (parts * V->n, e, x, y));
    return SLA_OK;
}

static sla_status hs_find_nonfinite(const sla_space *V, const void *x, int64_t *bad)
{
    double any = sla_all_finite(V->dtype, x, V->n, bad) ? 0 : 1;
    if (any == 0) *bad = -1;
    SLA_TRY(sla_space_reduce(V, SLA_REDUCE_MAX, &any, 1));
    return any > 0 ? SLA_ENONFINITE : SLA_OK;
}

/* the complex slots (complex spaces only) */
static sla_status hs_zdot(const sla_space *V, int conj, const void *x, const void *y,
                          double xy[2])
{
    const sla_host_space *h = H(V);
    int par = sla_host_par(h, bytes_of(V, 2));
    double complex d = V->dtype == SLA_COMPLEX128
                           ? hz_dot_c128(h->nchunks, par, h->bounds, conj, x, y)
                           : hz_dot_c64(h->nchunks, par, h->bounds, conj, x, y);
    xy[0] = creal(d);
    xy[1] = cimag(d);
    return sla_space_reduce(V, SLA_REDUCE_SUM, xy, 2);
}

static sla_status hs_zaxpby(const sla_space *V, const double a[2], const void *x,
                            const double b[2], void *y)
{
    const sla_host_space *h = H(V);
    int par = sla_host_par(h, bytes_of(V, b[0] == 0 && b[1] == 0 ? 2 : 3));
    double complex ca = CMPLX(a[0], a[1]), cb = CMPLX(b[0], b[1]);
    if (V->dtype == SLA_COMPLEX128) hs_axpby_c128(h->nchunks, par, h->bounds, ca, x, cb, y);
    else hs_axpby_c64(h->nchunks, par, h->bounds, ca, x, cb, y);
    return SLA_OK;
}

int sla_host_space_chunks(int64_t n, double bytes)
{
    if (omp_in_parallel()) return 1;
    int t = sla_par_parts(bytes, sla_threads());
    if (n < 2 * t) return 1;
    return t < SLA_HOST_MAX_CHUNKS ? t : SLA_HOST_MAX_CHUNKS;
}

void sla_host_space_init(sla_space *V, sla_host_space *h, int64_t n, sla_dtype dtype,
                         int nchunks, const int64_t *bounds)
{
    if (nchunks < 1) nchunks = 1;
    if (nchunks > SLA_HOST_MAX_CHUNKS) nchunks = SLA_HOST_MAX_CHUNKS;
    h->nchunks = nchunks;
    for (int c = 0; c <= nchunks; c++)
        h->bounds[c] = bounds ? bounds[c] : (int64_t)((double)n * c / nchunks);
    h->bounds[nchunks] = n;
    *V = (sla_space){.n = n, .dtype = dtype, .concurrent = 1, .ctx = h,
                     .vec_create = hs_create, .vec_free = hs_free, .dot = hs_dot,
                     .norm = hs_norm, .axpby = hs_axpby, .cg_update = hs_cg_update,
                     .cg_direction = hs_cg_direction, .amax = hs_amax,
                     .scale_pow2 = hs_scale_pow2, .find_nonfinite = hs_find_nonfinite};
    if (sla_dtype_is_complex(dtype)) {
        V->zdot = hs_zdot;
        V->zaxpby = hs_zaxpby;
    }
}
