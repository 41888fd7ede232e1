/* Algebraic multigrid (internal API, used as a preconditioner by the Krylov layer).
 *
 * One hierarchy per matrix (batch element b of a view). The hierarchy is built from the
 * pattern and values once (create); update() recomputes only what depends on values, keeping
 * the coarsening (aggregates / C-F splitting and the prolongator pattern) so that a refactor in
 * a training loop is cheap. apply() runs one V-cycle: z ≈ A⁻¹ r (op = N) or A⁻ᵀ r (op = T),
 * a symmetric operator for symmetric A (so it can precondition CG and MINRES).
 *
 * Method: smoothed aggregation (Vaněk, Mandel & Brezina, Computing 56 (1996) 179–196) with an l1
 * hybrid Gauss–Seidel smoother (Baker, Falgout, Kolev & Yang, SIAM J. Sci. Comput. 33 (2011)
 * 2864–2887) and a dense Cholesky / LU coarsest level; docs/amg.md has the details, the
 * measurements behind the defaults and the comparison with hypre's BoomerAMG.
 * Threads: OpenMP in set-up and cycle; results are bit-identical run to run for the thread count
 * at create (the smoother's blocks are fixed then), whatever the thread count at apply.
 * The functions are exported (SLA_API) only so that tests/c/test_amg.c and bench/bench_amg.c can
 * call them; they are not part of the installed API. */
#ifndef SLA_PRECOND_AMG_H
#define SLA_PRECOND_AMG_H

#include "core/internal.h"

typedef struct sla_amg sla_amg;

/* Smoother of every level but the coarsest. */
typedef enum sla_amg_smoother {
    SLA_AMG_SMOOTHER_DEFAULT = 0,   /* l1 hybrid Gauss–Seidel */
    SLA_AMG_SMOOTHER_GS = 1,        /* l1 hybrid Gauss–Seidel: forward pre, backward post sweeps */
    SLA_AMG_SMOOTHER_JACOBI = 2     /* damped Jacobi, weight 4/(3 ρ(D⁻¹A)) */
} sla_amg_smoother;

typedef struct sla_amg_options {
    double strength;        /* θ: j is a strong neighbour of i if |a_ij| ≥ θ_l sqrt(|a_ii a_jj|),
                               θ_l = θ·2^(−l) on level l; default 0.08; < 0: default */
    int max_levels;         /* default 25 */
    int64_t coarse_size;    /* dense direct solve at or below this many unknowns, default 500 */
    int presmooth, postsmooth;  /* sweeps, default 1 each (equal counts keep M symmetric) */
    sla_amg_smoother smoother;  /* default l1 hybrid Gauss–Seidel */
} sla_amg_options;

/* Fills *o with the defaults above. In create, fields ≤ 0 (strength < 0) mean the default. */
SLA_API void sla_amg_options_init(sla_amg_options *o);

/* Builds the hierarchy of A_b, the batch element b of A (square, float64 or float32; the
 * hierarchy is stored in double). float64 values are borrowed, as by the solver object: they
 * must stay valid and unchanged until the next sla_amg_update() or sla_amg_free(); float32 ones
 * are copied. Values are not checked for NaN/Inf (the caller validates); NaN gives a useless
 * but harmless preconditioner.
 * @param[in]  o    NULL for the defaults.
 * @param[out] out  new hierarchy, NULL on error; free with sla_amg_free().
 * @return SLA_OK; SLA_EINVAL (NULL argument, b outside [0, batch), a zero or missing diagonal
 *         entry where a smoother runs: the message names the level and the row); SLA_ESHAPE
 *         (not square); SLA_EDTYPE; SLA_ENOMEM. A singular coarsest matrix is not an error: it
 *         is smoothed instead of factored. */
SLA_API sla_status sla_amg_create(const sla_matrix *A, int64_t b, const sla_amg_options *o,
                                  sla_amg **out);

/* New values of A_b on the pattern the hierarchy was built on (the same pattern object, or an
 * identical one): numeric set-up only. Keeps the aggregates and the patterns of P, R = Pᵀ and the
 * Galerkin products, recomputes their values, the smoothers and the coarsest factor; gives the
 * same bits as a fresh create that finds the same aggregates.
 * @return SLA_OK; SLA_ESHAPE (other pattern); SLA_EDTYPE (other dtype); SLA_EINVAL (as create);
 *         SLA_ENOMEM. After an error the hierarchy must be updated again or freed. */
SLA_API sla_status sla_amg_update(sla_amg *amg, const sla_matrix *A, int64_t b);

/* z = M⁻¹ r (op = N) or M⁻ᵀ r (op = T): one V-cycle from a zero guess. r and z are vectors of
 * length n in the dtype of the matrix the hierarchy was created from; they may be the same
 * array. The first op = T apply on an unsymmetric A builds the transposed level operators (the
 * only allocation apply makes). Thread-safe only per object.
 * @return SLA_OK; SLA_EINVAL (NULL, bad op); SLA_ENOMEM (first op = T). */
SLA_API sla_status sla_amg_apply(sla_amg *amg, sla_op op, const void *r, void *z);

/* One line: "AMG (smoothed aggregation): L levels, sizes n0/n1/..., operator complexity c, grid
 * complexity g; smoother ..., coarsest: ...". Operator complexity = Σ_l nnz(A_l) / nnz(A_0),
 * grid complexity = Σ_l n_l / n_0. Owned by the object. */
SLA_API const char *sla_amg_describe(const sla_amg *amg);

/* Memory of one level of the hierarchy, bytes (for bench/bench_scale.c's level-by-level table).
 * A counts only what the hierarchy owns (level 0's row pointers and columns are the pattern's,
 * its float64 values the caller's: 0 there). vectors: b, x, r (and level 0's b, x only once
 * allocated); snapshot: the smoother's halo snapshot, allocated n long but touching only the
 * halo columns' pages; lists: the smoother's block bounds and halo lists and the restriction's
 * boundary lists; transposes: Aᵀ and its lists (op = T on unsymmetric A). peak_rss_bytes:
 * the process's peak RSS (sla_peak_rss_bytes()) when this level's set-up (smoother, aggregates,
 * P and the Galerkin product of the next level) had finished at create. */
typedef struct sla_amg_level_memory {
    int64_t rows, nnz;
    int64_t A, P, R, vectors, snapshot, diagonals, aggregates, lists, transposes;
    int64_t peak_rss_bytes;
} sla_amg_level_memory;

/* Levels of the hierarchy (0 for NULL). */
SLA_API int sla_amg_nlevels(const sla_amg *amg);

/* Fills *m for level l. @return SLA_OK; SLA_EINVAL (NULL, l outside [0, nlevels)). */
SLA_API sla_status sla_amg_level_memory_get(const sla_amg *amg, int l, sla_amg_level_memory *m);

/* Frees the hierarchy and sets *amg to NULL (NULL allowed). */
SLA_API void sla_amg_free(sla_amg **amg);

#endif
