/* Symbolic analyses that method = auto decides from: AMD's cost of a pattern, and the analysis
 * handed from auto to the backend it chose (see direct.h). */
#include <amd.h>

#include "direct/direct.h"

sla_analysis *sla_analysis_new(const sla_backend *b, size_t state_size,
                               void (*free_state)(void *state))
{
    sla_analysis *a = sla_calloc(1, sizeof *a, "analysis");
    void *state = sla_calloc(1, state_size, "analysis state");
    if (!a || !state) { sla_free(a); sla_free(state); return NULL; }
    a->backend = b;
    a->state = state;
    a->free_state = free_state;
    return a;
}

void sla_analysis_free(sla_analysis **a)
{
    if (!a || !*a) return;
    if ((*a)->free_state && (*a)->state) (*a)->free_state((*a)->state);
    sla_free(*a);
    *a = NULL;
}

void *sla_analysis_take(sla_solver *s, const sla_backend *b)
{
    if (!s->analysis || s->analysis->backend != b) return NULL;
    void *state = s->analysis->state;
    s->analysis->state = NULL;
    sla_analysis_free(&s->analysis);
    return state;
}

sla_status sla_amd_cost(int64_t n, const int64_t *rowptr, const int64_t *colind, double *nnz_L,
                        double *flops)
{
    int64_t *perm = sla_malloc((size_t)n, sizeof *perm, "AMD ordering");
    if (!perm) return SLA_ENOMEM;
    double info[AMD_INFO];
    /* NULL control: AMD's defaults (dense rows > 10·√n, aggressive absorption), as in CHOLMOD */
    int st = amd_l_order(n, rowptr, colind, perm, NULL, info);
    sla_free(perm);
    if (st == AMD_OUT_OF_MEMORY) return SLA_FAIL(SLA_ENOMEM, "AMD ran out of memory");
    if (st != AMD_OK && st != AMD_OK_BUT_JUMBLED)
        return SLA_FAIL(SLA_EBACKEND, "amd_l_order refused the pattern (status %d)", st);
    /* AMD_LNZ excludes the diagonal; a division and a multiply-subtract pair per update is the
     * flop count CHOLMOD reports (checked: equal on 2D Poisson) */
    if (nnz_L) *nnz_L = info[AMD_LNZ] + (double)n;
    if (flops) *flops = info[AMD_NDIV] + 2 * info[AMD_NMULTSUBS_LDL];
    return SLA_OK;
}
