/* sla_eigs (ARPACK dnaupd): a block-diagonal matrix with a rotation block (eigenvalues ±i)
 * and known real eigenvalues; residuals of the returned pairs; argument errors. */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

static void eigenpairs_and_residuals(void **state)
{
    /* diag(10, 9, ..., 3) ⊕ [[0, 2], [−2, 0]]: LM gives 10, 9, 8 */
    int64_t n = 10, row[12], col[12], k = 0;
    double val[12];
    for (int64_t i = 0; i < 8; i++) { row[k] = col[k] = i; val[k++] = 10.0 - (double)i; }
    row[k] = 8; col[k] = 9; val[k++] = 2.0;
    row[k] = 9; col[k] = 8; val[k++] = -2.0;
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(n, n, k, row, col, &p));
    double *v = malloc(sizeof *v * (size_t)k);
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, val, v));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double wr[3], wi[3], V[10 * 3];
    int64_t nconv = 0;
    TU_OK(sla_eigs(&A, 3, SLA_EIGS_LM, 0, 0, 0, wr, wi, V, &nconv));
    assert_int_equal(nconv, 3);
    double want[3] = {10, 9, 8}, got[3] = {wr[0], wr[1], wr[2]};
    for (int a = 0; a < 3; a++)            /* ARPACK's order: sort here */
        for (int b = a + 1; b < 3; b++)
            if (got[b] > got[a]) { double t = got[a]; got[a] = got[b]; got[b] = t; }
    for (int j = 0; j < 3; j++) assert_true(fabs(got[j] - want[j]) < 1e-10 && wi[j] == 0);
    for (int j = 0; j < 3; j++) {          /* ‖A v − λ v‖ */
        double x[10], y[10], r = 0;
        for (int i = 0; i < 10; i++) x[i] = V[i * 3 + j];
        TU_OK(sla_spmv(SLA_OP_N, 1.0, &A, x, 0, 1, 0.0, y));
        for (int i = 0; i < 10; i++) r += (y[i] - wr[j] * x[i]) * (y[i] - wr[j] * x[i]);
        assert_true(sqrt(r) < 1e-10);
    }
    /* the smallest real parts: the pair 0 ± 2i */
    TU_OK(sla_eigs(&A, 2, SLA_EIGS_SR, 0, 0, 0, wr, wi, V, &nconv));
    assert_true(fabs(wr[0]) < 1e-10 && fabs(fabs(wi[0]) - 2) < 1e-10 && wi[1] == -wi[0]);
    assert_int_equal(sla_eigs(&A, 9, SLA_EIGS_LM, 0, 0, 0, wr, wi, V, &nconv), SLA_EINVAL);
    sla_pattern_free(&p);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(eigenpairs_and_residuals)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
