/* Private structures and kernels of the smoothed-aggregation AMG (src/precond/amg*.c).
 *
 * The hierarchy is stored in double whatever the dtype of the input matrix: real (float64,
 * float32 input) or complex (complex128, complex64 input: every value, vector and diagonal of the
 * hierarchy is then a double complex, stored as (re, im) pairs in the double arrays below, twice
 * their real length). The value kernels are templates (t_amg_*.h through core/instantiate.h,
 * real and complex instances; the hierarchy uses the double and double complex ones) dispatched
 * on amg_csr.cplx (AMG_DISPATCH). Every matrix is CSR
 * with int64 row pointers and int32 column indices sorted within each row (the forward and
 * backward Gauss–Seidel sweeps rely on the order to stop at the diagonal). */
#ifndef SLA_PRECOND_AMG_INTERNAL_H
#define SLA_PRECOND_AMG_INTERNAL_H

#include "precond/amg.h"

/* Set-up loops over levels below this many rows run serially. The kernels of the V-cycle (run
 * at every preconditioner application) follow the library's rule instead (sla_par_parts() and
 * sla_par(), core/internal.h): a level gets several smoother blocks only when a sweep moves at
 * least SLA_PAR_MIN_BYTES (amg_sweep_bytes below), and each vector or SpMV loop runs on the team
 * only above that many bytes. */
#define AMG_PARALLEL_MIN 20000

/* Largest coarsest level factored densely when coarsening stalls above coarse_size; above this
 * the coarsest level is smoothed instead (a few symmetric sweeps). */
#define AMG_DENSE_MAX 1500

/* Lanczos steps of the ρ(D⁻¹A) estimate, and the largest level 0 that gets one (see amg.c). */
#define AMG_LANCZOS_STEPS 10
#define AMG_LANCZOS_FINE_MAX 100000

typedef struct amg_csr {
    int64_t nrows, ncols;
    int64_t *rp;       /* [nrows + 1] */
    int32_t *ci;       /* [nnz], sorted within each row */
    double *v;         /* [nnz] */
    int borrowed;      /* rp and ci belong to a pattern (level 0): not freed here */
    int borrowed_v;    /* v is the caller's float64 / complex128 array (level 0): not freed here */
    int cplx;          /* values (and the vectors the kernels take with it) are double complex */
    int conj_r;        /* every matrix of a complex hierarchy of a Hermitian A: restriction by Pᴴ
                        * rather than Pᵀ (complex symmetric A), Galerkin Pᴴ A P, Lanczos for ρ */
} amg_csr;

static inline int64_t amg_nnz(const amg_csr *M) { return M->rp ? M->rp[M->nrows] : 0; }

/* doubles per value of M (2 for a complex hierarchy) */
static inline size_t amg_es(const amg_csr *M) { return M->cplx ? 2 : 1; }

/* the double or the double complex instance of a value kernel, by the matrix M */
#define AMG_DISPATCH(M, name, args) ((M)->cplx ? name##_c128 args : name##_f64 args)

/* Bytes one smoother sweep (or residual) of A moves: values and column indices, row pointers,
 * and b, x, the inverse diagonal and the result per row; the rule of sla_par_parts() is applied
 * to it for the smoother blocks. */
static inline double amg_sweep_bytes(const amg_csr *M)
{
    return 12.0 * (double)amg_nnz(M) + 40.0 * (double)M->nrows;
}

/* Row blocks of the hybrid smoother: Gauss–Seidel inside a block, Jacobi between blocks (the
 * values of other blocks are read from a snapshot taken before the sweep), so a sweep is
 * deterministic for a given block count. halo lists the columns that some row reads from
 * another block: only those are copied into the snapshot. */
typedef struct amg_blocks {
    int n;
    int64_t *bounds;   /* [n + 1] row ranges, split by nonzeros */
    int64_t nhalo;
    int32_t *halo;     /* [nhalo] */
    int64_t nbrows;
    int32_t *brows;    /* [nbrows] rows that read another block (their residual waits for it) */
    double *bdinv;     /* [nbrows] their l1 Gauss–Seidel factors (the others' are 1 / a_ii) */
} amg_blocks;

/* Restriction by Pᵀ (amg_restrict.c): coarse columns fed by the rows of more than one smoother
 * block, and the fine rows that feed any of them (ascending); none with one block. */
typedef struct amg_restrict {
    unsigned char *shared;   /* [ncoarse] */
    int64_t nrows;
    int32_t *rows;           /* [nrows] */
    double *rv;              /* [nrows] their residuals (amg_gs_forward_restrict) */
} amg_restrict;

