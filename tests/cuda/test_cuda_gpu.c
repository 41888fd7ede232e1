/* libsla_cuda on a GPU (skipped with a message, exit code 77, where there is none). Checks:
 *   - every method (CG, BiCGStab, GMRES, MINRES; none and Jacobi) on device views gives the
 *     CPU's solution (the built-in "krylov" backend, same method) to 1e-10, for op N and T,
 *     batch 2 × nrhs 2, and the same bits on a second run;
 *   - the solve VJP (dB, dvalues) equals the CPU's to 1e-10;
 *   - SpMV (cuSPARSE and the own kernel, N and T, y poisoned with NaN and beta = 0) equals
 *     the host SpMV to 1e-14;
 *   - the device space's reductions and checks against host values; float32 CG;
 *   - errors: a host block handed to a device solver, a non-finite device value, a zero
 *     diagonal under Jacobi; refactor with new device values. */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "sla/cuda.h"
#include "testutil.h"

#define CU(call) do { cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorString(e_)); } while (0)

static void *to_dev(const void *h, size_t bytes)
{
    void *d = NULL;
    CU(cudaMalloc(&d, bytes ? bytes : 1));
    if (bytes) CU(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

static void to_host(void *h, const void *d, size_t bytes)
{
    CU(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}

static double rel_diff(const double *a, const double *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* a batch of 2 on Poisson's pattern: element 0 as given (nonsymmetric: off-diagonals
 * perturbed, diagonal 5), element 1 = 2·element 0 + I */
static double *batch_values(const sla_pattern *p, const double *v, int symmetric)
{
    int64_t nnz = sla_pattern_nnz(p), n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *w = malloc(2 * (size_t)nnz * sizeof *w);
    uint64_t seed = 7;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            double a = v[k];
            if (!symmetric) a = ci[k] == i ? 5.0 : a + 0.2 * tu_rand(&seed);
            w[k] = a;
            w[nnz + k] = 2 * a + (ci[k] == i);
        }
    return w;
}

typedef struct sys {
    sla_pattern *p;
    int64_t n, nnz;
    double *v;        /* host [2][nnz] */
    void *dv;         /* device copy */
} sys;

static void sys_make(sys *S, int symmetric)
{
    double *v;
    tu_poisson2d(24, 20, &S->p, &v);
    S->n = sla_pattern_nrows(S->p);
    S->nnz = sla_pattern_nnz(S->p);
    S->v = batch_values(S->p, v, symmetric);
    free(v);
    S->dv = to_dev(S->v, 2 * (size_t)S->nnz * sizeof(double));
}

static void sys_free(sys *S)
{
    cudaFree(S->dv);
    free(S->v);
    sla_pattern_free(&S->p);
}

static sla_solver *make_solver(const sys *S, int device, sla_method m, sla_precond pc)
{
    sla_matrix A = sla_matrix_view(S->p, SLA_FLOAT64, 2, device ? S->dv : S->v);
    if (device) A.space = SLA_MEM_DEVICE;
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    o.precond = pc;
    o.rtol = 1e-13;
    o.maxiter = 20000;
    o.restart = 60;
    o.backend = device ? "cuda" : "krylov";
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    return s;
}

static void check_method(const sys *S, sla_method m, sla_precond pc)
{
    const int64_t k = 2, total = 2 * S->n * k;
    size_t bytes = (size_t)total * sizeof(double);
    double *B = malloc(bytes), *Xc = malloc(bytes), *Xg = malloc(bytes), *Xg2 = malloc(bytes);
    tu_fill_random(B, total, 11);
    sla_solver *sc = make_solver(S, 0, m, pc), *sg = make_solver(S, 1, m, pc);
    void *dB = to_dev(B, bytes), *dX = NULL;
    CU(cudaMalloc(&dX, bytes));
    for (int op = 0; op < 2; op++) {
        sla_solve_info ic, ig;
        TU_OK(sla_solver_solve(sc, (sla_op)op, k, B, Xc, &ic));
        TU_OK(sla_solver_solve(sg, (sla_op)op, k, dB, dX, &ig));
        to_host(Xg, dX, bytes);
        double d = rel_diff(Xg, Xc, total);
        print_message("%-8s %-6s op %c: %lld / %lld iterations, residual %.2e, |x_gpu - x_cpu| "
                      "= %.2e (%s)\n", sla_method_name(m), sla_precond_name(pc), op ? 'T' : 'N',
                      (long long)ig.iterations, (long long)ic.iterations, ig.relative_residual, d,
                      sla_solver_describe(sg));
        assert_true(ig.converged);
        assert_true(ig.relative_residual <= 1e-12);
        if (!(d <= 1e-10)) fail_msg("GPU and CPU solutions differ by %.3g", d);
        /* the same bits on a second run */
        TU_OK(sla_solver_solve(sg, (sla_op)op, k, dB, dX, &ig));
        to_host(Xg2, dX, bytes);
        assert_memory_equal(Xg, Xg2, bytes);
    }
    sla_solver_free(&sc);
    sla_solver_free(&sg);
    cudaFree(dB);
    cudaFree(dX);
    free(B); free(Xc); free(Xg); free(Xg2);
}

static void test_methods_match_cpu(void **state)
{
    (void)state;
    sys spd, gen;
    sys_make(&spd, 1);
    sys_make(&gen, 0);
    for (int pc = 0; pc < 2; pc++) {
        sla_precond P = pc ? SLA_PRECOND_JACOBI : SLA_PRECOND_NONE;
        check_method(&spd, SLA_METHOD_CG, P);
        check_method(&spd, SLA_METHOD_MINRES, P);
        check_method(&gen, SLA_METHOD_BICGSTAB, P);
        check_method(&gen, SLA_METHOD_GMRES, P);
    }
    sys_free(&spd);
    sys_free(&gen);
}

static void test_vjp_matches_cpu(void **state)
{
    (void)state;
    sys S;
    sys_make(&S, 0);
    const int64_t k = 2, total = 2 * S.n * k;
    size_t bytes = (size_t)total * sizeof(double), vbytes = 2 * (size_t)S.nnz * sizeof(double);
    double *B = malloc(bytes), *G = malloc(bytes), *X = malloc(bytes), *dBc = malloc(bytes),
           *dBg = malloc(bytes), *dvc = malloc(vbytes), *dvg = malloc(vbytes);
    tu_fill_random(B, total, 3);
    tu_fill_random(G, total, 4);
    sla_solver *sc = make_solver(&S, 0, SLA_METHOD_GMRES, SLA_PRECOND_JACOBI);
    sla_solver *sg = make_solver(&S, 1, SLA_METHOD_GMRES, SLA_PRECOND_JACOBI);
    void *d_B = to_dev(B, bytes), *d_G = to_dev(G, bytes), *d_X, *d_dB, *d_dv;
    CU(cudaMalloc(&d_X, bytes));
    CU(cudaMalloc(&d_dB, bytes));
    CU(cudaMalloc(&d_dv, vbytes));
    for (int op = 0; op < 2; op++) {
        TU_OK(sla_solver_solve(sc, (sla_op)op, k, B, X, NULL));
        TU_OK(sla_solver_solve(sg, (sla_op)op, k, d_B, d_X, NULL));
        sla_solve_info info;
        TU_OK(sla_solver_solve_vjp(sc, (sla_op)op, k, X, G, dBc, dvc, &info));
        TU_OK(sla_solver_solve_vjp(sg, (sla_op)op, k, d_X, d_G, d_dB, d_dv, &info));
        to_host(dBg, d_dB, bytes);
        to_host(dvg, d_dv, vbytes);
        double e1 = rel_diff(dBg, dBc, total), e2 = rel_diff(dvg, dvc, 2 * S.nnz);
        print_message("VJP op %c: |dB| diff %.2e, |dvalues| diff %.2e\n", op ? 'T' : 'N', e1, e2);
        if (!(e1 <= 1e-10 && e2 <= 1e-10)) fail_msg("VJP differs: %.3g %.3g", e1, e2);
    }
    sla_solver_free(&sc);
    sla_solver_free(&sg);
    cudaFree(d_B); cudaFree(d_G); cudaFree(d_X); cudaFree(d_dB); cudaFree(d_dv);
    free(B); free(G); free(X); free(dBc); free(dBg); free(dvc); free(dvg);
    sys_free(&S);
}

static void check_spmv(const sys *S, const char *mode)
{
    if (mode) setenv("SLA_CUDA_SPMV", mode, 1); else unsetenv("SLA_CUDA_SPMV");
    sla_cuda_csr *c = NULL;
    TU_OK(sla_cuda_csr_create(S->p, SLA_FLOAT64, 2, &c));
    TU_OK(sla_cuda_csr_set_values(c, S->dv));
    print_message("SpMV: %s\n", sla_cuda_csr_describe(c));
    size_t bytes = (size_t)S->n * sizeof(double);
    double *x = malloc(bytes), *y = malloc(bytes), *yh = malloc(bytes), *nan = malloc(bytes);
    for (int64_t i = 0; i < S->n; i++) nan[i] = NAN;
    tu_fill_random(x, S->n, 5);
    void *dx = to_dev(x, bytes), *dy = to_dev(nan, bytes);
    for (int64_t b = 0; b < 2; b++)
        for (int op = 0; op < 2; op++) {
            CU(cudaMemcpy(dy, nan, bytes, cudaMemcpyHostToDevice));
            TU_OK(sla_cuda_spmv(c, (sla_op)op, b, 1.0, dx, 0.0, dy));
            to_host(y, dy, bytes);
            sla_matrix A = sla_matrix_view(S->p, SLA_FLOAT64, 1, S->v + b * S->nnz);
            TU_OK(sla_spmv((sla_op)op, 1.0, &A, x, 1, 1, 0.0, yh));
            double d = rel_diff(y, yh, S->n);
            if (!(d <= 1e-14)) fail_msg("SpMV (%s, op %d, b %lld) differs by %.3g",
                                        sla_cuda_csr_describe(c), op, (long long)b, d);
            /* alpha, beta */
            TU_OK(sla_cuda_spmv(c, (sla_op)op, b, 2.0, dx, -1.0, dy));
            to_host(y, dy, bytes);
            for (int64_t i = 0; i < S->n; i++) TU_CLOSE(y[i], yh[i], 1e-13);
        }
    sla_cuda_csr_free(&c);
    unsetenv("SLA_CUDA_SPMV");
    cudaFree(dx); cudaFree(dy);
    free(x); free(y); free(yh); free(nan);
}

static void test_spmv(void **state)
{
    (void)state;
    sys S;
    sys_make(&S, 0);
    check_spmv(&S, NULL);
    check_spmv(&S, "own");
    sys_free(&S);
}

static void test_space_kernels(void **state)
{
    (void)state;
    const int64_t n = 100003;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    tu_fill_random(x, n, 1);
    tu_fill_random(y, n, 2);
    sla_space V;
    sla_cuda_space c;
    TU_OK(sla_cuda_space_init(&V, &c, n, SLA_FLOAT64));
    void *dx = to_dev(x, n * sizeof *x), *dy = to_dev(y, n * sizeof *y);
    double dot, ref = 0, m, mref = 0, dot2;
    for (int64_t i = 0; i < n; i++) { ref += x[i] * y[i]; mref = fmax(mref, fabs(x[i])); }
    TU_OK(V.dot(&V, dx, dy, &dot));
    TU_OK(V.dot(&V, dx, dy, &dot2));
    assert_memory_equal(&dot, &dot2, sizeof dot);
    TU_CLOSE(dot, ref, 1e-12);
    TU_OK(V.amax(&V, dx, &m));
    assert_true(m == mref);
    int64_t bad = 0;
    TU_OK(V.find_nonfinite(&V, dx, &bad));
    x[77777] = INFINITY;
    x[90000] = NAN;
    CU(cudaMemcpy(dx, x, n * sizeof *x, cudaMemcpyHostToDevice));
    assert_int_equal(V.find_nonfinite(&V, dx, &bad), SLA_ENONFINITE);
    assert_int_equal(bad, 77777);
    TU_OK(V.scale_pow2(&V, -3, dy, dx));
    to_host(x, dx, n * sizeof *x);
    for (int64_t i = 0; i < n; i++) assert_true(x[i] == y[i] / 8);
    TU_OK(V.axpby(&V, 0.0, NULL, 0.0, dx));
    TU_OK(V.norm(&V, dx, &m));
    assert_true(m == 0);
    cudaFree(dx); cudaFree(dy);
    sla_cuda_space_free(&c);
    free(x); free(y);
}

static void test_float32_cg(void **state)
{
    (void)state;
    sla_pattern *p;
    double *v;
    tu_poisson2d(30, 30, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    float *vf = malloc(nnz * sizeof *vf), *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    for (int64_t i = 0; i < nnz; i++) vf[i] = (float)v[i];
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    void *dv = to_dev(vf, nnz * sizeof *vf), *db = to_dev(b, n * sizeof *b), *dx;
    CU(cudaMalloc(&dx, n * sizeof *x));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT32, 1, dv);
    A.space = SLA_MEM_DEVICE;
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.rtol = 1e-5;
    sla_solver *s;
    TU_OK(sla_solver_create(&A, &o, &s));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, db, dx, &info));
    assert_true(info.converged && info.relative_residual <= 1e-5);
    to_host(x, dx, n * sizeof *x);
    double *r = malloc(n * sizeof *r), *xd = malloc(n * sizeof *xd), bn = sqrt((double)n);
    for (int64_t i = 0; i < n; i++) xd[i] = x[i];
    sla_matrix Ah = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    TU_OK(sla_spmv(SLA_OP_N, 1.0, &Ah, xd, 1, 1, 0.0, r));
    for (int64_t i = 0; i < n; i++) r[i] -= 1;
    assert_true(tu_norm2(r, n) / bn <= 2e-5);
    sla_solver_free(&s);
    cudaFree(dv); cudaFree(db); cudaFree(dx);
    free(vf); free(b); free(x); free(r); free(xd); free(v);
    sla_pattern_free(&p);
}

