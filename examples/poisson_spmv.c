/* Example: build a 2D Poisson matrix from COO triplets, apply it with sla_spmv, then read a
 * Matrix Market file and describe it.
 *
 * Usage: example_poisson_spmv [matrix.mtx]   (default ../shared/matrices/west0479.mtx)
 *
 * The Poisson matrix is assembled the way finite-difference codes often do it: every grid node
 * adds one stencil contribution per direction, so each diagonal entry is given four times and
 * sla sums the duplicates into one CSR slot. With Dirichlet boundaries the row sums of A are 0
 * in the interior and equal to the number of missing neighbours on the boundary, which A·1
 * checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sla/sla.h"

#define GRID 100

static int fail(const char *what)
{
    fprintf(stderr, "error while %s: %s\n", what, sla_last_error());
    return 1;
}

/* Adds triplets of node i for direction (dx, dy): +1 on the diagonal, and −1 towards the
 * neighbour when it exists. */
static void add_direction(int64_t gx, int64_t gy, int dx, int dy, int64_t *row, int64_t *col,
                          double *val, int64_t *k)
{
    int64_t i = gy * GRID + gx, nx = gx + dx, ny = gy + dy;
    row[*k] = i; col[*k] = i; val[(*k)++] = 1.0;
    if (nx >= 0 && nx < GRID && ny >= 0 && ny < GRID) {
        row[*k] = i; col[*k] = ny * GRID + nx; val[(*k)++] = -1.0;
    }
}

/* 5-point Poisson on GRID × GRID nodes, from COO with duplicate diagonal entries. */
static sla_status assemble_poisson(sla_pattern **p, double **values)
{
    const int dirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    int64_t cap = 8 * (int64_t)GRID * GRID, k = 0;
    int64_t *row = malloc(sizeof *row * (size_t)cap), *col = malloc(sizeof *col * (size_t)cap);
    double *val = malloc(sizeof *val * (size_t)cap);
    sla_status st = row && col && val ? SLA_OK : SLA_ENOMEM;
    for (int64_t gy = 0; gy < GRID && st == SLA_OK; gy++)
        for (int64_t gx = 0; gx < GRID; gx++)
            for (int d = 0; d < 4; d++)
                add_direction(gx, gy, dirs[d][0], dirs[d][1], row, col, val, &k);
    int64_t n = (int64_t)GRID * GRID;
    if (st == SLA_OK) st = sla_pattern_from_coo(n, n, k, row, col, p);
    if (st == SLA_OK) {
        *values = malloc(sizeof **values * (size_t)sla_pattern_nnz(*p));
        st = *values ? sla_values_gather(*p, SLA_FLOAT64, 1, val, *values) : SLA_ENOMEM;
    }
    free(row); free(col); free(val);
    return st;
}

/* Number of grid neighbours of node i that lie outside the grid. */
static int missing_neighbours(int64_t i)
{
    int64_t gx = i % GRID, gy = i / GRID;
    return (gx == 0) + (gx == GRID - 1) + (gy == 0) + (gy == GRID - 1);
}

static int poisson_demo(void)
{
    sla_pattern *p = NULL;
    double *values = NULL;
    if (assemble_poisson(&p, &values) != SLA_OK) return fail("assembling the Poisson matrix");
    int64_t n = sla_pattern_nrows(p), interior = 0, boundary = 0, wrong = 0;
    double *ones = malloc(sizeof *ones * (size_t)n), *y = malloc(sizeof *y * (size_t)n);
    for (int64_t i = 0; i < n; i++) ones[i] = 1.0;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, values);
    if (sla_spmv(SLA_OP_N, 1.0, &A, ones, 0, 1, 0.0, y) != SLA_OK) return fail("applying A");
    for (int64_t i = 0; i < n; i++) {
        int miss = missing_neighbours(i);
        if (miss == 0) interior += y[i] == 0.0;
        else boundary += y[i] > 0.0;
        wrong += y[i] != (double)miss;
    }
    printf("2D Poisson, %d x %d grid: n = %lld, %lld COO triplets summed into nnz = %lld\n", GRID,
           GRID, (long long)n, (long long)sla_pattern_nnz_input(p), (long long)sla_pattern_nnz(p));
    printf("  A*1: %lld interior rows sum to 0, %lld boundary rows are positive, %lld wrong: %s\n",
           (long long)interior, (long long)boundary, (long long)wrong, wrong ? "FAILED" : "ok");
    free(ones); free(y); free(values);
    sla_pattern_free(&p);
    return wrong != 0;
}

