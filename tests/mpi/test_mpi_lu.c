/* The distributed LU (SuperLU_DIST) against serial libsla LU (UMFPACK): solutions for op N and
 * T, batches and several right-hand sides, log-determinants, the solve VJP (dB, and dvalues
 * taken to every rank's COO order), rcond, a refactor, on random ownership and real matrices;
 * numerically singular matrices refused on every rank; non-finite values on one rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"
#include "sla/solver.h"

static double worst;

typedef struct setup {
    const mt_coo *A;
    sla_dist_layout *L;
    int64_t B, n;               /* batch, entries handed in here */
    int64_t *row, *col;
    double *val;                /* [B][n] this rank's COO values */
    sla_dist_pattern *P;
    double *lv;                 /* [B][nnz_local] */
} setup;

static double value(const mt_coo *A, int64_t b, int64_t e, double shift)
{
    return A->val[e] * (1 + 0.25 * b) + (A->row[e] == A->col[e] ? shift * b : 0);
}

static void make(setup *S, const mt_coo *A, sla_dist_layout *L, int64_t B, double shift)
{
    memset(S, 0, sizeof *S);
    S->A = A; S->L = L; S->B = B;
    int64_t cap = A->nnz / mt_size + 1;
    S->row = malloc((size_t)cap * sizeof *S->row);
    S->col = malloc((size_t)cap * sizeof *S->col);
    S->val = malloc((size_t)(cap * B) * sizeof *S->val);
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size) S->n++;
    for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++) {
        S->row[i] = A->row[e];
        S->col[i] = A->col[e];
        for (int64_t b = 0; b < B; b++) S->val[b * S->n + i] = value(A, b, e, shift);
    }
    MT_OK(sla_dist_pattern_from_coo(L, L, S->n, S->row, S->col, &S->P));
    S->lv = malloc((size_t)(B * sla_dist_pattern_nnz(S->P) + 1) * sizeof *S->lv);
    MT_OK(sla_dist_values_gather(S->P, SLA_FLOAT64, B, S->val, S->lv));
}

static void unmake(setup *S)
{
    sla_dist_pattern_free(&S->P);
    free(S->row); free(S->col); free(S->val); free(S->lv);
}

/* serial LU of the same batch: pattern, CSR values, solver */
typedef struct serial { sla_pattern *p; double *coo, *csr; sla_solver *s; } serial;

static void serial_make(serial *R, const mt_coo *A, int64_t B, double shift)
{
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, &R->p));
    int64_t nnz = sla_pattern_nnz(R->p);
    R->coo = malloc((size_t)(A->nnz * B + 1) * sizeof *R->coo);
    R->csr = malloc((size_t)(nnz * B + 1) * sizeof *R->csr);
    for (int64_t b = 0; b < B; b++)
        for (int64_t e = 0; e < A->nnz; e++) R->coo[b * A->nnz + e] = value(A, b, e, shift);
    MT_OK(sla_values_gather(R->p, SLA_FLOAT64, B, R->coo, R->csr));
    sla_matrix M = sla_matrix_view(R->p, SLA_FLOAT64, B, R->csr);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    MT_OK(sla_solver_create(&M, &o, &R->s));
}

static void serial_free(serial *R)
{
    sla_solver_free(&R->s);
    sla_pattern_free(&R->p);
    free(R->coo); free(R->csr);
}

/* hard: a matrix that needs row exchanges (west0479): static pivoting may meet a zero or tiny
 * pivot or miss the backward error bound, and then must say so (SLA_ESINGULAR naming the reason,
 * or SLA_NOT_CONVERGED with converged 0), never return a wrong answer as success */
static int hard_ok(const char *what, sla_status st, const sla_solve_info *info, int hard)
{
    if (!hard || st == SLA_OK) return 1;
    MT_CHECK((st == SLA_NOT_CONVERGED || st == SLA_ESINGULAR) && (!info || !info->converged),
             "%s: status %d (%s)", what,
             (int)st, sla_last_error());
    if (mt_rank == 0) printf("note: %s: %s\n", what, sla_last_error());
    return 0;
}

