/* Distributed Krylov solvers (sla_dist_solver_*) against serial libsla (sla_solver_*): for every
 * method and preconditioner, on 2D Poisson and real matrices of ../shared/matrices, on random
 * (non-contiguous) ownership and on a contiguous layout where the last rank owns no rows:
 *   - the solution equals the serial solver's to 1e-10 relative (op N and T);
 *   - the VJP's gradients (values, in every rank's COO order, and b) equal the serial ones to
 *     1e-10 relative;
 *   - a rerun gives the same bits;
 * and batches with several right-hand sides, refactor, method auto's choices, non-convergence
 * reported as such, BoomerAMG's refusal of op = T on a nonsymmetric matrix, and the collective
 * errors (a NaN in the values or in B on each rank in turn: the same status on every rank and a
 * message naming that rank). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define TOL 1e-10
#define RTOL 1e-13
static double rtol = RTOL;       /* the tolerance of both solvers (lower for ill-conditioned A) */

static double worst_x, worst_dv, worst_db;
static int cases;

/* value set b of entry e: a positive scaling keeps SPD matrices SPD and symmetric ones so */
static double value(const mt_coo *A, int64_t b, int64_t e) { return A->val[e] * (1 + 0.25 * b); }

typedef struct fixture {
    const mt_coo *A;
    const char *name;
    int64_t B;
    sla_dist_layout *L;          /* rows = columns */
    int64_t n, *row, *col;       /* this rank's share of the COO entries */
    double *coo;                 /* [B][n] */
    sla_dist_pattern *P;
    double *lv;                  /* [B][nnz_local] */
    sla_pattern *sp;             /* serial */
    double *csr;                 /* [B][nnz] */
} fixture;

static void fixture_make(fixture *F, const mt_coo *A, const char *name, sla_dist_layout *L, int64_t B)
{
    memset(F, 0, sizeof *F);
    F->A = A; F->name = name; F->L = L; F->B = B;
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size) F->n++;
    F->row = malloc((size_t)(F->n + 1) * sizeof *F->row);
    F->col = malloc((size_t)(F->n + 1) * sizeof *F->col);
    F->coo = malloc((size_t)(F->n * B + 1) * sizeof *F->coo);
    for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++) {
        F->row[i] = A->row[e];
        F->col[i] = A->col[e];
        for (int64_t b = 0; b < B; b++) F->coo[b * F->n + i] = value(A, b, e);
    }
    MT_OK(sla_dist_pattern_from_coo(L, L, F->n, F->row, F->col, &F->P));
    F->lv = malloc((size_t)(B * sla_dist_pattern_nnz(F->P) + 1) * sizeof *F->lv);
    MT_OK(sla_dist_values_gather(F->P, SLA_FLOAT64, B, F->coo, F->lv));
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, &F->sp));
    double *c = malloc((size_t)(A->nnz * B + 1) * sizeof *c);
    for (int64_t b = 0; b < B; b++)
        for (int64_t e = 0; e < A->nnz; e++) c[b * A->nnz + e] = value(A, b, e);
    F->csr = malloc((size_t)(sla_pattern_nnz(F->sp) * B + 1) * sizeof *F->csr);
    MT_OK(sla_values_gather(F->sp, SLA_FLOAT64, B, c, F->csr));
    free(c);
}

static void fixture_free(fixture *F)
{
    sla_dist_pattern_free(&F->P);
    sla_pattern_free(&F->sp);
    free(F->row); free(F->col); free(F->coo); free(F->lv); free(F->csr);
}

/* the serial preconditioner standing for a distributed one (the solution is the same) */
static sla_precond serial_pc(sla_dist_precond p)
{
    switch (p) {
    case SLA_DIST_PC_JACOBI: return SLA_PRECOND_JACOBI;
    case SLA_DIST_PC_BJACOBI_IC0: return SLA_PRECOND_IC0;
    case SLA_DIST_PC_BJACOBI_ILU0: return SLA_PRECOND_ILU0;
    case SLA_DIST_PC_BJACOBI_AMG:
    case SLA_DIST_PC_BOOMERAMG: return SLA_PRECOND_AMG;
    default: return SLA_PRECOND_NONE;
    }
}

