/* Krylov methods on the shared real matrices (facts in ../shared/matrices/README.md), with
 * dense LAPACK references for solutions and adjoint solutions. What converges and what does
 * not is recorded in docs/krylov.md. */
#include <stdio.h>

#include "ktest.h"

extern void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                    double *w, double *work, const int *lwork, int *iwork, const int *liwork,
                    int *info);

typedef struct loaded {
    sla_pattern *p;
    double *v;
    int64_t n;
    sla_matrix A;
    double *b, *x, *xr;
} loaded;

static int load(const char *name, loaded *L)
{
    if (!tu_have_matrices()) return 0;
    tu_load(name, &L->p, &L->v);
    L->n = sla_pattern_nrows(L->p);
    L->A = sla_matrix_view(L->p, SLA_FLOAT64, 1, L->v);
    L->b = kt_ones(L->n);
    L->x = calloc((size_t)L->n, sizeof(double));
    L->xr = calloc((size_t)L->n, sizeof(double));
    return 1;
}

static void unload(loaded *L)
{
    sla_pattern_free(&L->p);
    free(L->v); free(L->b); free(L->x); free(L->xr);
}

/* solves with (m, pc, rtol, restart, maxiter); returns the status, fills info */
static sla_status run(loaded *L, sla_method m, sla_precond pc, double rtol, int64_t restart,
                      int64_t maxiter, sla_op op, sla_solve_info *info, char *desc)
{
    sla_solver_options o = kt_options(m, pc, rtol);
    if (restart > 0) o.restart = restart;
    if (maxiter > 0) o.maxiter = maxiter;
    sla_solver *s = NULL;
    sla_status st = sla_solver_create(&L->A, &o, &s);
    if (st < 0) return st;
    if (desc) snprintf(desc, 320, "%s", sla_solver_describe(s));
    st = sla_solver_solve(s, op, 1, L->b, L->x, info);
    sla_solver_free(&s);
    return st;
}

/* ‖b − op(A)x‖ / (‖A‖_F ‖x‖ + ‖b‖) */
static double scaled_residual(loaded *L, sla_op op)
{
    double nA;
    TU_OK(sla_matrix_norm(&L->A, 'F', &nA));
    return kt_residual(&L->A, 0, op, L->x, L->b) / (nA * tu_norm2(L->x, L->n) + tu_norm2(L->b, L->n));
}

static void bcsstk13(void **state)
{
    /* κ 1.1e10: CG + Jacobi to rtol 1e-8 (reachable; 1e-10 is below what rounding allows in
     * the recurrence for this κ) within the default maxiter 10n + 100 */
    loaded L;
    if (!load("bcsstk13.mtx", &L)) skip();
    sla_solve_info info;
    TU_OK(run(&L, SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-8, 0, 0, SLA_OP_N, &info, NULL));
    assert_true(info.iterations > 1000 && info.iterations < 3000);   /* 1513 measured */
    assert_true(kt_residual(&L.A, 0, SLA_OP_N, L.x, L.b) <= 1e-8 * tu_norm2(L.b, L.n));
    /* IC(0) does not exist in natural order (bcsstk13 is not an H-matrix) */
    assert_int_equal(run(&L, SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-8, 0, 0, SLA_OP_N, &info, NULL),
                     SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "IC(0) breakdown at row 95 (batch element 0)"));
    /* so precond = auto falls back to Jacobi and says why */
    char desc[320];
    TU_OK(run(&L, SLA_METHOD_CG, SLA_PRECOND_AUTO, 1e-8, 0, 0, SLA_OP_N, &info, desc));
    assert_non_null(strstr(desc, "cg + jacobi"));
    assert_non_null(strstr(desc, "ic0 failed"));
    unload(&L);
}

static void spd_against_dense(void **state)
{
    const char *names[] = {"1138_bus.mtx", "Laplace3D10.mtx"};
    double tol[] = {1e-8, 1e-10};        /* forward errors measured: 2e-10 and 7e-12 */
    for (int t = 0; t < 2; t++) {
        loaded L;
        if (!load(names[t], &L)) skip();
        kt_dense_solve(&L.A, 0, SLA_OP_N, L.b, L.xr);
        struct { sla_method m; sla_precond pc; } cases[] = {
            {SLA_METHOD_CG, SLA_PRECOND_IC0}, {SLA_METHOD_CG, SLA_PRECOND_JACOBI},
            {SLA_METHOD_MINRES, SLA_PRECOND_JACOBI}, {SLA_METHOD_GMRES, SLA_PRECOND_ILU0},
            {SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0}};
        for (int c = 0; c < 5; c++) {
            sla_solve_info info;
            char desc[320];
            for (int op = 0; op < 2; op++) {
                /* GMRES(50) stagnates on 1138_bus (restarts discard the small eigenvalues
                 * that CG and BiCGStab resolve after ≈ 150 steps): restart 200 */
                sla_status st = run(&L, cases[c].m, cases[c].pc, t == 0 ? 1e-8 : 1e-11, 200, 0,
                                    (sla_op)op, &info, desc);
                if (getenv("KT_VERBOSE"))
                    printf("%s %s op %d: %lld its, error %g\n", names[t], desc, op,
                           (long long)info.iterations, kt_relerr(L.x, L.xr, L.n));
                if (st != SLA_OK || !(kt_relerr(L.x, L.xr, L.n) < tol[t]))
                    fail_msg("%s %s: status %d, %s after %lld iterations, error %g", names[t],
                             desc, st, sla_reason_name(info.reason), (long long)info.iterations,
                             kt_relerr(L.x, L.xr, L.n));
            }
        }
        unload(&L);
    }
}

