/* SpMV y = alpha·op(A)·x + beta·y, its VJP and the restricted outer product: dense references
 * over shapes, ops, blocks, batches and dtypes; adjoint identities; finite differences;
 * bit-identical runs on two threads; bad arguments. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A batch of random matrices on one pattern, with its float64 and float32 CSR values and the
 * dense matrices of both (the float32 dense copy holds the rounded values in double). */
typedef struct tmat {
    sla_pattern *p;
    int64_t m, n, nnz, batch;
    double *v64, *dense64, *dense32;
    float *v32;
} tmat;

/* m × n, batch B: about a third of the entries, every 4th input entry repeated (duplicates),
 * row 1 and column 2 left empty; nnz_in = 0 gives an empty pattern. */
static tmat tmat_random(int64_t m, int64_t n, int64_t batch, int64_t nnz_in, uint64_t seed)
{
    tmat A = {.m = m, .n = n, .batch = batch};
    int64_t cap = nnz_in + nnz_in / 4 + 1, k = 0;
    int64_t *r = malloc(sizeof *r * (size_t)cap), *c = malloc(sizeof *c * (size_t)cap);
    for (int64_t e = 0; e < nnz_in && m > 0 && n > 0; e++) {
        r[k] = (int64_t)((tu_rand(&seed) + 1) / 2 * (double)m);
        c[k] = (int64_t)((tu_rand(&seed) + 1) / 2 * (double)n);
        if ((r[k] == 1 && m > 2) || (c[k] == 2 && n > 3)) continue;
        k++;
        if (e % 4 == 0) { r[k] = r[k - 1]; c[k] = c[k - 1]; k++; }
    }
    TU_OK(sla_pattern_from_coo(m, n, k, r, c, &A.p));
    A.nnz = sla_pattern_nnz(A.p);
    double *coo = malloc(sizeof *coo * (size_t)(batch * k + 1));
    tu_fill_random(coo, batch * k, seed);
    A.v64 = malloc(sizeof *A.v64 * (size_t)(batch * A.nnz + 1));
    A.v32 = malloc(sizeof *A.v32 * (size_t)(batch * A.nnz + 1));
    TU_OK(sla_values_gather(A.p, SLA_FLOAT64, batch, coo, A.v64));
    double *rounded = malloc(sizeof *rounded * (size_t)(batch * A.nnz + 1));
    for (int64_t s = 0; s < batch * A.nnz; s++) rounded[s] = A.v32[s] = (float)A.v64[s];
    A.dense64 = malloc(sizeof(double) * (size_t)(batch * m * n + 1));
    A.dense32 = malloc(sizeof(double) * (size_t)(batch * m * n + 1));
    sla_matrix M64 = sla_matrix_view(A.p, SLA_FLOAT64, batch, A.v64);
    sla_matrix M32 = sla_matrix_view(A.p, SLA_FLOAT64, batch, rounded);
    TU_OK(sla_matrix_to_dense(&M64, A.dense64));
    TU_OK(sla_matrix_to_dense(&M32, A.dense32));
    free(r); free(c); free(coo); free(rounded);
    return A;
}

static void tmat_free(tmat *A)
{
    sla_pattern_free(&A->p);
    free(A->v64); free(A->v32); free(A->dense64); free(A->dense32);
}

/* Copy of n doubles in the dtype (malloc'ed, at least one element). */
static void *to_dtype(sla_dtype dt, const double *x, int64_t n)
{
    if (dt == SLA_FLOAT64) {
        double *d = malloc(sizeof *d * (size_t)(n + 1));
        memcpy(d, x, sizeof *d * (size_t)n);
        return d;
    }
    float *f = malloc(sizeof *f * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) f[i] = (float)x[i];
    return f;
}

static double elem(sla_dtype dt, const void *x, int64_t i)
{
    return dt == SLA_FLOAT64 ? ((const double *)x)[i] : ((const float *)x)[i];
}

static double *random_vec(int64_t n, uint64_t seed)
{
    double *x = malloc(sizeof *x * (size_t)(n + 1));
    tu_fill_random(x, n, seed);
    return x;
}

/* Entry (i, j) of op(A_b) from the dense copy. */
static double op_entry(const tmat *A, const double *dense, sla_op op, int64_t b, int64_t i,
                       int64_t j)
{
    const double *D = dense + b * A->m * A->n;
    return op == SLA_OP_N ? D[i * A->n + j] : D[j * A->n + i];
}