static double rel_err_coo(const fixture *F, const double *dist, const double *serial_coo)
{
    double e = 0, s = mt_amax(serial_coo, F->A->nnz * F->B) + 1e-300;
    for (int64_t b = 0; b < F->B; b++)
        for (int64_t e0 = mt_rank, i = 0; e0 < F->A->nnz; e0 += mt_size, i++)
            e = fmax(e, fabs(dist[b * F->n + i] - serial_coo[b * F->A->nnz + e0]) / s);
    return mt_max(e);
}

static void expect_all(const char *what, sla_status st, sla_status want, int bad)
{
    int lo, hi;
    MPI_Allreduce(&st, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&st, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MT_CHECK(lo == hi && st == want, "%s: status %d here (%d..%d), want %d: %s", what, (int)st,
             lo, hi, (int)want, sla_last_error());
    char msg0[1024], rank[32];
    snprintf(msg0, sizeof msg0, "%s", sla_last_error());
    MPI_Bcast(msg0, sizeof msg0, MPI_CHAR, 0, MPI_COMM_WORLD);
    MT_CHECK(strcmp(msg0, sla_last_error()) == 0, "%s: message differs from rank 0's: %s / %s",
             what, sla_last_error(), msg0);
    snprintf(rank, sizeof rank, "rank %d: ", bad);
    MT_CHECK(bad < 0 || strstr(msg0, rank), "%s: message '%s' does not name rank %d", what, msg0, bad);
    if (getenv("MT_VERBOSE") && mt_rank == 0) printf("%s: %s\n", what, msg0);
}

/* one (method, precond) on F: solution op N and T, VJP op N, rerun bits */
static void check(fixture *F, sla_method method, sla_dist_precond pc, int64_t k)
{
    const mt_coo *A = F->A;
    int64_t N = A->m, B = F->B, nl = sla_dist_layout_local_size(F->L);
    char what[200];
    snprintf(what, sizeof what, "%s %s+%s B=%lld k=%lld", F->name, sla_method_name(method),
             sla_dist_precond_name(pc), (long long)B, (long long)k);
    if (getenv("MT_TRACE")) fprintf(stderr, "[rank %d] %s\n", mt_rank, what);
    /* serial */
    sla_solver_options so;
    sla_solver_options_init(&so);
    so.method = method;
    so.precond = serial_pc(pc);
    so.rtol = rtol;
    so.atol = 0;
    sla_matrix S = sla_matrix_view(F->sp, SLA_FLOAT64, B, F->csr);
    sla_solver *ss = NULL;
    MT_OK(sla_solver_create(&S, &so, &ss));
    /* distributed */
    sla_dist_solver_options o;
    sla_dist_solver_options_init(&o);
    o.method = method;
    o.precond = pc;
    o.rtol = rtol;
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, B, F->lv);
    sla_dist_solver *ds = NULL;
    MT_OK(sla_dist_solver_create(&D, &o, &ds));
    if (!ss || !ds) {
        sla_solver_free(&ss);
        sla_dist_solver_free(&ds);
        return;
    }
    double *bg = malloc((size_t)(B * N * k) * sizeof *bg), *gg = malloc((size_t)(B * N * k) * sizeof *gg);
    mt_fill(bg, B * N * k, 11);
    mt_fill(gg, B * N * k, 13);
    double *xs = malloc((size_t)(B * N * k) * sizeof *xs);
    double *bl = mt_slice(F->L, B, k, bg), *gl = mt_slice(F->L, B, k, gg);
    double *xl = malloc((size_t)(B * nl * k + 1) * sizeof *xl), *x2 = malloc((size_t)(B * nl * k + 1) * sizeof *x2);
    double *xsN = malloc((size_t)(B * N * k) * sizeof *xsN), *xlN = malloc((size_t)(B * nl * k + 1) * sizeof *xlN);
    for (int t = 0; t < 2; t++) {
        sla_op op = t ? SLA_OP_T : SLA_OP_N;
        sla_solve_info si, di;
        sla_status s1 = sla_solver_solve(ss, op, k, bg, xs, &si);
        sla_status s2 = sla_dist_solver_solve(ds, op, k, bl, xl, &di);
        MT_CHECK(s1 == SLA_OK && s2 == SLA_OK && di.converged, "%s op %d: serial %d, distributed %d "
                 "(converged %d, %lld iterations, relres %.3g): %s", what, t, (int)s1, (int)s2,
                 di.converged, (long long)di.iterations, di.relative_residual, sla_last_error());
        double ex = mt_error(F->L, B, k, xl, xs, mt_amax(xs, B * N * k));
        MT_CHECK(ex <= TOL, "%s op %c: solution differs from serial by %.3g (%lld vs %lld iterations)",
                 what, t ? 'T' : 'N', ex, (long long)di.iterations, (long long)si.iterations);
        worst_x = fmax(worst_x, ex);
        /* (LSQR stops on its own rules, docs/krylov.md) */
        MT_CHECK(method == SLA_METHOD_LSQR || di.relative_residual <= rtol * 1.0001, "%s: relres %.3g", what, di.relative_residual);
        if (op == SLA_OP_N) {
            /* the same bits again (op N; kept for the VJP) */
            MT_OK(sla_dist_solver_solve(ds, op, k, bl, x2, NULL));
            int same = memcmp(xl, x2, (size_t)(B * nl * k) * sizeof *xl) == 0, all;
            MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            MT_CHECK(all, "%s op %d: a rerun gives other bits", what, t);
            memcpy(xsN, xs, (size_t)(B * N * k) * sizeof *xs);
            memcpy(xlN, xl, (size_t)(B * nl * k) * sizeof *xl);
        }
    }
    /* VJP of op N (the adjoint solve is op T) */
    int can_vjp = method != SLA_METHOD_LSQR;
    if (!can_vjp) {
        double *d = malloc((size_t)(B * nl * k + 1) * sizeof *d);
        expect_all("lsqr VJP", sla_dist_solver_solve_vjp(ds, SLA_OP_N, k, xl, gl, d, NULL, NULL),
                   SLA_EUNSUPPORTED, -1);
        free(d);
    }
    if (can_vjp) {
        memcpy(xs, xsN, (size_t)(B * N * k) * sizeof *xs);
        memcpy(xl, xlN, (size_t)(B * nl * k) * sizeof *xl);
        int64_t nnz = sla_pattern_nnz(F->sp), nloc = sla_dist_pattern_nnz(F->P);
        double *dbs = malloc((size_t)(B * N * k) * sizeof *dbs), *dvs = malloc((size_t)(B * nnz + 1) * sizeof *dvs);
        double *dvc = malloc((size_t)(B * A->nnz + 1) * sizeof *dvc);
        double *dbl = malloc((size_t)(B * nl * k + 1) * sizeof *dbl), *dvl = malloc((size_t)(B * nloc + 1) * sizeof *dvl);
        double *dvcl = malloc((size_t)(B * F->n + 1) * sizeof *dvcl);
        MT_OK(sla_solver_solve_vjp(ss, SLA_OP_N, k, xs, gg, dbs, dvs, NULL));
        MT_OK(sla_values_scatter(F->sp, SLA_FLOAT64, B, dvs, dvc));
        sla_solve_info vi;
        MT_OK(sla_dist_solver_solve_vjp(ds, SLA_OP_N, k, xl, gl, dbl, dvl, &vi));
        MT_OK(sla_dist_values_scatter(F->P, SLA_FLOAT64, B, dvl, dvcl));
        double eb = mt_error(F->L, B, k, dbl, dbs, mt_amax(dbs, B * N * k));
        double ev = rel_err_coo(F, dvcl, dvc);
        MT_CHECK(vi.converged, "%s: adjoint solve did not converge (%lld iterations, relres %.3g)",
                 what, (long long)vi.iterations, vi.relative_residual);
        MT_CHECK(eb <= TOL && ev <= TOL, "%s: VJP differs from serial: dB %.3g, dvalues %.3g", what, eb, ev);
        worst_db = fmax(worst_db, eb);
        worst_dv = fmax(worst_dv, ev);
        free(dbs); free(dvs); free(dvc); free(dbl); free(dvl); free(dvcl);
    }
    cases++;
    sla_solver_free(&ss);
    sla_dist_solver_free(&ds);
    free(bg); free(gg); free(xs); free(bl); free(gl); free(xl); free(x2); free(xsN); free(xlN);
}

