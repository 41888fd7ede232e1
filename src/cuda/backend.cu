/* The solver backend "cuda": device matrix views (sla_matrix.space = SLA_MEM_DEVICE) solved by
 * libsla's own CG, BiCGStab, GMRES and MINRES sources (sla_krylov_run) on the device space and
 * the device CSR operator, Jacobi on the device. The generic layer's block checks, scalings,
 * copies and the VJP's outer product come here through block_space and pattern_outer, so that
 * no device block is read on the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>

#include "cuda/reduce.cuh"

typedef struct cuda_impl {
    sla_cuda_csr *csr;
    sla_space V;                 /* vectors of n (square A) */
    sla_cuda_space cs;           /* its scratch, shared with the block spaces */
    void **inv_diag;             /* [batch] device vectors (Jacobi), or NULL */
    int absolute;                /* Jacobi of |a_ii| (MINRES) */
    void *col_b, *col_x;         /* contiguous columns for nrhs > 1 */
} cuda_impl;

static void cuda_destroy(sla_solver *s)
{
    cuda_impl *t = (cuda_impl *)sla_solver_impl(s);
    if (!t) return;
    if (t->inv_diag) {
        for (int64_t b = 0; t->csr && b < t->csr->batch; b++)
            if (t->inv_diag[b]) cudaFree(t->inv_diag[b]);
        free(t->inv_diag);
    }
    if (t->col_b) cudaFree(t->col_b);
    if (t->col_x) cudaFree(t->col_x);
    sla_cuda_csr_free(&t->csr);
    sla_cuda_space_free(&t->cs);
    free(t);
    sla_solver_set_impl(s, NULL);
}

static sla_status jacobi_all(cuda_impl *t)
{
    for (int64_t b = 0; t->inv_diag && b < t->csr->batch; b++)
        SLA_TRY(sla_cuda_jacobi(t->csr, b, t->absolute, t->inv_diag[b]));
    return SLA_OK;
}

/* the mixed-space error: a block named `name` that is not device memory */
static sla_status need_device(const char *func, const char *name, const void *p, int64_t count)
{
    if (count == 0 || sla_cuda_is_device_pointer(p)) return SLA_OK;
    return sla_error_set(SLA_EINVAL, func, "%s is not CUDA device memory, but the solver's matrix "
                         "is a device view (backend cuda): pass device blocks, or solve a host "
                         "view with a host backend", name);
}

static sla_status cuda_create(sla_solver *s)
{
    const sla_solver_options *o = sla_solver_options_resolved(s);
    const sla_matrix *A = sla_solver_matrix(s);
    if (!A) return SLA_FAIL(SLA_EINVAL, "cuda: a matrix-free operator runs on the host");
    SLA_CU_NEED_DEVICE();
    int64_t n = sla_pattern_nrows(A->pattern);
    if (n != sla_pattern_ncols(A->pattern))
        return SLA_FAIL(SLA_ESHAPE, "cuda: A must be square (%lld × %lld)", (long long)n,
                        (long long)sla_pattern_ncols(A->pattern));
    if (o->precond != SLA_PRECOND_NONE && o->precond != SLA_PRECOND_JACOBI &&
        o->precond != SLA_PRECOND_AUTO)
        return SLA_FAIL(SLA_EUNSUPPORTED, "cuda: preconditioner %s does not run on the device "
                        "(none, jacobi)", sla_precond_name(o->precond));
    SLA_TRY(need_device("sla_solver_create", "A.values", A->values,
                        A->batch * sla_pattern_nnz(A->pattern)));
    cuda_impl *t = (cuda_impl *)calloc(1, sizeof *t);
    if (!t) return SLA_FAIL(SLA_ENOMEM, "cuda: no memory");
    sla_solver_set_impl(s, t);
    SLA_TRY(sla_cuda_csr_create(A->pattern, A->dtype, A->batch, &t->csr));
    SLA_TRY(sla_cuda_csr_set_values(t->csr, A->values));
    SLA_TRY(sla_cuda_space_init(&t->V, &t->cs, n, A->dtype));
    if (o->precond != SLA_PRECOND_NONE) {
        t->absolute = o->method == SLA_METHOD_MINRES;
        t->inv_diag = (void **)calloc((size_t)A->batch, sizeof(void *));
        if (!t->inv_diag) return SLA_FAIL(SLA_ENOMEM, "cuda: no memory");
        for (int64_t b = 0; b < A->batch; b++) SLA_TRY(t->V.vec_create(&t->V, &t->inv_diag[b]));
        SLA_TRY(jacobi_all(t));
    }
    int dev = 0;
    cudaDeviceProp prop;
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        cudaGetLastError();
        snprintf(prop.name, sizeof prop.name, "?");
    }
    char d[512];
    snprintf(d, sizeof d, "%s + %s on CUDA device %d (%s); SpMV: %s", sla_method_name(o->method),
             t->inv_diag ? (t->absolute ? "jacobi |diag|" : "jacobi") : "none", dev, prop.name,
             sla_cuda_csr_describe(t->csr));
    sla_solver_set_description(s, d);
    return SLA_OK;
}

