/* The generic solver layer (src/solve/solver.c): aliasing and size checks before anything is
 * written, the power-of-two scaling of adjoint solves (subnormal cotangents), messages that
 * name the public function, the info after errors, and the true residual of direct methods. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const sla_method DIRECT[] = {SLA_METHOD_CHOLESKY, SLA_METHOD_LDLT, SLA_METHOD_LU,
                                    SLA_METHOD_KLU};

static sla_solver *make_solver(const sla_matrix *A, sla_method m)
{
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = m;
    o.rtol = 1e-12;
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(A, &o, &s));
    return s;
}

static void expect_error(sla_status got, sla_status want, const char *phrase)
{
    if (got != want)
        fail_msg("status %d (%s), expected %d; message: %s", (int)got, sla_status_string(got),
                 (int)want, sla_last_error());
    if (!strstr(sla_last_error(), phrase))
        fail_msg("message '%s' lacks '%s'", sla_last_error(), phrase);
}

/* 1 if every one of n doubles equals `value` bit for bit (outputs untouched after an error) */
static int all_equal(const double *x, int64_t n, double value)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&x[i], &value, sizeof value) != 0) return 0;
    return 1;
}

static void fill(double *x, int64_t n, double value)
{
    for (int64_t i = 0; i < n; i++) x[i] = value;
}

/* ---- aliasing ------------------------------------------------------------------------------ */

static void solve_aliasing(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(8, 8, &p, &v);
    int64_t n = 64, nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_method ms[] = {SLA_METHOD_LU, SLA_METHOD_CHOLESKY, SLA_METHOD_CG};
    double *buf = malloc(sizeof(double) * (size_t)(2 * n));
    for (int t = 0; t < 3; t++) {
        sla_solver *s = make_solver(&A, ms[t]);
        tu_fill_random(buf, 2 * n, 3);
        double *B = buf, *X = buf + n / 2;             /* X starts inside B */
        double keep[128];
        memcpy(keep, buf, sizeof keep);
        expect_error(sla_solver_solve(s, SLA_OP_N, 1, B, X, NULL), SLA_EINVAL,
                     "sla_solver_solve: X overlaps B");
        assert_memory_equal(keep, buf, sizeof keep);   /* nothing written */
        expect_error(sla_solver_solve(s, SLA_OP_N, 1, B, B, NULL), SLA_EINVAL, "X overlaps B");
        /* X over the matrix values: the solve would overwrite its own matrix */
        double *vals = malloc(sizeof(double) * (size_t)nnz);
        memcpy(vals, v, sizeof(double) * (size_t)nnz);
        sla_matrix A2 = sla_matrix_view(p, SLA_FLOAT64, 1, vals);
        sla_solver *s2 = make_solver(&A2, ms[t]);
        expect_error(sla_solver_solve(s2, SLA_OP_N, 1, B, vals + 10, NULL), SLA_EINVAL,
                     "X overlaps the matrix values");
        assert_memory_equal(vals, v, sizeof(double) * (size_t)nnz);
        sla_solver_free(&s2);
        free(vals);
        sla_solver_free(&s);
    }
    free(buf);
    sla_pattern_free(&p);
    free(v);
}

