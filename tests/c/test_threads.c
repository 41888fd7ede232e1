/* libsla's own thread count (sla/base.h, sla_set_num_threads): the rule (environment, then
 * the affinity mask), independence from OpenMP's global setting in both directions (a host
 * such as torch sets omp_set_num_threads(1)), and bit-identical results for a given count. */
#define _GNU_SOURCE
#include <dirent.h>
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"

/* the default the rule predicts for this process's environment */
static int expected_default(void)
{
    const char *s = getenv("SLA_NUM_THREADS");
    if (s && atoi(s) > 0) return atoi(s);
    s = getenv("OMP_NUM_THREADS");
    if (s && atoi(s) > 0) return atoi(s);
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    return CPU_COUNT(&set);
}

static int task_count(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* First test of the process (no OpenMP team exists yet): with OpenMP's global count at 1, a
 * libsla kernel on 2 threads starts a team of 2, i.e. the runtime creates one worker thread. */
static void team_despite_openmp_one(void **state)
{
    (void)state;
    int before = task_count();
    if (before < 0) skip();
    int omp_saved = omp_get_max_threads();
    omp_set_num_threads(1);
    TU_OK(sla_set_num_threads(2));
    double saved = sla_test_par_min_bytes(0);
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(100, 100, &p, &v);
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *x = calloc((size_t)n, sizeof(double)), *y = calloc((size_t)n, sizeof(double));
    TU_OK(sla_spmv(SLA_OP_N, 1.0, &A, x, 0, 1, 0.0, y));
    assert_int_equal(task_count(), before + 1);
    assert_int_equal(omp_get_max_threads(), 1);
    sla_test_par_min_bytes(saved);
    TU_OK(sla_set_num_threads(0));
    omp_set_num_threads(omp_saved);
    free(x); free(y); free(v);
    sla_pattern_free(&p);
}

static void rule_and_errors(void **state)
{
    (void)state;
    assert_int_equal(sla_get_num_threads(), expected_default());
    TU_OK(sla_set_num_threads(3));
    assert_int_equal(sla_get_num_threads(), 3);
    assert_int_equal(sla_set_num_threads(-1), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "sla_set_num_threads"));
    assert_int_equal(sla_get_num_threads(), 3);           /* untouched by the failed call */
    TU_OK(sla_set_num_threads(0));
    assert_int_equal(sla_get_num_threads(), expected_default());
}

/* AMG-PCG on a 2D Poisson matrix with every kernel on the team (threshold 0) */
static void solve_amg(const sla_matrix *A, const double *b, double *x, int64_t *iters)
{
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_AMG, 1e-10);
    sla_solver *s = NULL;
    sla_solve_info info;
    TU_OK(sla_solver_create(A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    *iters = info.iterations;
    sla_solver_free(&s);
}

/* For a given libsla count, results are the same bits whatever OpenMP's global count is (1 as
 * torch sets it, or 2), and OpenMP's global count is left as the caller set it. */
static void independent_of_openmp_setting(void **state)
{
    (void)state;
    if (!kt_have_amg()) skip();
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(120, 120, &p, &v);
    int64_t n = sla_pattern_nrows(p), it[4];
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * (size_t)n), *x[4];
    tu_fill_random(b, n, 7);
    for (int r = 0; r < 4; r++) x[r] = malloc(sizeof(double) * (size_t)n);
    double saved = sla_test_par_min_bytes(0);
    int omp_saved = omp_get_max_threads();
    TU_OK(sla_set_num_threads(2));
    omp_set_num_threads(1);                 /* what torch does on a one-core count */
    solve_amg(&A, b, x[0], &it[0]);
    assert_int_equal(omp_get_max_threads(), 1);
    omp_set_num_threads(2);
    solve_amg(&A, b, x[1], &it[1]);
    solve_amg(&A, b, x[2], &it[2]);         /* rerun: same bits */
    assert_int_equal(omp_get_max_threads(), 2);
    TU_OK(sla_set_num_threads(1));
    solve_amg(&A, b, x[3], &it[3]);
    assert_true(kt_residual(&A, 0, SLA_OP_N, x[3], b) <= 1e-10 * tu_norm2(b, n));
    for (int r = 1; r < 3; r++) {
        assert_memory_equal(x[0], x[r], sizeof(double) * (size_t)n);
        assert_int_equal(it[0], it[r]);
    }
    assert_true(kt_residual(&A, 0, SLA_OP_N, x[0], b) <= 1e-10 * tu_norm2(b, n));
    /* one thread sums in other chunks: other bits. So the run with OpenMP's count at 1 did run
     * on two threads (the sums of x[0] are those of a two-thread team). */
    assert_true(memcmp(x[0], x[3], sizeof(double) * (size_t)n) != 0);
    TU_OK(sla_set_num_threads(0));
    omp_set_num_threads(omp_saved);
    sla_test_par_min_bytes(saved);
    for (int r = 0; r < 4; r++) free(x[r]);
    free(b); free(v);
    sla_pattern_free(&p);
}

/* Called from inside the caller's own parallel region, libsla runs on the calling thread
 * (no nested team), and each thread's result equals the single-threaded one. */
static void nested_call_runs_serial(void **state)
{
    (void)state;
    sla_pattern *p = NULL;
    double *v = NULL;
    tu_poisson2d(80, 80, &p, &v);
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * (size_t)n), *ref = malloc(sizeof(double) * (size_t)n);
    double *xs = malloc(sizeof(double) * (size_t)(2 * n));
    tu_fill_random(b, n, 9);
    double saved = sla_test_par_min_bytes(0);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_set_num_threads(1));
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, ref, NULL));
    sla_solver_free(&s);
    TU_OK(sla_set_num_threads(2));
    int fails = 0;
    #pragma omp parallel num_threads(2) reduction(+ : fails)
    {
        sla_solver *t = NULL;
        double *x = xs + (size_t)omp_get_thread_num() * (size_t)n;
        fails += sla_solver_create(&A, &o, &t) != SLA_OK;
        fails += t && sla_solver_solve(t, SLA_OP_N, 1, b, x, NULL) != SLA_OK;
        sla_solver_free(&t);
    }
    assert_int_equal(fails, 0);
    assert_memory_equal(xs, ref, sizeof(double) * (size_t)n);
    assert_memory_equal(xs + n, ref, sizeof(double) * (size_t)n);
    TU_OK(sla_set_num_threads(0));
    sla_test_par_min_bytes(saved);
    free(b); free(ref); free(xs); free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(team_despite_openmp_one),     /* first: no team exists yet */
        cmocka_unit_test(rule_and_errors),
        cmocka_unit_test(independent_of_openmp_setting),
        cmocka_unit_test(nested_call_runs_serial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
