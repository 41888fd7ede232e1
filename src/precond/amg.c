/* Smoothed-aggregation algebraic multigrid: hierarchy set-up, numeric update, V-cycle.
 *
 * Method (docs/amg.md has the details and the measurements behind the choices):
 *   - strength of connection |a_ij| ≥ θ_l sqrt(|a_ii a_jj|), θ_l = θ·2^(−l), and greedy
 *     aggregation: Vaněk, Mandel & Brezina, Computing 56 (1996) 179–196;
 *   - prolongator P = (I − ω D⁻¹A) P_tent with ω = 4/(3ρ(D⁻¹A)), Galerkin Ac = Pᵀ A P;
 *   - V(ν,ν) cycle with l1 hybrid Gauss–Seidel (forward pre, backward post: Baker, Falgout, Kolev
 *     & Yang, SIAM J. Sci. Comput. 33 (2011)), or damped Jacobi; coarsest level by dense
 *     Cholesky / LU (LAPACK).
 * For symmetric A the cycle is a symmetric operator (pre- and post-smoother adjoint, R = Pᵀ), so it
 * preconditions CG and MINRES. op = T runs the transposed cycle: the same P and restriction Pᵀ
 * (applied through P: amg_restrict.c), so "swap P and R" leaves them in place, Aᵀ on every level, the transposed smoothers (a forward
 * sweep on Aᵀ is the transpose of the backward sweep on A) and the transposed coarse solve.
 * Complex A (complex128, complex64; the value kernels are templates instantiated for double
 * complex): a Hermitian A gets R = Pᴴ and Galerkin Pᴴ A P, so the cycle is Hermitian (for CG,
 * MINRES); any other complex A is taken as complex symmetric (A = Aᵀ, e.g. a shifted Laplacian
 * −Δ − (1 − 0.5i)k² as the preconditioner of a Helmholtz problem, Erlangga, Oosterlee & Vuik,
 * SIAM J. Sci. Comput. 27 (2006) 1471–1492) and gets R = Pᵀ, Pᵀ A P: a complex symmetric cycle
 * (for COCG). Strength and ρ on moduli; op T / C by conjugation around the cycle. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "precond/amg_internal.h"

void sla_amg_options_init(sla_amg_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->strength = 0.08;
    o->max_levels = 25;
    o->coarse_size = 500;
    o->presmooth = 1;
    o->postsmooth = 1;
    o->smoother = SLA_AMG_SMOOTHER_GS;
}

static sla_amg_options resolve_options(const sla_amg_options *o)
{
    sla_amg_options d, r;
    sla_amg_options_init(&d);
    r = o ? *o : d;
    if (!(r.strength >= 0)) r.strength = d.strength;
    if (r.max_levels <= 0) r.max_levels = d.max_levels;
    if (r.coarse_size <= 0) r.coarse_size = d.coarse_size;
    if (r.presmooth <= 0) r.presmooth = d.presmooth;
    if (r.postsmooth <= 0) r.postsmooth = d.postsmooth;
    if (r.smoother != SLA_AMG_SMOOTHER_JACOBI) r.smoother = SLA_AMG_SMOOTHER_GS;
    return r;
}

static void level_free(amg_level *L)
{
    amg_csr_free(&L->A);
    amg_csr_free(&L->At);
    amg_csr_free(&L->P);
    amg_restrict_free(&L->rst);
    amg_blocks_free(&L->blk);
    amg_blocks_free(&L->blkt);
    sla_free(L->atperm);
    sla_free(L->agg);
    sla_free(L->diag);
    sla_free(L->dinv);
    sla_free(L->b);
    sla_free(L->x);
    sla_free(L->r);
    sla_free(L->xold);
    memset(L, 0, sizeof *L);
}

void sla_amg_free(sla_amg **amg)
{
    if (!amg || !*amg) return;
    sla_amg *a = *amg;
    if (a->lev)
        for (int l = 0; l < a->opt.max_levels; l++) level_free(&a->lev[l]);
    sla_free(a->lev);
    amg_coarse_free(&a->coarse);
    sla_pattern_free(&a->pattern);
    sla_free(a);
    *amg = NULL;
}

/* Work vectors, diagonal and smoother blocks of a level whose operator A is set. */
static sla_status level_alloc(sla_amg *amg, amg_level *L)
{
    size_t n = (size_t)L->A.nrows * amg_es(&L->A);   /* doubles per vector */
    int jacobi = amg->opt.smoother == SLA_AMG_SMOOTHER_JACOBI;
    if (jacobi) L->dinv = sla_malloc(n, sizeof(double), "AMG smoother diagonal");
    /* level 0's b and x are the caller's r and z, except for float32 or r = z: then they are
     * allocated on the first such apply (level0_buffers), 16 bytes per unknown saved */
    if (L != &amg->lev[0]) {
        L->b = sla_malloc(n, sizeof(double), "AMG right-hand side");
        L->x = sla_malloc(n, sizeof(double), "AMG solution");
        if (!L->b || !L->x) return SLA_ENOMEM;
    }
    /* the residual is stored only for the Jacobi smoother (and op = T on unsymmetric A, see
     * build_transposes); Gauss–Seidel restricts it as it forms it */
    if (jacobi) L->r = sla_malloc(n, sizeof(double), "AMG residual");
    L->xold = sla_malloc(n, sizeof(double), "AMG smoother snapshot");
    if ((jacobi && (!L->dinv || !L->r)) || !L->xold) return SLA_ENOMEM;
    return amg_blocks_build(&L->A, amg->nthreads, &L->blk);
}

