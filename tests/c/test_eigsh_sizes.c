/* eigsh's block and basis sizes (options.block_size, options.ncv): a value given is used as
 * given (the description says so) or refused with SLA_EINVAL naming the field, never changed;
 * the defaults are fitted to small n as documented in include/sla/eig.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int have_method(sla_method m)
{
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        if (sla_backend_get(i, &bi) == SLA_OK && bi.available && (bi.methods & (1u << m))) return 1;
    }
    return 0;
}

/* tridiag(−1, 2, −1) of size n */
static sla_matrix laplace1d(int64_t n, sla_pattern **p, double **values)
{
    int64_t *r = malloc(sizeof(int64_t) * 3 * n), *c = malloc(sizeof(int64_t) * 3 * n), q = 0;
    double *v = malloc(sizeof(double) * 3 * n);
    assert_true(r && c && v);
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) { r[q] = i; c[q] = i - 1; v[q++] = -1; }
        r[q] = i; c[q] = i; v[q++] = 2;
        if (i < n - 1) { r[q] = i; c[q] = i + 1; v[q++] = -1; }
    }
    TU_OK(sla_pattern_from_coo(n, n, q, r, c, p));
    *values = malloc(sizeof(double) * q);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
    return sla_matrix_view(*p, SLA_FLOAT64, 1, *values);
}

typedef struct size_case {
    sla_eigsh_method method;
    int64_t block_size, ncv;
    const char *expect;          /* NULL: success; else a part of the SLA_EINVAL message */
    const char *described;       /* on success: a part of info.description */
} size_case;

static void run_cases(const sla_matrix *A, int64_t k, const size_case *cs, int count, int precond)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double *lam = malloc(sizeof(double) * k), *V = malloc(sizeof(double) * n * k);
    sla_solver *T = NULL;
    if (precond) {
        sla_solver_options so;
        sla_solver_options_init(&so);
        so.method = SLA_METHOD_CHOLESKY;
        TU_OK(sla_solver_create(A, &so, &T));
    }
    for (int q = 0; q < count; q++) {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = SLA_EIGSH_SA;
        o.method = cs[q].method;
        o.block_size = cs[q].block_size;
        o.ncv = cs[q].ncv;
        o.precond_solver = T;
        sla_eigsh_info info;
        sla_status st = sla_eigsh(A, k, &o, lam, V, &info);
        const char *what = sla_eigsh_method_name(cs[q].method);
        if (cs[q].expect) {
            if (st != SLA_EINVAL || !strstr(sla_last_error(), cs[q].expect))
                fail_msg("%s, block_size %lld, ncv %lld: status %d, '%s' (wanted '%s')", what,
                         (long long)cs[q].block_size, (long long)cs[q].ncv, (int)st,
                         sla_last_error(), cs[q].expect);
            continue;
        }
        if (st != SLA_OK || !strstr(info.description, cs[q].described))
            fail_msg("%s, block_size %lld, ncv %lld: status %d (%s), '%s' (wanted '%s')", what,
                     (long long)cs[q].block_size, (long long)cs[q].ncv, (int)st, sla_last_error(),
                     info.description, cs[q].described);
        /* the smallest eigenvalue 2 − 2cos(π/(n + 1)) */
        TU_CLOSE(lam[0], 2 - 2 * cos(3.14159265358979323846 / (double)(n + 1)), 1e-9);
    }
    sla_solver_free(&T);
    free(lam); free(V);
}

static void lobpcg_block(void **state)
{
    (void)state;
    sla_pattern *p; double *v;
    sla_matrix A = laplace1d(60, &p, &v);
    const size_case cs[] = {
        {SLA_EIGSH_LOBPCG, 2, 0, "options.block_size = 2 < k = 3", NULL},
        {SLA_EIGSH_LOBPCG, 21, 0, "options.block_size = 21: LOBPCG needs 3·block_size ≤ n = 60", NULL},
        {SLA_EIGSH_LOBPCG, 3, 0, NULL, "block 3"},
        {SLA_EIGSH_LOBPCG, 20, 0, NULL, "block 20"},
        {SLA_EIGSH_LOBPCG, 0, 0, NULL, "block 7"},          /* max(2k, k + 4) */
        {SLA_EIGSH_LOBPCG, 5, 7, NULL, "block 5"},          /* ncv is not LOBPCG's */
    };
    run_cases(&A, 3, cs, (int)(sizeof cs / sizeof cs[0]), 0);
    free(v);
    sla_pattern_free(&p);
    /* n = 12: the default block 7 is lowered to n/3 = 4 (≥ k) */
    A = laplace1d(12, &p, &v);
    const size_case small[] = {{SLA_EIGSH_LOBPCG, 0, 0, NULL, "block 4"},
                               {SLA_EIGSH_LOBPCG, 5, 0, "3·block_size ≤ n = 12", NULL}};
    run_cases(&A, 3, small, 2, 0);
    free(v);
    sla_pattern_free(&p);
}

