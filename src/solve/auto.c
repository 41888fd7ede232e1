/* method = auto: every rule in one place, with a readable trace of why (docs/auto.md has the
 * measurements behind each constant).
 *
 * 1. Facts, O(nnz) (auto_facts.c): numerical symmetry (|a_ij − a_ji| ≤ 1000ε·max(|a_ij|, |a_ji|)
 *    + ε·max|a|, the test the symmetric direct backends apply); the diagonal (all present and
 *    positive or not); the sign pattern (no positive off-diagonal value: an M-matrix's); weak
 *    diagonal dominance of every row. SPD-ness is otherwise never guessed from the diagonal (a
 *    Poisson matrix is SPD but only weakly diagonally dominant): it is proven by rule 2, or
 *    decided by the Cholesky attempt, or by CG's curvature check on the iterative path.
 *    Rules 2, 3 and 5 prefer an iterative method although a factorization would fit; they apply
 *    only when the accuracy asked for is attainable by the dtype's arithmetic (options.rtol, or
 *    rule 10's target when no tolerance is given, ≥ 1000ε: 2.2e-13 in float64, 1.2e-4 in
 *    float32; the direct backends factor in double whatever the dtype).
 * 2. Stieltjes matrices, decided from the graph alone (no factorization analysis). Symmetric,
 *    positive diagonal, no positive off-diagonal value, every row weakly diagonally dominant and
 *    a strictly dominant row in every connected component: an irreducibly diagonally dominant
 *    M-matrix, hence SPD (Gershgorin, Taussky), with an IC(0) factorization that exists
 *    (Meijerink & van der Vorst 1977). For such matrices (discretized diffusion) κ grows as the
 *    square of the graph diameter D, and IC(0)-CG needs about D/2 iterations to rtol 1e-10
 *    (measured 0.43–0.6·D on 2D/3D grids, nos6, Laplace3D10; fewer on thin strips), while
 *    AMG-PCG (set-up and ~12 V-cycles) costs about SLA_AUTO_IC0_ITERATIONS = 60 IC(0)-CG
 *    iterations (measured 42–157, more on small problems) and CHOLMOD more than IC(0)-CG on
 *    every such matrix measured with D ≤ 120 (its analysis alone costs ~20–40 iterations). So:
 *    pseudo-diameter (two breadth-first sweeps per component, stopped past
 *    2·SLA_AUTO_IC0_ITERATIONS levels) ≤ 2·SLA_AUTO_IC0_ITERATIONS → CG + IC(0).
 * 3. Large symmetric matrices with a positive diagonal, the M-matrix sign pattern and weak
 *    diagonal dominance (rule 5's class), decided from a sample: when n > 4·SLA_AUTO_SAMPLE
 *    (the sample then costs at most a quarter of the full analysis it may save), AMD analyses the principal submatrix of a ball of
 *    SLA_AUTO_SAMPLE = 1024 nodes inside the graph (centred at the middle node of the last
 *    complete level of node 0's ball of that size, away from the boundary). A principal
 *    submatrix never costs more to factor than the whole (its fill paths are fill paths of the
 *    whole), and on a d-dimensional mesh nested dissection gives flops ∝ n^(3(d−1)/d) (George
 *    1973; Lipton, Rose & Tarjan 1979), so flops/nnz grows as n^((2d−3)/d), d measured from
 *    the growth of the ball (|B(r)| ∝ r^d, clamped to [1, 3]).
 *    The sample's flops/nnz extrapolated so > SLA_AUTO_MMATRIX_RATIO → CG + AMG (as rule 5)
 *    without analysing the whole. Assumption: the graph is mesh-like and homogeneous (the ball
 *    is typical of it); a graph that is not one large component is never extrapolated.
 * 4. Otherwise the symbolic analysis of the backend auto would try first: CHOLMOD's for a
 *    symmetric matrix with a positive diagonal, KLU's (BTF + AMD) otherwise. It is handed to
 *    that backend (s->analysis), which does not analyse again. Its predicted factor memory (×
 *    the batch) must fit options.memory_budget (default half of the physical memory) and its
 *    predicted flops (× the batch) options.flop_budget (default SLA_AUTO_FLOP_BUDGET = 2e11),
 *    else the iterative path (rule 7).
 * 5. Symmetric, positive diagonal, M-matrix sign pattern and every row weakly diagonally
 *    dominant (discretized diffusion, graph Laplacians: where AMG-PCG shines; dominance makes
 *    the matrix semidefinite by Gershgorin, whereas the sign pattern alone does not: A − σI of
 *    a Laplacian keeps it and is indefinite, and CG fails there) and predicted flops >
 *    SLA_AUTO_MMATRIX_RATIO = 100 × nnz(A) → CG + AMG (2D Poisson: Cholesky and AMG-PCG tie
 *    near flops/nnz 100, 60² to 64²; at 244, 100², AMG-PCG is 1.6× faster).
 * 6. Direct. The factor's intensity, flops per entry of L (+ U), separates the two kinds of
 *    sparse factorization: below SLA_AUTO_SPARSE_INTENSITY = 40 (CHOLMOD's own switch from
 *    simplicial to supernodal) a scalar left-looking factorization wins, above it BLAS-3 fronts
 *    do (KLU against MUMPS and UMFPACK on 2D/3D grids: the crossover lies between 30 and 100).
 *    Symmetric with a positive diagonal → Cholesky (CHOLMOD, which applies the same switch
 *    inside); not SPD (SLA_ENOTSPD) → KLU if sparse, else LDLᵀ (MUMPS) → LU. Symmetric
 *    otherwise → KLU if sparse (measured 3.7× faster than MUMPS on hangGlider_2, whose fixed
 *    cost is large), else LDLᵀ → LU. Unsymmetric → KLU if sparse (2× faster than UMFPACK on
 *    west0479), else UMFPACK LU.
 * 7. Iterative (a budget exceeded): symmetric with a positive diagonal → CG (preconditioner
 *    auto: AMG first); symmetric otherwise → MINRES; unsymmetric → GMRES (ILU(0) first). A
 *    method that stops with reason indefinite, breakdown or stagnation falls back once at solve
 *    time (sla_auto_fallback): cg → minres, minres → gmres, gmres → bicgstab, bicgstab → gmres.
 * options.need_determinant skips rules 2, 3, 5 and 7: the factorization of rule 6 is made
 * whatever its cost, since only a factorization gives sla_solver_logdet(); with a rectangular
 * A or damp > 0 (rule 0) it is an error (no determinant exists).
 * 0. Before every other rule: a rectangular A (m ≠ n), or options.damp > 0 (a damped least-squares
 *    problem), → LSQR without preconditioner: the only method here that solves least squares
 *    (docs/krylov.md); direct least squares (QR, e.g. SuiteSparseQR) is not in the build.
 * 8. options.backend names a backend: auto chooses among its methods only (rules 2–7 skip the
 *    others: cholmod → cholesky, umfpack → lu, klu → klu, mumps → ldlt, krylov → the iterative
 *    rules, and a budget is no reason to leave the backend asked for); a determinant from a
 *    backend without direct methods is SLA_EUNSUPPORTED; an unknown name SLA_EUNSUPPORTED
 *    naming sla_backend_count()/sla_backend_get().
 * 9. Refactor (auto_refactor.c): each choice records the facts of rule 1 it rests on (rule 2:
 *    all four and a strict row per component; 3 and 5: the M-matrix facts; Cholesky and CG:
 *    symmetric with a positive diagonal; KLU/LDLᵀ/LU/MINRES: symmetric or not, positive diagonal
 *    or not). sla_solver_refactor measures them again (one O(nnz) pass) and decides again, as a
 *    create would, when one changed or the backend's numeric work fails for a reason of the
 *    values (Cholesky not SPD, IC(0) breakdown); describe() says "decided again at refactor k
 *    (what changed)". Other refactors keep the choice and its "; auto: <why>".
 * 10. No tolerance given (options rtol and atol both SLA_TOL_DEFAULT): every column's normwise
 *    backward error ‖b − Ax‖₂/(‖A‖_F‖x‖₂ + ‖b‖₂) ≤ SLA_AUTO_BACKWARD_ERROR = 1e-12 (float32
 *    1e-5). Direct methods are backward stable (and refined by KLU/UMFPACK); an iterative
 *    solve runs to rtol 1e-10, then its backward error is measured and the solve continued
 *    from X until the target is met (auto_accuracy.c; SLA_NOT_CONVERGED otherwise). An
 *    explicit rtol or atol keeps the classic rule ‖b − Ax‖ ≤ max(rtol‖b‖, atol). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

#include "direct/direct.h"
#include "solve/auto.h"
#include "solve/backend.h"

/* descriptions are one line of bounded length: a long trace is cut on purpose */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* flops a direct factorization may take before auto prefers an iterative method */
#define SLA_AUTO_FLOP_BUDGET 2e11
/* M-matrix sign pattern: iterative (AMG) when predicted flops > this × nnz(A) */
#define SLA_AUTO_MMATRIX_RATIO 100.0
/* AMG-PCG costs about this many IC(0)-CG iterations (measured 42–92 from 2D and 3D grids) */
#define SLA_AUTO_IC0_ITERATIONS 60
/* nodes of the sampled ball of rule 3 */
#define SLA_AUTO_SAMPLE 1024
/* flops per factor entry below which a scalar (left-looking) factorization wins: CHOLMOD's
 * supernodal_switch default */
