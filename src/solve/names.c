/* Names of methods, preconditioners, orderings and reasons, both ways. */
#include <string.h>
#include <strings.h>

#include "core/internal.h"

static const char *const method_names[SLA_METHOD_COUNT] = {
    "auto", "cholesky", "ldlt", "lu", "klu", "cg", "bicgstab", "gmres", "minres", "lsqr", "cocg"};
static const char *const precond_names[SLA_PRECOND_COUNT] = {
    "auto", "none", "jacobi", "ic0", "ilu0", "amg", "user"};
static const char *const ordering_names[SLA_ORDERING_COUNT] = {"auto", "natural", "amd", "metis"};
static const char *const reason_names[SLA_REASON_COUNT] = {
    "converged", "max iterations", "breakdown", "indefinite", "non-finite", "stagnation", "error"};

static const char *name_of(const char *const *names, int count, int v)
{
    return v >= 0 && v < count ? names[v] : "invalid";
}

static sla_status lookup(const char *func, const char *what, const char *const *names, int count,
                         const char *name, int *out)
{
    if (!name || !out) return sla_error_set(SLA_EINVAL, func, "NULL argument");
    for (int i = 0; i < count; i++)
        if (strcasecmp(name, names[i]) == 0) { *out = i; return SLA_OK; }
    char list[256] = "";
    for (int i = 0; i < count; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < count) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return sla_error_set(SLA_EINVAL, func, "unknown %s '%s' (expected one of: %s)", what, name, list);
}

const char *sla_method_name(sla_method m) { return name_of(method_names, SLA_METHOD_COUNT, (int)m); }
const char *sla_precond_name(sla_precond p) { return name_of(precond_names, SLA_PRECOND_COUNT, (int)p); }
const char *sla_ordering_name(sla_ordering o) { return name_of(ordering_names, SLA_ORDERING_COUNT, (int)o); }
const char *sla_reason_name(sla_reason r) { return name_of(reason_names, SLA_REASON_COUNT, (int)r); }

sla_status sla_method_from_name(const char *name, sla_method *m)
{
    int v = 0;
    SLA_TRY(lookup(__func__, "method", method_names, SLA_METHOD_COUNT, name, &v));
    *m = (sla_method)v;
    return SLA_OK;
}

sla_status sla_precond_from_name(const char *name, sla_precond *p)
{
    int v = 0;
    SLA_TRY(lookup(__func__, "preconditioner", precond_names, SLA_PRECOND_COUNT, name, &v));
    *p = (sla_precond)v;
    return SLA_OK;
}

sla_status sla_ordering_from_name(const char *name, sla_ordering *o)
{
    int v = 0;
    SLA_TRY(lookup(__func__, "ordering", ordering_names, SLA_ORDERING_COUNT, name, &v));
    *o = (sla_ordering)v;
    return SLA_OK;
}

int sla_method_is_iterative(sla_method m)
{
    return m == SLA_METHOD_CG || m == SLA_METHOD_BICGSTAB || m == SLA_METHOD_GMRES ||
           m == SLA_METHOD_MINRES || m == SLA_METHOD_LSQR || m == SLA_METHOD_COCG;
}
