/* Distributed patterns from each rank's own CSR rows (sla_dist_pattern_from_csr) against the
 * COO path on the same entries in the same order and against serial libsla: identical blocks
 * and ghosts, bit-identical local values, SpMV, CG solutions and gradients (values back to
 * the CSR entry order, b), serial within 1e-10; rows in local order with ascending int32
 * columns (no entry map), a shuffled row list with columns reversed in each row, repeated
 * columns (duplicates summed); contiguous, random and empty-rank layouts; collective errors.
 * The maps kept: none for rows in order with ascending columns on a contiguous layout, the
 * slot of each entry (8 bytes) otherwise, never the COO path's exchange map. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"
#include "mpi/dist.h"            /* to see which entry map a pattern keeps */

enum { ORDERED, SHUFFLED, REPEATED, NMODES };
static const char *const mode_name[NMODES] = {"rows in order, int32 columns ascending",
                                               "row list shuffled, columns reversed",
                                               "repeated columns"};

/* This rank's rows in CSR, with the global row of each entry (for the COO twin). */
typedef struct rows_csr {
    int64_t n, nnz;
    int64_t *grow;              /* NULL in ORDERED and REPEATED */
    int64_t *rowptr, *col, *erow;
    int32_t *col32;
    double *val;
} rows_csr;

static void rows_free(rows_csr *R)
{
    free(R->grow); free(R->rowptr); free(R->col); free(R->erow); free(R->col32); free(R->val);
}

/* Entry of row g, position t of its serial row (of len), in the order of the mode. */
static int64_t pick(int mode, int64_t s0, int64_t len, int64_t t)
{
    return mode == SHUFFLED ? s0 + len - 1 - t : s0 + t;
}

static void make_rows(const sla_dist_layout *L, const sla_pattern *p, const double *csr,
                      int mode, rows_csr *R)
{
    memset(R, 0, sizeof *R);
    const int64_t *own = sla_dist_layout_global(L), *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    R->n = sla_dist_layout_local_size(L);
    int64_t cap = 2 * sla_pattern_nnz(p) + 1;
    R->rowptr = calloc((size_t)R->n + 1, sizeof *R->rowptr);
    R->col = malloc((size_t)cap * sizeof *R->col);
    R->erow = malloc((size_t)cap * sizeof *R->erow);
    R->col32 = malloc((size_t)cap * sizeof *R->col32);
    R->val = malloc((size_t)cap * sizeof *R->val);
    if (mode == SHUFFLED) R->grow = malloc((size_t)R->n * sizeof *R->grow + 1);
    for (int64_t i = 0; i < R->n; i++) {
        int64_t g = mode == SHUFFLED ? own[R->n - 1 - i] : own[i], len = rp[g + 1] - rp[g];
        if (R->grow) R->grow[i] = g;
        for (int64_t t = 0; t < len; t++) {
            int64_t s = pick(mode, rp[g], len, t), k = R->nnz;
            int twice = mode == REPEATED && (g + ci[s]) % 3 == 0;
            R->erow[k] = g, R->col[k] = ci[s], R->val[k] = twice ? 0.25 * csr[s] : csr[s];
            R->nnz++;
            if (twice) {
                R->erow[k + 1] = g, R->col[k + 1] = ci[s], R->val[k + 1] = 0.75 * csr[s];
                R->nnz++;
            }
        }
        R->rowptr[i + 1] = R->nnz;
    }
    for (int64_t k = 0; k < R->nnz; k++) R->col32[k] = (int32_t)R->col[k];
}

/* Same blocks and ghosts (the CSR path must produce the COO path's ParCSR split). */
static int same_blocks(const sla_dist_pattern *P, const sla_dist_pattern *Q)
{
    int ok = sla_dist_pattern_nnz(P) == sla_dist_pattern_nnz(Q) &&
             sla_dist_pattern_nnz_input(P) == sla_dist_pattern_nnz_input(Q);
    for (int blk = 0; ok && blk < 2; blk++) {
        const sla_pattern *a = blk ? sla_dist_pattern_offd(P) : sla_dist_pattern_diag(P);
        const sla_pattern *b = blk ? sla_dist_pattern_offd(Q) : sla_dist_pattern_diag(Q);
        int64_t n = sla_pattern_nrows(a), nnz = sla_pattern_nnz(a);
        ok = n == sla_pattern_nrows(b) && nnz == sla_pattern_nnz(b) &&
             sla_pattern_ncols(a) == sla_pattern_ncols(b) &&
             !memcmp(sla_pattern_rowptr(a), sla_pattern_rowptr(b), (size_t)(n + 1) * 8) &&
             !memcmp(sla_pattern_colind(a), sla_pattern_colind(b), (size_t)nnz * 4);
    }
    int64_t ga, gb;
    const int64_t *xa = sla_dist_pattern_ghosts(P, &ga), *xb = sla_dist_pattern_ghosts(Q, &gb);
    return ok && ga == gb && !memcmp(xa, xb, (size_t)ga * sizeof *xa);
}

