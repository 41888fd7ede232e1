/* sla_logdet_slq: exact on a diagonal matrix (one step per distinct eigenvalue), close to
 * the closed form log det of tridiag(−1, 2, −1) = log(n + 1) with its standard error, and
 * the refusals (indefinite, float32, zero probe). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static sla_pattern *tridiag(int64_t n, double **v)
{
    sla_pattern *p = NULL;
    int64_t dims[1] = {n};
    double lo[1] = {-1}, up[1] = {-1};
    TU_OK(sla_gallery_grid(1, dims, 2.0, lo, up, &p, v));
    return p;
}

static void probes(int64_t n, int64_t k, double *Z, unsigned seed)
{
    srand(seed);
    for (int64_t i = 0; i < n * k; i++) Z[i] = rand() & 1 ? 1.0 : -1.0;
}

static void diagonal_exact(void **state)
{
    int64_t idx[3] = {0, 1, 2};
    double d[3] = {1, 2, 4}, Z[3 * 4], lad, err;
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(3, 3, 3, idx, idx, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, d);
    probes(3, 4, Z, 1);
    TU_OK(sla_logdet_slq(&A, 4, Z, 3, &lad, &err));
    assert_true(fabs(lad - log(8.0)) < 1e-12 && err < 1e-12);   /* Rademacher: zᵢ² = 1 */
    sla_pattern_free(&p);
}

static void laplacian_close_to_closed_form(void **state)
{
    int64_t n = 400, k = 64;
    double *v, *Z = malloc(sizeof *Z * (size_t)(n * k)), lad, err;
    sla_pattern *p = tridiag(n, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    probes(n, k, Z, 2);
    TU_OK(sla_logdet_slq(&A, k, Z, 60, &lad, &err));
    double exact = log((double)n + 1);
    assert_true(err > 0 && fabs(lad - exact) < 4 * err + 0.05 * exact);
    /* indefinite: a Ritz value ≤ 0 */
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++) v[s] = -v[s];
    assert_int_equal(sla_logdet_slq(&A, k, Z, 20, &lad, &err), SLA_ENOTSPD);
    assert_non_null(strstr(sla_last_error(), "not symmetric positive definite"));
    memset(Z, 0, sizeof *Z * (size_t)n);                   /* rows 0.. of probe columns */
    for (int64_t i = 0; i < n; i++) Z[i * k] = 0;
    assert_int_equal(sla_logdet_slq(&A, k, Z, 20, &lad, &err), SLA_EINVAL);
    float *f = calloc((size_t)sla_pattern_nnz(p), sizeof *f);
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++) f[s] = 1;
    sla_matrix A32 = sla_matrix_view(p, SLA_FLOAT32, 1, f);
    assert_int_equal(sla_logdet_slq(&A32, k, Z, 20, &lad, &err), SLA_EDTYPE);
    free(f);
    free(Z);
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(diagonal_exact),
        cmocka_unit_test(laplacian_close_to_closed_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
