/* sla solve --device cuda: the matrix values and b go to the GPU, the solve runs on libsla's
 * CUDA backend (docs/cuda.md), x comes back. libsla_cuda is loaded at run time (dlopen), so that
 * the tool itself needs no CUDA library and runs on machines without one; a missing library or
 * device is an error naming the reason. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cuda_api {
    sla_status (*reg)(void);
    sla_status (*alloc)(size_t, void **);
    void (*release)(void *);
    sla_status (*copy)(void *, const void *, size_t, int);
} cuda_api;

static int load(const char *cmd, cuda_api *f)
{
    /* the dynamic loader looks beside libsla through the tool's RUNPATH */
    void *h = dlopen("libsla_cuda.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        return cli_error(cmd, EXIT_FAILURE_, sla_status_string(SLA_EUNSUPPORTED), "--device cuda: "
                         "cannot load libsla_cuda (this sla was built without CUDA, or the CUDA "
                         "runtime is missing): %s", dlerror());
    *(void **)&f->reg = dlsym(h, "sla_cuda_register");
    *(void **)&f->alloc = dlsym(h, "sla_cuda_alloc");
    *(void **)&f->release = dlsym(h, "sla_cuda_free");
    *(void **)&f->copy = dlsym(h, "sla_cuda_copy");
    if (!f->reg || !f->alloc || !f->release || !f->copy)
        return cli_error(cmd, EXIT_FAILURE_, sla_status_string(SLA_EUNSUPPORTED),
                         "--device cuda: libsla_cuda lacks its entry points: %s", dlerror());
    sla_status st = f->reg();
    return st < 0 ? cli_fail(cmd, st, "--device cuda") : EXIT_OK;
}

int cli_cuda_begin(const char *cmd, const cli_matrix *m, const double *b, int64_t n, int64_t nx,
                   cli_cuda *d)
{
    memset(d, 0, sizeof *d);
    cuda_api f = {0};
    int rc = load(cmd, &f);
    if (rc) return rc;
    d->release = f.release;
    d->copy = f.copy;
    size_t vb = (size_t)sla_pattern_nnz(m->pattern) * sizeof(double);
    sla_status st = f.alloc(vb, &d->values);
    if (!st) st = f.alloc((size_t)n * sizeof(double), &d->b);
    if (!st) st = f.alloc((size_t)nx * sizeof(double), &d->x);
    if (!st) st = f.copy(d->values, m->values, vb, 1);
    if (!st) st = f.copy(d->b, b, (size_t)n * sizeof(double), 1);
    return st ? cli_fail(cmd, st, "--device cuda") : EXIT_OK;
}

int cli_cuda_end(const char *cmd, cli_cuda *d, double *x, int64_t nx)
{
    sla_status st = x && d->copy ? d->copy(x, d->x, (size_t)nx * sizeof(double), 0) : SLA_OK;
    if (d->release) {
        d->release(d->values);
        d->release(d->b);
        d->release(d->x);
    }
    memset(d, 0, sizeof *d);
    return st ? cli_fail(cmd, st, "--device cuda") : EXIT_OK;
}