typedef struct amg_level {
    amg_csr A;             /* operator of this level (level 0: A_b in double) */
    amg_csr At;            /* Aᵀ, built on the first op = T apply when A_0 is not symmetric */
    int64_t *atperm;       /* At.v[k] = A.v[atperm[k]] */
    amg_blocks blk, blkt;  /* smoother blocks of A and of At (same bounds, own halos) */
    double *dinv;          /* [n] smoother's inverse diagonal: damped Jacobi's; for l1 Gauss–Seidel
                            * only with the transposed cycle (blk.bdinv and 1 / a_ii otherwise) */
    double *diag;          /* [n] diagonal of A, during this level's set-up (and update) only */
    amg_csr P;             /* prolongator (n × nc); absent on the coarsest level. Restriction is
                            * Pᵀ applied through P (no R is stored) */
    amg_restrict rst;      /* its shared columns (parallel restriction) */
    int32_t *agg;          /* [n] aggregate of each row, −1 for an isolated row */
    int64_t nagg;
    double theta;          /* strength threshold used on this level */
    double rho;            /* estimate of ρ(D⁻¹A) */
    double omega;          /* prolongator smoothing weight 4 / (3 ρ(D⁻¹A)) */
    double *b, *x, *r, *xold;  /* work vectors [n] */
    int64_t peak_rss;      /* process peak RSS once this level's set-up was done (create) */
} amg_level;

typedef enum amg_coarse_kind {
    AMG_COARSE_NONE = 0,       /* n = 0 */
    AMG_COARSE_CHOLESKY,       /* dense LLᵀ (LAPACK dpotrf) */
    AMG_COARSE_LU,             /* dense LU with partial pivoting (LAPACK dgetrf) */
    AMG_COARSE_SMOOTH          /* singular or too large: symmetric smoother sweeps */
} amg_coarse_kind;

typedef struct amg_coarse {
    amg_coarse_kind kind;
    int n, cplx;
    double *f;         /* [n][n] column-major factor (double complex pairs when cplx) */
    int *ipiv;         /* [n] (LU) */
} amg_coarse;

struct sla_amg {
    sla_amg_options opt;
    sla_dtype dtype;
    int64_t n;
    sla_pattern *pattern;      /* retained: level 0 borrows its row pointers and columns */
    int nlevels;
    amg_level *lev;            /* [max_levels] */
    amg_coarse coarse;
    int sym_known, symmetric;  /* A_0 exactly symmetric (checked on the first op = T apply) */
    int cplx, hermitian;       /* complex hierarchy; A_0 Hermitian (R = Pᴴ) or not (R = Pᵀ) */
    int nthreads;              /* OpenMP threads at create: the smoother block count */
    char desc[512];
};

/* amg_csr.c: CSR helpers. */
void amg_csr_free(amg_csr *M);
sla_status amg_csr_alloc(amg_csr *M, int64_t nrows, int64_t ncols, int64_t nnz);
/* Mt = Mᵀ (pattern, values, and perm: Mt.v[k] = M.v[perm[k]]; perm = NULL: none kept). */
/* Mt = pattern of Mᵀ, no values (rows of Mt list M's rows ascending). */
sla_status amg_transpose_pattern(const amg_csr *M, amg_csr *Mt);
sla_status amg_transpose(const amg_csr *M, amg_csr *Mt, int64_t **perm);
/* Mt.v[k] = M.v[perm[k]]. */
void amg_permute_values(const amg_csr *M, const int64_t *perm, amg_csr *Mt);
/* Sorts idx[0..n) ascending (n small: insertion; else qsort). */
void amg_sort_int32(int32_t *idx, int64_t n);

/* amg_aggregate.c: strength of connection and aggregation (Vaněk, Mandel & Brezina 1996). */
sla_status amg_aggregate(const amg_csr *A, const double *diag, double theta,
                         const amg_blocks *blk, int32_t *agg, int64_t *nagg);

/* amg_spectral.c: ρ(D⁻¹A): Gershgorin bound, and min(bound, k-step Lanczos Ritz value). */
double amg_rho_bound(const amg_csr *A, const double *diag);
sla_status amg_rho_estimate(const amg_csr *A, const amg_blocks *blk, const double *diag,
                            int steps, double *rho);

/* amg_prolong.c: smoothed prolongator P = (I − ω D⁻¹ A) P_tent. */
sla_status amg_prolong_symbolic(const amg_csr *A, const int32_t *agg, int64_t nagg, amg_csr *P);
sla_status amg_prolong_numeric(const amg_csr *A, const double *diag, const int32_t *agg,
                               double omega, amg_csr *P);

/* amg_galerkin.c: C = Pᵀ A P without A·P (PT: the pattern of Pᵀ), pattern and values; and
 * values only on C's stored pattern, in the same order of operations. */
