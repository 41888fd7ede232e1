/* method = auto: the rules, in one place (placeholder until the auto-selection work lands).
 * Symmetric with a positive diagonal: try Cholesky, fall back to LDLᵀ then LU; otherwise LU. */
#include <stdio.h>

#include "solve/backend.h"

sla_status sla_auto_create(sla_solver *s)
{
    int sym = 0;
    sla_diag_info di;
    SLA_TRY(sla_matrix_is_symmetric(&s->A, 1e-12, 0, &sym));
    SLA_TRY(sla_matrix_diag_info(&s->A, &di));
    int posdiag = di.missing == 0 && di.negative == 0 && di.zero == 0;
    if (sym && posdiag) {
        sla_status st = sla_solver_create_with(s, SLA_METHOD_CHOLESKY);
        if (st == SLA_OK) {
            snprintf(s->why, sizeof s->why, "symmetric, positive diagonal, factorization succeeded");
            return st;
        }
        if (st != SLA_ENOTSPD) return st;
    }
    if (sym) {
        sla_status st = sla_solver_create_with(s, SLA_METHOD_LDLT);
        if (st == SLA_OK) {
            snprintf(s->why, sizeof s->why, "symmetric%s", posdiag ? ", Cholesky failed (not SPD)" : "");
            return st;
        }
        if (st != SLA_EUNSUPPORTED) return st;
    }
    snprintf(s->why, sizeof s->why, sym ? "symmetric, LDLᵀ unavailable" : "unsymmetric");
    return sla_solver_create_with(s, SLA_METHOD_LU);
}