static void vjp_aliasing(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(8, 8, &p, &v);
    int64_t n = 64, nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = make_solver(&A, SLA_METHOD_LU);
    double b[64], x[64], g[64];
    tu_fill_random(b, n, 1);
    tu_fill_random(g, n, 2);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    /* reference gradients */
    double *dB = malloc(sizeof(double) * (size_t)n), *dv = malloc(sizeof(double) * (size_t)nnz);
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, dB, dv, NULL));

    double *big = malloc(sizeof(double) * (size_t)(nnz + n));
    double gc[64], xc[64];
    memcpy(gc, g, sizeof gc);
    memcpy(xc, x, sizeof xc);
    /* dB = G: the reviewer's case that returned OK with wrong dvalues */
    double *dvs = malloc(sizeof(double) * (size_t)nnz);
    fill(dvs, nnz, 7.0);
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, gc, gc, dvs, NULL), SLA_EINVAL,
                 "sla_solver_solve_vjp: dB overlaps G");
    assert_memory_equal(gc, g, sizeof gc);
    assert_true(all_equal(dvs, nnz, 7.0));
    /* dB = X */
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, xc, g, xc, dvs, NULL), SLA_EINVAL,
                 "dB overlaps X");
    assert_true(all_equal(dvs, nnz, 7.0));
    free(dvs);
    assert_memory_equal(xc, x, sizeof xc);
    /* dB overlapping dvalues: refused before either is written */
    fill(big, nnz + n, 5.0);
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, big + nnz / 2, big, NULL), SLA_EINVAL,
                 "dB overlaps dvalues");
    assert_true(all_equal(big, nnz + n, 5.0));
    /* dvalues overlapping X or G (partially) */
    memcpy(big, x, sizeof x);
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, big, g, NULL, big + 3, NULL), SLA_EINVAL,
                 "dvalues overlaps X");
    assert_memory_equal(big, x, sizeof x);
    memcpy(big, g, sizeof g);
    expect_error(sla_solver_solve_vjp(s, SLA_OP_T, 1, x, big, NULL, big + 1, NULL), SLA_EINVAL,
                 "dvalues overlaps G");
    assert_memory_equal(big, g, sizeof g);
    /* outputs over the matrix values */
    double *vals = malloc(sizeof(double) * (size_t)nnz);
    memcpy(vals, v, sizeof(double) * (size_t)nnz);
    sla_matrix A2 = sla_matrix_view(p, SLA_FLOAT64, 1, vals);
    sla_solver *s2 = make_solver(&A2, SLA_METHOD_LU);
    expect_error(sla_solver_solve_vjp(s2, SLA_OP_N, 1, x, g, NULL, vals, NULL), SLA_EINVAL,
                 "dvalues overlaps the matrix values");
    expect_error(sla_solver_solve_vjp(s2, SLA_OP_N, 1, x, g, vals + 1, NULL, NULL), SLA_EINVAL,
                 "dB overlaps the matrix values");
    assert_memory_equal(vals, v, sizeof(double) * (size_t)nnz);
    /* separate arrays still give the reference, and inputs are unmodified */
    double dB2[64];
    double *dv2 = malloc(sizeof(double) * (size_t)nnz);
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, dB2, dv2, NULL));
    assert_memory_equal(dB2, dB, sizeof dB2);
    assert_memory_equal(dv2, dv, sizeof(double) * (size_t)nnz);
    /* logdet_grad: dvalues over the matrix values or over g */
    expect_error(sla_solver_logdet_grad(s2, NULL, vals + 2), SLA_EINVAL,
                 "sla_solver_logdet_grad: dvalues overlaps the matrix values");
    assert_memory_equal(vals, v, sizeof(double) * (size_t)nnz);
    big[nnz] = 1.0;
    expect_error(sla_solver_logdet_grad(s, big + nnz, big + 1), SLA_EINVAL, "dvalues overlaps g");
    sla_solver_free(&s2);
    sla_solver_free(&s);
    free(vals); free(dv2); free(big); free(dB); free(dv);
    sla_pattern_free(&p);
    free(v);
}

/* ---- sizes overflowing int64 --------------------------------------------------------------- */

static void size_overflow(void **state)
{
    int64_t r[] = {0, 1, 2}, c[] = {0, 1, 2};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(3, 3, 3, r, c, &p));
    double v[3] = {2, 3, 4}, b[6] = {1, 2, 3, 4, 5, 6}, x[6], g[6] = {1, 1, 1, 1, 1, 1};
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    for (int t = 0; t < 2; t++) {
        sla_solver *s = make_solver(&A, t ? SLA_METHOD_CG : SLA_METHOD_LU);
        /* 3 · 2^62 elements overflow int64 (UB before the fix) */
        expect_error(sla_solver_solve(s, SLA_OP_N, (int64_t)1 << 62, b, x, NULL), SLA_EINVAL,
                     "sla_solver_solve: B: [1][3][4611686018427387904] elements overflow int64");
        expect_error(sla_solver_solve_vjp(s, SLA_OP_N, (int64_t)1 << 62, x, g, NULL, NULL, NULL),
                     SLA_EINVAL, "sla_solver_solve_vjp: G: [1][3][4611686018427387904]");
        /* elements fit in int64, their bytes do not */
        int64_t k = INT64_MAX / 3 / 8 + 1;
        expect_error(sla_solver_solve(s, SLA_OP_N, k, b, x, NULL), SLA_EINVAL, "overflow int64 bytes");
        expect_error(sla_solver_solve(s, SLA_OP_N, INT64_MAX, b, x, NULL), SLA_EINVAL,
                     "elements overflow int64");
        sla_solver_free(&s);
    }
    sla_pattern_free(&p);
}

