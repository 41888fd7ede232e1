/* sla_eigsh: argument checks, the choice of method (method = auto: the rules are in
 * choose_method below, in one place), the drivers, and the common post-processing (true
 * residuals, Rayleigh-quotient eigenvalues, ascending order, sign convention, output dtype). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eig/eig_internal.h"

/* Auto: below this n the dense path is the fastest and the most robust. */
#define AUTO_DENSE_N 300

void sla_eigsh_options_init(sla_eigsh_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->which = SLA_EIGSH_LM;
    opt->sigma = NAN;
    opt->tol = 1e-10;
    opt->method = SLA_EIGSH_AUTO;
}

static const char *const which_names[] = {"LM", "SM", "LA", "SA"};
static const char *const method_names[] = {"auto", "lobpcg", "lanczos", "arpack", "dense"};

const char *sla_eigsh_which_name(sla_eigsh_which w)
{
    return (unsigned)w < SLA_EIGSH_WHICH_COUNT ? which_names[w] : "invalid";
}

sla_status sla_eigsh_which_from_name(const char *name, sla_eigsh_which *w)
{
    SLA_CHECK_ARG(name && w, "name or w is NULL");
    for (int i = 0; i < SLA_EIGSH_WHICH_COUNT; i++)
        if (strcasecmp(name, which_names[i]) == 0) { *w = (sla_eigsh_which)i; return SLA_OK; }
    return SLA_FAIL(SLA_EINVAL, "which = '%s' is not LM, SM, LA or SA", name);
}

const char *sla_eigsh_method_name(sla_eigsh_method m)
{
    return (unsigned)m < SLA_EIGSH_METHOD_COUNT ? method_names[m] : "invalid";
}

sla_status sla_eigsh_method_from_name(const char *name, sla_eigsh_method *m)
{
    SLA_CHECK_ARG(name && m, "name or m is NULL");
    for (int i = 0; i < SLA_EIGSH_METHOD_COUNT; i++)
        if (strcasecmp(name, method_names[i]) == 0) { *m = (sla_eigsh_method)i; return SLA_OK; }
    return SLA_FAIL(SLA_EINVAL, "method = '%s' is not auto, lobpcg, lanczos, arpack or dense", name);
}

/* ------------------------------------------------------------------------------------------ */
/* Checks                                                                                      */

static sla_status check_options(const sla_eigsh_options *o, int64_t n, int64_t k)
{
    EIG_CHECK_ARG((unsigned)o->which < SLA_EIGSH_WHICH_COUNT, "options.which = %d is invalid",
                  (int)o->which);
    EIG_CHECK_ARG((unsigned)o->method < SLA_EIGSH_METHOD_COUNT, "options.method = %d is invalid",
                  (int)o->method);
    EIG_CHECK_ARG(isfinite(o->tol) && o->tol >= 0, "options.tol = %g must be finite and ≥ 0", o->tol);
    EIG_CHECK_ARG(!isinf(o->sigma), "options.sigma = %g is infinite (NAN means no shift)", o->sigma);
    if (!isnan(o->sigma) && o->which != SLA_EIGSH_LM)
        return EIG_FAIL(SLA_EINVAL, "options.which = %s with sigma = %g: with a shift only LM "
                        "(the eigenvalues nearest sigma) is defined", which_names[o->which], o->sigma);
    EIG_CHECK_ARG(!o->v0 || o->nv0 >= 1, "options.v0 is given but options.nv0 = %lld < 1",
                  (long long)o->nv0);
    EIG_CHECK_ARG(!o->precond_solver || !o->precond,
                  "options.precond_solver and options.precond are both set; give one");
    return SLA_OK;
}

/* Locates the first entry x_ij with |x_ij − x_ji| > rtol·max(|x_ij|, |x_ji|) of the float64
 * matrix X (named name: "A" or "M") for the message. */
static sla_status symmetry_error(const char *name, const sla_matrix *X, double rtol)
{
    const int64_t *rp = sla_pattern_rowptr(X->pattern);
    const int32_t *ci = sla_pattern_colind(X->pattern);
    int64_t n = sla_pattern_nrows(X->pattern), nnz = sla_pattern_nnz(X->pattern);
    char e = name[0] == 'A' ? 'a' : 'm';
    for (int64_t b = 0; b < X->batch; b++) {
        const double *v = (const double *)X->values + b * nnz;
        for (int64_t i = 0; i < n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                int64_t t = sla_pattern_find(X->pattern, ci[s], i);
                double a = v[s], at = t >= 0 ? v[t] : 0.0;
                if (fabs(a - at) > rtol * fmax(fabs(a), fabs(at)))
                    return sla_error_set(SLA_EINVAL, "sla_eigsh", "%s is not symmetric: batch %lld, %c[%lld][%d] = %.17g "
                                    "but %c[%d][%lld] = %.17g (eigsh needs a symmetric matrix)",
                                    name, (long long)b, e, (long long)i, ci[s], a, e, ci[s], (long long)i, at);
            }
    }
    return sla_error_set(SLA_EINVAL, "sla_eigsh", "%s is not symmetric (eigsh needs a symmetric matrix)", name);
}

/* ------------------------------------------------------------------------------------------ */
/* The choice of method                                                                        */

typedef struct plan {
    sla_eigsh_method method;
    int si_mode;                /* Lanczos/ARPACK on (sgn·(A − σI))⁻¹ (si below), else on A */
    eig_si si;
    eig_want want;              /* order of the Ritz values of the operator */
    int adaptive;               /* the verified shift may move toward the spectrum */
    int lobpcg_ends;            /* LOBPCG: 1 = SA, 2 = LA, 3 = both (LM) */
    eig_sizes sz;               /* LOBPCG block, Lanczos block, basis size (sizes.c) */
    char why[160];
} plan;

