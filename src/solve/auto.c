/* method = auto: every rule in one place, with a readable trace of why.
 *
 * 1. Structure: numerical symmetry (to rounding: |a_ij − a_ji| ≤ 1000ε·max(|a_ij|, |a_ji|) +
 *    ε·max|a|, the test the symmetric direct backends apply) and the diagonal (all present and
 *    positive or not). SPD-ness is never guessed from the diagonal (a Poisson matrix is SPD but
 *    only weakly diagonally dominant): it is decided by the Cholesky attempt, or by CG's
 *    curvature check on the iterative path.
 * 2. Direct or iterative, from the symbolic analysis (CHOLMOD's for symmetric matrices, UMFPACK's
 *    otherwise): the predicted factor memory (nnz × 12 bytes for LLᵀ/LDLᵀ, UMFPACK's own
 *    estimate for LU, times the batch) must fit options.memory_budget (default half of the
 *    physical memory) and the predicted flops (times the batch) options.flop_budget (default
 *    SLA_AUTO_FLOP_BUDGET). When even a dense factorization (n³/3 flops, 12·n²/2 bytes) fits
 *    both budgets the analysis is skipped, except for the M-matrix rule below.
 *    Symmetric matrices with a positive diagonal and no positive off-diagonal entry (the sign
 *    pattern of an M-matrix: discretized diffusion, graph Laplacians) are where AMG-PCG shines:
 *    they go to CG + AMG as soon as the predicted factorization flops exceed
 *    SLA_AUTO_MMATRIX_RATIO × nnz(A) (bench/bench_auto: on 2D Poisson at 10k unknowns, ratio 244,
 *    AMG-PCG is 2× faster than Cholesky, at 100k 3.6×; on 1138_bus, ratio 3, Cholesky wins).
 * 3. Direct: symmetric with a positive diagonal → Cholesky; not SPD (SLA_ENOTSPD) → LDLᵀ
 *    (MUMPS) → LU. Symmetric otherwise → LDLᵀ → LU. Unsymmetric → KLU when the predicted LU
 *    fill is small (nnz(L+U) ≤ SLA_AUTO_KLU_FILL·nnz(A), circuit-like matrices, where KLU's lower
 *    overhead wins), else UMFPACK LU.
 * 4. Iterative: symmetric with a positive diagonal → CG (preconditioner auto: AMG first);
 *    symmetric otherwise → MINRES; unsymmetric → GMRES (ILU(0) first). A method that stops with
 *    reason indefinite, breakdown or stagnation falls back once at solve time
 *    (sla_auto_fallback): cg → minres, minres → gmres, gmres → bicgstab, bicgstab → gmres.
 * Rectangular matrices are refused before this point (least squares does not exist yet). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "direct/direct.h"
#include "solve/backend.h"

/* descriptions are one line of bounded length: a long trace is cut on purpose */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* flops a direct factorization may take before auto prefers an iterative method */
#define SLA_AUTO_FLOP_BUDGET 2e11
/* unsymmetric: KLU when nnz(L+U) ≤ this × nnz(A) */
#define SLA_AUTO_KLU_FILL 4.0
/* symmetric M-matrix sign pattern: iterative when predicted flops > this × nnz(A) */
#define SLA_AUTO_MMATRIX_RATIO 100.0

typedef struct {
    int sym, posdiag, zpattern;     /* zpattern: no positive off-diagonal value */
    double nnz_factor, bytes, flops;   /* predicted, whole batch */
    double mem_budget, flop_budget;
    int cost_known, dense_bound;    /* dense_bound: costs are the dense upper bound */
} auto_facts;

static void human(double x, const char *unit, char *buf, size_t len)
{
    const char *pre[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    while (fabs(x) >= 1000 && i < 5) { x /= 1000; i++; }
    snprintf(buf, len, "%.3g%s%s%s", x, (*pre[i] || *unit) ? " " : "", pre[i], unit);
}

static double physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 8e9;
}

static double value_at(const sla_matrix *A, int64_t k)
{
    return A->dtype == SLA_FLOAT64 ? ((const double *)A->values)[k] : ((const float *)A->values)[k];
}