static void lanczos_basis(void **state)
{
    (void)state;
    if (!have_method(SLA_METHOD_CHOLESKY)) skip();
    sla_pattern *p; double *v;
    sla_matrix A = laplace1d(60, &p, &v);
    const size_case cs[] = {
        {SLA_EIGSH_LANCZOS, 0, 4, "options.ncv = 4 < k + block = 5", NULL},
        {SLA_EIGSH_LANCZOS, 0, 59, "options.ncv = 59 > n − block = 58", NULL},
        {SLA_EIGSH_LANCZOS, 3, 5, "options.ncv = 5 < k + block = 6", NULL},
        {SLA_EIGSH_LANCZOS, 30, 0, "options.block_size = 30: Lanczos needs k + block_size ≤ n − block_size", NULL},
        {SLA_EIGSH_LANCZOS, 0, 5, NULL, "block 2, ncv 5"},
        {SLA_EIGSH_LANCZOS, 0, 58, NULL, "block 2, ncv 58"},
        {SLA_EIGSH_LANCZOS, 1, 0, NULL, "block 1, ncv 20"},
        {SLA_EIGSH_LANCZOS, 4, 9, NULL, "block 4, ncv 9"},
        {SLA_EIGSH_LANCZOS, 0, 0, NULL, "block 2, ncv 20"},
    };
    run_cases(&A, 3, cs, (int)(sizeof cs / sizeof cs[0]), 0);
    if (SLA_HAVE_ARPACK) {
        /* one vector: block_size is not read; ARPACK's own k < ncv ≤ n */
        const size_case ca[] = {
            {SLA_EIGSH_ARPACK, 0, 3, "options.ncv = 3: ARPACK needs k < ncv ≤ n", NULL},
            {SLA_EIGSH_ARPACK, 0, 61, "options.ncv = 61: ARPACK needs k < ncv ≤ n", NULL},
            {SLA_EIGSH_ARPACK, 0, 8, NULL, "ncv 8"},
            {SLA_EIGSH_ARPACK, 40, 0, NULL, "ncv 20"},
        };
        run_cases(&A, 3, ca, 4, 0);
    }
    free(v);
    sla_pattern_free(&p);
    /* n = 12: the default basis 20 is lowered to n − block = 10 */
    A = laplace1d(12, &p, &v);
    const size_case small[] = {{SLA_EIGSH_LANCZOS, 0, 0, NULL, "ncv 10"}};
    run_cases(&A, 3, small, 1, 0);
    free(v);
    sla_pattern_free(&p);
}

/* auto checks a size given against the method it picks (shift-invert Lanczos for SA at n = 400,
 * LOBPCG with a preconditioner), and the dense path (n ≤ 300) reads neither. */
static void auto_checks_the_method_chosen(void **state)
{
    (void)state;
    if (!have_method(SLA_METHOD_CHOLESKY)) skip();
    sla_pattern *p; double *v;
    sla_matrix A = laplace1d(400, &p, &v);
    const size_case cs[] = {
        {SLA_EIGSH_AUTO, 0, 4, "options.ncv = 4 < k + block = 5", NULL},
        {SLA_EIGSH_AUTO, 0, 12, NULL, "ncv 12"},
    };
    run_cases(&A, 3, cs, 2, 0);
    const size_case cp[] = {
        {SLA_EIGSH_AUTO, 2, 0, "options.block_size = 2 < k = 3", NULL},
        {SLA_EIGSH_AUTO, 4, 0, NULL, "block 4"},
    };
    run_cases(&A, 3, cp, 2, 1);
    free(v);
    sla_pattern_free(&p);
    A = laplace1d(60, &p, &v);
    const size_case cd[] = {{SLA_EIGSH_AUTO, 1, 2, NULL, "dense"}};
    run_cases(&A, 3, cd, 1, 0);
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lobpcg_block),
        cmocka_unit_test(lanczos_basis),
        cmocka_unit_test(auto_checks_the_method_chosen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