/* One case of the sweep: sla_spmv against the dense reference, inputs unchanged. */
typedef struct spmv_case {
    sla_dtype dt;
    sla_op op;
    int64_t k;
    int xb;
    double alpha, beta;
} spmv_case;

static void check_case(const tmat *A, spmv_case c)
{
    int64_t mo = c.op == SLA_OP_N ? A->m : A->n, no = c.op == SLA_OP_N ? A->n : A->m;
    int64_t nx = (c.xb ? A->batch : 1) * no * c.k, ny = A->batch * mo * c.k;
    double *x = random_vec(nx, 11), *y0 = random_vec(ny, 12);
    if (c.beta == 0) for (int64_t i = 0; i < ny; i++) y0[i] = NAN;   /* must not be read */
    void *xd = to_dtype(c.dt, x, nx), *yd = to_dtype(c.dt, y0, ny), *xcopy = to_dtype(c.dt, x, nx);
    const void *vals = c.dt == SLA_FLOAT64 ? (const void *)A->v64 : (const void *)A->v32;
    sla_matrix M = sla_matrix_view(A->p, c.dt, A->batch, vals);
    TU_OK(sla_spmv(c.op, c.alpha, &M, xd, c.xb, c.k, c.beta, yd));
    assert_memory_equal(xd, xcopy, (size_t)nx * sla_dtype_size(c.dt));
    const double *dense = c.dt == SLA_FLOAT64 ? A->dense64 : A->dense32;
    double tol = c.dt == SLA_FLOAT64 ? 1e-14 : 2e-6;
    for (int64_t b = 0; b < A->batch; b++)
        for (int64_t i = 0; i < mo; i++)
            for (int64_t j = 0; j < c.k; j++) {
                const double *xb = x + (c.xb ? b * no * c.k : 0);
                double s = 0, mag = 0;
                for (int64_t l = 0; l < no; l++) {
                    double a = op_entry(A, dense, c.op, b, i, l);
                    s += a * xb[l * c.k + j];
                    mag += fabs(a * xb[l * c.k + j]);
                }
                int64_t q = (b * mo + i) * c.k + j;
                double ref = c.alpha * s + (c.beta == 0 ? 0 : c.beta * y0[q]);
                double scale = fabs(c.alpha) * mag + (c.beta == 0 ? 0 : fabs(c.beta * y0[q])) + 1;
                TU_CLOSE(elem(c.dt, yd, q), ref, tol * scale);
            }
    free(x); free(y0); free(xd); free(yd); free(xcopy);
}

static void dense_reference_sweep(void **state)
{
    const int64_t shapes[][3] = {{5, 7, 20}, {7, 5, 20}, {6, 6, 14}, {40, 30, 400}, {0, 4, 0},
                                 {4, 0, 0}, {0, 0, 0}, {5, 5, 0}};
    const double ab[][2] = {{1, 0}, {-0.7, 0.3}, {0, 0.5}, {2, 0}};
    const int64_t ks[] = {1, 3, 11};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int64_t batch = 1; batch <= 3; batch += 2) {
            tmat A = tmat_random(shapes[si][0], shapes[si][1], batch, shapes[si][2], 100 + si);
            if (shapes[si][2] > 0) assert_true(sla_pattern_has_duplicates(A.p));
            for (int dt = 0; dt < 2; dt++)
                for (int op = 0; op < 2; op++)
                    for (int ki = 0; ki < 3; ki++)
                        for (int xb = 0; xb < 2; xb++)
                            for (int a = 0; a < 4; a++)
                                check_case(&A, (spmv_case){(sla_dtype)dt, (sla_op)op, ks[ki], xb,
                                                           ab[a][0], ab[a][1]});
            tmat_free(&A);
        }
}

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* ⟨A·X, W⟩ = ⟨X, Aᵀ·W⟩ (Frobenius for blocks of k columns), relative to 1e-12. */
static void check_adjoint(const sla_matrix *A, int64_t k, uint64_t seed)
{
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    double *x = random_vec(n * k, seed), *w = random_vec(m * k, seed + 1);
    double *ax = malloc(sizeof *ax * (size_t)(m * k)), *atw = malloc(sizeof *atw * (size_t)(n * k));
    TU_OK(sla_spmv(SLA_OP_N, 1.0, A, x, 0, k, 0.0, ax));
    TU_OK(sla_spmv(SLA_OP_T, 1.0, A, w, 0, k, 0.0, atw));
    double lhs = dot(ax, w, m * k), rhs = dot(x, atw, n * k);
    if (!(fabs(lhs - rhs) <= 1e-12 * fabs(lhs)))
        fail_msg("<Ax, w> = %.17g, <x, A'w> = %.17g (k = %lld)", lhs, rhs, (long long)k);
    free(x); free(w); free(ax); free(atw);
}

