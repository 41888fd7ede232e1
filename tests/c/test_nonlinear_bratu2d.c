/* 2D Bratu −Δu = λ eᵘ on the unit square: the critical λ* ≈ 6.80812 (the fold of the solution
 * branch) located by continuation in the amplitude, Newton–Krylov with the preconditioners of
 * the linearization, the column colouring and the compressed Jacobian, the public
 * preconditioner object. */
#include <stdio.h>

#include "nl_bratu.h"

/* ---- the fold by continuation: unknowns (u, λ), F = (h²(−Δu − λeᵘ), u_c − μ); the h² keeps
 * the rows on one scale, so that ‖F‖ is a merit function the line search can work with ---- */
typedef struct fold {
    bratu *b;
    sla_pattern *p;              /* (n + 1) × (n + 1): Δ's pattern, column n, entry (n, c) */
    int64_t c;                   /* the centre node */
    double mu;
} fold;

static int fold_res(void *ctx, const void *xv, void *Fv)
{
    fold *f = ctx;
    const double *x = xv;
    double *F = Fv;
    f->b->lambda = x[f->b->n];
    bratu_residual(f->b, x, F);
    for (int64_t i = 0; i < f->b->n; i++) F[i] *= f->b->h * f->b->h;
    F[f->b->n] = x[f->c] - f->mu;
    return 0;
}

static int fold_jac(void *ctx, const void *xv, void *Jv)
{
    fold *f = ctx;
    const double *x = xv;
    double *J = Jv;
    int64_t n = f->b->n;
    double lam = x[n], h2 = f->b->h * f->b->h;
    const int64_t *rp = sla_pattern_rowptr(f->p);
    const int32_t *ci = sla_pattern_colind(f->p);
    const int64_t *brp = sla_pattern_rowptr(f->b->p);
    for (int64_t i = 0; i < n; i++) {
        int64_t q0 = rp[i], bq = brp[i];
        for (int64_t q = q0; q < rp[i + 1]; q++) {
            int64_t j = ci[q];
            if (j == n) J[q] = -h2 * exp(x[i]);
            else J[q] = h2 * (f->b->lap[bq++] - (j == i ? lam * exp(x[i]) : 0));
        }
    }
    J[rp[n]] = 1;                                /* row n: the entry (n, c) */
    return 0;
}

/* λ at amplitude u_c = μ, continuing from x0 (the solution at a nearby μ); y the solution */
static double lambda_at(sla_nonlinear *nl, fold *f, double mu, const double *x0, double *y)
{
    f->mu = mu;
    sla_nonlinear_info info;
    sla_status st = sla_nonlinear_solve(nl, x0, y, &info);
    if (st != SLA_OK) fail_msg("μ = %g: %s", mu, info.description);
    return y[f->b->n];
}

static double critical_lambda(int64_t nx)
{
    bratu b;
    bratu_init(&b, 2, nx, 1.0);
    int64_t n = b.n, nnz = sla_pattern_nnz(b.p);
    fold f = {.b = &b, .c = (nx / 2) * nx + nx / 2};
    int64_t cap = nnz + n + 1, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    const int64_t *rp = sla_pattern_rowptr(b.p);
    const int32_t *ci = sla_pattern_colind(b.p);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t q = rp[i]; q < rp[i + 1]; q++) { r[k] = i; c[k] = ci[q]; k++; }
        r[k] = i; c[k] = n; k++;
    }
    r[k] = n; c[k] = f.c; k++;
    TU_OK(sla_pattern_from_coo(n + 1, n + 1, k, r, c, &f.p));
    sla_nonlinear_problem P = {.n = n + 1, .dtype = SLA_FLOAT64, .residual = fold_res,
                               .pattern = f.p, .jacobian = fold_jac, .ctx = &f};
    sla_nonlinear_options o;
    sla_nonlinear_options_init(&o);
    o.rtol = 0;
    o.atol = 1e-11;
    sla_nonlinear *nl;
    TU_OK(sla_nonlinear_create(&P, &o, &nl));
    double *x = calloc((size_t)n + 1, sizeof(double)), *y = malloc(sizeof(double) * (size_t)(n + 1));
    /* march in μ to bracket the maximum of λ(μ), then golden-section search on it */
    double mus[40], lams[40];
    double *xbest = malloc(sizeof(double) * (size_t)(n + 1));
    int m = 0, best = 0;
    size_t bytes = sizeof(double) * (size_t)(n + 1);
    for (double mu = 0.2; mu <= 2.4; mu += 0.2, m++) {
        mus[m] = mu;
        lams[m] = lambda_at(nl, &f, mu, x, y);
        memcpy(x, y, bytes);
        if (lams[m] > lams[best]) {
            best = m;
            memcpy(xbest, x, bytes);
        }
    }
    assert_true(best > 0 && best < m - 1);
    memcpy(x, xbest, bytes);                     /* every search point starts there */
    free(xbest);
    double a = mus[best - 1], d = mus[best + 1], g = (sqrt(5.0) - 1) / 2;
    double b1 = d - g * (d - a), c1 = a + g * (d - a);
    double fb = lambda_at(nl, &f, b1, x, y), fc = lambda_at(nl, &f, c1, x, y);
    while (d - a > 1e-5) {
        if (fb > fc) { d = c1; c1 = b1; fc = fb; b1 = d - g * (d - a); fb = lambda_at(nl, &f, b1, x, y); }
        else { a = b1; b1 = c1; fb = fc; c1 = a + g * (d - a); fc = lambda_at(nl, &f, c1, x, y); }
    }
    double lmax = fmax(fb, fc);
    free(x); free(y); free(r); free(c);
    sla_nonlinear_free(&nl);
    sla_pattern_free(&f.p);
    (void)lams;
    bratu_free(&b);
    return lmax;
}