static int all_ge0(const eig_problem *P)
{
    for (int64_t b = 0; b < P->batch; b++) if (P->gersh_lo[b] < 0) return 0;
    return 1;
}

static int all_le0(const eig_problem *P)
{
    for (int64_t b = 0; b < P->batch; b++) if (P->gersh_hi[b] > 0) return 0;
    return 1;
}

/* LOBPCG ends for which (SM on a semidefinite matrix is an end of the spectrum). */
static sla_status lobpcg_ends(const eig_problem *P, sla_eigsh_which w, plan *pl)
{
    int ge0 = all_ge0(P), le0 = all_le0(P);
    switch (w) {
    case SLA_EIGSH_SA: pl->lobpcg_ends = 1; break;
    case SLA_EIGSH_LA: pl->lobpcg_ends = 2; break;
    case SLA_EIGSH_LM: pl->lobpcg_ends = ge0 ? 2 : le0 ? 1 : 3; break;
    case SLA_EIGSH_SM:
        if (!ge0 && !le0)
            return EIG_FAIL(SLA_EINVAL, "which = SM with method lobpcg: the smallest |λ| of an "
                            "indefinite matrix are interior eigenvalues; use method lanczos "
                            "(shift-invert at 0) or auto");
        pl->lobpcg_ends = ge0 ? 1 : 2;
        break;
    default: break;
    }
    return SLA_OK;
}

/* The shift of batch element b: sigma, or (gersh) a bound of the side of the spectrum given by
 * sgn moved out by SLA_EIG_SHIFT_MARGIN of its scale. Standard problem: the Gershgorin bound of A. With M,
 * xᵀAx/xᵀMx is bounded by A's Gershgorin bound over M's (lo_M > 0 needed; SLA_EUNSUPPORTED
 * otherwise): λ ≥ lo_A/hi_M if lo_A ≥ 0, else lo_A/lo_M; λ ≤ hi_A/lo_M if hi_A ≥ 0, else hi_A/hi_M. */
static sla_status initial_shift(const eig_problem *P, int64_t b, double sgn, int gersh, double sigma,
                                double *shift)
{
    if (!gersh) { *shift = sigma; return SLA_OK; }
    if (!P->has_M) {
        double d = SLA_EIG_SHIFT_MARGIN * P->norm1[b];
        *shift = sgn > 0 ? P->gersh_lo[b] - d : P->gersh_hi[b] + d;
        return SLA_OK;
    }
    double mlo = P->mgersh_lo[b], mhi = P->mgersh_hi[b];
    if (!(mlo > 0))
        return EIG_FAIL(SLA_EUNSUPPORTED, "which = %s with a mass matrix and an indefinite A: no "
                        "shift %s the spectrum is known (M's Gershgorin lower bound %g ≤ 0, batch "
                        "%lld); give options.sigma", sgn > 0 ? "SA" : "LA",
                        sgn > 0 ? "below" : "above", mlo, (long long)b);
    double lo = P->gersh_lo[b], hi = P->gersh_hi[b];
    double bound = sgn > 0 ? (lo >= 0 ? lo / mhi : lo / mlo) : (hi >= 0 ? hi / mlo : hi / mhi);
    *shift = bound - sgn * SLA_EIG_SHIFT_MARGIN * (fabs(bound) + P->norm1[b] / mhi);
    return SLA_OK;
}

/* Factors sgn·(A − σ_b I) (sgn·(A − σ_b M) with M) for the plan: σ_b = sigma, or the Gershgorin bound of the side given
 * by sgn (gersh = 1: below the spectrum for sgn = +1, above for −1) moved out by
 * SLA_EIG_SHIFT_MARGIN·‖A‖₁.
 * cholesky = 1: a verified shift (SLA_ENOTSPD if sgn·(A − σI) is not SPD). */
static sla_status si_factor(const eig_problem *P, const sla_eigsh_options *o, plan *pl, double sgn,
                            double sigma, int gersh, int cholesky)
{
    eig_si *si = &pl->si;
    if (!si->sigma) {
        si->sigma = sla_malloc((size_t)P->batch, sizeof(double), "shifts");
        if (!si->sigma) return SLA_ENOMEM;
        SLA_TRY(eig_shifted_init(P, &si->S));
    }
    double *want = sla_malloc((size_t)P->batch, sizeof(double), "shifts");
    if (!want) return SLA_ENOMEM;
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < P->batch && st == SLA_OK; b++)
        st = initial_shift(P, b, sgn, gersh, sigma, &want[b]);
    if (st != SLA_OK) { sla_free(want); return st; }
    si->fopt = o->factor_options;
    si->sgn = sgn;
    si->verified = cholesky;
    sla_solver_free(&si->solver);
    st = eig_factor(P, &si->S, want, sgn, o->factor_options,
                    cholesky ? EIG_SHIFT_VERIFIED : EIG_SHIFT, &si->solver, si->sigma,
                    SLA_EIG_SHIFT_MARGIN);
    si->factorizations++;
    sla_free(want);
    if (st == SLA_OK) pl->si_mode = 1;
    return st;
}

/* A verified shift for an end of the spectrum: SA (sgn = +1) tries σ = 0 (A SPD) and then the
 * Gershgorin lower bound; LA (sgn = −1) the Gershgorin upper bound. 1 on success. */
