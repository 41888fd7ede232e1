/* sla_pattern_borrow_csr: a pattern on the caller's CSR arrays. It uses the arrays where they
 * lie (pointer equality), solves to the same bits as the copying sla_pattern_from_csr, reports
 * its last reference through release(owner) exactly once (after the solver holding it is gone),
 * refuses bad input with a status and a message naming the index, and never writes its inputs. */
#include <stdlib.h>
#include <string.h>

#include "ktest.h"

/* the caller's arrays of a matrix: int64 and int32 row pointers, int32 and int64 columns */
typedef struct csr {
    int64_t n, nnz;
    int64_t *rp64, *ci64;
    int32_t *rp32, *ci32;
    double *v;
} csr;

static csr grid_csr(int64_t nx)
{
    sla_pattern *p;
    csr c;
    tu_poisson2d(nx, nx, &p, &c.v);
    c.n = sla_pattern_nrows(p);
    c.nnz = sla_pattern_nnz(p);
    c.rp64 = malloc(sizeof(int64_t) * (size_t)(c.n + 1));
    c.rp32 = malloc(sizeof(int32_t) * (size_t)(c.n + 1));
    c.ci64 = malloc(sizeof(int64_t) * (size_t)c.nnz);
    c.ci32 = malloc(sizeof(int32_t) * (size_t)c.nnz);
    for (int64_t i = 0; i <= c.n; i++) c.rp32[i] = (int32_t)(c.rp64[i] = sla_pattern_rowptr(p)[i]);
    for (int64_t k = 0; k < c.nnz; k++) c.ci64[k] = c.ci32[k] = sla_pattern_colind(p)[k];
    sla_pattern_free(&p);
    return c;
}

static void csr_free(csr *c)
{
    free(c->rp64); free(c->rp32); free(c->ci64); free(c->ci32); free(c->v);
}

/* the last error contains s (printed when it does not) */
#define ERR_CONTAINS(s) do { if (!strstr(sla_last_error(), (s))) \
    fail_msg("message \"%s\" lacks \"%s\"", sla_last_error(), (s)); } while (0)

static int released;
static void count_release(void *owner) { released += *(int *)owner; }

/* CG + Jacobi on pattern p with the caller's values: x (caller frees), iterations */
static double *solve_cg_jacobi(sla_pattern *p, const double *v, int keep_pattern_ref, int *iters)
{
    int64_t n = sla_pattern_nrows(p);
    int released_before = released;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o = kt_options(SLA_METHOD_CG, SLA_PRECOND_JACOBI, 1e-10);
    sla_solver *s = NULL;
    TU_OK(sla_solver_create(&A, &o, &s));
    if (!keep_pattern_ref) sla_pattern_free(&p);        /* the solver holds it now */
    double *b = kt_ones(n), *x = calloc((size_t)n, sizeof(double));
    sla_solve_info info;
    TU_OK(sla_solver_solve(s, SLA_OP_N, 1, b, x, &info));
    assert_true(info.converged);
    assert_true(kt_residual(&A, 0, SLA_OP_N, x, b) <= 1e-9 * sqrt((double)n));
    *iters = info.iterations;
    assert_int_equal(released, released_before);   /* not before the solver lets go */
    sla_solver_free(&s);
    free(b);
    return x;
}

/* borrowed (int64 and int32 row pointers) and copied patterns: the same structure, the same
 * solution bits; the borrowed arrays are the pattern's own; release once, at the last free */