static void critical_lambda_by_continuation(void **state)
{
    (void)state;
    double l1 = critical_lambda(31), l2 = critical_lambda(63);
    double extrap = (4 * l2 - l1) / 3;             /* the 5-point stencil is O(h²) */
    printf("λ*(h = 1/32) = %.6f, λ*(h = 1/64) = %.6f, Richardson %.6f (reference 6.808124)\n",
           l1, l2, extrap);
    assert_true(fabs(l2 - 6.808124) < 5e-3);       /* 3 digits on the grid itself */
    assert_true(fabs(extrap - 6.808124) < 5e-4);   /* 6.808 after extrapolation */
}

/* ---- Newton–Krylov on 2D Bratu with the preconditioners of the linearization ---- */
static void newton_krylov_preconditioned(void **state)
{
    (void)state;
    const sla_precond kinds[] = {SLA_PRECOND_NONE, SLA_PRECOND_JACOBI, SLA_PRECOND_ILU0,
                                 SLA_PRECOND_AMG, SLA_PRECOND_AUTO};
    int64_t lits[5];
    double *uref = NULL;
    for (int t = 0; t < 5; t++) {
        bratu b;
        bratu_init(&b, 2, 48, 6.0);
        sla_nonlinear_problem P = bratu_problem(&b);
        sla_nonlinear_options o;
        sla_nonlinear_options_init_for(&o, SLA_NONLINEAR_NEWTON_KRYLOV);
        o.rtol = 1e-10;
        o.linear.precond = kinds[t];
        o.linear.maxiter = 2000;
        sla_nonlinear *nl;
        TU_OK(sla_nonlinear_create(&P, &o, &nl));
        double *u0 = calloc((size_t)b.n, sizeof(double)), *u = malloc(sizeof(double) * (size_t)b.n);
        sla_nonlinear_info info;
        TU_OK(sla_nonlinear_solve(nl, u0, u, &info));
        lits[t] = info.linear_iterations;
        printf("NK precond %-6s %2lld iterations, %4lld Krylov iterations: %.160s\n",
               sla_precond_name(kinds[t]), (long long)info.iterations,
               (long long)info.linear_iterations, info.description);
        if (!uref) uref = u;
        else {
            for (int64_t i = 0; i < b.n; i++) assert_true(fabs(u[i] - uref[i]) < 1e-8);
            free(u);
        }
        free(u0);
        sla_nonlinear_free(&nl);
        bratu_free(&b);
    }
    free(uref);
    assert_true(lits[2] < lits[0] / 3 && lits[3] < lits[2]);
}

/* ---- colouring and compressed Jacobians ---- */
static void check_coloring(const sla_pattern *p, const int32_t *color, int64_t nc)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t a = rp[i]; a < rp[i + 1]; a++) {
            assert_true(color[ci[a]] >= 0 && color[ci[a]] < nc);
            for (int64_t q = a + 1; q < rp[i + 1]; q++) assert_true(color[ci[a]] != color[ci[q]]);
        }
}

static void coloring(void **state)
{
    (void)state;
    bratu b1, b2;
    bratu_init(&b1, 1, 100, 1.0);
    bratu_init(&b2, 2, 30, 5.0);
    int32_t color[900];
    int64_t nc;
    TU_OK(sla_pattern_color_columns(b1.p, color, &nc));
    assert_int_equal(nc, 3);
    check_coloring(b1.p, color, nc);
    TU_OK(sla_pattern_color_columns(b2.p, color, &nc));
    printf("5-point stencil 30 × 30: %lld colours\n", (long long)nc);
    assert_true(nc >= 5 && nc <= 8);
    check_coloring(b2.p, color, nc);
    /* the compressed Jacobian: nc products J·s_c give every entry */
    int64_t n = b2.n, nnz = sla_pattern_nnz(b2.p);
    double *u = malloc(sizeof(double) * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
    double *y = malloc(sizeof(double) * (size_t)(n * nc));
    double *J = malloc(sizeof(double) * (size_t)nnz), *Jc = malloc(sizeof(double) * (size_t)nnz);
    tu_fill_random(u, n, 3);
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t j = 0; j < n; j++) s[j] = color[j] == c;
        bratu_apply(&b2, SLA_OP_N, u, s, y + c * n);
    }
    const int64_t *rp = sla_pattern_rowptr(b2.p);
    const int32_t *ci = sla_pattern_colind(b2.p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t q = rp[i]; q < rp[i + 1]; q++) Jc[q] = y[color[ci[q]] * n + i];
    bratu_jacobian(&b2, u, J);
    for (int64_t q = 0; q < nnz; q++) assert_true(Jc[q] == J[q]);
    assert_int_equal(sla_pattern_color_columns(NULL, color, &nc), SLA_EINVAL);
    free(u); free(s); free(y); free(J); free(Jc);
    bratu_free(&b1);
    bratu_free(&b2);
}