static sla_status verified_end(const eig_problem *P, const sla_eigsh_options *o, plan *pl, double sgn)
{
    sla_status st = SLA_ENOTSPD;
    if (sgn > 0) st = si_factor(P, o, pl, 1.0, 0.0, 0, 1);
    if (st == SLA_ENOTSPD) {
        sla_clear_error();
        st = si_factor(P, o, pl, sgn, 0.0, 1, 1);
    }
    if (st == SLA_OK) {
        pl->want = EIG_WANT_LA;       /* θ = 1/(sgn·(λ − σ)) > 0: the largest are the nearest */
        pl->adaptive = 1;
        snprintf(pl->why, sizeof pl->why, "%s: shift-invert at a shift %s the spectrum, proved by "
                 "a Cholesky factorization", sgn > 0 ? "SA" : "LA", sgn > 0 ? "below" : "above");
    }
    return st;
}

static sla_status plan_lanczos(const eig_problem *P, const sla_eigsh_options *o, plan *pl)
{
    if (!isnan(o->sigma)) {
        pl->want = EIG_WANT_LM;
        snprintf(pl->why, sizeof pl->why, "sigma given: shift-invert");
        return si_factor(P, o, pl, 1.0, o->sigma, 0, 0);
    }
    switch (o->which) {
    case SLA_EIGSH_SA: return verified_end(P, o, pl, 1.0);
    case SLA_EIGSH_LA: return verified_end(P, o, pl, -1.0);
    case SLA_EIGSH_SM: {
        /* SPD (or negative definite): SM is an end, with a verified shift at 0 */
        sla_status st = si_factor(P, o, pl, 1.0, 0.0, 0, 1);
        if (st == SLA_ENOTSPD) { sla_clear_error(); st = si_factor(P, o, pl, -1.0, 0.0, 0, 1); }
        if (st == SLA_OK) {
            pl->want = EIG_WANT_LA;
            pl->adaptive = 1;
            snprintf(pl->why, sizeof pl->why, "SM: A is %s definite (Cholesky), shift-invert at σ = 0",
                     pl->si.sgn > 0 ? "positive" : "negative");
            return st;
        }
        if (st != SLA_ENOTSPD) return st;
        sla_clear_error();
        pl->want = EIG_WANT_LM;
        snprintf(pl->why, sizeof pl->why, "SM: A indefinite, shift-invert at σ = 0");
        return si_factor(P, o, pl, 1.0, 0.0, 0, 0);
    }
    default:
        if (P->has_M) {
            /* regular mode would need M⁻¹A: LM of a semidefinite A is an end of the spectrum */
            if (all_ge0(P) || all_le0(P)) {
                sla_status st = verified_end(P, o, pl, all_ge0(P) ? -1.0 : 1.0);
                if (st == SLA_OK)
                    snprintf(pl->why, sizeof pl->why, "LM of a semidefinite A with M: the %s end, "
                             "shift-invert at a shift proved by Cholesky", all_ge0(P) ? "upper" : "lower");
                return st;
            }
            return EIG_FAIL(SLA_EUNSUPPORTED, "which = LM without sigma for A v = λ M v with an "
                            "indefinite A (Gershgorin): Lanczos has no regular mode with M; use "
                            "method lobpcg or auto (both ends), options.sigma, or which = SA / LA");
        }
        pl->want = EIG_WANT_LM;
        snprintf(pl->why, sizeof pl->why, "LM: Lanczos on A (regular mode)");
        return SLA_OK;
    }
}

static sla_status choose_method(const eig_problem *P, const sla_eigsh_options *o, int64_t k, plan *pl)
{
    int64_t n = P->n;
    sla_eigsh_method m = o->method;
    int has_sigma = !isnan(o->sigma);
    int has_prec = o->precond_solver || o->precond;
    if (m == SLA_EIGSH_AUTO) {
        /* room for an iterative basis: judged on the default sizes (sizes given are checked
         * against the method chosen) */
        eig_sizes d;
        eig_default_sizes(n, k, &d);
        int fits = eig_sizes_fit(n, k, &d, SLA_EIGSH_LOBPCG) && eig_sizes_fit(n, k, &d, SLA_EIGSH_LANCZOS);
        if (n <= AUTO_DENSE_N || !fits) {
            if (n > SLA_EIGSH_DENSE_MAX_N)
                return EIG_FAIL(SLA_EUNSUPPORTED, "k = %lld of n = %lld: too many eigenpairs for "
                                "the iterative methods (basis > n) and n > %d for the dense "
                                "path", (long long)k, (long long)n, SLA_EIGSH_DENSE_MAX_N);
            pl->method = SLA_EIGSH_DENSE;
            if (n <= AUTO_DENSE_N) snprintf(pl->why, sizeof pl->why, "n ≤ %d", AUTO_DENSE_N);
            else snprintf(pl->why, sizeof pl->why, "k too large for an iterative basis");
            return SLA_OK;
        }
        /* shift-invert unless LOBPCG has a preconditioner or LM needs both ends of an indefinite
         * spectrum; LOBPCG also when no factorization is available */
        int lm_ends = o->which == SLA_EIGSH_LM && !has_sigma && !all_ge0(P) && !all_le0(P);
        if ((has_prec && !has_sigma && o->which != SLA_EIGSH_SM) || lm_ends) {
            m = SLA_EIGSH_LOBPCG;
            snprintf(pl->why, sizeof pl->why, "%s", lm_ends ? "LM of an indefinite matrix: LOBPCG "
                     "from both ends" : "LOBPCG with the given preconditioner");
        } else {
            pl->method = SLA_EIGSH_LANCZOS;
            SLA_TRY(eig_sizes_for(o, n, k, SLA_EIGSH_LANCZOS, &pl->sz));
            sla_eigsh_options o2 = *o;
            if (o2.which == SLA_EIGSH_LM && !has_sigma) o2.which = all_ge0(P) ? SLA_EIGSH_LA : SLA_EIGSH_SA;
            sla_status st = plan_lanczos(P, &o2, pl);
            if (st != SLA_EUNSUPPORTED || has_sigma || o->which == SLA_EIGSH_SM) return st;
            sla_clear_error();
            m = SLA_EIGSH_LOBPCG;
            snprintf(pl->why, sizeof pl->why, "no factorization available: LOBPCG");
        }
    }
    pl->method = m;
    if (m == SLA_EIGSH_DENSE) {
        if (n > SLA_EIGSH_DENSE_MAX_N)
            return EIG_FAIL(SLA_EUNSUPPORTED, "method dense: n = %lld > %d", (long long)n,
                            SLA_EIGSH_DENSE_MAX_N);
        return SLA_OK;
    }
    SLA_TRY(eig_sizes_for(o, n, k, m, &pl->sz));
    if (!eig_sizes_fit(n, k, &pl->sz, m))
        return EIG_FAIL(SLA_EINVAL, "method %s: k = %lld is too large for n = %lld (%s); use "
                        "method dense or auto", method_names[m], (long long)k, (long long)n,
                        m == SLA_EIGSH_LOBPCG ? "needs 3·block ≤ n" : "needs k + block ≤ ncv ≤ n − block");
    if (m == SLA_EIGSH_LOBPCG) {
        if (has_sigma)
            return EIG_FAIL(SLA_EINVAL, "method lobpcg cannot use sigma (interior eigenvalues); "
                            "use method lanczos, arpack or auto");
        return lobpcg_ends(P, o->which, pl);
    }
    return plan_lanczos(P, o, pl);
}

