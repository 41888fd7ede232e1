/* Method "lu" (UMFPACK): the shared LU cases of lu_cases.h, and UMFPACK's orderings. */
#define LU_METHOD SLA_METHOD_LU
#include "lu_cases.h"

/* Each ordering option reaches UMFPACK (describe() names the one used) and solves correctly. */
static void umfpack_orderings(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    sla_pattern *p;
    double *a;
    tu_load("west0479.mtx", &p, &a);
    int64_t n = sla_pattern_nrows(p);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, n, 2);
    const sla_ordering ord[] = {SLA_ORDERING_AUTO, SLA_ORDERING_NATURAL, SLA_ORDERING_AMD,
                                SLA_ORDERING_METIS};
    const char *names[] = {"COLAMD", "natural", "COLAMD", "METIS"};
    for (int k = 0; k < 4; k++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_LU;
        o.ordering = ord[k];
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, a);
        sla_solver *s;
        TU_OK(sla_solver_create(&A, &o, &s));
        const char *d = sla_solver_describe(s);
        if (!strstr(d, names[k]) || !strstr(d, "UMFPACK") || !strstr(d, "nnz(L+U)"))
            fail_msg("ordering %s: description '%s' lacks %s", sla_ordering_name(ord[k]), d, names[k]);
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        assert_true(scaled_residual(SLA_OP_N, p, a, 1, x, b) <= 1e-12);
        sla_solver_free(&s);
    }
    free(a); free(b); free(x);
    sla_pattern_free(&p);
}

/* The backend is registered and available for both dtypes. */
static void umfpack_registered(void **state)
{
    (void)state;
    int found = 0;
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        TU_OK(sla_backend_get(i, &bi));
        if (strcmp(bi.name, "umfpack") != 0) continue;
        found = 1;
        assert_true(bi.available);
        assert_true(bi.methods & (1u << SLA_METHOD_LU));
        assert_true((bi.dtypes & 3u) == 3u);
    }
    assert_true(found);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LU_SHARED_TESTS,
        cmocka_unit_test(umfpack_orderings),
        cmocka_unit_test(umfpack_registered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