/* ---- tiny cotangents ----------------------------------------------------------------------- */

/* dB and dvalues for G·2^-k (computed) against those for G (reference) scaled by 2^-k: the
 * adjoint is linear in G, and the power-of-two scaling inside must not lose more than rounding
 * (plus the spacing of subnormal results, which are rounded to a few bits). */
static void check_scaled_vjp(sla_solver *s, sla_dtype dt, const void *x, const double *g,
                             int64_t n, int64_t nnz, int k, double rtol)
{
    size_t es = sla_dtype_size(dt);
    void *gk = malloc(es * (size_t)n), *gr = malloc(es * (size_t)n);
    void *dB = malloc(es * (size_t)n), *dBr = malloc(es * (size_t)n);
    void *dv = malloc(es * (size_t)nnz), *dvr = malloc(es * (size_t)nnz);
    for (int64_t i = 0; i < n; i++) {
        if (dt == SLA_FLOAT64) {
            ((double *)gr)[i] = g[i];
            ((double *)gk)[i] = ldexp(g[i], -k);
        } else {
            ((float *)gr)[i] = (float)g[i];
            ((float *)gk)[i] = (float)ldexp((double)(float)g[i], -k);
        }
    }
    /* the scaled G must hold subnormal entries for the test to mean something */
    double g0 = dt == SLA_FLOAT64 ? fabs(((double *)gk)[0]) : fabs(((float *)gk)[0]);
    assert_true(g0 > 0 && g0 < (dt == SLA_FLOAT64 ? DBL_MIN : FLT_MIN));
    sla_solve_info info;
    sla_status st = sla_solver_solve_vjp(s, SLA_OP_N, 1, x, gk, dB, dv, &info);
    if (st != SLA_OK) fail_msg("2^-%d: %s", k, sla_last_error());
    assert_true(info.converged);
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, gr, dBr, dvr, NULL));
    double tiny = dt == SLA_FLOAT64 ? DBL_TRUE_MIN : FLT_TRUE_MIN;
    for (int pass = 0; pass < 2; pass++) {
        const void *a = pass ? dv : dB, *r = pass ? dvr : dBr;
        int64_t m = pass ? nnz : n;
        double rmax = 0, err = 0, amax = 0;
        for (int64_t i = 0; i < m; i++) {
            double ai = dt == SLA_FLOAT64 ? ((const double *)a)[i] : ((const float *)a)[i];
            double ri = ldexp(dt == SLA_FLOAT64 ? ((const double *)r)[i] : ((const float *)r)[i], -k);
            rmax = fmax(rmax, fabs(ri));
            amax = fmax(amax, fabs(ai));
            err = fmax(err, fabs(ai - ri));
        }
        assert_true(amax > 0);                         /* not flushed to zero */
        if (!(err <= rtol * rmax + 4 * tiny))
            fail_msg("%s, G·2^-%d, %s: max error %g vs max %g", sla_dtype_name(dt), k,
                     pass ? "dvalues" : "dB", err, rmax);
    }
    free(gk); free(gr); free(dB); free(dBr); free(dv); free(dvr);
}