sla_status amg_galerkin(const amg_csr *A, const amg_csr *P, const amg_csr *PT, amg_csr *C);
sla_status amg_galerkin_numeric(const amg_csr *A, const amg_csr *P, const amg_csr *PT,
                                amg_csr *C);

/* amg_restrict.c: b_c = Pᵀ r through P, in R = Pᵀ's order of summation whatever the threads. */
sla_status amg_restrict_build(const amg_csr *P, const amg_blocks *blk, amg_restrict *rs);
void amg_restrict_apply(const amg_csr *P, const amg_blocks *blk, const amg_restrict *rs,
                        const double *r, double *bc);
void amg_restrict_free(amg_restrict *rs);

/* amg_smooth.c: smoother set-up and the kernels of the cycle. */
sla_status amg_blocks_build(const amg_csr *A, int nblocks, amg_blocks *blk);
sla_status amg_blocks_halo(const amg_csr *A, amg_blocks *blk);
void amg_blocks_free(amg_blocks *blk);
/* diag[i] = a_ii (0 if not stored); returns the first row with a zero diagonal, or −1. */
int64_t amg_diagonal(const amg_csr *A, double *diag);
/* SLA_EINVAL naming the level and the row whose diagonal is missing or zero. */
sla_status amg_diagonal_error(const amg_csr *A, int level, int64_t bad);
/* Jacobi: dinv = 4/(3ρ) / diag, ρ ≈ ρ(D⁻¹A). l1 hybrid Gauss–Seidel: blk->bdinv, the factors of
 * the boundary rows (the kernels form 1 / a_ii for the others when their dinv is NULL). */
sla_status amg_smoother_setup(const amg_csr *A, amg_blocks *blk, const double *diag, double rho,
                              sla_amg_smoother smoother, double *dinv);
/* Every row's l1 Gauss–Seidel factor (for the transposed cycle, whose blocks' boundary rows
 * differ), the same bits as the kernels form. */
void amg_gs_full_dinv(const amg_csr *A, const amg_blocks *blk, double *dinv);
/* Forward (reverse = 0) or backward (reverse = 1) hybrid Gauss–Seidel sweep on b; dinv NULL: the
 * factors of blk (amg_smoother_setup), else dinv's. zero_guess:
 * the sweep starts from x = 0 whatever x holds (a forward one then reads only the strictly lower
 * in-block part of each row). xold is the snapshot of the halo columns. */
void amg_gs_sweep(const amg_csr *A, const amg_blocks *blk, const double *dinv, const double *b,
                  double *x, double *xold, int reverse, int zero_guess);
/* The last forward pre-smoothing sweep fused with the residual r = b − A x: the residual of a
 * row is computed as soon as the sweep has passed its last column, while the row is still in
 * cache, saving one pass over A; rows reading another block wait for the end of the sweep. The
 * results are those of amg_gs_sweep followed by amg_residual, bit for bit. */
void amg_gs_forward_residual(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                             const double *b, double *x, double *xold, double *r, int zero_guess);
/* amg_gs_forward_residual with the restriction fused: bc = Pᵀ r, r never stored (8 bytes per
 * unknown), bit for bit amg_gs_forward_residual then amg_restrict_apply. rs must come from
 * amg_restrict_build on blk (its shared entries include those fed by blk's boundary rows). */
void amg_gs_forward_restrict(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                             const double *b, double *x, double *xold, const amg_csr *P,
                             const amg_restrict *rs, double *bc, int zero_guess);
/* One damped Jacobi sweep x += dinv ∘ (b − A x), r as scratch; x = dinv ∘ b if zero_guess. */
void amg_jacobi_sweep(const amg_csr *A, const amg_blocks *blk, const double *dinv,
                      const double *b, double *x, double *r, int zero_guess);
/* r = b − A x. */
void amg_residual(const amg_csr *A, const amg_blocks *blk, const double *b, const double *x,
                  double *r);
/* y = M x (add = 0) or y += M x (add = 1). */
void amg_spmv(const amg_csr *M, const double *x, double *y, int add);

/* amg_coarse.c: dense direct solve of the coarsest level. */
sla_status amg_coarse_factor(const amg_csr *A, int64_t coarse_size, amg_coarse *c);
void amg_coarse_solve(const amg_coarse *c, int trans, const double *b, double *x);
void amg_coarse_free(amg_coarse *c);

/* amg_convert.c: dtype conversions at the boundary (one template for float64 and float32). */
void amg_to_double(sla_dtype dtype, const void *src, int64_t offset, int64_t n, double *dst);
void amg_from_double(sla_dtype dtype, const double *src, int64_t n, void *dst);

#endif