static void plan_free(plan *pl)
{
    sla_solver_free(&pl->si.solver);
    eig_shifted_free(&pl->si.S);
    sla_free(pl->si.sigma);
    pl->si.sigma = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Running the plan                                                                            */

/* LM from both ends: the k largest |λ| among the k smallest and the k largest. */
static void merge_ends(const eig_problem *P, int64_t k, const eig_result *lo, const eig_result *hi,
                       eig_result *R)
{
    int64_t n = P->n;
    for (int64_t b = 0; b < P->batch; b++) {
        int64_t a = 0, c = 0;   /* lo ascending: most negative first; hi: largest first */
        const double *ll = lo->lambda + b * k, *lh = hi->lambda + b * k;
        /* hi is in the order LOBPCG found them for −A: largest first */
        for (int64_t q = 0; q < k; q++) {
            int take_hi = c < k && (a >= k || fabs(lh[c]) >= fabs(ll[a]));
            const eig_result *src = take_hi ? hi : lo;
            int64_t j = take_hi ? c++ : a++;
            R->lambda[b * k + q] = src->lambda[b * k + j];
            memcpy(R->X + (b * k + q) * n, src->X + (b * k + j) * n, sizeof(double) * (size_t)n);
        }
        int64_t nl = lo->nconv[b] < a ? lo->nconv[b] : a, nh = hi->nconv[b] < c ? hi->nconv[b] : c;
        R->nconv[b] = nl + nh;
    }
}

static sla_status run_lobpcg(const eig_problem *P, const sla_eigsh_options *o, const plan *pl,
                             const double *v0, int64_t k, eig_result *R)
{
    eig_op pop = {0};
    eig_cb_ctx cb = {o->precond, o->precond_ctx, P->dtype};
    if (o->precond_solver) eig_op_solver(&pop, P->n, P->batch, o->precond_solver);
    else if (o->precond) eig_op_callback(&pop, P->n, P->batch, &cb);
    eig_lobpcg_opts lo = {0, pl->sz.m, o->maxiter > 0 ? o->maxiter : 2000, o->tol, v0, o->nv0,
                          (o->precond_solver || o->precond) ? &pop : NULL, NULL, 0, NULL, NULL,
                          NULL};
    sla_status st;
    if (pl->lobpcg_ends != 3) {
        lo.largest = pl->lobpcg_ends == 2;
        st = eig_lobpcg(P, &lo, R);
    } else {
        eig_result Rl, Rh;
        st = eig_result_init(&Rl, P->n, P->batch, k);
        if (st == SLA_OK) {
            st = eig_result_init(&Rh, P->n, P->batch, k);
            if (st != SLA_OK) eig_result_free(&Rl);
        }
        if (st == SLA_OK) {
            st = eig_lobpcg(P, &lo, &Rl);
            lo.largest = 1;
            if (st == SLA_OK) st = eig_lobpcg(P, &lo, &Rh);
            if (st == SLA_OK) {
                merge_ends(P, k, &Rl, &Rh, R);
                R->iterations = Rl.iterations > Rh.iterations ? Rl.iterations : Rh.iterations;
                R->op_apps = Rl.op_apps + Rh.op_apps;
                R->prec_apps = Rl.prec_apps + Rh.prec_apps;
                snprintf(R->what, sizeof R->what, "LOBPCG from both ends (block %lld)", (long long)pl->sz.m);
            }
            eig_result_free(&Rl);
            eig_result_free(&Rh);
        }
    }
    eig_op_free(&pop);
    return st;
}

/* One run of the own block Lanczos with the sizes and start of lo. */
static sla_status run_lanczos(const eig_problem *P, plan *pl, const eig_lanczos_opts *lo,
                              eig_result *R)
{
    eig_op op;
    eig_spmv_ctx sc = {P, 1.0};
    eig_massinv_ctx mc = {P, pl->si.solver};
    if (pl->si_mode && P->has_M) eig_op_solver_mass(&op, &mc);
    else if (pl->si_mode) eig_op_solver(&op, P->n, P->batch, pl->si.solver);
    else eig_op_spmv(&op, &sc);
    sla_status st = eig_lanczos(P, &op, pl->si_mode ? &pl->si : NULL, lo, R);
    eig_op_free(&op);
    return st;
}

static int all_converged(const eig_problem *P, const eig_result *R)
{
    for (int64_t b = 0; b < P->batch; b++) if (R->nconv[b] < R->k) return 0;
    return 1;
}

/* ARPACK's result against the confirming Lanczos run T: kept if the eigenvalues agree, else
 * marked uncertain (a copy ARPACK's single vector missed). */
static sla_status compare_arpack(const eig_problem *P, double tol, int64_t block, eig_result *R,
                                 const double *rres, const eig_result *T, const double *tres)
{
    int64_t bad;
    double got = 0, want = 0;
    SLA_TRY(eig_same_values(P, R, rres, T, tres, tol, &bad, &got, &want));
    if (bad < 0) return SLA_OK;
    R->uncertain = R->k;
    snprintf(R->note, sizeof R->note, "ARPACK's eigenvalues miss a copy of a repeated "
             "eigenvalue: batch %lld, %.12g where block Lanczos (block %lld) finds %.12g; use "
             "method lanczos or auto", (long long)bad, got, (long long)block, want);
    return SLA_OK;
}

/* The multiplicity rule (multiplicity.c): a converged result of a Krylov run with block p is
 * accepted when no eigenvalue has p or more copies in it. Otherwise the own block Lanczos runs
 * again from a random start (a start made of the computed vectors would hold only the copies
 * already found) with block c + 1, c the most copies, until a run satisfies the rule; its result
 * replaces R. ARPACK (block 1) never satisfies the rule by itself: R is kept if the confirming
 * run's eigenvalues agree, else reported not converged. A block that does not fit the basis
 * (k + block ≤ ncv ≤ n − block) leaves the copies unconfirmed: also not converged (R->note). */
static sla_status certify_multiplicity(const eig_problem *P, const sla_eigsh_options *o, plan *pl,
                                       eig_lanczos_opts lo, eig_result *R)
{
    int64_t k = R->k, n = P->n, c, runs = 0, first = lo.block, ncv0 = lo.ncv;
    double at;
    if (!all_converged(P, R)) return SLA_OK;      /* reported as not converged anyway */
    int arpack = pl->method == SLA_EIGSH_ARPACK;
    /* true residuals and Rayleigh quotients (k SpMVs; ARPACK returns vectors only) */
    double *rres = sla_malloc((size_t)(2 * P->batch * k), sizeof(double), "residuals");
    if (!rres) return SLA_ENOMEM;
    double *tres = rres + P->batch * k;
    eig_result T = {0};
    sla_status st = eig_residuals(P, R, rres);
    if (st == SLA_OK) st = eig_max_cluster(P, R, rres, o->tol, &c, &at);
    lo.v0 = NULL;
    lo.nv0 = 0;
    if (arpack && o->maxiter <= 0) lo.maxiter = 300;
    while (st == SLA_OK && c >= lo.block) {
        /* room for about k + p kept vectors and p new ones after each restart */
        int64_t p = c + 1, ncv = lo.ncv > 2 * (k + p) ? lo.ncv : 2 * (k + p);
        if (ncv > n - p) ncv = n - p;
        if (ncv < k + p) {
            R->uncertain = c;
            snprintf(R->note, sizeof R->note, "%lld copies of the eigenvalue %.12g with block "
                     "%lld: there may be more, and a confirming run with block %lld does not fit "
                     "(k + block ≤ ncv ≤ n − block, k = %lld, n = %lld); use method dense or "
                     "lobpcg", (long long)c, at, (long long)lo.block, (long long)p, (long long)k,
                     (long long)n);
            break;
        }
        lo.block = p;
        lo.ncv = ncv;
        eig_result_free(&T);
        st = eig_result_init(&T, n, P->batch, k);
        if (st == SLA_OK) st = run_lanczos(P, pl, &lo, &T);
        runs++;
        R->op_apps += T.op_apps;
        R->spmv += T.spmv;
        R->iterations += T.iterations;
        R->restarts += T.restarts;
        if (st != SLA_OK || !all_converged(P, &T)) break;
        st = eig_residuals(P, &T, tres);
        if (st == SLA_OK) st = eig_max_cluster(P, &T, tres, o->tol, &c, &at);
    }
    if (st == SLA_OK && runs > 0 && !R->uncertain) {
        if (arpack && !all_converged(P, &T)) {
            R->uncertain = k;
            snprintf(R->note, sizeof R->note, "ARPACK's copies of repeated eigenvalues could not "
                     "be confirmed: the block Lanczos run with block %lld did not converge",
                     (long long)lo.block);
        } else if (arpack) {
            st = compare_arpack(P, o->tol, lo.block, R, rres, &T, tres);
        } else {
            /* the confirming run's result replaces the first one */
            double *l = R->lambda, *x = R->X;
            int64_t *nc = R->nconv;
            R->lambda = T.lambda; R->X = T.X; R->nconv = T.nconv;
            T.lambda = l; T.X = x; T.nconv = nc;
        }
        char add[120];
        snprintf(add, sizeof add, ", multiplicity check: %lld more run%s (block %lld → %lld, ncv "
                 "%lld → %lld)%s", (long long)runs, runs > 1 ? "s" : "", (long long)first,
                 (long long)lo.block, (long long)ncv0, (long long)lo.ncv,
                 arpack ? "" : ", whose result is returned");
        strncat(R->what, add, sizeof R->what - strlen(R->what) - 1);
    }
    eig_result_free(&T);
    sla_free(rres);
    return st;
}

static sla_status run_plan(const eig_problem *P, const sla_eigsh_options *o, plan *pl,
                           const double *v0, int64_t k, eig_result *R)
{
    if (pl->method == SLA_EIGSH_DENSE) {
        sla_eigsh_which w = isnan(o->sigma) ? o->which : SLA_EIGSH_LM;
        return eig_dense(P, w, o->sigma, R);
    }
    /* LOBPCG's block holds max(2k, k + 4) ≥ k vectors (at least k): more than the copies any
     * eigenvalue can have among the k wanted, so the multiplicity rule holds by construction */
    if (pl->method == SLA_EIGSH_LOBPCG) return run_lobpcg(P, o, pl, v0, k, R);
    eig_lanczos_opts lo = {pl->want, pl->sz.p, pl->sz.ncv, o->maxiter > 0 ? o->maxiter : 300, o->tol,
                           v0, o->nv0, pl->adaptive};
    sla_status st;
    if (pl->method == SLA_EIGSH_ARPACK) {
        eig_lanczos_opts la = lo;
        la.block = 1;
        /* ARPACK keeps its shift: a tight cluster converges slowly (nos6's three smallest,
         * relative gaps 1e-5, need ~700 restarts at σ = 0 where Lanczos moves σ); default as
         * SciPy's eigsh: 10·n restarts (at least the Lanczos default) */
        if (o->maxiter <= 0) la.maxiter = P->n * 10 > 300 ? P->n * 10 : 300;
        st = eig_arpack(P, &la, pl->si_mode ? &pl->si : NULL, R);
        double sigma = pl->si_mode ? pl->si.sigma[0] : NAN;   /* ARPACK's, before the check */
        lo.block = 1;
        if (st == SLA_OK) st = certify_multiplicity(P, o, pl, lo, R);
        if (pl->si_mode) {
            R->sigma = sigma;
            R->factorizations += pl->si.factorizations;
        }
        return st;
    }
    st = run_lanczos(P, pl, &lo, R);
    if (st == SLA_OK) st = certify_multiplicity(P, o, pl, lo, R);
    if (pl->si_mode) {
        R->sigma = pl->si.sigma[0];
        R->factorizations += pl->si.factorizations;
    }
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Post-processing                                                                             */

typedef struct pair { double lambda, res; int64_t j; } pair;

static int by_lambda(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->lambda != y->lambda) return x->lambda < y->lambda ? -1 : 1;
    return x->j < y->j ? -1 : (x->j > y->j);
}

/* Ascending order, sign convention, outputs in the dtype of A; returns the converged count
 * (true residual ≤ tol·‖A‖₁, tol·(‖A‖₁ + |λ|‖M‖₁) with M) minimum and the maximum relative
 * residual. */
static sla_status finish(const eig_problem *P, const sla_eigsh_options *o, sla_dtype dtype,
                         eig_result *R, const double *res, void *eigenvalues, void *eigenvectors,
                         int64_t *nconv_min, double *maxres)
{
    int64_t n = P->n, k = R->k;
    pair *pr = sla_malloc((size_t)k, sizeof(pair), "pairs");
    if (!pr) return SLA_ENOMEM;
    *nconv_min = k;
    *maxres = 0;
    for (int64_t b = 0; b < P->batch; b++) {
        int64_t nc = 0;
        for (int64_t j = 0; j < k; j++) {
            double lam = R->lambda[b * k + j];
            pr[j] = (pair){lam, res[b * k + j] / eig_res_scale(P, b, lam), j};
        }
        qsort(pr, (size_t)k, sizeof *pr, by_lambda);
        for (int64_t q = 0; q < k; q++) {
            const double *x = R->X + (b * k + pr[q].j) * n;
            int64_t imax = 0;
            for (int64_t i = 1; i < n; i++) if (fabs(x[i]) > fabs(x[imax])) imax = i;
            double sgn = x[imax] < 0 ? -1.0 : 1.0;
            if (dtype == SLA_FLOAT64) ((double *)eigenvalues)[b * k + q] = pr[q].lambda;
            else ((float *)eigenvalues)[b * k + q] = (float)pr[q].lambda;
            if (eigenvectors) {
                if (dtype == SLA_FLOAT64) {
                    double *out = (double *)eigenvectors + b * n * k;
                    for (int64_t i = 0; i < n; i++) out[i * k + q] = sgn * x[i];
                } else {
                    float *out = (float *)eigenvectors + b * n * k;
                    for (int64_t i = 0; i < n; i++) out[i * k + q] = (float)(sgn * x[i]);
                }
            }
            if (o->residuals) o->residuals[b * k + q] = pr[q].res;
            if (pr[q].res <= o->tol) nc++;
            if (!(pr[q].res <= *maxres)) *maxres = pr[q].res;   /* NaN propagates */
        }
        if (nc < *nconv_min) *nconv_min = nc;
    }
    sla_free(pr);
    return SLA_OK;
}

/* Appends the whole of sep + text to out (capacity cap) if it fits, else nothing: pieces are
 * never cut inside a word or a UTF-8 character. Returns 1 if appended. */
static int append_whole(char *out, size_t cap, const char *sep, const char *text, size_t len)
{
    size_t used = strlen(out), ls = strlen(sep);
    if (used + ls + len + 1 > cap) return 0;
    memcpy(out + used, sep, ls);
    memcpy(out + used + ls, text, len);
    out[used + ls + len] = '\0';
    return 1;
}

/* One line: "<what>[, σ = s][, factor: <solver description>][; <why>]". The method, the shift
 * and the reason always fit (each is bounded well below SLA_DESCRIPTION_LEN); the factor's own
 * description ("backend: details; auto: reason; cost ...") gets what room is left: whole, or
 * cut back to its leading "; "-separated clauses, or left out. */
static void describe(const eig_result *R, const plan *pl, char *out, size_t cap)
{
    char head[sizeof R->what + 40];
    snprintf(head, sizeof head, "%s", R->what);
    if (!isnan(R->sigma)) {
        char sig[40];
        snprintf(sig, sizeof sig, ", σ = %.6g", R->sigma);
        strncat(head, sig, sizeof head - strlen(head) - 1);
    }
    out[0] = '\0';
    append_whole(out, cap, "", head, strlen(head));
    size_t tail = pl->why[0] ? strlen("; ") + strlen(pl->why) : 0;
    if (pl->si.solver) {
        const char *f = sla_solver_describe(pl->si.solver);
        size_t len = strlen(f), room = cap - tail;
        /* drop trailing clauses until the factor clause leaves room for the reason */
        while (len > 0 && strlen(out) + strlen(", factor: ") + len + 1 > room) {
            size_t cut = 0;
            for (size_t i = 0; i + 1 < len; i++)
                if (f[i] == ';' && f[i + 1] == ' ') cut = i;
            len = cut;
        }
        if (len > 0) append_whole(out, room, ", factor: ", f, len);
    }
    if (pl->why[0]) append_whole(out, cap, "; ", pl->why, strlen(pl->why));
}

/* The mass matrix against A: valid, finite, n × n, A's dtype, batch 1 or A's. */
static sla_status check_mass(const sla_matrix *A, const sla_matrix *M, int64_t n)
{
    SLA_TRY(sla_matrix_check_for("sla_eigsh", "options.M", M, 1));
    int64_t r = sla_pattern_nrows(M->pattern), c = sla_pattern_ncols(M->pattern);
    if (r != n || c != n)
        return EIG_FAIL(SLA_ESHAPE, "options.M is %lld × %lld but A is %lld × %lld: the mass matrix "
                        "must have A's size", (long long)r, (long long)c, (long long)n, (long long)n);
    if (M->dtype != A->dtype)
        return EIG_FAIL(SLA_EDTYPE, "options.M is %s but A is %s: the mass matrix must have A's dtype",
                        sla_dtype_name(M->dtype), sla_dtype_name(A->dtype));
    EIG_CHECK_ARG(M->batch == 1 || M->batch == A->batch, "options.M has batch %lld; it must be 1 "
                  "or A's batch %lld", (long long)M->batch, (long long)A->batch);
    return SLA_OK;
}

/* M SPD, proved by one Cholesky factorization (the message of a failure names the column). */
/* below this CHOLMOD rcond estimate ((min L_jj / max L_jj)²) M counts as singular */
#define SLA_EIG_MASS_RCOND (1e4 * DBL_EPSILON)

static sla_status check_mass_spd(const eig_problem *P)
{
    sla_solver_options so;
    sla_solver_options_init(&so);
    so.method = SLA_METHOD_CHOLESKY;
    sla_solver *s = NULL;
    sla_status st = sla_solver_create(&P->Md, &so, &s);
    double rcond = st == SLA_OK ? sla_solver_rcond(s) : NAN;
    sla_solver_free(&s);
    if (st != SLA_OK)
        return sla_error_wrap(st, "sla_eigsh", "the mass matrix M must be symmetric positive "
                              "definite");
    /* A semidefinite M passes Cholesky on a pivot of rounding size and gives the pencil
     * infinite eigenvalues (LA returned 2.3e14): refuse it as the dense path (dsygvd) does.
     * Mass matrices of finite elements have κ(M) of tens to thousands. */
    if (!(rcond > SLA_EIG_MASS_RCOND))
        return EIG_FAIL(SLA_ENOTSPD, "the mass matrix M is numerically singular (Cholesky rcond "
                        "estimate %.2g ≤ %g): M must be symmetric positive definite", rcond,
                        SLA_EIG_MASS_RCOND);
    return SLA_OK;
}

static sla_status sla_eigsh_run(const sla_matrix *A, int64_t k, const sla_eigsh_options *opt,
                     void *eigenvalues, void *eigenvectors, sla_eigsh_info *info)
{
    SLA_TRY(sla_matrix_check_for("sla_eigsh", "A", A, 1 | SLA_CHECK_COMPLEX_OK));
    if (sla_dtype_is_complex(A->dtype))     /* Hermitian: on the real form (hermitian.c) */
        return eig_hermitian(A, k, opt, eigenvalues, eigenvectors, info);
    int64_t n = sla_pattern_nrows(A->pattern);
    if (sla_pattern_ncols(A->pattern) != n)
        return EIG_FAIL(SLA_ESHAPE, "A is %lld × %lld; eigsh needs a square matrix", (long long)n,
                        (long long)sla_pattern_ncols(A->pattern));
    EIG_CHECK_ARG(k >= 1 && k <= n, "k = %lld is not in [1, n] = [1, %lld]", (long long)k, (long long)n);
    EIG_CHECK_ARG(eigenvalues, "eigenvalues is NULL");
    sla_eigsh_options o;
    if (opt) o = *opt;
    else sla_eigsh_options_init(&o);
    SLA_TRY(check_options(&o, n, k));
    if (o.M) SLA_TRY(check_mass(A, o.M, n));
    {
        size_t es = sla_dtype_size(A->dtype), nb = (size_t)A->batch;
        const sla_buf out[] = {
            {"eigenvalues", eigenvalues, nb * (size_t)k * es},
            {"eigenvectors", eigenvectors, nb * (size_t)(n * k) * es},
            {"options.residuals", o.residuals, nb * (size_t)k * sizeof(double)}};
        const sla_buf in[] = {
            {"A's values", A->values, nb * (size_t)sla_pattern_nnz(A->pattern) * es},
            {"options.v0", o.v0, nb * (size_t)(n * o.nv0) * es},
            {"M's values", o.M ? o.M->values : NULL,
             o.M ? (size_t)o.M->batch * (size_t)sla_pattern_nnz(o.M->pattern) * es : 0}};
        SLA_TRY(sla_check_aliasing("sla_eigsh", out, 3, in, 3));
    }
    if (o.tol == 0) o.tol = 1e-14;
    if (o.v0) {
        int64_t bad;
        if (!sla_all_finite(A->dtype, o.v0, A->batch * n * o.nv0, &bad))
            return EIG_FAIL(SLA_ENONFINITE, "options.v0 entry %lld is not finite", (long long)bad);
    }
    int sym = 0;
    double rtol = A->dtype == SLA_FLOAT64 ? 1e-10 : 1e-5;
    SLA_TRY(sla_matrix_is_symmetric(A, rtol, 0, &sym));

    int msym = 1;
    if (o.M) SLA_TRY(sla_matrix_is_symmetric(o.M, rtol, 0, &msym));

    eig_problem P;
    SLA_TRY(eig_problem_init(A, &P));
    if (!sym) {
        sla_status st = symmetry_error("A", &P.Ad, rtol);
        eig_problem_free(&P);
        return st;
    }
    plan pl = {0};
    eig_result R = {0};
    double *v0 = NULL, *res = NULL;
    int64_t mfact = 0;
    sla_status st = o.M ? eig_problem_set_mass(&P, o.M) : SLA_OK;
    if (st == SLA_OK && !msym) st = symmetry_error("M", &P.Md, rtol);
    if (st == SLA_OK && o.M && o.method != SLA_EIGSH_DENSE) {
        st = check_mass_spd(&P);
        mfact = 1;
    }
    if (st == SLA_OK) st = choose_method(&P, &o, k, &pl);
    if (st == SLA_OK) st = eig_result_init(&R, n, A->batch, k);
    if (st == SLA_OK && o.v0) {
        /* [batch][n][nv0] row-major of dtype → column-major float64 blocks */
        v0 = sla_malloc((size_t)(A->batch * n * o.nv0), sizeof(double), "start block");
        if (!v0) st = SLA_ENOMEM;
        for (int64_t b = 0; v0 && b < A->batch; b++)
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < o.nv0; j++) {
                    int64_t src = (b * n + i) * o.nv0 + j;
                    v0[(b * o.nv0 + j) * n + i] = A->dtype == SLA_FLOAT64 ? ((const double *)o.v0)[src]
                                                                          : ((const float *)o.v0)[src];
                }
    }
    if (st == SLA_OK) st = run_plan(&P, &o, &pl, v0, k, &R);
    if (st == SLA_OK) {
        res = sla_malloc((size_t)(A->batch * k), sizeof(double), "residuals");
        st = res ? eig_residuals(&P, &R, res) : SLA_ENOMEM;
    }
    int64_t nconv = 0;
    double maxres = 0;
    if (st == SLA_OK) st = finish(&P, &o, A->dtype, &R, res, eigenvalues, eigenvectors, &nconv, &maxres);
    if (st == SLA_OK && info) {
        memset(info, 0, sizeof *info);
        info->method = pl.method;
        info->which = o.which;
        info->sigma = R.sigma;
        info->iterations = R.iterations;
        info->restarts = R.restarts;
        info->operator_applications = R.op_apps;
        info->precond_applications = R.prec_apps;
        info->spmv = R.spmv;
        info->factorizations = R.factorizations + mfact;
        /* pairs whose copies the multiplicity rule could not confirm do not count */
        info->converged = nconv > R.uncertain ? nconv - R.uncertain : 0;
        info->max_residual = maxres;
        for (int64_t b = 0; b < A->batch; b++) {
            info->norm_A = fmax(info->norm_A, P.norm1[b]);
            if (P.has_M) info->norm_M = fmax(info->norm_M, P.normM[b]);
        }
        describe(&R, &pl, info->description, sizeof info->description);
    }
    char note[sizeof R.note];
    snprintf(note, sizeof note, "%s", R.uncertain ? R.note : "");
    plan_free(&pl);
    eig_result_free(&R);
    eig_problem_free(&P);
    sla_free(v0);
    sla_free(res);
    if (st < 0) return st;
    if (note[0]) return EIG_FAIL(SLA_NOT_CONVERGED, "%s", note);
    return eig_converged_status(nconv, k, o.M != NULL, maxres, o.tol);
}

/* Errors from anything this calls (a factorization, an allocation) start with the public name. */
sla_status sla_eigsh(const sla_matrix *A, int64_t k, const sla_eigsh_options *opt,
                     void *eigenvalues, void *eigenvectors, sla_eigsh_info *info)
{
    return sla_error_attribute(sla_eigsh_run(A, k, opt, eigenvalues, eigenvectors, info), "sla_eigsh");
}
