/* The kernels of a distributed vector space (what a Krylov method needs besides the operator):
 * local work over this rank's n entries, reductions summed by dist_sum (one per call). */
#include <math.h>
#include <omp.h>

#include "mpi/dist.h"

#define DIST_VEC_CHUNKS 64
#define DIST_VEC_CHUNK_MIN 16384          /* elements per chunk at least */
#define DIST_VEC_PAR_MIN (1 << 17)        /* elements before the chunks run on threads */

#define SLA_TEMPLATE "mpi/t_vector.h"
#include "core/instantiate.h"

/* The fixed chunking of [0, n): a function of n only, so the sums never depend on threads. */
static int chunks(int64_t n, int64_t *bd, int *par)
{
    int64_t c = (n + DIST_VEC_CHUNK_MIN - 1) / DIST_VEC_CHUNK_MIN;
    int nc = c < 1 ? 1 : c > DIST_VEC_CHUNKS ? DIST_VEC_CHUNKS : (int)c;
    for (int i = 0; i <= nc; i++) bd[i] = n / nc * i + (n % nc) * i / nc;
    *par = n >= DIST_VEC_PAR_MIN && nc > 1 && sla_threads() > 1 && !omp_in_parallel();
    return nc;
}

static sla_status check_vec(const char *func, sla_dtype dtype, int64_t n, int count,
                            const void *const *arrays, const char *const *names)
{
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return sla_error_set(SLA_EDTYPE, func, "dtype %d is not float64 or float32", (int)dtype);
    if (n < 0) return sla_error_set(SLA_EINVAL, func, "n = %lld < 0", (long long)n);
    for (int i = 0; i < count && n > 0; i++)
        if (!arrays[i]) return sla_error_set(SLA_EINVAL, func, "%s is NULL", names[i]);
    return SLA_OK;
}

/* m dots in one reduction, errors named after func. */
static sla_status mdot(const char *func, MPI_Comm comm, sla_dtype dtype, int64_t n, int m,
                       const void *const *x, const void *y, double *out)
{
    if (comm == MPI_COMM_NULL) return SLA_FAIL_AS(func, SLA_EINVAL, "comm is MPI_COMM_NULL");
    double small[DIST_VEC_CHUNKS], *part = small;
    sla_status st = check_vec(func, dtype, n, 0, NULL, NULL);
    if (st == SLA_OK && m < 0) st = SLA_FAIL_AS(func, SLA_EINVAL, "m = %d < 0", m);
    if (st == SLA_OK && m > 0 && (!x || !out))
        st = SLA_FAIL_AS(func, SLA_EINVAL, "%s is NULL", x ? "out" : "x");
    for (int v = 0; st == SLA_OK && n > 0 && v < m; v++)
        if (!x[v]) st = SLA_FAIL_AS(func, SLA_EINVAL, "x[%d] is NULL", v);
    if (st == SLA_OK && n > 0 && m > 0 && !y) st = SLA_FAIL_AS(func, SLA_EINVAL, "y is NULL");
    if (st == SLA_OK && m > DIST_VEC_CHUNKS && !(part = sla_malloc((size_t)m, sizeof *part, "dots")))
        st = sla_error_attribute(SLA_ENOMEM, func);
    if (st == SLA_OK) {
        int64_t bd[DIST_VEC_CHUNKS + 1];
        int par, nc = chunks(n, bd, &par);
        SLA_DISPATCH(dtype, mdot, (nc, par, bd, m, x, y, part));
    }
    st = dist_sum(comm, func, st, m < 0 ? 0 : m, part);
    if (st == SLA_OK)
        for (int v = 0; v < m; v++) out[v] = part[v];
    if (part != small) sla_free(part);
    return st;
}

/* The agreed error of a NULL vector (the reduction still runs, for the other ranks). */
static sla_status agree_null(MPI_Comm comm, const char *func, const char *name)
{
    if (comm == MPI_COMM_NULL) return SLA_FAIL_AS(func, SLA_EINVAL, "comm is MPI_COMM_NULL");
    return dist_sum(comm, func, sla_error_set(SLA_EINVAL, func, "%s is NULL", name), 1, NULL);
}

