/* Nonlinear solves that cannot succeed, and bad input: a singular Jacobian, diverging starts,
 * NaN from the residual, failing callbacks (their messages kept), no solution (Bratu beyond
 * its fold), argument errors, the adjoint's refusals, allocation failures. Each gives a clear
 * error or a non-converged status, never "converged". */
#include <stdio.h>

#include "nl_bratu.h"

/* ---- small problems on a diagonal pattern: F_i(u) = f(u_i) ---- */
typedef struct diag {
    int kind;                    /* 0: atan(u); 1: log(u) − 1; 2: singular A u − b; 3: u − 2u */
    int64_t calls, nan_after;    /* NaN in F from call nan_after + 1 on (−1: never) */
    sla_pattern *p;
} diag;

static int diag_res(void *ctx, const void *uv, void *Fv)
{
    diag *d = ctx;
    const double *u = uv;
    double *F = Fv;
    d->calls++;
    for (int i = 0; i < 3; i++) {
        switch (d->kind) {
        case 0: F[i] = atan(u[i]); break;
        case 1: F[i] = log(u[i]) - 1; break;
        case 2: F[i] = u[0] + u[1] + u[2] - 1; break;      /* J = ones: rank 1 */
        default: F[i] = u[i] - 2 * u[i]; break;
        }
    }
    if (d->nan_after >= 0 && d->calls > d->nan_after) F[1] = NAN;
    return 0;
}

static int diag_jac(void *ctx, const void *uv, void *Jv)
{
    diag *d = ctx;
    const double *u = uv;
    double *J = Jv;
    const int64_t *rp = sla_pattern_rowptr(d->p);
    const int32_t *ci = sla_pattern_colind(d->p);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t q = rp[i]; q < rp[i + 1]; q++) {
            int64_t j = ci[q];
            double v = 0;
            if (d->kind == 2) v = 1;
            else if (j == i) v = d->kind == 0 ? 1 / (1 + u[i] * u[i]) : d->kind == 1 ? 1 / u[i] : -1;
            J[q] = v;
        }
    return 0;
}

static sla_nonlinear *diag_solver(diag *d, int kind, sla_nonlinear_method m, int line_search)
{
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->nan_after = -1;
    int64_t r[9], c[9], k = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (kind == 2 || i == j) { r[k] = i; c[k] = j; k++; }
    TU_OK(sla_pattern_from_coo(3, 3, k, r, c, &d->p));
    sla_nonlinear_problem P = {.n = 3, .dtype = SLA_FLOAT64, .residual = diag_res,
                               .pattern = d->p, .jacobian = diag_jac, .ctx = d};
    sla_nonlinear_options o;
    sla_nonlinear_options_init_for(&o, m);
    o.line_search = line_search;
    o.rtol = 1e-12;
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    return nl;
}

static void diag_done(diag *d, sla_nonlinear **nl)
{
    sla_nonlinear_free(nl);
    sla_pattern_free(&d->p);
}

static void singular_jacobian(void **state)
{
    (void)state;
    diag d;
    sla_nonlinear *nl = diag_solver(&d, 2, SLA_NONLINEAR_NEWTON, 1);
    double u0[3] = {0.5, 0, 2}, u[3] = {-7, -7, -7};
    sla_nonlinear_info info;
    sla_status st = sla_nonlinear_solve(nl, u0, u, &info);
    assert_int_equal(st, SLA_ESINGULAR);
    assert_int_equal(info.reason, SLA_NONLINEAR_LINEAR_SOLVER);
    assert_false(info.converged);
    assert_true(strstr(sla_last_error(), "sla_nonlinear_solve: iteration 1") != NULL);
    assert_true(u[0] == -7);                      /* untouched on error */
    const double *last = sla_nonlinear_solution(nl);
    assert_true(last && last[0] == 0.5 && last[2] == 2);
    double g[3] = {1, 1, 1};
    assert_int_equal(sla_nonlinear_vjp(nl, g, NULL, NULL), SLA_EINVAL);   /* not converged */
    assert_true(strstr(sla_last_error(), "did not converge") != NULL);
    diag_done(&d, &nl);
}

