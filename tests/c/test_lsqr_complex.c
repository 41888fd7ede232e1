/* Complex LSQR (min ‖b − op(A)x‖ with op N or C, the adjoint op(A)ᴴ) and its least-squares
 * VJP in torch's convention: against LAPACK zgelsd (minimum norm, SVD) for tall and wide A and
 * op C, a real matrix handed as complex against the real LSQR (same iterations, same x, no
 * imaginary part), the gradients ∂b, ∂values against central differences in the real and
 * imaginary part of every entry, and the refusal of op T. */
#include <complex.h>
#include <lapacke.h>
#include <stdio.h>

#include "ktest.h"

typedef double complex zc;

/* a random complex m × n sparse matrix, entries (a + ib) with a, b in [-1, 1) at about
 * `density`, plus 3 + i on a_jj: pattern, CSR values and the dense row-major copy [m][n] */
static void zrand_sparse(int64_t m, int64_t n, double density, uint64_t seed, sla_pattern **p,
                         zc **vals, zc **dense)
{
    uint64_t st = seed;
    int64_t cap = m * n, nnz = 0;
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)cap), *ci = malloc(sizeof(int64_t) * (size_t)cap);
    zc *v = malloc(sizeof(zc) * (size_t)cap);
    *dense = calloc((size_t)cap, sizeof(zc));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double keep = 0.5 * (tu_rand(&st) + 1);
            zc a = tu_rand(&st) + I * tu_rand(&st);
            if (i == j) a += 3 + I;
            else if (keep >= density) continue;
            ri[nnz] = i;
            ci[nnz] = j;
            v[nnz++] = a;
            (*dense)[i * n + j] = a;
        }
    TU_OK(sla_pattern_from_coo(m, n, nnz, ri, ci, p));
    *vals = v;
    free(ri);
    free(ci);
}

static void zrand_vec(int64_t n, uint64_t seed, zc *x)
{
    uint64_t st = seed;
    for (int64_t i = 0; i < n; i++) x[i] = tu_rand(&st) + I * tu_rand(&st);
}

/* minimum-norm least-squares solution of op(D) x = b (op N or C) for the dense [m][n] D */
static void dense_zlstsq(const zc *D, int64_t m, int64_t n, sla_op op, const zc *b, zc *x)
{
    int64_t r = op == SLA_OP_N ? m : n, c = op == SLA_OP_N ? n : m, ld = m > n ? m : n;
    zc *A = malloc(sizeof(zc) * (size_t)(m * n)), *bx = calloc((size_t)ld, sizeof(zc));
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) A[i * c + j] = op == SLA_OP_N ? D[i * n + j] : conj(D[j * n + i]);
    memcpy(bx, b, sizeof(zc) * (size_t)r);
    double *sv = malloc(sizeof(double) * (size_t)ld);
    lapack_int rank;
    assert_int_equal(LAPACKE_zgelsd(LAPACK_ROW_MAJOR, (lapack_int)r, (lapack_int)c, 1,
                                    (lapack_complex_double *)A, (lapack_int)c,
                                    (lapack_complex_double *)bx, 1, sv, -1.0, &rank), 0);
    memcpy(x, bx, sizeof(zc) * (size_t)c);
    free(A); free(bx); free(sv);
}

static double zrel_err(const zc *x, const zc *y, int64_t n)
{
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, cabs(x[i] - y[i]));
        s = fmax(s, cabs(y[i]));
    }
    return d / s;
}

static sla_solver *lsqr_solver(const sla_matrix *A, double rtol)
{
    sla_solver_options o = kt_options(SLA_METHOD_LSQR, SLA_PRECOND_AUTO, rtol);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(A, &o, &s));
    return s;
}

/* tall (op N: overdetermined; op C: Aᴴ wide, minimum norm) and wide A against zgelsd; the
 * residual in the info against the dense one; method auto picks LSQR for a rectangular
 * complex A */
