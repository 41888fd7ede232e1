/* The backend registry: every backend by name and priority, compiled in or not (a backend that
 * is not compiled in stays listed with the reason). */
#include <strings.h>

#include "solve/backend.h"

static const sla_backend *const registry[] = {
    &sla_backend_cholmod, &sla_backend_mumps, &sla_backend_umfpack, &sla_backend_klu,
    &sla_backend_krylov,
};
#define NREG ((int64_t)(sizeof registry / sizeof registry[0]))

int64_t sla_backend_count(void) { return NREG; }

sla_status sla_backend_get(int64_t i, sla_backend_info *info)
{
    SLA_CHECK_ARG(info, "info is NULL");
    SLA_CHECK_ARG(i >= 0 && i < NREG, "backend index %lld out of range [0, %lld)", (long long)i,
                  (long long)NREG);
    *info = registry[i]->info;
    return SLA_OK;
}

const sla_backend *sla_backend_find(sla_method method, sla_dtype dtype, const char *name)
{
    int any = !name || !*name || strcasecmp(name, "auto") == 0;
    const sla_backend *best = NULL, *named = NULL;
    for (int64_t i = 0; i < NREG; i++) {
        const sla_backend *b = registry[i];
        if (!any && strcasecmp(b->info.name, name) != 0) continue;
        named = b;
        if (!b->info.available) continue;
        if (!(b->info.methods & SLA_METHOD_BIT(method))) continue;
        if (!(b->info.dtypes & SLA_DTYPE_BIT(dtype))) continue;
        if (!best || b->info.priority > best->info.priority) best = b;
    }
    if (best) return best;
    if (!any && !named)
        sla_error_set(SLA_EUNSUPPORTED, "sla_backend_find", "no backend named '%s' "
                      "(sla_backend_count() and sla_backend_get() list them)", name);
    else if (named && !named->info.available && !any)
        sla_error_set(SLA_EUNSUPPORTED, "sla_backend_find", "backend '%s' is not compiled in: %s",
                      name, named->info.unavailable_reason);
    else
        sla_error_set(SLA_EUNSUPPORTED, "sla_backend_find", "no available backend%s%s serves "
                      "method %s for %s", any ? "" : " named ", any ? "" : name,
                      sla_method_name(method), sla_dtype_name(dtype));
    return NULL;
}

uint32_t sla_backend_methods(const char *name, sla_dtype dtype)
{
    int any = !name || !*name || strcasecmp(name, "auto") == 0;
    uint32_t methods = 0;
    for (int64_t i = 0; i < NREG; i++) {
        const sla_backend *b = registry[i];
        if (any || strcasecmp(b->info.name, name) == 0)
            if (b->info.available && (b->info.dtypes & SLA_DTYPE_BIT(dtype)))
                methods |= b->info.methods;
    }
    return methods;
}
