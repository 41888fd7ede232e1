/* MUMPS's error codes as sla statuses, and its work-array retry rule: shared by the sequential
 * real and complex backends (mumps.c, mumps_z.c) and by libsla_mpi's parallel MUMPS
 * (src/mpi/lu_logdet_mumps.c). Needs no MUMPS header, so it is compiled in every build. */
#include <math.h>

#include "direct/direct.h"

/* messages name the MUMPS call (routine), not this helper */
#define MUMPS_FAIL(status, ...) sla_error_set((status), routine, __VA_ARGS__)

/* Work arrays below this stay MUMPS's own: a huge page is 2 MiB of memory at its first touch,
 * which a batch of small solvers would pay per instance; the faults only matter for large S */
#define MUMPS_HUGE_MIN ((size_t)64 << 20)

sla_status sla_mumps_workspace(sla_mumps_ws *w, int info8, int icntl14, size_t entry_size,
                               int *lwk)
{
    double need = (info8 < 0 ? -1e6 * (double)info8 : (double)info8) *
                  (1 + (icntl14 > 0 ? icntl14 : 0) / 100.0) + 1;
    if (need > (double)INT32_MAX) need = 1e6 * ceil(need / 1e6);   /* LWK_USER in millions */
    if (need * (double)entry_size > (double)PTRDIFF_MAX / 2)
        return sla_error_set(SLA_ENOMEM, "sla_mumps_workspace", "MUMPS work array of %.0f "
                             "entries exceeds the address space", need);
    size_t bytes = (size_t)need * entry_size;
    if (bytes < MUMPS_HUGE_MIN) {          /* small: MUMPS allocates (WK_USER NULL, LWK 0) */
        sla_mumps_workspace_free(w);
        *lwk = 0;
        return SLA_OK;
    }
    *lwk = need > (double)INT32_MAX ? -(int)(need / 1e6) : (int)need;
    if (w->p && w->bytes >= bytes) return SLA_OK;
    sla_mumps_workspace_free(w);
    if (!(w->p = sla_huge_alloc(bytes, "MUMPS work array"))) return SLA_ENOMEM;
    w->bytes = bytes;
    sla_huge_prefault_start(&w->pf, w->p, w->bytes);
    return SLA_OK;
}

void sla_mumps_workspace_settle(sla_mumps_ws *w) { sla_huge_prefault_join(&w->pf); }

void sla_mumps_workspace_free(sla_mumps_ws *w)
{
    sla_huge_prefault_join(&w->pf);
    sla_huge_free(w->p, w->bytes);
    w->p = NULL;
    w->bytes = 0;
}

sla_status sla_mumps_error(const char *routine, int e, int i2, const char *phase)
{
    switch (e) {
    case -5: case -7: case -13:
        return MUMPS_FAIL(SLA_ENOMEM, "MUMPS %s: allocation failed (INFOG(1) = %d, size %d)", phase, e, i2);
    case -6:
        return MUMPS_FAIL(SLA_ESINGULAR, "MUMPS %s: the matrix is structurally singular "
                          "(structural rank %d)", phase, i2);
    case -8: case -9: case -14: case -15: case -11: case -12:
        return MUMPS_FAIL(SLA_ENOMEM, "MUMPS %s: internal work array too small (INFOG(1) = %d) "
                          "even after raising ICNTL(14)", phase, e);
    case -10:
        return MUMPS_FAIL(SLA_ESINGULAR, "MUMPS %s: the matrix is numerically singular (%d pivots "
                          "eliminated)", phase, i2);
    case -16:
        return MUMPS_FAIL(SLA_EINVAL, "MUMPS %s: n = %d out of range", phase, i2);
    case -19:
        return MUMPS_FAIL(SLA_ENOMEM, "MUMPS %s: memory limit ICNTL(23) too small", phase);
    case -50: case -51: case -52:
        return MUMPS_FAIL(SLA_EBACKEND, "MUMPS %s: the ordering library failed (INFOG(1) = %d, "
                          "INFOG(2) = %d)", phase, e, i2);
    default:
        return MUMPS_FAIL(SLA_EBACKEND, "MUMPS %s failed: INFOG(1) = %d, INFOG(2) = %d (see the "
                          "MUMPS user guide, section 'Error diagnostics')", phase, e, i2);
    }
}
#undef MUMPS_FAIL

int sla_mumps_retry_workspace(int infog1, int *icntl14)
{
    if (infog1 != -8 && infog1 != -9 && infog1 != -14 && infog1 != -15) return 0;
    *icntl14 = *icntl14 * 2 + 20;
    return 1;
}
