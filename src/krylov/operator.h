/* The operator table the Krylov methods are written against (private to libsla).
 *
 * A Krylov method never touches a matrix or the elements of a vector: it sees vectors as opaque
 * pointers and calls the table for everything (hypre's src/krylov/pcg.h design). One CG thus
 * serves a CSR matrix, a user's matrix-free operator, and later MPI-distributed or GPU vectors:
 * a new kind of operator or vector fills the same table. All scalars crossing the table are
 * double, whatever the dtype of the vectors (dots and norms are accumulated in double).
 *
 * The table has three parts:
 *   vector space   create / free, dot, axpby, and the fused CG kernels;
 *   operator       y = op(A) x, and y = op(A) x fused with the dot xᵀy (CG's pᵀAp);
 *   preconditioner z = M⁻¹ r or M⁻ᵀ r (NULL: identity); inv_diag non-NULL when M⁻¹ is the
 *                  diagonal matrix diag(inv_diag), so that CG can fuse it into its updates.
 *
 * Two operators are provided: CSR (one batch element of a sla_matrix) and matrix-free (a user's
 * sla_apply_fn). Both use the local vector space of kvector.c: contiguous arrays of n elements
 * split into a fixed number of chunks (rows balanced by nonzeros for CSR), each reduction
 * summed chunk by chunk in a fixed order, so results are bit-identical run to run for a given
 * thread count.
 */
#ifndef SLA_KRYLOV_OPERATOR_H
#define SLA_KRYLOV_OPERATOR_H

#include "core/internal.h"

/* Chunks of a local vector space: at most one per thread, at most this many. */
#define SLA_KMAX_CHUNKS 64

typedef struct sla_kop sla_kop;

struct sla_kop {
    /* ---- vector space: vectors of n elements of dtype ---- */
    int64_t n;
    sla_dtype dtype;
    int nchunks;                          /* fixed partition of [0, n) for reductions */
    int64_t bounds[SLA_KMAX_CHUNKS + 1];  /* chunk c is [bounds[c], bounds[c + 1]) */
    /* new vector (contents undefined); NULL and an SLA_ENOMEM message on failure */
    void *(*vec_create)(const sla_kop *K);
    void (*vec_free)(const sla_kop *K, void *v);
    /* xᵀy, accumulated in double */
    double (*dot)(const sla_kop *K, const void *x, const void *y);
    /* y = a·x + b·y; b = 0 overwrites y without reading it; a = b = 0 sets y = 0 without
     * reading x (a vector not yet written may hold NaN) */
    void (*axpby)(const sla_kop *K, double a, const void *x, double b, void *y);
    /* CG's fused update, one pass over the vectors: x += α·p; r −= α·q; *rr = rᵀr; and
     * *rz = rᵀ·diag(inv_diag)·r when inv_diag (Jacobi: z never stored), else *rz = *rr */
    void (*cg_update)(const sla_kop *K, double alpha, const void *p, const void *q, void *x,
                      void *r, const void *inv_diag, double *rr, double *rz);
    /* CG's new direction p = z + β·p with z = diag(inv_diag)·r when inv_diag, else z */
    void (*cg_direction)(const sla_kop *K, double beta, const void *z, const void *inv_diag,
                         void *p);

    /* ---- operator ---- */
    void *actx;
    /* y = op(A)·x. SLA_ECALLBACK (with a message) if a user operator failed. */
    sla_status (*apply)(const sla_kop *K, sla_op op, const void *x, void *y);
    /* y = op(A)·x and *xy = xᵀy in one pass where the operator can (CG's pᵀAp) */
    sla_status (*apply_dot)(const sla_kop *K, sla_op op, const void *x, void *y, double *xy);

    /* ---- preconditioner ---- */
    void *pctx;
    /* z = M⁻¹ r (op = N) or M⁻ᵀ r (op = T); NULL means M = I */
    sla_status (*precond)(const sla_kop *K, sla_op op, const void *r, void *z);
    /* [n] of dtype when M⁻¹ = diag(inv_diag) (Jacobi), else NULL; precond is then set too */
    const void *inv_diag;
};

/* ---- the local vector space (kvector.c) ---- */

/* Resets K and fills its vector-space part for n elements of dtype, chunked by `bounds` when
 * given ([nchunks + 1], e.g. rows balanced by nonzeros) or else into equal parts. nchunks is
 * clamped to [1, SLA_KMAX_CHUNKS]. Operator and preconditioner are left NULL. */
void sla_kvec_init(sla_kop *K, int64_t n, sla_dtype dtype, int nchunks, const int64_t *bounds);

/* Number of chunks to use for a vector space of n elements whose largest kernel moves `bytes`
 * bytes, on the current thread count: 1 when running inside a parallel region or when no kernel
 * is large enough to run in parallel (so small problems give the same bits on any thread
 * count), else sla_par_parts() (one per thread for large problems). */
int sla_kvec_nchunks(int64_t n, double bytes);

/* 1 if a kernel of K moving `bytes` bytes runs its chunks on the OpenMP team (sla_par()); else
 * the calling thread runs the same chunks in the same order, so the result is the same. Each
 * kernel decides for itself: with the SpMV on the team, CG's smaller vector updates may still
 * run on one thread and skip a synchronisation. */
static inline int sla_kpar(const sla_kop *K, double bytes)
{
    return K->nchunks > 1 && sla_par(bytes);
}

/* Bytes one y = A x of a CSR operator moves (values, column indices, row pointers, x and y),
 * for elements of es bytes; the rule of sla_kpar() is applied to it. */
static inline double sla_kcsr_bytes(int64_t n, int64_t nnz, size_t es)
{
    return (double)nnz * (double)(es + 4) + (double)n * (double)(8 + 3 * es);
}

/* apply_dot built from apply and dot, for operators without a fused kernel. */
sla_status sla_kop_generic_apply_dot(const sla_kop *K, sla_op op, const void *x, void *y,
                                     double *xy);

/* ---- operators ---- */

/* CSR operator on batch element b of A (square); the view must outlive K. The row partition
 * (balanced by nonzeros) is also the vector space's chunking. op = N runs the fused SpMV
 * (+ dot) kernel; op = T calls sla_spmv(SLA_OP_T) (a gather on the cached transpose). */
typedef struct sla_kop_csr_ctx {
    const sla_matrix *A;
    int64_t b;
} sla_kop_csr_ctx;
void sla_kop_csr_init(sla_kop *K, sla_kop_csr_ctx *ctx, const sla_matrix *A, int64_t b,
                      int nchunks);

/* Matrix-free operator: y = op(A_b) x through the user's callback. */
typedef struct sla_kop_fn_ctx {
    sla_apply_fn apply;
    void *ctx;
    int64_t b;
} sla_kop_fn_ctx;
void sla_kop_fn_init(sla_kop *K, sla_kop_fn_ctx *ctx, int64_t n, sla_dtype dtype,
                     sla_apply_fn apply, void *apply_ctx, int64_t b, int nchunks);

#endif
