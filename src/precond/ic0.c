/* IC(0): zero-fill incomplete Cholesky in natural order (Meijerink & van der Vorst 1977),
 * M = L Lᵀ with L on the lower triangle of A's pattern (the upper triangle is not read: A is
 * taken as symmetric, as CHOLMOD does). M is symmetric, so op = T applies the same M.
 * Complex dtypes: M = L Lᴴ for a Hermitian positive definite A (the same template in complex
 * arithmetic, real pivots l_ii); the backward substitution runs on Lᴴ (the mirror of L,
 * conjugated). M is Hermitian: op = C applies M⁻¹, op = T M⁻ᵀ = conj(M)⁻¹ (conjugation around
 * the solve).
 * Set-up extracts L's pattern, its transpose (for the backward substitution as a row gather)
 * and their level schedules once; update() refactors only. A pivot a_ii − Σ l_ik² ≤ 0 (IC(0)
 * breakdown: A not SPD, or SPD but not an H-matrix) fails with SLA_EBREAKDOWN naming the row;
 * no diagonal shift is applied silently. */
#include <math.h>
#include <stdio.h>

#include "precond/precond.h"
#include "precond/trifactor.h"

typedef struct ic0_t {
    sla_tri L;                   /* strict lower part of A's pattern */
    sla_tri_mirror Lt;           /* Lᵀ, for the backward substitution */
    int64_t *Lslot;              /* slot of A for each entry of L */
    int64_t *dslot;              /* [n] slot of a_ii, −1 if not stored */
    void *Lv, *dinv;             /* [batch][L.nnz], [batch][n]: 1/l_ii */
    double *pivot;               /* [batch]: the first failing pivot, for the message */
    int64_t *pivot_row;          /* [batch]: its row, −1 if none */
    const sla_matrix *A;         /* during set-up only */
} ic0_t;

#define SLA_TEMPLATE "precond/t_ic0.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

static int ic0_row(void *ctx, int64_t b, int64_t i, int64_t *w)
{
    sla_pc *pc = ctx;
    ic0_t *F = pc->impl;
    size_t es = sla_dtype_size(pc->dtype);
    const char *a = (const char *)F->A->values + (size_t)(b * sla_pattern_nnz(F->A->pattern)) * es;
    char *d = (char *)F->dinv + (size_t)(b * pc->n) * es;
    double pivot;
    int bad = SLA_DISPATCH_ALL(pc->dtype, ic0_row, (F, (const void *)a, sla_tri_values(&F->L, pc->dtype, F->Lv, b),
                                                (void *)d, i, w, &pivot));
    if (bad) {
        #pragma omp critical(sla_ic0_pivot)
        if (F->pivot_row[b] < 0 || i < F->pivot_row[b]) {
            F->pivot_row[b] = i;
            F->pivot[b] = pivot;
        }
    }
    return bad;
}

static sla_status ic0_update(sla_pc *pc, const sla_matrix *A)
{
    ic0_t *F = pc->impl;
    int64_t fb, fi;
    for (int64_t b = 0; b < pc->batch; b++) F->pivot_row[b] = -1;
    F->A = A;
    sla_status st = sla_tri_factor(&F->L, pc->batch, ic0_row, pc, &fb, &fi);
    F->A = NULL;
    SLA_TRY(st);
    if (fi >= 0)
        return sla_pc_fail(pc, SLA_EBREAKDOWN, __func__, "the matrix is not SPD, or IC(0) does "
                           "not exist for it (try jacobi or amg)", "IC(0) breakdown at row %lld "
                           "(batch element %lld): pivot a_ii − Σ |l_ik|² = %.3g ≤ 0%s",
                           (long long)fi, (long long)fb, F->pivot[fb],
                           F->dslot[fi] < 0 ? " (no diagonal entry stored)" : "");
    sla_tri_mirror_gather(&F->Lt, pc->dtype, pc->batch, F->Lv);
    if (sla_dtype_is_complex(pc->dtype))          /* Lᴴ for the backward substitution */
        sla_conj(pc->dtype, pc->batch * F->Lt.T.nnz, F->Lt.values, F->Lt.values);
    return SLA_OK;
}

static void ic0_destroy(sla_pc *pc)
{
    ic0_t *F = pc->impl;
    if (!F) return;
    sla_tri_free(&F->L);
    sla_tri_mirror_free(&F->Lt);
    sla_free(F->Lslot);
    sla_free(F->dslot);
    sla_free(F->Lv);
    sla_free(F->dinv);
    sla_free(F->pivot);
    sla_free(F->pivot_row);
    sla_free(F);
    pc->impl = NULL;
}

static sla_status ic0_setup(sla_pc *pc, const sla_matrix *A)
{
    ic0_t *F = sla_calloc(1, sizeof *F, "IC(0)");
    if (!F) return SLA_ENOMEM;
    pc->impl = F;
    size_t es = sla_dtype_size(pc->dtype);
    F->dslot = sla_malloc((size_t)pc->n, sizeof(int64_t), "IC(0) diagonal slots");
    F->pivot = sla_malloc((size_t)pc->batch, sizeof(double), "IC(0) failing pivots");
    F->pivot_row = sla_malloc((size_t)pc->batch, sizeof(int64_t), "IC(0) failing rows");
    if (!F->dslot || !F->pivot || !F->pivot_row) return SLA_ENOMEM;
    SLA_TRY(sla_tri_from_pattern(A->pattern, 0, &F->L, &F->Lslot, F->dslot));
    SLA_TRY(sla_tri_schedule(&F->L));
    SLA_TRY(sla_tri_mirror_create(&F->L, pc->dtype, pc->batch, &F->Lt));
    F->Lv = sla_malloc((size_t)(pc->batch * F->L.nnz), es, "IC(0) L values");
    F->dinv = sla_malloc((size_t)(pc->batch * pc->n), es, "IC(0) pivots");
    if (!F->Lv || !F->dinv) return SLA_ENOMEM;
    snprintf(pc->desc, sizeof pc->desc, "ic0");
    return ic0_update(pc, A);
}

static sla_status ic0_apply(const sla_pc *pc, sla_op op, int64_t b, const void *r, void *z)
{
    /* M = L Lᴴ is Hermitian (symmetric for the real dtypes): op N and C apply M⁻¹; op T on a
     * complex M applies M⁻ᵀ r = conj(M⁻¹ conj(r)) */
    const ic0_t *F = pc->impl;
    sla_dtype t = pc->dtype;
    const char *d = (const char *)F->dinv + (size_t)(b * pc->n) * sla_dtype_size(t);
    int cj = op == SLA_OP_T && sla_dtype_is_complex(t);
    if (cj) sla_conj(t, pc->n, r, z);
    sla_tri_solve(&F->L, t, sla_tri_values(&F->L, t, F->Lv, b), d, cj ? z : r, z);
    sla_tri_solve(&F->Lt.T, t, sla_tri_values(&F->Lt.T, t, F->Lt.values, b), d, z, z);
    if (cj) sla_conj(t, pc->n, z, z);
    return SLA_OK;
}

const sla_pc_class sla_pc_ic0 = {
    .setup = ic0_setup, .update = ic0_update, .prepare = NULL, .apply = ic0_apply,
    .destroy = ic0_destroy, .threading = SLA_THREADS_ANY,
};
