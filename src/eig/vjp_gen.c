/* sla_eigsh_generalized_vjp: the adjoint of (Λ, V) of A v = λ M v: argument checks, M's batch
 * (a shared M sums over A's batch), the dtype of the outputs. The terms are in vjp.c (eig_vjp):
 * with M-normalized eigenvectors (v_iᵀ M v_i = 1), dλ_i = v_iᵀ (dA − λ_i dM) v_i (Hellmann–Feynman
 * for the pencil), and the eigenvector terms through (A − λ_i M)⁺. Everything runs in float64. */
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

static void store(sla_dtype t, void *out, const double *x, int64_t cnt)
{
    for (int64_t q = 0; q < cnt; q++) {
        if (t == SLA_FLOAT64) ((double *)out)[q] = x[q];
        else ((float *)out)[q] = (float)x[q];
    }
}

#define API "sla_eigsh_generalized_vjp"

static sla_status check_inputs(const sla_matrix *A, const sla_matrix *M, int64_t k, int64_t *n)
{
    SLA_TRY(sla_matrix_check_for(API, "A", A, 1 | SLA_CHECK_COMPLEX_OK));
    SLA_TRY(sla_matrix_check_for(API, "M", M, 1 | SLA_CHECK_COMPLEX_OK));
    *n = sla_pattern_nrows(A->pattern);
    if (sla_pattern_ncols(A->pattern) != *n)
        return SLA_FAIL_AS(API, SLA_ESHAPE, "A is %lld × %lld; eigsh needs a square matrix",
                           (long long)*n, (long long)sla_pattern_ncols(A->pattern));
    if (sla_pattern_nrows(M->pattern) != *n || sla_pattern_ncols(M->pattern) != *n)
        return SLA_FAIL_AS(API, SLA_ESHAPE, "M is %lld × %lld but A is %lld × %lld",
                           (long long)sla_pattern_nrows(M->pattern),
                           (long long)sla_pattern_ncols(M->pattern), (long long)*n, (long long)*n);
    if (M->dtype != A->dtype)
        return SLA_FAIL_AS(API, SLA_EDTYPE, "M is %s but A is %s", sla_dtype_name(M->dtype),
                           sla_dtype_name(A->dtype));
    SLA_CHECK_ARG_AS(API, M->batch == 1 || M->batch == A->batch, "M has batch %lld; it must be 1 "
                     "or A's batch %lld", (long long)M->batch, (long long)A->batch);
    SLA_CHECK_ARG_AS(API, k >= 1 && k <= *n, "k = %lld is not in [1, n] = [1, %lld]",
                     (long long)k, (long long)*n);
    return SLA_OK;
}

static sla_status run(const sla_matrix *A, const sla_matrix *M, int64_t k,
                      const void *eigenvalues, const void *eigenvectors,
                      const void *g_eigenvalues, const void *g_eigenvectors, void *dA, void *dM)
{
    int64_t n;
    SLA_TRY(check_inputs(A, M, k, &n));
    if (sla_dtype_is_complex(A->dtype))     /* Hermitian: hermitian_vjp.c */
        return eig_hermitian_vjp(API, A, M, k, eigenvalues, eigenvectors, g_eigenvalues,
                                 g_eigenvectors, dA, dM);
    SLA_CHECK_ARG_AS(API, eigenvalues && eigenvectors, "%s is NULL (the outputs of sla_eigsh are "
                     "needed)", eigenvalues ? "eigenvectors" : "eigenvalues");
    sla_dtype dt = A->dtype;
    int64_t batch = A->batch, nnz = sla_pattern_nnz(A->pattern), nnzm = sla_pattern_nnz(M->pattern);
    int64_t nk = batch * n * k, bad;
    size_t es = sla_dtype_size(dt);
    const sla_buf out[] = {
        {"dA", dA, (size_t)(batch * nnz) * es},
        {"dM", dM, (size_t)(M->batch * nnzm) * es}};
    const sla_buf in[] = {
        {"A's values", A->values, (size_t)(batch * nnz) * es},
        {"M's values", M->values, (size_t)(M->batch * nnzm) * es},
        {"eigenvalues", eigenvalues, (size_t)(batch * k) * es},
        {"eigenvectors", eigenvectors, (size_t)nk * es},
        {"g_eigenvalues", g_eigenvalues, (size_t)(batch * k) * es},
        {"g_eigenvectors", g_eigenvectors, (size_t)nk * es}};
    SLA_TRY(sla_check_aliasing(API, out, 2, in, 6));
    if (!sla_all_finite(dt, eigenvalues, batch * k, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "eigenvalues[%lld] is not finite", (long long)bad);
    if (!sla_all_finite(dt, eigenvectors, nk, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "eigenvectors entry %lld is not finite", (long long)bad);
    if (g_eigenvalues && !sla_all_finite(dt, g_eigenvalues, batch * k, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "g_eigenvalues[%lld] is not finite", (long long)bad);
    if (g_eigenvectors && !sla_all_finite(dt, g_eigenvectors, nk, &bad))
        return SLA_FAIL_AS(API, SLA_ENONFINITE, "g_eigenvectors entry %lld is not finite", (long long)bad);
    eig_problem P;
    SLA_TRY(eig_problem_init(A, &P));
    double *da = sla_calloc((size_t)(batch * nnz + 1), sizeof(double), "gradient of A");
    double *dm = sla_calloc((size_t)(batch * nnzm + 1), sizeof(double), "gradient of M");
    sla_status st = (da && dm) ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) st = eig_problem_set_mass(&P, M);
    if (st == SLA_OK && (g_eigenvalues || g_eigenvectors))
        st = eig_vjp(&P, dt, k, eigenvalues, eigenvectors, g_eigenvalues, g_eigenvectors, da, dm);
    /* a shared M (batch 1) receives the sum over A's batch, in batch order */
    for (int64_t b = 1; st == SLA_OK && M->batch == 1 && b < batch; b++)
        for (int64_t t = 0; t < nnzm; t++) dm[t] += dm[b * nnzm + t];
    if (st == SLA_OK && dA) store(dt, dA, da, batch * nnz);
    if (st == SLA_OK && dM) store(dt, dM, dm, M->batch * nnzm);
    sla_free(da);
    sla_free(dm);
    eig_problem_free(&P);
    return st;
}

/* Errors from anything this calls (a factorization, an allocation) start with the public name. */
sla_status sla_eigsh_generalized_vjp(const sla_matrix *A, const sla_matrix *M, int64_t k,
                                     const void *eigenvalues, const void *eigenvectors,
                                     const void *g_eigenvalues, const void *g_eigenvectors,
                                     void *dA, void *dM)
{
    return sla_error_attribute(run(A, M, k, eigenvalues, eigenvectors, g_eigenvalues,
                                   g_eigenvectors, dA, dM), API);
}
