/* Helpers shared by the LU backends umfpack.c and klu.c (private to libsla). Both factor Aᵀ:
 * the CSR arrays of A are the CSC arrays of Aᵀ, which is what UMFPACK and KLU take, so no index
 * or value permutation is needed (docs/direct_lu.md gives the measurement behind the choice). */
#ifndef SLA_DIRECT_LU_UTIL_H
#define SLA_DIRECT_LU_UTIL_H

#include "backend/solver_impl.h"
#include "direct/direct.h"

/** What both LU backends keep per batch element, next to their library objects. */
typedef struct lu_elem {
    double *ax;            /**< [nnz] the values of A (= of Aᵀ in CSC) as double: the iterative
                            *   refinement and the residuals of the solve info read them, and the
                            *   caller's array need not outlive create */
    double rcond;          /**< reciprocal condition estimate of the row-equilibrated A
                            *   (sla_direct_rcond; 0 with a zero pivot) */
    int64_t zero_pivot;    /**< step k of the first zero pivot U_kk = 0, or −1 */
    int64_t small_pivot;   /**< no zero pivot but numerically singular (rcond <
                            *   SLA_RCOND_SINGULAR without options.allow_singular): step k of
                            *   the smallest |U_kk|; else −1 */
    int64_t sing_col, sing_row;   /**< the column and row of A pivoted on at that step */
    int64_t rcond_hint;    /**< sla_direct_rcond's hint for the next factorization (−1) */
} lu_elem;

/** 1 if element e is singular: a zero pivot, or numerically (sla_direct_numerically_singular). */
static inline int lu_singular(const lu_elem *e)
{
    return e->zero_pivot >= 0 || e->small_pivot >= 0;
}

/** [batch] elements, each with its ax [nnz] (zero_pivot −1); NULL on allocation failure. */
lu_elem *lu_elems_create(int64_t batch, int64_t nnz);
void lu_elems_free(lu_elem *e, int64_t batch);

/** The column indices of the pattern as a new int64 array [nnz] (the row indices of Aᵀ in the
 *  CSC form UMFPACK and KLU take); NULL on allocation failure. */
int64_t *lu_colind64(const sla_pattern *p);

/** Copies the values of batch element b of s->A into e->ax (widened to double). */
void lu_elem_load(const sla_solver *s, int64_t b, lu_elem *e);

/** SLA_OK if the factors are valid (the last refactor did not fail) and no batch element is
 *  singular (lu_singular); else SLA_EINVAL, or SLA_ESINGULAR naming the batch element, the
 *  pivot step and the column and row of A (and the rcond estimate when numerically singular). */
sla_status lu_check_factors(const sla_solver *s, int valid, const lu_elem *e);

/** Sets s->rcond to the minimum over the batch (1 for n = 0) and writes into buf [len] the
 *  suffix of the description: " (min over the batch)" for a batch and ", singular (zero pivot
 *  at column c of batch element b)" or ", numerically singular (rcond < SLA_RCOND_SINGULAR,
 *  smallest pivot at column c of batch element b)" for the first singular element; with none,
 *  sla_direct_singular_note (a numerically singular one used under options.allow_singular). */
void lu_summary(sla_solver *s, const lu_elem *e, char *buf, size_t len);

/** The rcond of e from sla_direct_rcond with the backend's solve fn (skipped when a pivot is
 *  zero: rcond 0); sets e->small_pivot = −2 when it is numerically singular, for the backend
 *  to replace by the step of its smallest pivot (lu_small_pivot). Runs in a task of
 *  lu_run_tasks: SLA_ENOMEM or fn's status, no message. */
sla_status lu_estimate_rcond(sla_solver *s, int64_t b, lu_elem *e, sla_factor_solve_fn fn,
                             void *ctx);

/** Sets e->small_pivot to the step k of the smallest |d[k]| of n pivots d, and sing_col =
 *  col[k], sing_row = row[k]. */
void lu_small_pivot(lu_elem *e, int64_t n, const double *d, const int64_t *col, const int64_t *row);

