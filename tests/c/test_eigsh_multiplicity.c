/* eigsh and eigenvalues of multiplicity above the Krylov block (docs/eigsh.md, "Repeated
 * eigenvalues"): every copy is returned, against dense LAPACK and the closed form of the grid
 * Laplacian; a run whose copies cannot be confirmed is not reported as a success. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const double pi = 3.14159265358979323846;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* All m³ eigenvalues of tu_poisson3d ascending: μ_a + μ_b + μ_c, μ_i = 2 − 2cos(πi/(m + 1)). */
static double *laplace3d_spectrum(int64_t m)
{
    double *w = malloc(sizeof(double) * (size_t)(m * m * m));
    assert_non_null(w);
    int64_t q = 0;
    for (int64_t a = 1; a <= m; a++)
        for (int64_t b = 1; b <= m; b++)
            for (int64_t c = 1; c <= m; c++) {
                double mu[3] = {(double)a, (double)b, (double)c};
                w[q] = 0;
                for (int t = 0; t < 3; t++) w[q] += 2 - 2 * cos(pi * mu[t] / (double)(m + 1));
                q++;
            }
    qsort(w, (size_t)q, sizeof *w, cmp_double);
    return w;
}

/* Runs eigsh and checks the house rule: a success returns exactly ref (ascending, k values,
 * to 1e-9 relative). need_ok: the run must succeed. Returns the status. */
static sla_status check_run(const sla_matrix *A, int64_t k, sla_eigsh_options o, const double *ref,
                            int need_ok, const char *what)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    /* room for complex128 eigenvectors too */
    double *lam = malloc(sizeof(double) * (size_t)k), *V = malloc(2 * sizeof(double) * (size_t)(n * k));
    assert_true(lam && V);
    sla_eigsh_info info;
    sla_status st = sla_eigsh(A, k, &o, lam, V, &info);
    if (need_ok && st != SLA_OK)
        fail_msg("%s: status %d (%s)", what, (int)st, sla_last_error());
    if (st == SLA_OK) {
        assert_int_equal(info.converged, k);
        for (int64_t j = 0; j < k; j++)
            if (!(fabs(lam[j] - ref[j]) <= 1e-9 * fmax(1.0, fabs(ref[j]))))
                fail_msg("%s (%s): lambda[%lld] = %.15g, expected %.15g (a copy of a repeated "
                         "eigenvalue lost with a success status)", what, info.description,
                         (long long)j, lam[j], ref[j]);
    } else {
        assert_int_equal(st, SLA_NOT_CONVERGED);
        assert_true(info.converged < k);
    }
    free(lam);
    free(V);
    return st;
}

static int have_arpack(void) { return SLA_HAVE_ARPACK; }

/* Laplace3D10: 4.0810 is a 6-fold eigenvalue, the 6 nearest σ = 4.1 (block 2 returned 4 copies
 * and two of 4.1210 with "converged 6 of 6" before the multiplicity rule). */
