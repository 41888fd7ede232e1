/* libsla_cuda on any machine, GPU or not: the backend "cuda" registers (idempotently) with its
 * methods, dtypes and device memory; without a device (this CI machine) every entry point that
 * needs one returns SLA_EUNSUPPORTED naming "no CUDA device", the registry lists the backend as
 * unavailable with that reason, and a solver asked for it says so, never crashes; a host view
 * is never solved by it. With a device the same checks see it available. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sla/cuda.h"
#include "testutil.h"

static int have_device;

static const sla_backend_info *find_cuda(sla_backend_info *info)
{
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        TU_OK(sla_backend_get(i, info));
        if (strcmp(info->name, "cuda") == 0) return info;
    }
    return NULL;
}

static void test_register(void **state)
{
    (void)state;
    int64_t before = sla_backend_count();
    TU_OK(sla_cuda_register());
    TU_OK(sla_cuda_register());                      /* idempotent */
    assert_int_equal(sla_backend_count(), before + 1);
    sla_backend_info info;
    assert_non_null(find_cuda(&info));
    assert_true(info.methods & SLA_METHOD_BIT(SLA_METHOD_CG));
    assert_true(info.methods & SLA_METHOD_BIT(SLA_METHOD_BICGSTAB));
    assert_true(info.methods & SLA_METHOD_BIT(SLA_METHOD_GMRES));
    assert_true(info.methods & SLA_METHOD_BIT(SLA_METHOD_MINRES));
    assert_false(info.methods & SLA_METHOD_BIT(SLA_METHOD_CHOLESKY));
    assert_int_equal(info.dtypes, SLA_BOTH_DTYPES);
    assert_int_equal(info.available, have_device);
    if (!have_device) {
        assert_non_null(info.unavailable_reason);
        assert_non_null(strstr(info.unavailable_reason, "no CUDA device"));
    }
}

static void test_no_device_errors(void **state)
{
    (void)state;
    if (have_device) { print_message("a device is present: nothing to check here\n"); return; }
    assert_int_equal(sla_cuda_available(), SLA_EUNSUPPORTED);
    assert_non_null(strstr(sla_last_error(), "no CUDA device: cudaGetDeviceCount"));
    assert_non_null(strstr(sla_cuda_unavailable_reason(), "no CUDA device"));
    sla_space V;
    sla_cuda_space c;
    assert_int_equal(sla_cuda_space_init(&V, &c, 10, SLA_FLOAT64), SLA_EUNSUPPORTED);
    assert_non_null(strstr(sla_last_error(), "no CUDA device"));
    assert_null(c.partials);
    sla_pattern *p;
    double *v;
    tu_poisson2d(4, 4, &p, &v);
    sla_cuda_csr *m = (sla_cuda_csr *)&c;
    assert_int_equal(sla_cuda_csr_create(p, SLA_FLOAT64, 1, &m), SLA_EUNSUPPORTED);
    assert_null(m);
    assert_int_equal(sla_cuda_is_device_pointer(v), 0);
    /* a device view: auto picks "cuda", which is listed but unavailable */
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, (const void *)(uintptr_t)0x10);
    A.space = SLA_MEM_DEVICE;
    sla_solver *s = NULL;
    assert_int_equal(sla_solver_create(&A, NULL, &s), SLA_EUNSUPPORTED);
    assert_null(s);
    assert_non_null(strstr(sla_last_error(), "backend 'cuda' is not available: no CUDA device"));
    sla_pattern_free(&p);
    free(v);
}

static void test_argument_errors(void **state)
{
    (void)state;
    sla_space V;
    sla_cuda_space c;
    assert_int_equal(sla_cuda_space_init(&V, &c, -1, SLA_FLOAT64), SLA_EINVAL);
    assert_int_equal(sla_cuda_space_init(&V, &c, 4, (sla_dtype)9), SLA_EDTYPE);
    sla_cuda_csr *m = NULL;
    assert_int_equal(sla_cuda_csr_create(NULL, SLA_FLOAT64, 1, &m), SLA_EINVAL);
    assert_int_equal(sla_cuda_spmv(NULL, SLA_OP_N, 0, 1.0, NULL, 0.0, NULL), SLA_EINVAL);
    assert_int_equal(sla_cuda_jacobi(NULL, 0, 0, NULL), SLA_EINVAL);
    sla_cuda_csr_free(&m);                           /* NULL: no-op */
    sla_cuda_space_free(NULL);
}

/* a host view with backend "cuda" is refused, whether or not a device is present */
static void test_host_view_refused(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(4, 4, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.backend = "cuda";
    sla_solver *s = NULL;
    sla_status st = sla_solver_create(&A, &o, &s);
    assert_true(st < 0);
    assert_null(s);
    if (have_device)
        assert_non_null(strstr(sla_last_error(), "takes device memory but A is in host memory"));
    /* and a host view without a backend name never lands on it */
    o.backend = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_null(strstr(sla_solver_describe(s), "CUDA"));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v);
}

int main(void)
{
    have_device = sla_cuda_available() == SLA_OK;
    printf("libsla_cuda: %s\n", have_device ? "a CUDA device is present" : sla_cuda_unavailable_reason());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register),
        cmocka_unit_test(test_no_device_errors),
        cmocka_unit_test(test_argument_errors),
        cmocka_unit_test(test_host_view_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
