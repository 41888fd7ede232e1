/* The backend tier (sla/backend.h) from outside libsla: this program and the toy backend library
 * see only the public headers. It checks that
 *   - libsla's own CG, BiCGStab, GMRES, MINRES and LSQR run on a space an outside library made
 *     (the host kernels + a counting reduce hook: a one-process distributed space), with the
 *     exported Jacobi preconditioner, and give results bit-identical to the built-in solver,
 *     with the expected number of reductions per iteration;
 *   - a completely foreign space (own vectors and loops) and a callback operator with the
 *     preconditioner built from another matrix (Amat/Pmat) converge;
 *   - a registered backend is found by name and priority, serves solve and its VJP through the
 *     batch runner on a non-concurrent space (no reduction from a worker thread), its block space
 *     carries the VJP's checks and scaling, and it can be removed again;
 *   - broken tables and failing reductions give errors, never a wrong answer; a preconditioner
 *     set-up returns its reason as data; the solver accessors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "toy_backend.h"

static void reset_counts(void)
{
    memset(&toy_count, 0, sizeof toy_count);
    toy_count.fail_after = -1;
}

/* the built-in solver's x for (method, precond) on A, one right-hand side */
static int64_t builtin_solve(const sla_matrix *A, sla_method m, sla_precond pc, sla_op op,
                             const double *b, double *x, const char *backend)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    o.precond = pc;
    o.rtol = 1e-10;
    o.backend = backend;
    sla_solver *s;
    TU_OK(sla_solver_create(A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, op, 1, b, x, &info));
    sla_solver_free(&s);
    return info.iterations;
}

static sla_krylov_params params(double rtol, int64_t maxiter)
{
    return (sla_krylov_params){.rtol = rtol, .maxiter = maxiter, .restart = 50,
                               .monitor_every = 1};
}

/* The same method and preconditioner on the CSR operator with a counting reduce hook. */
static void run_on_toy_space(const sla_matrix *A, sla_method m, sla_precond pc, sla_op op,
                             const double *b, double *x, sla_krylov_result *res)
{
    sla_csr_operator c;
    sla_csr_operator_init(&c, A, 0, 1, m == SLA_METHOD_LSQR, 0);
    toy_make_distributed(&c.range);
    if (m == SLA_METHOD_LSQR) toy_make_distributed(&c.domain);
    sla_pc *p = NULL;
    sla_pc_binding bind;
    if (pc == SLA_PRECOND_JACOBI) {
        sla_pc_options po = {.kind = SLA_PRECOND_JACOBI,
                             .absolute_diagonal = m == SLA_METHOD_MINRES};
        TU_OK(sla_pc_create(A, &po, &p, NULL));
        sla_operator_set_pc(&c.op, &bind, p, 0);
    }
    sla_krylov_params P = params(1e-10, 10000);
    reset_counts();
    TU_OK(sla_krylov_run(m, &c.op, op, &P, b, x, res));
    sla_pc_free(&p);
}

static void test_methods_bit_identical(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(30, 30, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    int64_t n = sla_pattern_nrows(p);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    double *xr = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, n, 7);
    struct { sla_method m; sla_precond pc; } cases[] = {
        {SLA_METHOD_CG, SLA_PRECOND_JACOBI}, {SLA_METHOD_CG, SLA_PRECOND_NONE},
        {SLA_METHOD_BICGSTAB, SLA_PRECOND_JACOBI}, {SLA_METHOD_GMRES, SLA_PRECOND_JACOBI},
        {SLA_METHOD_MINRES, SLA_PRECOND_JACOBI}, {SLA_METHOD_LSQR, SLA_PRECOND_NONE}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        for (int op = 0; op < 2; op++) {
            sla_op o = op ? SLA_OP_T : SLA_OP_N;
            int64_t it = builtin_solve(&A, cases[t].m, cases[t].pc, o, b, xr, "krylov");
            sla_krylov_result res;
            run_on_toy_space(&A, cases[t].m, cases[t].pc, o, b, x, &res);
            assert_int_equal(res.reason, SLA_REASON_CONVERGED);
            assert_int_equal(res.iterations, it);
            assert_memory_equal(x, xr, sizeof(double) * (size_t)n);
            assert_int_equal(res.kept_iteration, -1);
            assert_int_equal(toy_count.from_threads, 0);
            if (cases[t].m == SLA_METHOD_CG && cases[t].pc == SLA_PRECOND_JACOBI) {
                /* ‖b‖ and r₀ᵀM⁻¹r₀, then per iteration pᵀAp and (‖r‖², rᵀD⁻¹r) together,
                 * then the true residual */
                assert_int_equal(toy_count.reduces, 2 * res.iterations + 3);
                assert_int_equal(toy_count.values, 3 * res.iterations + 3);
            }
        }
    }
    free(b);
    free(x);
    free(xr);
    free(v);
    sla_pattern_free(&p);
}

