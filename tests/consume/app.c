/* A program that uses the installed sla, built by the consume.* tests: once with
 * `pkg-config --cflags --libs sla`, once with CMake's find_package(sla). It solves the README's
 * 3 × 3 example and checks x against the closed form; exit 0 on success. */
#include <math.h>
#include <stdio.h>

#include <sla/backend.h>   /* installed too: the backend tier (includes sla/sla.h) */

int main(void)
{
    /* tridiag(-1, 4, -1), entries given in any order */
    int64_t row[] = {0, 1, 2, 0, 1, 1, 2}, col[] = {0, 1, 2, 1, 0, 2, 1};
    double coo[] = {4, 4, 4, -1, -1, -1, -1}, csr[7], b[3] = {1, 2, 3}, x[3];
    sla_pattern *p = NULL;
    sla_solver *s = NULL;
    int ok = sla_pattern_from_coo(3, 3, 7, row, col, &p) == SLA_OK &&
             sla_values_gather(p, SLA_FLOAT64, 1, coo, csr) == SLA_OK;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, csr);
    ok = ok && sla_solver_create(&A, NULL, &s) == SLA_OK &&
         sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL) == SLA_OK;
    /* x = (13/28, 6/7, 27/28): 4·13/28 − 24/28 = 1, −13/28 + 96/28 − 27/28 = 2,
     * −24/28 + 108/28 = 3 */
    double want[3] = {13.0 / 28, 6.0 / 7, 27.0 / 28};
    for (int i = 0; ok && i < 3; i++) ok = fabs(x[i] - want[i]) < 1e-14;
    /* the same system by libsla's CG on the exported CSR operator */
    sla_csr_operator c;
    sla_krylov_params P = {.rtol = 1e-14, .maxiter = 10, .monitor_every = 1};
    sla_krylov_result res;
    double y[3];
    sla_csr_operator_init(&c, &A, 0, 1, 0, 1);
    ok = ok && sla_krylov_run(SLA_METHOD_CG, &c.op, SLA_OP_N, &P, b, y, &res) == SLA_OK &&
         res.reason == SLA_REASON_CONVERGED;
    for (int i = 0; ok && i < 3; i++) ok = fabs(y[i] - want[i]) < 1e-14;
    printf("sla %s: %s\n", sla_version(), ok ? "ok" : sla_last_error());
    sla_solver_free(&s);
    sla_pattern_free(&p);
    return ok ? 0 : 1;
}
