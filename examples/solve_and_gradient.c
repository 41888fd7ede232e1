/* A sparse solve and its gradient in C: x = A⁻¹ b for a 2D Poisson matrix, then the VJP of
 * L = Σ x_i with respect to b and to the values of A, checked against a finite difference.
 * Build: part of the CMake build (example_solve_and_gradient). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sla/sla.h>

#define CHECK(call) do { sla_status st_ = (call); if (st_ < 0) { \
    fprintf(stderr, "%s failed: %s\n", #call, sla_last_error()); return 1; } } while (0)

int main(void)
{
    /* 2D 5-point Poisson on a 30 × 30 grid, assembled from COO triplets in any order */
    const int64_t m = 30, n = m * m;
    int64_t *row = malloc(sizeof(int64_t) * 5 * n), *col = malloc(sizeof(int64_t) * 5 * n);
    double *coo = malloc(sizeof(double) * 5 * n);
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) {
            int64_t p = i * m + j;
            row[k] = p; col[k] = p; coo[k++] = 4;
            if (i > 0) { row[k] = p; col[k] = p - m; coo[k++] = -1; }
            if (i < m - 1) { row[k] = p; col[k] = p + m; coo[k++] = -1; }
            if (j > 0) { row[k] = p; col[k] = p - 1; coo[k++] = -1; }
            if (j < m - 1) { row[k] = p; col[k] = p + 1; coo[k++] = -1; }
        }
    sla_pattern *pattern = NULL;
    CHECK(sla_pattern_from_coo(n, n, k, row, col, &pattern));
    int64_t nnz = sla_pattern_nnz(pattern);
    double *values = malloc(sizeof(double) * nnz);
    CHECK(sla_values_gather(pattern, SLA_FLOAT64, 1, coo, values));   /* COO order -> CSR */
    sla_matrix A = sla_matrix_view(pattern, SLA_FLOAT64, 1, values);

    /* forward: method auto chooses and says why */
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    sla_solver *solver = NULL;
    sla_solve_info info;
    CHECK(sla_solver_create(&A, NULL, &solver));
    CHECK(sla_solver_solve(solver, SLA_OP_N, 1, b, x, &info));
    printf("solved with: %s\n", info.description);

    /* backward of L = Σ x_i: g = ∂L/∂x = 1; one transposed solve on the same solver */
    double *g = malloc(sizeof(double) * n), *db = malloc(sizeof(double) * n);
    double *dvalues = malloc(sizeof(double) * nnz);
    for (int64_t i = 0; i < n; i++) g[i] = 1;
    CHECK(sla_solver_solve_vjp(solver, SLA_OP_N, 1, x, g, db, dvalues, NULL));

    /* check ∂L/∂a_s for the first diagonal slot against a central difference */
    int64_t s = sla_pattern_find(pattern, 0, 0);
    double eps = 1e-4, L[2];   /* larger steps lose to truncation, smaller to rounding in Σx */
    for (int side = 0; side < 2; side++) {
        double *v2 = malloc(sizeof(double) * nnz), *x2 = malloc(sizeof(double) * n);
        for (int64_t q = 0; q < nnz; q++) v2[q] = values[q];
        v2[s] += side ? eps : -eps;
        sla_matrix A2 = sla_matrix_view(pattern, SLA_FLOAT64, 1, v2);
        sla_solver *s2 = NULL;
        CHECK(sla_solver_create(&A2, NULL, &s2));
        CHECK(sla_solver_solve(s2, SLA_OP_N, 1, b, x2, NULL));
        L[side] = 0;
        for (int64_t i = 0; i < n; i++) L[side] += x2[i];
        sla_solver_free(&s2);
        free(v2);
        free(x2);
    }
    double fd = (L[1] - L[0]) / (2 * eps);
    printf("dL/da(0,0): adjoint %.10f, finite difference %.10f (relative difference %.1e)\n",
           dvalues[s], fd, fabs(dvalues[s] - fd) / fabs(fd));

    int ok = fabs(dvalues[s] - fd) <= 1e-6 * fabs(fd);
    sla_solver_free(&solver);
    sla_pattern_free(&pattern);
    free(row); free(col); free(coo); free(values); free(b); free(x); free(g); free(db); free(dvalues);
    return ok ? 0 : 1;
}
