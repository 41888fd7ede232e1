/* The device CSR matrix (sla/cuda.h): the pattern's structure copied to the device once,
 * borrowed device values, SpMV by cuSPARSE (CSR_ALG2: deterministic) or by the own kernel of
 * spmv_own.cuh, and op = T as op = N on an explicit Aᵀ (a transposed cuSPARSE product or a
 * scatter would add in an order that depends on timing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cusparse.h>

#include "cuda/spmv_own.cuh"

typedef struct sp_state {
    cusparseHandle_t h;
    cusparseSpMatDescr_t A, At;      /* At NULL until Aᵀ is built */
    void *buf;
    size_t bufsize;
} sp_state;

static cudaDataType value_type(sla_dtype d) { return d == SLA_FLOAT64 ? CUDA_R_64F : CUDA_R_32F; }

static sla_status sp_status(cusparseStatus_t e, const char *func, const char *what)
{
    if (e == CUSPARSE_STATUS_SUCCESS) return SLA_OK;
    return sla_error_set(e == CUSPARSE_STATUS_ALLOC_FAILED ? SLA_ENOMEM : SLA_EBACKEND, func,
                         "%s: %s (%s)", what, cusparseGetErrorName(e), cusparseGetErrorString(e));
}
#define SLA_SP(call, what)                                                   \
    do {                                                                     \
        cusparseStatus_t sla_sp_e_ = (call);                                 \
        if (sla_sp_e_ != CUSPARSE_STATUS_SUCCESS) return sp_status(sla_sp_e_, __func__, (what)); \
    } while (0)

/* a device copy of n elements of `size` bytes from host memory */
static sla_status upload(void **dst, const void *src, size_t n, size_t size, const char *what)
{
    *dst = NULL;
    SLA_CU(cudaMalloc(dst, n ? n * size : size), what);
    if (n) SLA_CU(cudaMemcpy(*dst, src, n * size, cudaMemcpyHostToDevice), what);
    return SLA_OK;
}

static void sp_free(sp_state *s)
{
    if (!s) return;
    if (s->A) cusparseDestroySpMat(s->A);
    if (s->At) cusparseDestroySpMat(s->At);
    if (s->buf) cudaFree(s->buf);
    if (s->h) cusparseDestroy(s->h);
    free(s);
}

/* the descriptor of one CSR (values set per product) and the buffer a product needs */
static sla_status sp_matrix(sp_state *s, const sla_cuda_csr *c, int64_t rows, int64_t cols,
                            int64_t *rp, int32_t *ci, cusparseSpMatDescr_t *M)
{
    cudaDataType t = value_type(c->dtype);
    void *vals = c->scratch.partials;           /* any device pointer: bufferSize reads nothing */
    SLA_SP(cusparseCreateCsr(M, rows, cols, c->nnz, rp, ci, vals, CUSPARSE_INDEX_64I,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, t),
           "cusparseCreateCsr (int64 row pointers, int32 column indices)");
    cusparseDnVecDescr_t x, y;
    SLA_SP(cusparseCreateDnVec(&x, cols, vals, t), "cusparseCreateDnVec");
    cusparseStatus_t e = cusparseCreateDnVec(&y, rows, vals, t);
    if (e != CUSPARSE_STATUS_SUCCESS) {
        cusparseDestroyDnVec(x);
        return sp_status(e, __func__, "cusparseCreateDnVec");
    }
    double one = 1, zero = 0;
    float onef = 1, zerof = 0;
    const void *a = c->dtype == SLA_FLOAT64 ? (const void *)&one : (const void *)&onef;
    const void *b = c->dtype == SLA_FLOAT64 ? (const void *)&zero : (const void *)&zerof;
    size_t need = 0;
    e = cusparseSpMV_bufferSize(s->h, CUSPARSE_OPERATION_NON_TRANSPOSE, a, *M, x, b, y, t,
                                CUSPARSE_SPMV_CSR_ALG2, &need);
    cusparseDestroyDnVec(x);
    cusparseDestroyDnVec(y);
    if (e != CUSPARSE_STATUS_SUCCESS) return sp_status(e, __func__, "cusparseSpMV_bufferSize");
    if (need > s->bufsize) {
        if (s->buf) cudaFree(s->buf);
        s->buf = NULL;
        s->bufsize = 0;
        SLA_CU(cudaMalloc(&s->buf, need), "cudaMalloc (cuSPARSE SpMV buffer)");
        s->bufsize = need;
    }
    return SLA_OK;
}