static int bits_differ(const double *a, const double *b, int64_t n)
{
    return mt_sum(n > 0 && memcmp(a, b, (size_t)n * sizeof *a) != 0) != 0;
}

/* Serial references: y = A x, the direct solve x = A⁻¹ b and its VJP (dB, dvalues). */
typedef struct serial_ref {
    double *x, *b, *y, *xs, *g, *db, *dv;
} serial_ref;

static void serial_make(const sla_pattern *p, const double *csr, serial_ref *S)
{
    int64_t N = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    S->x = malloc((size_t)N * sizeof(double)); S->b = malloc((size_t)N * sizeof(double));
    S->y = malloc((size_t)N * sizeof(double)); S->xs = malloc((size_t)N * sizeof(double));
    S->g = malloc((size_t)N * sizeof(double)); S->db = malloc((size_t)N * sizeof(double));
    S->dv = malloc((size_t)nnz * sizeof(double));
    mt_fill(S->x, N, 11);
    mt_fill(S->b, N, 13);
    mt_fill(S->g, N, 17);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, csr);
    MT_OK(sla_spmv(SLA_OP_N, 1.0, &A, S->x, 0, 1, 0.0, S->y));
    sla_solver *s;
    MT_OK(sla_solver_create(&A, NULL, &s));
    MT_OK(sla_solver_solve(s, SLA_OP_N, 1, S->b, S->xs, NULL));
    MT_OK(sla_solver_solve_vjp(s, SLA_OP_N, 1, S->xs, S->g, S->db, S->dv, NULL));
    sla_solver_free(&s);
}

static void serial_free(serial_ref *S)
{
    free(S->x); free(S->b); free(S->y); free(S->xs); free(S->g); free(S->db); free(S->dv);
}

/* What one pattern computes: local values, y, the CG solution, dB and dvalues in entry order. */
typedef struct results {
    double *lv, *y, *x, *db, *dv;
    int64_t nl, n, nin;
} results;

static void compute(const sla_dist_pattern *P, const sla_dist_layout *L, const rows_csr *R,
                    const serial_ref *S, results *out)
{
    out->nl = sla_dist_pattern_nnz(P);
    out->n = sla_dist_layout_local_size(L);
    out->nin = R->nnz;
    out->lv = malloc((size_t)out->nl * sizeof(double) + 8);
    out->y = malloc((size_t)out->n * sizeof(double) + 8);
    out->x = malloc((size_t)out->n * sizeof(double) + 8);
    out->db = malloc((size_t)out->n * sizeof(double) + 8);
    out->dv = malloc((size_t)R->nnz * sizeof(double) + 8);
    double *dvl = malloc((size_t)out->nl * sizeof(double) + 8);
    MT_OK(sla_dist_values_gather(P, SLA_FLOAT64, 1, R->val, out->lv));
    sla_dist_matrix A = sla_dist_matrix_view(P, SLA_FLOAT64, 1, out->lv);
    double *x = mt_slice(L, 1, 1, S->x), *b = mt_slice(L, 1, 1, S->b), *g = mt_slice(L, 1, 1, S->g);
    MT_OK(sla_dist_spmv(SLA_OP_N, 1.0, &A, x, 0, 1, 0.0, out->y));
    sla_dist_solver_options o;
    sla_dist_solver_options_init(&o);
    o.method = SLA_METHOD_CG;
    o.precond = SLA_DIST_PC_JACOBI;
    o.rtol = 1e-13;
    sla_dist_solver *s = NULL;
    MT_OK(sla_dist_solver_create(&A, &o, &s));
    MT_OK(sla_dist_solver_solve(s, SLA_OP_N, 1, b, out->x, NULL));
    MT_OK(sla_dist_solver_solve_vjp(s, SLA_OP_N, 1, out->x, g, out->db, dvl, NULL));
    MT_OK(sla_dist_values_scatter(P, SLA_FLOAT64, 1, dvl, out->dv));
    sla_dist_solver_free(&s);
    free(x); free(b); free(g); free(dvl);
}

static void results_free(results *r) { free(r->lv); free(r->y); free(r->x); free(r->db); free(r->dv); }