/* Diagonal and smoother of level l; a zero diagonal is an error only where a smoother runs. The
 * diagonal serves the set-up of the level only (ρ, smoother, aggregates, P): level_done frees
 * it, 8 bytes per unknown that the solve does not hold. */
static sla_status level_smoother(sla_amg *amg, int l, int needs_smoother)
{
    amg_level *L = &amg->lev[l];
    if (!L->diag)
        L->diag = sla_malloc((size_t)L->A.nrows * amg_es(&L->A), sizeof(double), "AMG diagonal");
    if (!L->diag) return SLA_ENOMEM;
    int64_t bad = amg_diagonal(&L->A, L->diag);
    if (bad >= 0) {
        if (needs_smoother) return amg_diagonal_error(&L->A, l, bad);
        return SLA_OK;
    }
    /* Lanczos costs ~13 products with A_l: spent on the coarse levels (and a small level 0);
     * a large level 0 keeps the Gershgorin bound, tight for the stencils AMG is mostly used on */
    int steps = l > 0 || L->A.nrows <= AMG_LANCZOS_FINE_MAX ? AMG_LANCZOS_STEPS : 0;
    SLA_TRY(amg_rho_estimate(&L->A, &L->blk, L->diag, steps, &L->rho));
    return amg_smoother_setup(&L->A, &L->blk, L->diag, L->rho, amg->opt.smoother, L->dinv);
}

static void level_done(amg_level *L)
{
    sla_free(L->diag);
    L->diag = NULL;
}

/* Values of P (create and update share it, so both compute the same numbers). */
static sla_status level_prolong_values(amg_level *L)
{
    L->omega = 4.0 / (3.0 * L->rho);
    return amg_prolong_numeric(&L->A, L->diag, L->agg, L->omega, &L->P);
}

/* Coarsening of level l: aggregates, P, and the next level's operator Ac = Pᵀ A P.
 * *coarsened = 0 when the level stays the coarsest (no aggregates, or too few rows merged to pay
 * for a level). */