/* 1 if no batch element has a positive off-diagonal value (the sign pattern of an M-matrix) */
static int no_positive_offdiagonal(const sla_matrix *A)
{
    int64_t n = sla_pattern_nrows(A->pattern), nnz = sla_pattern_nnz(A->pattern);
    const int64_t *rp = sla_pattern_rowptr(A->pattern);
    const int32_t *ci = sla_pattern_colind(A->pattern);
    for (int64_t b = 0; b < A->batch; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = rp[i]; k < rp[i + 1]; k++)
                if (ci[k] != i && value_at(A, b * nnz + k) > 0) return 0;
    return 1;
}

static sla_status structure(const sla_solver *s, auto_facts *f)
{
    double eps = s->dtype == SLA_FLOAT64 ? 2.220446049250313e-16 : 1.1920929e-7, amax[1];
    const sla_matrix *A = &s->A;
    sla_diag_info di;
    SLA_TRY(sla_matrix_diag_info(A, &di));
    /* the largest entry over the batch sets the absolute part of the symmetry tolerance */
    double *norms = sla_malloc((size_t)A->batch, sizeof(double), "norms");
    if (!norms) return SLA_ENOMEM;
    sla_status st = sla_matrix_norm(A, 'M', norms);
    amax[0] = 0;
    for (int64_t b = 0; b < A->batch && st == SLA_OK; b++) amax[0] = fmax(amax[0], norms[b]);
    sla_free(norms);
    SLA_TRY(st);
    SLA_TRY(sla_matrix_is_symmetric(A, 1000 * eps, eps * amax[0], &f->sym));
    f->posdiag = di.missing == 0 && di.negative == 0 && di.zero == 0;
    f->zpattern = no_positive_offdiagonal(A);
    return SLA_OK;
}

/* Predicted memory and flops of the direct factorization auto would try first. */
static void predict(const sla_solver *s, auto_facts *f)
{
    double nnz = 0, flops = 0, bytes = 0, n = (double)s->n;
    sla_status st;
    f->mem_budget = s->opt.memory_budget > 0 ? s->opt.memory_budget : 0.5 * physical_memory();
    f->flop_budget = s->opt.flop_budget > 0 ? s->opt.flop_budget : SLA_AUTO_FLOP_BUDGET;
    int mrule = f->sym && f->posdiag && f->zpattern;
    if (f->sym && !mrule && n * n * n / 3 * (double)s->batch <= f->flop_budget &&
        6 * n * n * (double)s->batch <= f->mem_budget) {
        /* even a dense factor fits: no analysis needed to decide */
        f->cost_known = f->dense_bound = 1;
        f->nnz_factor = n * (n + 1) / 2;
        f->flops = n * n * n / 3 * (double)s->batch;
        f->bytes = 6 * n * n * (double)s->batch;
        return;
    }
    if (f->sym) {
        st = sla_cholmod_analyze_cost(&s->A, s->opt.ordering, &nnz, &flops);
        bytes = 12.0 * nnz;           /* 8-byte value + (amortized) index per entry */
    } else {
        st = sla_umfpack_analyze_cost(&s->A, &nnz, &flops, &bytes);
    }
    sla_clear_error();
    f->cost_known = st == SLA_OK;
    f->nnz_factor = nnz;
    f->flops = flops * (double)s->batch;
    f->bytes = bytes * (double)s->batch;
}

static void cost_text(const auto_facts *f, int direct, char *buf, size_t len)
{
    char nz[32], mem[32], mb[32], fl[32], fb[32];
    human(f->nnz_factor, "", nz, sizeof nz);
    human(f->bytes, "B", mem, sizeof mem);
    human(f->mem_budget, "B", mb, sizeof mb);
    human(f->flops, "flop", fl, sizeof fl);
    human(f->flop_budget, "flop", fb, sizeof fb);
    int mem_ok = f->bytes <= f->mem_budget, fl_ok = f->flops <= f->flop_budget;
    snprintf(buf, len, "%s nnz(%s) %s (%s) %s budget %s, %s %s budget %s%s",
             f->dense_bound ? "dense bound" : "predicted", f->sym ? "L" : "L+U", nz, mem,
             mem_ok ? "≤" : ">", mb, fl, fl_ok ? "≤" : ">", fb, direct ? "" : ": iterative");
}