static void adjoint_identity(void **state)
{
    tmat R = tmat_random(200, 150, 1, 3000, 7);
    sla_matrix A = sla_matrix_view(R.p, SLA_FLOAT64, 1, R.v64);
    check_adjoint(&A, 1, 1);
    check_adjoint(&A, 3, 2);
    tmat_free(&R);
    sla_pattern *p;
    double *v;
    tu_poisson2d(30, 20, &p, &v);
    /* break the symmetry so that A and Aᵀ differ */
    for (int64_t s = 0; s < sla_pattern_nnz(p); s++) v[s] *= 1.0 + 0.001 * (double)(s % 13);
    sla_matrix P = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    check_adjoint(&P, 1, 3);
    check_adjoint(&P, 3, 4);
    free(v);
    sla_pattern_free(&p);
}

/* The loss of the finite-difference test: L = Σ w ⊙ sin(y), y = alpha·op(A)·x. */
typedef struct fd_problem {
    const tmat *A;
    sla_op op;
    int64_t k;
    int xb;
    double alpha;
    const double *w;
} fd_problem;

static int64_t fd_ny(const fd_problem *f)
{
    return f->A->batch * (f->op == SLA_OP_N ? f->A->m : f->A->n) * f->k;
}

static double fd_loss(const fd_problem *f, const double *vals, const double *x, double *gout)
{
    int64_t ny = fd_ny(f);
    double *y = malloc(sizeof *y * (size_t)(ny + 1)), L = 0;
    sla_matrix M = sla_matrix_view(f->A->p, SLA_FLOAT64, f->A->batch, vals);
    TU_OK(sla_spmv(f->op, f->alpha, &M, x, f->xb, f->k, 0.0, y));
    for (int64_t i = 0; i < ny; i++) {
        L += f->w[i] * sin(y[i]);
        if (gout) gout[i] = f->w[i] * cos(y[i]);
    }
    free(y);
    return L;
}