static sla_status level_coarsen(sla_amg *amg, int l, int *coarsened)
{
    amg_level *L = &amg->lev[l];
    int64_t n = L->A.nrows;
    *coarsened = 0;
    L->theta = amg->opt.strength * pow(0.5, l);
    L->agg = sla_malloc((size_t)n, sizeof(int32_t), "AMG aggregates");
    if (!L->agg) return SLA_ENOMEM;
    SLA_TRY(amg_aggregate(&L->A, L->diag, L->theta, &L->blk, L->agg, &L->nagg));
    if (L->nagg == 0 || (double)L->nagg > 0.9 * (double)n) {
        sla_free(L->agg);
        L->agg = NULL;
        L->nagg = 0;
        return SLA_OK;
    }
    SLA_TRY(amg_prolong_symbolic(&L->A, L->agg, L->nagg, &L->P));
    SLA_TRY(level_prolong_values(L));
    /* neither A·P nor R = Pᵀ is formed (amg_galerkin.c): Pᵀ's pattern only, for the product */
    amg_csr PT;
    SLA_TRY(amg_transpose_pattern(&L->P, &PT));
    sla_status st = amg_galerkin(&L->A, &L->P, &PT, &amg->lev[l + 1].A);
    amg_csr_free(&PT);
    SLA_TRY(st);
    SLA_TRY(amg_restrict_build(&L->P, &L->blk, &L->rst));
    *coarsened = 1;
    return SLA_OK;
}

/* New values of P and the next level's operator on the stored patterns (update). */
static sla_status level_galerkin_update(sla_amg *amg, int l)
{
    amg_level *L = &amg->lev[l];
    SLA_TRY(level_prolong_values(L));
    amg_csr PT;
    SLA_TRY(amg_transpose_pattern(&L->P, &PT));
    sla_status st = amg_galerkin_numeric(&L->A, &L->P, &PT, &amg->lev[l + 1].A);
    amg_csr_free(&PT);
    return st;
}

static void describe(sla_amg *amg)
{
    double nnz = 0, rows = 0;
    char sizes[300] = "";
    size_t used = 0;
    for (int l = 0; l < amg->nlevels; l++) {
        nnz += (double)amg_nnz(&amg->lev[l].A);
        rows += (double)amg->lev[l].A.nrows;
        if (used < sizeof sizes - 24)
            used += (size_t)snprintf(sizes + used, sizeof sizes - used, "%s%lld", l ? "/" : "",
                                     (long long)amg->lev[l].A.nrows);
    }
    double nnz0 = (double)amg_nnz(&amg->lev[0].A), n0 = (double)amg->n;
    static const char *coarse[] = {"none", "dense Cholesky", "dense LU", "smoother sweeps"};
    const char *kind = !amg->cplx ? "" : amg->hermitian ? ", complex Hermitian: R = Pᴴ"
                                                        : ", complex symmetric: R = Pᵀ";
    snprintf(amg->desc, sizeof amg->desc,
             "AMG (smoothed aggregation%s): %d level%s, sizes %s, operator complexity %.2f, "
             "grid complexity %.2f; smoother %s(%d,%d), coarsest: %s", kind,
             amg->nlevels, amg->nlevels == 1 ? "" : "s", sizes, nnz0 > 0 ? nnz / nnz0 : 1.0,
             n0 > 0 ? rows / n0 : 1.0,
             amg->opt.smoother == SLA_AMG_SMOOTHER_JACOBI ? "Jacobi" : "l1 hybrid Gauss-Seidel",
             amg->opt.presmooth, amg->opt.postsmooth, coarse[amg->coarse.kind]);
}

static sla_status build(sla_amg *amg)
{
    const sla_amg_options *o = &amg->opt;
    for (int l = 0;; l++) {
        amg_level *L = &amg->lev[l];
        amg->nlevels = l + 1;
        SLA_TRY(level_alloc(amg, L));
        int coarsened = 0;
        if (L->A.nrows > o->coarse_size && l + 1 < o->max_levels) {
            SLA_TRY(level_smoother(amg, l, 1));
            SLA_TRY(level_coarsen(amg, l, &coarsened));
        }
        if (coarsened) level_done(L);
        L->peak_rss = sla_peak_rss_bytes();
        if (!coarsened) break;
    }
    amg_level *C = &amg->lev[amg->nlevels - 1];
    SLA_TRY(amg_coarse_factor(&C->A, o->coarse_size, &amg->coarse));
    /* the coarsest level needs a smoother only when it is not factored */
    SLA_TRY(level_smoother(amg, amg->nlevels - 1, amg->coarse.kind == AMG_COARSE_SMOOTH));
    level_done(C);
    describe(amg);
    return SLA_OK;
}

