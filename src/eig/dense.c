/* The dense path: LAPACK dsyevr (dsygvd for A v = λ M v) on the dense copy of each batch
 * element, for small n or k close to n (n ≤ SLA_EIGSH_DENSE_MAX_N). SA/LA ask dsyevr for an
 * index range only; LM, SM, sigma and the generalized problem compute the whole spectrum and
 * pick the k nearest. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig/eig_internal.h"

typedef struct keyed { double key; int64_t idx; } keyed;

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* A v = λ M v by LAPACK dsygvd (itype 1: Cholesky of M, then the standard problem), all
 * eigenvalues ascending in w and M-orthonormal eigenvectors in Z (n × n, column-major). D and DM
 * are the dense A_b and M_b (row-major = column-major, symmetric) and are overwritten. */
static sla_status dense_generalized(int64_t n, int64_t b, double *D, double *DM, double *w, double *Z)
{
    lapack_int info = LAPACKE_dsygvd(LAPACK_COL_MAJOR, 1, 'V', 'U', (lapack_int)n, D, (lapack_int)n,
                                     DM, (lapack_int)n, w);
    if (info > (lapack_int)n)
        return EIG_FAIL(SLA_ENOTSPD, "the mass matrix M is not positive definite (batch %lld): its "
                        "Cholesky factorization (LAPACK dsygvd) fails at column %lld (leading minor "
                        "of order %lld)", (long long)b, (long long)(info - n - 1),
                        (long long)(info - n));
    if (info != 0)
        return EIG_FAIL(info < 0 ? SLA_EINTERNAL : SLA_EBREAKDOWN,
                        "LAPACK dsygvd returned info = %d (batch %lld)", (int)info, (long long)b);
    memcpy(Z, D, sizeof(double) * (size_t)(n * n));
    return SLA_OK;
}

/* dsyevr on the dense A_b (overwritten): an index range (SA/LA) or all eigenvalues; *m found. */
static sla_status dense_standard(int64_t n, int64_t b, int range_only, sla_eigsh_which which,
                                 int64_t k, double *D, double *w, double *Z, lapack_int *supp,
                                 lapack_int *m)
{
    lapack_int il = 1, iu = (lapack_int)n;
    if (range_only) {
        il = which == SLA_EIGSH_SA ? 1 : (lapack_int)(n - k + 1);
        iu = which == SLA_EIGSH_SA ? (lapack_int)k : (lapack_int)n;
    }
    lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', range_only ? 'I' : 'A', 'U',
                                     (lapack_int)n, D, (lapack_int)n, 0.0, 0.0, il, iu, 0.0,
                                     m, w, Z, (lapack_int)n, supp);
    if (info != 0)
        return EIG_FAIL(info < 0 ? SLA_EINTERNAL : SLA_EBREAKDOWN,
                        "LAPACK dsyevr returned info = %d (batch %lld)", (int)info, (long long)b);
    return SLA_OK;
}

sla_status eig_dense(const eig_problem *P, sla_eigsh_which which, double sigma, eig_result *R)
{
    int64_t n = P->n, k = R->k;
    if (n > SLA_EIGSH_DENSE_MAX_N)
        return EIG_FAIL(SLA_EUNSUPPORTED, "the dense path is limited to n ≤ %d (n = %lld)",
                        SLA_EIGSH_DENSE_MAX_N, (long long)n);
    int range_only = isnan(sigma) && (which == SLA_EIGSH_SA || which == SLA_EIGSH_LA);
    double *D = sla_malloc((size_t)(n * n), sizeof(double), "dense matrix");
    double *w = sla_malloc((size_t)n, sizeof(double), "eigenvalues");
    double *Z = sla_malloc((size_t)(n * n), sizeof(double), "eigenvectors");
    lapack_int *supp = sla_malloc((size_t)(2 * n), sizeof(lapack_int), "support");
    keyed *ord = sla_malloc((size_t)n, sizeof(keyed), "order");
    double *DM = P->has_M ? sla_malloc((size_t)(n * n), sizeof(double), "dense M") : NULL;
    sla_status st = (D && w && Z && supp && ord && (DM || !P->has_M)) ? SLA_OK : SLA_ENOMEM;
    for (int64_t b = 0; b < P->batch && st == SLA_OK; b++) {
        sla_matrix Ab = sla_matrix_view(P->p, SLA_FLOAT64, 1, (const double *)P->Ad.values + b * P->nnz);
        st = sla_matrix_to_dense(&Ab, D);      /* row-major = column-major for symmetric A */
        if (st != SLA_OK) break;
        lapack_int m = (lapack_int)n;
        if (P->has_M) {
            sla_matrix Mb = eig_mass_view(P, b);
            st = sla_matrix_to_dense(&Mb, DM);
            if (st == SLA_OK) st = dense_generalized(n, b, D, DM, w, Z);
        } else {
            st = dense_standard(n, b, range_only, which, k, D, w, Z, supp, &m);
        }
        if (st != SLA_OK) break;
        /* pick k of the m computed: the k with the smallest key */
        for (lapack_int i = 0; i < m; i++) {
            double key = 0;
            if (!isnan(sigma)) key = fabs(w[i] - sigma);
            else if (which == SLA_EIGSH_LM) key = -fabs(w[i]);
            else if (which == SLA_EIGSH_SM) key = fabs(w[i]);
            else if (which == SLA_EIGSH_LA) key = -w[i];
            else key = w[i];
            ord[i] = (keyed){key, i};
        }
        qsort(ord, (size_t)m, sizeof *ord, by_key);
        for (int64_t j = 0; j < k; j++) {
            R->lambda[b * k + j] = w[ord[j].idx];
            memcpy(R->X + (b * k + j) * n, Z + ord[j].idx * n, sizeof(double) * (size_t)n);
        }
        R->nconv[b] = k;
    }
    sla_free(D);
    sla_free(w);
    sla_free(Z);
    sla_free(supp);
    sla_free(ord);
    sla_free(DM);
    if (st == SLA_OK && P->has_M)
        snprintf(R->what, sizeof R->what, "dense LAPACK dsygvd (A v = λ M v) on %lld × %lld",
                 (long long)n, (long long)n);
    else if (st == SLA_OK)
        snprintf(R->what, sizeof R->what, "dense LAPACK dsyevr (%s) on %lld × %lld",
                 range_only ? "index range" : "all eigenvalues", (long long)n, (long long)n);
    return st;
}