static void subnormal_cotangent(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(6, 6, &p, &v);
    int64_t n = 36, nnz = sla_pattern_nnz(p);
    double g[36], b[36];
    for (int64_t i = 0; i < n; i++) { g[i] = cos((double)i); b[i] = 1; }
    float *v32 = malloc(sizeof(float) * (size_t)nnz);
    for (int64_t q = 0; q < nnz; q++) v32[q] = (float)v[q];
    sla_method ms[] = {SLA_METHOD_LU, SLA_METHOD_CHOLESKY, SLA_METHOD_CG, SLA_METHOD_GMRES};
    for (int t = 0; t < 4; t++) {
        /* float64: 1e-310 ≈ 2^-1030 and 1e-320 ≈ 2^-1063 (subnormal, 1/‖G‖∞ overflows) */
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        sla_solver *s = make_solver(&A, ms[t]);
        double x[36];
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
        check_scaled_vjp(s, SLA_FLOAT64, x, g, n, nnz, 1030, 1e-9);
        check_scaled_vjp(s, SLA_FLOAT64, x, g, n, nnz, 1063, 1e-9);
        sla_solver_free(&s);
        /* float32: ~1e-40 ≈ 2^-133, below FLT_MIN */
        sla_matrix A32 = sla_matrix_view(p, SLA_FLOAT32, 1, v32);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = ms[t];
        o.rtol = 1e-6;
        TU_OK(sla_solver_create(&A32, &o, &s));
        float b32[36], x32[36];
        for (int64_t i = 0; i < n; i++) b32[i] = 1;
        TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b32, x32, NULL));
        check_scaled_vjp(s, SLA_FLOAT32, x32, g, n, nnz, 133, 1e-4);
        sla_solver_free(&s);
    }
    /* zero cotangent: zero gradients at once */
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s = make_solver(&A, SLA_METHOD_CG);
    double x[36], z[36] = {0}, dB[36], *dv = malloc(sizeof(double) * (size_t)nnz);
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    fill(dB, n, 1.0);
    fill(dv, nnz, 1.0);
    sla_solve_info info;
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, z, dB, dv, &info));
    for (int64_t i = 0; i < n; i++) assert_true(dB[i] == 0);
    for (int64_t q = 0; q < nnz; q++) assert_true(dv[q] == 0);
    assert_true(info.converged && info.iterations == 0);
    sla_solver_free(&s);
    free(dv);
    free(v32);
    sla_pattern_free(&p);
    free(v);
}

/* ---- messages naming the public function ---------------------------------------------------- */

static void messages(void **state)
{
    sla_solver *s = (sla_solver *)0x1;
    expect_error(sla_solver_create(NULL, NULL, &s), SLA_EINVAL, "sla_solver_create: A is NULL");
    assert_null(s);
    int64_t r[] = {0, 1, 2, 0}, c[] = {0, 1, 2, 2};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(3, 3, 4, r, c, &p));
    double v[4] = {2, 3, 4, 1};
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_matrix B = A;
    B.values = NULL;
    expect_error(sla_solver_create(&B, NULL, &s), SLA_EINVAL, "sla_solver_create: A->values is NULL");
    B.dtype = (sla_dtype)7;
    expect_error(sla_solver_create(&B, NULL, &s), SLA_EDTYPE, "sla_solver_create: A: dtype 7");
    double vn[4] = {2, NAN, 4, 1};
    B = A;
    B.values = vn;
    expect_error(sla_solver_create(&B, NULL, &s), SLA_ENONFINITE,
                 "sla_solver_create: A: value at batch 0, slot 1 (row 0, col 2) is not finite");
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.restart = 0;
    expect_error(sla_solver_create(&A, &o, &s), SLA_EINVAL, "sla_solver_create: options.restart");
    sla_solver_options_init(&o);
    o.backend = "nonexistent";
    expect_error(sla_solver_create(&A, &o, &s), SLA_EUNSUPPORTED, "sla_solver_create: ");
    assert_non_null(strstr(sla_last_error(), "nonexistent"));

    s = make_solver(&A, SLA_METHOD_LU);
    expect_error(sla_solver_refactor(s, NULL), SLA_EINVAL, "sla_solver_refactor: values is NULL");
    expect_error(sla_solver_refactor(s, vn), SLA_ENONFINITE,
                 "sla_solver_refactor: values: value at batch 0, slot 1 (row 0, col 2)");
    double b[3] = {1, 2, 3}, x[3], g[3] = {1, NAN, 1}, dB[3], dv[4];
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, dB, dv, NULL), SLA_ENONFINITE,
                 "sla_solver_solve_vjp: G[0][1][0] is not finite");
    double xn[3] = {1, 2, INFINITY}, g1[3] = {1, 1, 1};
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, xn, g1, dB, dv, NULL), SLA_ENONFINITE,
                 "sla_solver_solve_vjp: X[0][2][0] is not finite");
    TU_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, xn, g1, dB, NULL, NULL));   /* X unused */
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, NULL, g1, dB, dv, NULL), SLA_EINVAL,
                 "sla_solver_solve_vjp: X (needed for dvalues) is NULL");
    expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, NULL, dB, NULL, NULL), SLA_EINVAL,
                 "sla_solver_solve_vjp: G is NULL");
    expect_error(sla_solver_solve(s, SLA_OP_N, 1, b, NULL, NULL), SLA_EINVAL,
                 "sla_solver_solve: X is NULL");
    sla_solver_free(&s);
    sla_pattern_free(&p);

    /* allocations too large for the address space: the public function and what it needed */
    expect_error(sla_pattern_from_coo((int64_t)1 << 60, 3, 0, NULL, NULL, &p), SLA_ENOMEM,
                 "sla_pattern_from_coo: cannot allocate");
    assert_non_null(strstr(sla_last_error(), "row buckets"));
    expect_error(sla_pattern_from_coo(INT64_MAX, 3, 0, NULL, NULL, &p), SLA_ENOMEM,
                 "sla_pattern_from_coo: cannot allocate row buckets");
    assert_null(p);
}

