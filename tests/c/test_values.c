/* Value gather/scatter and elementwise updates (src/core/values.c) against overlapping arrays,
 * and matrix norms with non-finite entries (src/core/t_props.h). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "testutil.h"

static void expect_error(sla_status got, sla_status want, const char *phrase)
{
    if (got != want)
        fail_msg("status %d, expected %d; message: %s", (int)got, (int)want, sla_last_error());
    if (!strstr(sla_last_error(), phrase))
        fail_msg("message '%s' lacks '%s'", sla_last_error(), phrase);
}

/* 3 × 3 from six COO entries with duplicates: (0,0) twice, (2,2) twice */
static sla_pattern *dup_pattern(void)
{
    int64_t r[] = {2, 0, 1, 0, 2, 2}, c[] = {2, 0, 1, 0, 0, 2};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(3, 3, 6, r, c, &p));
    return p;
}

static void gather_scatter_aliasing(void **state)
{
    sla_pattern *p = dup_pattern();
    assert_int_equal(sla_pattern_nnz(p), 4);
    double v[6] = {1, 2, 3, 4, 5, 6}, keep[6], ref[4];
    memcpy(keep, v, sizeof v);
    TU_OK(sla_values_gather(p, SLA_FLOAT64, 1, v, ref));
    /* CSR order (0,0) (1,1) (2,0) (2,2): 2+4, 3, 5, 1+6 */
    double want[4] = {6, 3, 5, 7};
    assert_memory_equal(ref, want, sizeof want);
    /* in place: before the fix it returned OK with -0 -0 5 6 */
    expect_error(sla_values_gather(p, SLA_FLOAT64, 1, v, v), SLA_EINVAL,
                 "sla_values_gather: csr_values overlaps coo_values");
    assert_memory_equal(v, keep, sizeof v);
    expect_error(sla_values_gather(p, SLA_FLOAT64, 1, v, v + 2), SLA_EINVAL, "overlaps");
    assert_memory_equal(v, keep, sizeof v);
    /* scatter back: each duplicate gets its slot's value; in place refused */
    double coo[6];
    TU_OK(sla_values_scatter(p, SLA_FLOAT64, 1, ref, coo));
    double back[6] = {7, 6, 3, 6, 5, 7};
    assert_memory_equal(coo, back, sizeof back);
    double buf[8] = {6, 3, 5, 7, 0, 0, 0, 0};
    expect_error(sla_values_scatter(p, SLA_FLOAT64, 1, buf, buf + 1), SLA_EINVAL,
                 "sla_values_scatter: coo_values overlaps csr_values");
    /* float32 arrays: overlap measured in float32 bytes */
    float f[10] = {1, 2, 3, 4, 5, 6};
    expect_error(sla_values_gather(p, SLA_FLOAT32, 1, f, f + 5), SLA_EINVAL, "overlaps");
    TU_OK(sla_values_gather(p, SLA_FLOAT32, 1, f, f + 6));     /* adjacent, not overlapping */
    assert_true(f[6] == 6 && f[9] == 7);
    /* batch sizes overflowing int64 */
    expect_error(sla_values_gather(p, SLA_FLOAT64, INT64_MAX / 2, v, ref), SLA_EINVAL,
                 "sla_values_gather: coo_values");
    sla_pattern_free(&p);
}

static void elementwise_aliasing(void **state)
{
    int64_t r[] = {0, 1, 1}, c[] = {0, 0, 1};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(2, 2, 3, r, c, &p));
    double v[4] = {1, 2, 3, 99}, w[3] = {1, 1, 1};
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v), B = sla_matrix_view(p, SLA_FLOAT64, 1, w);
    /* exactly in place is allowed (documented); a shifted overlap is not */
    TU_OK(sla_matrix_scale(&A, 2, NULL, NULL, v));
    assert_true(v[0] == 2 && v[1] == 4 && v[2] == 6);
    expect_error(sla_matrix_scale(&A, 2, NULL, NULL, v + 1), SLA_EINVAL,
                 "sla_matrix_scale: out overlaps A->values");
    assert_true(v[1] == 4 && v[2] == 6 && v[3] == 99);
    double rs[2] = {1, 2}, big[6];
    expect_error(sla_matrix_scale(&A, 1, big + 2, NULL, big), SLA_EINVAL, "out overlaps row_scale");
    TU_OK(sla_matrix_scale(&A, 1, rs, NULL, big));
    assert_true(big[0] == 2 && big[1] == 8 && big[2] == 12);
    TU_OK(sla_matrix_add(1, &A, 1, &B, w));
    assert_true(w[0] == 3 && w[2] == 7);
    expect_error(sla_matrix_add(1, &A, 1, &B, v + 1), SLA_EINVAL, "sla_matrix_add: out overlaps A->values");
    expect_error(sla_matrix_transpose_values(&A, v), SLA_EINVAL,
                 "sla_matrix_transpose_values: out overlaps A->values");
    sla_pattern_free(&p);
}

static double norm_of(const sla_matrix *A, char which)
{
    double r = -1;
    TU_OK(sla_matrix_norm(A, which, &r));
    return r;
}

static void norms_nonfinite(void **state)
{
    int64_t r[] = {0, 1}, c[] = {0, 1};
    sla_pattern *p;
    TU_OK(sla_pattern_from_coo(2, 2, 2, r, c, &p));
    static const char which[] = {'F', '1', 'I', 'M'};
    double v[2];
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    /* diag(inf, −inf): the Frobenius norm was −nan before the fix */
    v[0] = INFINITY; v[1] = -INFINITY;
    for (int w = 0; w < 4; w++) assert_true(isinf(norm_of(&A, which[w])) && norm_of(&A, which[w]) > 0);
    v[0] = INFINITY; v[1] = 1;
    for (int w = 0; w < 4; w++) assert_true(norm_of(&A, which[w]) == INFINITY);
    v[0] = 1; v[1] = -INFINITY;
    for (int w = 0; w < 4; w++) assert_true(norm_of(&A, which[w]) == INFINITY);
    /* NaN wins over inf, in every norm (fmax used to drop it) */
    v[0] = NAN; v[1] = 1;
    for (int w = 0; w < 4; w++) assert_true(isnan(norm_of(&A, which[w])));
    v[0] = 2; v[1] = NAN;
    for (int w = 0; w < 4; w++) assert_true(isnan(norm_of(&A, which[w])));
    v[0] = NAN; v[1] = INFINITY;
    for (int w = 0; w < 4; w++) assert_true(isnan(norm_of(&A, which[w])));
    /* no overflow near the threshold */
    v[0] = 1e300; v[1] = -1e300;
    TU_CLOSE(norm_of(&A, 'F') / 1e300, sqrt(2.0), 1e-15);
    float f[2] = {3e38f, 3e38f};
    sla_matrix Af = sla_matrix_view(p, SLA_FLOAT32, 1, f);
    TU_CLOSE(norm_of(&Af, 'F') / 1e38, 3 * sqrt(2.0), 1e-6);
    f[0] = -INFINITY;
    assert_true(norm_of(&Af, 'F') == INFINITY);
    /* per batch element: only the element with the inf is inf */
    double vb[4] = {3, 4, INFINITY, 0};
    sla_matrix Ab = sla_matrix_view(p, SLA_FLOAT64, 2, vb);
    double nb[2];
    TU_OK(sla_matrix_norm(&Ab, 'F', nb));
    assert_true(nb[0] == 5 && nb[1] == INFINITY);
    sla_pattern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gather_scatter_aliasing),
        cmocka_unit_test(elementwise_aliasing),
        cmocka_unit_test(norms_nonfinite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
