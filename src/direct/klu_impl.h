/* What klu.c shares with klu_z.c (the complex hooks of the KLU backend): the symbolic analysis,
 * which depends on the pattern only, and KLU's parameters. Private to src/direct. */
#ifndef SLA_DIRECT_KLU_IMPL_H
#define SLA_DIRECT_KLU_IMPL_H

#include <klu.h>

#include "direct/direct.h"

/** klu_l_analyze (natural: _given; METIS: KLU's user ordering hook) of the CSR arrays of s->A
 *  (= the CSC arrays of Aᵀ), ai the column indices as int64; common is updated with the
 *  ordering used. @return SLA_OK, SLA_ENOMEM, SLA_EBACKEND, SLA_EUNSUPPORTED (no METIS). */
sla_status sla_klu_analyze_pattern(const sla_solver *s, const int64_t *ai, klu_l_common *common,
                                   klu_l_symbolic **out);

/** KLU's defaults with singular factors kept (halt_if_singular = 0). */
void sla_klu_common_defaults(klu_l_common *common);

/** The hooks of method klu for complex dtypes (klu_z.c: klu_zl_*); klu.c calls them when
 *  s->dtype is complex. logdet's sign is [batch][2] (a phase). */
sla_status sla_klu_z_create(sla_solver *s);
sla_status sla_klu_z_refactor(sla_solver *s);
sla_status sla_klu_z_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                           const sla_solve_params *p, sla_solve_info *info);
sla_status sla_klu_z_logdet(sla_solver *s, double *sign, double *logabsdet);
sla_status sla_klu_z_logdet_grad(sla_solver *s, const double *g, void *dvalues);
void sla_klu_z_destroy(sla_solver *s);

#endif