/* cuSPARSE unless SLA_CUDA_SPMV=own; a cuSPARSE that refuses falls back with the reason */
static void choose_spmv(sla_cuda_csr *c)
{
    const char *env = getenv("SLA_CUDA_SPMV");
    if (env && strcmp(env, "own") == 0) {
        snprintf(c->describe, sizeof c->describe, "own kernel (%d threads per row; SLA_CUDA_SPMV=own)", c->lanes);
        return;
    }
    sp_state *s = (sp_state *)calloc(1, sizeof *s);
    sla_status st = s ? SLA_OK : SLA_FAIL(SLA_ENOMEM, "no memory");
    if (st == SLA_OK) st = sp_status(cusparseCreate(&s->h), __func__, "cusparseCreate");
    if (st == SLA_OK) st = sp_matrix(s, c, c->nrows, c->ncols, c->rowptr, c->colind, &s->A);
    if (st != SLA_OK) {
        sp_free(s);
        snprintf(c->describe, sizeof c->describe, "own kernel (%d threads per row; cuSPARSE "
                 "refused: %.90s)", c->lanes, sla_last_error());
        return;
    }
    c->sp = s;
    c->use_cusparse = 1;
    snprintf(c->describe, sizeof c->describe, "cuSPARSE SpMV (CSR_ALG2, int64/int32 indices)");
}

extern "C" sla_status sla_cuda_csr_create(const sla_pattern *p, sla_dtype dtype, int64_t batch,
                                          sla_cuda_csr **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(p, "pattern is NULL");
    SLA_CHECK_ARG(batch >= 1, "batch = %lld < 1", (long long)batch);
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return SLA_FAIL(SLA_EDTYPE, "dtype %d is not float64 or float32", (int)dtype);
    SLA_CU_NEED_DEVICE();
    sla_cuda_csr *c = (sla_cuda_csr *)calloc(1, sizeof *c);
    if (!c) return SLA_FAIL(SLA_ENOMEM, "no memory for the device matrix");
    c->pattern = sla_pattern_retain((sla_pattern *)p);
    c->nrows = sla_pattern_nrows(p);
    c->ncols = sla_pattern_ncols(p);
    c->nnz = sla_pattern_nnz(p);
    c->batch = batch;
    c->dtype = dtype;
    int64_t mean = c->nrows ? (c->nnz + c->nrows - 1) / c->nrows : 1;
    for (c->lanes = 1; c->lanes < 32 && c->lanes * 2 <= mean; c->lanes *= 2) {}
    sla_space V;
    sla_status st = sla_cuda_space_init(&V, &c->scratch, 0, dtype);
    if (st == SLA_OK)
        st = upload((void **)&c->rowptr, sla_pattern_rowptr(p), (size_t)c->nrows + 1,
                    sizeof(int64_t), "row pointers to the device");
    if (st == SLA_OK)
        st = upload((void **)&c->colind, sla_pattern_colind(p), (size_t)c->nnz, sizeof(int32_t),
                    "column indices to the device");
    if (st != SLA_OK) {
        sla_cuda_csr_free(&c);
        return st;
    }
    choose_spmv(c);
    *out = c;
    return SLA_OK;
}

extern "C" const char *sla_cuda_csr_describe(const sla_cuda_csr *c) { return c ? c->describe : ""; }

extern "C" void sla_cuda_csr_free(sla_cuda_csr **pc)
{
    if (!pc || !*pc) return;
    sla_cuda_csr *c = *pc;
    *pc = NULL;
    sp_free((sp_state *)c->sp);
    cudaFree(c->rowptr);
    cudaFree(c->colind);
    cudaFree(c->rowptr_t);
    cudaFree(c->colind_t);
    cudaFree(c->perm_t);
    cudaFree(c->values_t);
    sla_cuda_space_free(&c->scratch);
    sla_pattern_free(&c->pattern);
    free(c);
}

/* ---- values ---- */

template <typename T> struct NonfiniteValuesF {
    const T *v;
    __device__ void operator()(int64_t i, double *a) const
    {
        if (!isfinite((double)v[i])) a[0] = fmin(a[0], (double)i);
    }
};

