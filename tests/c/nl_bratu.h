/* The Bratu problem −Δu = λ eᵘ, u = 0 on the boundary, for the nonlinear tests: 1D on (0, 1)
 * (3-point stencil, nx interior points) and 2D on the unit square (5-point, nx × nx), with
 *   F(u) = −Δ_h u − g(u),  g = λ eᵘ,  J = −Δ_h − diag(g'(u)),  A = −Δ_h (Picard's
 *   linearization), (∂F/∂λ)ᵀ w = −Σ ∂g/∂λ(uᵢ) wᵢ (the parameter VJP, into dlambda).
 * cubic = 1 replaces g by λ − u³ (−Δu + u³ = λ: a monotone problem with one solution, on which
 * Newton from a far start takes many steps: u³ shrinks by 2/3 a step).
 * Failure injection: fail_at (the residual callback returns 7 at that call), nan_at (F gets a
 * NaN at that call), both counted from 1 over the calls of the residual callback. */
#ifndef SLA_NL_BRATU_H
#define SLA_NL_BRATU_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct bratu {
    int dim;
    int64_t nx, n;
    double lambda, h;
    sla_pattern *p;
    double *lap;                 /* −Δ_h values on p (CSR) */
    int cubic;                   /* g = λ − u³ instead of λ eᵘ */
    double dlambda;              /* param_vjp accumulates here */
    int64_t calls, fail_at, nan_at;
} bratu;

static void bratu_init(bratu *b, int dim, int64_t nx, double lambda)
{
    memset(b, 0, sizeof *b);
    b->dim = dim;
    b->nx = nx;
    b->n = dim == 1 ? nx : nx * nx;
    b->lambda = lambda;
    b->h = 1.0 / (double)(nx + 1);
    int64_t n = b->n, cap = 5 * n, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap), h2 = b->h * b->h;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = i % nx, y = i / nx;
        r[k] = i; c[k] = i; v[k++] = 2.0 * dim / h2;
        if (x > 0) { r[k] = i; c[k] = i - 1; v[k++] = -1 / h2; }
        if (x < nx - 1) { r[k] = i; c[k] = i + 1; v[k++] = -1 / h2; }
        if (dim == 2 && y > 0) { r[k] = i; c[k] = i - nx; v[k++] = -1 / h2; }
        if (dim == 2 && y < nx - 1) { r[k] = i; c[k] = i + nx; v[k++] = -1 / h2; }
    }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, &b->p));
    b->lap = malloc(sizeof(double) * (size_t)sla_pattern_nnz(b->p));
    TU_OK(sla_values_gather(b->p, SLA_FLOAT64, 1, v, b->lap));
    b->fail_at = b->nan_at = -1;
    free(r);
    free(c);
    free(v);
}

static void bratu_free(bratu *b)
{
    sla_pattern_free(&b->p);
    free(b->lap);
}

static double bratu_g(const bratu *b, double u)
{
    return b->cubic ? b->lambda - u * u * u : b->lambda * exp(u);
}

static double bratu_gu(const bratu *b, double u)
{
    return b->cubic ? -3 * u * u : b->lambda * exp(u);
}

static double bratu_glambda(const bratu *b, double u) { return b->cubic ? 1 : exp(u); }

static int bratu_residual(void *ctx, const void *uv, void *Fv)
{
    bratu *b = ctx;
    const double *u = uv;
    double *F = Fv;
    b->calls++;
    if (b->calls == b->fail_at) return 7;
    const int64_t *rp = sla_pattern_rowptr(b->p);
    const int32_t *ci = sla_pattern_colind(b->p);
    for (int64_t i = 0; i < b->n; i++) {
        double s = 0;
        for (int64_t q = rp[i]; q < rp[i + 1]; q++) s += b->lap[q] * u[ci[q]];
        F[i] = s - bratu_g(b, u[i]);
    }
    if (b->calls == b->nan_at) F[b->n / 2] = NAN;
    return 0;
}

static int bratu_jacobian(void *ctx, const void *uv, void *values)
{
    bratu *b = ctx;
    const double *u = uv;
    double *J = values;
    const int64_t *rp = sla_pattern_rowptr(b->p);
    const int32_t *ci = sla_pattern_colind(b->p);
    for (int64_t i = 0; i < b->n; i++)
        for (int64_t q = rp[i]; q < rp[i + 1]; q++)
            J[q] = b->lap[q] - (ci[q] == i ? bratu_gu(b, u[i]) : 0);
    return 0;
}

static int bratu_linearization(void *ctx, const void *uv, void *values)
{
    bratu *b = ctx;
    (void)uv;
    memcpy(values, b->lap, sizeof(double) * (size_t)sla_pattern_nnz(b->p));
    return 0;
}

static int bratu_apply(void *ctx, sla_op op, const void *uv, const void *vv, void *yv)
{
    bratu *b = ctx;
    (void)op;                    /* J is symmetric */
    const double *u = uv, *v = vv;
    double *y = yv;
    const int64_t *rp = sla_pattern_rowptr(b->p);
    const int32_t *ci = sla_pattern_colind(b->p);
    for (int64_t i = 0; i < b->n; i++) {
        double s = 0;
        for (int64_t q = rp[i]; q < rp[i + 1]; q++) s += b->lap[q] * v[ci[q]];
        y[i] = s - bratu_gu(b, u[i]) * v[i];
    }
    return 0;
}

static int bratu_param_vjp(void *ctx, const void *uv, const void *wv)
{
    bratu *b = ctx;
    const double *u = uv, *w = wv;
    for (int64_t i = 0; i < b->n; i++) b->dlambda -= bratu_glambda(b, u[i]) * w[i];
    return 0;
}

/* The problem with every callback (methods use what they need). */
static sla_nonlinear_problem bratu_problem(bratu *b)
{
    sla_nonlinear_problem P = {.n = b->n, .dtype = SLA_FLOAT64, .residual = bratu_residual,
                               .pattern = b->p, .jacobian = bratu_jacobian,
                               .linearization = bratu_linearization, .jacobian_apply = bratu_apply,
                               .param_vjp = bratu_param_vjp, .ctx = b};
    return P;
}

/* The 1D closed form u(x) = −2 ln(cosh((x − ½)θ/2) / cosh(θ/4)), θ = √(2λ) cosh(θ/4) (lower
 * branch, by fixed-point iteration from θ = 0, which converges there for λ < λ*). */
static inline double bratu1d_exact(double lambda, double x)
{
    double t = 0;
    for (int i = 0; i < 200; i++) t = sqrt(2 * lambda) * cosh(t / 4);
    return -2 * log(cosh((x - 0.5) * t / 2) / cosh(t / 4));
}

#endif