static void test_errors(void **state)
{
    (void)state;
    sys S;
    sys_make(&S, 1);
    size_t bytes = 2 * (size_t)S.n * sizeof(double), vbytes = 2 * (size_t)S.nnz * sizeof(double);
    sla_solver *s = make_solver(&S, 1, SLA_METHOD_CG, SLA_PRECOND_JACOBI);
    double *B = malloc(bytes), *X = malloc(bytes), *X2 = malloc(bytes);
    tu_fill_random(B, 2 * S.n, 9);
    void *dB = to_dev(B, bytes), *dX;
    CU(cudaMalloc(&dX, bytes));
    /* mixed spaces: a host block with a device solver */
    assert_int_equal(sla_solver_solve(s, SLA_OP_N, 1, B, dX, NULL), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "not CUDA device memory"));
    /* refactor: values doubled → x halved */
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, dB, dX, NULL));
    to_host(X, dX, bytes);
    double *v2 = malloc(vbytes);
    for (int64_t i = 0; i < 2 * S.nnz; i++) v2[i] = 2 * S.v[i];
    void *dv2 = to_dev(v2, vbytes);
    TU_OK(sla_solver_refactor(s, dv2));
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, dB, dX, NULL));
    to_host(X2, dX, bytes);
    for (int64_t i = 0; i < 2 * S.n; i++) TU_CLOSE(2 * X2[i], X[i], 1e-10);
    /* a non-finite device value: named by slot */
    v2[17] = NAN;
    CU(cudaMemcpy(dv2, v2, vbytes, cudaMemcpyHostToDevice));
    assert_int_equal(sla_solver_refactor(s, dv2), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "slot 17"));
    sla_solver_free(&s);
    /* a zero diagonal under Jacobi */
    const int64_t *rp = sla_pattern_rowptr(S.p);
    const int32_t *ci = sla_pattern_colind(S.p);
    for (int64_t i = 0; i < 2 * S.nnz; i++) v2[i] = S.v[i];
    for (int64_t k = rp[5]; k < rp[6]; k++)
        if (ci[k] == 5) v2[k] = 0;
    CU(cudaMemcpy(dv2, v2, vbytes, cudaMemcpyHostToDevice));
    sla_matrix A = sla_matrix_view(S.p, SLA_FLOAT64, 2, dv2);
    A.space = SLA_MEM_DEVICE;
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = SLA_PRECOND_JACOBI;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EBREAKDOWN);
    assert_non_null(strstr(sla_last_error(), "row 5"));
    /* a host pointer in a device view */
    A.values = S.v;
    assert_int_equal(sla_solver_create(&A, &o, &s), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "A.values is not CUDA device memory"));
    cudaFree(dB); cudaFree(dX); cudaFree(dv2);
    free(B); free(X); free(X2); free(v2);
    sys_free(&S);
}

int main(void)
{
    if (sla_cuda_available() != SLA_OK) {
        printf("SKIP: %s\n", sla_last_error());
        return 77;
    }
    TU_OK(sla_cuda_register());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_space_kernels),
        cmocka_unit_test(test_spmv),
        cmocka_unit_test(test_methods_match_cpu),
        cmocka_unit_test(test_vjp_matches_cpu),
        cmocka_unit_test(test_float32_cg),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
