/* A − σI (A − σM for the generalized problem) for shift-invert and for the eigenvector adjoint: the pattern with its whole diagonal
 * (A's own if it has it), shifted values per batch element, and the factorization with a
 * retry away from an exact eigenvalue. */
#include <math.h>
#include <string.h>

#include "eig/eig_internal.h"

sla_status eig_shifted_init(const eig_problem *P, eig_shifted *S)
{
    memset(S, 0, sizeof *S);
    int64_t n = P->n, nnz = P->nnz, nnzm = P->has_M ? P->nnzm : 0;
    const int64_t *rp = sla_pattern_rowptr(P->p);
    const int32_t *ci = sla_pattern_colind(P->p);
    int64_t missing = 0;
    for (int64_t i = 0; i < n; i++)
        if (sla_pattern_find(P->p, i, i) < 0) missing++;
    S->diag = sla_malloc((size_t)n, sizeof(int64_t), "diagonal slots");
    if (!S->diag) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    if (missing == 0 && !P->has_M) {
        S->pd = sla_pattern_retain((sla_pattern *)P->p);
        S->nnz = nnz;
    } else {
        /* input order: A's CSR slots, M's CSR slots, then the missing diagonal entries; the
         * pattern's map then says where each of A's (and M's) slots went */
        int64_t tot = nnz + nnzm + missing;
        int64_t *r = sla_malloc((size_t)tot, sizeof(int64_t), "rows");
        int64_t *c = sla_malloc((size_t)tot, sizeof(int64_t), "cols");
        S->slot = sla_malloc((size_t)nnz, sizeof(int64_t), "slot map");
        if (P->has_M) S->mslot = sla_malloc((size_t)(nnzm ? nnzm : 1), sizeof(int64_t), "slot map of M");
        st = (r && c && S->slot && (!P->has_M || S->mslot)) ? SLA_OK : SLA_ENOMEM;
        if (st == SLA_OK) {
            int64_t q = 0;
            for (int64_t i = 0; i < n; i++)
                for (int64_t s = rp[i]; s < rp[i + 1]; s++) { r[q] = i; c[q++] = ci[s]; }
            if (P->has_M) {
                const int64_t *mrp = sla_pattern_rowptr(P->pm);
                const int32_t *mci = sla_pattern_colind(P->pm);
                for (int64_t i = 0; i < n; i++)
                    for (int64_t s = mrp[i]; s < mrp[i + 1]; s++) { r[q] = i; c[q++] = mci[s]; }
            }
            for (int64_t i = 0; i < n; i++)
                if (sla_pattern_find(P->p, i, i) < 0) { r[q] = i; c[q++] = i; }
            st = sla_pattern_from_coo(n, n, tot, r, c, &S->pd);
        }
        if (st == SLA_OK) {
            const int64_t *map = sla_pattern_map(S->pd);
            memcpy(S->slot, map, sizeof(int64_t) * (size_t)nnz);
            if (nnzm) memcpy(S->mslot, map + nnz, sizeof(int64_t) * (size_t)nnzm);
            S->nnz = sla_pattern_nnz(S->pd);
        }
        sla_free(r);
        sla_free(c);
    }
    if (st == SLA_OK) {
        for (int64_t i = 0; i < n; i++) S->diag[i] = sla_pattern_find(S->pd, i, i);
        S->values = sla_malloc((size_t)(P->batch * S->nnz), sizeof(double), "shifted values");
        if (!S->values) st = SLA_ENOMEM;
    }
    if (st != SLA_OK) eig_shifted_free(S);
    return st;
}

void eig_shifted_set(const eig_problem *P, eig_shifted *S, double sgn, const double *shift)
{
    const double *a = P->Ad.values;
    for (int64_t b = 0; b < P->batch; b++) {
        double *v = S->values + b * S->nnz;
        const double *ab = a + b * P->nnz;
        if (S->slot) {
            memset(v, 0, sizeof(double) * (size_t)S->nnz);
            for (int64_t s = 0; s < P->nnz; s++) v[S->slot[s]] += sgn * ab[s];
        } else {
            for (int64_t s = 0; s < S->nnz; s++) v[s] = sgn * ab[s];
        }
        if (P->has_M) {
            const double *mb = (const double *)P->Md.values + b * P->nnzm;
            for (int64_t t = 0; t < P->nnzm; t++) v[S->mslot[t]] -= sgn * shift[b] * mb[t];
        } else {
            for (int64_t i = 0; i < P->n; i++) v[S->diag[i]] -= sgn * shift[b];
        }
    }
}