/* ‖fd − an‖ / ‖an‖ for the central differences of L over the n entries of z (x or values). */
static double fd_error(const fd_problem *f, double *vals, double *x, double *z, int64_t n,
                       const double *an)
{
    const double h = 1e-5;
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double z0 = z[i];
        z[i] = z0 + h;
        double lp = fd_loss(f, vals, x, NULL);
        z[i] = z0 - h;
        double lm = fd_loss(f, vals, x, NULL);
        z[i] = z0;
        double d = (lp - lm) / (2 * h) - an[i];
        num += d * d;
        den += an[i] * an[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

static void check_vjp_fd(const tmat *A, sla_op op, int64_t k, int xb)
{
    int64_t no = op == SLA_OP_N ? A->n : A->m, nx = (xb ? A->batch : 1) * no * k;
    double *x = random_vec(nx, 21), *vals = malloc(sizeof *vals * (size_t)(A->batch * A->nnz));
    memcpy(vals, A->v64, sizeof *vals * (size_t)(A->batch * A->nnz));
    fd_problem f = {A, op, k, xb, -1.3, NULL};
    double *w = random_vec(fd_ny(&f), 22), *g = malloc(sizeof *g * (size_t)fd_ny(&f));
    f.w = w;
    fd_loss(&f, vals, x, g);
    double *dx = malloc(sizeof *dx * (size_t)nx);
    double *dv = malloc(sizeof *dv * (size_t)(A->batch * A->nnz));
    sla_matrix M = sla_matrix_view(A->p, SLA_FLOAT64, A->batch, vals);
    TU_OK(sla_spmv_vjp(op, f.alpha, &M, x, xb, k, g, dx, dv));
    double ex = fd_error(&f, vals, x, x, nx, dx);
    double ev = fd_error(&f, vals, x, vals, A->batch * A->nnz, dv);
    if (!(ex <= 1e-6 && ev <= 1e-6))
        fail_msg("op %d k %lld x_batched %d: dx error %g, dvalues error %g", (int)op,
                 (long long)k, xb, ex, ev);
    /* each output alone gives the same numbers */
    double *dx2 = malloc(sizeof *dx2 * (size_t)nx);
    TU_OK(sla_spmv_vjp(op, f.alpha, &M, NULL, xb, k, g, dx2, NULL));
    assert_memory_equal(dx, dx2, sizeof *dx * (size_t)nx);
    free(x); free(vals); free(w); free(g); free(dx); free(dv); free(dx2);
}

static void vjp_finite_differences(void **state)
{
    tmat A = tmat_random(6, 4, 3, 14, 5);
    for (int op = 0; op < 2; op++)
        for (int64_t k = 1; k <= 3; k += 2)
            for (int xb = 0; xb < 2; xb++) check_vjp_fd(&A, (sla_op)op, k, xb);
    tmat_free(&A);
}

/* sla_pattern_outer_add accumulates alpha·⟨u[r_s], v[c_s]⟩ into every slot. */
static void check_outer(const tmat *A, sla_dtype dt, int64_t k, int ub, int vb)
{
    int64_t nu = (ub ? A->batch : 1) * A->m * k, nv = (vb ? A->batch : 1) * A->n * k;
    int64_t nd = A->batch * A->nnz;
    double *u = random_vec(nu, 31), *v = random_vec(nv, 32), *d0 = random_vec(nd, 33);
    void *ud = to_dtype(dt, u, nu), *vd = to_dtype(dt, v, nv), *dd = to_dtype(dt, d0, nd);
    TU_OK(sla_pattern_outer_add(A->p, dt, A->batch, 0.5, ud, ub, vd, vb, k, dd));
    const int64_t *ri = sla_pattern_rowind(A->p);
    const int32_t *ci = sla_pattern_colind(A->p);
    for (int64_t b = 0; b < A->batch; b++)
        for (int64_t s = 0; s < A->nnz; s++) {
            const double *ur = u + (ub ? b * A->m * k : 0) + ri[s] * k;
            const double *vc = v + (vb ? b * A->n * k : 0) + ci[s] * k;
            double ref = d0[b * A->nnz + s] + 0.5 * dot(ur, vc, k);
            TU_CLOSE(elem(dt, dd, b * A->nnz + s), ref, dt == SLA_FLOAT64 ? 1e-15 : 1e-6);
        }
    free(u); free(v); free(d0); free(ud); free(vd); free(dd);
}

static void outer_add(void **state)
{
    tmat A = tmat_random(9, 7, 2, 30, 9);
    for (int dt = 0; dt < 2; dt++)
        for (int64_t k = 1; k <= 3; k += 2)
            for (int ub = 0; ub < 2; ub++)
                for (int vb = 0; vb < 2; vb++) check_outer(&A, (sla_dtype)dt, k, ub, vb);
    tmat_free(&A);
}

/* All outputs of one configuration, for the bit-identity test. */
static void run_all(const sla_matrix *A, const double *x, const double *g, int64_t k,
                    double *yn, double *yt, double *dx, double *dv)
{
    TU_OK(sla_spmv(SLA_OP_N, 0.9, A, x, 0, k, 0.0, yn));
    TU_OK(sla_spmv(SLA_OP_T, 0.9, A, x, 0, k, 0.0, yt));
    TU_OK(sla_spmv_vjp(SLA_OP_N, 0.9, A, x, 0, k, g, dx, dv));
}

static void check_bit_identical(const sla_matrix *A, int64_t k)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    int64_t ny = A->batch * n * k, nv = A->batch * nnz;
    double *x = random_vec(n * k, 41), *g = random_vec(ny, 42), *out[3][4];
    int threads[3] = {2, 2, 1};
    for (int r = 0; r < 3; r++) {
        (void)sla_set_num_threads(threads[r]);
        assert_int_equal(sla_get_num_threads(), threads[r]);
        for (int o = 0; o < 4; o++)
            out[r][o] = malloc(sizeof(double) * (size_t)(o == 2 ? n * k : o == 3 ? nv : ny));
        run_all(A, x, g, k, out[r][0], out[r][1], out[r][2], out[r][3]);
    }
    int64_t len[4] = {ny, ny, n * k, nv};
    for (int r = 1; r < 3; r++)
        for (int o = 0; o < 4; o++) {
            assert_memory_equal(out[0][o], out[r][o], sizeof(double) * (size_t)len[o]);
            free(out[r][o]);
        }
    /* the kernels' int64 row-pointer path (taken when nnz > INT32_MAX) gives the same bits */
    double *y64[4];
    int was = sla_test_rowptr32(0);
    (void)sla_set_num_threads(2);
    for (int o = 0; o < 4; o++) y64[o] = malloc(sizeof(double) * (size_t)len[o]);
    run_all(A, x, g, k, y64[0], y64[1], y64[2], y64[3]);
    sla_test_rowptr32(was);
    for (int o = 0; o < 4; o++) {
        assert_memory_equal(out[0][o], y64[o], sizeof(double) * (size_t)len[o]);
        free(y64[o]);
    }
    for (int o = 0; o < 4; o++) free(out[0][o]);
    free(x); free(g);
}

static void bit_identical_threads(void **state)
{
    sla_pattern *p;
    double *v;
    tu_poisson2d(300, 300, &p, &v);   /* large enough to run on both threads */
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = malloc(sizeof *vb * (size_t)(2 * nnz));
    tu_fill_random(vb, 2 * nnz, 51);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, vb);
    check_bit_identical(&A, 1);
    check_bit_identical(&A, 3);
    (void)sla_set_num_threads(0);
    free(v); free(vb);
    sla_pattern_free(&p);
}