static void solve_equals_copy(void **state)
{
    csr c = grid_csr(60);
    int one = 1, it_copy, it_borrow, it_32;
    sla_pattern *pc = NULL, *pb = NULL, *p32 = NULL;
    TU_OK(sla_pattern_from_csr(c.n, c.n, c.rp64, c.ci64, &pc));
    TU_OK(sla_pattern_borrow_csr(c.n, c.n, c.rp64, NULL, c.ci32, count_release, &one, &pb));
    TU_OK(sla_pattern_borrow_csr(c.n, c.n, NULL, c.rp32, c.ci32, NULL, NULL, &p32));
    assert_ptr_equal(sla_pattern_colind(pb), c.ci32);
    assert_ptr_equal(sla_pattern_rowptr(pb), c.rp64);
    assert_ptr_equal(sla_pattern_colind(p32), c.ci32);
    assert_ptr_not_equal(sla_pattern_rowptr(p32), c.rp64);     /* widened into its own */
    assert_true(sla_pattern_map_is_identity(pb) && !sla_pattern_has_duplicates(pb));
    assert_int_equal(sla_pattern_nnz(pb), c.nnz);
    assert_int_equal(sla_pattern_nnz_input(pb), c.nnz);
    assert_memory_equal(sla_pattern_rowptr(p32), c.rp64, sizeof(int64_t) * (size_t)(c.n + 1));
    assert_memory_equal(sla_pattern_colind(pc), c.ci32, sizeof(int32_t) * (size_t)c.nnz);
    /* int32 row pointers are read during the call only (sla.h): the caller may reuse them */
    memset(c.rp32, 0xff, sizeof(int32_t) * (size_t)(c.n + 1));

    released = 0;
    double *xc = solve_cg_jacobi(pc, c.v, 1, &it_copy);
    double *xb = solve_cg_jacobi(pb, c.v, 0, &it_borrow);   /* drops our reference inside */
    assert_int_equal(released, 1);
    double *x32 = solve_cg_jacobi(p32, c.v, 0, &it_32);
    assert_int_equal(released, 1);
    assert_int_equal(it_copy, it_borrow);
    assert_int_equal(it_copy, it_32);
    assert_memory_equal(xc, xb, sizeof(double) * (size_t)c.n);
    assert_memory_equal(xc, x32, sizeof(double) * (size_t)c.n);

    /* a cached transpose (Aᵀ x) on a borrowed pattern */
    pb = NULL;
    TU_OK(sla_pattern_borrow_csr(c.n, c.n, c.rp64, NULL, c.ci32, count_release, &one, &pb));
    sla_matrix Ab = sla_matrix_view(pb, SLA_FLOAT64, 1, c.v), Ac = sla_matrix_view(pc, SLA_FLOAT64, 1, c.v);
    double *yb = calloc((size_t)c.n, sizeof(double)), *yc = calloc((size_t)c.n, sizeof(double));
    TU_OK(sla_spmv(SLA_OP_T, 1.0, &Ab, xb, 0, 1, 0.0, yb));
    TU_OK(sla_spmv(SLA_OP_T, 1.0, &Ac, xb, 0, 1, 0.0, yc));
    assert_memory_equal(yb, yc, sizeof(double) * (size_t)c.n);
    sla_pattern_retain(pb);
    sla_pattern *pb2 = pb;
    sla_pattern_free(&pb);
    assert_int_equal(released, 1);
    sla_pattern_free(&pb2);
    assert_int_equal(released, 2);

    sla_pattern_free(&pc);
    free(xc); free(xb); free(x32); free(yb); free(yc);
    csr_free(&c);
}

/* one refused call: the status, a message naming what is wrong, no pattern, no release, and
 * the inputs as they were */
static void refused(int64_t nrows, int64_t ncols, const int64_t *rp, const int32_t *rp32,
                    const int32_t *ci, int64_t nnz, sla_status want, const char *says)
{
    int64_t rp_before[8];
    int32_t rp32_before[8], ci_before[16];
    if (rp) memcpy(rp_before, rp, sizeof(int64_t) * (size_t)(nrows + 1));
    if (rp32) memcpy(rp32_before, rp32, sizeof(int32_t) * (size_t)(nrows + 1));
    if (ci) memcpy(ci_before, ci, sizeof(int32_t) * (size_t)nnz);
    int one = 1;
    released = 0;
    sla_pattern *p = (sla_pattern *)&one;
    assert_int_equal(sla_pattern_borrow_csr(nrows, ncols, rp, rp32, ci, count_release, &one, &p),
                     want);
    assert_null(p);
    assert_int_equal(released, 0);
    ERR_CONTAINS("sla_pattern_borrow_csr");
    ERR_CONTAINS(says);
    if (rp) assert_memory_equal(rp_before, rp, sizeof(int64_t) * (size_t)(nrows + 1));
    if (rp32) assert_memory_equal(rp32_before, rp32, sizeof(int32_t) * (size_t)(nrows + 1));
    if (ci) assert_memory_equal(ci_before, ci, sizeof(int32_t) * (size_t)nnz);
}

