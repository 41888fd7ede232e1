/* Algebraic multigrid (internal API, used as a preconditioner by the Krylov layer).
 *
 * One hierarchy per matrix (batch element b of a view). The hierarchy is built from the
 * pattern and values once (create); update() recomputes only what depends on values, keeping
 * the coarsening (aggregates / C-F splitting and the prolongator pattern) so that a refactor in
 * a training loop is cheap. apply() runs one V-cycle: z ≈ A⁻¹ r (op = N) or A⁻ᵀ r (op = T),
 * a symmetric operator for symmetric A (so it can precondition CG and MINRES).
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
    double strength;        /* strength-of-connection threshold (method specific default if < 0) */
    int max_levels;         /* default 25 */
    int64_t coarse_size;    /* direct solve below this many unknowns, default 500 */
    int presmooth, postsmooth;  /* sweeps, default 1 each (equal counts keep M symmetric) */
    sla_amg_smoother smoother;  /* default l1 hybrid Gauss–Seidel */
} sla_amg_options;

/* Defaults (negative / zero fields mean "default"). */
SLA_API void sla_amg_options_init(sla_amg_options *o);

/* Builds the hierarchy of A_b (square). Values may be float64 or float32 (the hierarchy is
 * stored in double). float64 values are borrowed, as by the solver object: they must stay valid
 * and unchanged until the next sla_amg_update() or sla_amg_free(); float32 ones are copied. @return SLA_OK, SLA_EINVAL, SLA_ESHAPE, SLA_ENOMEM, SLA_ESINGULAR (coarse
 * solve), with a message. */
SLA_API sla_status sla_amg_create(const sla_matrix *A, int64_t b, const sla_amg_options *o, sla_amg **out);

/* New values of A_b on the same pattern: numeric set-up only. */
SLA_API sla_status sla_amg_update(sla_amg *amg, const sla_matrix *A, int64_t b);

/* z = M⁻¹ r (op = N) or M⁻ᵀ r (op = T): one V-cycle from a zero guess. r and z are vectors of
 * length n in the dtype of the matrix the hierarchy was created from. Thread-safe only per
 * object. */
SLA_API sla_status sla_amg_apply(sla_amg *amg, sla_op op, const void *r, void *z);

/* "AMG (<method>): L levels, sizes n0/n1/..., operator complexity c, grid complexity g". */
SLA_API const char *sla_amg_describe(const sla_amg *amg);

SLA_API void sla_amg_free(sla_amg **amg);

#endif