static void check(const char *what, setup *S, serial *R, sla_dist_lu *F, int hard)
{
    const mt_coo *A = S->A;
    int64_t B = S->B, k = 2, N = A->m, n = sla_dist_layout_local_size(S->L);
    int64_t nnz = sla_pattern_nnz(R->p), nl = sla_dist_pattern_nnz(S->P);
    double *bg = malloc((size_t)(B * N * k) * sizeof *bg), *xs = malloc((size_t)(B * N * k) * sizeof *xs);
    double *gg = malloc((size_t)(B * N * k) * sizeof *gg), *dbs = malloc((size_t)(B * N * k) * sizeof *dbs);
    double *dvs = malloc((size_t)(B * nnz) * sizeof *dvs), *dvsc = malloc((size_t)(B * A->nnz) * sizeof *dvsc);
    mt_fill(bg, B * N * k, 11);
    mt_fill(gg, B * N * k, 13);
    double *bl = mt_slice(S->L, B, k, bg), *gl = mt_slice(S->L, B, k, gg);
    double *xl = malloc((size_t)(B * n * k + 1) * sizeof *xl), *dbl = malloc((size_t)(B * n * k + 1) * sizeof *dbl);
    double *dvl = malloc((size_t)(B * nl + 1) * sizeof *dvl), *dvlc = malloc((size_t)(B * S->n + 1) * sizeof *dvlc);
    for (int t = 0; t < 2; t++) {
        sla_op op = t ? SLA_OP_T : SLA_OP_N;
        sla_solve_info info;
        MT_OK(sla_solver_solve(R->s, op, k, bg, xs, NULL));
        sla_status st = sla_dist_lu_solve(F, op, k, bl, xl, &info);
        if (!hard_ok(what, st, &info, hard)) continue;
        MT_OK(st);
        double ex = mt_error(S->L, B, k, xl, xs, mt_amax(xs, B * N * k));
        MT_CHECK(ex <= 1e-10, "%s op %c: X error %.3g vs serial", what, t ? 'T' : 'N', ex);
        MT_CHECK(info.converged && info.relative_residual <= 1e-10, "%s op %c: info converged %d, "
                 "relative residual %.3g", what, t ? 'T' : 'N', info.converged, info.relative_residual);
        worst = fmax(worst, ex);
        /* the VJP: dB = op(A)⁻ᵀ G, dvalues against the serial ones in the COO order */
        MT_OK(sla_solver_solve_vjp(R->s, op, k, xs, gg, dbs, dvs, NULL));
        MT_OK(sla_values_scatter(R->p, SLA_FLOAT64, B, dvs, dvsc));
        st = sla_dist_lu_solve_vjp(F, op, k, xl, gl, dbl, dvl, NULL);
        if (!hard_ok(what, st, NULL, hard)) continue;
        MT_OK(st);
        MT_OK(sla_dist_values_scatter(S->P, SLA_FLOAT64, B, dvl, dvlc));
        double eb = mt_error(S->L, B, k, dbl, dbs, mt_amax(dbs, B * N * k)), ev = 0;
        double sv = mt_amax(dvsc, B * A->nnz) + 1e-300;
        for (int64_t b = 0; b < B; b++)
            for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++)
                ev = fmax(ev, fabs(dvlc[b * S->n + i] - dvsc[b * A->nnz + e]) / sv);
        ev = mt_max(ev);
        MT_CHECK(eb <= 1e-10 && ev <= 1e-10, "%s op %c: VJP dB error %.3g, dvalues error %.3g",
                 what, t ? 'T' : 'N', eb, ev);
        worst = fmax(worst, fmax(eb, ev));
    }
    double s1[4], l1[4], s2[4], l2[4];
    MT_OK(sla_solver_logdet(R->s, s1, l1));
    sla_status sl = sla_dist_lu_logdet(F, s2, l2);
    MT_CHECK(sl == SLA_OK, "%s: logdet status %d (%s)", what,
             (int)sl, sla_last_error());
    for (int64_t b = 0; sl == SLA_OK && b < B; b++)
        MT_CHECK((hard && s2[b] == 0) ||
                 (s1[b] == s2[b] && fabs(l1[b] - l2[b]) <= 1e-10 * fmax(1, fabs(l1[b]))),
                 "%s: logdet[%lld] (%g, %.15g) vs serial (%g, %.15g)", what, (long long)b, s2[b],
                 l2[b], s1[b], l1[b]);
    double rs = sla_solver_rcond(R->s), rd = sla_dist_lu_rcond(F);
    MT_CHECK((hard && rd == 0) || (rd >= rs / 10 && rd <= rs * 10), "%s: rcond %.3g vs serial %.3g", what, rd, rs);
    free(bg); free(xs); free(gg); free(dbs); free(dvs); free(dvsc);
    free(bl); free(gl); free(xl); free(dbl); free(dvl); free(dvlc);
}

