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
 *    only when options.rtol is attainable by the dtype's arithmetic (rtol ≥ 1000ε: 2.2e-13 in
 *    float64, 1.2e-4 in float32; the direct backends factor in double whatever the dtype).
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
 *    (docs/krylov.md); direct least squares (QR, e.g. SuiteSparseQR) is not in the build. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

#include "direct/direct.h"
#include "solve/auto_facts.h"
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
    f->iter_ok = s->opt.rtol >= 1000 * eps;
    f->mem_budget = s->opt.memory_budget > 0 ? s->opt.memory_budget : 0.5 * physical_memory();
    f->flop_budget = s->opt.flop_budget > 0 ? s->opt.flop_budget : SLA_AUTO_FLOP_BUDGET;
    return SLA_OK;
}

/* Creates `m` (with preconditioner pc unless the caller chose one); on success writes the
 * description "<backend>; auto: <why>". */
static sla_status try_method(sla_solver *s, sla_method m, sla_precond pc, const char *why)
{
    s->opt.precond = s->user_precond == SLA_PRECOND_AUTO ? pc : s->user_precond;
    sla_status st = sla_solver_create_with(s, m);
    if (st == SLA_OK) {
        snprintf(s->why, sizeof s->why, "%s", why);
        sla_text_append(s->description, sizeof s->description, "; auto: ", why);
    }
    return st;
}

/* Rules 2 and 3: an iterative method decided from the structure alone. Returns 1 (and the
 * preconditioner and why) if decided, 0 if not, or a negative status. */
static int structure_rules(const sla_solver *s, const auto_facts *f, sla_precond *pc, char *why,
                           size_t len)
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
    return 1;
}

/* Rule 4: the analysis of the backend tried first, kept in s->analysis for it. */
static sla_status analyse(sla_solver *s, auto_facts *f)
{
    int chol = f->sym && f->v.posdiag;
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

/* LDLᵀ, or LU when no LDLᵀ backend is in the build. */
static sla_status ldlt_or_lu(sla_solver *s, char *why, size_t len)
{
    sla_status st = try_method(s, SLA_METHOD_LDLT, SLA_PRECOND_AUTO, why);
    if (st != SLA_EUNSUPPORTED) return st;
    strncat(why, "; LDLᵀ unavailable", len - strlen(why) - 1);
    return try_method(s, SLA_METHOD_LU, SLA_PRECOND_AUTO, why);
}

/* Rule 6. */
static sla_status direct_path(sla_solver *s, const auto_facts *f, const char *cost)
{
    char why[sizeof s->why], kind[96];
    int sparse = sparse_factor(f, kind, sizeof kind);
    sla_status st;
    if (f->sym && f->v.posdiag) {
        snprintf(why, sizeof why, "symmetric, positive diagonal, Cholesky succeeded; %s", cost);
        st = try_method(s, SLA_METHOD_CHOLESKY, SLA_PRECOND_AUTO, why);
        if (st != SLA_ENOTSPD) return st;
        snprintf(why, sizeof why, "symmetric, positive diagonal but not SPD (Cholesky failed), "
                 "%s; %s", kind, cost);
    } else if (f->sym) {
        snprintf(why, sizeof why, "symmetric, diagonal not positive, %s; %s", kind, cost);
    } else {
        snprintf(why, sizeof why, "unsymmetric, %s; %s", kind, cost);
    }
    if (sparse) {
        st = try_method(s, SLA_METHOD_KLU, SLA_PRECOND_AUTO, why);
        if (st != SLA_EUNSUPPORTED) return st;
    }
    if (f->sym) return ldlt_or_lu(s, why, sizeof why);
    return try_method(s, SLA_METHOD_LU, SLA_PRECOND_AUTO, why);
}

/* Rule 7. */
static sla_status iterative_path(sla_solver *s, const auto_facts *f, const char *cost)
{
    char why[sizeof s->why];
    sla_method m = f->sym ? (f->v.posdiag ? SLA_METHOD_CG : SLA_METHOD_MINRES) : SLA_METHOD_GMRES;
    snprintf(why, sizeof why, "%s; %s", f->sym ? (f->v.posdiag ? "symmetric, positive diagonal"
                                                              : "symmetric, diagonal not positive")
                                                 : "unsymmetric", cost);
    return try_method(s, m, SLA_PRECOND_AUTO, why);
}

static sla_status decide(sla_solver *s, auto_facts *f)
{
    char why[sizeof s->why], cost[sizeof s->why];
    sla_precond pc = SLA_PRECOND_AUTO;
    SLA_TRY(structure(s, f));
    /* a caller that needs the determinant needs a factorization, whatever the cost */
    int need_det = s->opt.need_determinant;
    int decided = need_det ? 0 : structure_rules(s, f, &pc, why, sizeof why);
    if (decided < 0) return decided;
    if (decided) return try_method(s, SLA_METHOD_CG, pc, why);
    SLA_TRY(analyse(s, f));
    int fits = need_det || !f->cost_known ||
               (f->bytes <= f->mem_budget && f->flops <= f->flop_budget);
    double ratio = f->flops / (double)s->batch / fmax(1.0, (double)sla_pattern_nnz(s->pattern));
    int mrule = fits && !need_det && f->cost_known && f->sym && f->v.posdiag && f->v.msign &&
                f->v.diagdom && f->iter_ok && ratio > SLA_AUTO_MMATRIX_RATIO;
    if (f->cost_known) cost_text(f, fits && !mrule, cost, sizeof cost);
    else snprintf(cost, sizeof cost, "no symbolic analysis available");
    if (need_det) strncat(cost, "; determinant requested: direct", sizeof cost - strlen(cost) - 1);
    if (mrule) {
        snprintf(why, sizeof why, "diagonally dominant, M-matrix sign pattern, flops/nnz(A) %.0f "
                 "> %g; %s: AMG", ratio, SLA_AUTO_MMATRIX_RATIO, cost);
        return try_method(s, SLA_METHOD_CG, SLA_PRECOND_AMG, why);
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
    return try_method(s, SLA_METHOD_LSQR, SLA_PRECOND_NONE, why);
}

sla_status sla_auto_create(sla_solver *s)
{
    auto_facts f = {0};
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
    if (s->m != s->n || s->opt.damp > 0) return least_squares(s);
    sla_status st = decide(s, &f);
    sla_analysis_free(&s->analysis);          /* an analysis no backend took */
    sla_free(f.strict);
    return st;
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
    sla_status st = try_method(s, to, SLA_PRECOND_AUTO, why);
    return st < 0 ? st : 1;
}