static sla_status cuda_refactor(sla_solver *s)
{
    cuda_impl *t = (cuda_impl *)sla_solver_impl(s);
    const sla_matrix *A = sla_solver_matrix(s);
    SLA_TRY(need_device("sla_solver_refactor", "values", A->values,
                        A->batch * sla_pattern_nnz(A->pattern)));
    SLA_TRY(sla_cuda_csr_set_values(t->csr, A->values));
    return jacobi_all(t);
}

/* column j of batch element b of a [batch][n][k] block to or from a contiguous vector */
template <typename T> struct ColumnF {
    int64_t k, j;
    const T *src;
    T *dst;
    int gather;
    __device__ void operator()(int64_t i) const
    {
        if (gather) dst[i] = src[i * k + j];
        else dst[i * k + j] = src[i];
    }
};

static sla_status column(const cuda_impl *t, int64_t n, int64_t k, int64_t j, const void *src,
                         void *dst, int gather)
{
    if (t->V.dtype == SLA_FLOAT64)
        return sla_for_each(n, ColumnF<double>{k, j, (const double *)src, (double *)dst, gather},
                            "column copy kernel");
    return sla_for_each(n, ColumnF<float>{k, j, (const float *)src, (float *)dst, gather},
                        "column copy kernel");
}

static sla_status cuda_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             const sla_solve_params *p, sla_solve_info *info)
{
    cuda_impl *t = (cuda_impl *)sla_solver_impl(s);
    const sla_solver_options *o = sla_solver_options_resolved(s);
    int64_t n = t->V.n, batch = t->csr->batch;
    size_t es = sla_dtype_size(t->V.dtype);
    SLA_TRY(need_device("sla_solver_solve", "B", B, batch * n * nrhs));
    SLA_TRY(need_device("sla_solver_solve", "X", X, batch * n * nrhs));
    if (nrhs > 1 && !t->col_b) {
        SLA_TRY(t->V.vec_create(&t->V, &t->col_b));
        SLA_TRY(t->V.vec_create(&t->V, &t->col_x));
    }
    sla_krylov_params P = {.rtol = p->rtol, .atol = p->atol, .maxiter = p->maxiter,
                           .restart = o->restart, .damp = 0, .x0_nonzero = p->x0_nonzero,
                           .monitor = o->monitor, .monitor_ctx = o->monitor_ctx,
                           .monitor_every = o->monitor_every, .batch_index = 0, .rhs_index = 0};
    for (int64_t b = 0; b < batch; b++) {
        sla_cuda_operator A;
        sla_cuda_operator_init(&A, t->csr, b, &t->V, t->inv_diag ? t->inv_diag[b] : NULL);
        const char *Bb = (const char *)B + (size_t)(b * n * nrhs) * es;
        char *Xb = (char *)X + (size_t)(b * n * nrhs) * es;
        for (int64_t j = 0; j < nrhs; j++) {
            const void *bv = Bb;
            void *xv = Xb;
            if (nrhs > 1) {
                SLA_TRY(column(t, n, nrhs, j, Bb, t->col_b, 1));
                if (p->x0_nonzero) SLA_TRY(column(t, n, nrhs, j, Xb, t->col_x, 1));
                bv = t->col_b;
                xv = t->col_x;
            }
            P.batch_index = b;
            P.rhs_index = j;
            sla_krylov_result r;
            sla_status st = sla_krylov_run(o->method, &A.op, op, &P, bv, xv, &r);
            if (st < 0)
                return sla_error_wrap(st, "cuda", "batch element %lld, column %lld",
                                      (long long)b, (long long)j);
            if (nrhs > 1) SLA_TRY(column(t, n, nrhs, j, t->col_x, Xb, 0));
            sla_krylov_result_merge(info, &r);
        }
    }
    return SLA_OK;
}