static void check_case(const char *what, const sla_dist_layout *L, const sla_pattern *p,
                       const double *csr, const serial_ref *S, int mode)
{
    rows_csr R;
    make_rows(L, p, csr, mode, &R);
    sla_dist_pattern *Pc = NULL, *Po = NULL;
    MT_OK(sla_dist_pattern_from_csr(L, L, R.n, R.grow, R.rowptr, mode == ORDERED ? NULL : R.col,
                                    mode == ORDERED ? R.col32 : NULL, &Pc));
    MT_OK(sla_dist_pattern_from_coo(L, L, R.nnz, R.erow, R.col, &Po));
    if (!Pc || !Po) {
        sla_dist_pattern_free(&Pc);
        sla_dist_pattern_free(&Po);
        rows_free(&R);
        return;
    }
    int contiguous = sla_dist_layout_is_contiguous(L);
    int maps = Pc->coo_pos != NULL || Pc->coo.scount != NULL || !Pc->csr_input ||
               (mode == ORDERED && contiguous && Pc->recv_slot != NULL) ||
               (mode != ORDERED && R.nnz > 0 && Pc->recv_slot == NULL);
    MT_CHECK(mt_sum(maps) == 0, "%s, %s: unexpected entry maps (exchange map %d, slot map %d)",
             what, mode_name[mode], Pc->coo_pos != NULL, Pc->recv_slot != NULL);
    MT_CHECK(mt_sum(!same_blocks(Pc, Po)) == 0, "%s, %s: blocks or ghosts differ from the COO "
             "path's", what, mode_name[mode]);
    results c, o;
    compute(Pc, L, &R, S, &c);
    compute(Po, L, &R, S, &o);
    int diff = bits_differ(c.lv, o.lv, c.nl) | bits_differ(c.y, o.y, c.n) << 1 |
               bits_differ(c.x, o.x, c.n) << 2 | bits_differ(c.db, o.db, c.n) << 3 |
               bits_differ(c.dv, o.dv, c.nin) << 4;
    MT_CHECK(diff == 0, "%s, %s: not bit-identical to the COO path (mask %d: values 1, y 2, "
             "x 4, dB 8, dvalues 16)", what, mode_name[mode], diff);
    /* against serial */
    int64_t N = sla_pattern_nrows(p);
    double ey = mt_error(L, 1, 1, c.y, S->y, mt_amax(S->y, N));
    double ex = mt_error(L, 1, 1, c.x, S->xs, mt_amax(S->xs, N));
    double eb = mt_error(L, 1, 1, c.db, S->db, mt_amax(S->db, N));
    double ev = 0, sv = mt_amax(S->dv, sla_pattern_nnz(p));
    for (int64_t k = 0; k < R.nnz; k++)
        ev = fmax(ev, fabs(c.dv[k] - S->dv[sla_pattern_find(p, R.erow[k], R.col[k])]) / sv);
    ev = mt_max(ev);
    MT_CHECK(ey <= 1e-14 && ex <= 1e-10 && eb <= 1e-10 && ev <= 1e-10, "%s, %s: vs serial: y "
             "%.3g, x %.3g, dB %.3g, dvalues %.3g", what, mode_name[mode], ey, ex, eb, ev);
    results_free(&c);
    results_free(&o);
    sla_dist_pattern_free(&Pc);
    sla_dist_pattern_free(&Po);
    rows_free(&R);
}

static void run(const char *what, const mt_coo *A, const sla_dist_layout *L)
{
    sla_pattern *p;
    double *csr;
    mt_serial(A, &p, &csr);
    serial_ref S;
    serial_make(p, csr, &S);
    for (int mode = 0; mode < NMODES; mode++) check_case(what, L, p, csr, &S, mode);
    serial_free(&S);
    sla_pattern_free(&p);
    free(csr);
}

/* Every rank gets the status and message of the lowest failing rank, which it names. */
static void expect_error(const char *what, sla_status st, sla_status want, int bad_rank,
                         const char *needle, const sla_dist_pattern *P)
{
    char msg[512] = {0}, root[512] = {0}, name[32];
    snprintf(msg, sizeof msg, "%s", sla_last_error());
    memcpy(root, msg, sizeof root);
    MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "rank %d:", bad_rank);
    int bad = st != want || P != NULL || strcmp(msg, root) != 0 || !strstr(msg, name) ||
              !strstr(msg, needle) || !strstr(msg, "sla_dist_pattern_from_csr");
    MT_CHECK(mt_sum(bad) == 0, "%s: status %d (want %d), message \"%s\"", what, (int)st,
             (int)want, msg);
}

