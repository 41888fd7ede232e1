/* Method "lu" (UMFPACK): the shared LU cases of lu_cases.h, and UMFPACK's orderings. */
#define LU_METHOD SLA_METHOD_LU
#include "lu_cases.h"

/* Each ordering option reaches UMFPACK: describe() names the one used. */
static void umfpack_orderings(void **state)
{
    (void)state;
    const char *const expect[] = {"COLAMD", "natural", "COLAMD", "METIS"};
    const char *const also[] = {"UMFPACK", "UMFPACK", "UMFPACK", "UMFPACK"};
    check_orderings(expect, also);
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