static void spd_adjoint_against_dense(void **state)
{
    /* the VJP's dB = A⁻ᵀ g (here A = Aᵀ) against LAPACK */
    loaded L;
    if (!load("1138_bus.mtx", &L)) skip();
    double *g = malloc(sizeof(double) * L.n), *db = malloc(sizeof(double) * L.n),
           *ref = malloc(sizeof(double) * L.n);
    tu_fill_random(g, L.n, 3);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_IC0, 1e-8);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&L.A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, L.b, L.x, NULL));
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, L.x, g, db, NULL, NULL));
    kt_dense_solve(&L.A, 0, SLA_OP_T, g, ref);
    assert_true(kt_relerr(db, ref, L.n) < 1e-5);
    sla_solver_free(&s);
    free(g); free(db); free(ref);
    unload(&L);
}

/* M⁻¹ = V |Λ|⁻¹ Vᵀ from a dense eigendecomposition of A: the ideal SPD preconditioner of a
 * symmetric indefinite matrix (M⁻¹A has eigenvalues ±1) */
typedef struct abs_pc {
    int n;
    double *V, *lam, *t;
} abs_pc;

static int abs_apply(void *ctx, sla_op op, int64_t b, const void *r, void *z)
{
    abs_pc *P = ctx;
    const double *rr = r;
    double *zz = z;
    int n = P->n;
    for (int j = 0; j < n; j++) {            /* t = |Λ|⁻¹ Vᵀ r (V column-major) */
        double s = 0;
        for (int i = 0; i < n; i++) s += P->V[(size_t)j * n + i] * rr[i];
        P->t[j] = s / fabs(P->lam[j]);
    }
    for (int i = 0; i < n; i++) zz[i] = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) zz[i] += P->V[(size_t)j * n + i] * P->t[j];
    return 0;
}

typedef struct mono {
    double last;
    int increased;
} mono;

static int watch(void *ctx, int64_t b, int64_t j, int64_t it, double res)
{
    mono *m = ctx;
    if (it > 0 && res > m->last * (1 + 1e-12)) m->increased = 1;
    m->last = res;
    return 0;
}

static void hangglider_minres(void **state)
{
    /* KKT matrix, inertia (+914, −733), κ ≈ 8.8e10, 733 zero diagonals */
    loaded L;
    if (!load("hangGlider_2.mtx", &L)) skip();
    /* precond = auto: Jacobi on |diag| cannot be built, so none; unpreconditioned MINRES makes
     * monotone but very slow progress (SciPy's minres behaves the same: ‖r‖/‖b‖ ≈ 0.4 after
     * 20000 iterations): not converged after 2000, and it says so */
    mono m = {0, 0};
    sla_solver_options o = kt_options(SLA_METHOD_MINRES, SLA_PRECOND_AUTO, 1e-8);
    o.maxiter = 2000;
    o.monitor = watch;
    o.monitor_ctx = &m;
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&L.A, &o, &s));
    assert_non_null(strstr(sla_solver_describe(s), "minres + none"));
    assert_non_null(strstr(sla_solver_describe(s), "jacobi failed"));
    sla_solve_info info;
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, L.b, L.x, &info), SLA_NOT_CONVERGED);
    assert_int_equal(info.reason, SLA_REASON_MAXITER);
    assert_false(m.increased);               /* MINRES: ‖r‖₂ never grows without M */
    assert_true(info.relative_residual < 1);
    sla_solver_free(&s);
    /* with an SPD preconditioner matching |A|, MINRES converges at once, op = N and T */
    int n = (int)L.n, lwork = -1, liwork = -1, inf = 0;
    abs_pc P = {n, calloc((size_t)n * n, sizeof(double)), malloc(sizeof(double) * n),
                malloc(sizeof(double) * n)};
    TU_OK(sla_matrix_to_dense(&L.A, P.V));   /* symmetric: row-major = column-major */
    double wq;
    int iwq;
    dsyevd_("V", "L", &n, P.V, &n, P.lam, &wq, &lwork, &iwq, &liwork, &inf);
    lwork = (int)wq;
    liwork = iwq;
    double *work = malloc(sizeof(double) * (size_t)lwork);
    int *iwork = malloc(sizeof(int) * (size_t)liwork);
    dsyevd_("V", "L", &n, P.V, &n, P.lam, work, &lwork, iwork, &liwork, &inf);
    assert_int_equal(inf, 0);
    int neg = 0;
    for (int i = 0; i < n; i++) neg += P.lam[i] < 0;
    assert_int_equal(neg, 733);              /* the inertia of the README */
    o = kt_options(SLA_METHOD_MINRES, SLA_PRECOND_USER, 1e-8);
    o.user_precond = abs_apply;
    o.user_precond_ctx = &P;
    TU_OK(sla_solver_create(&L.A, &o, &s));
    kt_dense_solve(&L.A, 0, SLA_OP_N, L.b, L.xr);
    for (int op = 0; op < 2; op++) {
        TU_OK(sla_solver_solve(s, (sla_op)op, 1, L.b, L.x, &info));
        if (getenv("KT_VERBOSE")) printf("hangGlider_2 MINRES + |A|: %lld iterations\n", (long long)info.iterations);
        assert_true(info.iterations <= 10);
        assert_true(kt_residual(&L.A, 0, (sla_op)op, L.x, L.b) <= 1e-8 * tu_norm2(L.b, L.n));
    }
    sla_solver_free(&s);
    free(P.V); free(P.lam); free(P.t); free(work); free(iwork);
    unload(&L);
}

