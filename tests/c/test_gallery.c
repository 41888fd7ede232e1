/* Gallery matrices: grid stencils against their definition entry by entry (CSR order, input
 * order = CSR order), graph Laplacians against a dense build, argument errors, every
 * allocation failing in turn. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* the stencil's value at (p, q) by its definition (row-major, last axis fastest) */
static double grid_entry(int nd, const int64_t *d, double diag, const double *lo,
                         const double *up, int64_t p, int64_t q)
{
    if (p == q) return diag;
    for (int a = 0; a < nd; a++) {
        int64_t stride = 1;
        for (int b = a + 1; b < nd; b++) stride *= d[b];
        int64_t ia = (p / stride) % d[a];
        if (q == p - stride && ia > 0) return lo[a];
        if (q == p + stride && ia < d[a] - 1) return up[a];
    }
    return 0;
}

static void grid_matches_definition(void **state)
{
    int64_t d[3] = {3, 4, 2};
    double lo[3] = {-1, -2, -3}, up[3] = {-4, -5, -6};
    sla_pattern *p = NULL;
    double *v = NULL;
    TU_OK(sla_gallery_grid(3, d, 9.0, lo, up, &p, &v));
    int64_t n = 24, count = 0;
    assert_int_equal(sla_pattern_nrows(p), n);
    assert_int_equal(sla_pattern_nnz(p), sla_pattern_nnz_input(p));
    const int64_t *rp = sla_pattern_rowptr(p), *map = sla_pattern_map(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t q = 0; q < n; q++) {
            double want = grid_entry(3, d, 9.0, lo, up, i, q);
            int64_t k = sla_pattern_find(p, i, q);
            if (want != 0) { assert_true(k >= 0 && v[k] == want); count++; }
            else assert_true(k < 0);
        }
    assert_int_equal(count, sla_pattern_nnz(p));
    for (int64_t k = 0; k < sla_pattern_nnz(p); k++) assert_int_equal(map[k], k);
    assert_true(rp[n] == count && ci[0] == 0);
    sla_pattern_free(&p);
    free(v);
}

static void laplacian_matches_dense(void **state)
{
    int64_t src[] = {0, 1, 2, 1, 3, 4}, dst[] = {1, 2, 0, 2, 3, 5};
    double w[] = {1, 2, 3, 0.5, 9, 1}, L[36] = {0};
    for (int e = 0; e < 6; e++) {
        if (src[e] == dst[e]) continue;
        L[src[e] * 6 + dst[e]] -= w[e];
        L[dst[e] * 6 + src[e]] -= w[e];
        L[src[e] * 7] += w[e];
        L[dst[e] * 7] += w[e];
    }
    for (int i = 0; i < 6; i++) L[i * 7] += 0.25;
    sla_pattern *p = NULL;
    double *v = NULL;
    TU_OK(sla_gallery_graph_laplacian(6, 6, src, dst, w, 0.25, &p, &v));
    assert_int_equal(sla_pattern_nnz(p), sla_pattern_nnz_input(p));
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            int64_t k = sla_pattern_find(p, i, j);
            assert_true(k >= 0 ? v[k] == L[i * 6 + j] : L[i * 6 + j] == 0);
        }
    assert_true(sla_pattern_find(p, 3, 3) >= 0);        /* an isolated node keeps its diagonal */
    sla_pattern_free(&p);
    free(v);
    int64_t bad[] = {0, 6};
    assert_int_equal(sla_gallery_graph_laplacian(6, 1, bad, bad + 1, NULL, 0, &p, &v), SLA_EINDEX);
    assert_non_null(strstr(sla_last_error(), "edge 0"));
    assert_null(p);
    assert_null(v);
}

static void grid_errors_and_allocations(void **state)
{
    int64_t d[2] = {5, 0}, big[2] = {70000, 70000};
    double w[2] = {-1, -1};
    sla_pattern *p = NULL;
    double *v = NULL;
    assert_int_equal(sla_gallery_grid(2, d, 4, w, w, &p, &v), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "dims[1]"));
    assert_int_equal(sla_gallery_grid(2, big, 4, w, w, &p, &v), SLA_EINVAL);
    assert_int_equal(sla_gallery_grid(0, d, 4, w, w, &p, &v), SLA_EINVAL);
    d[1] = 5;
    for (int64_t k = 0;; k++) {
        sla_test_fail_alloc_after(k);
        sla_status st = sla_gallery_grid(2, d, 4, w, w, &p, &v);
        sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) { sla_pattern_free(&p); free(v); break; }
        assert_int_equal(st, SLA_ENOMEM);
        assert_null(p);
        assert_null(v);
    }
    int64_t s[2] = {0, 1}, t[2] = {1, 2};
    for (int64_t k = 0;; k++) {
        sla_test_fail_alloc_after(k);
        sla_status st = sla_gallery_graph_laplacian(3, 2, s, t, NULL, 1, &p, &v);
        sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) { sla_pattern_free(&p); free(v); break; }
        assert_int_equal(st, SLA_ENOMEM);
        assert_null(p);
        assert_null(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grid_matches_definition),
        cmocka_unit_test(laplacian_matches_dense),
        cmocka_unit_test(grid_errors_and_allocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