#define SLA_AUTO_SPARSE_INTENSITY 40.0

typedef struct {
    sla_value_facts v;
    unsigned char *strict;          /* [n] strictly diagonally dominant rows */
    int sym, iter_ok;               /* iter_ok: rtol attainable by iterative methods */
    int cost_known;                 /* an analysis ran (rule 4) */
    const char *factor;             /* "L" or "L+U" */
    double nnz_factor, bytes, flops;   /* predicted, whole batch (nnz_factor: one element) */
    double intensity;               /* flops per factor entry */
    double mem_budget, flop_budget;
} auto_facts;

/* x scaled to [1, 1000) with its SI prefix, printed as "%.3g %s<unit>" (one snprintf for a
 * whole trace: formatting is a visible part of auto's cost on µs-scale matrices) */
typedef struct { double v; const char *prefix; } scaled;

static scaled si(double x)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    while (fabs(x) >= 1000 && i < 5) { x /= 1000; i++; }
    return (scaled){x, pre[i]};
}

static double memory_size;
static void read_memory_size(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    memory_size = pages > 0 && size > 0 ? (double)pages * (double)size : 8e9;
}

/* physical memory in bytes, read once (sysconf is a system call) */
static double physical_memory(void)
{
    static once_flag once = ONCE_FLAG_INIT;
    call_once(&once, read_memory_size);
    return memory_size;
}