/* Asserts status and that the message contains `what`. */
#define EXPECT_ERR(expr, status, what) do { sla_clear_error(); \
    assert_int_equal((expr), (status)); \
    if (!strstr(sla_last_error(), (what))) \
        fail_msg("message '%s' lacks '%s'", sla_last_error(), (what)); \
} while (0)

static void bad_arguments(void **state)
{
    tmat R = tmat_random(4, 4, 1, 10, 3);
    sla_matrix A = sla_matrix_view(R.p, SLA_FLOAT64, 1, R.v64), bad = A;
    double x[8] = {1, 2, 3, 4}, y[8] = {7, 7, 7, 7}, g[4] = {1, 1, 1, 1}, dv[64];
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, NULL, x, 0, 1, 0, y), SLA_EINVAL, "A");
    EXPECT_ERR(sla_spmv((sla_op)7, 1, &A, x, 0, 1, 0, y), SLA_EINVAL, "op = 7");
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &A, x, 0, 0, 0, y), SLA_EINVAL, "k = 0");
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &A, x, 2, 1, 0, y), SLA_EINVAL, "x_batched = 2");
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &A, NULL, 0, 1, 0, y), SLA_EINVAL, "x is NULL");
    EXPECT_ERR(sla_spmv(SLA_OP_T, 1, &A, x, 0, 1, 0, NULL), SLA_EINVAL, "y is NULL");
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &A, x, 0, 1, 0, x + 2), SLA_EINVAL, "y overlaps x");
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &A, x, 0, 1, 0, (void *)R.v64), SLA_EINVAL, "values");
    bad.dtype = (sla_dtype)9;
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &bad, x, 0, 1, 0, y), SLA_EDTYPE, "dtype 9");
    bad = A;
    bad.batch = 0;
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &bad, x, 0, 1, 0, y), SLA_EINVAL, "batch = 0");
    EXPECT_ERR(sla_spmv(SLA_OP_N, 1, &A, x, 0, INT64_MAX / 2, 0, y), SLA_EINVAL, "overflow");
    for (int i = 0; i < 4; i++) assert_true(y[i] == 7);   /* outputs untouched on error */
    EXPECT_ERR(sla_spmv_vjp(SLA_OP_N, 1, &A, x, 0, 1, NULL, y, NULL), SLA_EINVAL, "g is NULL");
    EXPECT_ERR(sla_spmv_vjp(SLA_OP_N, 1, &A, NULL, 0, 1, g, NULL, dv), SLA_EINVAL, "x is NULL");
    EXPECT_ERR(sla_spmv_vjp(SLA_OP_N, 1, &A, x, 0, 1, g, g, NULL), SLA_EINVAL, "dx overlaps g");
    EXPECT_ERR(sla_spmv_vjp(SLA_OP_T, 1, &A, x, 0, 1, g, NULL, x), SLA_EINVAL,
               "dvalues overlaps x");
    EXPECT_ERR(sla_spmv_vjp(SLA_OP_N, 1, &A, x, 3, 1, g, y, NULL), SLA_EINVAL, "x_batched = 3");
    EXPECT_ERR(sla_pattern_outer_add(NULL, SLA_FLOAT64, 1, 1, x, 0, x, 0, 1, dv), SLA_EINVAL,
               "pattern is NULL");
    EXPECT_ERR(sla_pattern_outer_add(R.p, (sla_dtype)5, 1, 1, x, 0, x, 0, 1, dv), SLA_EDTYPE,
               "dtype 5");
    EXPECT_ERR(sla_pattern_outer_add(R.p, SLA_FLOAT64, 0, 1, x, 0, x, 0, 1, dv), SLA_EINVAL,
               "batch = 0");
    EXPECT_ERR(sla_pattern_outer_add(R.p, SLA_FLOAT64, 1, 1, x, 0, x, 0, -1, dv), SLA_EINVAL,
               "k = -1");
    EXPECT_ERR(sla_pattern_outer_add(R.p, SLA_FLOAT64, 1, 1, NULL, 0, x, 0, 1, dv), SLA_EINVAL,
               "u is NULL");
    EXPECT_ERR(sla_pattern_outer_add(R.p, SLA_FLOAT64, 1, 1, x, 0, x, 4, 1, dv), SLA_EINVAL,
               "v_batched = 4");
    EXPECT_ERR(sla_pattern_outer_add(R.p, SLA_FLOAT64, 1, 1, x, 0, y, 0, 1, y + 1), SLA_EINVAL,
               "dvalues overlaps v");
    tmat_free(&R);
}

