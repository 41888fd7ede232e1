/* Private structures of the distributed Krylov solvers (src/mpi/space.c, operator.c, pc_*.c,
 * solver*.c). Not installed.
 *
 * A distributed solve is libsla's serial method (sla_krylov_run) on two tables:
 *   space     this rank's owned entries as a host space (sla_host_space_init) plus a reduce
 *             hook that sums the partials across the ranks by sla_dist_allsum's fixed tree;
 *   operator  apply = the split-phase distributed SpMV of one batch element (persistent halo
 *             buffers), precond = a local or hypre preconditioner.
 * Every branch a method takes depends only on scalars that are the same on every rank (the
 * reduced dots) and on table slots that are set alike on every rank (a rank owning no rows
 * still gets a precond slot and an inv_diag pointer), so all ranks make the same collective
 * calls in the same order. */
#ifndef SLA_MPI_DSOLVER_H
#define SLA_MPI_DSOLVER_H

#include "mpi/dist.h"
#include "sla/backend.h"

/* ---- the distributed vector space (space.c) ---- */

typedef struct dist_space {
    sla_space V;
    sla_host_space host;
    MPI_Comm comm;
} dist_space;

/* A space of n local entries of dtype on comm, host kernels in chunks for kernels moving
 * `bytes` bytes. Local. d must stay where it is (V points into it). */
void dist_space_init(dist_space *d, MPI_Comm comm, int64_t n, sla_dtype dtype, double bytes);

/* ---- the distributed operator (operator.c) ---- */

typedef struct dist_operator {
    sla_operator op;
    dist_space range, domain;     /* domain unused (op.domain = &range.V) when square */
    sla_dist_matrix A1;           /* the batch element applied, as a batch-1 view */
    sla_matrix diag;              /* its diagonal block, and libsla's CSR operator of it (the */
    sla_csr_operator dcsr;        /* serial solvers' fused SpMV + dot kernel, for CG's pᵀAp) */
    dist_halo_buf buf;            /* one vector's halo buffers, reused by every apply */
    void *ghost;                  /* [nghost] */
    struct dist_pc *pc;           /* bound by dist_pc_bind (pctx = this operator) */
    int64_t pc_b;
} dist_operator;

/* Builds the operator of batch element b of A (transposed local blocks prepared when
 * need_transpose: op = T solves and LSQR; buffers allocated). Local (may fail: the caller
 * agrees). */
sla_status dist_operator_init(dist_operator *o, const sla_dist_matrix *A, int64_t b,
                              int need_transpose, const char *func);
void dist_operator_free(dist_operator *o);

/* ---- preconditioners ---- */

/* hypre BoomerAMG on a ParCSR copy of A (pc_hypre.c; a stub without hypre). */
typedef struct dist_hypre dist_hypre;
int dist_hypre_available(void);
/* Collective (agreed). */
sla_status dist_hypre_create(const sla_dist_matrix *A, const char *func, dist_hypre **out);
sla_status dist_hypre_update(dist_hypre *h, const sla_dist_matrix *A, const char *func);
void dist_hypre_free(dist_hypre **h);
/* z = M_b⁻¹ r (one V-cycle of batch element b). Collective; local status. */
sla_status dist_hypre_apply(dist_hypre *h, int64_t b, const double *r, double *z);
const char *dist_hypre_describe(const dist_hypre *h);

/* The preconditioner of a solver, as bound to each operator (pc.c). */
typedef struct dist_pc dist_pc;
struct dist_pc {
    sla_dist_precond kind;
    sla_pc *local;                /* Jacobi and block Jacobi: of the diagonal block; NULL on a
                                   * rank without rows */
    void *diag_values;            /* [batch][nnz_diag] the diagonal block's values (copy) */
    sla_pattern *diag;            /* retained: the diagonal block's pattern */
    dist_hypre *hypre;
    int absolute_diagonal;        /* MINRES's Jacobi */
    char note[256];               /* describe()'s words */
};

/* Set-up (collective, agreed); reason gets why a set-up failed for a reason of the values
 * (the status is then SLA_EBREAKDOWN, SLA_ENOTSPD, SLA_ESINGULAR or SLA_EUNSUPPORTED). */
sla_status dist_pc_create(dist_pc *pc, sla_dist_precond kind, int absolute_diagonal,
                          const sla_dist_matrix *A, const char *func);
sla_status dist_pc_update(dist_pc *pc, const sla_dist_matrix *A, const char *func);
void dist_pc_free(dist_pc *pc);
/* Binds batch element b of pc to o's precond slot (before applies with op). Local. */
sla_status dist_pc_bind(dist_pc *pc, dist_operator *o, int64_t b, sla_op op);

/* ---- facts for method auto (facts.c) ---- */

typedef struct dist_facts {
    int symmetric;                /* numerically symmetric in every batch element */
    int posdiag;                  /* every diagonal entry stored and > 0 */
} dist_facts;

/* Collective, agreed. A square with equal layouts. */
sla_status dist_facts_measure(const sla_dist_matrix *A, const char *func, dist_facts *f);

/* ---- the solver object (solver.c) ---- */

struct sla_dist_solver {
    sla_dist_matrix A;            /* borrowed values; pattern retained */
    sla_dist_pattern *pattern;
    MPI_Comm comm;
    sla_dist_solver_options opt;  /* method and precond resolved, defaults filled */
    int square;
    dist_facts facts;             /* measured when needed (auto, BoomerAMG op = T) */
    int have_facts;
    dist_pc pc;
    int broken;                   /* a refactor failed: refuse to solve */
    char broken_msg[256];
    char description[SLA_DESCRIPTION_LEN];
};

/* Resolves method and precond auto and sets the preconditioner up (solver_auto.c); why gets
 * auto's words. Collective, agreed. */
sla_status dist_solver_choose(sla_dist_solver *s, const char *func, char *why, size_t len);
/* info for a solve of s, before any system: converged, residuals 0 (maxima taken). */
void dist_solver_info_init(const sla_dist_solver *s, sla_solve_info *info);
/* SLA_ENONFINITE naming the first non-finite entry of this rank's block [batch][n][k]. Local. */
sla_status dist_block_finite(const char *func, const sla_dist_layout *L, const char *name,
                             sla_dtype dtype, int64_t batch, int64_t k, const void *X);
/* Every system of op(A) X = B, one after another (arguments checked and agreed): the status is
 * SLA_OK, SLA_NOT_CONVERGED or an agreed error; info the worst case. */
sla_status dist_solver_run(sla_dist_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                           double atol, int x0_nonzero, sla_solve_info *info);
/* The refusals of a solve with op (local checks; collective when facts are measured). */
sla_status dist_solver_ready(sla_dist_solver *s, sla_op op, const char *func);

#endif
