/* The right-hand side told at create or refactor (sla_solver_create_for, solve/first_rhs.c),
 * held by the MUMPS backends (mumps.c, mumps_z.c): a copy of B and the X that the condition
 * estimate's first solve call computed with it, returned once by the next solve whose B is
 * equal. MUMPS reads its factors once per solve call whatever the number of columns, so the
 * columns ride along with the estimate's for nearly nothing: one solve call fewer (0.9 s of
 * 11 s on the complex Helmholtz 1000², docs/complex.md). Needs no MUMPS header. */
#include <string.h>

#include "direct/direct.h"

static size_t block_bytes(const sla_solver *s, int64_t nrhs)
{
    return (size_t)(s->batch * s->n * nrhs) * sla_dtype_size(s->dtype);
}

void sla_mumps_first_drop(sla_mumps_first *f)
{
    sla_free(f->b);
    sla_free(f->x);
    f->b = f->x = NULL;
    f->nrhs = 0;
}

int64_t sla_mumps_first_hold(const sla_solver *s, sla_mumps_first *f, size_t entry_bytes,
                             void **w)
{
    sla_mumps_first_drop(f);
    *w = NULL;
    const sla_first_rhs *h = sla_solver_first_rhs(s);
    if (!h || s->n == 0 || h->nrhs > SLA_MUMPS_FIRST_MAX) return 0;
    size_t bytes = block_bytes(s, h->nrhs);
    f->b = sla_malloc(bytes, 1, "the first right-hand side");
    f->x = sla_malloc(bytes, 1, "the first solution");
    *w = sla_malloc((size_t)h->nrhs, (size_t)s->n * entry_bytes, "the first right-hand side");
    if (!f->b || !f->x || !*w) {     /* no memory: the solve solves as usual */
        sla_mumps_first_drop(f);
        sla_free(*w);
        *w = NULL;
        sla_clear_error();
        return 0;
    }
    memcpy(f->b, h->B, bytes);
    f->nrhs = h->nrhs;
    f->conj = h->op == SLA_OP_C;     /* A = Aᵀ: T is N; C (complex only) is conj(A) */
    return f->nrhs;
}

int sla_mumps_first_take(const sla_solver *s, sla_mumps_first *f, sla_op op, int64_t nrhs,
                         const void *B, void *X)
{
    if (!f->x) return 0;
    int hit = f->nrhs == nrhs && (op == SLA_OP_C) == f->conj &&
              memcmp(B, f->b, block_bytes(s, nrhs)) == 0;
    if (hit) memcpy(X, f->x, block_bytes(s, nrhs));
    sla_mumps_first_drop(f);
    return hit;
}