static void west0479(void **state)
{
    /* only 8 stored diagonal entries: ILU(0) and Jacobi cannot be built */
    loaded L;
    if (!load("west0479.mtx", &L)) skip();
    sla_solve_info info;
    assert_int_equal(run(&L, SLA_METHOD_GMRES, SLA_PRECOND_ILU0, 1e-8, 0, 0, SLA_OP_N, &info, NULL),
                     SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "ILU(0): zero pivot at row 0 (batch element 0), no "
                                             "diagonal entry stored"));
    assert_int_equal(run(&L, SLA_METHOD_BICGSTAB, SLA_PRECOND_JACOBI, 1e-8, 0, 0, SLA_OP_N, &info,
                         NULL), SLA_EBREAKDOWN);
    /* without a preconditioner: GMRES(50) stagnates, BiCGStab breaks down, full GMRES
     * (restart = n) converges (≈ 700 iterations); neither failure is reported as success */
    assert_int_equal(run(&L, SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-8, 50, 0, SLA_OP_N, &info, NULL),
                     SLA_NOT_CONVERGED);
    assert_false(info.converged);
    assert_int_equal(run(&L, SLA_METHOD_BICGSTAB, SLA_PRECOND_NONE, 1e-8, 0, 0, SLA_OP_N, &info,
                         NULL), SLA_NOT_CONVERGED);
    assert_false(info.converged);
    for (int op = 0; op < 2; op++) {
        TU_OK(run(&L, SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-8, L.n, 0, (sla_op)op, &info, NULL));
        assert_true(info.iterations < 1500);
        assert_true(kt_residual(&L.A, 0, (sla_op)op, L.x, L.b) <= 1e-8 * tu_norm2(L.b, L.n));
        assert_true(scaled_residual(&L, (sla_op)op) < 1e-10);
    }
    unload(&L);
}

static void rajat19(void **state)
{
    loaded L;
    if (!load("rajat19.mtx", &L)) skip();
    sla_solve_info info;
    /* rows without a stored diagonal: ILU(0) has a zero pivot at row 2 */
    assert_int_equal(run(&L, SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0, 1e-8, 0, 0, SLA_OP_N, &info,
                         NULL), SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "zero pivot at row 2"));
    /* GMRES(50) makes little progress in 3000 iterations; full GMRES converges (≈ 690) */
    assert_int_equal(run(&L, SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-8, 50, 3000, SLA_OP_N, &info,
                         NULL), SLA_NOT_CONVERGED);
    assert_int_equal(info.reason, SLA_REASON_MAXITER);
    kt_dense_solve(&L.A, 0, SLA_OP_N, L.b, L.xr);
    for (int op = 0; op < 2; op++) {
        TU_OK(run(&L, SLA_METHOD_GMRES, SLA_PRECOND_NONE, 1e-8, L.n, 0, (sla_op)op, &info, NULL));
        assert_true(kt_residual(&L.A, 0, (sla_op)op, L.x, L.b) <= 1e-8 * tu_norm2(L.b, L.n));
        if (getenv("KT_VERBOSE"))
            printf("rajat19 op %d: %lld its, error %g\n", op, (long long)info.iterations,
                   kt_relerr(L.x, L.xr, L.n));
        if (op == 0) assert_true(kt_relerr(L.x, L.xr, L.n) < 1e-4);
    }
    unload(&L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bcsstk13),
        cmocka_unit_test(spd_against_dense),
        cmocka_unit_test(spd_adjoint_against_dense),
        cmocka_unit_test(hangglider_minres),
        cmocka_unit_test(west0479),
        cmocka_unit_test(rajat19),
    };
    if (getenv("KT_FILTER")) cmocka_set_test_filter(getenv("KT_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