static void empty_arrays_may_be_null(void **state)
{
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(0, 4, 0, NULL, NULL, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 2, NULL);
    double x[4] = {1, 2, 3, 4}, y[8];
    for (int i = 0; i < 8; i++) y[i] = NAN;
    TU_OK(sla_spmv(SLA_OP_N, 1, &A, x, 0, 1, 0, NULL));
    TU_OK(sla_spmv(SLA_OP_T, 1, &A, NULL, 0, 1, 0, y));
    for (int i = 0; i < 8; i++) assert_true(y[i] == 0);      /* Aᵀ·(empty) = 0 */
    TU_OK(sla_spmv_vjp(SLA_OP_N, 1, &A, NULL, 0, 1, NULL, y, NULL));
    for (int i = 0; i < 4; i++) assert_true(y[i] == 0);
    TU_OK(sla_pattern_outer_add(p, SLA_FLOAT32, 2, 1, NULL, 1, x, 0, 1, NULL));
    sla_pattern_free(&p);
}

static void alpha_zero_ignores_x(void **state)
{
    tmat R = tmat_random(5, 5, 1, 12, 4);
    sla_matrix A = sla_matrix_view(R.p, SLA_FLOAT64, 1, R.v64);
    double x[5] = {NAN, INFINITY, 1, 2, 3}, y[5] = {1, 2, 3, 4, 5};
    TU_OK(sla_spmv(SLA_OP_T, 0.0, &A, x, 0, 1, 2.0, y));
    for (int i = 0; i < 5; i++) assert_true(y[i] == 2.0 * (i + 1));
    TU_OK(sla_spmv(SLA_OP_N, 0.0, &A, x, 0, 1, 0.0, y));
    for (int i = 0; i < 5; i++) assert_true(y[i] == 0);
    tmat_free(&R);
}

static void transpose_allocation_failure(void **state)
{
    /* the first op = T builds Aᵀ: every allocation failing in turn gives SLA_ENOMEM, y untouched */
    for (int64_t k = 0;; k++) {
        tmat R = tmat_random(6, 5, 1, 15, 8);
        sla_matrix A = sla_matrix_view(R.p, SLA_FLOAT64, 1, R.v64);
        double x[6] = {1, 2, 3, 4, 5, 6}, y[5] = {9, 9, 9, 9, 9};
        sla_test_fail_alloc_after(k);
        sla_status st = sla_spmv(SLA_OP_T, 1.0, &A, x, 0, 1, 0.0, y);
        sla_test_fail_alloc_after(-1);
        tmat_free(&R);
        if (st == SLA_OK) break;
        assert_int_equal(st, SLA_ENOMEM);
        assert_non_null(strstr(sla_last_error(), "transpose of A"));
        for (int i = 0; i < 5; i++) assert_true(y[i] == 9);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dense_reference_sweep),
        cmocka_unit_test(adjoint_identity),
        cmocka_unit_test(vjp_finite_differences),
        cmocka_unit_test(outer_add),
        cmocka_unit_test(bit_identical_threads),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(empty_arrays_may_be_null),
        cmocka_unit_test(alpha_zero_ignores_x),
        cmocka_unit_test(transpose_allocation_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