static void complex_vs_zgelsd(void **state)
{
    (void)state;
    const int64_t shapes[2][2] = {{40, 15}, {12, 30}};
    for (int sh = 0; sh < 2; sh++) {
        int64_t m = shapes[sh][0], n = shapes[sh][1];
        sla_pattern *p;
        zc *v, *D;
        zrand_sparse(m, n, 0.2, 31 + (uint64_t)sh, &p, &v, &D);
        sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
        sla_solver *s = lsqr_solver(&A, 1e-13);
        const sla_op ops[2] = {SLA_OP_N, SLA_OP_C};
        for (int oi = 0; oi < 2; oi++) {
            sla_op op = ops[oi];
            int64_t nb = op == SLA_OP_N ? m : n, nx = op == SLA_OP_N ? n : m;
            zc b[64], x[64], ref[64];
            zrand_vec(nb, 40 + (uint64_t)(sh * 2 + oi), b);
            dense_zlstsq(D, m, n, op, b, ref);
            sla_solve_info info;
            TU_OK(sla_solver_solve(s, op, 1, b, x, &info));
            double rr = 0;                   /* dense ‖b − op(D)x‖ */
            for (int64_t i = 0; i < nb; i++) {
                zc t = b[i];
                for (int64_t j = 0; j < nx; j++)
                    t -= (op == SLA_OP_N ? D[i * n + j] : conj(D[j * n + i])) * x[j];
                rr += creal(t * conj(t));
            }
            if (!info.converged || zrel_err(x, ref, nx) > 1e-9 ||
                fabs(info.residual_norm - sqrt(rr)) > 1e-10 * (1 + sqrt(rr)))
                fail_msg("%lld × %lld, op %d: converged %d, error %g, residual %g vs dense %g",
                         (long long)m, (long long)n, (int)op, info.converged,
                         zrel_err(x, ref, nx), info.residual_norm, sqrt(rr));
        }
        sla_solver_free(&s);
        sla_solver_options o;
        sla_solver_options_init(&o);
        TU_OK(sla_solver_create(&A, &o, &s));
        assert_int_equal(sla_solver_method(s), SLA_METHOD_LSQR);
        sla_solver_free(&s);
        sla_pattern_free(&p);
        free(v); free(D);
    }
}

/* a real A handed as complex: the real LSQR's iterations and x, imaginary parts exactly 0 */
static void real_as_complex(void **state)
{
    (void)state;
    int64_t m = 50, n = 20;
    sla_pattern *p;
    zc *v, *D;
    zrand_sparse(m, n, 0.2, 51, &p, &v, &D);
    int64_t nnz = sla_pattern_nnz(p);
    double *vr = malloc(sizeof(double) * (size_t)nnz), br[50], xr[20];
    zc *vz = malloc(sizeof(zc) * (size_t)nnz), bz[50], xz[20];
    for (int64_t k = 0; k < nnz; k++) vz[k] = vr[k] = creal(v[k]);
    tu_fill_random(br, m, 52);
    for (int64_t i = 0; i < m; i++) bz[i] = br[i];
    sla_matrix Ar = sla_matrix_view(p, SLA_FLOAT64, 1, vr), Az = sla_matrix_view(p, SLA_COMPLEX128, 1, vz);
    sla_solver *sr = lsqr_solver(&Ar, 1e-12), *sz = lsqr_solver(&Az, 1e-12);
    sla_solve_info ir, iz;
    TU_OK(sla_solver_solve(sr, SLA_OP_N, 1, br, xr, &ir));
    TU_OK(sla_solver_solve(sz, SLA_OP_N, 1, bz, xz, &iz));
    double e = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(cimag(xz[i]) == 0);
        e = fmax(e, fabs(creal(xz[i]) - xr[i]));
        s = fmax(s, fabs(xr[i]));
    }
    if (iz.iterations != ir.iterations || e > 1e-13 * s)
        fail_msg("iterations %lld complex vs %lld real, |x_c − x_r| = %g",
                 (long long)iz.iterations, (long long)ir.iterations, e / s);
    sla_solver_free(&sr);
    sla_solver_free(&sz);
    sla_pattern_free(&p);
    free(v); free(D); free(vr); free(vz);
}

/* L = Re(gᴴx) for x from a fresh solve with values vals and right-hand side b */
static double zloss(sla_solver *s, sla_op op, const zc *vals, const zc *b, const zc *g, int64_t nx)
{
    zc x[64];
    TU_OK(sla_solver_refactor(s, vals));
    TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
    double l = 0;
    for (int64_t i = 0; i < nx; i++) l += creal(conj(g[i]) * x[i]);
    return l;
}