static void bad_input(void **state)
{
    /* 3 × 4: rows {0, 2}, {1}, {3} */
    const int64_t rp[] = {0, 2, 3, 4};
    const int32_t rp32[] = {0, 2, 3, 4}, ci[] = {0, 2, 1, 3};
    const int64_t rp_first[] = {1, 2, 3, 4}, rp_down[] = {0, 2, 1, 4};
    const int32_t rp32_down[] = {0, 3, 2, 4};
    const int32_t ci_high[] = {0, 2, 1, 4}, ci_neg[] = {0, 2, -1, 3}, ci_unsorted[] = {2, 0, 1, 3},
                  ci_repeat[] = {2, 2, 1, 3};
    refused(3, 4, rp_first, NULL, ci, 4, SLA_EINVAL, "rowptr[0] = 1");
    refused(3, 4, rp_down, NULL, ci, 4, SLA_EINVAL, "rowptr decreases at row 1 (rowptr[1] = 2 > rowptr[2] = 1)");
    refused(3, 4, NULL, rp32_down, ci, 4, SLA_EINVAL, "rowptr decreases at row 1");
    refused(3, 4, rp, NULL, ci_high, 4, SLA_EINDEX, "colind[3] = 4 is out of range [0, 4)");
    refused(3, 4, NULL, rp32, ci_neg, 4, SLA_EINDEX, "colind[2] = -1 is out of range [0, 4)");
    refused(3, 4, rp, NULL, ci_unsorted, 4, SLA_EINVAL, "colind[1] = 0 follows 2 in row 0");
    refused(3, 4, rp, NULL, ci_repeat, 4, SLA_EINVAL, "colind[1] = 2 follows 2 in row 0");
    refused(3, 4, NULL, NULL, ci, 4, SLA_EINVAL, "rowptr and rowptr32 are both NULL");
    refused(3, 4, rp, rp32, ci, 4, SLA_EINVAL, "both given");
    refused(3, 4, rp, NULL, NULL, 0, SLA_EINVAL, "colind is NULL with 4 entries");
    refused(-1, 4, rp, NULL, ci, 4, SLA_EINVAL, "negative shape");
    refused(3, (int64_t)INT32_MAX + 1, rp, NULL, ci, 4, SLA_EINDEX, "int32");
    assert_int_equal(sla_pattern_borrow_csr(3, 4, rp, NULL, ci, NULL, NULL, NULL), SLA_EINVAL);

    /* empty shapes and no entries */
    const int64_t zero[] = {0, 0, 0};
    sla_pattern *p = NULL;
    TU_OK(sla_pattern_borrow_csr(0, 0, zero, NULL, NULL, NULL, NULL, &p));
    assert_int_equal(sla_pattern_nrows(p), 0);
    sla_pattern_free(&p);
    TU_OK(sla_pattern_borrow_csr(2, 5, zero, NULL, NULL, NULL, NULL, &p));
    assert_int_equal(sla_pattern_nnz(p), 0);
    assert_int_equal(sla_pattern_find(p, 1, 3), -1);
    sla_pattern_free(&p);
}

/* every allocation failing in turn: SLA_ENOMEM, no pattern, release never called */
static void allocation_failures(void **state)
{
    const int32_t rp32[] = {0, 2, 3, 4}, ci[] = {0, 2, 1, 3};
    int one = 1;
    for (int64_t k = 0; k < 2; k++) {
        released = 0;
        sla_pattern *p = NULL;
        sla_test_fail_alloc_after(k);
        sla_status st = sla_pattern_borrow_csr(3, 4, NULL, rp32, ci, count_release, &one, &p);
        sla_test_fail_alloc_after(-1);
        assert_int_equal(st, SLA_ENOMEM);
        assert_null(p);
        assert_int_equal(released, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(solve_equals_copy),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