/* ---- info after an error -------------------------------------------------------------------- */

static void info_after_error(void **state)
{
    /* singular: rows 0 and 1 equal */
    int64_t r[] = {0, 0, 1, 1, 2}, c[] = {0, 1, 0, 1, 2};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(3, 3, 5, r, c, &p));
    double v[5] = {1, 2, 1, 2, 3};
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_method ms[] = {SLA_METHOD_LU, SLA_METHOD_KLU};
    for (int t = 0; t < 2; t++) {
        sla_solver *s = make_solver(&A, ms[t]);
        double b[3] = {1, 1, 1}, x[3], g[3] = {1, 1, 1}, dB[3];
        sla_solve_info info;
        memset(&info, 0, sizeof info);
        info.converged = 1;                            /* as an earlier success left it */
        expect_error(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info), SLA_ESINGULAR, "sla_solver_solve: ");
        assert_int_equal(info.converged, 0);
        assert_int_equal(info.reason, SLA_REASON_ERROR);
        assert_string_equal(sla_reason_name(info.reason), "error");
        info.converged = 1;
        expect_error(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, dB, NULL, &info), SLA_ESINGULAR,
                     "sla_solver_solve_vjp: ");
        assert_int_equal(info.converged, 0);
        assert_int_equal(info.reason, SLA_REASON_ERROR);
        /* argument errors too */
        info.converged = 1;
        info.reason = SLA_REASON_CONVERGED;
        expect_error(sla_solver_solve(s, SLA_OP_N, 0, b, x, &info), SLA_EINVAL, "nrhs = 0");
        assert_int_equal(info.converged, 0);
        assert_int_equal(info.reason, SLA_REASON_ERROR);
        info.converged = 1;
        expect_error(sla_solver_solve(NULL, SLA_OP_N, 1, b, x, &info), SLA_EINVAL, "solver is NULL");
        assert_int_equal(info.converged, 0);
        sla_solver_free(&s);
    }
    /* a success after the error says converged again */
    double vg[5] = {2, 1, 1, 3, 3};
    A.values = vg;
    sla_solver *s = make_solver(&A, SLA_METHOD_LU);
    double b[3] = {1, 2, 3}, x[3];
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_int_equal(info.converged, 1);
    assert_int_equal(info.reason, SLA_REASON_CONVERGED);
    sla_solver_free(&s);
    sla_pattern_free(&p);
}

