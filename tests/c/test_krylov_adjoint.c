/* Adjoints of Krylov solves: VJPs against central finite differences (every method, op = N
 * and T), the adjoint identity ⟨A⁻¹b, c⟩ = ⟨b, A⁻ᵀc⟩, batched VJPs against dense formulas,
 * float32 with tiny cotangents. */
#include <float.h>
#include <stdio.h>

#include "ktest.h"

/* L(values, b) = gᵀ x with op(A) x = b, solved by s after refactoring to `values` */
static double loss(sla_solver *s, sla_op op, const double *values, const double *b,
                   const double *g, int64_t n)
{
    double *x = malloc(sizeof(double) * (size_t)n);
    TU_OK(sla_solver_refactor(s, values));
    TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
    double l = 0;
    for (int64_t i = 0; i < n; i++) l += g[i] * x[i];
    free(x);
    return l;
}

/* Checks dvalues and dB of the VJP against central differences. symmetric = 1 perturbs a_ij
 * and a_ji together (CG and MINRES need a symmetric matrix), comparing with dv_ij + dv_ji. */
static void check_vjp(sla_method m, sla_precond pc, sla_op op, int symmetric, double shift,
                      uint64_t seed)
{
    sla_pattern *p;
    double *v;
    int64_t n = 30;
    kt_random_matrix(n, 3, shift, symmetric, seed, &p, &v);
    int64_t nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = kt_options(m, pc, 1e-13);
    sla_solver *s = NULL;
    double b[30], g[30], x[30], db[30];
    tu_fill_random(b, n, seed + 1);
    if (m == SLA_METHOD_MINRES) {   /* the MINRES case must be indefinite: CG says so */
        sla_solver_options oc = kt_options(SLA_METHOD_CG, SLA_PRECOND_NONE, 1e-13);
        sla_solve_info info;
        TU_OK(sla_solver_create(&A, &oc, &s));
        assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_NOT_CONVERGED);
        assert_int_equal(info.reason, SLA_REASON_INDEFINITE);
        sla_solver_free(&s);
    }
    TU_OK(sla_solver_create(&A, &o, &s));
    double *dv = malloc(sizeof(double) * (size_t)nnz), *w = malloc(sizeof(double) * (size_t)nnz);
    tu_fill_random(g, n, seed + 2);
    TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
    TU_OK(sla_solver_solve_vjp(s, op, 1, x, g, db, dv, NULL));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double maxerr = 0, maxg = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = ci[k], kt = sla_pattern_find(p, j, i);
            if (symmetric && j > i) continue;
            double h = 1e-5 * fmax(1, fabs(v[k]));
            memcpy(w, v, sizeof(double) * (size_t)nnz);
            w[k] += h;
            if (symmetric && j != i) w[kt] += h;
            double lp = loss(s, op, w, b, g, n);
            w[k] -= 2 * h;
            if (symmetric && j != i) w[kt] -= 2 * h;
            double lm = loss(s, op, w, b, g, n);
            double fd = (lp - lm) / (2 * h);
            double an = dv[k] + (symmetric && j != i ? dv[kt] : 0);
            maxerr = fmax(maxerr, fabs(fd - an));
            maxg = fmax(maxg, fabs(an));
        }
    if (!(maxerr <= 1e-6 * maxg))
        fail_msg("%s op %d: dvalues error %g (max %g)", sla_solver_describe(s), (int)op, maxerr, maxg);
    /* dB against differences in b */
    TU_OK(sla_solver_refactor(s, v));
    double bb[30];
    maxerr = 0;
    maxg = 0;
    for (int64_t i = 0; i < n; i++) {
        memcpy(bb, b, sizeof bb);
        bb[i] += 1e-5;
        double lp = loss(s, op, v, bb, g, n);
        bb[i] -= 2e-5;
        double lm = loss(s, op, v, bb, g, n);
        maxerr = fmax(maxerr, fabs((lp - lm) / 2e-5 - db[i]));
        maxg = fmax(maxg, fabs(db[i]));
    }
    if (!(maxerr <= 1e-6 * maxg))
        fail_msg("%s op %d: dB error %g (max %g)", sla_solver_describe(s), (int)op, maxerr, maxg);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(dv); free(w);
}

static void vjp_finite_differences(void **state)
{
    for (int op = 0; op < 2; op++) {
        check_vjp(SLA_METHOD_GMRES, SLA_PRECOND_ILU0, (sla_op)op, 0, 5, 40);
        check_vjp(SLA_METHOD_BICGSTAB, SLA_PRECOND_ILU0, (sla_op)op, 0, 5, 41);
        check_vjp(SLA_METHOD_GMRES, SLA_PRECOND_NONE, (sla_op)op, 0, 5, 42);
        check_vjp(SLA_METHOD_CG, SLA_PRECOND_IC0, (sla_op)op, 1, 6, 43);
        check_vjp(SLA_METHOD_CG, SLA_PRECOND_JACOBI, (sla_op)op, 1, 6, 44);
        check_vjp(SLA_METHOD_MINRES, SLA_PRECOND_NONE, (sla_op)op, 1, 1.5, 45);
    }
}