/* the generic layer's block work on device blocks: the solver's space with count entries,
 * on the solver's reduction scratch (the block space is never freed by its user) */
static sla_status cuda_block_space(const sla_solver *s, int64_t count, sla_space *V,
                                   sla_host_space *host)
{
    (void)host;
    const cuda_impl *t = (const cuda_impl *)sla_solver_impl(s);
    if (!t) return SLA_FAIL(SLA_EINVAL, "cuda: solver not set up");
    *V = t->V;
    V->n = count;
    return SLA_OK;
}

static sla_status cuda_pattern_outer(const sla_solver *s, double alpha, const void *u,
                                     const void *v, int64_t nrhs, void *dvalues)
{
    const cuda_impl *t = (const cuda_impl *)sla_solver_impl(s);
    SLA_TRY(need_device("sla_solver_solve_vjp", "dvalues", dvalues, t->csr->batch * t->csr->nnz));
    return sla_cuda_pattern_outer(t->csr, alpha, u, v, nrhs, dvalues);
}

static sla_backend table;
static std::once_flag table_once;

static void table_fill(void)
{
    table.info.name = "cuda";
    table.info.description = "libsla_cuda: CG, BiCGStab, GMRES, MINRES on a CUDA device "
                             "(device vectors, cuSPARSE SpMV, Jacobi), device matrix views";
    table.info.methods = SLA_METHOD_BIT(SLA_METHOD_CG) | SLA_METHOD_BIT(SLA_METHOD_BICGSTAB) |
                         SLA_METHOD_BIT(SLA_METHOD_GMRES) | SLA_METHOD_BIT(SLA_METHOD_MINRES);
    table.info.dtypes = SLA_BOTH_DTYPES;
    table.info.priority = -100;      /* never chosen for host views (those go by priority) */
    table.info.available = sla_cuda_unavailable_reason()[0] == '\0';
    table.info.unavailable_reason = table.info.available ? NULL : sla_cuda_unavailable_reason();
    table.create = cuda_create;
    table.refactor = cuda_refactor;
    table.solve = cuda_solve;
    table.destroy = cuda_destroy;
    table.block_space = cuda_block_space;
    table.memory = SLA_MEM_DEVICE;
    table.pattern_outer = cuda_pattern_outer;
}

extern "C" sla_status sla_cuda_register(void)
{
    std::call_once(table_once, table_fill);
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info info;
        if (sla_backend_get(i, &info) == SLA_OK && strcmp(info.name, "cuda") == 0) return SLA_OK;
    }
    sla_status st = sla_backend_register(&table);
    /* two threads registering at once: the loser finds the name taken, which is success */
    if (st == SLA_EINVAL) {
        for (int64_t i = 0; i < sla_backend_count(); i++) {
            sla_backend_info info;
            if (sla_backend_get(i, &info) == SLA_OK && strcmp(info.name, "cuda") == 0) return SLA_OK;
        }
    }
    return st;
}