/* the real dtype of the parts of a dtype (float64 for complex128, float32 for complex64) */
static sla_dtype part_dtype(sla_dtype t)
{
    return t == SLA_COMPLEX128 ? SLA_FLOAT64 : t == SLA_COMPLEX64 ? SLA_FLOAT32 : t;
}

/* Level 0 values: float64 and complex128 ones are borrowed (like the solver object, the
 * hierarchy reads them until the next update or free), float32 and complex64 ones converted
 * into an owned copy (a complex value is a pair of parts: the conversion runs on the parts). */
static sla_status load_values(amg_csr *A0, const sla_matrix *A, int64_t b)
{
    int64_t nnz = sla_pattern_nnz(A->pattern) * (int64_t)amg_es(A0);
    if (part_dtype(A->dtype) == SLA_FLOAT64) {
        A0->v = (double *)A->values + b * nnz;
        A0->borrowed_v = 1;
        return SLA_OK;
    }
    if (!A0->v) A0->v = sla_malloc((size_t)nnz, sizeof(double), "AMG level-0 values");
    if (!A0->v) return SLA_ENOMEM;
    amg_to_double(SLA_FLOAT32, A->values, b * nnz, nnz, A0->v);
    return SLA_OK;
}

/* A complex A_b: Hermitian (to 1000ε relative, the solver backends' rule) selects R = Pᴴ, else
 * the hierarchy is built for a complex symmetric A with R = Pᵀ */
static sla_status detect_hermitian(const sla_matrix *A, int64_t b, int *herm)
{
    int64_t nnz = sla_pattern_nnz(A->pattern);
    sla_matrix Ab = sla_matrix_view(A->pattern, A->dtype, 1,
                                    (const char *)A->values + (size_t)(b * nnz) * sla_dtype_size(A->dtype));
    double eps = A->dtype == SLA_COMPLEX128 ? 2.220446049250313e-16 : 1.1920929e-07;
    return sla_matrix_is_hermitian(&Ab, 1000 * eps, 0, herm);
}

static sla_status check_matrix(const sla_matrix *A, int64_t b)
{
    SLA_CHECK_ARG(A, "A is NULL");
    SLA_TRY(sla_matrix_check_for("sla_amg_create", "A", A, SLA_CHECK_COMPLEX_OK));
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    if (m != n)
        return SLA_FAIL(SLA_ESHAPE, "A is %lld × %lld: AMG needs a square matrix", (long long)m,
                        (long long)n);
    SLA_CHECK_ARG(b >= 0 && b < A->batch, "batch index b = %lld is outside [0, %lld)",
                  (long long)b, (long long)A->batch);
    return SLA_OK;
}

sla_status sla_amg_create(const sla_matrix *A, int64_t b, const sla_amg_options *o, sla_amg **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(check_matrix(A, b));
    sla_amg *amg = sla_calloc(1, sizeof *amg, "AMG object");
    if (!amg) return SLA_ENOMEM;
    amg->opt = resolve_options(o);
    amg->dtype = A->dtype;
    amg->n = sla_pattern_nrows(A->pattern);
    amg->nthreads = sla_threads();
    amg->cplx = sla_dtype_is_complex(A->dtype);
    sla_status sh = amg->cplx ? detect_hermitian(A, b, &amg->hermitian) : SLA_OK;
    if (sh != SLA_OK) {
        sla_free(amg);
        return sh;
    }
    amg->pattern = sla_pattern_retain((sla_pattern *)A->pattern);
    amg->lev = sla_calloc((size_t)amg->opt.max_levels, sizeof(amg_level), "AMG levels");
    sla_status st = SLA_ENOMEM;
    if (!amg->lev) goto fail;
    amg_csr *A0 = &amg->lev[0].A;
    A0->nrows = A0->ncols = amg->n;
    A0->rp = (int64_t *)sla_pattern_rowptr(A->pattern);
    A0->ci = (int32_t *)sla_pattern_colind(A->pattern);
    A0->borrowed = 1;
    A0->cplx = amg->cplx;
    A0->conj_r = amg->cplx && amg->hermitian;   /* R = Pᴴ for Hermitian A, Pᵀ otherwise */
    if ((st = load_values(A0, A, b)) != SLA_OK) goto fail;
    if ((st = build(amg)) != SLA_OK) goto fail;
    *out = amg;
    return SLA_OK;
fail:
    sla_amg_free(&amg);
    return st;
}