static void diverging_starts(void **state)
{
    (void)state;
    diag d;
    /* Newton on atan from u0 = 2 without a line search: the iterates fly off until J =
     * 1/(1 + u²) underflows to a singular matrix */
    sla_nonlinear *nl = diag_solver(&d, 0, SLA_NONLINEAR_NEWTON, 0);
    double u0[3] = {2, 2, 2}, u[3];
    sla_nonlinear_info info;
    sla_status st = sla_nonlinear_solve(nl, u0, u, &info);
    printf("atan, no line search: status %d, %s\n", (int)st, info.description);
    assert_true(st == SLA_NOT_CONVERGED || st == SLA_ESINGULAR || st == SLA_ENOTSPD);
    assert_false(info.converged);
    assert_true(info.reason != SLA_NONLINEAR_CONVERGED && info.iterations >= 3);
    assert_true(info.history[info.iterations] > info.history[0]);
    diag_done(&d, &nl);
    /* ... and with the line search it converges to 0 */
    nl = diag_solver(&d, 0, SLA_NONLINEAR_NEWTON, 1);
    TU_OK(sla_nonlinear_solve(nl, u0, u, &info));
    assert_true(fabs(u[0]) < 1e-12 && info.backtracks > 0);
    diag_done(&d, &nl);
    /* the fixed-point map G(u) = 2u from u0 ≠ 0: Picard diverges (‖F‖ doubles every step: the
     * stagnation window of 10 steps sees it grow) */
    nl = diag_solver(&d, 3, SLA_NONLINEAR_PICARD, 0);
    double v0[3] = {1, -1, 1};
    assert_int_equal(sla_nonlinear_solve(nl, v0, u, &info), SLA_NOT_CONVERGED);
    assert_int_equal(info.reason, SLA_NONLINEAR_DIVERGED);
    assert_int_equal(info.iterations, 10);
    diag_done(&d, &nl);
    /* Anderson solves that same linear problem (the map is affine: depth 1 is exact) */
    nl = diag_solver(&d, 3, SLA_NONLINEAR_ANDERSON, 0);
    TU_OK(sla_nonlinear_solve(nl, v0, u, &info));
    assert_true(fabs(u[1]) < 1e-12 && info.iterations <= 3);
    diag_done(&d, &nl);
}

static void nan_from_residual(void **state)
{
    (void)state;
    diag d;
    /* log(u) − 1 from u0 = 10: the full Newton step lands at u < 0 (NaN); backtracking recovers */
    sla_nonlinear *nl = diag_solver(&d, 1, SLA_NONLINEAR_NEWTON, 1);
    double u0[3] = {10, 10, 10}, u[3];
    sla_nonlinear_info info;
    TU_OK(sla_nonlinear_solve(nl, u0, u, &info));
    assert_true(fabs(u[0] - exp(1)) < 1e-10 && info.backtracks >= 1);
    /* NaN at u0: an error naming the entry */
    d.calls = 0;
    d.nan_after = 0;
    assert_int_equal(sla_nonlinear_solve(nl, u0, u, &info), SLA_ENONFINITE);
    assert_true(strstr(sla_last_error(), "F(u0)[1]") != NULL);
    assert_false(info.converged);
    /* NaN at every trial point: non-finite, u = the last finite iterate (u0) */
    d.calls = 0;
    d.nan_after = 1;
    double w0[3] = {2, 2, 2};
    assert_int_equal(sla_nonlinear_solve(nl, w0, u, &info), SLA_NOT_CONVERGED);
    assert_int_equal(info.reason, SLA_NONLINEAR_NONFINITE);
    assert_true(u[0] == 2 && u[2] == 2);
    /* non-finite u0 */
    w0[2] = INFINITY;
    assert_int_equal(sla_nonlinear_solve(nl, w0, u, &info), SLA_ENONFINITE);
    assert_true(strstr(sla_last_error(), "u0[2]") != NULL);
    diag_done(&d, &nl);
    /* Bratu, NaN once (the third residual call, a line-search trial): still converges */
    bratu b;
    bratu_init(&b, 1, 50, 1.0);
    b.nan_at = 3;
    sla_nonlinear_problem P = bratu_problem(&b);
    TU_OK(sla_nonlinear_create(&P, NULL, &nl));
    double z[50] = {0}, x[50];
    TU_OK(sla_nonlinear_solve(nl, z, x, &info));
    assert_true(info.converged && info.backtracks >= 1);
    sla_nonlinear_free(&nl);
    bratu_free(&b);
}

/* a Jacobian-apply callback that fails inside the Krylov solve, leaving its own message */
static int failing_apply(void *ctx, sla_op op, const void *u, const void *v, void *y)
{
    (void)ctx; (void)op; (void)u; (void)v; (void)y;
    sla_matrix bad = {0};
    sla_matrix_check(&bad, 0);                   /* leaves "sla_matrix_check: ..." */
    return 3;
}

static int failing_vjp(void *ctx, const void *u, const void *w)
{
    (void)ctx; (void)u; (void)w;
    return 5;
}