sla_status sla_dist_vec_mdot(MPI_Comm comm, sla_dtype dtype, int64_t n, int m,
                             const void *const *x, const void *y, double *out)
{
    return mdot(__func__, comm, dtype, n, m, x, y, out);
}

sla_status sla_dist_vec_dot(MPI_Comm comm, sla_dtype dtype, int64_t n, const void *x,
                            const void *y, double *out)
{
    const void *xs[1] = {x};
    double d = 0;
    if (!x && n > 0 && (dtype == SLA_FLOAT64 || dtype == SLA_FLOAT32)) return agree_null(comm, __func__, "x");
    sla_status st = mdot(__func__, comm, dtype, n, 1, xs, y,
                         out ? &d : NULL);
    if (st == SLA_OK) *out = d;
    return st;
}

sla_status sla_dist_vec_norm2(MPI_Comm comm, sla_dtype dtype, int64_t n, const void *x,
                              double *out)
{
    const void *xs[1] = {x};
    double d = 0;
    if (!x && n > 0 && (dtype == SLA_FLOAT64 || dtype == SLA_FLOAT32)) return agree_null(comm, __func__, "x");
    sla_status st = mdot(__func__, comm, dtype, n, 1, xs, x,
                         out ? &d : NULL);
    if (st == SLA_OK) *out = sqrt(d);
    return st;
}

sla_status sla_dist_vec_axpby(sla_dtype dtype, int64_t n, double a, const void *x, double b,
                              void *y)
{
    const void *arrays[2] = {y, a == 0 && b == 0 ? y : x};
    static const char *const names[2] = {"y", "x"};
    SLA_TRY(check_vec(__func__, dtype, n, 2, arrays, names));
    int64_t bd[DIST_VEC_CHUNKS + 1];
    int par, nc = chunks(n, bd, &par);
    SLA_DISPATCH(dtype, axpby, (nc, par, bd, a, x, b, y));
    return SLA_OK;
}

sla_status sla_dist_vec_cg_update(MPI_Comm comm, sla_dtype dtype, int64_t n, double alpha,
                                  const void *p, const void *q, void *x, void *r,
                                  const void *inv_diag, double *rr, double *rz)
{
    if (comm == MPI_COMM_NULL) return SLA_FAIL(SLA_EINVAL, "comm is MPI_COMM_NULL");
    const void *arrays[4] = {p, q, x, r};
    static const char *const names[4] = {"p", "q", "x", "r"};
    sla_status st = check_vec(__func__, dtype, n, 4, arrays, names);
    if (st == SLA_OK && (!rr || !rz)) st = SLA_FAIL(SLA_EINVAL, "%s is NULL", rr ? "rz" : "rr");
    double s[2] = {0, 0};
    if (st == SLA_OK) {
        int64_t bd[DIST_VEC_CHUNKS + 1];
        int par, nc = chunks(n, bd, &par);
        SLA_DISPATCH(dtype, cg_update, (nc, par, bd, alpha, p, q, x, r, inv_diag, s));
    }
    st = dist_sum(comm, __func__, st, 2, s);
    if (st == SLA_OK) {
        *rr = s[0];
        *rz = s[1];
    }
    return st;
}

sla_status sla_dist_vec_cg_direction(sla_dtype dtype, int64_t n, double beta, const void *z,
                                     const void *inv_diag, void *p)
{
    const void *arrays[2] = {z, p};
    static const char *const names[2] = {"z", "p"};
    SLA_TRY(check_vec(__func__, dtype, n, 2, arrays, names));
    int64_t bd[DIST_VEC_CHUNKS + 1];
    int par, nc = chunks(n, bd, &par);
    SLA_DISPATCH(dtype, cg_direction, (nc, par, bd, beta, z, inv_diag, p));
    return SLA_OK;
}