/* every (method, precond) that applies to an SPD matrix, or to a nonsymmetric one */
static void sweep(fixture *F, int spd)
{
    static const sla_dist_precond all[] = {SLA_DIST_PC_NONE, SLA_DIST_PC_JACOBI,
                                           SLA_DIST_PC_BJACOBI_IC0, SLA_DIST_PC_BJACOBI_ILU0,
                                           SLA_DIST_PC_BJACOBI_AMG, SLA_DIST_PC_BOOMERAMG};
    static const sla_method methods[] = {SLA_METHOD_CG, SLA_METHOD_BICGSTAB, SLA_METHOD_GMRES,
                                         SLA_METHOD_MINRES};
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
        if (!spd && (methods[m] == SLA_METHOD_CG || methods[m] == SLA_METHOD_MINRES)) continue;
        for (size_t p = 0; p < sizeof all / sizeof all[0]; p++) {
            sla_dist_precond pc = all[p];
            if (pc == SLA_DIST_PC_BOOMERAMG && !sla_dist_have_boomeramg()) continue;
            if (!spd && (pc == SLA_DIST_PC_BJACOBI_IC0 || pc == SLA_DIST_PC_BOOMERAMG ||
                         pc == SLA_DIST_PC_BJACOBI_AMG)) continue;
            /* MINRES needs an SPD preconditioner: Jacobi on |diag|, or none */
            if (methods[m] == SLA_METHOD_MINRES && pc != SLA_DIST_PC_NONE && pc != SLA_DIST_PC_JACOBI) continue;
            /* CG needs a symmetric one */
            if (methods[m] == SLA_METHOD_CG && pc == SLA_DIST_PC_BJACOBI_ILU0) continue;
            check(F, methods[m], pc, 1);
        }
    }
}