/* Rule 1. */
static sla_status structure(const sla_solver *s, auto_facts *f)
{
    double eps = s->dtype == SLA_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
    f->strict = sla_malloc((size_t)s->n, 1, "diagonally dominant rows");
    if (!f->strict) return SLA_ENOMEM;
    SLA_TRY(sla_auto_value_facts(&s->A, 1000 * eps, eps, &f->v, f->strict));
    f->sym = f->v.symmetric;
    /* the accuracy asked for: rtol, or auto's backward-error target when no tolerance is given */
    double tol = s->default_tol ? (s->dtype == SLA_FLOAT64 ? SLA_AUTO_BACKWARD_ERROR
                                                           : SLA_AUTO_BACKWARD_ERROR_F32)
                                : s->opt.rtol;
    f->iter_ok = tol >= 1000 * eps;
    f->mem_budget = s->opt.memory_budget > 0 ? s->opt.memory_budget : 0.5 * physical_memory();
    f->flop_budget = s->opt.flop_budget > 0 ? s->opt.flop_budget : SLA_AUTO_FLOP_BUDGET;
    return SLA_OK;
}

#define DIRECT_METHODS (SLA_METHOD_BIT(SLA_METHOD_CHOLESKY) | SLA_METHOD_BIT(SLA_METHOD_LDLT) | \
                        SLA_METHOD_BIT(SLA_METHOD_LU) | SLA_METHOD_BIT(SLA_METHOD_KLU))
