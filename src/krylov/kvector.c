/* The local vector space of the Krylov layer: contiguous arrays of n elements, chunked for
 * deterministic OpenMP reductions (see krylov/operator.h). */
#include <omp.h>

#include "krylov/operator.h"

/* partial sums of the chunks, added in chunk order */
static double sla_ksum_parts(const double *part, int nc)
{
    double s = 0;
    for (int c = 0; c < nc; c++) s += part[c];
    return s;
}

#define SLA_TEMPLATE "krylov/t_kvector.h"
#include "core/instantiate.h"

static void *kv_create(const sla_kop *K)
{
    return sla_malloc((size_t)K->n, sla_dtype_size(K->dtype), "Krylov vector");
}

static void kv_free(const sla_kop *K, void *v)
{
    (void)K;
    sla_free(v);
}

/* Bytes a kernel moves per element of each vector it streams */
static double kv_bytes(const sla_kop *K, int streams)
{
    return (double)K->n * (double)streams * (double)sla_dtype_size(K->dtype);
}

static double kv_dot(const sla_kop *K, const void *x, const void *y)
{
    int par = sla_kpar(K, kv_bytes(K, 2));
    return SLA_DISPATCH(K->dtype, kv_dot, (K->nchunks, par, K->bounds, x, y));
}

static void kv_axpby(const sla_kop *K, double a, const void *x, double b, void *y)
{
    int par = sla_kpar(K, kv_bytes(K, b == 0 ? 2 : 3));
    SLA_DISPATCH(K->dtype, kv_axpby, (K->nchunks, par, K->bounds, a, x, b, y));
}

static void kv_cg_update(const sla_kop *K, double alpha, const void *p, const void *q, void *x,
                         void *r, const void *inv_diag, double *rr, double *rz)
{
    int par = sla_kpar(K, kv_bytes(K, inv_diag ? 7 : 6));
    SLA_DISPATCH(K->dtype, kv_cg_update, (K->nchunks, par, K->bounds, alpha, p, q, x, r,
                                          inv_diag, rr, rz));
}

static void kv_cg_direction(const sla_kop *K, double beta, const void *z, const void *inv_diag,
                            void *p)
{
    int par = sla_kpar(K, kv_bytes(K, inv_diag ? 4 : 3));
    SLA_DISPATCH(K->dtype, kv_cg_direction, (K->nchunks, par, K->bounds, beta, z, inv_diag, p));
}

int sla_kvec_nchunks(int64_t n, double bytes)
{
    if (omp_in_parallel()) return 1;
    int t = sla_par_parts(bytes, omp_get_max_threads());
    if (n < 2 * t) return 1;
    return t < SLA_KMAX_CHUNKS ? t : SLA_KMAX_CHUNKS;
}

void sla_kvec_init(sla_kop *K, int64_t n, sla_dtype dtype, int nchunks, const int64_t *bounds)
{
    if (nchunks < 1) nchunks = 1;
    if (nchunks > SLA_KMAX_CHUNKS) nchunks = SLA_KMAX_CHUNKS;
    *K = (sla_kop){0};           /* no operator, no preconditioner yet */
    K->n = n;
    K->dtype = dtype;
    K->nchunks = nchunks;
    for (int c = 0; c <= nchunks; c++)
        K->bounds[c] = bounds ? bounds[c] : (int64_t)((double)n * c / nchunks);
    K->bounds[nchunks] = n;
    K->vec_create = kv_create;
    K->vec_free = kv_free;
    K->dot = kv_dot;
    K->axpby = kv_axpby;
    K->cg_update = kv_cg_update;
    K->cg_direction = kv_cg_direction;
}

sla_status sla_kop_generic_apply_dot(const sla_kop *K, sla_op op, const void *x, void *y,
                                     double *xy)
{
    SLA_TRY(K->apply(K, op, x, y));
    *xy = K->dot(K, x, y);
    return SLA_OK;
}
