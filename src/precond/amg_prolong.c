/* Smoothed prolongator of smoothed-aggregation AMG:
 *     P = (I − ω D⁻¹ A) P_tent,   ω = 4 / (3 ρ(D⁻¹A)),
 * with P_tent(i, agg(i)) = 1 (the aggregates' indicator columns: the near-null space of a scalar
 * elliptic operator is the constant, and the coarse near-null space is then the constant again).
 * Source: Vaněk, Mandel & Brezina, Computing 56 (1996), sections 3–4 (the weight 4/(3ρ) is their
 * choice for the damped-Jacobi prolongator smoother).
 * Row i of P has one column per aggregate met in row i of A (diagonal included); the pattern
 * depends only on the pattern of A and the aggregates, so update() keeps it. Complex A: the same
 * smoothing in complex arithmetic (t_amg_prolong.h), P complex, P_tent real. */
#include <omp.h>

#include "precond/amg_internal.h"

sla_status amg_prolong_symbolic(const amg_csr *A, const int32_t *agg, int64_t nagg, amg_csr *P)
{
    int64_t n = A->nrows;
    int nt = sla_threads();
    sla_status st = SLA_ENOMEM;
    int64_t *mark = sla_malloc((size_t)nt * (size_t)nagg, sizeof(int64_t), "AMG prolongator marks");
    P->nrows = n;
    P->ncols = nagg;
    P->borrowed = 0;
    P->cplx = A->cplx;
    P->conj_r = A->conj_r;
    P->rp = sla_malloc((size_t)n + 1, sizeof(int64_t), "AMG prolongator row pointers");
    if (!mark || !P->rp) goto fail;
    P->rp[0] = 0;
    #pragma omp parallel num_threads(nt) if (n > AMG_PARALLEL_MIN)
    {
        int64_t *mk = mark + (size_t)omp_get_thread_num() * (size_t)nagg;
        for (int64_t a = 0; a < nagg; a++) mk[a] = -1;
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            int64_t c = 0;
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
                int32_t a = agg[A->ci[k]];
                if (a >= 0 && mk[a] != i) { mk[a] = i; c++; }
            }
            P->rp[i + 1] = c;
        }
    }
    for (int64_t i = 0; i < n; i++) P->rp[i + 1] += P->rp[i];
    P->ci = sla_malloc((size_t)P->rp[n], sizeof(int32_t), "AMG prolongator columns");
    P->v = sla_malloc((size_t)P->rp[n] * amg_es(A), sizeof(double), "AMG prolongator values");
    if (!P->ci || !P->v) goto fail;
    #pragma omp parallel num_threads(nt) if (n > AMG_PARALLEL_MIN)
    {
        int64_t *mk = mark + (size_t)omp_get_thread_num() * (size_t)nagg;
        for (int64_t a = 0; a < nagg; a++) mk[a] = -1;
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            int64_t p = P->rp[i];
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
                int32_t a = agg[A->ci[k]];
                if (a >= 0 && mk[a] != i) { mk[a] = i; P->ci[p++] = a; }
            }
            amg_sort_int32(P->ci + P->rp[i], p - P->rp[i]);
        }
    }
    sla_free(mark);
    return SLA_OK;
fail:
    sla_free(mark);
    amg_csr_free(P);
    return st;
}

#define SLA_TEMPLATE "precond/t_amg_prolong.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

sla_status amg_prolong_numeric(const amg_csr *A, const double *diag, const int32_t *agg,
                               double omega, amg_csr *P)
{
    int64_t *pos = sla_malloc((size_t)sla_threads() * (size_t)P->ncols, sizeof(int64_t),
                              "AMG prolongator slots");
    if (!pos) return SLA_ENOMEM;
    AMG_DISPATCH(A, amg_prolong_numeric, (A, (const void *)diag, agg, omega, P, pos));
    sla_free(pos);
    return SLA_OK;
}
