/* The column loops shared by the complex direct backends (umfpack_z.c, cholmod_z.c): a solve
 * of every batch element and right-hand side column through the backend's one-column solve,
 * and the in-place column solves of the condition estimate (condest.c).
 * Columns are double complex; complex64
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

sla_status sla_zdirect_inverse_columns(sla_solver *s, int64_t b, sla_op op, int64_t k, double *y,
                                       sla_zcolumn_fn fn, void *ctx)
{
    int64_t n = s->n;
    double complex *w = sla_malloc((size_t)n, 2 * sizeof *w, "complex solve workspace");
    if (!w) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    for (int64_t j = 0; j < k && st == SLA_OK; j++) {
        double complex *yj = (double complex *)y + j * n;
        memcpy(w, yj, (size_t)n * sizeof *w);
        st = fn(s, ctx, b, op, w, w + n);
        memcpy(yj, w + n, (size_t)n * sizeof *w);
    }
    sla_free(w);
    return st;
}

void sla_zblock_gather(sla_dtype dtype, const void *B, int64_t b, int64_t n, int64_t nrhs,
                       int64_t j0, int64_t k, double _Complex *w)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) w[j * n + i] = get(dtype, B, (b * n + i) * nrhs + j0 + j);
}

void sla_zblock_scatter(sla_dtype dtype, const double _Complex *w, int64_t b, int64_t n,
                        int64_t nrhs, int64_t j0, int64_t k, void *X)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) put(dtype, X, (b * n + i) * nrhs + j0 + j, w[j * n + i]);
}
