/* The operator kind of the built-in Krylov backend for complex128 / complex64 CSR matrices:
 * batch element b as an operator on a complex host space (sla/backend.h: dot = Re(xᴴy) on the
 * real slots, xᴴy and xᵀy and complex axpby on the complex ones), so CG and MINRES (real
 * scalars for Hermitian A) and GMRES, BiCGStab and COCG (complex scalars) run their one source
 * as true complex methods. op = N, T (Aᵀ, COCG's adjoint for a complex symmetric A) and
 * C (Aᴴ, the adjoint of the others) by the complex SpMV. Preconditioner: none, or Jacobi,
 * z_i = r_i / a_ii (op = C: r_i / conj(a_ii)); the diagonal is read from the values at every
 * solve (no set-up, nothing to refactor); SPD for a Hermitian positive definite A, as CG needs,
 * and complex symmetric, as COCG needs. */
#include <complex.h>

#include "krylov/kbackend.h"
#include "krylov/krylov.h"

typedef struct complex_storage {
    sla_operator op;
    sla_space space;             /* n complex entries */
    sla_host_space host;
    sla_matrix Ab;               /* batch element b */
    const int64_t *dslot;        /* Jacobi: the CSR slot of each a_ii, or NULL (no precond) */
} complex_storage;

/* a_ii of batch element b's values v (dtype of the matrix) */
static double complex diag_entry(const complex_storage *w, int64_t i)
{
    int64_t s = w->dslot[i];
    if (w->Ab.dtype == SLA_COMPLEX128) return ((const double complex *)w->Ab.values)[s];
    return ((const float complex *)w->Ab.values)[s];
}

/* Jacobi: z = diag(A)⁻¹ r (op = T: the same; op = C: diag(A)⁻ᴴ r) */
static sla_status complex_jacobi(const sla_operator *A, sla_op op, const void *r, void *z)
{
    const complex_storage *w = A->ctx;
    int64_t n = w->space.n;
    for (int64_t i = 0; i < n; i++) {
        double complex d = diag_entry(w, i);
        if (op == SLA_OP_C) d = conj(d);
        if (w->Ab.dtype == SLA_COMPLEX128)
            ((double complex *)z)[i] = ((const double complex *)r)[i] / d;
        else
            ((float complex *)z)[i] = (float complex)(((const float complex *)r)[i] / d);
    }
    return SLA_OK;
}

/* y = op(A) x by the complex SpMV (op = N, T or C) */
static sla_status complex_apply(const sla_operator *A, sla_op op, const void *x, void *y)
{
    const complex_storage *w = A->ctx;
    return sla_spmv(op, 1.0, &w->Ab, x, 0, 1, 0.0, y);
}

static sla_status complex_for(void *solver, int64_t b, int nchunks, void *storage,
                              const sla_operator **A)
{
    const sla_solver *s = solver;
    complex_storage *w = storage;
    int64_t nnz = sla_pattern_nnz(s->pattern);
    w->Ab = sla_matrix_view(s->pattern, s->dtype, 1,
                            (const char *)s->A.values + (size_t)(b * nnz) * sla_dtype_size(s->dtype));
    int64_t bounds[SLA_HOST_MAX_CHUNKS + 1];
    if (nchunks < 1) nchunks = 1;
    if (nchunks > SLA_HOST_MAX_CHUNKS) nchunks = SLA_HOST_MAX_CHUNKS;
    sla_partition_rows(sla_pattern_rowptr(s->pattern), s->n, nchunks, bounds);
    sla_host_space_init(&w->space, &w->host, s->n, s->dtype, nchunks, bounds);
    const sla_krylov_impl *K = s->impl;
    w->dslot = K->complex_diag;
    w->op = (sla_operator){.domain = &w->space, .range = &w->space, .ctx = w,
                           .apply = complex_apply, .threading = SLA_THREADS_ANY,
                           .precond = w->dslot ? complex_jacobi : NULL};
    *A = &w->op;
    return SLA_OK;
}

static double complex_bytes(const sla_solver *s)
{
    return 7.0 * (double)s->n * (double)sla_dtype_size(s->dtype);
}

const sla_krylov_kind sla_krylov_kind_complex = {
    .note = "", .storage_bytes = sizeof(complex_storage),
    .operator_for = complex_for, .kernel_bytes = complex_bytes,
};

sla_status sla_krylov_complex_jacobi(sla_solver *s)
{
    sla_krylov_impl *K = s->impl;
    int64_t n = s->n, nnz = sla_pattern_nnz(s->pattern);
    K->complex_diag = sla_malloc((size_t)n, sizeof *K->complex_diag, "diagonal slots");
    if (!K->complex_diag) return SLA_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
        int64_t q = sla_pattern_find(s->pattern, i, i);
        if (q < 0) {
            sla_free(K->complex_diag);
            K->complex_diag = NULL;
            return SLA_FAIL(SLA_EBREAKDOWN, "jacobi: the diagonal entry (%lld, %lld) is not "
                            "stored", (long long)i, (long long)i);
        }
        K->complex_diag[i] = q;
        for (int64_t b = 0; b < s->batch; b++) {
            size_t at = (size_t)(b * nnz + q);
            double complex d = s->dtype == SLA_COMPLEX128
                                   ? ((const double complex *)s->A.values)[at]
                                   : ((const float complex *)s->A.values)[at];
            if (d == 0) {
                sla_free(K->complex_diag);
                K->complex_diag = NULL;
                return SLA_FAIL(SLA_EBREAKDOWN, "jacobi: a_%lld%lld = 0 in batch element %lld",
                                (long long)i, (long long)i, (long long)b);
            }
        }
    }
    return SLA_OK;
}
