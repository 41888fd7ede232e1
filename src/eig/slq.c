/* Stochastic Lanczos quadrature for log det A (sla/logdet.h): Lanczos on all probes at once
 * (columns of an [n][p] block, one SpMV per step), then per probe the eigen-decomposition of
 * its tridiagonal matrix (LAPACK dstev) and the Gauss quadrature Σ τ_k² log θ_k. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "core/internal.h"

/* the quadrature of one probe from its Lanczos coefficients (alpha [m], beta [m − 1]) */
static sla_status quadrature(const double *alpha, const double *beta, int64_t m, double *work,
                             double *out, int64_t probe)
{
    double *d = work, *e = work + m, *z = work + 2 * m;
    memcpy(d, alpha, sizeof *d * (size_t)m);
    if (m > 1) memcpy(e, beta, sizeof *e * (size_t)(m - 1));
    if (LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', (lapack_int)m, d, e, z, (lapack_int)m) != 0)
        return SLA_FAIL_AS("sla_logdet_slq", SLA_EBREAKDOWN, "dstev failed on probe %lld",
                           (long long)probe);
    double s = 0;
    for (int64_t k = 0; k < m; k++) {
        if (!(d[k] > 0))
            return SLA_FAIL_AS("sla_logdet_slq", SLA_ENOTSPD, "probe %lld: Ritz value %g ≤ 0: "
                               "A is not symmetric positive definite", (long long)probe, d[k]);
        s += z[k * m] * z[k * m] * log(d[k]);             /* τ_k = first component */
    }
    *out = s;
    return SLA_OK;
}

/* Lanczos on the p columns of v (unit columns), `steps` steps: alpha [p][steps], beta
 * [p][steps]; mlen[j] = steps done for probe j (fewer on breakdown) */
static sla_status lanczos_block(const sla_matrix *A1, int64_t n, int64_t p, int64_t steps,
                                double *v, double *vprev, double *w, double *alpha,
                                double *beta, int64_t *mlen)
{
    for (int64_t j = 0; j < p; j++) mlen[j] = steps;
    memset(vprev, 0, sizeof *vprev * (size_t)(n * p));
    for (int64_t it = 0; it < steps; it++) {
        SLA_TRY(sla_spmv(SLA_OP_N, 1.0, A1, v, 0, p, 0.0, w));
        for (int64_t j = 0; j < p; j++) {
            if (it >= mlen[j]) continue;
            double a = 0, bprev = it ? beta[j * steps + it - 1] : 0, b2 = 0;
            for (int64_t i = 0; i < n; i++) a += w[i * p + j] * v[i * p + j];
            for (int64_t i = 0; i < n; i++) {
                double r = w[i * p + j] - a * v[i * p + j] - bprev * vprev[i * p + j];
                w[i * p + j] = r;
                b2 += r * r;
            }
            alpha[j * steps + it] = a;
            double b = sqrt(b2);
            beta[j * steps + it] = b;
            if (!isfinite(a) || !isfinite(b))
                return SLA_FAIL_AS("sla_logdet_slq", SLA_ENONFINITE, "probe %lld: Lanczos "
                                   "produced a non-finite coefficient", (long long)j);
            if (it + 1 < steps && b <= 1e-14 * fabs(a)) {     /* invariant subspace */
                mlen[j] = it + 1;
                continue;
            }
            for (int64_t i = 0; i < n; i++) {
                vprev[i * p + j] = v[i * p + j];
                v[i * p + j] = w[i * p + j] / b;
            }
        }
    }
    return SLA_OK;
}

sla_status sla_logdet_slq(const sla_matrix *A, int64_t nprobe, const double *Z, int64_t steps,
                          double *logdet, double *std_error)
{
    SLA_TRY(sla_matrix_check_for(__func__, "A", A, 1));
    SLA_CHECK_ARG(Z && logdet, "Z or logdet is NULL");
    SLA_CHECK_ARG(nprobe >= 1 && steps >= 1, "nprobe = %lld and steps = %lld must be ≥ 1",
                  (long long)nprobe, (long long)steps);
    if (A->dtype != SLA_FLOAT64)
        return SLA_FAIL(SLA_EDTYPE, "A must be float64 (convert the values first)");
    int64_t n = sla_pattern_nrows(A->pattern), p = nprobe;
    if (n != sla_pattern_ncols(A->pattern))
        return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld: log det needs a square matrix",
                        (long long)n, (long long)sla_pattern_ncols(A->pattern));
    if (steps > n) steps = n > 0 ? n : 1;
    double *buf = sla_malloc((size_t)(3 * n * p + 2 * p * steps + 3 * steps * steps + 3 * steps),
                             sizeof *buf, "Lanczos vectors");
    int64_t *mlen = sla_malloc((size_t)p, sizeof *mlen, "Lanczos lengths");
    double *norms = sla_malloc((size_t)p, sizeof *norms, "probe norms");
    sla_status st = buf && mlen && norms ? SLA_OK : SLA_ENOMEM;
    double *v = buf, *vprev = v + n * p, *w = vprev + n * p, *alpha = w + n * p;
    double *beta = alpha + p * steps, *work = beta + p * steps;
    for (int64_t j = 0; st == SLA_OK && j < p; j++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += Z[i * p + j] * Z[i * p + j];
        norms[j] = s;
        if (!(s > 0) || !isfinite(s))
            st = SLA_FAIL(SLA_EINVAL, "probe %lld is zero or not finite", (long long)j);
    }
    for (int64_t t = 0; st == SLA_OK && t < A->batch; t++) {
        sla_matrix A1 = *A;
        A1.batch = 1;
        A1.values = (const char *)A->values + (size_t)t * sla_pattern_nnz(A->pattern) * 8;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < p; j++) v[i * p + j] = Z[i * p + j] / sqrt(norms[j]);
        st = lanczos_block(&A1, n, p, steps, v, vprev, w, alpha, beta, mlen);
        double sum = 0, sum2 = 0;
        for (int64_t j = 0; st == SLA_OK && j < p; j++) {
            double q = 0;
            st = quadrature(alpha + j * steps, beta + j * steps, mlen[j], work, &q, j);
            q *= norms[j];
            sum += q;
            sum2 += q * q;
        }
        if (st != SLA_OK) break;
        logdet[t] = sum / (double)p;
        if (std_error)
            std_error[t] = p > 1 ? sqrt(fmax(sum2 - sum * sum / (double)p, 0) /
                                        ((double)p * (double)(p - 1))) : NAN;
    }
    sla_free(buf);
    sla_free(mlen);
    sla_free(norms);
    return sla_error_attribute(st, __func__);
}