/** Entry i of an array of dtype, as double. */
static inline double lu_get(sla_dtype dtype, const void *x, int64_t i)
{
    return dtype == SLA_FLOAT64 ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

/** Stores v as entry i of an array of dtype. */
static inline void lu_put(sla_dtype dtype, void *x, int64_t i, double v)
{
    if (dtype == SLA_FLOAT64) ((double *)x)[i] = v;
    else ((float *)x)[i] = (float)v;
}

/** out[k] = values[k] as double, k < count (float32 values are widened: the LU backends factor in
 *  double precision whatever the dtype). */
void lu_to_double(sla_dtype dtype, const void *values, int64_t count, double *out);

/** Column j of batch element b of a block [batch][n][nrhs] of dtype, as double: out [n]. */
void lu_load_column(sla_dtype dtype, const void *B, int64_t n, int64_t nrhs, int64_t b, int64_t j,
                    double *out);

/** Stores x [n] as column j of batch element b of X [batch][n][nrhs] of dtype. */
void lu_store_column(sla_dtype dtype, const double *x, int64_t n, int64_t nrhs, int64_t b,
                     int64_t j, void *X);

/** x [n] rounded to the dtype in place (float32: to the nearest float, which is what the caller
 *  receives; float64: unchanged), so that the residual reported is that of the returned X. */
void lu_round_to_dtype(sla_dtype dtype, double *x, int64_t n);

/** ‖b − op(A)·x‖₂ for the CSR pattern p with double values ax; work [n] (used for op = T). */
double lu_residual(sla_op op, const sla_pattern *p, const double *ax, const double *x,
                   const double *b, double *work);

/** Componentwise (sparse) backward error of x for op(A) x = b (Oettli & Prager 1964; the
 *  measure UMFPACK's iterative refinement uses, Arioli, Demmel & Duff 1989):
 *    ω = max_i |r_i| / (|op(A)|·|x| + |b|)_i,   r = b − op(A) x written to r [n];
 *  a row with a zero denominator counts 0 if r_i = 0, else makes ω infinite. den [n] is
 *  workspace. One pass over the values ax (double, CSR of A). */
double lu_backward_error(sla_op op, const sla_pattern *p, const double *ax, const double *x,
                         const double *b, double *r, double *den);

/** ‖x‖₂ of n doubles. */
double lu_norm2(const double *x, int64_t n);

/** Sets info->residual_norm = max_t rnorm[t] and info->relative_residual = max_t rnorm[t]/bnorm[t]
 *  (0 where bnorm[t] = 0) over ntask solved vectors. */
void lu_info_residuals(sla_solve_info *info, int64_t ntask, const double *rnorm,
                       const double *bnorm);

/** Sign (+1 or −1) of the permutation P of [0, n) (the determinant of its permutation matrix):
 *  (−1)^(n − number of cycles). seen [n] is workspace. */
int lu_perm_sign(int64_t n, const int64_t *P, unsigned char *seen);

/** One task of a parallel loop: returns SLA_OK or an error status without setting a message (it
 *  may run in a worker thread, whose message the caller would not see), and may leave the
 *  backend's own status code in *code. */
typedef sla_status (*lu_task_fn)(void *ctx, int64_t t, int64_t *code);

/** Runs fn for t = 0 … ntask−1, in parallel when ntask > 1, then raises the error of the
 *  smallest failing t in the calling thread: "<what> of batch element t/group ran out of memory"
 *  or "... failed (status <code>)". */
sla_status lu_run_tasks(int64_t ntask, int64_t group, lu_task_fn fn, void *ctx, const char *what);

/** A solve on the factors: the arguments of sla_solver_solve and per-task norms. */
typedef struct lu_solve_ctx {
    sla_solver *s;
    sla_op op;
    int64_t nrhs;
    const void *B;
    void *X;
    double *rn, *bn;       /**< [batch·nrhs] residual and right-hand side norms */
} lu_solve_ctx;

/** Checks the factors (lu_check_factors), then runs a solve as batch·nrhs tasks (per_column = 1:
 *  task t is column t % nrhs of batch element t / nrhs) or batch tasks (per_column = 0: every
 *  column of element t), fn receiving an lu_solve_ctx; fills the residual fields of info. what
 *  names the library call in messages. */
sla_status lu_solve_tasks(sla_solver *s, int valid, const lu_elem *lu, sla_op op, int64_t nrhs,
                          const void *B, void *X, sla_solve_info *info, int per_column,
                          lu_task_fn fn, const char *what);

/** A log-determinant gradient on the factors: task b writes g[b]·(A_b⁻ᵀ) on the pattern into
 *  batch element b of dvalues. */
typedef struct lu_grad_ctx {
    sla_solver *s;
    const double *g;
    void *dvalues;
} lu_grad_ctx;

/** Checks the factors (lu_check_factors), then runs fn for every batch element (none if n = 0)
 *  with an lu_grad_ctx. */
sla_status lu_grad_tasks(sla_solver *s, int valid, const lu_elem *lu, const double *g,
                         void *dvalues, lu_task_fn fn, const char *what);

/** Pointer to batch element b of dvalues [batch][nnz] of the solver's dtype. */
void *lu_grad_slice(const lu_grad_ctx *c, int64_t b);

/** Appends src to the string dst of capacity size, truncating. */
void lu_append(char *dst, size_t size, const char *src);

/** Writes a count compactly ("980", "12.3k", "4.56M") into buf [16]. */
void lu_format_count(double x, char *buf);

#endif
