/* sla_eigsh_generalized_vjp: the adjoint of the eigenvalues of A v = λ M v.
 *
 * With M-normalized eigenvectors (v_iᵀ M v_i = 1), differentiating A v_i = λ_i M v_i and
 * multiplying by v_iᵀ gives dλ_i = v_iᵀ (dA − λ_i dM) v_i (Hellmann–Feynman for the pencil), so
 * ∂λ_i/∂a_s = v_i[r_s]·v_i[c_s] on A's pattern and ∂λ_i/∂m_t = −λ_i·v_i[r_t]·v_i[c_t] on M's own
 * pattern: two sla_pattern_outer_add calls with the columns of V scaled by gλ_i and −λ_i·gλ_i.
 * Everything runs in float64. */
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

static double ld(sla_dtype t, const void *p, int64_t i)
{
    return t == SLA_FLOAT64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

static void store(sla_dtype t, void *out, const double *x, int64_t cnt)
{
    for (int64_t q = 0; q < cnt; q++) {
        if (t == SLA_FLOAT64) ((double *)out)[q] = x[q];
        else ((float *)out)[q] = (float)x[q];
    }
}

static sla_status check_inputs(const sla_matrix *A, const sla_matrix *M, int64_t k, int64_t *n)
{
    SLA_TRY(sla_matrix_check_for("sla_eigsh_generalized_vjp", "A", A, 1));
    SLA_TRY(sla_matrix_check_for("sla_eigsh_generalized_vjp", "M", M, 1));
    *n = sla_pattern_nrows(A->pattern);
    if (sla_pattern_ncols(A->pattern) != *n)
        return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld; eigsh needs a square matrix", (long long)*n,
                        (long long)sla_pattern_ncols(A->pattern));
    if (sla_pattern_nrows(M->pattern) != *n || sla_pattern_ncols(M->pattern) != *n)
        return SLA_FAIL(SLA_ESHAPE, "M is %lld × %lld but A is %lld × %lld",
                        (long long)sla_pattern_nrows(M->pattern), (long long)sla_pattern_ncols(M->pattern),
                        (long long)*n, (long long)*n);
    if (M->dtype != A->dtype)
        return SLA_FAIL(SLA_EDTYPE, "M is %s but A is %s", sla_dtype_name(M->dtype),
                        sla_dtype_name(A->dtype));
    SLA_CHECK_ARG(M->batch == 1 || M->batch == A->batch, "M has batch %lld; it must be 1 or A's "
                  "batch %lld", (long long)M->batch, (long long)A->batch);
    SLA_CHECK_ARG(k >= 1 && k <= *n, "k = %lld is not in [1, n] = [1, %lld]", (long long)k, (long long)*n);
    return SLA_OK;
}

sla_status sla_eigsh_generalized_vjp(const sla_matrix *A, const sla_matrix *M, int64_t k,
                                     const void *eigenvalues, const void *eigenvectors,
                                     const void *g_eigenvalues, const void *g_eigenvectors,
                                     void *dA, void *dM)
{
    int64_t n;
    SLA_TRY(check_inputs(A, M, k, &n));
    SLA_CHECK_ARG(eigenvalues && eigenvectors, "%s is NULL (the outputs of sla_eigsh are needed)",
                  eigenvalues ? "eigenvectors" : "eigenvalues");
    sla_dtype dt = A->dtype;
    int64_t batch = A->batch, nnz = sla_pattern_nnz(A->pattern), nnzm = sla_pattern_nnz(M->pattern);
    int64_t nk = batch * n * k, bad;
    size_t es = sla_dtype_size(dt);
    const eig_array out[] = {
        {"dA", dA, (size_t)(batch * nnz) * es},
        {"dM", dM, (size_t)(M->batch * nnzm) * es}};
    const eig_array in[] = {
        {"A's values", A->values, (size_t)(batch * nnz) * es},
        {"M's values", M->values, (size_t)(M->batch * nnzm) * es},
        {"eigenvalues", eigenvalues, (size_t)(batch * k) * es},
        {"eigenvectors", eigenvectors, (size_t)nk * es},
        {"g_eigenvalues", g_eigenvalues, (size_t)(batch * k) * es},
        {"g_eigenvectors", g_eigenvectors, (size_t)nk * es}};
    SLA_TRY(eig_check_aliasing(__func__, out, 2, in, 6));
    if (!sla_all_finite(dt, eigenvalues, batch * k, &bad))
        return SLA_FAIL(SLA_ENONFINITE, "eigenvalues[%lld] is not finite", (long long)bad);
    if (!sla_all_finite(dt, eigenvectors, nk, &bad))
        return SLA_FAIL(SLA_ENONFINITE, "eigenvectors entry %lld is not finite", (long long)bad);
    if (g_eigenvalues && !sla_all_finite(dt, g_eigenvalues, batch * k, &bad))
        return SLA_FAIL(SLA_ENONFINITE, "g_eigenvalues[%lld] is not finite", (long long)bad);
    for (int64_t q = 0; g_eigenvectors && q < nk; q++)
        if (ld(dt, g_eigenvectors, q) != 0)
            return SLA_FAIL(SLA_EUNSUPPORTED, "g_eigenvectors entry %lld is %g: eigenvector "
                            "gradients of the generalized problem A v = λ M v are not implemented "
                            "(eigenvalue cotangents only)", (long long)q, ld(dt, g_eigenvectors, q));
    double *V = sla_malloc((size_t)(nk ? nk : 1), sizeof(double), "eigenvectors");
    double *U = sla_malloc((size_t)(nk ? nk : 1), sizeof(double), "scaled eigenvectors");
    double *da = sla_calloc((size_t)(batch * nnz + 1), sizeof(double), "gradient of A");
    double *dm = sla_calloc((size_t)(M->batch * nnzm + 1), sizeof(double), "gradient of M");
    sla_status st = (V && U && da && dm) ? SLA_OK : SLA_ENOMEM;
    for (int64_t q = 0; q < nk && st == SLA_OK; q++) V[q] = ld(dt, eigenvectors, q);
    if (st == SLA_OK && g_eigenvalues) {
        /* U = V·diag(gλ): dA += U ∘ V on A's pattern */
        for (int64_t b = 0; b < batch; b++)
            for (int64_t r = 0; r < n; r++)
                for (int64_t i = 0; i < k; i++)
                    U[(b * n + r) * k + i] = V[(b * n + r) * k + i] * ld(dt, g_eigenvalues, b * k + i);
        if (dA && nnz) st = sla_pattern_outer_add(A->pattern, SLA_FLOAT64, batch, 1.0, U, 1, V, 1, k, da);
        /* U = V·diag(−λ·gλ): dM += U ∘ V on M's pattern (a shared M sums over the batch) */
        for (int64_t b = 0; b < batch; b++)
            for (int64_t r = 0; r < n; r++)
                for (int64_t i = 0; i < k; i++) U[(b * n + r) * k + i] *= -ld(dt, eigenvalues, b * k + i);
        for (int64_t b = 0; b < batch && st == SLA_OK && dM && nnzm; b++) {
            int64_t bm = M->batch == 1 ? 0 : b;
            st = sla_pattern_outer_add(M->pattern, SLA_FLOAT64, 1, 1.0, U + b * n * k, 0,
                                       V + b * n * k, 0, k, dm + bm * nnzm);
        }
    }
    if (st == SLA_OK && dA) store(dt, dA, da, batch * nnz);
    if (st == SLA_OK && dM) store(dt, dM, dm, M->batch * nnzm);
    sla_free(V);
    sla_free(U);
    sla_free(da);
    sla_free(dm);
    return st;
}
