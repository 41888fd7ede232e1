/* The kernels of a distributed vector space (what a Krylov method needs besides the operator):
 * local work over this rank's n entries, reductions summed by dist_sum (one per call). The
 * local kernels are libsla's host-space kernels (src/krylov/t_host_space.h, the ones serial
 * solvers run) on a host space of the n entries with no reduce hook, so each reduction slot
 * returns this rank's partial sums; only the sum over the ranks is added here. */
#include <math.h>

#include "mpi/dist.h"
#include "sla/backend.h"

#define DIST_VEC_CHUNK_MIN 16384          /* elements per chunk at least */
#define DIST_VEC_MDOT_STACK 64            /* dots of one mdot summed without an allocation */

/* This rank's n entries as a host space chunked as a function of n only (at most
 * SLA_HOST_MAX_CHUNKS chunks of at least DIST_VEC_CHUNK_MIN elements), so the sums never depend
 * on the thread count; the host space decides per kernel whether the chunks run on threads. */
static void local_space(sla_space *V, sla_host_space *h, sla_dtype dtype, int64_t n)
{
    int64_t bd[SLA_HOST_MAX_CHUNKS + 1];
    int64_t c = (n + DIST_VEC_CHUNK_MIN - 1) / DIST_VEC_CHUNK_MIN;
    int nc = c < 1 ? 1 : c > SLA_HOST_MAX_CHUNKS ? SLA_HOST_MAX_CHUNKS : (int)c;
    for (int i = 0; i <= nc; i++) bd[i] = n / nc * i + (n % nc) * i / nc;
    sla_host_space_init(V, h, n, dtype, nc, bd);
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
    double small[DIST_VEC_MDOT_STACK], *part = small;
    sla_status st = check_vec(func, dtype, n, 0, NULL, NULL);
    if (st == SLA_OK && m < 0) st = SLA_FAIL_AS(func, SLA_EINVAL, "m = %d < 0", m);
    if (st == SLA_OK && m > 0 && (!x || !out))
        st = SLA_FAIL_AS(func, SLA_EINVAL, "%s is NULL", x ? "out" : "x");
    for (int v = 0; st == SLA_OK && n > 0 && v < m; v++)
        if (!x[v]) st = SLA_FAIL_AS(func, SLA_EINVAL, "x[%d] is NULL", v);
    if (st == SLA_OK && n > 0 && m > 0 && !y) st = SLA_FAIL_AS(func, SLA_EINVAL, "y is NULL");
    if (st == SLA_OK && m > DIST_VEC_MDOT_STACK && !(part = sla_malloc((size_t)m, sizeof *part, "dots")))
        st = sla_error_attribute(SLA_ENOMEM, func);
    if (st == SLA_OK) {
        sla_space V;
        sla_host_space h;
        local_space(&V, &h, dtype, n);
        for (int v = 0; v < m && st == SLA_OK; v++) st = V.dot(&V, x[v], y, &part[v]);
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
    sla_space V;
    sla_host_space h;
    local_space(&V, &h, dtype, n);
    return V.axpby(&V, a, x, b, y);
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
        sla_space V;
        sla_host_space h;
        local_space(&V, &h, dtype, n);
        st = V.cg_update(&V, alpha, p, q, x, r, inv_diag, &s[0], &s[1]);
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
    sla_space V;
    sla_host_space h;
    local_space(&V, &h, dtype, n);
    return V.cg_direction(&V, beta, z, inv_diag, p);
}
