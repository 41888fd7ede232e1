/* The memory-space tag of matrix views (sla/matrix.h), host side, without any device: a device
 * view is refused by every host function with an error naming device memory (it is never
 * dereferenced: its values pointer here points at nothing valid), an invalid tag is an error,
 * sla_solver_create() sends a device view only to a device backend (none registered here: the
 * error names "cuda"), and a host view never goes to a device backend (a registered fake one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sla/backend.h"
#include "testutil.h"

/* a device pointer for host code: any address it must not read (reading it would crash) */
#define NOT_HOST_MEMORY ((const void *)(uintptr_t)0x10)

static void assert_error_mentions(sla_status st, sla_status want, const char *text)
{
    if (st != want)
        fail_msg("status %d (%s), expected %d: %s", (int)st, sla_status_string(st), (int)want,
                 sla_last_error());
    if (!strstr(sla_last_error(), text))
        fail_msg("message \"%s\" does not mention \"%s\"", sla_last_error(), text);
}

static void test_default_is_host(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(4, 4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    assert_int_equal(A.space, SLA_MEM_HOST);
    sla_matrix B = {.pattern = p, .dtype = SLA_FLOAT64, .batch = 1, .values = v};  /* by hand */
    assert_int_equal(B.space, SLA_MEM_HOST);
    TU_OK(sla_matrix_check(&B, 1));
    sla_pattern_free(&p);
    free(v);
}

static void test_host_functions_refuse_device_views(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(4, 4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, NOT_HOST_MEMORY);
    A.space = SLA_MEM_DEVICE;
    double x[16] = {0}, y[16] = {0};
    assert_error_mentions(sla_spmv(SLA_OP_N, 1.0, &A, x, 1, 1, 0.0, y), SLA_EINVAL,
                          "A is in device memory");
    assert_error_mentions(sla_matrix_check(&A, 1), SLA_EINVAL, "device memory");
    int sym = -1;
    assert_error_mentions(sla_matrix_is_symmetric(&A, 0, 0, &sym), SLA_EINVAL, "device memory");
    assert_int_equal(sym, -1);                       /* outputs untouched */
    sla_diag_info di;
    assert_error_mentions(sla_matrix_diag_info(&A, &di), SLA_EINVAL, "device memory");
    A.space = (sla_memspace)7;
    assert_error_mentions(sla_matrix_check(&A, 0), SLA_EINVAL, "space = 7");
    sla_pattern_free(&p);
    free(v);
}

static void test_solver_create_device_view(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(4, 4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, NOT_HOST_MEMORY);
    A.space = SLA_MEM_DEVICE;
    sla_solver_options o;
    sla_solver_options_init(&o);
    sla_solver *s = (sla_solver *)&o;                /* must be set to NULL on error */
    /* no device backend registered: auto goes to "cuda", which this program does not load */
    assert_error_mentions(sla_solver_create(&A, &o, &s), SLA_EUNSUPPORTED, "cuda");
    assert_null(s);
    o.method = SLA_METHOD_CG;
    o.backend = "krylov";                            /* a host backend: mixed spaces */
    assert_error_mentions(sla_solver_create(&A, &o, &s), SLA_EINVAL,
                          "A is in device memory but backend 'krylov' takes host memory");
    assert_null(s);
    A.space = (sla_memspace)-1;
    assert_error_mentions(sla_solver_create(&A, &o, &s), SLA_EINVAL, "space = -1");
    sla_pattern_free(&p);
    free(v);
}

/* a device backend that never touches memory: create must not even be reached for a host view */
static int fake_creates;
static sla_status fake_create(sla_solver *s) { (void)s; fake_creates++; return SLA_OK; }
static sla_status fake_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             const sla_solve_params *p, sla_solve_info *info)
{
    (void)s; (void)op; (void)nrhs; (void)B; (void)X; (void)p; (void)info;
    return SLA_EUNSUPPORTED;
}
static void fake_destroy(sla_solver *s) { (void)s; }

static void test_host_view_never_goes_to_device_backend(void **state)
{
    (void)state;
    static sla_backend fake = {
        .info = {.name = "fakedev", .description = "device backend (test)",
                 .methods = SLA_METHOD_BIT(SLA_METHOD_CG), .dtypes = SLA_BOTH_DTYPES,
                 .priority = 1000, .available = 1},
        .create = fake_create, .solve = fake_solve, .destroy = fake_destroy,
        .memory = SLA_MEM_DEVICE};
    TU_OK(sla_backend_register(&fake));
    sla_pattern *p;
    double *v;
    tu_poisson2d(4, 4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.backend = "fakedev";
    sla_solver *s = NULL;
    assert_error_mentions(sla_solver_create(&A, &o, &s), SLA_EINVAL,
                          "backend 'fakedev' takes device memory but A is in host memory");
    assert_int_equal(fake_creates, 0);
    /* a device view named for it reaches it (and nothing reads its values on the host) */
    sla_matrix D = sla_matrix_view(p, SLA_FLOAT64, 1, NOT_HOST_MEMORY);
    D.space = SLA_MEM_DEVICE;
    TU_OK(sla_solver_create(&D, &o, &s));
    assert_int_equal(fake_creates, 1);
    sla_solver_free(&s);
    TU_OK(sla_backend_unregister("fakedev"));
    sla_pattern_free(&p);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_is_host),
        cmocka_unit_test(test_host_functions_refuse_device_views),
        cmocka_unit_test(test_solver_create_device_view),
        cmocka_unit_test(test_host_view_never_goes_to_device_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