#define ITERATIVE_METHODS (SLA_METHOD_BIT(SLA_METHOD_CG) | SLA_METHOD_BIT(SLA_METHOD_MINRES) | \
                           SLA_METHOD_BIT(SLA_METHOD_GMRES) | SLA_METHOD_BIT(SLA_METHOD_BICGSTAB))
/* facts of rules 2, 3 and 5 (an M-matrix's), and of a symmetric matrix with positive diagonal */
#define MMATRIX_FACTS (SLA_FACT_SYM | SLA_FACT_POSDIAG | SLA_FACT_MSIGN | SLA_FACT_DIAGDOM)
#define SPD_CANDIDATE (SLA_FACT_SYM | SLA_FACT_POSDIAG)

static int allowed(const sla_solver *s, sla_method m)
{
    return (s->auto_state->allowed & SLA_METHOD_BIT(m)) != 0;
}

static const char *backend_name(const sla_solver *s)
{
    return s->opt.backend ? s->opt.backend : "auto";
}

/* Creates `m` (with preconditioner pc unless the caller chose one); on success records what the
 * choice rests on (the facts in need_mask must keep the values of need_value) and writes the
 * description "<backend>; auto: <why>". A method the requested backend does not serve is
 * SLA_EUNSUPPORTED (the callers then try the next one). */
static sla_status try_method(sla_solver *s, sla_method m, sla_precond pc, unsigned need_mask,
                             unsigned need_value, const char *why)
{
    if (!allowed(s, m))
        return SLA_FAIL_AS("sla_solver_create", SLA_EUNSUPPORTED, "backend '%s' does not serve "
                           "method %s", backend_name(s), sla_method_name(m));
    s->opt.precond = s->user_precond == SLA_PRECOND_AUTO ? pc : s->user_precond;
    sla_status st = sla_solver_create_with(s, m);
    if (st == SLA_OK) {
        sla_auto_state *a = s->auto_state;
        a->need_mask = need_mask;
        a->need_value = need_value & need_mask;
        snprintf(s->why, sizeof s->why, "%s", why);
        sla_auto_append_suffix(s);
    }
    return st;
}

/* Rules 2 and 3: an iterative method decided from the structure alone. Returns 1 (and the
 * preconditioner and why) if decided, 0 if not, or a negative status. */