/* LSQR on a rectangular A (the 2D grid gradient, 2 s (s − 1) × s²): domain and range differ. */
static void test_lsqr_rectangular(void **state)
{
    (void)state;
    int64_t s = 12, m = 2 * s * (s - 1), n = s * s, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)(2 * m)), *c = malloc(sizeof(int64_t) * (size_t)(2 * m));
    double *w = malloc(sizeof(double) * (size_t)(2 * m));
    int64_t row = 0;
    for (int64_t y = 0; y < s; y++)
        for (int64_t x = 0; x + 1 < s; x++, row++) {
            r[k] = row; c[k] = y * s + x; w[k++] = -1;
            r[k] = row; c[k] = y * s + x + 1; w[k++] = 1;
        }
    for (int64_t y = 0; y + 1 < s; y++)
        for (int64_t x = 0; x < s; x++, row++) {
            r[k] = row; c[k] = y * s + x; w[k++] = -1;
            r[k] = row; c[k] = (y + 1) * s + x; w[k++] = 1;
        }
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(m, n, k, r, c, &p));
    double *v = malloc(sizeof(double) * (size_t)k);
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, w, v));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * (size_t)m), *x = malloc(sizeof(double) * (size_t)n);
    double *xr = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, m, 3);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LSQR;
    o.rtol = 1e-10;
    sla_solver *sv;
    TU_OK(sla_solver_create(&A, &o, &sv));
    sla_solve_info info;
    TU_OK(sla_solver_solve(sv, SLA_OP_N, 1, b, xr, &info));
    assert_int_equal(sla_solver_rows(sv), m);
    assert_int_equal(sla_solver_cols(sv), n);
    sla_solver_free(&sv);
    sla_krylov_result res;
    run_on_toy_space(&A, SLA_METHOD_LSQR, SLA_PRECOND_NONE, SLA_OP_N, b, x, &res);
    assert_int_equal(res.iterations, info.iterations);
    assert_memory_equal(x, xr, sizeof(double) * (size_t)n);
    assert_true(res.normal_residual <= 1e-8 * res.residual);   /* inconsistent: S2 */
    free(r); free(c); free(w); free(v); free(b); free(x); free(xr);
    sla_pattern_free(&p);
}

/* ---- a space that shares nothing with the host kernels ---- */

typedef struct foreign { int64_t n; long dots; } foreign;