static void errors(void)
{
    mt_coo A;
    mt_poisson2d(6, 5, &A);
    sla_pattern *p;
    double *csr;
    mt_serial(&A, &p, &csr);
    sla_dist_layout *L;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A.m, -1, &L));
    int last = mt_size - 1;
    rows_csr R;
    make_rows(L, p, csr, ORDERED, &R);
    sla_dist_pattern *P = NULL;
    /* a column out of range on the last rank only */
    if (mt_rank == last && R.nnz > 0) R.col[R.nnz - 1] = A.n + 7;
    sla_status st = sla_dist_pattern_from_csr(L, L, R.n, NULL, R.rowptr, R.col, NULL, &P);
    expect_error("column out of range", st, SLA_EINDEX, last, "out of range", P);
    if (mt_rank == last && R.nnz > 0) R.col[R.nnz - 1] = -1;
    st = sla_dist_pattern_from_csr(L, L, R.n, NULL, R.rowptr, R.col, NULL, &P);
    expect_error("negative column", st, SLA_EINDEX, last, "= -1", P);
    if (mt_rank == last && R.nnz > 0) R.col[R.nnz - 1] = R.col32[R.nnz - 1];
    /* a decreasing row pointer on rank 0 */
    if (mt_rank == 0 && R.n > 1) R.rowptr[1] = R.rowptr[2] + 1;
    st = sla_dist_pattern_from_csr(L, L, R.n, NULL, R.rowptr, R.col, NULL, &P);
    expect_error("decreasing rowptr", st, SLA_EINVAL, 0, "rowptr decreases", P);
    rows_free(&R);
    make_rows(L, p, csr, ORDERED, &R);
    /* both column arrays on the last rank */
    st = sla_dist_pattern_from_csr(L, L, R.n, NULL, R.rowptr, R.col,
                                   mt_rank == last ? R.col32 : NULL, &P);
    expect_error("two column arrays", st, SLA_EINVAL, last, "both given", P);
    /* a row this rank does not own, in a row list on the last rank */
    int64_t *grow = malloc((size_t)R.n * sizeof *grow + 8);
    for (int64_t i = 0; i < R.n; i++) grow[i] = sla_dist_layout_global(L)[i];
    if (mt_rank == last && R.n > 0) grow[0] = mt_size > 1 ? 0 : grow[R.n - 1];
    st = sla_dist_pattern_from_csr(L, L, R.n, grow, R.rowptr, R.col, NULL, &P);
    expect_error("row not owned or listed twice", st, SLA_EINDEX, last,
                 mt_size > 1 ? "is not a row this rank owns" : "listed twice", P);
    free(grow);
    /* nrows_in that is not the local size, row list NULL */
    st = sla_dist_pattern_from_csr(L, L, mt_rank == last ? R.n + 1 : R.n, NULL, R.rowptr, R.col,
                                   NULL, &P);
    expect_error("nrows_in", st, SLA_EINVAL, last, "nrows_in", P);
    /* and the same arrays, repaired, work */
    st = sla_dist_pattern_from_csr(L, L, R.n, NULL, R.rowptr, R.col, NULL, &P);
    MT_CHECK(st == SLA_OK && P, "repaired input refused: %s", sla_last_error());
    sla_dist_pattern_free(&P);
    rows_free(&R);
    sla_dist_layout_free(&L);
    sla_pattern_free(&p);
    free(csr);
    mt_coo_free(&A);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo A;
    mt_poisson2d(12, 9, &A);
    sla_dist_layout *L;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A.m, -1, &L));
    run("Poisson 12x9, contiguous", &A, L);
    sla_dist_layout_free(&L);
    L = mt_random_layout(A.m, 21);
    run("Poisson 12x9, random ownership", &A, L);
    sla_dist_layout_free(&L);
    /* the first rank owns no rows (all rows on the others) */
    int64_t share = mt_size > 1 ? A.m / (mt_size - 1) : A.m;
    int64_t nloc = mt_size == 1 ? A.m : mt_rank == 0 ? 0
                 : mt_rank == mt_size - 1 ? A.m - share * (mt_size - 2) : share;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A.m, nloc, &L));
    run("Poisson 12x9, rank 0 owns no rows", &A, L);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
    mt_poisson3d(5, 4, 3, &A);
    L = mt_random_layout(A.m, 22);
    run("Poisson 5x4x3, random ownership", &A, L);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
    errors();
    return mt_finish("test_mpi_csr");
}