static sla_dist_layout *random_layout(int64_t N, uint64_t seed)
{
    int *part = malloc((size_t)(N + 1) * sizeof *part);
    mt_random_part(N, mt_size, seed, part);
    int64_t n, *own = mt_owned(part, N, mt_rank, &n);
    sla_dist_layout *L = NULL;
    MT_OK(sla_dist_layout_create_owned(MPI_COMM_WORLD, N, n, own, &L));
    free(part);
    free(own);
    return L;
}

static void run(const char *what, const mt_coo *A, sla_dist_layout *L, double shift, int hard)
{
    setup S;
    serial R;
    make(&S, A, L, 2, shift);
    serial_make(&R, A, 2, shift);
    sla_dist_matrix D = sla_dist_matrix_view(S.P, SLA_FLOAT64, 2, S.lv);
    sla_dist_lu *F = NULL;
    MT_OK(sla_dist_lu_create(&D, &F));
    if (F) {
        check(what, &S, &R, F, hard);
        /* refactor with other values (batch order swapped: the same two matrices) */
        int64_t nl = sla_dist_pattern_nnz(S.P), nnz = sla_pattern_nnz(R.p);
        double *sw = malloc((size_t)(2 * nl) * sizeof *sw), *swc = malloc((size_t)(2 * nnz) * sizeof *swc);
        memcpy(sw, S.lv + nl, (size_t)nl * sizeof *sw);
        memcpy(sw + nl, S.lv, (size_t)nl * sizeof *sw);
        memcpy(swc, R.csr + nnz, (size_t)nnz * sizeof *swc);
        memcpy(swc + nnz, R.csr, (size_t)nnz * sizeof *swc);
        memcpy(S.lv, sw, (size_t)(2 * nl) * sizeof *sw);
        memcpy(R.csr, swc, (size_t)(2 * nnz) * sizeof *swc);
        for (int64_t i = 0; i < S.n; i++) {      /* COO values follow for the VJP comparison */
            double t = S.val[i]; S.val[i] = S.val[S.n + i]; S.val[S.n + i] = t;
        }
        MT_OK(sla_solver_refactor(R.s, R.csr));
        MT_OK(sla_dist_lu_refactor(F, S.lv));
        char w2[160];
        snprintf(w2, sizeof w2, "%s, after refactor", what);
        check(w2, &S, &R, F, hard);
        free(sw); free(swc);
        if (mt_rank == 0) printf("%s: %s\n", what, sla_dist_lu_describe(F));
    }
    sla_dist_lu_free(&F);
    serial_free(&R);
    unmake(&S);
}

