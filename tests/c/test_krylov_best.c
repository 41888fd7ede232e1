/* A Krylov solve that stops without converging never returns an iterate worse than its initial
 * guess without saying so (issue: preconditioned MINRES/GMRES on a singular inconsistent system
 * returned ‖b − Ax‖/‖b‖ = 3.4e16 with only a warning). Every method keeps checkpoints and, at a
 * stop that is not convergence, returns the checkpoint when its true residual is not larger
 * (src/krylov/krylov.h). The kind is tested on every method, with and without a
 * preconditioner, from x₀ = 0 and from a given x₀, on singular inconsistent systems (Neumann
 * Laplacians) and on a maxiter stop of a regular one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"

/* the graph Laplacian of an nx × ny grid (Neumann: rows sum to zero; singular, null space the
 * constants) */
static void neumann(int64_t nx, int64_t ny, sla_pattern **p, double **values)
{
    int64_t n = nx * ny, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)(5 * n)), *c = malloc(sizeof(int64_t) * (size_t)(5 * n));
    double *v = malloc(sizeof(double) * (size_t)(5 * n));
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int64_t i = y * nx + x, d = 0;
            int64_t nb[4] = {x > 0 ? i - 1 : -1, x + 1 < nx ? i + 1 : -1, y > 0 ? i - nx : -1,
                             y + 1 < ny ? i + nx : -1};
            for (int q = 0; q < 4; q++)
                if (nb[q] >= 0) { r[k] = i; c[k] = nb[q]; v[k++] = -1; d++; }
            r[k] = i; c[k] = i; v[k++] = (double)d;
        }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc(sizeof(double) * (size_t)k);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r);
    free(c);
    free(v);
}

typedef struct outcome {
    sla_status st;
    sla_solve_info info;
    double r0;                   /* ‖b − A x₀‖ */
    double r;                    /* true ‖b − A x‖ of the returned x, recomputed here */
} outcome;

static outcome solve(const sla_matrix *A, sla_method m, sla_precond pc, const double *b,
                     const double *x0, int64_t maxiter)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    sla_solver_options o = kt_options(m, pc, 1e-10);
    if (maxiter > 0) o.maxiter = maxiter;
    o.initial_guess_nonzero = x0 != NULL;
    sla_solver *s;
    TU_OK(sla_solver_create(A, &o, &s));
    double *x = malloc(sizeof(double) * (size_t)n);
    outcome out;
    if (x0) memcpy(x, x0, sizeof(double) * (size_t)n);
    double *zero = calloc((size_t)n, sizeof(double));
    out.r0 = kt_residual(A, 0, SLA_OP_N, x0 ? x0 : zero, b);
    out.st = sla_solver_solve(s, SLA_OP_N, 1, b, x, &out.info);
    assert_true(out.st >= 0);
    out.r = kt_residual(A, 0, SLA_OP_N, x, b);
    /* the info reports the residual of what it returns */
    TU_CLOSE(out.info.residual_norm, out.r, 1e-8 * out.r0);
    sla_solver_free(&s);
    free(zero);
    free(x);
    return out;
}

static const sla_method methods[] = {SLA_METHOD_CG, SLA_METHOD_BICGSTAB, SLA_METHOD_GMRES,
                                     SLA_METHOD_MINRES, SLA_METHOD_LSQR};

/* every method × {none, jacobi}: never worse than x₀, whether x₀ = 0 or given */
static void check_never_worse(const sla_matrix *A, const double *b, const double *x0)
{
    for (int mi = 0; mi < 5; mi++)
        for (int j = 0; j < 2; j++) {
            if (methods[mi] == SLA_METHOD_LSQR && j) continue;   /* LSQR takes none */
            outcome o = solve(A, methods[mi], j ? SLA_PRECOND_JACOBI : SLA_PRECOND_NONE, b, x0, 0);
            if (!(o.r <= o.r0 * (1 + 1e-12)))
                fprintf(stderr, "%s + %s, x0 %s: ‖r‖ %.17g > ‖r0‖ %.17g (%s): %s\n",
                        sla_method_name(methods[mi]), j ? "jacobi" : "none", x0 ? "given" : "0",
                        o.r, o.r0, sla_reason_name(o.info.reason), o.info.description);
            assert_true(o.r <= o.r0 * (1 + 1e-12));
            if (!o.info.converged) assert_int_equal(o.st, SLA_NOT_CONVERGED);
        }
}

