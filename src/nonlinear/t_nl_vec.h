/* Template of nl_vec.c: the dtype boundary of the nonlinear drivers (REAL, FN from
 * core/instantiate.h). */

static void FN(put)(const double *x, REAL *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = (REAL)x[i];
}

static void FN(get)(const REAL *x, double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = (double)x[i];
}
