/* ILU(0): zero-fill incomplete LU in natural order (Meijerink & van der Vorst 1977; Saad 2003
 * §10.3.2), M = L U with L unit lower triangular, both on the pattern of A.
 * Set-up splits the pattern into L and U once (symbolic) and factors each batch element
 * (numeric); update() refactors only. apply(N) solves L then U; apply(T) solves Uᵀ then Lᵀ,
 * with Uᵀ and Lᵀ stored explicitly (built by prepare(T) on the first transposed solve) so that
 * every solve is a row gather that can run by level schedule. A zero pivot (a missing or
 * cancelled diagonal) fails with SLA_EBREAKDOWN naming the row. Complex dtypes: the same
 * factorization in complex arithmetic; op = T applies M⁻ᵀ, op = C M⁻ᴴ (by conjugating around
 * the transposed solves). */
#include <math.h>
#include <stdio.h>

#include "precond/precond.h"
#include "precond/trifactor.h"

typedef struct ilu0_t {
    sla_tri L, U;                /* strict lower / upper parts of A's pattern */
    int64_t *Lslot, *Uslot;      /* slot of A for each factor entry */
    int64_t *dslot;              /* [n] slot of a_ii, −1 if not stored */
    void *Lv, *Uv, *dinv;        /* [batch][L.nnz], [batch][U.nnz], [batch][n]: 1/u_ii */
    sla_tri_mirror Ut, Lt;       /* transposed factors for op = T (after prepare) */
    int transposed;
    const sla_matrix *A;         /* during set-up only */
} ilu0_t;

#define SLA_TEMPLATE "precond/t_ilu0.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

static int ilu0_row(void *ctx, int64_t b, int64_t i, int64_t *w)
{
    sla_pc *pc = ctx;
    ilu0_t *F = pc->impl;
    size_t es = sla_dtype_size(pc->dtype);
    const char *a = (const char *)F->A->values + (size_t)(b * sla_pattern_nnz(F->A->pattern)) * es;
    char *d = (char *)F->dinv + (size_t)(b * pc->n) * es;
    return SLA_DISPATCH_ALL(pc->dtype, ilu0_row, (F, (const void *)a, sla_tri_values(&F->L, pc->dtype, F->Lv, b),
                                              sla_tri_values(&F->U, pc->dtype, F->Uv, b), (void *)d, i, w));
}

static sla_status ilu0_update(sla_pc *pc, const sla_matrix *A)
{
    ilu0_t *F = pc->impl;
    int64_t fb, fi;
    F->A = A;
    sla_status st = sla_tri_factor(&F->L, pc->batch, ilu0_row, pc, &fb, &fi);
    F->A = NULL;
    SLA_TRY(st);
    if (fi >= 0)
        return sla_pc_fail(pc, SLA_EBREAKDOWN, __func__, "ILU(0) needs nonzero pivots in natural "
                           "order (try another preconditioner, or a direct method)",
                           "ILU(0): zero pivot at row %lld (batch element %lld)%s", (long long)fi,
                           (long long)fb, F->dslot[fi] < 0 ? ", no diagonal entry stored" : "");
    if (F->transposed) {
        sla_tri_mirror_gather(&F->Ut, pc->dtype, pc->batch, F->Uv);
        sla_tri_mirror_gather(&F->Lt, pc->dtype, pc->batch, F->Lv);
    }
    return SLA_OK;
}

static void ilu0_destroy(sla_pc *pc)
{
    ilu0_t *F = pc->impl;
    if (!F) return;
    sla_tri_free(&F->L);
    sla_tri_free(&F->U);
    sla_tri_mirror_free(&F->Ut);
    sla_tri_mirror_free(&F->Lt);
    sla_free(F->Lslot);
    sla_free(F->Uslot);
    sla_free(F->dslot);
    sla_free(F->Lv);
    sla_free(F->Uv);
    sla_free(F->dinv);
    sla_free(F);
    pc->impl = NULL;
}

static sla_status ilu0_setup(sla_pc *pc, const sla_matrix *A)
{
    ilu0_t *F = sla_calloc(1, sizeof *F, "ILU(0)");
    if (!F) return SLA_ENOMEM;
    pc->impl = F;
    size_t es = sla_dtype_size(pc->dtype);
    F->dslot = sla_malloc((size_t)pc->n, sizeof(int64_t), "ILU(0) diagonal slots");
    if (!F->dslot) return SLA_ENOMEM;
    SLA_TRY(sla_tri_from_pattern(A->pattern, 0, &F->L, &F->Lslot, F->dslot));
    SLA_TRY(sla_tri_from_pattern(A->pattern, 1, &F->U, &F->Uslot, NULL));
    SLA_TRY(sla_tri_schedule(&F->L));
    SLA_TRY(sla_tri_schedule(&F->U));
    F->Lv = sla_malloc((size_t)(pc->batch * F->L.nnz), es, "ILU(0) L values");
    F->Uv = sla_malloc((size_t)(pc->batch * F->U.nnz), es, "ILU(0) U values");
    F->dinv = sla_malloc((size_t)(pc->batch * pc->n), es, "ILU(0) pivots");
    if (!F->Lv || !F->Uv || !F->dinv) return SLA_ENOMEM;
    snprintf(pc->desc, sizeof pc->desc, "ilu0");
    return ilu0_update(pc, A);
}

static sla_status ilu0_prepare(sla_pc *pc, sla_op op)
{
    ilu0_t *F = pc->impl;
    if (op == SLA_OP_N || F->transposed) return SLA_OK;
    SLA_TRY(sla_tri_mirror_create(&F->U, pc->dtype, pc->batch, &F->Ut));
    SLA_TRY(sla_tri_mirror_create(&F->L, pc->dtype, pc->batch, &F->Lt));
    sla_tri_mirror_gather(&F->Ut, pc->dtype, pc->batch, F->Uv);
    sla_tri_mirror_gather(&F->Lt, pc->dtype, pc->batch, F->Lv);
    F->transposed = 1;
    return SLA_OK;
}

static sla_status ilu0_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z)
{
    const ilu0_t *F = pc->impl;
    sla_dtype t = pc->dtype;
    const char *d = (const char *)F->dinv + (size_t)(b * pc->n) * sla_dtype_size(t);
    if (op == SLA_OP_N) {          /* L U z = r */
        sla_tri_solve(&F->L, t, sla_tri_values(&F->L, t, F->Lv, b), NULL, r, z);
        sla_tri_solve(&F->U, t, sla_tri_values(&F->U, t, F->Uv, b), d, z, z);
    } else {                       /* Uᵀ Lᵀ z = r; op = C: z = conj(M⁻ᵀ conj(r)) = M⁻ᴴ r */
        if (!F->transposed)
            return SLA_FAIL(SLA_EINTERNAL, "ILU(0) applied transposed before prepare(T)");
        int cj = op == SLA_OP_C && sla_dtype_is_complex(t);
        if (cj) sla_conj(t, pc->n, r, z);
        sla_tri_solve(&F->Ut.T, t, sla_tri_values(&F->Ut.T, t, F->Ut.values, b), d, cj ? z : r, z);
        sla_tri_solve(&F->Lt.T, t, sla_tri_values(&F->Lt.T, t, F->Lt.values, b), NULL, z, z);
        if (cj) sla_conj(t, pc->n, z, z);
    }
    return SLA_OK;
}

const sla_pc_class sla_pc_ilu0 = {
    .setup = ilu0_setup, .update = ilu0_update, .prepare = ilu0_prepare, .apply = ilu0_apply,
    .destroy = ilu0_destroy, .threading = SLA_THREADS_ANY,
};