/* Creates `m`; on success writes the description "<backend>; auto: <why>". */
static sla_status try_method(sla_solver *s, sla_method m, const char *why)
{
    s->opt.precond = s->user_precond;
    sla_status st = sla_solver_create_with(s, m);
    if (st == SLA_OK) {
        char backend[sizeof s->description];
        snprintf(backend, sizeof backend, "%s", s->description);
        snprintf(s->why, sizeof s->why, "%s", why);
        snprintf(s->description, sizeof s->description, "%s; auto: %s", backend, why);
    }
    return st;
}

static sla_status direct_path(sla_solver *s, const auto_facts *f, const char *cost)
{
    char why[sizeof s->why];
    sla_status st;
    if (f->sym && f->posdiag) {
        snprintf(why, sizeof why, "symmetric, positive diagonal, Cholesky succeeded; %s", cost);
        st = try_method(s, SLA_METHOD_CHOLESKY, why);
        if (st != SLA_ENOTSPD) return st;
        snprintf(why, sizeof why, "symmetric, positive diagonal but not SPD (Cholesky failed); %s", cost);
    } else if (f->sym) {
        snprintf(why, sizeof why, "symmetric, diagonal not positive; %s", cost);
    }
    if (f->sym) {
        st = try_method(s, SLA_METHOD_LDLT, why);
        if (st != SLA_EUNSUPPORTED) return st;
        strncat(why, "; LDLᵀ unavailable", sizeof why - strlen(why) - 1);
        return try_method(s, SLA_METHOD_LU, why);
    }
    int klu = f->cost_known && f->nnz_factor <= SLA_AUTO_KLU_FILL * (double)sla_pattern_nnz(s->pattern);
    snprintf(why, sizeof why, "unsymmetric, %s fill (nnz(L+U)/nnz(A) %s %g); %s",
             klu ? "low" : "high", klu ? "≤" : ">", SLA_AUTO_KLU_FILL, cost);
    st = try_method(s, klu ? SLA_METHOD_KLU : SLA_METHOD_LU, why);
    if (st == SLA_EUNSUPPORTED && klu) st = try_method(s, SLA_METHOD_LU, why);
    return st;
}

static sla_status iterative_path(sla_solver *s, const auto_facts *f, const char *cost)
{
    char why[sizeof s->why];
    sla_method m = f->sym ? (f->posdiag ? SLA_METHOD_CG : SLA_METHOD_MINRES) : SLA_METHOD_GMRES;
    snprintf(why, sizeof why, "%s; %s", f->sym ? (f->posdiag ? "symmetric, positive diagonal"
                                                            : "symmetric, diagonal not positive")
                                               : "unsymmetric", cost);
    return try_method(s, m, why);
}

sla_status sla_auto_create(sla_solver *s)
{
    auto_facts f = {0};
    s->is_auto = 1;
    s->user_precond = s->opt.precond;
    SLA_TRY(structure(s, &f));
    predict(s, &f);
    /* a caller that needs the determinant needs a factorization, whatever the cost */
    int direct = s->opt.need_determinant || !f.cost_known ||
                 (f.bytes <= f.mem_budget && f.flops <= f.flop_budget);
    double ratio = f.flops / (double)s->batch / fmax(1.0, (double)sla_pattern_nnz(s->pattern));
    int mrule = direct && !s->opt.need_determinant && f.cost_known && f.sym && f.posdiag && f.zpattern &&
                ratio > SLA_AUTO_MMATRIX_RATIO;
    char cost[200];
    if (f.cost_known) cost_text(&f, direct && !mrule, cost, sizeof cost);
    else snprintf(cost, sizeof cost, "no symbolic analysis available");
    if (mrule) {
        size_t l = strlen(cost);
        snprintf(cost + l, sizeof cost - l, "; M-matrix sign pattern with flops/nnz(A) %.0f > %g: "
                 "AMG-PCG", ratio, SLA_AUTO_MMATRIX_RATIO);
        if (s->user_precond == SLA_PRECOND_AUTO) s->user_precond = SLA_PRECOND_AMG;
        direct = 0;
    }
    return direct ? direct_path(s, &f, cost) : iterative_path(s, &f, cost);
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
    snprintf(why, sizeof why, "%s; %s stopped (%s) → %s", s->why, sla_method_name(from),
             sla_reason_name(info->reason), sla_method_name(to));
    if (s->backend && s->backend->destroy) s->backend->destroy(s);
    s->impl = NULL;
    s->backend = NULL;
    s->fallbacks++;
    sla_status st = try_method(s, to, why);
    return st < 0 ? st : 1;
}