template <typename T> struct GatherF {
    int64_t nnz;
    const int64_t *perm;
    const T *v;
    T *vt;
    __device__ void operator()(int64_t i) const { vt[i] = v[(i / nnz) * nnz + perm[i % nnz]]; }
};

static sla_status gather_transpose(sla_cuda_csr *c)
{
    int64_t n = c->batch * c->nnz;
    if (c->dtype == SLA_FLOAT64)
        return sla_for_each(n, GatherF<double>{c->nnz, c->perm_t, (const double *)c->values,
                                               (double *)c->values_t}, "Aᵀ value gather");
    return sla_for_each(n, GatherF<float>{c->nnz, c->perm_t, (const float *)c->values,
                                          (float *)c->values_t}, "Aᵀ value gather");
}

extern "C" sla_status sla_cuda_csr_set_values(sla_cuda_csr *c, const void *values)
{
    SLA_CHECK_ARG(c, "matrix is NULL");
    SLA_CHECK_ARG(values || c->nnz == 0, "values is NULL");
    double first = INFINITY;
    int64_t n = c->batch * c->nnz;
    if (c->dtype == SLA_FLOAT64)
        SLA_TRY((sla_reduce<1, SLA_RMIN>(&c->scratch, n, NonfiniteValuesF<double>{(const double *)values}, &first)));
    else
        SLA_TRY((sla_reduce<1, SLA_RMIN>(&c->scratch, n, NonfiniteValuesF<float>{(const float *)values}, &first)));
    if (isfinite(first)) {
        int64_t bad = (int64_t)first, q = bad % c->nnz;
        const int64_t *ri = sla_pattern_rowind(c->pattern);
        return SLA_FAIL(SLA_ENONFINITE, "values: value at batch %lld, slot %lld (row %lld, col %d) "
                        "is not finite", (long long)(bad / c->nnz), (long long)q,
                        (long long)(ri ? ri[q] : -1), sla_pattern_colind(c->pattern)[q]);
    }
    c->values = values;
    return c->values_t ? gather_transpose(c) : SLA_OK;
}

sla_status sla_cuda_csr_transpose(sla_cuda_csr *c)
{
    if (c->values_t) return SLA_OK;
    const sla_pattern *t;
    const int64_t *perm;
    SLA_TRY(sla_pattern_cached_transpose(c->pattern, &t, &perm));
    size_t es = sla_dtype_size(c->dtype);
    SLA_TRY(upload((void **)&c->rowptr_t, sla_pattern_rowptr(t), (size_t)c->ncols + 1,
                   sizeof(int64_t), "Aᵀ row pointers to the device"));
    SLA_TRY(upload((void **)&c->colind_t, sla_pattern_colind(t), (size_t)c->nnz, sizeof(int32_t),
                   "Aᵀ column indices to the device"));
    SLA_TRY(upload((void **)&c->perm_t, perm, (size_t)c->nnz, sizeof(int64_t),
                   "Aᵀ permutation to the device"));
    void *vt = NULL;
    int64_t nv = c->batch * c->nnz;
    SLA_CU(cudaMalloc(&vt, (size_t)(nv > 0 ? nv : 1) * es),
           "cudaMalloc (Aᵀ values)");
    c->values_t = vt;
    if (c->values) SLA_TRY(gather_transpose(c));
    if (c->use_cusparse) {
        sp_state *s = (sp_state *)c->sp;
        SLA_TRY(sp_matrix(s, c, c->ncols, c->nrows, c->rowptr_t, c->colind_t, &s->At));
    }
    return SLA_OK;
}

/* ---- products ---- */