static void failing_callbacks(void **state)
{
    (void)state;
    bratu b;
    bratu_init(&b, 1, 50, 1.0);
    b.fail_at = 3;
    sla_nonlinear_problem P = bratu_problem(&b);
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, NULL, &nl));
    double z[50] = {0}, u[50] = {0}, g[50];
    sla_nonlinear_info info;
    assert_int_equal(sla_nonlinear_solve(nl, z, u, &info), SLA_ECALLBACK);
    assert_int_equal(info.reason, SLA_NONLINEAR_CALLBACK);
    assert_false(info.converged);
    printf("%s\n", sla_last_error());
    assert_true(strstr(sla_last_error(), "residual callback returned 7 (iteration 2") != NULL);
    assert_true(sla_nonlinear_solution(nl) != NULL);      /* the last iterate is kept */
    assert_true(info.history[1] < info.history[0]);
    /* a failing parameter VJP */
    b.fail_at = -1;
    TU_OK(sla_nonlinear_solve(nl, z, u, &info));
    sla_nonlinear_free(&nl);
    P.param_vjp = failing_vjp;
    TU_OK(sla_nonlinear_create(&P, NULL, &nl));
    TU_OK(sla_nonlinear_solve(nl, z, u, &info));
    for (int i = 0; i < 50; i++) g[i] = 1;
    sla_solve_info vi;
    assert_int_equal(sla_nonlinear_vjp(nl, g, NULL, &vi), SLA_ECALLBACK);
    assert_true(strstr(sla_last_error(), "param_vjp callback returned 5") != NULL);
    assert_false(vi.converged);
    sla_nonlinear_free(&nl);
    /* Newton–Krylov: the callback's own status and message come through the Krylov layer */
    P = bratu_problem(&b);
    P.jacobian_apply = failing_apply;
    sla_nonlinear_options o;
    sla_nonlinear_options_init_for(&o, SLA_NONLINEAR_NEWTON_KRYLOV);
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    assert_int_equal(sla_nonlinear_solve(nl, z, u, &info), SLA_ECALLBACK);
    printf("%s\n", sla_last_error());
    assert_int_equal(info.reason, SLA_NONLINEAR_CALLBACK);
    assert_true(strstr(sla_last_error(), "jacobian_apply callback returned 3") != NULL);
    assert_true(strstr(sla_last_error(), "sla_matrix_check: A is NULL") != NULL ||
                strstr(sla_last_error(), "sla_matrix_check") != NULL);
    sla_nonlinear_free(&nl);
    bratu_free(&b);
}

/* 1D Bratu has no solution for λ > λ* ≈ 3.5138: never "converged" */
static void no_solution(void **state)
{
    (void)state;
    for (int m = 0; m < SLA_NONLINEAR_METHOD_COUNT; m++) {
        bratu b;
        bratu_init(&b, 1, 40, 4.0);
        sla_nonlinear_problem P = bratu_problem(&b);
        sla_nonlinear_options o;
        sla_nonlinear_options_init_for(&o, (sla_nonlinear_method)m);
        sla_nonlinear *nl;
        TU_OK(sla_nonlinear_create(&P, &o, &nl));
        double z[40] = {0}, u[40];
        sla_nonlinear_info info;
        sla_status st = sla_nonlinear_solve(nl, z, u, &info);
        printf("%-14s λ = 4: status %d, %s\n", sla_nonlinear_method_name(m), (int)st,
               sla_nonlinear_reason_name(info.reason));
        assert_true(st == SLA_NOT_CONVERGED || st == SLA_ESINGULAR || st == SLA_ENOTSPD);
        assert_false(info.converged);
        assert_true(info.reason != SLA_NONLINEAR_CONVERGED);
        assert_true(info.residual_norm > info.tolerance);
        sla_nonlinear_free(&nl);
        bratu_free(&b);
    }
}

