/* Clusters of computed eigenvalues, for the multiplicity rule of sla_eigsh (eigsh.c,
 * certify_multiplicity): a block Krylov method with block p whose start block is generic holds
 * min(p, m) directions of an eigenspace of dimension m, so a result with c < p copies of λ has
 * them all; c ≥ p copies may be p of more (rounding errors bring further copies in, not all of
 * them: Laplace3D10, σ = 4.1, block 2 returned 4 of the 6 copies of 4.0810 as converged). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eig/eig_internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Eigenvalues closer than this count as copies of one. A pair with residual r can be a mixture
 * of eigenvectors whose eigenvalues differ by up to about 2r (and no closer to either), so the
 * bound is twice that from the largest true residual of the element; exact copies computed
 * agree to rounding (1e-12 of the scale: ‖A‖₁; with M, max |λ| + ‖A‖₁/‖M‖₁). With M the
 * eigenvalue error of a pair is at most r/λ_min(M): bounded with M's Gershgorin lower bound,
 * else (lo_M ≤ 0) by the tolerance (max(1e-8, 10·tol) of the scale). res: [k] true residuals of
 * eig_residuals. */
double eig_cluster_gap(const eig_problem *P, int64_t b, const double *lambda, const double *res,
                       int64_t k, double tol)
{
    double scale = P->norm1[b], rmax = 0;
    for (int64_t j = 0; j < k; j++) rmax = fmax(rmax, res[j]);
    if (P->has_M) {
        double mx = 0;
        for (int64_t j = 0; j < k; j++) mx = fmax(mx, fabs(lambda[j]));
        scale = mx + (P->normM[b] > 0 ? P->norm1[b] / P->normM[b] : 0.0);
        if (!(P->mgersh_lo[b] > 0))
            return fmax(SLA_EIG_DEGENERATE, 10 * tol) * (scale > 0 ? scale : 1.0);
        rmax /= P->mgersh_lo[b];
    }
    return fmax(4 * rmax, 1e-12 * (scale > 0 ? scale : 1.0));
}

sla_status eig_max_cluster(const eig_problem *P, const eig_result *R, const double *res, double tol,
                           int64_t *cmax, double *where)
{
    int64_t k = R->k;
    double *s = sla_malloc((size_t)k, sizeof(double), "sorted eigenvalues");
    if (!s) return SLA_ENOMEM;
    *cmax = 0;
    *where = NAN;
    for (int64_t b = 0; b < P->batch; b++) {
        memcpy(s, R->lambda + b * k, sizeof(double) * (size_t)k);
        qsort(s, (size_t)k, sizeof *s, cmp_double);
        double gap = eig_cluster_gap(P, b, s, res + b * k, k, tol);
        for (int64_t i = 0, run = 1; i < k; i++, run++) {
            if (i > 0 && !(s[i] - s[i - 1] <= gap)) run = 1;
            if (run > *cmax) { *cmax = run; *where = s[i]; }
        }
    }
    sla_free(s);
    return SLA_OK;
}

sla_status eig_same_values(const eig_problem *P, const eig_result *R, const double *rres,
                           const eig_result *T, const double *tres, double tol, int64_t *b_bad,
                           double *got, double *want)
{
    int64_t k = R->k;
    double *s = sla_malloc((size_t)(2 * k), sizeof(double), "sorted eigenvalues");
    if (!s) return SLA_ENOMEM;
    *b_bad = -1;
    for (int64_t b = 0; b < P->batch && *b_bad < 0; b++) {
        memcpy(s, R->lambda + b * k, sizeof(double) * (size_t)k);
        memcpy(s + k, T->lambda + b * k, sizeof(double) * (size_t)k);
        qsort(s, (size_t)k, sizeof *s, cmp_double);
        qsort(s + k, (size_t)k, sizeof *s, cmp_double);
        double gap = fmax(eig_cluster_gap(P, b, s, rres + b * k, k, tol),
                          eig_cluster_gap(P, b, s + k, tres + b * k, k, tol));
        for (int64_t j = 0; j < k; j++)
            if (!(fabs(s[j] - s[k + j]) <= gap)) {
                *b_bad = b;
                *got = s[j];
                *want = s[k + j];
                break;
            }
    }
    sla_free(s);
    return SLA_OK;
}