static sla_status f_create(const sla_space *V, void **v)
{
    *v = malloc(sizeof(double) * (size_t)(V->n ? V->n : 1));
    return *v ? SLA_OK : SLA_ENOMEM;
}
static void f_free(const sla_space *V, void *v) { (void)V; free(v); }
static sla_status f_dot(const sla_space *V, const void *x, const void *y, double *xy)
{
    const double *a = x, *b = y;
    double s = 0;
    for (int64_t i = 0; i < V->n; i++) s += a[i] * b[i];
    ((foreign *)V->ctx)->dots++;
    *xy = s;
    return SLA_OK;
}
static sla_status f_norm(const sla_space *V, const void *x, double *nrm)
{
    SLA_TRY(f_dot(V, x, x, nrm));
    *nrm = sqrt(*nrm);
    return SLA_OK;
}
static sla_status f_axpby(const sla_space *V, double a, const void *x, double b, void *y)
{
    const double *xx = x;
    double *yy = y;
    for (int64_t i = 0; i < V->n; i++)
        yy[i] = (a == 0 ? 0 : a * xx[i]) + (b == 0 ? 0 : b * yy[i]);
    return SLA_OK;
}
static sla_status f_cg_update(const sla_space *V, double alpha, const void *p, const void *q,
                              void *x, void *r, const void *d, double *rr, double *rz)
{
    const double *pp = p, *qq = q, *dd = d;
    double *xx = x, *rv = r, s = 0, t = 0;
    for (int64_t i = 0; i < V->n; i++) {
        xx[i] += alpha * pp[i];
        rv[i] -= alpha * qq[i];
        s += rv[i] * rv[i];
        t += rv[i] * (dd ? dd[i] : 1) * rv[i];
    }
    *rr = s;
    *rz = t;
    return SLA_OK;
}
static sla_status f_cg_direction(const sla_space *V, double beta, const void *z, const void *d,
                                 void *p)
{
    const double *zz = z, *dd = d;
    double *pp = p;
    for (int64_t i = 0; i < V->n; i++) pp[i] = (dd ? dd[i] : 1) * zz[i] + beta * pp[i];
    return SLA_OK;
}

typedef struct foreign_op { const sla_matrix *A; } foreign_op;

static sla_status f_apply(const sla_operator *op_, sla_op op, const void *x, void *y)
{
    const foreign_op *f = op_->ctx;
    return sla_spmv(op, 1.0, f->A, x, 0, 1, 0.0, y);
}

static void test_foreign_space_and_pmat(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(20, 20, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    foreign fc = {n, 0};
    sla_space V = {.n = n, .dtype = SLA_FLOAT64, .concurrent = 0, .ctx = &fc,
                   .vec_create = f_create, .vec_free = f_free, .dot = f_dot, .norm = f_norm,
                   .axpby = f_axpby, .cg_update = f_cg_update, .cg_direction = f_cg_direction};
    foreign_op fo = {&A};
    sla_operator op = {.domain = &V, .range = &V, .ctx = &fo, .apply = f_apply,
                       .threading = SLA_THREADS_ANY};
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    double *xr = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, n, 11);
    /* Pmat ≠ Amat: Jacobi of 2·A (a different matrix; M⁻¹ = D⁻¹/2 is still SPD) */
    double *v2 = malloc(sizeof(double) * (size_t)nnz);
    for (int64_t k = 0; k < nnz; k++) v2[k] = 2 * v[k];
    sla_matrix P2 = sla_matrix_view(p, SLA_FLOAT64, 1, v2);
    sla_pc *pc;
    sla_pc_options po = {.kind = SLA_PRECOND_JACOBI};
    TU_OK(sla_pc_create(&P2, &po, &pc, NULL));
    sla_pc_binding bind;
    sla_operator_set_pc(&op, &bind, pc, 0);
    assert_int_equal(op.threading, SLA_THREADS_ANY);
    sla_krylov_params P = params(1e-10, 10000);
    sla_krylov_result res;
    TU_OK(sla_krylov_run(SLA_METHOD_CG, &op, SLA_OP_N, &P, b, x, &res));
    assert_int_equal(res.reason, SLA_REASON_CONVERGED);
    assert_true(res.residual <= 1e-10 * res.bnorm);
    assert_true(fc.dots > 0);
    int64_t it = builtin_solve(&A, SLA_METHOD_CG, SLA_PRECOND_JACOBI, SLA_OP_N, b, xr, NULL);
    /* M scaled by 1/2 leaves CG's iterates unchanged in exact arithmetic */
    assert_true(llabs(res.iterations - it) <= 1);
    for (int64_t i = 0; i < n; i++) TU_CLOSE(x[i], xr[i], 1e-8 * tu_norm2(xr, n));
    /* GMRES and BiCGStab on the same foreign table */
    sla_method more[] = {SLA_METHOD_GMRES, SLA_METHOD_BICGSTAB, SLA_METHOD_MINRES};
    for (int t = 0; t < 3; t++) {
        TU_OK(sla_krylov_run(more[t], &op, SLA_OP_N, &P, b, x, &res));
        assert_int_equal(res.reason, SLA_REASON_CONVERGED);
        assert_true(res.residual <= 1e-10 * res.bnorm);
    }
    sla_pc_free(&pc);
    free(b); free(x); free(xr); free(v2); free(v);
    sla_pattern_free(&p);
}

