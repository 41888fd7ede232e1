/* Results of the drivers and the true residuals ‖A x − λ x‖₂ (‖A x − λ M x‖₂/‖x‖₂ with M) with
 * Rayleigh-quotient eigenvalues, computed the same way for every method. */
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

sla_status eig_result_init(eig_result *R, int64_t n, int64_t batch, int64_t k)
{
    memset(R, 0, sizeof *R);
    R->k = k;
    R->sigma = NAN;
    R->lambda = sla_calloc((size_t)(batch * k), sizeof(double), "eigenvalues");
    R->X = sla_calloc((size_t)(batch * k * n), sizeof(double), "eigenvectors");
    R->nconv = sla_calloc((size_t)batch, sizeof(int64_t), "converged counts");
    if (!R->lambda || !R->X || !R->nconv) { eig_result_free(R); return SLA_ENOMEM; }
    return SLA_OK;
}

void eig_result_free(eig_result *R)
{
    sla_free(R->lambda);
    sla_free(R->X);
    sla_free(R->nconv);
    R->lambda = R->X = NULL;
    R->nconv = NULL;
}

sla_status eig_residuals(const eig_problem *P, eig_result *R, double *res)
{
    int64_t n = P->n, k = R->k, batch = P->batch;
    double *x = sla_malloc((size_t)(batch * n * k), sizeof(double), "eigenvector block");
    double *y = sla_malloc((size_t)(batch * n * k), sizeof(double), "A times eigenvectors");
    double *z = P->has_M ? sla_malloc((size_t)(batch * n * k), sizeof(double), "M times eigenvectors")
                         : NULL;
    sla_status st = (x && y && (z || !P->has_M)) ? SLA_OK : SLA_ENOMEM;
    for (int64_t b = 0; b < batch && st == SLA_OK; b++)
        for (int64_t j = 0; j < k; j++) {
            double *v = R->X + (b * k + j) * n, nrm = 0;
            for (int64_t i = 0; i < n; i++) nrm += v[i] * v[i];
            nrm = sqrt(nrm);
            for (int64_t i = 0; i < n; i++) {
                if (nrm > 0) v[i] /= nrm;
                x[(b * n + i) * k + j] = v[i];
            }
        }
    if (st == SLA_OK && z) {
        /* M-normalization: x ← x / sqrt(xᵀ M x) (after the unit scaling above, against overflow) */
        st = sla_spmv(SLA_OP_N, 1.0, &P->Md, x, 1, k, 0.0, z);
        R->spmv += batch * k;
        for (int64_t b = 0; b < batch && st == SLA_OK; b++)
            for (int64_t j = 0; j < k; j++) {
                double q = 0;
                double *xb = x + b * n * k, *zb = z + b * n * k, *v = R->X + (b * k + j) * n;
                for (int64_t i = 0; i < n; i++) q += xb[i * k + j] * zb[i * k + j];
                double s = q > 0 ? 1.0 / sqrt(q) : 0.0;
                for (int64_t i = 0; i < n; i++) {
                    xb[i * k + j] *= s;
                    zb[i * k + j] *= s;
                    v[i] *= s;
                }
            }
    }
    if (st == SLA_OK) st = sla_spmv(SLA_OP_N, 1.0, &P->Ad, x, 1, k, 0.0, y);
    if (st == SLA_OK) {
        R->spmv += batch * k;
        for (int64_t b = 0; b < batch; b++)
            for (int64_t j = 0; j < k; j++) {
                double q = 0, r = 0, nx = 0;
                const double *xb = x + b * n * k, *yb = y + b * n * k;
                const double *mb = z ? z + b * n * k : xb;
                for (int64_t i = 0; i < n; i++) q += xb[i * k + j] * yb[i * k + j];
                for (int64_t i = 0; i < n; i++) {
                    double d = yb[i * k + j] - q * mb[i * k + j];
                    r += d * d;
                    nx += xb[i * k + j] * xb[i * k + j];
                }
                R->lambda[b * k + j] = q;
                /* a zero column is a pair the method did not deliver (a zero eigenvalue with a
                 * zero residual is a delivered one: the zero matrix's) */
                res[b * k + j] = nx == 0 ? INFINITY : z ? sqrt(r / nx) : sqrt(r);
            }
    }
    sla_free(x);
    sla_free(y);
    sla_free(z);
    return st;
}

sla_status eig_converged_status(int64_t nconv, int64_t k, int has_M, double maxres, double tol)
{
    if (nconv >= k) return SLA_OK;
    return EIG_FAIL(SLA_NOT_CONVERGED, "%lld of %lld eigenpairs converged (max residual %s = "
                    "%.3g > tol = %.3g)", (long long)nconv, (long long)k,
                    has_M ? "‖Av − λMv‖/((‖A‖₁ + |λ|‖M‖₁)‖v‖)" : "‖Av − λv‖/‖A‖₁", maxres, tol);
}
