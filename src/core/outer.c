/* The outer product restricted to a pattern, the one primitive behind every adjoint with
 * respect to matrix values (SpMV, solve, eigensolve, logdet):
 *   dvalues[b][s] += alpha · Σ_j u[b][r_s][j] · conj(v[b][c_s][j])   for each slot s = (r_s, c_s)
 * (u·vᴴ on the pattern: the conjugation is a no-op for real dtypes).
 * One row-parallel pass over the pattern (core/t_outer.h through sla_rows_parallel). */
#include "core/kernels.h"

/* One outer product as the kernels see it (strides 0 broadcast u or v over the batch). */
typedef struct outer_ctx {
    const int64_t *rowptr;
    const int32_t *colind;
    int64_t nnz;
    const void *u, *v;
    int64_t u_stride, v_stride;
    int64_t k;
    double alpha;
    int overwrite;
    int conj;
    void *dvalues;
} outer_ctx;

#define SLA_TEMPLATE "core/t_outer.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

void sla_pattern_outer_run(const sla_pattern *p, sla_dtype dtype, int64_t batch, double alpha,
                           const void *u, int u_batched, const void *v, int v_batched,
                           int64_t k, int flags, void *dvalues)
{
    static const sla_rows_fn fn[] = {outer_rows_f64, outer_rows_f32, outer_rows_c128,
                                     outer_rows_c64};
    int64_t m = sla_pattern_nrows(p);
    outer_ctx c = {.rowptr = sla_pattern_rowptr(p), .colind = sla_pattern_colind(p),
                   .nnz = sla_pattern_nnz(p), .u = u, .v = v,
                   .u_stride = u_batched ? m * k : 0,
                   .v_stride = v_batched ? sla_pattern_ncols(p) * k : 0,
                   .k = k, .alpha = alpha, .overwrite = flags & 1,
                   .conj = (flags & SLA_OUTER_CONJ) != 0, .dvalues = dvalues};
    sla_rows_parallel(c.rowptr, m, batch, k, fn[dtype], &c);
}

sla_status sla_pattern_outer_add(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                 double alpha, const void *u, int u_batched, const void *v,
                                 int v_batched, int64_t k, void *dvalues)
{
    SLA_CHECK_ARG(p, "pattern is NULL");
    if (sla_dtype_size(dtype) == 0)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64, float32, complex128 or complex64",
                        (int)dtype);
    SLA_CHECK_ARG(batch >= 1, "batch = %lld < 1", (long long)batch);
    SLA_CHECK_ARG(k >= 1, "k = %lld < 1", (long long)k);
    SLA_TRY(sla_check_flag(__func__, "u_batched", u_batched));
    SLA_TRY(sla_check_flag(__func__, "v_batched", v_batched));
    int64_t nu, nv, nd, m = sla_pattern_nrows(p), n = sla_pattern_ncols(p);
    size_t es = sla_dtype_size(dtype);
    SLA_TRY(sla_check_block(__func__, "u", u, u_batched ? batch : 1, m, k, &nu));
    SLA_TRY(sla_check_block(__func__, "v", v, v_batched ? batch : 1, n, k, &nv));
    SLA_TRY(sla_check_block(__func__, "dvalues", dvalues, batch, sla_pattern_nnz(p), 1, &nd));
    size_t dbytes = (size_t)nd * es;
    SLA_TRY(sla_check_overlap(__func__, "dvalues", dvalues, dbytes, "u", u, (size_t)nu * es));
    SLA_TRY(sla_check_overlap(__func__, "dvalues", dvalues, dbytes, "v", v, (size_t)nv * es));
    sla_pattern_outer_run(p, dtype, batch, alpha, u, u_batched, v, v_batched, k, 0, dvalues);
    return SLA_OK;
}