/* The instance of the issue: 50-point Neumann Laplacian, b = 1 (all of b in the null space: x = 0
 * is the least-squares solution), Jacobi. MINRES went to ‖r‖/‖b‖ = 3.4e16, GMRES to 2.7. */
static void test_singular_path_b_one(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    neumann(50, 1, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = kt_ones(50);
    sla_method m[2] = {SLA_METHOD_MINRES, SLA_METHOD_GMRES};
    for (int t = 0; t < 2; t++) {
        outcome o = solve(&A, m[t], SLA_PRECOND_JACOBI, b, NULL, 0);
        assert_int_equal(o.st, SLA_NOT_CONVERGED);
        assert_true(o.info.relative_residual <= 1 + 1e-12);
        /* the initial guess was the best: returned, and said */
        assert_non_null(strstr(o.info.description, "returned the initial guess"));
    }
    check_never_worse(&A, b, NULL);
    free(b);
    free(v);
    sla_pattern_free(&p);
}

/* 2D grid, b with a component in the null space and one outside it, from x₀ = 0 and from x₀. */
static void test_singular_grid(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    neumann(20, 20, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    int64_t n = 400;
    double *b = malloc(sizeof(double) * (size_t)n), *x0 = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, n, 17);
    for (int64_t i = 0; i < n; i++) b[i] += 0.3;
    tu_fill_random(x0, n, 18);
    check_never_worse(&A, b, NULL);
    check_never_worse(&A, b, x0);
    free(b);
    free(x0);
    free(v);
    sla_pattern_free(&p);
}

/* A regular SPD system stopped by maxiter: the returned x is the better of the last iterate and
 * the checkpoint (its residual at most the last one's), and only a non-converged solve may
 * return a checkpoint. */
static void test_maxiter_stop(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(30, 30, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    int64_t n = 900;
    double *b = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, n, 2);
    for (int mi = 0; mi < 5; mi++) {
        outcome o = solve(&A, methods[mi], SLA_PRECOND_NONE, b, NULL, 7);
        assert_int_equal(o.st, SLA_NOT_CONVERGED);
        assert_int_equal(o.info.reason, SLA_REASON_MAXITER);
        assert_int_equal(o.info.iterations, 7);
        assert_true(o.r < o.r0);
        outcome c = solve(&A, methods[mi], SLA_PRECOND_NONE, b, NULL, 0);
        assert_int_equal(c.st, SLA_OK);
        assert_null(strstr(c.info.description, "returned"));
    }
    free(b);
    free(v);
    sla_pattern_free(&p);
}

/* float32 on the singular path: the same guarantee. */
static void test_singular_float32(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    neumann(50, 1, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    float *vf = malloc(sizeof(float) * (size_t)nnz), b[50], x[50];
    for (int64_t k = 0; k < nnz; k++) vf[k] = (float)v[k];
    for (int i = 0; i < 50; i++) b[i] = 1;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    for (int mi = 0; mi < 4; mi++) {
        sla_solver_options o = kt_options(methods[mi], SLA_PRECOND_JACOBI, 1e-5);
        sla_solver *s;
        TU_OK(sla_solver_create(&A, &o, &s));
        sla_solve_info info;
        assert_true(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info) >= 0);
        assert_true(info.relative_residual <= 1 + 1e-6);
        sla_solver_free(&s);
    }
    free(vf);
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_singular_path_b_one),
        cmocka_unit_test(test_singular_grid),
        cmocka_unit_test(test_maxiter_stop),
        cmocka_unit_test(test_singular_float32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