static void refresh_transposes(sla_amg *amg)
{
    for (int l = 0; l < amg->nlevels; l++) {
        amg_level *L = &amg->lev[l];
        if (!L->atperm) continue;
        amg_permute_values(&L->A, L->atperm, &L->At);
        if (L->dinv && amg->opt.smoother != SLA_AMG_SMOOTHER_JACOBI)
            amg_gs_full_dinv(&L->A, &L->blk, L->dinv);
    }
}

sla_status sla_amg_update(sla_amg *amg, const sla_matrix *A, int64_t b)
{
    SLA_CHECK_ARG(amg, "amg is NULL");
    SLA_TRY(check_matrix(A, b));
    const sla_pattern *p = A->pattern;
    int64_t n = amg->n, nnz = sla_pattern_nnz(p);
    if (p != amg->pattern) {
        int same = sla_pattern_nrows(p) == n && nnz == sla_pattern_nnz(amg->pattern) &&
                   !memcmp(sla_pattern_rowptr(p), sla_pattern_rowptr(amg->pattern),
                           sizeof(int64_t) * (size_t)(n + 1)) &&
                   !memcmp(sla_pattern_colind(p), sla_pattern_colind(amg->pattern),
                           sizeof(int32_t) * (size_t)nnz);
        if (!same)
            return SLA_FAIL(SLA_ESHAPE, "A's pattern differs from the one the AMG hierarchy was "
                            "built on: create a new hierarchy");
    }
    if (A->dtype != amg->dtype)
        return SLA_FAIL(SLA_EDTYPE, "A is %s but the hierarchy was built for %s",
                        sla_dtype_name(A->dtype), sla_dtype_name(amg->dtype));
    if (amg->cplx) {   /* R = Pᴴ or Pᵀ was chosen at create: a change of class needs a new one */
        int herm = 0;
        SLA_TRY(detect_hermitian(A, b, &herm));
        if (herm != amg->hermitian)
            return SLA_FAIL(SLA_EINVAL, "A is %s but the AMG hierarchy was built for a %s A (R = "
                            "%s): create a new hierarchy", herm ? "Hermitian" : "not Hermitian",
                            amg->hermitian ? "Hermitian" : "complex symmetric",
                            amg->hermitian ? "Pᴴ" : "Pᵀ");
    }
    SLA_TRY(load_values(&amg->lev[0].A, A, b));
    for (int l = 0; l + 1 < amg->nlevels; l++) {
        SLA_TRY(level_smoother(amg, l, 1));
        SLA_TRY(level_galerkin_update(amg, l));
        level_done(&amg->lev[l]);
    }
    amg_level *C = &amg->lev[amg->nlevels - 1];
    SLA_TRY(amg_coarse_factor(&C->A, amg->opt.coarse_size, &amg->coarse));
    SLA_TRY(level_smoother(amg, amg->nlevels - 1, amg->coarse.kind == AMG_COARSE_SMOOTH));
    level_done(C);
    refresh_transposes(amg);
    describe(amg);
    return SLA_OK;
}

static void free_transposes(sla_amg *amg)
{
    for (int l = 0; l < amg->nlevels; l++) {
        amg_level *L = &amg->lev[l];
        amg_csr_free(&L->At);
        amg_blocks_free(&L->blkt);
        sla_free(L->atperm);
        L->atperm = NULL;
        if (amg->opt.smoother != SLA_AMG_SMOOTHER_JACOBI) {   /* the transposed cycle's only */
            sla_free(L->dinv);
            sla_free(L->r);
            L->dinv = L->r = NULL;
        }
    }
}

