/* SpGEMM: values against a dense product, batches and broadcasting, the VJP against the
 * adjoint identity ⟨G, dC⟩ = ⟨dA, δA⟩ + ⟨dB, δB⟩ for the bilinear map, errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static sla_pattern *random_pattern(int64_t m, int64_t n, double density, unsigned seed,
                                   double **vals, int64_t batch)
{
    int64_t *r = malloc(sizeof *r * (size_t)(m * n)), *c = malloc(sizeof *c * (size_t)(m * n));
    int64_t k = 0;
    srand(seed);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            if (rand() < density * RAND_MAX) { r[k] = i; c[k] = j; k++; }
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(m, n, k, r, c, &p));
    free(r);
    free(c);
    int64_t nnz = sla_pattern_nnz(p);
    *vals = malloc(sizeof **vals * (size_t)(nnz * batch + 1));
    for (int64_t t = 0; t < nnz * batch; t++) (*vals)[t] = (double)rand() / RAND_MAX - 0.5;
    return p;
}

static void dense_of(const sla_pattern *p, const double *v, double *D)
{
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    memset(D, 0, sizeof *D * (size_t)(m * n));
    for (int64_t i = 0; i < m; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) D[i * n + ci[s]] = v[s];
}

static void values_and_batches(void **state)
{
    double *a, *b;
    sla_pattern *pa = random_pattern(9, 7, 0.3, 1, &a, 2), *pb = random_pattern(7, 11, 0.3, 2, &b, 2);
    sla_pattern *pc = NULL;
    TU_OK(sla_spgemm_pattern(pa, pb, &pc));
    int64_t nc = sla_pattern_nnz(pc);
    double *c = malloc(sizeof *c * (size_t)(2 * nc + 1)), Da[63], Db[77], Dc[99];
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 2, a), B = sla_matrix_view(pb, SLA_FLOAT64, 1, b);
    TU_OK(sla_spgemm(&A, &B, pc, c));                        /* B broadcast */
    for (int t = 0; t < 2; t++) {
        dense_of(pa, a + t * sla_pattern_nnz(pa), Da);
        dense_of(pb, b, Db);
        dense_of(pc, c + t * nc, Dc);
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 11; j++) {
                double s = 0;
                for (int k = 0; k < 7; k++) s += Da[i * 7 + k] * Db[k * 11 + j];
                assert_true(fabs(s - Dc[i * 11 + j]) < 1e-14);
            }
    }
    sla_matrix A2 = sla_matrix_view(pb, SLA_FLOAT64, 1, b);
    assert_int_equal(sla_spgemm(&A2, &B, pc, c), SLA_ESHAPE);
    /* a pattern missing an entry of the product is refused */
    sla_pattern *small = NULL;
    TU_OK(sla_pattern_from_coo(9, 11, 0, NULL, NULL, &small));
    if (nc > 0) assert_int_equal(sla_spgemm(&A, &B, small, c), SLA_EINVAL);
    sla_pattern_free(&small);
    free(c);
    free(a);
    free(b);
    sla_pattern_free(&pa);
    sla_pattern_free(&pb);
    sla_pattern_free(&pc);
}

static void vjp_adjoint_identity(void **state)
{
    double *a, *b, *da0, *db0;
    sla_pattern *pa = random_pattern(8, 6, 0.4, 3, &a, 1), *pb = random_pattern(6, 5, 0.4, 4, &b, 1);
    sla_pattern *qa = random_pattern(8, 6, 0.4, 3, &da0, 1);  /* directions: same patterns */
    sla_pattern *qb = random_pattern(6, 5, 0.4, 4, &db0, 1);
    sla_pattern_free(&qa);
    sla_pattern_free(&qb);
    for (int64_t s = 0; s < sla_pattern_nnz(pa); s++) da0[s] = cos((double)s);
    for (int64_t s = 0; s < sla_pattern_nnz(pb); s++) db0[s] = sin((double)s + 1);
    sla_pattern *pc = NULL;
    TU_OK(sla_spgemm_pattern(pa, pb, &pc));
    int64_t na = sla_pattern_nnz(pa), nb = sla_pattern_nnz(pb), nc = sla_pattern_nnz(pc);
    double *g = malloc(sizeof *g * (size_t)(nc + 1)), *t1 = malloc(sizeof *t1 * (size_t)(nc + 1)),
           *t2 = malloc(sizeof *t2 * (size_t)(nc + 1));
    double *ga = malloc(sizeof *ga * (size_t)(na + 1)), *gb = malloc(sizeof *gb * (size_t)(nb + 1));
    for (int64_t s = 0; s < nc; s++) g[s] = 0.3 * s - 1;
    sla_matrix A = sla_matrix_view(pa, SLA_FLOAT64, 1, a), B = sla_matrix_view(pb, SLA_FLOAT64, 1, b);
    sla_matrix dA = sla_matrix_view(pa, SLA_FLOAT64, 1, da0), dB = sla_matrix_view(pb, SLA_FLOAT64, 1, db0);
    /* directional derivative of the bilinear product: δA·B + A·δB */
    TU_OK(sla_spgemm(&dA, &B, pc, t1));
    TU_OK(sla_spgemm(&A, &dB, pc, t2));
    TU_OK(sla_spgemm_vjp(&A, &B, pc, g, ga, gb));
    double lhs = 0, rhs = 0;
    for (int64_t s = 0; s < nc; s++) lhs += g[s] * (t1[s] + t2[s]);
    for (int64_t s = 0; s < na; s++) rhs += ga[s] * da0[s];
    for (int64_t s = 0; s < nb; s++) rhs += gb[s] * db0[s];
    assert_true(fabs(lhs - rhs) < 1e-12 * (1 + fabs(lhs)));
    TU_OK(sla_spgemm_vjp(&A, &B, pc, g, NULL, gb));            /* one operand only */
    free(g); free(t1); free(t2); free(ga); free(gb);
    free(a); free(b); free(da0); free(db0);
    sla_pattern_free(&pa);
    sla_pattern_free(&pb);
    sla_pattern_free(&pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_and_batches),
        cmocka_unit_test(vjp_adjoint_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
