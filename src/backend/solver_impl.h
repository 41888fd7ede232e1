/* The private half of the backend tier (libCEED's ceed-impl.h to sla/backend.h): the fields of
 * the solver object and the built-in backends. The in-tree backends (src/direct, src/krylov) and
 * the solve layer include this; they read the fields directly, an external backend reads them
 * through the accessors of sla/backend.h. Layers: core ← this tier ← direct, krylov ← solve.
 * Not installed. */
#ifndef SLA_BACKEND_SOLVER_IMPL_H
#define SLA_BACKEND_SOLVER_IMPL_H

#include "core/internal.h"
#include "sla/backend.h"

struct sla_solver {
    sla_matrix A;                /* borrowed values; A.pattern is `pattern` below */
    sla_pattern *pattern;        /* retained; NULL for a matrix-free operator */
    int64_t m, n, batch;         /* A is m × n (m = n except for lsqr) */
    sla_dtype dtype;
    sla_apply_fn apply;          /* matrix-free operator, or NULL */
    void *apply_ctx;
    sla_solver_options opt;      /* method resolved, defaults filled; never changed by a solve */
    const sla_backend *backend;
    void *impl;                  /* backend state */
    double rcond;                /* reciprocal condition estimate (NaN if unknown) */
    char description[SLA_DESCRIPTION_LEN];       /* one line, written by the backend (and by auto) */
    char why[512];               /* why this method was chosen (auto), or "" */
    int is_auto;                 /* created with method = auto: may fall back once at solve */
    int default_tol;             /* no tolerance given (options rtol and atol SLA_TOL_DEFAULT;
                                  * opt holds the classic defaults): auto's accuracy target */
    int fallbacks;               /* fallbacks taken so far */
    sla_precond user_precond;    /* the preconditioner the caller asked for (auto fallbacks) */
    sla_analysis *analysis;      /* a symbolic analysis auto ran, for the backend it chose to
                                  * take instead of analysing again; NULL */
    struct sla_auto_state *auto_state; /* method auto: what the choice rests on (solve/auto.h) */
};

/* The right-hand side of the solve that follows a create or refactor (sla_solver_create_for,
 * sla_solver_refactor_for; solve/first_rhs.c): B [batch][n][nrhs] of dtype, row-major, finite,
 * borrowed for the length of that call only (a backend that uses it copies what it keeps). */
typedef struct sla_first_rhs {
    const sla_pattern *pattern;  /* the matrix it belongs to: pattern, values, dtype, batch */
    const void *values;
    sla_dtype dtype;
    int64_t batch, n;
    sla_op op;                   /* N, T or C (C only for complex dtypes) */
    int64_t nrhs;
    const void *B;
} sla_first_rhs;

/* During s's create or refactor: the hint for s's matrix, or NULL (none, or one for another
 * matrix). Backends read it inside their create / refactor hooks only. */
const sla_first_rhs *sla_solver_first_rhs(const sla_solver *s);

/* The built-in backends (compiled in or not; registry.c lists them by decreasing priority). */
extern const sla_backend sla_backend_cholmod;
extern const sla_backend sla_backend_umfpack;
extern const sla_backend sla_backend_klu;
extern const sla_backend sla_backend_mumps;
extern const sla_backend sla_backend_krylov;

/* First available backend serving (method, dtype), or the one named `name` (NULL/"auto": any),
 * built-in or registered. On failure returns NULL with an SLA_EUNSUPPORTED message naming what
 * was asked. */
const sla_backend *sla_backend_find(sla_method method, sla_dtype dtype, const char *name);

/* The per-solve parameters of the options (what a plain sla_solver_solve uses). */
static inline sla_solve_params sla_solve_params_of(const sla_solver *s)
{
    return (sla_solve_params){.rtol = s->opt.rtol, .atol = s->opt.atol,
                              .maxiter = s->opt.maxiter,
                              .x0_nonzero = s->opt.initial_guess_nonzero};
}

#endif