static int structure_rules(const sla_solver *s, const auto_facts *f, sla_precond *pc,
                           unsigned *need, char *why, size_t len)
{
    /* n = 0 passes every test vacuously; a direct method handles it (and gives det = 1) */
    if (s->n == 0 || !(f->sym && f->v.posdiag && f->v.msign && f->v.diagdom && f->iter_ok))
        return 0;
    sla_graph_facts g;
    SLA_TRY(sla_auto_graph_sweep(s->pattern, f->strict, 2 * SLA_AUTO_IC0_ITERATIONS, &g));
    if (g.diameter >= 0 && g.strict_everywhere) {
        snprintf(why, len, "Stieltjes matrix (diagonally dominant M-matrix, strictly in each of "
                 "%lld components: SPD); pseudo-diameter %lld → ~%lld IC(0)-CG iterations ≤ %d: "
                 "IC(0)", (long long)g.components, (long long)g.diameter,
                 (long long)(g.diameter + 1) / 2, SLA_AUTO_IC0_ITERATIONS);
        *pc = SLA_PRECOND_IC0;
        *need = MMATRIX_FACTS | SLA_FACT_STRICT;
        return 1;
    }
    if (s->n <= 4 * SLA_AUTO_SAMPLE) return 0;
    sla_sample_facts smp;
    SLA_TRY(sla_auto_sample(s->pattern, SLA_AUTO_SAMPLE, &smp));
    if (smp.n == 0) return 0;
    double d = smp.dimension, ratio = smp.flops / fmax(1, smp.nnz);
    double est = ratio * pow((double)s->n / (double)smp.n, fmax(0, (2 * d - 3) / d));
    if (est <= SLA_AUTO_MMATRIX_RATIO) return 0;
    snprintf(why, len, "diagonally dominant, M-matrix sign pattern; flops/nnz(A) ≈ %.3g > %g "
             "(AMD on a %lld-node ball: %.0f, dimension %.1f, extrapolated): AMG", est,
             SLA_AUTO_MMATRIX_RATIO, (long long)smp.n, ratio, d);
    *pc = SLA_PRECOND_AMG;
    *need = MMATRIX_FACTS;
    return 1;
}

/* Rule 4: the analysis of the backend tried first, kept in s->analysis for it. */
static sla_status analyse(sla_solver *s, auto_facts *f)
{
    int chol = f->sym && f->v.posdiag && allowed(s, SLA_METHOD_CHOLESKY);
    sla_status st = chol ? sla_cholmod_analysis(s, &s->analysis)
                         : sla_klu_analysis(s, &s->analysis);
    if (st == SLA_ENOMEM) return st;        /* the factorization would run out as well */
    sla_clear_error();                      /* else decide without (rule 6's fallbacks) */
    f->cost_known = st == SLA_OK;
    f->factor = chol ? "L" : "L+U";
    if (!f->cost_known) return SLA_OK;
    const sla_analysis *a = s->analysis;
    f->nnz_factor = a->nnz_factor;
    f->flops = a->flops * (double)s->batch;
    f->bytes = a->bytes * (double)s->batch;
    f->intensity = a->flops / fmax(1, a->nnz_factor);
    return SLA_OK;
}

static void cost_text(const auto_facts *f, int direct, char *buf, size_t len)
{
    scaled nz = si(f->nnz_factor), mem = si(f->bytes), mb = si(f->mem_budget), fl = si(f->flops),
           fb = si(f->flop_budget);
    int mem_ok = f->bytes <= f->mem_budget, fl_ok = f->flops <= f->flop_budget;
    snprintf(buf, len, "predicted nnz(%s) %.3g%s%s (%.3g %sB) %s budget %.3g %sB, %.3g %sflop %s "
             "budget %.3g %sflop%s", f->factor, nz.v, *nz.prefix ? " " : "", nz.prefix, mem.v,
             mem.prefix, mem_ok ? "≤" : ">", mb.v, mb.prefix, fl.v, fl.prefix, fl_ok ? "≤" : ">",
             fb.v, fb.prefix, direct ? "" : ": iterative");
}

/* "KLU" when the factor is sparse (rule 6), with the intensity in words. */
static int sparse_factor(const auto_facts *f, char *buf, size_t len)
{
    int sparse = f->cost_known && f->intensity < SLA_AUTO_SPARSE_INTENSITY;
    if (f->cost_known)
        snprintf(buf, len, "%s factor (flops/nnz(%s) %.0f %s %g)",
                 sparse ? "sparse" : "dense-front", f->factor, f->intensity, sparse ? "<" : "≥",
                 SLA_AUTO_SPARSE_INTENSITY);
    else
        snprintf(buf, len, "factor cost unknown");
    return sparse;
}

/* The first of `m` (n of them) that the build and the requested backend serve (one skipped is
 * noted in why: "LDLᵀ unavailable" without MUMPS). */