template <typename T, bool DOT>
static sla_status own_t(int lanes, int64_t rows, const int64_t *rp, const int32_t *ci,
                        const T *v, const T *x, T *y, double alpha, double beta, const T *w,
                        const sla_cuda_space *scratch, double *xy)
{
    if (rows == 0) {
        if (xy) *xy = 0;
        return SLA_OK;
    }
    int64_t need = (rows * lanes + SLA_CUDA_THREADS - 1) / SLA_CUDA_THREADS;
    unsigned grid = DOT ? SLA_CUDA_REDUCE_BLOCKS : sla_cuda_blocks(need * SLA_CUDA_THREADS);
    double *part = DOT ? scratch->partials : NULL;
    T a = (T)alpha, b = (T)beta;
    int bz = beta == 0;
#define SLA_OWN_L(L) sla_spmv_own<T, L, DOT><<<grid, SLA_CUDA_THREADS>>>(rows, rp, ci, v, x, y, a, b, bz, w, part)
    switch (lanes) {
    case 1: SLA_OWN_L(1); break;
    case 2: SLA_OWN_L(2); break;
    case 4: SLA_OWN_L(4); break;
    case 8: SLA_OWN_L(8); break;
    case 16: SLA_OWN_L(16); break;
    default: SLA_OWN_L(32); break;
    }
#undef SLA_OWN_L
    SLA_CU_LAUNCH("SpMV kernel");
    if (!DOT) return SLA_OK;
    sla_reduce_final<1, SLA_RSUM><<<1, SLA_CUDA_REDUCE_BLOCKS>>>(scratch->partials, scratch->result);
    SLA_CU_LAUNCH("SpMV dot (final)");
    SLA_CU(cudaMemcpy(xy, scratch->result, sizeof(double), cudaMemcpyDeviceToHost),
           "SpMV dot to host");
    return SLA_OK;
}

static sla_status sp_apply(sla_cuda_csr *c, int t, int64_t b, double alpha, const void *x,
                           double beta, void *y)
{
    sp_state *s = (sp_state *)c->sp;
    cudaDataType ty = value_type(c->dtype);
    size_t es = sla_dtype_size(c->dtype);
    int64_t rows = t ? c->ncols : c->nrows, cols = t ? c->nrows : c->ncols;
    cusparseSpMatDescr_t M = t ? s->At : s->A;
    const char *vals = (const char *)(t ? c->values_t : c->values) + (size_t)(b * c->nnz) * es;
    SLA_SP(cusparseCsrSetPointers(M, t ? c->rowptr_t : c->rowptr, t ? c->colind_t : c->colind,
                                  (void *)vals), "cusparseCsrSetPointers");
    cusparseDnVecDescr_t vx, vy;
    SLA_SP(cusparseCreateDnVec(&vx, cols, (void *)x, ty), "cusparseCreateDnVec");
    cusparseStatus_t e = cusparseCreateDnVec(&vy, rows, y, ty);
    if (e == CUSPARSE_STATUS_SUCCESS) {
        float af = (float)alpha, bf = (float)beta;
        const void *pa = c->dtype == SLA_FLOAT64 ? (const void *)&alpha : (const void *)&af;
        const void *pb = c->dtype == SLA_FLOAT64 ? (const void *)&beta : (const void *)&bf;
        e = cusparseSpMV(s->h, CUSPARSE_OPERATION_NON_TRANSPOSE, pa, M, vx, pb, vy, ty,
                         CUSPARSE_SPMV_CSR_ALG2, s->buf);
        cusparseDestroyDnVec(vy);
    }
    cusparseDestroyDnVec(vx);
    return sp_status(e, __func__, "cusparseSpMV");
}