static void test_laplace3d10_sigma(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    sla_pattern *p;
    double *v;
    tu_load("Laplace3D10.mtx", &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    int64_t k = 6;
    double ref[6];
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.sigma = 4.1;
    o.method = SLA_EIGSH_DENSE;
    TU_OK(sla_eigsh(&A, k, &o, ref, NULL, NULL));
    for (int j = 1; j < 6; j++) TU_CLOSE(ref[j], ref[0], 1e-12);   /* six copies */
    o.method = SLA_EIGSH_AUTO;
    check_run(&A, k, o, ref, 1, "auto, sigma 4.1");
    o.method = SLA_EIGSH_LANCZOS;
    check_run(&A, k, o, ref, 1, "lanczos, sigma 4.1");
    o.block_size = 3;
    check_run(&A, k, o, ref, 1, "lanczos block 3, sigma 4.1");
    o.block_size = 0;
    if (have_arpack()) {
        o.method = SLA_EIGSH_ARPACK;
        check_run(&A, k, o, ref, 0, "arpack, sigma 4.1");
    }
    sla_pattern_free(&p);
    free(v);
}

/* Laplace3D10 as a complex Hermitian matrix by a diagonal unitary gauge, D A Dᴴ with
 * D = diag(e^{iφ_r}): the same spectrum (six copies of 4.0810 nearest σ = 4.1), run on the
 * native complex shift-invert Lanczos (hlanczos.c), which applies the same rule. */
static void test_complex_gauge_sigma(void **state)
{
    (void)state;
    if (!tu_have_matrices()) skip();
    sla_pattern *p;
    double *v;
    tu_load("Laplace3D10.mtx", &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), k = 6;
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *z = malloc(2 * sizeof(double) * (size_t)nnz);
    assert_non_null(z);
    for (int64_t r = 0; r < n; r++)
        for (int64_t q = rp[r]; q < rp[r + 1]; q++) {
            double phi = 0.37 * (double)r * (double)r - 0.37 * (double)ci[q] * (double)ci[q];
            z[2 * q] = v[q] * cos(phi);
            z[2 * q + 1] = v[q] * sin(phi);
        }
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_matrix Z = sla_matrix_view(p, SLA_COMPLEX128, 1, z);
    double ref[6];
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.sigma = 4.1;
    o.method = SLA_EIGSH_DENSE;
    TU_OK(sla_eigsh(&A, k, &o, ref, NULL, NULL));
    o.method = SLA_EIGSH_AUTO;
    check_run(&Z, k, o, ref, 1, "complex gauge, auto, sigma 4.1");
    o.method = SLA_EIGSH_LANCZOS;
    o.block_size = 2;
    check_run(&Z, k, o, ref, 1, "complex gauge, lanczos block 2, sigma 4.1");
    {
        /* the native path ran, and it did not take 6 copies from a block of 2 on trust */
        double lam[6];
        double *V = malloc(2 * sizeof(double) * (size_t)(n * k));
        sla_eigsh_info info;
        TU_OK(sla_eigsh(&Z, k, &o, lam, V, &info));
        assert_non_null(strstr(info.description, "complex Hermitian"));
        if (!strstr(info.description, "multiplicity check"))
            fail_msg("six copies from block 2 accepted unchecked: %s", info.description);
        free(V);
    }
    o.block_size = 0;
    o.which = SLA_EIGSH_SA;
    o.sigma = NAN;
    double *w = laplace3d_spectrum(10);
    check_run(&Z, 8, o, w, 1, "complex gauge, lanczos, SA");
    free(w);
    free(z);
    sla_pattern_free(&p);
    free(v);
}

/* 8³ grid: the 17 smallest are 1 + 3 + 3 + 3 + 1 copies, then a 6-fold eigenvalue; the 17
 * largest mirror them (λ ↦ 12 − λ). Every method against the closed form. */
static void test_grid3d_closed_form(void **state)
{
    (void)state;
    int64_t m = 8, n = m * m * m, k = 17;
    sla_pattern *p;
    double *v;
    tu_poisson3d(m, &p, &v);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *w = laplace3d_spectrum(m);
    TU_CLOSE(w[11], w[16], 1e-13);           /* the 6-fold one fills positions 11..16 */
    assert_true(w[10] < w[11] - 1e-3 && w[16] < w[17] - 1e-3);
    const sla_eigsh_method methods[] = {SLA_EIGSH_AUTO, SLA_EIGSH_LANCZOS, SLA_EIGSH_LOBPCG,
                                        SLA_EIGSH_ARPACK};
    int arpack = have_arpack();
    for (int side = 0; side < 2; side++) {
        double ref[17];
        for (int64_t j = 0; j < k; j++) ref[j] = side ? w[n - k + j] : w[j];
        for (size_t q = 0; q < sizeof methods / sizeof methods[0]; q++) {
            if (methods[q] == SLA_EIGSH_ARPACK && !arpack) continue;
            sla_eigsh_options o;
            sla_eigsh_options_init(&o);
            o.which = side ? SLA_EIGSH_LA : SLA_EIGSH_SA;
            o.method = methods[q];
            char what[64];
            snprintf(what, sizeof what, "%s, %s", sla_eigsh_method_name(o.method),
                     sla_eigsh_which_name(o.which));
            check_run(&A, k, o, ref, methods[q] != SLA_EIGSH_ARPACK, what);
        }
    }
    /* sigma between the 3-fold eigenvalues w[1..3] and w[4..6]: the 6 nearest */
    {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.sigma = 0.5 * (w[3] + w[4]);
        double ref[6] = {w[1], w[2], w[3], w[4], w[5], w[6]};
        check_run(&A, 6, o, ref, 1, "auto, sigma between two triples");
    }
    /* the generalized problem with M = 2I: eigenvalues λ/2, the same multiplicities */
    {
        double *mv = malloc(sizeof(double) * (size_t)n);
        int64_t *ri = malloc(sizeof(int64_t) * (size_t)n);
        sla_pattern *pm;
        for (int64_t i = 0; i < n; i++) { ri[i] = i; mv[i] = 2; }
        TU_OK(sla_pattern_from_coo(n, n, n, ri, ri, &pm));
        sla_matrix M = sla_matrix_view(pm, SLA_FLOAT64, 1, mv);
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = SLA_EIGSH_SA;
        o.M = &M;
        double ref[17];
        for (int64_t j = 0; j < k; j++) ref[j] = 0.5 * w[j];
        check_run(&A, k, o, ref, 1, "auto, SA, M = 2I");
        sla_pattern_free(&pm);
        free(mv);
        free(ri);
    }
    free(w);
    sla_pattern_free(&p);
    free(v);
}

/* n = 18, a 10-fold smallest eigenvalue, method lanczos, k = 6: the six copies have to be
 * confirmed by a run with block 7, which does not fit (k + 7 ≤ ncv ≤ n − 7): not converged,
 * with a message saying why, never a success. */
static void test_unconfirmable_is_not_success(void **state)
{
    (void)state;
    int64_t n = 18, k = 6;
    int64_t ri[18];
    double dv[18], ref[6];
    for (int64_t i = 0; i < n; i++) { ri[i] = i; dv[i] = i < 10 ? 1.0 : (double)(i - 8); }
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(n, n, n, ri, ri, &p));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, dv);
    for (int64_t j = 0; j < k; j++) ref[j] = 1.0;
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = SLA_EIGSH_LANCZOS;
    sla_status st = check_run(&A, k, o, ref, 0, "lanczos, n = 18");
    assert_int_equal(st, SLA_NOT_CONVERGED);
    assert_non_null(strstr(sla_last_error(), "does not fit"));
    /* the dense path has no such limit */
    o.method = SLA_EIGSH_DENSE;
    check_run(&A, k, o, ref, 1, "dense, n = 18");
    /* the same matrix as complex128 on the native complex Lanczos (hlanczos.c's hl_certify):
     * not converged, the same reason */
    double zv[36];
    for (int64_t i = 0; i < n; i++) { zv[2 * i] = dv[i]; zv[2 * i + 1] = 0; }
    sla_matrix Z = sla_matrix_view(p, SLA_COMPLEX128, 1, zv);
    o.method = SLA_EIGSH_LANCZOS;
    st = check_run(&Z, k, o, ref, 0, "complex, lanczos, n = 18");
    assert_int_equal(st, SLA_NOT_CONVERGED);
    assert_non_null(strstr(sla_last_error(), "does not fit"));
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_laplace3d10_sigma),
        cmocka_unit_test(test_grid3d_closed_form),
        cmocka_unit_test(test_complex_gauge_sigma),
        cmocka_unit_test(test_unconfirmable_is_not_success),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