/* ∂L/∂Re z + i ∂L/∂Im z of entry q of z by central differences */
static zc fd_entry(sla_solver *s, sla_op op, zc *vals, zc *b, const zc *g, int64_t nx, zc *z)
{
    const double h = 1e-6;
    zc z0 = *z, d[2];
    for (int part = 0; part < 2; part++) {
        zc dz = part ? I * h : h;
        *z = z0 + dz;
        double lp = zloss(s, op, vals, b, g, nx);
        *z = z0 - dz;
        double lm = zloss(s, op, vals, b, g, nx);
        d[part] = (lp - lm) / (2 * h);
    }
    *z = z0;
    return d[0] + I * d[1];
}

/* ∂b, ∂values of sla_solver_lstsq_vjp against central differences: tall (full column rank),
 * wide (minimum norm: the z wᴴ term), and op C */
static void check_zfd(int64_t m, int64_t n, sla_op op, uint64_t seed)
{
    sla_pattern *p;
    zc *v, *D;
    zrand_sparse(m, n, 0.3, seed, &p, &v, &D);
    int64_t nnz = sla_pattern_nnz(p), nb = op == SLA_OP_N ? m : n, nx = op == SLA_OP_N ? n : m;
    zc b[64], g[64], x[64], db[64], *dv = malloc(sizeof(zc) * (size_t)nnz);
    zrand_vec(nb, seed + 1, b);
    zrand_vec(nx, seed + 2, g);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    sla_solver *s = lsqr_solver(&A, 1e-14);
    TU_OK(sla_solver_solve(s, op, 1, b, x, NULL));
    sla_solve_info info;
    TU_OK(sla_solver_lstsq_vjp(s, op, 1, b, x, g, db, dv, &info));
    assert_true(info.converged && info.iterations > 0);
    /* every entry of b, then of the values */
    struct { zc *z, *grad; int64_t count; const char *name; } args[2] = {
        {b, db, nb, "db"}, {v, dv, nnz, "dvalues"}};
    for (int a = 0; a < 2; a++) {
        double err = 0, scale = 0;
        for (int64_t i = 0; i < args[a].count; i++) {
            zc fd = fd_entry(s, op, v, b, g, nx, &args[a].z[i]);
            err = fmax(err, cabs(fd - args[a].grad[i]));
            scale = fmax(scale, cabs(args[a].grad[i]));
        }
        if (err > 1e-6 * scale)
            fail_msg("%lld × %lld op %d: %s error %g of %g", (long long)m, (long long)n,
                     (int)op, args[a].name, err, scale);
    }
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(D); free(dv);
}

static void vjp_finite_differences(void **state)
{
    (void)state;
    check_zfd(14, 6, SLA_OP_N, 81);      /* overdetermined, full column rank */
    check_zfd(6, 13, SLA_OP_N, 83);      /* underdetermined: minimum norm, third term */
    check_zfd(6, 14, SLA_OP_C, 82);      /* Aᴴ tall */
    check_zfd(13, 6, SLA_OP_C, 84);      /* Aᴴ wide */
}

/* op T of a complex A (its adjoint conj(A) is no op): refused, never answered */
static void op_t_refused(void **state)
{
    (void)state;
    sla_pattern *p;
    zc *v, *D, b[20] = {1}, x[20] = {0}, g[20] = {1}, db[20];
    sla_solve_info info;
    zrand_sparse(8, 5, 0.3, 91, &p, &v, &D);
    sla_matrix A = sla_matrix_view(p, SLA_COMPLEX128, 1, v);
    sla_solver *s = lsqr_solver(&A, 1e-10);
    assert_true(sla_solver_solve(s, SLA_OP_T, 1, b, x, NULL) < 0);
    assert_non_null(strstr(sla_last_error(), "op N or C"));
    assert_int_equal(sla_solver_lstsq_vjp(s, SLA_OP_T, 1, b, x, g, db, NULL, &info), SLA_EUNSUPPORTED);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(complex_vs_zgelsd), cmocka_unit_test(real_as_complex),
        cmocka_unit_test(vjp_finite_differences), cmocka_unit_test(op_t_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