/* Aᵀ and its smoother halo on every level. */
static sla_status build_transposes(sla_amg *amg)
{
    for (int l = 0; l < amg->nlevels; l++) {
        amg_level *L = &amg->lev[l];
        if (!L->atperm) SLA_TRY(amg_transpose(&L->A, &L->At, &L->atperm));
        /* the transposed cycle stores its residual (Aᵀ's boundary rows are not A's) */
        if (!L->r) L->r = sla_malloc((size_t)L->A.nrows, sizeof(double), "AMG residual");
        if (!L->r) return SLA_ENOMEM;
        /* and every row's Gauss–Seidel factor (Aᵀ's boundary rows are not A's) */
        if (!L->dinv) {
            L->dinv = sla_malloc((size_t)L->A.nrows, sizeof(double), "AMG smoother diagonal");
            if (!L->dinv) return SLA_ENOMEM;
            amg_gs_full_dinv(&L->A, &L->blk, L->dinv);
        }
        L->blkt.n = L->blk.n;
        L->blkt.bounds = sla_malloc((size_t)L->blk.n + 1, sizeof(int64_t), "AMG blocks");
        if (!L->blkt.bounds) return SLA_ENOMEM;
        memcpy(L->blkt.bounds, L->blk.bounds, sizeof(int64_t) * (size_t)(L->blk.n + 1));
        SLA_TRY(amg_blocks_halo(&L->At, &L->blkt));
    }
    return SLA_OK;
}

/* On the first op = T apply: is A_0 exactly symmetric (then the transposed cycle is the cycle
 * itself)? If not, build Aᵀ on every level. On failure nothing is kept, so a later call retries. */
static sla_status ensure_transposes(sla_amg *amg)
{
    if (amg->sym_known) return SLA_OK;
    amg_level *L0 = &amg->lev[0];
    sla_status st = amg_transpose(&L0->A, &L0->At, &L0->atperm);
    if (st != SLA_OK) return st;
    int64_t n = amg->n, nnz = amg_nnz(&L0->A);
    int sym = !memcmp(L0->A.rp, L0->At.rp, sizeof(int64_t) * (size_t)(n + 1)) &&
              !memcmp(L0->A.ci, L0->At.ci, sizeof(int32_t) * (size_t)nnz) &&
              !memcmp(L0->A.v, L0->At.v, sizeof(double) * (size_t)nnz);
    if (sym) free_transposes(amg);
    else if ((st = build_transposes(amg)) != SLA_OK) {
        free_transposes(amg);
        return st;
    }
    amg->symmetric = sym;
    amg->sym_known = 1;
    return SLA_OK;
}

/* One sweep: forward (reverse = 0) or backward Gauss–Seidel, or Jacobi; zero: x = 0 on entry. */
static void sweep(const sla_amg *amg, amg_level *L, int trans, const double *b, double *x,
                  int reverse, int zero)
{
    const amg_csr *A = trans ? &L->At : &L->A;
    const amg_blocks *bk = trans ? &L->blkt : &L->blk;
    if (amg->opt.smoother == SLA_AMG_SMOOTHER_JACOBI)
        amg_jacobi_sweep(A, bk, L->dinv, b, x, L->r, zero);
    else
        amg_gs_sweep(A, bk, L->dinv, b, x, L->xold, reverse, zero);
}

