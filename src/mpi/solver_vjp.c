/* The backward of a distributed solve (sla_dist_solver_solve_vjp), as the serial one
 * (src/solve/vjp.c): λ = op(A)⁻ᵀ G by one transposed distributed solve on the same object, on
 * G·2⁻ᵉ with 2ᵉ⁻¹ ≤ ‖G‖∞ < 2ᵉ (exact scaling; atol scaled alike), then dB = λ and the pattern
 * outer product ∂a = −λ Xᵀ (op = N) or −X λᵀ (op = T) restricted to this rank's slots, whose
 * off-diagonal block needs the ghost values of X (or λ): sla_dist_spmv_vjp with alpha = −1,
 * one forward halo exchange. */
#include <math.h>
#include <string.h>

#include "mpi/dsolver.h"
#include "core/kernels.h"

/* y = 2^e·x, n entries */
static void scale_pow2(sla_dtype dtype, int64_t n, int e, const void *x, void *y)
{
    if (dtype == SLA_FLOAT64)
        for (int64_t i = 0; i < n; i++) ((double *)y)[i] = ldexp(((const double *)x)[i], e);
    else
        for (int64_t i = 0; i < n; i++) ((float *)y)[i] = (float)ldexp(((const float *)x)[i], e);
}

static double amax(sla_dtype dtype, int64_t n, const void *x)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs(dtype == SLA_FLOAT64 ? ((const double *)x)[i] : ((const float *)x)[i]));
    return m;
}

static sla_status check(const char *func, sla_dist_solver *s, sla_op op, int64_t nrhs,
                        const void *X, const void *G, void *dB, void *dvalues, int64_t *total)
{
    SLA_CHECK_ARG_AS(func, op == SLA_OP_N || op == SLA_OP_T, "op = %d is not N or T", (int)op);
    SLA_CHECK_ARG_AS(func, nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    if (!s->square || s->opt.method == SLA_METHOD_LSQR)
        return sla_error_set(SLA_EUNSUPPORTED, func, "method %s: the distributed VJP is that of "
                             "a square solve (cg, bicgstab, gmres, minres; lsqr: "
                             "sla_dist_solver_lstsq_vjp)",
                             sla_method_name(s->opt.method));
    const sla_dist_layout *L = s->pattern->rows;
    size_t es = sla_dtype_size(s->A.dtype);
    SLA_TRY(sla_check_block(func, "G", G, s->A.batch, L->n, nrhs, total));
    int64_t cx;
    if (dvalues) SLA_TRY(sla_check_block(func, "X (needed for dvalues)", X, s->A.batch, L->n, nrhs, &cx));
    size_t bytes = (size_t)*total * es;
    size_t vbytes = (size_t)(s->A.batch * sla_dist_pattern_nnz(s->pattern)) * es;
    const sla_buf out[] = {{"dvalues", dvalues, vbytes}, {"dB", dB, bytes}};
    const sla_buf in[] = {{"X", X, dvalues ? bytes : 0}, {"G", G, bytes},
                          {"the matrix values", s->A.values, vbytes}};
    SLA_TRY(sla_check_aliasing(func, out, 2, in, 3));
    SLA_TRY(dist_block_finite(func, L, "G", s->A.dtype, s->A.batch, nrhs, G));
    if (dvalues) SLA_TRY(dist_block_finite(func, L, "X", s->A.dtype, s->A.batch, nrhs, X));
    return SLA_OK;
}

sla_status sla_dist_solver_solve_vjp(sla_dist_solver *s, sla_op op, int64_t nrhs, const void *X,
                                     const void *G, void *dB, void *dvalues, sla_solve_info *info)
{
    const char *func = __func__;
    sla_solve_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    info->reason = SLA_REASON_ERROR;
    SLA_CHECK_ARG(s, "solver is NULL");
    int64_t total = 0;
    sla_status st = check(func, s, op, nrhs, X, G, dB, dvalues, &total);
    size_t es = sla_dtype_size(s->A.dtype);
    void *lam = NULL, *rhs = NULL;
    if (st == SLA_OK) {
        lam = sla_malloc((size_t)(total ? total : 1), es, "adjoint solution");
        rhs = sla_malloc((size_t)(total ? total : 1), es, "scaled cotangent");
        if (!lam || !rhs) st = sla_error_attribute(SLA_ENOMEM, func);
        else memset(lam, 0, (size_t)(total ? total : 1) * es);   /* defined bits, never read */
    }
    double gmax = st == SLA_OK ? amax(s->A.dtype, total, G) : 0;
    int64_t same[4] = {op, nrhs, dB != NULL, dvalues != NULL};
    static const char *const names[4] = {"op", "nrhs", "(dB != NULL)", "(dvalues != NULL)"};
    st = dist_agree_same(s->comm, func, st, 4, same, names);
    sla_op adj = op == SLA_OP_N ? SLA_OP_T : SLA_OP_N;
    if (st == SLA_OK) st = dist_agree(s->comm, func, dist_solver_ready(s, adj, func));
    if (st == SLA_OK) {
        int rc = MPI_Allreduce(MPI_IN_PLACE, &gmax, 1, MPI_DOUBLE, MPI_MAX, s->comm);
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Allreduce", rc);
    }
    if (st == SLA_OK && gmax == 0) {
        dist_solver_info_init(s, info);
        memset(lam, 0, (size_t)(total ? total : 1) * es);
    } else if (st == SLA_OK) {
        int e;
        frexp(gmax, &e);
        scale_pow2(s->A.dtype, total, -e, G, rhs);
        st = dist_solver_run(s, adj, nrhs, rhs, lam, ldexp(s->opt.atol, -e), 0, info);
        if (st >= 0) {
            scale_pow2(s->A.dtype, total, e, lam, lam);
            info->residual_norm = ldexp(info->residual_norm, e);
        }
    }
    if (st >= 0 && dvalues) {
        /* op = N: ∂a_rc = −λ_r x_c;  op = T (Aᵀx = b): ∂a_rc = −x_r λ_c */
        sla_status sv = op == SLA_OP_N
            ? sla_dist_spmv_vjp(SLA_OP_N, -1.0, &s->A, X, 1, nrhs, lam, NULL, dvalues)
            : sla_dist_spmv_vjp(SLA_OP_T, -1.0, &s->A, X, 1, nrhs, lam, NULL, dvalues);
        if (sv < 0) st = sla_error_attribute(sv, func);
    }
    if (st >= 0 && dB) memcpy(dB, lam, (size_t)total * es);
    sla_free(lam);
    sla_free(rhs);
    if (st < 0) {
        info->converged = 0;
        info->reason = SLA_REASON_ERROR;
    }
    return st;
}