static void adjoint_identity(void **state)
{
    /* ⟨A⁻¹b, c⟩ = ⟨b, A⁻ᵀc⟩ with the transposed solve of the same object (ILU(0) transposed) */
    sla_pattern *p;
    double *v;
    int64_t n = 2000;
    kt_random_matrix(n, 5, 7, 0, 50, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *b = malloc(sizeof(double) * n), *c = malloc(sizeof(double) * n),
           *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
    tu_fill_random(b, n, 1);
    tu_fill_random(c, n, 2);
    sla_method ms[] = {SLA_METHOD_GMRES, SLA_METHOD_BICGSTAB};
    for (int t = 0; t < 2; t++) {
        sla_solver_options o = kt_options(ms[t], SLA_PRECOND_ILU0, 1e-13);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        TU_OK(sla_solver_solve(s, SLA_OP_T, 1, c, y, NULL));
        double l = 0, r = 0, nl = 0;
        for (int64_t i = 0; i < n; i++) {
            l += x[i] * c[i];
            r += b[i] * y[i];
            nl += fabs(x[i] * c[i]);
        }
        assert_true(fabs(l - r) <= 1e-10 * nl);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v); free(b); free(c); free(x); free(y);
}

static void batched_vjp(void **state)
{
    /* batch 2, nrhs 2: dB_b = A_b⁻ᵀ G_b, dvalues_b = −Σ_j λ_b[r][j] x_b[c][j] (dense) */
    sla_pattern *p;
    double *v1;
    int64_t n = 40, B = 2, k = 2;
    kt_random_matrix(n, 3, 6, 0, 60, &p, &v1);
    int64_t nnz = sla_pattern_nnz(p);
    double *v = malloc(sizeof(double) * (size_t)(B * nnz));
    for (int64_t s = 0; s < nnz; s++) { v[s] = v1[s]; v[nnz + s] = v1[s] * (1 + 0.5 * sin((double)s)); }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, B, v);
    double Bm[160], X[160], G[160], dB[160], *dv = malloc(sizeof(double) * (size_t)(B * nnz));
    tu_fill_random(Bm, B * n * k, 1);
    tu_fill_random(G, B * n * k, 2);
    sla_solver_options o = kt_options(SLA_METHOD_GMRES, SLA_PRECOND_ILU0, 1e-14);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, Bm, X, NULL));
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, k, X, G, dB, dv, NULL));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t b = 0; b < B; b++) {
        double lam[2][40], xs[2][40];
        for (int64_t j = 0; j < k; j++) {
            double gj[40];
            for (int64_t i = 0; i < n; i++) {
                gj[i] = G[(b * n + i) * k + j];
                xs[j][i] = X[(b * n + i) * k + j];
            }
            kt_dense_solve(&A, b, SLA_OP_T, gj, lam[j]);
            for (int64_t i = 0; i < n; i++)
                TU_CLOSE(dB[(b * n + i) * k + j], lam[j][i], 1e-10);
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t q = rp[i]; q < rp[i + 1]; q++) {
                double e = -(lam[0][i] * xs[0][ci[q]] + lam[1][i] * xs[1][ci[q]]);
                TU_CLOSE(dv[b * nnz + q], e, 1e-10);
            }
    }
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v1); free(v); free(dv);
}

static void float32_tiny_cotangents(void **state)
{
    /* cotangents ~1e-30 in float32: the adjoint solve runs on G/‖G‖∞, so λ and the gradients
     * come out as 1e-30 times those of G/1e-30, not flushed to zero */
    sla_pattern *p;
    double *v;
    tu_poisson2d(16, 16, &p, &v);
    int64_t n = 256, nnz = sla_pattern_nnz(p);
    float *vf = malloc(sizeof(float) * (size_t)nnz);
    for (int64_t s = 0; s < nnz; s++) vf[s] = (float)v[s];
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    float b[256], x[256], g[256], gt[256], db1[256], db2[256];
    float *dv1 = malloc(sizeof(float) * (size_t)nnz), *dv2 = malloc(sizeof(float) * (size_t)nnz);
    double tmp[256];
    tu_fill_random(tmp, n, 1);
    for (int i = 0; i < n; i++) b[i] = (float)tmp[i];
    tu_fill_random(tmp, n, 2);
    for (int i = 0; i < n; i++) { g[i] = (float)tmp[i]; gt[i] = (float)(tmp[i] * 1e-30); }
    for (int m = 0; m < 2; m++) {
        sla_solver_options o = kt_options(m ? SLA_METHOD_GMRES : SLA_METHOD_CG,
                                          m ? SLA_PRECOND_ILU0 : SLA_PRECOND_IC0, 1e-6);
        sla_solver *s = NULL;
        TU_OK(sla_solver_create(&A, &o, &s));
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, db1, dv1, NULL));
        sla_solve_info info;
        TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, gt, db2, dv2, &info));
        assert_true(info.converged);
        for (int i = 0; i < n; i++) {
            assert_true(fabsf(db2[i]) >= FLT_MIN || db1[i] == 0);   /* not flushed */
            TU_CLOSE(db2[i] * 1e30, db1[i], 1e-4);
        }
        for (int64_t s2 = 0; s2 < nnz; s2++) TU_CLOSE(dv2[s2] * 1e30, dv1[s2], 1e-4);
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
    free(v); free(vf); free(dv1); free(dv2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vjp_finite_differences),
        cmocka_unit_test(adjoint_identity),
        cmocka_unit_test(batched_vjp),
        cmocka_unit_test(float32_tiny_cotangents),
    };
    if (getenv("KT_FILTER")) cmocka_set_test_filter(getenv("KT_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
