/* Vector helpers of the nonlinear drivers: float64 arithmetic, and the conversions to and from
 * the problem's dtype at the callbacks and the linear solves. */
#include <math.h>
#include <string.h>

#include "nonlinear/nl_internal.h"

#define SLA_TEMPLATE "nonlinear/t_nl_vec.h"
#include "core/instantiate.h"

void nl_put(sla_dtype dtype, const double *x, void *y, int64_t n)
{
    if (dtype == SLA_FLOAT64) {
        if ((const void *)x != y) memcpy(y, x, (size_t)n * sizeof *x);
        return;
    }
    SLA_DISPATCH(dtype, put, (x, y, n));
}

void nl_get(sla_dtype dtype, const void *x, double *y, int64_t n)
{
    if (dtype == SLA_FLOAT64) {
        if (x != (const void *)y) memcpy(y, x, (size_t)n * sizeof *y);
        return;
    }
    SLA_DISPATCH(dtype, get, (x, y, n));
}

/* ‖x‖₂ without overflow or underflow for entries near the ends of the double range: scaled by
 * the largest magnitude (LAPACK dnrm2's idea, in two passes) */
double nl_norm2(const double *x, int64_t n)
{
    double amax = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (!(a <= amax)) amax = a;          /* NaN propagates */
    }
    if (amax == 0 || !isfinite(amax)) return amax;
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        double t = x[i] / amax;
        s += t * t;
    }
    return amax * sqrt(s);
}

double nl_dot(const double *x, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

void nl_axpby(double a, const double *x, double b, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = a * x[i] + b * y[i];
}

void nl_waxpy(const double *x, double a, const double *y, double *z, int64_t n)
{
    for (int64_t i = 0; i < n; i++) z[i] = x[i] + a * y[i];
}

int nl_finite(const double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}
