/* Placeholder until the SpMV work lands: the pattern primitive. */
#include "core/internal.h"

sla_status sla_pattern_outer_add(const sla_pattern *p, sla_dtype dtype, int64_t batch, double alpha,
                                 const void *u, int u_batched, const void *v, int v_batched,
                                 int64_t k, void *dvalues)
{
    return SLA_FAIL(SLA_EUNSUPPORTED, "not implemented yet");
}
