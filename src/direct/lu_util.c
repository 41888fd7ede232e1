/* Helpers shared by the LU backends: dtype conversion, column gather/scatter of dense blocks,
 * residual norms, permutation signs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "direct/lu_util.h"

lu_elem *lu_elems_create(int64_t batch, int64_t nnz)
{
    lu_elem *e = sla_calloc((size_t)batch, sizeof *e, "factors");
    for (int64_t b = 0; e && b < batch; b++) {
        e[b].zero_pivot = e[b].small_pivot = e[b].rcond_hint = -1;
        if (!(e[b].ax = sla_malloc((size_t)nnz, sizeof(double), "values"))) {
            lu_elems_free(e, batch);
            return NULL;
        }
    }
    return e;
}

void lu_elems_free(lu_elem *e, int64_t batch)
{
    for (int64_t b = 0; e && b < batch; b++) sla_free(e[b].ax);
    sla_free(e);
}

int64_t *lu_colind64(const sla_pattern *p)
{
    int64_t nnz = sla_pattern_nnz(p);
    const int32_t *ci = sla_pattern_colind(p);
    int64_t *ai = sla_malloc((size_t)nnz, sizeof *ai, "column indices");
    for (int64_t t = 0; ai && t < nnz; t++) ai[t] = ci[t];
    return ai;
}

void lu_elem_load(const sla_solver *s, int64_t b, lu_elem *e)
{
    int64_t nnz = sla_pattern_nnz(s->pattern);
    lu_to_double(s->dtype, (const char *)s->A.values + (size_t)(b * nnz) * sla_dtype_size(s->dtype),
                 nnz, e->ax);
}

sla_status lu_check_factors(const sla_solver *s, int valid, const lu_elem *e)
{
    if (!valid)
        return SLA_FAIL(SLA_EINVAL, "the last refactor failed; call sla_solver_refactor again");
    for (int64_t b = 0; b < s->batch; b++) {
        if (e[b].zero_pivot >= 0)
            return SLA_FAIL(SLA_ESINGULAR, "batch element %lld is singular: zero pivot U(%lld,%lld) "
                            "at column %lld (row %lld) of A", (long long)b, (long long)e[b].zero_pivot,
                            (long long)e[b].zero_pivot, (long long)e[b].sing_col,
                            (long long)e[b].sing_row);
        if (e[b].small_pivot >= 0)
            return SLA_FAIL(SLA_ESINGULAR, "batch element %lld is numerically singular: reciprocal "
                            "condition estimate %.2g < %.2g (SLA_RCOND_SINGULAR); smallest pivot "
                            "U(%lld,%lld) at column %lld (row %lld) of A", (long long)b,
                            e[b].rcond, SLA_RCOND_SINGULAR, (long long)e[b].small_pivot,
                            (long long)e[b].small_pivot, (long long)e[b].sing_col,
                            (long long)e[b].sing_row);
    }
    return SLA_OK;
}

sla_status lu_estimate_rcond(sla_solver *s, int64_t b, lu_elem *e, sla_factor_solve_fn fn,
                             void *ctx)
{
    e->small_pivot = -1;
    if (e->zero_pivot >= 0) { e->rcond = 0; return SLA_OK; }
    double *work = sla_malloc((size_t)s->n, SLA_RCOND_WORK * sizeof(double), "condition estimate");
    if (!work) return SLA_ENOMEM;
    sla_status st = sla_direct_rcond(s, b, fn, ctx, work, &e->rcond_hint, &e->rcond);
    sla_free(work);
    if (st == SLA_OK && sla_direct_numerically_singular(s, e->rcond)) e->small_pivot = -2;
    return st;
}

void lu_small_pivot(lu_elem *e, int64_t n, const double *d, const int64_t *col, const int64_t *row)
{
    int64_t k = 0;
    for (int64_t i = 1; i < n; i++)
        if (fabs(d[i]) < fabs(d[k])) k = i;
    e->small_pivot = k;
    e->sing_col = col[k];
    e->sing_row = row[k];
}

void lu_summary(sla_solver *s, const lu_elem *e, char *buf, size_t len)
{
    double rcond = INFINITY;
    int64_t sing = -1;
    for (int64_t b = 0; b < s->batch; b++) {
        rcond = fmin(rcond, e[b].rcond);
        if (sing < 0 && lu_singular(&e[b])) sing = b;
    }
    s->rcond = s->n == 0 ? 1 : rcond;
    int k = snprintf(buf, len, "%s%s", s->batch > 1 ? " (min over the batch)" : "",
                     sing < 0 ? sla_direct_singular_note(s) : "");
    if (sing < 0 || k < 0 || (size_t)k >= len) return;
    if (e[sing].zero_pivot >= 0)
        snprintf(buf + k, len - (size_t)k, ", singular (zero pivot at column %lld of batch element "
                 "%lld)", (long long)e[sing].sing_col, (long long)sing);
    else
        snprintf(buf + k, len - (size_t)k, ", numerically singular (rcond < %.1e, smallest pivot "
                 "at column %lld of batch element %lld)", SLA_RCOND_SINGULAR,
                 (long long)e[sing].sing_col, (long long)sing);
}

sla_status lu_solve_tasks(sla_solver *s, int valid, const lu_elem *lu, sla_op op, int64_t nrhs,
                          const void *B, void *X, sla_solve_info *info, int per_column,
                          lu_task_fn fn, const char *what)
{
    SLA_TRY(lu_check_factors(s, valid, lu));
    int64_t nvec = s->batch * nrhs;
    lu_solve_ctx c = {.s = s, .op = op, .nrhs = nrhs, .B = B, .X = X,
                      .rn = sla_malloc((size_t)nvec, sizeof(double), "residual norms"),
                      .bn = sla_malloc((size_t)nvec, sizeof(double), "right-hand side norms")};
    sla_status st = SLA_ENOMEM;
    if (c.rn && c.bn)
        st = lu_run_tasks(per_column ? nvec : s->batch, per_column ? nrhs : 1, fn, &c, what);
    if (st == SLA_OK) lu_info_residuals(info, nvec, c.rn, c.bn);
    sla_free(c.rn);
    sla_free(c.bn);
    return st;
}

sla_status lu_grad_tasks(sla_solver *s, int valid, const lu_elem *lu, const double *g,
                         void *dvalues, lu_task_fn fn, const char *what)
{
    SLA_TRY(lu_check_factors(s, valid, lu));
    lu_grad_ctx c = {.s = s, .g = g, .dvalues = dvalues};
    return s->n ? lu_run_tasks(s->batch, 1, fn, &c, what) : SLA_OK;
}

void *lu_grad_slice(const lu_grad_ctx *c, int64_t b)
{
    size_t es = sla_dtype_size(c->s->dtype);
    return (char *)c->dvalues + (size_t)(b * sla_pattern_nnz(c->s->pattern)) * es;
}

void lu_to_double(sla_dtype dtype, const void *values, int64_t count, double *out)
{
    if (dtype == SLA_FLOAT64) {
        if (count > 0) memcpy(out, values, (size_t)count * sizeof(double));
        return;
    }
    for (int64_t k = 0; k < count; k++) out[k] = ((const float *)values)[k];
}

void lu_load_column(sla_dtype dtype, const void *B, int64_t n, int64_t nrhs, int64_t b, int64_t j,
                    double *out)
{
    int64_t base = b * n * nrhs + j;
    for (int64_t i = 0; i < n; i++) out[i] = lu_get(dtype, B, base + i * nrhs);
}

void lu_store_column(sla_dtype dtype, const double *x, int64_t n, int64_t nrhs, int64_t b,
                     int64_t j, void *X)
{
    int64_t base = b * n * nrhs + j;
    for (int64_t i = 0; i < n; i++) lu_put(dtype, X, base + i * nrhs, x[i]);
}

void lu_round_to_dtype(sla_dtype dtype, double *x, int64_t n)
{
    if (dtype == SLA_FLOAT32)
        for (int64_t i = 0; i < n; i++) x[i] = (double)(float)x[i];
}

double lu_residual(sla_op op, const sla_pattern *p, const double *ax, const double *x,
                   const double *b, double *work)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double ss = 0;
    if (op == SLA_OP_N) {
        for (int64_t i = 0; i < n; i++) {
            double r = b[i];
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) r -= ax[s] * x[ci[s]];
            ss += r * r;
        }
        return sqrt(ss);
    }
    memcpy(work, b, (size_t)n * sizeof *work);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) work[ci[s]] -= ax[s] * x[i];
    for (int64_t i = 0; i < n; i++) ss += work[i] * work[i];
    return sqrt(ss);
}

double lu_backward_error(sla_op op, const sla_pattern *p, const double *ax, const double *x,
                         const double *b, double *r, double *den)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++) { r[i] = b[i]; den[i] = fabs(b[i]); }
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t row = op == SLA_OP_N ? i : ci[s], col = op == SLA_OP_N ? ci[s] : i;
            r[row] -= ax[s] * x[col];
            den[row] += fabs(ax[s] * x[col]);
        }
    double omega = 0;
    for (int64_t i = 0; i < n; i++) {
        double w = den[i] > 0 ? fabs(r[i]) / den[i] : r[i] == 0 ? 0 : INFINITY;
        omega = w > omega ? w : omega;
    }
    return omega;
}

double lu_norm2(const double *x, int64_t n)
{
    double ss = 0;
    for (int64_t i = 0; i < n; i++) ss += x[i] * x[i];
    return sqrt(ss);
}

void lu_info_residuals(sla_solve_info *info, int64_t ntask, const double *rnorm,
                       const double *bnorm)
{
    info->residual_norm = 0;
    info->relative_residual = 0;
    for (int64_t t = 0; t < ntask; t++) {
        info->residual_norm = fmax(info->residual_norm, rnorm[t]);
        if (bnorm[t] > 0) info->relative_residual = fmax(info->relative_residual, rnorm[t] / bnorm[t]);
    }
}

sla_status lu_run_tasks(int64_t ntask, int64_t group, lu_task_fn fn, void *ctx, const char *what)
{
    sla_status *st = sla_malloc((size_t)ntask, sizeof *st, "task status");
    int64_t *code = sla_calloc((size_t)ntask, sizeof *code, "task status");
    if (!st || !code) { sla_free(st); sla_free(code); return SLA_ENOMEM; }
    #pragma omp parallel for num_threads(sla_threads()) schedule(dynamic, 1) if (ntask > 1)
    for (int64_t t = 0; t < ntask; t++) st[t] = fn(ctx, t, &code[t]);
    sla_status r = SLA_OK;
    for (int64_t t = 0; t < ntask && r == SLA_OK; t++) {
        if (st[t] == SLA_ENOMEM)
            r = sla_error_set(st[t], what, "batch element %lld ran out of memory",
                              (long long)(t / group));
        else if (st[t] < 0)
            r = sla_error_set(st[t], what, "batch element %lld failed (status %lld)",
                              (long long)(t / group), (long long)code[t]);
    }
    sla_free(st);
    sla_free(code);
    return r;
}

int lu_perm_sign(int64_t n, const int64_t *P, unsigned char *seen)
{
    memset(seen, 0, (size_t)n);
    int64_t cycles = 0;
    for (int64_t i = 0; i < n; i++) {
        if (seen[i]) continue;
        cycles++;
        for (int64_t k = i; !seen[k]; k = P[k]) seen[k] = 1;
    }
    return (n - cycles) % 2 ? -1 : 1;
}

void lu_append(char *dst, size_t size, const char *src)
{
    sla_text_append(dst, size, "", src);
}

void lu_format_count(double x, char *buf)
{
    if (x < 1e3) snprintf(buf, 16, "%.0f", x);
    else if (x < 1e6) snprintf(buf, 16, "%.1fk", x / 1e3);
    else if (x < 1e9) snprintf(buf, 16, "%.2fM", x / 1e6);
    else snprintf(buf, 16, "%.2fG", x / 1e9);
}