static const char *field_name(sla_mm_field f)
{
    const char *names[] = {"real", "integer", "pattern", "complex"};
    return f >= SLA_MM_REAL && f <= SLA_MM_COMPLEX ? names[f] : "?";
}

static const char *symmetry_name(sla_mm_symmetry s)
{
    const char *names[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
    return s >= SLA_MM_GENERAL && s <= SLA_MM_HERMITIAN ? names[s] : "?";
}

static void print_structure(const sla_pattern *p)
{
    sla_pattern_stats st;
    if (sla_pattern_get_stats(p, &st) != SLA_OK) return;
    int64_t m = sla_pattern_nrows(p), n = sla_pattern_ncols(p), nnz = sla_pattern_nnz(p);
    double density = m && n ? 100.0 * (double)nnz / ((double)m * (double)n) : 0.0;
    printf("  shape         %lld x %lld, nnz %lld (from %lld entries after symmetric expansion), "
           "density %.3g%%\n", (long long)m, (long long)n, (long long)nnz,
           (long long)sla_pattern_nnz_input(p), density);
    printf("  rows          nnz per row min %lld, max %lld, mean %.2f, std %.2f; empty rows %lld, "
           "empty columns %lld\n", (long long)st.min_row_nnz, (long long)st.max_row_nnz,
           st.mean_row_nnz, st.std_row_nnz, (long long)st.empty_rows, (long long)st.empty_cols);
    printf("  bandwidth     lower %lld, upper %lld\n", (long long)st.lower_bandwidth,
           (long long)st.upper_bandwidth);
    printf("  structurally symmetric: %s\n",
           sla_pattern_is_structurally_symmetric(p) ? "yes" : "no");
}

static void print_values(const sla_matrix *A)
{
    int sym = 0;
    sla_diag_info d;
    double nF, n1, nI, nM;
    if (sla_matrix_is_symmetric(A, 1e-12, 0.0, &sym) || sla_matrix_diag_info(A, &d) ||
        sla_matrix_norm(A, 'F', &nF) || sla_matrix_norm(A, '1', &n1) ||
        sla_matrix_norm(A, 'I', &nI) || sla_matrix_norm(A, 'M', &nM)) {
        fail("computing properties");
        return;
    }
    printf("  numerically symmetric (rtol 1e-12): %s\n", sym ? "yes" : "no");
    printf("  diagonal      %lld stored, %lld missing; %lld positive, %lld negative, %lld zero\n",
           (long long)d.present, (long long)d.missing, (long long)d.positive,
           (long long)d.negative, (long long)d.zero);
    printf("  norms         Frobenius %.6g, 1-norm %.6g, inf-norm %.6g, max |a_ij| %.6g\n", nF, n1,
           nI, nM);
}

/* ‖A·1‖₂ and ‖Aᵀ·1‖₂: row and column sums through both SpMV kernels. */
static void print_sums(const sla_matrix *A)
{
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    int64_t len = m > n ? m : n;
    double *ones = malloc(sizeof *ones * (size_t)(len + 1));
    double *y = malloc(sizeof *y * (size_t)(len + 1));
    for (int64_t i = 0; i < len; i++) ones[i] = 1.0;
    double rs = 0, cs = 0;
    if (sla_spmv(SLA_OP_N, 1.0, A, ones, 0, 1, 0.0, y) == SLA_OK)
        for (int64_t i = 0; i < m; i++) rs += y[i] * y[i];
    if (sla_spmv(SLA_OP_T, 1.0, A, ones, 0, 1, 0.0, y) == SLA_OK)
        for (int64_t j = 0; j < n; j++) cs += y[j] * y[j];
    printf("  sums          ||A*1||_2 = %.6g (row sums), ||A^T*1||_2 = %.6g (column sums)\n",
           sqrt(rs), sqrt(cs));
    free(ones); free(y);
}

static int describe(const char *path)
{
    sla_pattern *p = NULL;
    void *values = NULL;
    sla_mm_field field;
    sla_mm_symmetry symmetry;
    if (sla_mm_read_matrix(path, SLA_FLOAT64, &p, &values, &field, &symmetry) != SLA_OK)
        return fail("reading the matrix");
    printf("\n%s (Matrix Market: %s %s)\n", path, field_name(field), symmetry_name(symmetry));
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, values);
    print_structure(p);
    print_values(&A);
    print_sums(&A);
    free(values);
    sla_pattern_free(&p);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = poisson_demo();
    return rc | describe(argc > 1 ? argv[1] : "../shared/matrices/west0479.mtx");
}
