/* Patterns from COO and CSR, duplicates, transposes, gather/scatter, properties, bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* 3×4 with a duplicate (1,2) given twice, in scrambled order. */
static const int64_t R[] = {2, 0, 1, 1, 0, 1};
static const int64_t C[] = {3, 1, 2, 0, 0, 2};
static const double V[] = {6, 2, 3, 4, 1, 5};

/* components of 0–3, 1–4 (one direction only), 2 alone, 5 with a self-loop: numbered by
 * their smallest node; a non-square pattern is refused */
static void connected_components(void **state)
{
    int64_t row[] = {3, 1, 5, 0}, col[] = {0, 4, 5, 3};
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(6, 6, 4, row, col, &p));
    int64_t lab[6], n = -1;
    TU_OK(sla_pattern_connected_components(p, lab, &n));
    int64_t want[6] = {0, 1, 2, 0, 1, 3};
    assert_int_equal(n, 4);
    for (int i = 0; i < 6; i++) assert_int_equal(lab[i], want[i]);
    sla_pattern_free(&p);
    TU_OK(sla_pattern_from_coo(2, 3, 1, row + 3, row + 3, &p));
    assert_int_equal(sla_pattern_connected_components(p, lab, &n), SLA_ESHAPE);
    sla_pattern_free(&p);
    TU_OK(sla_pattern_from_coo(0, 0, 0, NULL, NULL, &p));
    TU_OK(sla_pattern_connected_components(p, NULL, &n));
    assert_int_equal(n, 0);
    sla_pattern_free(&p);
}

static void coo_duplicates_and_order(void **state)
{
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(3, 4, 6, R, C, &p));
    assert_int_equal(sla_pattern_nnz(p), 5);
    assert_int_equal(sla_pattern_nnz_input(p), 6);
    assert_true(sla_pattern_has_duplicates(p));
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    int64_t erp[] = {0, 2, 4, 5};
    int32_t eci[] = {0, 1, 0, 2, 3};
    for (int i = 0; i < 4; i++) assert_int_equal(rp[i], erp[i]);
    for (int s = 0; s < 5; s++) assert_int_equal(ci[s], eci[s]);
    const int64_t *map = sla_pattern_map(p);
    assert_int_equal(map[2], map[5]);     /* the duplicate pair shares slot 3 */
    assert_int_equal(map[2], 3);
    double csr[5], coo[6];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, V, csr));
    double ecsr[] = {1, 2, 4, 3 + 5, 6};
    for (int s = 0; s < 5; s++) assert_true(csr[s] == ecsr[s]);
    TU_OK(sla_values_scatter(p, SLA_FLOAT64, 1, csr, coo));
    assert_true(coo[2] == 8 && coo[5] == 8 && coo[0] == 6);
    assert_int_equal(sla_pattern_find(p, 1, 2), 3);
    assert_int_equal(sla_pattern_find(p, 2, 2), -1);
    sla_pattern_free(&p);
    assert_null(p);
}

static void coo_float32_batched(void **state)
{
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(3, 4, 6, R, C, &p));
    float coo[12], csr[10], back[12];
    for (int k = 0; k < 12; k++) coo[k] = (float)(k + 1);
    TU_OK(sla_values_gather(p, SLA_FLOAT32, 2, coo, csr));
    assert_true(csr[5 + 3] == coo[6 + 2] + coo[6 + 5]);
    TU_OK(sla_values_scatter(p, SLA_FLOAT32, 2, csr, back));
    assert_true(back[6 + 2] == csr[5 + 3] && back[6 + 5] == csr[5 + 3]);
    sla_pattern_free(&p);
}

static void coo_bad_indices(void **state)
{
    sla_pattern *p = (sla_pattern *)0x1;
    int64_t r[] = {0, 1, -3}, c[] = {0, 1, 0};
    assert_int_equal(sla_pattern_from_coo(2, 2, 3, r, c, &p), SLA_EINDEX);
    assert_null(p);
    assert_non_null(strstr(sla_last_error(), "row[2] = -3"));
    int64_t r2[] = {0, 1}, c2[] = {0, 2};
    assert_int_equal(sla_pattern_from_coo(2, 2, 2, r2, c2, &p), SLA_EINDEX);
    assert_non_null(strstr(sla_last_error(), "col[1] = 2"));
    assert_int_equal(sla_pattern_from_coo(2, (int64_t)1 << 32, 2, r2, c2, &p), SLA_EINDEX);
    assert_int_equal(sla_pattern_from_coo(-1, 2, 0, NULL, NULL, &p), SLA_EINVAL);
    assert_int_equal(sla_pattern_from_coo(2, 2, 2, NULL, c2, &p), SLA_EINVAL);
    /* inputs untouched */
    assert_int_equal(r[2], -3);
}