static sla_status first_available(sla_solver *s, const sla_method *m, int n, unsigned need_mask,
                                  unsigned need_value, char *why, size_t len)
{
    for (int k = 0; k < n; k++) {
        sla_status st = allowed(s, m[k]) ? try_method(s, m[k], SLA_PRECOND_AUTO, need_mask,
                                                      need_value, why)
                                         : SLA_EUNSUPPORTED;
        if (st != SLA_EUNSUPPORTED) return st;
        char note[64];
        snprintf(note, sizeof note, "%s unavailable", sla_method_name(m[k]));
        sla_text_append(why, len, "; ", note);
    }
    return SLA_FAIL_AS("sla_solver_create", SLA_EUNSUPPORTED, "backend '%s' serves none of the "
                       "direct methods that apply", backend_name(s));
}

/* Rule 6. */
static sla_status direct_path(sla_solver *s, const auto_facts *f, const char *cost)
{
    char why[sizeof s->why], kind[96];
    int sparse = sparse_factor(f, kind, sizeof kind);
    unsigned facts = sla_auto_fact_bits(&f->v, 0);
    if (f->sym && f->v.posdiag && allowed(s, SLA_METHOD_CHOLESKY)) {
        snprintf(why, sizeof why, "symmetric, positive diagonal, Cholesky succeeded; %s", cost);
        sla_status st = try_method(s, SLA_METHOD_CHOLESKY, SLA_PRECOND_AUTO, SPD_CANDIDATE,
                                   facts, why);
        if (st != SLA_ENOTSPD) return st;
        snprintf(why, sizeof why, "symmetric, positive diagonal but not SPD (Cholesky failed), "
                 "%s; %s", kind, cost);
    } else if (f->sym) {
        snprintf(why, sizeof why, "symmetric, %s, %s; %s",
                 f->v.posdiag ? "positive diagonal" : "diagonal not positive", kind, cost);
    } else {
        snprintf(why, sizeof why, "unsymmetric, %s; %s", kind, cost);
    }
    unsigned need = f->sym ? SPD_CANDIDATE : SLA_FACT_SYM;
    const sla_method sym_sparse[] = {SLA_METHOD_KLU, SLA_METHOD_LDLT, SLA_METHOD_LU},
                     sym_dense[] = {SLA_METHOD_LDLT, SLA_METHOD_LU, SLA_METHOD_KLU},
                     uns_sparse[] = {SLA_METHOD_KLU, SLA_METHOD_LU},
                     uns_dense[] = {SLA_METHOD_LU, SLA_METHOD_KLU};
    if (f->sym)
        return first_available(s, sparse ? sym_sparse : sym_dense, 3, need, facts, why, sizeof why);
    return first_available(s, sparse ? uns_sparse : uns_dense, 2, need, facts, why, sizeof why);
}

/* Rule 7. */
static sla_status iterative_path(sla_solver *s, const auto_facts *f, const char *cost)
{
    char why[sizeof s->why];
    sla_method m = f->sym ? (f->v.posdiag ? SLA_METHOD_CG : SLA_METHOD_MINRES) : SLA_METHOD_GMRES;
    snprintf(why, sizeof why, "%s; %s", f->sym ? (f->v.posdiag ? "symmetric, positive diagonal"
                                                              : "symmetric, diagonal not positive")
                                                 : "unsymmetric", cost);
    return try_method(s, m, SLA_PRECOND_AUTO, f->sym ? SPD_CANDIDATE : SLA_FACT_SYM,
                      sla_auto_fact_bits(&f->v, 0), why);
}

/* Rule 8: the methods of the requested backend. One method: that one; none of the kind needed
 * (a determinant with krylov): an error. */