/* contiguous, the last rank (of several) owning nothing */
static sla_dist_layout *empty_last_layout(int64_t N)
{
    int64_t p = mt_size > 1 ? mt_size - 1 : 1;
    int64_t n = mt_rank < p ? N / p + (mt_rank < N % p) : 0;
    sla_dist_layout *L = NULL;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, N, n, &L));
    return L;
}

/* NaN in the values, then in B, on each rank in turn (that owns rows) */
static void errors(fixture *F)
{
    int64_t nloc = sla_dist_pattern_nnz(F->P), nl = sla_dist_layout_local_size(F->L);
    sla_dist_solver_options o;
    sla_dist_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = SLA_DIST_PC_JACOBI;
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, 1, F->lv);
    sla_dist_solver *ds = NULL;
    MT_OK(sla_dist_solver_create(&D, &o, &ds));
    double *b = malloc((size_t)(nl + 1) * sizeof *b), *x = malloc((size_t)(nl + 1) * sizeof *x);
    for (int64_t i = 0; i < nl; i++) b[i] = 1;
    for (int bad = 0; bad < mt_size; bad++) {
        int64_t has = nloc > 0, any;
        MPI_Bcast(&has, 1, MPI_INT64_T, bad, MPI_COMM_WORLD);
        if (!has) continue;
        char what[64];
        double save = mt_rank == bad ? F->lv[nloc / 2] : 0;
        if (mt_rank == bad) F->lv[nloc / 2] = NAN;
        sla_dist_solver *e = NULL;
        snprintf(what, sizeof what, "NaN value on rank %d: create", bad);
        expect_all(what, sla_dist_solver_create(&D, &o, &e), SLA_ENONFINITE, bad);
        MT_CHECK(e == NULL, "%s: solver returned", what);
        snprintf(what, sizeof what, "NaN value on rank %d: refactor", bad);
        expect_all(what, sla_dist_solver_refactor(ds, F->lv), SLA_ENONFINITE, bad);
        if (mt_rank == bad) F->lv[nloc / 2] = save;
        any = nl > 0;
        MPI_Bcast(&any, 1, MPI_INT64_T, bad, MPI_COMM_WORLD);
        if (!any) continue;
        if (mt_rank == bad) b[nl - 1] = INFINITY;
        sla_solve_info info;
        info.converged = 1;
        snprintf(what, sizeof what, "Inf in B on rank %d", bad);
        expect_all(what, sla_dist_solver_solve(ds, SLA_OP_N, 1, b, x, &info), SLA_ENONFINITE, bad);
        MT_CHECK(!info.converged && info.reason == SLA_REASON_ERROR, "%s: info says converged", what);
        if (mt_rank == bad) b[nl - 1] = 1;
    }
    /* the solver still works after the refused refactor (it kept its values) */
    MT_OK(sla_dist_solver_solve(ds, SLA_OP_N, 1, b, x, NULL));
    /* non-convergence is not success */
    o.maxiter = 2;
    o.rtol = 1e-12;
    sla_dist_solver *ns = NULL;
    MT_OK(sla_dist_solver_create(&D, &o, &ns));
    sla_solve_info info;
    sla_status st = sla_dist_solver_solve(ns, SLA_OP_N, 1, b, x, &info);
    expect_all("maxiter 2", st, SLA_NOT_CONVERGED, -1);
    MT_CHECK(!info.converged && info.reason == SLA_REASON_MAXITER && info.iterations == 2,
             "maxiter 2: converged %d reason %d iterations %lld", info.converged, (int)info.reason,
             (long long)info.iterations);
    sla_dist_solver_free(&ns);
    sla_dist_solver_free(&ds);
    free(b);
    free(x);
}

