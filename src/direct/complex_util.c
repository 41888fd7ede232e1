/* The column loops shared by the complex direct backends (umfpack_z.c, cholmod_z.c): a solve
 * of every batch element and right-hand side column through the backend's one-column solve,
 * and the log-determinant gradient by one solve per row. Columns are double complex; complex64
 * blocks are widened on the way in and rounded on the way out. */
#include <complex.h>
#include <string.h>

#include "direct/direct.h"

/* entry q of a block of the complex dtype, as double complex, and back */
static double complex get(sla_dtype dtype, const void *x, int64_t q)
{
    return dtype == SLA_COMPLEX128 ? ((const double complex *)x)[q]
                                   : (double complex)((const float complex *)x)[q];
}

static void put(sla_dtype dtype, void *x, int64_t q, double complex v)
{
    if (dtype == SLA_COMPLEX128) ((double complex *)x)[q] = v;
    else ((float complex *)x)[q] = (float complex)v;
}

sla_status sla_zdirect_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             sla_zcolumn_fn fn, void *ctx)
{
    int64_t n = s->n;
    double complex *w = sla_malloc((size_t)n, 2 * sizeof *w, "complex solve workspace");
    if (!w) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < s->batch && st == SLA_OK; b++)
        for (int64_t j = 0; j < nrhs && st == SLA_OK; j++) {
            for (int64_t i = 0; i < n; i++) w[i] = get(s->dtype, B, (b * n + i) * nrhs + j);
            st = fn(s, ctx, b, op, w, w + n);
            for (int64_t i = 0; i < n && st == SLA_OK; i++)
                put(s->dtype, X, (b * n + i) * nrhs + j, w[n + i]);
        }
    sla_free(w);
    return st;
}

sla_status sla_zdirect_logdet_grad(sla_solver *s, const double *g, void *dvalues,
                                   sla_zcolumn_fn fn, void *ctx)
{
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    if (n > SLA_ZDIRECT_GRAD_MAXN)
        return SLA_FAIL(SLA_EUNSUPPORTED, "n = %lld: the complex log-determinant gradient takes "
                        "n solves (no complex selected inverse yet) and is limited to n ≤ %d",
                        (long long)n, SLA_ZDIRECT_GRAD_MAXN);
    const int64_t *rp = sla_pattern_rowptr(s->pattern);
    const int32_t *ci = sla_pattern_colind(s->pattern);
    double complex *w = sla_malloc((size_t)n, 2 * sizeof *w, "complex solve workspace");
    if (!w) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < s->batch && st == SLA_OK; b++)
        for (int64_t r = 0; r < n && st == SLA_OK; r++) {
            /* y = A⁻¹ e_r, column r of A⁻¹: slot (r, c) takes g·conj(y_c) = g·conj((A⁻¹)_cr) */
            memset(w, 0, (size_t)n * sizeof *w);
            w[r] = 1;
            st = fn(s, ctx, b, SLA_OP_N, w, w + n);
            for (int64_t q = rp[r]; q < rp[r + 1] && st == SLA_OK; q++)
                put(s->dtype, dvalues, b * nnz + q, g[b] * conj(w[n + ci[q]]));
        }
    sla_free(w);
    return st;
}
