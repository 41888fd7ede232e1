/* The operator kind of the built-in Krylov backend for complex128 / complex64 CSR matrices: the
 * equivalent real formulation (Day & Heroux, "Solving complex-valued linear systems via
 * equivalent real formulations", SIAM J. Sci. Comput. 23(2), 2001). A complex vector of n
 * entries, interleaved (re, im), is a real vector of 2n entries, and y = A x is the real
 * operator K = [[Re A, −Im A], [Im A, Re A]] in that interleaved order; its transpose Kᵀ is the
 * real form of Aᴴ. The real dot of two such vectors is Re(xᴴy), the real part of the conjugated
 * inner product, and the real 2-norm is the complex one, so the stopping rule is unchanged.
 * For a Hermitian positive definite A, K is symmetric positive definite and CG on K is complex
 * CG step for step (its α and β are real); MINRES likewise for Hermitian A. BiCGStab and GMRES
 * run on K itself (the real methods on the 2n real system, not their complex versions: the
 * Krylov spaces differ, and convergence may be slower). No preconditioner yet. */
#include "krylov/kbackend.h"
#include "krylov/krylov.h"

typedef struct complex_storage {
    sla_operator op;
    sla_space space;             /* 2n reals of the real dtype */
    sla_host_space host;
    sla_matrix Ab;               /* batch element b */
} complex_storage;

/* op = N: y = A x; op = T (Kᵀ): y = Aᴴ x, both by the complex SpMV */
static sla_status complex_apply(const sla_operator *A, sla_op op, const void *x, void *y)
{
    const complex_storage *w = A->ctx;
    return sla_spmv(op == SLA_OP_N ? SLA_OP_N : SLA_OP_C, 1.0, &w->Ab, x, 0, 1, 0.0, y);
}

static sla_status complex_for(void *solver, int64_t b, int nchunks, void *storage,
                              const sla_operator **A)
{
    const sla_solver *s = solver;
    complex_storage *w = storage;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    w->Ab = sla_matrix_view(s->pattern, s->dtype, 1,
                            (const char *)s->A.values + (size_t)(b * nnz) * sla_dtype_size(s->dtype));
    sla_host_space_init(&w->space, &w->host, 2 * s->n, sla_dtype_real(s->dtype), nchunks, NULL);
    w->op = (sla_operator){.domain = &w->space, .range = &w->space, .ctx = w,
                           .apply = complex_apply, .threading = SLA_THREADS_ANY};
    *A = &w->op;
    return SLA_OK;
}

static double complex_bytes(const sla_solver *s)
{
    return 7.0 * (double)s->n * (double)sla_dtype_size(s->dtype);
}

const sla_krylov_kind sla_krylov_kind_complex = {
    .note = ", complex: equivalent real formulation", .storage_bytes = sizeof(complex_storage),
    .operator_for = complex_for, .kernel_bytes = complex_bytes,
};