static void csr_validation_and_sorting(void **state)
{
    sla_pattern *p = NULL;
    int64_t rp[] = {0, 3, 3, 5}, ci[] = {2, 0, 2, 1, 0};
    TU_OK(sla_pattern_from_csr(3, 3, rp, ci, &p));
    assert_int_equal(sla_pattern_nnz(p), 4);          /* (0,2) repeated */
    const int32_t *c = sla_pattern_colind(p);
    assert_int_equal(c[0], 0); assert_int_equal(c[1], 2);
    assert_int_equal(c[2], 0); assert_int_equal(c[3], 1);
    assert_int_equal(sla_pattern_map(p)[0], 1);
    assert_int_equal(sla_pattern_map(p)[2], 1);
    assert_int_equal(sla_pattern_map_is_identity(p), 0);
    sla_pattern_free(&p);
    assert_int_equal(sla_pattern_map_is_identity(NULL), 0);
    int64_t bad_rp[] = {0, 3, 2, 5};
    assert_int_equal(sla_pattern_from_csr(3, 3, bad_rp, ci, &p), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "row 1"));
    int64_t rp1[] = {1, 3, 3, 5};
    assert_int_equal(sla_pattern_from_csr(3, 3, rp1, ci, &p), SLA_EINVAL);
    int64_t bad_ci[] = {2, 0, 2, 7, 0};
    assert_int_equal(sla_pattern_from_csr(3, 3, rp, bad_ci, &p), SLA_EINDEX);
    assert_non_null(strstr(sla_last_error(), "colind[3] = 7"));
}

/* Sorted unique CSR (the gallery's and most callers' input): built without sorting, its input
 * order is its CSR order; the map, built only when asked for, is the identity, and values
 * gather and scatter as copies. Every allocation failing in turn. */
static void csr_sorted_identity(void **state)
{
    (void)state;
    int64_t rp[] = {0, 2, 3, 5}, ci[] = {0, 2, 1, 0, 2};
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_csr(3, 3, rp, ci, &p));
    assert_int_equal(sla_pattern_nnz(p), 5);
    assert_int_equal(sla_pattern_nnz_input(p), 5);
    assert_false(sla_pattern_has_duplicates(p));
    assert_int_equal(sla_pattern_map_is_identity(p), 1);    /* known without the map */
    for (int k = 0; k < 5; k++) assert_int_equal(sla_pattern_colind(p)[k], ci[k]);
    for (int i = 0; i < 4; i++) assert_int_equal(sla_pattern_rowptr(p)[i], rp[i]);
    double in[5] = {1, -0.0, 3, 4, 5}, csr[5], back[5];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, in, csr));
    assert_memory_equal(in, csr, sizeof in);
    TU_OK(sla_values_scatter(p, SLA_FLOAT64, 1, csr, back));
    assert_memory_equal(in, back, sizeof in);
    const int64_t *map = sla_pattern_map(p);
    assert_non_null(map);
    for (int k = 0; k < 5; k++) assert_int_equal(map[k], k);
    assert_ptr_equal(sla_pattern_map(p), map);          /* built once */
    sla_pattern_free(&p);
    for (int64_t k = 0;; k++) {
        sla_test_fail_alloc_after(k);
        sla_status st = sla_pattern_from_csr(3, 3, rp, ci, &p);
        int64_t used = sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) { sla_pattern_free(&p); assert_true(k >= used); break; }
        assert_int_equal(st, SLA_ENOMEM);
        assert_null(p);
    }
}

static void empty_shapes(void **state)
{
    int64_t shapes[][2] = {{0, 5}, {5, 0}, {0, 0}, {4, 4}};
    for (int t = 0; t < 4; t++) {
        sla_pattern *p = NULL, *q = NULL;
        TU_OK(sla_pattern_from_coo(shapes[t][0], shapes[t][1], 0, NULL, NULL, &p));
        assert_int_equal(sla_pattern_nnz(p), 0);
        TU_OK(sla_pattern_transpose(p, &q, NULL));
        assert_int_equal(sla_pattern_nrows(q), shapes[t][1]);
        sla_pattern_stats st;
        TU_OK(sla_pattern_get_stats(p, &st));
        assert_int_equal(st.empty_rows, shapes[t][0]);
        assert_int_equal(st.empty_cols, shapes[t][1]);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, NULL);
        double nrm;
        TU_OK(sla_matrix_norm(&A, 'F', &nrm));
        assert_true(nrm == 0);
        sla_pattern_free(&p);
        sla_pattern_free(&q);
    }
}

static void transpose_permutation(void **state)
{
    sla_pattern *p = NULL, *t = NULL;
    TU_OK(sla_pattern_from_coo(3, 4, 6, R, C, &p));
    int64_t perm[5];
    TU_OK(sla_pattern_transpose(p, &t, perm));
    assert_int_equal(sla_pattern_nrows(t), 4);
    double v[5], vt[5], dense[12], denset[12];
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, V, v));
    for (int j = 0; j < 5; j++) vt[j] = v[perm[j]];
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v), At = sla_matrix_view(t, SLA_FLOAT64, 1, vt);
    TU_OK(sla_matrix_to_dense(&A, dense));
    TU_OK(sla_matrix_to_dense(&At, denset));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) assert_true(dense[i * 4 + j] == denset[j * 3 + i]);
    /* the cached transpose agrees, and transpose_values uses it */
    double vt2[5];
    TU_OK(sla_matrix_transpose_values(&A, vt2));
    assert_memory_equal(vt, vt2, sizeof vt);
    /* the transposed pattern's map sends A's slots to Aᵀ's */
    for (int s = 0; s < 5; s++) assert_int_equal(perm[sla_pattern_map(t)[s]], s);
    sla_pattern_free(&p);
    sla_pattern_free(&t);
}

