/* The backend registry: every backend by name and priority, compiled in or not (a backend that
 * is not compiled in stays listed with the reason), then those other libraries registered with
 * sla_backend_register() (libsla_mpi, a CUDA backend, a user's). A mutex keeps registration
 * and look-up consistent across threads. */
#include <strings.h>
#include <threads.h>

#include "backend/solver_impl.h"

static const sla_backend *const builtin[] = {
    &sla_backend_cholmod, &sla_backend_mumps, &sla_backend_umfpack, &sla_backend_klu,
    &sla_backend_krylov,
};
#define NBUILTIN ((int64_t)(sizeof builtin / sizeof builtin[0]))

static const sla_backend *registered[SLA_MAX_REGISTERED_BACKENDS];
static int64_t nregistered;
static mtx_t lock;
static once_flag lock_once = ONCE_FLAG_INIT;

static void lock_init(void) { mtx_init(&lock, mtx_plain); }
static void enter(void) { call_once(&lock_once, lock_init); mtx_lock(&lock); }
static void leave(void) { mtx_unlock(&lock); }

/* backend i of the list (built-ins first); call with the lock held */
static const sla_backend *at(int64_t i)
{
    return i < NBUILTIN ? builtin[i] : registered[i - NBUILTIN];
}

static const sla_backend *named(const char *name)
{
    for (int64_t i = 0; i < NBUILTIN + nregistered; i++)
        if (strcasecmp(at(i)->info.name, name) == 0) return at(i);
    return NULL;
}

int64_t sla_backend_count(void)
{
    enter();
    int64_t n = NBUILTIN + nregistered;
    leave();
    return n;
}

sla_status sla_backend_get(int64_t i, sla_backend_info *info)
{
    SLA_CHECK_ARG(info, "info is NULL");
    enter();
    int64_t n = NBUILTIN + nregistered;
    if (i >= 0 && i < n) *info = at(i)->info;
    leave();
    SLA_CHECK_ARG(i >= 0 && i < n, "backend index %lld out of range [0, %lld)", (long long)i,
                  (long long)n);
    return SLA_OK;
}

sla_status sla_backend_register(const sla_backend *b)
{
    SLA_CHECK_ARG(b && b->info.name && b->info.name[0], "backend or its info.name is NULL");
    SLA_CHECK_ARG(strcasecmp(b->info.name, "auto") != 0, "the name 'auto' is reserved");
    SLA_CHECK_ARG(b->create && b->solve && b->destroy, "backend '%s': create, solve and destroy "
                  "are required", b->info.name);
    sla_status st = SLA_OK;
    enter();
    if (named(b->info.name))
        st = SLA_FAIL(SLA_EINVAL, "a backend named '%s' is already registered", b->info.name);
    else if (nregistered == SLA_MAX_REGISTERED_BACKENDS)
        st = SLA_FAIL(SLA_ENOMEM, "the registry is full (%d backends registered)",
                      SLA_MAX_REGISTERED_BACKENDS);
    else
        registered[nregistered++] = b;
    leave();
    return st;
}

sla_status sla_backend_unregister(const char *name)
{
    SLA_CHECK_ARG(name, "name is NULL");
    int removed = 0;
    enter();
    for (int64_t i = 0; i < nregistered && !removed; i++) {
        if (strcasecmp(registered[i]->info.name, name) != 0) continue;
        for (int64_t j = i + 1; j < nregistered; j++) registered[j - 1] = registered[j];
        nregistered--;
        removed = 1;
    }
    leave();
    if (!removed)
        return SLA_FAIL(SLA_EINVAL, "no registered backend named '%s' (built-in backends cannot "
                        "be removed)", name);
    return SLA_OK;
}

const sla_backend *sla_backend_find(sla_method method, sla_dtype dtype, const char *name)
{
    int any = !name || !*name || strcasecmp(name, "auto") == 0;
    const sla_backend *best = NULL, *found = NULL;
    enter();
    for (int64_t i = 0; i < NBUILTIN + nregistered; i++) {
        const sla_backend *b = at(i);
        if (!any && strcasecmp(b->info.name, name) != 0) continue;
        found = b;
        if (!b->info.available) continue;
        if (!(b->info.methods & SLA_METHOD_BIT(method))) continue;
        if (!(b->info.dtypes & SLA_DTYPE_BIT(dtype))) continue;
        if (!best || b->info.priority > best->info.priority) best = b;
    }
    leave();
    if (best) return best;
    if (!any && !found)
        sla_error_set(SLA_EUNSUPPORTED, "sla_backend_find", "no backend named '%s' "
                      "(sla_backend_count() and sla_backend_get() list them)", name);
    else if (found && !found->info.available && !any)
        sla_error_set(SLA_EUNSUPPORTED, "sla_backend_find", "backend '%s' is not available: %s",
                      name, found->info.unavailable_reason);
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
    enter();
    for (int64_t i = 0; i < NBUILTIN + nregistered; i++) {
        const sla_backend *b = at(i);
        if (any || strcasecmp(b->info.name, name) == 0)
            if (b->info.available && (b->info.dtypes & SLA_DTYPE_BIT(dtype)))
                methods |= b->info.methods;
    }
    leave();
    return methods;
}