static int backend_rules(sla_solver *s, sla_status *st)
{
    uint32_t square = s->auto_state->allowed & (DIRECT_METHODS | ITERATIVE_METHODS);
    if (s->opt.need_determinant && !(square & DIRECT_METHODS)) {
        *st = SLA_FAIL_AS("sla_solver_create", SLA_EUNSUPPORTED, "backend '%s' serves no direct "
                          "method: no determinant (options.need_determinant)", backend_name(s));
        return 1;
    }
    if (square == 0 || (square & (square - 1)) != 0) return 0;
    sla_method m = SLA_METHOD_AUTO;
    while (!(square & SLA_METHOD_BIT(m))) m = (sla_method)(m + 1);
    char why[sizeof s->why];
    snprintf(why, sizeof why, "backend '%s' serves method %s only", backend_name(s),
             sla_method_name(m));
    *st = try_method(s, m, SLA_PRECOND_AUTO, 0, 0, why);
    return 1;
}

static sla_status decide(sla_solver *s, auto_facts *f)
{
    char why[sizeof s->why], cost[sizeof s->why];
    sla_precond pc = SLA_PRECOND_AUTO;
    unsigned need = 0;
    sla_status st = SLA_OK;
    if (backend_rules(s, &st)) return st;
    SLA_TRY(structure(s, f));
    uint32_t al = s->auto_state->allowed;
    /* a caller that needs the determinant needs a factorization, whatever the cost */
    int need_det = s->opt.need_determinant, direct_only = need_det || !(al & ITERATIVE_METHODS);
    int decided = direct_only || !allowed(s, SLA_METHOD_CG) ? 0
                  : structure_rules(s, f, &pc, &need, why, sizeof why);
    if (decided < 0) return decided;
    if (decided) return try_method(s, SLA_METHOD_CG, pc, need, sla_auto_fact_bits(&f->v, 1), why);
    if (!(al & DIRECT_METHODS)) {
        snprintf(cost, sizeof cost, "backend '%s': iterative methods only", backend_name(s));
        return iterative_path(s, f, cost);
    }
    SLA_TRY(analyse(s, f));
    int fits = direct_only || !f->cost_known ||
               (f->bytes <= f->mem_budget && f->flops <= f->flop_budget);
    double ratio = f->flops / (double)s->batch / fmax(1.0, (double)sla_pattern_nnz(s->pattern));
    int mrule = fits && !direct_only && f->cost_known && f->sym && f->v.posdiag && f->v.msign &&
                f->v.diagdom && f->iter_ok && ratio > SLA_AUTO_MMATRIX_RATIO &&
                allowed(s, SLA_METHOD_CG);
    if (f->cost_known) cost_text(f, fits && !mrule, cost, sizeof cost);
    else snprintf(cost, sizeof cost, "no symbolic analysis available");
    if (need_det) strncat(cost, "; determinant requested: direct", sizeof cost - strlen(cost) - 1);
    else if (direct_only)
        sla_text_append(cost, sizeof cost, "; ", "backend serves direct methods only");
    if (mrule) {
        snprintf(why, sizeof why, "diagonally dominant, M-matrix sign pattern, flops/nnz(A) %.0f "
                 "> %g; %s: AMG", ratio, SLA_AUTO_MMATRIX_RATIO, cost);
        return try_method(s, SLA_METHOD_CG, SLA_PRECOND_AMG, MMATRIX_FACTS,
                          sla_auto_fact_bits(&f->v, 0), why);
    }
    return fits ? direct_path(s, f, cost) : iterative_path(s, f, cost);
}

/* Rule 0. */
static sla_status least_squares(sla_solver *s)
{
    char why[sizeof s->why];
    if (s->m != s->n)
        snprintf(why, sizeof why, "rectangular %lld × %lld: least squares min ‖b − Ax‖₂ by LSQR",
                 (long long)s->m, (long long)s->n);
    else
        snprintf(why, sizeof why, "damp %g > 0: damped least squares by LSQR", s->opt.damp);
    return try_method(s, SLA_METHOD_LSQR, SLA_PRECOND_NONE, 0, 0, why);
}