/* a Neumann Laplacian (rows sum to zero): singular to working precision */
static void singular(void)
{
    mt_coo A;
    mt_poisson2d(12, 10, &A);
    for (int64_t e = 0; e < A.nnz; e++)
        if (A.row[e] == A.col[e]) {
            double s = 0;
            for (int64_t f = 0; f < A.nnz; f++) if (A.row[f] == A.row[e] && f != e) s += A.val[f];
            A.val[e] = -s;
        }
    sla_dist_layout *L = random_layout(A.m, 3);
    setup S;
    make(&S, &A, L, 1, 0);
    sla_dist_matrix D = sla_dist_matrix_view(S.P, SLA_FLOAT64, 1, S.lv);
    sla_dist_lu *F = NULL;
    MT_OK(sla_dist_lu_create(&D, &F));
    int64_t n = sla_dist_layout_local_size(L);
    double *b = malloc((size_t)n * sizeof *b + 8), *x = malloc((size_t)n * sizeof *x + 8);
    for (int64_t i = 0; i < n; i++) b[i] = 1;
    sla_status st = F ? sla_dist_lu_solve(F, SLA_OP_N, 1, b, x, NULL) : SLA_OK;
    MT_CHECK(st == SLA_ESINGULAR, "Neumann Laplacian: solve status %d (%s), want ESINGULAR",
             (int)st, sla_last_error());
    double sg = 1, ld = 0;
    if (F) MT_OK(sla_dist_lu_logdet(F, &sg, &ld));
    MT_CHECK(sg == 0 && isinf(ld) && ld < 0, "Neumann Laplacian: logdet (%g, %g)", sg, ld);
    MT_CHECK(sla_dist_lu_rcond(F) < SLA_RCOND_SINGULAR, "rcond %.3g", sla_dist_lu_rcond(F));
    sla_dist_lu_free(&F);
    /* a NaN handed in by the last rank: every rank gets the same error, no factorization */
    if (mt_rank == mt_size - 1 && S.n > 0) S.val[0] = NAN;
    MT_OK(sla_dist_values_gather(S.P, SLA_FLOAT64, 1, S.val, S.lv));
    st = sla_dist_lu_create(&D, &F);
    int64_t agree = mt_sum(st == SLA_ENONFINITE);
    MT_CHECK(agree == mt_size && F == NULL, "NaN on rank %d: status %d on this rank (%s), %lld "
             "ranks agree", mt_size - 1, (int)st, sla_last_error(), (long long)agree);
    free(b); free(x);
    unmake(&S);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (!sla_dist_have_superlu()) {
        if (mt_rank == 0) printf("test_mpi_lu: libsla_mpi built without SuperLU_DIST: skipped\n");
        return mt_finish("test_mpi_lu");
    }
    mt_coo A;
    mt_poisson2d(9, 7, &A);
    uint64_t seed = 5;
    for (int64_t e = 0; e < A.nnz; e++) A.val[e] += 0.3 * mt_rand(&seed);   /* nonsymmetric */
    sla_dist_layout *L = random_layout(A.m, 4);
    run("perturbed Poisson 9x7, random ownership", &A, L, 0.5, 0);
    sla_dist_layout_free(&L);
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A.m, -1, &L));
    run("perturbed Poisson 9x7, contiguous", &A, L, 0.5, 0);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
    if (mt_load("west0479.mtx", &A)) {
        L = random_layout(A.m, 7);
        run("west0479, random ownership", &A, L, 0, 1);
        sla_dist_layout_free(&L);
        mt_coo_free(&A);
    }
    if (mt_load("pores_1.mtx", &A)) {
        L = random_layout(A.m, 9);
        run("pores_1, random ownership", &A, L, 0, 0);
        sla_dist_layout_free(&L);
        mt_coo_free(&A);
    }
    if (mt_load("bcsstk13.mtx", &A)) {
        L = random_layout(A.m, 8);
        run("bcsstk13, random ownership", &A, L, 0, 0);
        sla_dist_layout_free(&L);
        mt_coo_free(&A);
    }
    singular();
    if (mt_rank == 0) printf("test_mpi_lu: worst relative difference to serial %.3g\n", worst);
    return mt_finish("test_mpi_lu");
}