/* method auto's choices and words */
static void autos(fixture *F, sla_method want, const char *words)
{
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, F->B, F->lv);
    sla_dist_solver *ds = NULL;
    MT_OK(sla_dist_solver_create(&D, NULL, &ds));
    if (!ds) return;
    MT_CHECK(sla_dist_solver_method(ds) == want && strstr(sla_dist_solver_describe(ds), words),
             "%s: auto chose %s: '%s' (want %s, '%s')", F->name,
             sla_method_name(sla_dist_solver_method(ds)), sla_dist_solver_describe(ds),
             sla_method_name(want), words);
    if (mt_rank == 0 && getenv("MT_VERBOSE")) printf("%s: %s\n", F->name, sla_dist_solver_describe(ds));
    sla_dist_solver_free(&ds);
}

/* refactor with new values equals a serial refactor */
static void refactor(fixture *F, sla_dist_precond pc)
{
    const mt_coo *A = F->A;
    int64_t N = A->m, nl = sla_dist_layout_local_size(F->L);
    sla_dist_solver_options o;
    sla_dist_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = pc;
    o.rtol = rtol;
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, 1, F->lv);
    sla_dist_solver *ds = NULL;
    MT_OK(sla_dist_solver_create(&D, &o, &ds));
    int64_t nloc = sla_dist_pattern_nnz(F->P), nnz = sla_pattern_nnz(F->sp);
    double *v2 = malloc((size_t)(nloc + 1) * sizeof *v2), *c2 = malloc((size_t)(nnz + 1) * sizeof *c2);
    for (int64_t s = 0; s < nloc; s++) v2[s] = 3 * F->lv[s];
    for (int64_t s = 0; s < nnz; s++) c2[s] = 3 * F->csr[s];
    MT_OK(sla_dist_solver_refactor(ds, v2));
    double *bg = malloc((size_t)N * sizeof *bg), *xs = malloc((size_t)N * sizeof *xs);
    mt_fill(bg, N, 5);
    sla_solver_options so;
    sla_solver_options_init(&so);
    so.method = SLA_METHOD_CG;
    so.precond = serial_pc(pc);
    so.rtol = rtol;
    so.atol = 0;
    sla_matrix S = sla_matrix_view(F->sp, SLA_FLOAT64, 1, c2);
    sla_solver *ss = NULL;
    MT_OK(sla_solver_create(&S, &so, &ss));
    MT_OK(sla_solver_solve(ss, SLA_OP_N, 1, bg, xs, NULL));
    double *bl = mt_slice(F->L, 1, 1, bg), *xl = malloc((size_t)(nl + 1) * sizeof *xl);
    MT_OK(sla_dist_solver_solve(ds, SLA_OP_N, 1, bl, xl, NULL));
    double ex = mt_error(F->L, 1, 1, xl, xs, mt_amax(xs, N));
    MT_CHECK(ex <= TOL, "%s refactor (%s): %.3g from serial", F->name, sla_dist_precond_name(pc), ex);
    sla_solver_free(&ss);
    sla_dist_solver_free(&ds);
    free(v2); free(c2); free(bg); free(xs); free(bl); free(xl);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo A;
    fixture F;
    /* 2D Poisson, random ownership: every method and preconditioner */
    mt_poisson2d(16, 12, &A);
    sla_dist_layout *L = mt_random_layout(A.m, 3);
    fixture_make(&F, &A, "Poisson 16x12 (random)", L, 1);
    sweep(&F, 1);
    check(&F, SLA_METHOD_LSQR, SLA_DIST_PC_NONE, 1);
    autos(&F, SLA_METHOD_CG, "auto: symmetric, positive diagonal → cg");
    refactor(&F, SLA_DIST_PC_JACOBI);
    refactor(&F, SLA_DIST_PC_BJACOBI_IC0);
    if (sla_dist_have_boomeramg()) refactor(&F, SLA_DIST_PC_BOOMERAMG);
    errors(&F);
    fixture_free(&F);
    sla_dist_layout_free(&L);
    /* the same with the last rank owning no rows; a batch with two right-hand sides */
    L = empty_last_layout(A.m);
    fixture_make(&F, &A, "Poisson 16x12 (last rank empty)", L, 2);
    check(&F, SLA_METHOD_CG, SLA_DIST_PC_JACOBI, 2);
    check(&F, SLA_METHOD_CG, SLA_DIST_PC_BJACOBI_IC0, 1);
    check(&F, SLA_METHOD_GMRES, SLA_DIST_PC_BJACOBI_ILU0, 2);
    check(&F, SLA_METHOD_BICGSTAB, SLA_DIST_PC_JACOBI, 1);
    check(&F, SLA_METHOD_MINRES, SLA_DIST_PC_JACOBI, 1);
    if (sla_dist_have_boomeramg()) check(&F, SLA_METHOD_CG, SLA_DIST_PC_BOOMERAMG, 2);
    errors(&F);
    fixture_free(&F);
    sla_dist_layout_free(&L);
    /* symmetric indefinite (Poisson − 1.5 I, eigenvalues on both sides of 0): auto → minres */
    for (int64_t e = 0; e < A.nnz; e++)
        if (A.row[e] == A.col[e]) A.val[e] -= 1.5;
    L = mt_random_layout(A.m, 4);
    fixture_make(&F, &A, "Poisson - 1.5 I (random)", L, 1);
    check(&F, SLA_METHOD_MINRES, SLA_DIST_PC_NONE, 1);
    check(&F, SLA_METHOD_MINRES, SLA_DIST_PC_JACOBI, 1);
    fixture_free(&F);
    sla_dist_layout_free(&L);
    /* its negative: a negative diagonal, auto → minres */
    for (int64_t e = 0; e < A.nnz; e++) A.val[e] = -A.val[e];
    L = mt_random_layout(A.m, 8);
    fixture_make(&F, &A, "1.5 I - Poisson (random)", L, 1);
    autos(&F, SLA_METHOD_MINRES, "auto: symmetric, diagonal not positive → minres");
    check(&F, SLA_METHOD_MINRES, SLA_DIST_PC_JACOBI, 1);
    fixture_free(&F);
    sla_dist_layout_free(&L);
    for (int64_t e = 0; e < A.nnz; e++) A.val[e] = -A.val[e];
    /* nonsymmetric (convection-like perturbation of Poisson) */
    for (int64_t e = 0; e < A.nnz; e++)
        if (A.row[e] == A.col[e]) A.val[e] += 1.5;
        else if (A.col[e] == A.row[e] + 1) A.val[e] -= 0.4;
    L = mt_random_layout(A.m, 5);
    fixture_make(&F, &A, "convection-diffusion 16x12 (random)", L, 1);
    sweep(&F, 0);
    autos(&F, SLA_METHOD_GMRES, "auto: not symmetric → gmres; precond auto → bjacobi-ilu0");
    if (sla_dist_have_boomeramg()) {
        sla_dist_solver_options o;
        sla_dist_solver_options_init(&o);
        o.method = SLA_METHOD_GMRES;
        o.precond = SLA_DIST_PC_BOOMERAMG;
        sla_dist_matrix D = sla_dist_matrix_view(F.P, SLA_FLOAT64, 1, F.lv);
        sla_dist_solver *ds = NULL;
        MT_OK(sla_dist_solver_create(&D, &o, &ds));
        int64_t nl = sla_dist_layout_local_size(L);
        double *b = calloc((size_t)nl + 1, sizeof *b), *x = calloc((size_t)nl + 1, sizeof *x);
        MT_OK(sla_dist_solver_solve(ds, SLA_OP_N, 1, b, x, NULL));
        expect_all("boomeramg op T, nonsymmetric", sla_dist_solver_solve(ds, SLA_OP_T, 1, b, x, NULL),
                   SLA_EUNSUPPORTED, -1);
        sla_dist_solver_free(&ds);
        free(b);
        free(x);
    }
    fixture_free(&F);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
    /* real matrices */
    if (mt_load("Laplace3D10.mtx", &A)) {
        L = mt_random_layout(A.m, 6);
        fixture_make(&F, &A, "Laplace3D10 (random)", L, 1);
        /* every method and every preconditioner once (the full sweep is 2D Poisson's) */
        check(&F, SLA_METHOD_CG, SLA_DIST_PC_JACOBI, 1);
        check(&F, SLA_METHOD_CG, SLA_DIST_PC_BJACOBI_IC0, 1);
        check(&F, SLA_METHOD_CG, SLA_DIST_PC_BJACOBI_AMG, 1);
        if (sla_dist_have_boomeramg()) check(&F, SLA_METHOD_CG, SLA_DIST_PC_BOOMERAMG, 1);
        check(&F, SLA_METHOD_BICGSTAB, SLA_DIST_PC_BJACOBI_ILU0, 1);
        check(&F, SLA_METHOD_GMRES, SLA_DIST_PC_NONE, 1);
        check(&F, SLA_METHOD_MINRES, SLA_DIST_PC_JACOBI, 1);
        check(&F, SLA_METHOD_LSQR, SLA_DIST_PC_NONE, 1);
        autos(&F, SLA_METHOD_CG, "auto: symmetric, positive diagonal → cg");
        fixture_free(&F);
        sla_dist_layout_free(&L);
        mt_coo_free(&A);
    }
    if (mt_load("pores_1.mtx", &A)) {
        L = mt_random_layout(A.m, 7);
        fixture_make(&F, &A, "pores_1 (random)", L, 1);
        rtol = 1e-11;
        check(&F, SLA_METHOD_GMRES, SLA_DIST_PC_NONE, 1);
        check(&F, SLA_METHOD_GMRES, SLA_DIST_PC_JACOBI, 1);
        check(&F, SLA_METHOD_GMRES, SLA_DIST_PC_BJACOBI_ILU0, 1);
        autos(&F, SLA_METHOD_GMRES, "auto: not symmetric → gmres");
        rtol = RTOL;
        fixture_free(&F);
        sla_dist_layout_free(&L);
        mt_coo_free(&A);
    }
    if (mt_rank == 0)
        printf("%d cases; worst relative difference from serial: x %.3g, dB %.3g, dvalues %.3g\n",
               cases, worst_x, worst_db, worst_dv);
    return mt_finish("test_mpi_krylov");
}