static void vcycle(sla_amg *amg, int l, int trans, const double *b, double *x)
{
    amg_level *L = &amg->lev[l];
    if (l == amg->nlevels - 1) {
        if (amg->coarse.kind == AMG_COARSE_SMOOTH) {
            /* (forward, backward)^4 from zero: a symmetric operator for symmetric A */
            for (int s = 0; s < 4; s++) {
                sweep(amg, L, trans, b, x, 0, s == 0);
                sweep(amg, L, trans, b, x, 1, 0);
            }
        } else {
            amg_coarse_solve(&amg->coarse, trans, b, x);
        }
        return;
    }
    amg_level *N = &amg->lev[l + 1];
    const amg_csr *A = trans ? &L->At : &L->A;
    const amg_blocks *bk = trans ? &L->blkt : &L->blk;
    /* pre: ν forward sweeps from x = 0; post: ν backward sweeps, the adjoint */
    int nu = amg->opt.presmooth, gs = amg->opt.smoother != SLA_AMG_SMOOTHER_JACOBI;
    for (int s = 0; s < nu - gs; s++) sweep(amg, L, trans, b, x, 0, s == 0);
    /* the last sweep computes the residual on the fly, and restricts it (A's cycle) */
    if (gs && !trans) {
        amg_gs_forward_restrict(A, bk, L->dinv, b, x, L->xold, &L->P, &L->rst, N->b, nu == 1);
    } else {
        if (gs) amg_gs_forward_residual(A, bk, L->dinv, b, x, L->xold, L->r, nu == 1);
        else amg_residual(A, bk, b, x, L->r);
        amg_restrict_apply(&L->P, &L->blk, &L->rst, L->r, N->b);
    }
    vcycle(amg, l + 1, trans, N->b, N->x);
    amg_spmv(&L->P, N->x, x, 1);
    for (int s = 0; s < amg->opt.postsmooth; s++) sweep(amg, L, trans, b, x, 1, 0);
}

/* z = M⁻¹ r by one V-cycle (trans: the transposed cycle of a real unsymmetric A) */
static sla_status cycle(sla_amg *amg, int trans, const void *r, void *z)
{
    int64_t n = amg->n, parts = n * (amg->cplx ? 2 : 1);
    amg_level *L0 = &amg->lev[0];
    const double *b0;
    double *x0;
    int wide = part_dtype(amg->dtype) == SLA_FLOAT64;    /* float64 / complex128: no conversion */
    if (wide && r != z) {
        b0 = r;
        x0 = z;
    } else {
        if (!L0->b) L0->b = sla_malloc((size_t)parts, sizeof(double), "AMG right-hand side");
        if (!L0->x) L0->x = sla_malloc((size_t)parts, sizeof(double), "AMG solution");
        if (!L0->b || !L0->x) return SLA_ENOMEM;
        amg_to_double(part_dtype(amg->dtype), r, 0, parts, L0->b);
        b0 = L0->b;
        x0 = wide ? z : L0->x;
    }
    vcycle(amg, 0, trans, b0, x0);
    if (!wide) amg_from_double(part_dtype(amg->dtype), x0, parts, z);
    return SLA_OK;
}

sla_status sla_amg_apply(sla_amg *amg, sla_op op, const void *r, void *z)
{
    SLA_CHECK_ARG(amg, "amg is NULL");
    SLA_CHECK_ARG(op == SLA_OP_N || op == SLA_OP_T || (op == SLA_OP_C && amg->cplx),
                  "op = %d is not N or T (or C, complex)", (int)op);
    int64_t n = amg->n;
    if (n == 0) return SLA_OK;
    SLA_CHECK_ARG(r && z, "%s is NULL", r ? "z" : "r");
    if (amg->cplx) {
        /* the cycle M is Hermitian (Hermitian A, R = Pᴴ, adjoint sweeps) or complex symmetric
         * (R = Pᵀ): op C, resp. op T, is M itself; the other is conj(M⁻¹ conj(r)) */
        if (op == SLA_OP_N || op == (amg->hermitian ? SLA_OP_C : SLA_OP_T)) return cycle(amg, 0, r, z);
        void *rc = sla_malloc((size_t)n, sla_dtype_size(amg->dtype), "AMG conjugated residual");
        if (!rc) return SLA_ENOMEM;
        sla_conj(amg->dtype, n, r, rc);
        sla_status st = cycle(amg, 0, rc, z);
        sla_free(rc);
        if (st == SLA_OK) sla_conj(amg->dtype, n, z, z);
        return st;
    }
    int trans = 0;
    if (op == SLA_OP_T) {
        SLA_TRY(ensure_transposes(amg));
        trans = !amg->symmetric;
    }
    return cycle(amg, trans, r, z);
}

const char *sla_amg_describe(const sla_amg *amg)
{
    return amg ? amg->desc : "AMG: none";
}