/* ---- the public preconditioner object ---- */
static void preconditioner_object(void **state)
{
    (void)state;
    /* a nonsymmetric tridiagonal: ILU(0) is its exact LU, so M⁻¹ = A⁻¹ (op N and T) */
    int64_t n = 50, r[150], c[150], k = 0;
    double v[150];
    for (int64_t i = 0; i < n; i++) {
        r[k] = i; c[k] = i; v[k++] = 4 + 0.1 * (double)i;
        if (i > 0) { r[k] = i; c[k] = i - 1; v[k++] = -1.5; }
        if (i < n - 1) { r[k] = i; c[k] = i + 1; v[k++] = -0.5; }
    }
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, &p));
    double *vals = malloc(sizeof(double) * (size_t)k), x[50], z[50], y[50];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, vals));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, vals);
    sla_preconditioner *M;
    TU_OK(sla_preconditioner_create(&A, SLA_PRECOND_ILU0, &M));
    assert_string_equal(sla_preconditioner_describe(M), "ilu0");
    tu_fill_random(x, n, 9);
    for (int op = 0; op < 2; op++) {
        TU_OK(sla_preconditioner_apply(M, (sla_op)op, 0, x, z));
        TU_OK(sla_spmv((sla_op)op, 1, &A, z, 0, 1, 0, y));
        for (int64_t i = 0; i < n; i++) assert_true(fabs(y[i] - x[i]) < 1e-13);
    }
    /* update: new values, same pattern */
    for (int64_t q = 0; q < k; q++) vals[q] *= 2;
    TU_OK(sla_preconditioner_update(M, vals));
    TU_OK(sla_preconditioner_apply(M, SLA_OP_N, 0, x, z));
    TU_OK(sla_spmv(SLA_OP_N, 1, &A, z, 0, 1, 0, y));
    for (int64_t i = 0; i < n; i++) assert_true(fabs(y[i] - x[i]) < 1e-13);
    /* errors */
    vals[3] = NAN;
    assert_int_equal(sla_preconditioner_update(M, vals), SLA_ENONFINITE);
    vals[3] = 1;
    TU_OK(sla_preconditioner_apply(M, SLA_OP_N, 0, x, z));           /* unchanged by it */
    assert_int_equal(sla_preconditioner_apply(M, SLA_OP_N, 1, x, z), SLA_EINVAL);
    assert_int_equal(sla_preconditioner_apply(M, SLA_OP_N, 0, x, x), SLA_EINVAL);
    assert_true(strstr(sla_last_error(), "overlaps") != NULL);
    sla_preconditioner_free(&M);
    sla_preconditioner_free(&M);
    sla_preconditioner *M2 = (sla_preconditioner *)p;
    assert_int_equal(sla_preconditioner_create(&A, SLA_PRECOND_NONE, &M2), SLA_EINVAL);
    assert_null(M2);
    assert_true(strstr(sla_last_error(), "not a preconditioner built from a matrix") != NULL);
    sla_pattern *rect;
    int64_t rr[2] = {0, 1}, cc[2] = {0, 2};
    TU_OK(sla_pattern_from_coo(2, 3, 2, rr, cc, &rect));
    double rv[2] = {1, 1};
    sla_matrix R = sla_matrix_view(rect, SLA_FLOAT64, 1, rv);
    assert_int_equal(sla_preconditioner_create(&R, SLA_PRECOND_JACOBI, &M2), SLA_ESHAPE);
    /* a zero pivot: a breakdown naming the row */
    for (int64_t q = 0; q < k; q++) vals[q] = 0;
    assert_int_equal(sla_preconditioner_create(&A, SLA_PRECOND_JACOBI, &M2), SLA_EBREAKDOWN);
    sla_pattern_free(&rect);
    sla_pattern_free(&p);
    free(vals);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(critical_lambda_by_continuation),
        cmocka_unit_test(newton_krylov_preconditioned),
        cmocka_unit_test(coloring),
        cmocka_unit_test(preconditioner_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