sla_status sla_auto_decide(sla_solver *s)
{
    auto_facts f = {0};
    s->opt.method = SLA_METHOD_AUTO;
    s->opt.precond = s->user_precond;
    s->fallbacks = 0;
    s->why[0] = '\0';
    int lsq = s->m != s->n || s->opt.damp > 0;
    sla_status st = lsq ? least_squares(s) : decide(s, &f);
    sla_analysis_free(&s->analysis);          /* an analysis no backend took */
    if (st == SLA_OK && (s->auto_state->need_mask & SLA_FACT_STRICT)) {
        s->auto_state->strict = f.strict;     /* kept: rule 2's evidence, for refactors */
        f.strict = NULL;
    }
    sla_free(f.strict);
    if (st == SLA_OK) sla_auto_accuracy_note(s);
    if (st == SLA_OK) st = sla_auto_norms(s);
    return st;
}

sla_status sla_auto_create(sla_solver *s)
{
    s->is_auto = 1;
    s->user_precond = s->opt.precond;
    if (s->opt.need_determinant && s->m != s->n)
        return SLA_FAIL_AS("sla_solver_create", SLA_ESHAPE, "A is %lld × %lld: a determinant "
                           "needs a square matrix (options.need_determinant)", (long long)s->m,
                           (long long)s->n);
    if (s->opt.need_determinant && s->opt.damp > 0)
        return SLA_FAIL_AS("sla_solver_create", SLA_EINVAL, "options.damp = %g with "
                           "options.need_determinant: damped least squares gives no determinant",
                           s->opt.damp);
    uint32_t methods = sla_backend_methods(s->opt.backend, s->dtype);
    if (!methods) {
        /* the registry's words: no such name, not compiled in, or not for this dtype */
        sla_backend_find(SLA_METHOD_AUTO, s->dtype, s->opt.backend);
        return sla_error_attribute(SLA_EUNSUPPORTED, "sla_solver_create");
    }
    s->auto_state = sla_calloc(1, sizeof *s->auto_state, "method auto state");
    if (!s->auto_state) return SLA_ENOMEM;
    s->auto_state->allowed = methods;
    return sla_auto_decide(s);
}

static sla_method next_method(sla_method m)
{
    switch (m) {
    case SLA_METHOD_CG: return SLA_METHOD_MINRES;
    case SLA_METHOD_MINRES: return SLA_METHOD_GMRES;
    case SLA_METHOD_GMRES: return SLA_METHOD_BICGSTAB;
    case SLA_METHOD_BICGSTAB: return SLA_METHOD_GMRES;
    default: return SLA_METHOD_AUTO;
    }
}

int sla_auto_fallback(sla_solver *s, const sla_solve_info *info)
{
    if (!s->is_auto || s->fallbacks > 0 || info->converged) return 0;
    if (info->reason != SLA_REASON_INDEFINITE && info->reason != SLA_REASON_BREAKDOWN &&
        info->reason != SLA_REASON_STAGNATION)
        return 0;
    sla_method from = s->opt.method, to = next_method(from);
    if (to == SLA_METHOD_AUTO) return 0;
    char why[sizeof s->why];
    /* the fallback first: the original reasons may be cut to fit, never the fallback */
    snprintf(why, sizeof why, "%s stopped (%s) → %s", sla_method_name(from),
             sla_reason_name(info->reason), sla_method_name(to));
    sla_text_append(why, sizeof why, "; first choice: ", s->why);
    if (s->backend && s->backend->destroy) s->backend->destroy(s);
    s->impl = NULL;
    s->backend = NULL;
    s->fallbacks++;
    sla_auto_cut_suffix(s);
    /* the facts the first choice rested on still hold the fallback */
    const sla_auto_state *a = s->auto_state;
    sla_status st = try_method(s, to, SLA_PRECOND_AUTO, a->need_mask, a->need_value, why);
    return st < 0 ? st : 1;
}