/* y = alpha·op(A_b)·x + beta·y, and *xy = wᵀy when xy (the own kernel fuses it) */
static sla_status apply(sla_cuda_csr *c, sla_op op, int64_t b, double alpha, const void *x,
                        double beta, void *y, const void *w, double *xy)
{
    int t = op == SLA_OP_T;
    if (t) SLA_TRY(sla_cuda_csr_transpose(c));
    if (c->use_cusparse) {
        sla_status st = sp_apply(c, t, b, alpha, x, beta, y);
        if (st == SLA_EBACKEND && strstr(sla_last_error(), "NOT_SUPPORTED")) {
            /* a cuSPARSE that accepted the descriptors but refuses the product: the own
             * kernel from now on (sla_cuda_csr_describe() says so) */
            c->use_cusparse = 0;
            snprintf(c->describe, sizeof c->describe, "own kernel (%d threads per row; cuSPARSE "
                     "SpMV refused at run time: %.80s)", c->lanes, sla_last_error());
            return apply(c, op, b, alpha, x, beta, y, w, xy);
        }
        SLA_TRY(st);
        if (!xy) return SLA_OK;
        sla_space V;
        V.n = t ? c->ncols : c->nrows;
        V.dtype = c->dtype;
        V.ctx = &c->scratch;
        /* the space's dot on the matrix's scratch */
        return sla_cuda_dot(&V, w, y, xy);
    }
    size_t es = sla_dtype_size(c->dtype);
    int64_t rows = t ? c->ncols : c->nrows;
    const int64_t *rp = t ? c->rowptr_t : c->rowptr;
    const int32_t *ci = t ? c->colind_t : c->colind;
    const char *v = (const char *)(t ? c->values_t : c->values) + (size_t)(b * c->nnz) * es;
    if (c->dtype == SLA_FLOAT64) {
        const double *vd = (const double *)v, *xd = (const double *)x, *wd = (const double *)w;
        double *yd = (double *)y;
        return xy ? own_t<double, true>(c->lanes, rows, rp, ci, vd, xd, yd, alpha, beta, wd, &c->scratch, xy)
                  : own_t<double, false>(c->lanes, rows, rp, ci, vd, xd, yd, alpha, beta, wd, &c->scratch, xy);
    }
    const float *vf = (const float *)v, *xf = (const float *)x, *wf = (const float *)w;
    float *yf = (float *)y;
    return xy ? own_t<float, true>(c->lanes, rows, rp, ci, vf, xf, yf, alpha, beta, wf, &c->scratch, xy)
              : own_t<float, false>(c->lanes, rows, rp, ci, vf, xf, yf, alpha, beta, wf, &c->scratch, xy);
}

extern "C" sla_status sla_cuda_spmv(sla_cuda_csr *c, sla_op op, int64_t b, double alpha,
                                    const void *x, double beta, void *y)
{
    SLA_CHECK_ARG(c && c->values, "matrix is NULL or has no values (sla_cuda_csr_set_values)");
    SLA_CHECK_ARG(op == SLA_OP_N || op == SLA_OP_T, "op = %d is not N or T", (int)op);
    SLA_CHECK_ARG(b >= 0 && b < c->batch, "batch element %lld out of [0, %lld)", (long long)b,
                  (long long)c->batch);
    return apply(c, op, b, alpha, x, beta, y, NULL, NULL);
}

/* ---- the operator table ---- */

#define OPCTX(A) ((const sla_cuda_operator *)(A)->ctx)

static sla_status op_apply(const sla_operator *A, sla_op op, const void *x, void *y)
{
    const sla_cuda_operator *o = OPCTX(A);
    return apply(o->csr, op, o->b, 1.0, x, 0.0, y, NULL, NULL);
}

static sla_status op_apply_dot(const sla_operator *A, sla_op op, const void *x, void *y, double *xy)
{
    const sla_cuda_operator *o = OPCTX(A);
    return apply(o->csr, op, o->b, 1.0, x, 0.0, y, x, xy);
}

template <typename T> struct DiagScaleF {
    const T *d, *r;
    T *z;
    __device__ void operator()(int64_t i) const { z[i] = d[i] * r[i]; }
};

/* Jacobi: z = diag(inv_diag)·r, the same for op N and T */
static sla_status op_jacobi(const sla_operator *A, sla_op op, const void *r, void *z)
{
    (void)op;
    int64_t n = A->domain->n;
    if (A->domain->dtype == SLA_FLOAT64)
        return sla_for_each(n, DiagScaleF<double>{(const double *)A->inv_diag, (const double *)r,
                                                  (double *)z}, "Jacobi kernel");
    return sla_for_each(n, DiagScaleF<float>{(const float *)A->inv_diag, (const float *)r,
                                             (float *)z}, "Jacobi kernel");
}

extern "C" void sla_cuda_operator_init(sla_cuda_operator *o, sla_cuda_csr *c, int64_t b,
                                       const sla_space *V, const void *inv_diag)
{
    memset(o, 0, sizeof *o);
    o->csr = c;
    o->b = b;
    o->op.domain = o->op.range = V;
    o->op.ctx = o;
    o->op.apply = op_apply;
    o->op.apply_dot = op_apply_dot;
    o->op.inv_diag = inv_diag;
    o->op.precond = inv_diag ? op_jacobi : NULL;
    o->op.threading = SLA_THREADS_CALLER;
}