static void properties(void **state)
{
    /* [[4, -1, 0], [-1, 4, 2], [0, 2.0000001, -3]] */
    int64_t r[] = {0, 0, 1, 1, 1, 2, 2}, c[] = {0, 1, 0, 1, 2, 1, 2};
    double v[] = {4, -1, -1, 4, 2, 2.0000001, -3}, csr[7];
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_from_coo(3, 3, 7, r, c, &p));
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, csr));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, csr);
    assert_true(sla_pattern_is_structurally_symmetric(p));
    int sym;
    TU_OK(sla_matrix_is_symmetric(&A, 0, 0, &sym));
    assert_false(sym);
    TU_OK(sla_matrix_is_symmetric(&A, 1e-6, 0, &sym));
    assert_true(sym);
    sla_diag_info di;
    TU_OK(sla_matrix_diag_info(&A, &di));
    assert_int_equal(di.present, 3);
    assert_int_equal(di.positive, 2);
    assert_int_equal(di.negative, 1);
    double nF, n1, nI, nM;
    TU_OK(sla_matrix_norm(&A, 'F', &nF));
    TU_OK(sla_matrix_norm(&A, '1', &n1));
    TU_OK(sla_matrix_norm(&A, 'I', &nI));
    TU_OK(sla_matrix_norm(&A, 'M', &nM));
    TU_CLOSE(nF, sqrt(16 + 1 + 1 + 16 + 4 + 4.0000004 + 9), 1e-12);
    TU_CLOSE(n1, 7.0000001, 1e-14);
    TU_CLOSE(nI, 7, 1e-14);
    TU_CLOSE(nM, 4, 0);
    assert_int_equal(sla_matrix_norm(&A, 'x', &nM), SLA_EINVAL);
    sla_pattern_stats st;
    TU_OK(sla_pattern_get_stats(p, &st));
    assert_int_equal(st.max_row_nnz, 3);
    assert_int_equal(st.min_row_nnz, 2);
    assert_int_equal(st.lower_bandwidth, 1);
    assert_int_equal(st.upper_bandwidth, 1);
    /* scaling and sums on one pattern */
    double rs[] = {1, 2, 3}, out[7], sum[7];
    TU_OK(sla_matrix_scale(&A, 2.0, rs, NULL, out));
    TU_CLOSE(out[6], 2 * 3 * -3.0, 0);
    sla_matrix B = sla_matrix_view(p, SLA_FLOAT64, 1, out);
    TU_OK(sla_matrix_add(1.0, &A, -0.5, &B, sum));
    TU_CLOSE(sum[0], 4 - 0.5 * 8, 0);
    /* dense round trip */
    double dense[9];
    TU_OK(sla_matrix_to_dense(&A, dense));
    sla_pattern *q = NULL;
    double *qv = NULL;
    TU_OK(sla_matrix_from_dense(3, 3, SLA_FLOAT64, 1, dense, 0.0, &q, (void **)&qv));
    assert_int_equal(sla_pattern_nnz(q), 7);
    assert_memory_equal(qv, csr, sizeof csr);
    free(qv);
    sla_pattern_free(&q);
    /* a non-finite value is reported with its position */
    csr[4] = NAN;
    assert_int_equal(sla_matrix_check(&A, 1), SLA_ENONFINITE);
    assert_non_null(strstr(sla_last_error(), "row 1, col 2"));
    sla_pattern_free(&p);
}

static void allocation_failures(void **state)
{
    /* every allocation failing in turn: an error, no partial object, no leak (ASan checks) */
    for (int64_t k = 0;; k++) {
        sla_pattern *p = NULL, *t = NULL;
        sla_test_fail_alloc_after(k);
        sla_status st = sla_pattern_from_coo(3, 4, 6, R, C, &p);
        if (st == SLA_OK) st = sla_pattern_transpose(p, &t, NULL);
        int64_t used = sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) { sla_pattern_free(&p); sla_pattern_free(&t); assert_true(k >= used); break; }
        assert_int_equal(st, SLA_ENOMEM);
        assert_null(t);
        sla_pattern_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(coo_duplicates_and_order),
        cmocka_unit_test(coo_float32_batched),
        cmocka_unit_test(coo_bad_indices),
        cmocka_unit_test(csr_validation_and_sorting),
        cmocka_unit_test(csr_sorted_identity),
        cmocka_unit_test(empty_shapes),
        cmocka_unit_test(transpose_permutation),
        cmocka_unit_test(properties),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(connected_components),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
