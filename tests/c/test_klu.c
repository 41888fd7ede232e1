/* Method "klu" (KLU): the shared LU cases of lu_cases.h, and KLU's refactor fast path, BTF form
 * and orderings. */
#define LU_METHOD SLA_METHOD_KLU
#include "lu_cases.h"

/* Refactor keeps the pivot order while it stays usable, and pivots again when the old pivot
 * becomes zero. */
static void klu_refactor_fast_and_repivot(void **state)
{
    (void)state;
    double d[] = {4, 1, 0, 1, 4, 1, 0, 1, 4}, b[3] = {1, 2, 3}, x[3], sign, ld;
    sla_pattern *p;
    double *a;
    from_dense(3, d, &p, &a);                              /* slots: (0,0) (0,1) (1,0) (1,1) … */
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    a[0] = 4.5;                                            /* a mild change: pivots kept */
    TU_OK(sla_solver_refactor(s, a));
    assert_non_null(strstr(sla_solver_describe(s), "1 kept the pivots, 0 re-pivoted"));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    assert_true(scaled_residual(SLA_OP_N, p, a, 1, x, b) <= 1e-14);
    a[0] = 0;                                              /* the first pivot vanishes */
    TU_OK(sla_solver_refactor(s, a));
    const char *desc = sla_solver_describe(s);
    if (!strstr(desc, "1 kept the pivots, 1 re-pivoted")) fail_msg("description: %s", desc);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    assert_true(scaled_residual(SLA_OP_N, p, a, 1, x, b) <= 1e-14);
    TU_OK(sla_solver_logdet(s, &sign, &ld));              /* det = 0·15 − 1·4 = −4 */
    assert_true(sign == -1);
    TU_CLOSE(ld, log(4.0), 1e-14);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(a);
}

/* An upper triangular matrix is n blocks of BTF; the gradient of log|det| is 1/a_ii on the
 * diagonal and exactly 0 on the off-diagonal blocks (A⁻¹ is upper triangular). */
static void klu_btf_gradient(void **state)
{
    (void)state;
    int64_t n = 5;
    double d[25] = {0}, g[15];
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i; j < n; j++) d[i * n + j] = i == j ? (double)(i + 2) * (i % 2 ? -1 : 1) : 0.5 + (double)j;
    sla_pattern *p;
    double *a;
    from_dense(n, d, &p, &a);
    sla_solver *s = lu_create(p, SLA_FLOAT64, 1, a);
    if (!strstr(sla_solver_describe(s), "BTF 5 blocks")) fail_msg("%s", sla_solver_describe(s));
    TU_OK(sla_solver_logdet_grad(s, NULL, g));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t r = 0; r < n; r++)
        for (int64_t t = rp[r]; t < rp[r + 1]; t++) {
            if (ci[t] == r) TU_CLOSE(g[t], 1 / a[t], 1e-15);
            else assert_true(g[t] == 0);
        }
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(a);
}

/* Each ordering option reaches KLU; west0479 has 166 BTF blocks (the natural, "given" ordering
 * finds its blocks without a maximum transversal, hence fewer). */
static void klu_orderings(void **state)
{
    (void)state;
    const char *const expect[] = {"AMD", "natural", "AMD", SLA_HAVE_METIS ? "METIS" : NULL};
    const char *const also[] = {"BTF 166 blocks", "KLU", "BTF 166 blocks", "BTF 166 blocks"};
    check_orderings(expect, also);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LU_SHARED_TESTS,
        cmocka_unit_test(klu_refactor_fast_and_repivot),
        cmocka_unit_test(klu_btf_gradient),
        cmocka_unit_test(klu_orderings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