static void argument_errors(void **state)
{
    (void)state;
    bratu b;
    bratu_init(&b, 1, 10, 1.0);
    sla_nonlinear_problem P = bratu_problem(&b);
    sla_nonlinear *nl = (sla_nonlinear *)&b;
    P.residual = NULL;
    assert_int_equal(sla_nonlinear_create(&P, NULL, &nl), SLA_EINVAL);
    assert_null(nl);
    assert_true(strstr(sla_last_error(), "problem.residual is NULL") != NULL);
    P = bratu_problem(&b);
    P.jacobian = NULL;
    assert_int_equal(sla_nonlinear_create(&P, NULL, &nl), SLA_EINVAL);
    assert_true(strstr(sla_last_error(), "newton needs problem.jacobian") != NULL);
    P = bratu_problem(&b);
    P.n = 11;
    assert_int_equal(sla_nonlinear_create(&P, NULL, &nl), SLA_ESHAPE);
    P = bratu_problem(&b);
    P.dtype = (sla_dtype)7;
    assert_int_equal(sla_nonlinear_create(&P, NULL, &nl), SLA_EDTYPE);
    P = bratu_problem(&b);
    sla_nonlinear_options o;
    sla_nonlinear_options_init(&o);
    o.rtol = -1;
    assert_int_equal(sla_nonlinear_create(&P, &o, &nl), SLA_EINVAL);
    assert_true(strstr(sla_last_error(), "options.rtol") != NULL);
    sla_nonlinear_options_init_for(&o, SLA_NONLINEAR_NEWTON_KRYLOV);
    o.linear.method = SLA_METHOD_CHOLESKY;
    assert_int_equal(sla_nonlinear_create(&P, &o, &nl), SLA_EINVAL);
    assert_true(strstr(sla_last_error(), "newton_krylov needs a Krylov method") != NULL);
    sla_nonlinear_options_init(&o);
    o.anderson_depth = 0;
    assert_int_equal(sla_nonlinear_create(&P, &o, &nl), SLA_EINVAL);
    /* solve and vjp arguments */
    TU_OK(sla_nonlinear_create(&P, NULL, &nl));
    double x[10] = {0}, g[10] = {1};
    assert_int_equal(sla_nonlinear_vjp(nl, g, NULL, NULL), SLA_EINVAL);   /* no solve yet */
    assert_int_equal(sla_nonlinear_solve(nl, x, x, NULL), SLA_EINVAL);    /* u overlaps u0 */
    double u[10];
    TU_OK(sla_nonlinear_solve(nl, x, u, NULL));
    g[3] = NAN;
    assert_int_equal(sla_nonlinear_vjp(nl, g, NULL, NULL), SLA_ENONFINITE);
    assert_true(strstr(sla_last_error(), "g[3]") != NULL);
    g[3] = 0;
    assert_int_equal(sla_nonlinear_vjp(nl, g, g, NULL), SLA_EINVAL);      /* λ overlaps g */
    sla_nonlinear_free(&nl);
    sla_nonlinear_free(&nl);                                              /* NULL is fine */
    /* the adjoint of finite-difference Newton–Krylov needs Jᵀ */
    P = bratu_problem(&b);
    P.jacobian = P.linearization = NULL;
    P.jacobian_apply = NULL;
    P.pattern = NULL;
    sla_nonlinear_options_init_for(&o, SLA_NONLINEAR_NEWTON_KRYLOV);
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    sla_nonlinear_info info;
    TU_OK(sla_nonlinear_solve(nl, x, u, &info));
    assert_true(strstr(info.description, "finite differences") != NULL);
    assert_int_equal(sla_nonlinear_vjp(nl, g, NULL, NULL), SLA_EINVAL);
    assert_true(strstr(sla_last_error(), "needs J(u*)ᵀ") != NULL);
    sla_nonlinear_free(&nl);
    sla_nonlinear_method m;
    assert_int_equal(sla_nonlinear_method_from_name("anderson", &m), SLA_OK);
    assert_int_equal(m, SLA_NONLINEAR_ANDERSON);
    assert_int_equal(sla_nonlinear_method_from_name("newtonn", &m), SLA_EINVAL);
    assert_string_equal(sla_nonlinear_reason_name(SLA_NONLINEAR_LINE_SEARCH), "line search failed");
    bratu_free(&b);
}

/* every allocation of create + solve + vjp failing in turn: an error, never a crash */
static void allocation_failures(void **state)
{
    (void)state;
    for (int m = 0; m < SLA_NONLINEAR_METHOD_COUNT; m++) {
        int reached = 0;
        for (int64_t k = 0; k < 400 && !reached; k++) {
            bratu b;
            bratu_init(&b, 1, 20, 1.0);
            sla_nonlinear_problem P = bratu_problem(&b);
            sla_nonlinear_options o;
            sla_nonlinear_options_init_for(&o, (sla_nonlinear_method)m);
            sla_nonlinear *nl = NULL;
            double z[20] = {0}, u[20], g[20] = {1};
            sla_test_fail_alloc_after(k);
            sla_status st = sla_nonlinear_create(&P, &o, &nl);
            if (st == SLA_OK) st = sla_nonlinear_solve(nl, z, u, NULL);
            if (st == SLA_OK) st = sla_nonlinear_vjp(nl, g, NULL, NULL);
            int64_t used = sla_test_fail_alloc_after(-1);
            if (st == SLA_OK && used <= k) reached = 1;
            else if (st == SLA_OK) { /* a failure some layer recovered from */ }
            else if (!(st == SLA_ENOMEM || st == SLA_EBACKEND || st == SLA_NOT_CONVERGED))
                fail_msg("%s, allocation %lld failing: status %d: %s", sla_nonlinear_method_name(m),
                         (long long)k, (int)st, sla_last_error());
            sla_nonlinear_free(&nl);
            bratu_free(&b);
        }
        assert_true(reached);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(singular_jacobian),
        cmocka_unit_test(diverging_starts),
        cmocka_unit_test(nan_from_residual),
        cmocka_unit_test(failing_callbacks),
        cmocka_unit_test(no_solution),
        cmocka_unit_test(argument_errors),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