/* ---- true residual of direct methods -------------------------------------------------------- */

static void direct_residuals(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(20, 20, &p, &v);
    int64_t n = 400, nnz = sla_pattern_nnz(p), batch = 2, k = 3;
    double *v2 = malloc(sizeof(double) * (size_t)(batch * nnz));
    for (int64_t q = 0; q < nnz; q++) { v2[q] = v[q]; v2[nnz + q] = 3 * v[q]; }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, batch, v2);
    double *B = malloc(sizeof(double) * (size_t)(batch * n * k));
    double *X = malloc(sizeof(double) * (size_t)(batch * n * k));
    double *R = malloc(sizeof(double) * (size_t)(batch * n * k));
    tu_fill_random(B, batch * n * k, 11);
    for (int64_t i = 0; i < n * k; i++) B[n * k + i] *= 1e3;    /* batch elements differ in scale */
    for (int t = 0; t < 4; t++) {
        for (int op = 0; op < 2; op++) {
            sla_solver *s = make_solver(&A, DIRECT[t]);
            sla_solve_info info;
            TU_OK(sla_solver_solve(s, (sla_op)op, k, B, X, &info));
            /* reference: max over batch and columns of ‖b − A x‖₂ and of ‖b − A x‖₂/‖b‖₂ */
            memcpy(R, B, sizeof(double) * (size_t)(batch * n * k));
            TU_OK(sla_spmv((sla_op)op, -1.0, &A, X, 1, k, 1.0, R));
            double rmax = 0, relmax = 0;
            for (int64_t b = 0; b < batch; b++)
                for (int64_t j = 0; j < k; j++) {
                    double rn = 0, bn = 0;
                    for (int64_t i = 0; i < n; i++) {
                        rn += R[(b * n + i) * k + j] * R[(b * n + i) * k + j];
                        bn += B[(b * n + i) * k + j] * B[(b * n + i) * k + j];
                    }
                    rmax = fmax(rmax, sqrt(rn));
                    relmax = fmax(relmax, sqrt(rn / bn));
                }
            /* every method reports the residual (before the fix cholesky and ldlt gave 0) */
            assert_true(info.residual_norm > 0 && info.relative_residual > 0);
            assert_true(relmax < 1e-12);
            /* lu/klu measure theirs inside the backend after refinement: same order */
            double tol = (DIRECT[t] == SLA_METHOD_LU || DIRECT[t] == SLA_METHOD_KLU) ? 0.9 : 1e-6;
            if (!(fabs(info.residual_norm - rmax) <= tol * rmax &&
                  fabs(info.relative_residual - relmax) <= tol * relmax))
                fail_msg("%s op %d: info residual %g (rel %g), true %g (rel %g)",
                         sla_method_name(DIRECT[t]), op, info.residual_norm,
                         info.relative_residual, rmax, relmax);
            sla_solver_free(&s);
        }
    }
    /* b = 0: residual 0, x = 0 */
    memset(B, 0, sizeof(double) * (size_t)(batch * n * k));
    sla_solver *s = make_solver(&A, SLA_METHOD_CHOLESKY);
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, B, X, &info));
    assert_true(info.residual_norm == 0 && info.relative_residual == 0);
    /* peak_bytes: the process's peak RSS so far, so at least a 64 MiB block touched before */
    size_t big = (size_t)64 << 20;
    char *touched = malloc(big);
    assert_non_null(touched);
    memset(touched, 1, big);
    TU_OK(sla_solver_solve(s, SLA_OP_N, k, B, X, &info));
    assert_true(info.peak_bytes >= (int64_t)big && info.peak_bytes <= sla_peak_rss_bytes());
    free(touched);
    sla_solver_free(&s);
    free(B); free(X); free(R); free(v2);
    sla_pattern_free(&p);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(solve_aliasing),
        cmocka_unit_test(vjp_aliasing),
        cmocka_unit_test(size_overflow),
        cmocka_unit_test(subnormal_cotangent),
        cmocka_unit_test(messages),
        cmocka_unit_test(info_after_error),
        cmocka_unit_test(direct_residuals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