/* ---- a registered backend ---- */

static void test_registered_backend(void **state)
{
    (void)state;
    int64_t before = sla_backend_count();
    TU_OK(toy_register());
    assert_int_equal(sla_backend_count(), before + 1);
    assert_int_equal(toy_register(), SLA_EINVAL);                 /* the name is taken */
    assert_non_null(strstr(sla_last_error(), "'toy' is already registered"));
    sla_backend_info bi;
    TU_OK(sla_backend_get(before, &bi));
    assert_string_equal(bi.name, "toy");

    sla_pattern *p;
    double *v;
    tu_poisson2d(16, 16, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), batch = 2, nrhs = 3;
    double *vals = malloc(sizeof(double) * (size_t)(batch * nnz));
    for (int64_t q = 0; q < batch; q++)
        for (int64_t k = 0; k < nnz; k++) vals[q * nnz + k] = v[k] * (1 + 0.5 * (double)q);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, batch, vals);
    int64_t tot = batch * n * nrhs;
    double *B = malloc(sizeof(double) * (size_t)tot), *G = malloc(sizeof(double) * (size_t)tot);
    double *X[2], *dB[2], *dv[2];
    tu_fill_random(B, tot, 5);
    tu_fill_random(G, tot, 6);
    for (int i = 0; i < tot; i++) G[i] *= 1e-30;             /* the VJP scales it back up */
    const char *names[2] = {"krylov", "toy"};
    for (int t = 0; t < 2; t++) {
        X[t] = malloc(sizeof(double) * (size_t)tot);
        dB[t] = malloc(sizeof(double) * (size_t)tot);
        dv[t] = malloc(sizeof(double) * (size_t)(batch * nnz));
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_CG;
        o.precond = SLA_PRECOND_JACOBI;
        o.backend = t ? NULL : names[t];      /* toy: found by priority (100 > krylov's 10) */
        sla_solver *s;
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_non_null(strstr(sla_solver_describe(s), t ? "(toy" : "(krylov"));
        reset_counts();
        sla_solve_info info;
        TU_OK(sla_solver_solve(s, SLA_OP_N, nrhs, B, X[t], &info));
        assert_int_equal(info.converged, 1);
        TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, nrhs, X[t], G, dB[t], dv[t], &info));
        if (t == 1) {
            /* 6 systems on 2 threads, yet every reduction on the calling thread */
            assert_true(toy_count.reduces > 0);
            assert_int_equal(toy_count.from_threads, 0);
            /* the VJP's finiteness check and ‖G‖∞ went through the toy's block space */
            assert_true(toy_count.block_spaces >= 2);
            assert_true(toy_count.max_reduces >= 2);
        }
        sla_solver_free(&s);
    }
    assert_memory_equal(X[0], X[1], sizeof(double) * (size_t)tot);
    assert_memory_equal(dB[0], dB[1], sizeof(double) * (size_t)tot);
    assert_memory_equal(dv[0], dv[1], sizeof(double) * (size_t)(batch * nnz));
    for (int t = 0; t < 2; t++) { free(X[t]); free(dB[t]); free(dv[t]); }

    TU_OK(toy_unregister());
    assert_int_equal(sla_backend_count(), before);
    assert_int_equal(toy_unregister(), SLA_EINVAL);
    assert_int_equal(sla_backend_unregister("krylov"), SLA_EINVAL);   /* built-in */
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.backend = "toy";
    sla_solver *s;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EUNSUPPORTED);
    assert_non_null(strstr(sla_last_error(), "no backend named 'toy'"));
    free(B); free(G); free(vals); free(v);
    sla_pattern_free(&p);
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(10, 10, &p, &v);
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    tu_fill_random(b, n, 1);
    sla_csr_operator c;
    sla_csr_operator_init(&c, &A, 0, 1, 0, 1);
    sla_krylov_params P = params(1e-10, 1000);
    sla_krylov_result res;
    /* a hole in the table is named */
    sla_space broken = c.range;
    broken.cg_update = NULL;
    sla_operator op = c.op;
    op.domain = op.range = &broken;
    assert_int_equal(sla_krylov_run(SLA_METHOD_CG, &op, SLA_OP_N, &P, b, x, &res), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "A->domain->cg_update is NULL"));
    assert_int_equal(sla_krylov_run(SLA_METHOD_LU, &c.op, SLA_OP_N, &P, b, x, &res), SLA_EINVAL);
    P.monitor_every = 0;
    assert_int_equal(sla_krylov_run(SLA_METHOD_CG, &c.op, SLA_OP_N, &P, b, x, &res), SLA_EINVAL);
    P.monitor_every = 1;
    /* a failing collective ends the solve with its error, never with a result */
    toy_make_distributed(&c.range);
    reset_counts();
    toy_count.fail_after = 5;
    sla_status st = sla_krylov_run(SLA_METHOD_CG, &c.op, SLA_OP_N, &P, b, x, &res);
    assert_int_equal(st, SLA_EBACKEND);
    assert_non_null(strstr(sla_last_error(), "allreduce failed (injected)"));
    for (int m = SLA_METHOD_BICGSTAB; m <= SLA_METHOD_MINRES; m++) {
        reset_counts();
        toy_count.fail_after = 7;
        assert_int_equal(sla_krylov_run((sla_method)m, &c.op, SLA_OP_N, &P, b, x, &res),
                         SLA_EBACKEND);
    }
    /* a preconditioner's failure reason is data: row 3 without its diagonal */
    int64_t nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *v0 = malloc(sizeof(double) * (size_t)nnz);
    memcpy(v0, v, sizeof(double) * (size_t)nnz);
    for (int64_t k = rp[3]; k < rp[4]; k++) if (ci[k] == 3) v0[k] = 0;
    sla_matrix A0 = sla_matrix_view(p, SLA_FLOAT64, 1, v0);
    sla_pc *pc = (sla_pc *)&c;                      /* overwritten with NULL on error */
    char reason[SLA_PC_REASON_LEN];
    sla_pc_options po = {.kind = SLA_PRECOND_JACOBI};
    assert_int_equal(sla_pc_create(&A0, &po, &pc, reason), SLA_EBREAKDOWN);
    assert_null(pc);
    assert_string_equal(reason, "Jacobi: zero or missing diagonal entry in row 3 (batch element 0)");
    po.kind = SLA_PRECOND_IC0;
    TU_OK(sla_pc_create(&A, &po, &pc, reason));
    assert_string_equal(reason, "");
    assert_string_equal(sla_pc_describe(pc), "ic0");
    assert_int_equal(sla_pc_threading(pc), SLA_THREADS_ANY);
    assert_int_equal(sla_pc_update(pc, &A0, reason), SLA_EBREAKDOWN);
    assert_non_null(strstr(reason, "IC(0) breakdown at row 3 (batch element 0)"));
    assert_null(strstr(reason, ";"));                /* the reason without the hint */
    sla_pc_free(&pc);
    free(v0); free(b); free(x); free(v);
    sla_pattern_free(&p);
}

/* the public accessors of a solver object */
static void test_accessors(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(8, 8, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_KLU;
    sla_solver *s;
    TU_OK(sla_solver_create(&A, &o, &s));
    assert_true(sla_solver_rcond(s) > 0 && sla_solver_rcond(s) <= 1);
    assert_int_equal(sla_solver_dtype(s), SLA_FLOAT64);
    assert_int_equal(sla_solver_batch(s), 1);
    assert_int_equal(sla_solver_rows(s), 64);
    assert_int_equal(sla_solver_cols(s), 64);
    assert_ptr_equal(sla_solver_matrix(s)->values, v);
    assert_int_equal(sla_solver_options_resolved(s)->method, SLA_METHOD_KLU);
    sla_solver_free(&s);
    assert_true(isnan(sla_solver_rcond(NULL)));
    assert_int_equal(sla_solver_batch(NULL), 0);
    free(v);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methods_bit_identical),
        cmocka_unit_test(test_lsqr_rectangular),
        cmocka_unit_test(test_foreign_space_and_pmat),
        cmocka_unit_test(test_registered_backend),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_accessors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