void eig_shifted_free(eig_shifted *S)
{
    sla_pattern_free(&S->pd);
    sla_free(S->diag);
    sla_free(S->slot);
    sla_free(S->mslot);
    sla_free(S->values);
    memset(S, 0, sizeof *S);
}

/* *singular = 1 if the factorization reports a zero determinant (a singular-tolerant backend
 * such as MUMPS with null-pivot detection factors a singular matrix without an error). A
 * backend without determinants counts as regular. */
static sla_status factor_singular(sla_solver *s, int64_t batch, int *singular)
{
    *singular = 0;
    double *sign = sla_malloc((size_t)(2 * batch), sizeof(double), "determinant signs");
    if (!sign) return SLA_ENOMEM;
    sla_status st = sla_solver_logdet(s, sign, sign + batch);
    if (st == SLA_OK)
        for (int64_t b = 0; b < batch; b++) *singular |= sign[b] == 0;
    if (st == SLA_EUNSUPPORTED) { sla_clear_error(); st = SLA_OK; }
    sla_free(sign);
    return st;
}

sla_status eig_factor(const eig_problem *P, eig_shifted *S, const double *sigma, double sgn,
                      const sla_solver_options *fopt, eig_shift_kind kind, sla_solver **s,
                      double *sigma_used, double step)
{
    sla_solver_options o;
    if (fopt) o = *fopt;
    else sla_solver_options_init(&o);
    int cholesky = kind == EIG_SHIFT_VERIFIED;
    if (cholesky) o.method = SLA_METHOD_CHOLESKY;
    /* shift-invert needs exact solves and the singularity test below needs a determinant:
     * method auto must pick a direct factorization (it may pick AMG-CG for an M-matrix) */
    if (o.method == SLA_METHOD_AUTO) o.need_determinant = 1;
    /* A − σI near an eigenvalue is what inverse iteration solves with: only exactly singular
     * factors are refused (and give sign 0 below) */
    o.allow_singular = 1;
    double scale = 0;
    for (int64_t b = 0; b < P->batch; b++) {
        scale = fmax(scale, P->norm1[b]);
        sigma_used[b] = sigma[b];
    }
    if (scale == 0) scale = 1;
    step *= scale;
    sla_status st = SLA_OK;
    for (int attempt = 0; attempt < 4; attempt++) {
        eig_shifted_set(P, S, sgn, sigma_used);
        if (*s) {
            st = sla_solver_refactor(*s, S->values);
        } else {
            sla_matrix M = sla_matrix_view(S->pd, SLA_FLOAT64, P->batch, S->values);
            st = sla_solver_create(&M, &o, s);
        }
        if (cholesky) break;
        int singular = 0;
        if (st == SLA_OK) st = factor_singular(*s, P->batch, &singular);
        /* shift-invert only: rcond at rounding level (KLU factored a graph Laplacian at σ = 0
         * with pivot ratio 2.4e-14 and no zero pivot) means σ sits on an eigenvalue as well:
         * move it, but keep the last factorization if it stays that small (an ill-conditioned
         * A) */
        int tiny = kind == EIG_SHIFT && st == SLA_OK && !singular &&
                   sla_solver_rcond(*s) < SLA_RCOND_SINGULAR;
        if (st == SLA_OK && singular) st = SLA_ESINGULAR;
        if ((st != SLA_ESINGULAR && !tiny) || (tiny && attempt == 3)) break;
        /* σ is an eigenvalue to working accuracy: move it by a tiny multiple of ‖A‖ (the
         * nearest eigenvalues stay the wanted ones) */
        for (int64_t b = 0; b < P->batch; b++) sigma_used[b] = sigma[b] + step;
        step *= 100;
    }
    if (st < 0 && st != SLA_ENOTSPD)
        return sla_error_wrap(st, "sla_eigsh", "factorizing A − σ%s at σ = %.17g", P->has_M ? "M" : "I",
                              sigma_used[0]);
    return st;
}
