/* The distributed least-squares VJP (sla_dist_solver_lstsq_vjp) against serial libsla's
 * sla_solver_lstsq_vjp (dB on the range layout, dvalues taken to every rank's COO order) and
 * against central finite differences of L = ⟨G, X(values, B)⟩ through distributed LSQR
 * solves: tall (full column rank) and wide (minimum-norm: the z wᵀ term) random matrices, op N
 * and T, a batch of 2 with 2 right-hand sides, rows and columns on different random layouts;
 * illc1850 (1850 × 712, real least-squares); a method that is not lsqr refused on every rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"
#include "sla/solver.h"

#define RTOL 1e-14

static double worst_serial, worst_fd;

/* a random m × n sparse matrix (density d, plus (i, i mod n) and (j mod m, j) so that no row
 * or column is empty), the same on every rank */
static void rand_rect(int64_t m, int64_t n, double d, uint64_t seed, mt_coo *A)
{
    int64_t cap = m * n + m + n;
    A->m = m; A->n = n; A->nnz = 0;
    A->row = malloc((size_t)cap * sizeof *A->row);
    A->col = malloc((size_t)cap * sizeof *A->col);
    A->val = malloc((size_t)cap * sizeof *A->val);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int forced = j == i % n || i == j % m;
            double u = mt_rand(&seed), v = mt_rand(&seed);
            if (!forced && (u + 1) / 2 > d) continue;
            A->row[A->nnz] = i; A->col[A->nnz] = j;
            A->val[A->nnz++] = v + (forced ? 2.0 : 0.0);
        }
}

static double value(const mt_coo *A, int64_t b, int64_t e) { return A->val[e] * (1 + 0.3 * b); }

typedef struct prob {
    const mt_coo *A;
    sla_op op;
    int64_t B, k, nb, nx, n;        /* batch, rhs, global rows of B and X, entries handed here */
    sla_dist_layout *Lr, *Lc, *Lb, *Lx;
    int64_t *row, *col;
    double *val, *lv;               /* [B][n] COO values, [B][nnz_local] */
    sla_dist_pattern *P;
    double *bg, *gg;                /* global B [B][nb][k], G [B][nx][k] */
} prob;

/* same: columns on the rows' layout (square A, for the methods that need it) */
static void prob_make_as(prob *q, const mt_coo *A, sla_op op, int64_t B, int64_t k,
                         uint64_t seed, int same)
{
    memset(q, 0, sizeof *q);
    q->A = A; q->op = op; q->B = B; q->k = k;
    q->nb = op == SLA_OP_N ? A->m : A->n;
    q->nx = op == SLA_OP_N ? A->n : A->m;
    q->Lr = mt_random_layout(A->m, seed);
    q->Lc = same ? sla_dist_layout_retain(q->Lr) : mt_random_layout(A->n, seed + 1);
    q->Lb = op == SLA_OP_N ? q->Lr : q->Lc;
    q->Lx = op == SLA_OP_N ? q->Lc : q->Lr;
    int64_t cap = A->nnz / mt_size + 1;
    q->row = malloc((size_t)cap * sizeof *q->row);
    q->col = malloc((size_t)cap * sizeof *q->col);
    q->val = malloc((size_t)(cap * B) * sizeof *q->val);
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size) q->n++;
    for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++) {
        q->row[i] = A->row[e];
        q->col[i] = A->col[e];
        for (int64_t b = 0; b < B; b++) q->val[b * q->n + i] = value(A, b, e);
    }
    MT_OK(sla_dist_pattern_from_coo(q->Lr, q->Lc, q->n, q->row, q->col, &q->P));
    q->lv = malloc((size_t)(B * sla_dist_pattern_nnz(q->P) + 1) * sizeof *q->lv);
    MT_OK(sla_dist_values_gather(q->P, SLA_FLOAT64, B, q->val, q->lv));
    q->bg = malloc((size_t)(B * q->nb * k) * sizeof *q->bg);
    q->gg = malloc((size_t)(B * q->nx * k) * sizeof *q->gg);
    mt_fill(q->bg, B * q->nb * k, seed + 2);
    mt_fill(q->gg, B * q->nx * k, seed + 3);
}

static void prob_make(prob *q, const mt_coo *A, sla_op op, int64_t B, int64_t k, uint64_t seed)
{
    prob_make_as(q, A, op, B, k, seed, 0);
}

static void prob_free(prob *q)
{
    sla_dist_pattern_free(&q->P);
    sla_dist_layout_free(&q->Lr);
    sla_dist_layout_free(&q->Lc);
    free(q->row); free(q->col); free(q->val); free(q->lv); free(q->bg); free(q->gg);
}

static sla_dist_solver *dist_lsqr(prob *q, sla_method method)
{
    sla_dist_matrix D = sla_dist_matrix_view(q->P, SLA_FLOAT64, q->B, q->lv);
    sla_dist_solver_options o;
    sla_dist_solver_options_init(&o);
    o.method = method;
    o.precond = SLA_DIST_PC_NONE;
    o.rtol = RTOL;
    sla_dist_solver *s = NULL;
    MT_OK(sla_dist_solver_create(&D, &o, &s));
    return s;
}

/* serial: X, dB and dvalues in the global COO order [B][A->nnz] */
static void serial_vjp(const prob *q, double *xs, double *dbs, double *dcoo)
{
    const mt_coo *A = q->A;
    sla_pattern *p = NULL;
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, &p));
    int64_t nnz = sla_pattern_nnz(p);
    double *coo = malloc((size_t)(A->nnz * q->B) * sizeof *coo);
    double *csr = malloc((size_t)(nnz * q->B) * sizeof *csr), *dv = malloc((size_t)(nnz * q->B) * sizeof *dv);
    for (int64_t b = 0; b < q->B; b++)
        for (int64_t e = 0; e < A->nnz; e++) coo[b * A->nnz + e] = value(A, b, e);
    MT_OK(sla_values_gather(p, SLA_FLOAT64, q->B, coo, csr));
    sla_matrix M = sla_matrix_view(p, SLA_FLOAT64, q->B, csr);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LSQR;
    o.precond = SLA_PRECOND_NONE;
    o.rtol = RTOL;
    sla_solver *s = NULL;
    MT_OK(sla_solver_create(&M, &o, &s));
    MT_OK(sla_solver_solve(s, q->op, q->k, q->bg, xs, NULL));
    MT_OK(sla_solver_lstsq_vjp(s, q->op, q->k, q->bg, xs, q->gg, dbs, dv, NULL));
    MT_OK(sla_values_scatter(p, SLA_FLOAT64, q->B, dv, dcoo));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(coo); free(csr); free(dv);
}

/* L = ⟨G, X⟩ of the current COO values by a fresh distributed LSQR solve */
static double loss(prob *q, const double *bl, const double *gl)
{
    MT_OK(sla_dist_values_gather(q->P, SLA_FLOAT64, q->B, q->val, q->lv));
    sla_dist_solver *s = dist_lsqr(q, SLA_METHOD_LSQR);
    int64_t t = q->B * sla_dist_layout_local_size(q->Lx) * q->k;
    double *x = malloc((size_t)t * sizeof *x + 8), l = 0, L = 0;
    if (s) MT_OK(sla_dist_solver_solve(s, q->op, q->k, bl, x, NULL));
    for (int64_t i = 0; s && i < t; i++) l += gl[i] * x[i];
    sla_dist_solver_free(&s);
    MPI_Allreduce(&l, &L, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    free(x);
    return L;
}

static void check(const char *what, const mt_coo *A, sla_op op, int64_t B, int64_t k, int nfd,
                  uint64_t seed)
{
    prob q;
    prob_make(&q, A, op, B, k, seed);
    int64_t tb = B * q.nb * k, tx = B * q.nx * k, nl = sla_dist_pattern_nnz(q.P);
    double *xs = malloc((size_t)tx * sizeof *xs), *dbs = malloc((size_t)tb * sizeof *dbs);
    double *dvs = malloc((size_t)(B * A->nnz) * sizeof *dvs);
    serial_vjp(&q, xs, dbs, dvs);
    double *bl = mt_slice(q.Lb, B, k, q.bg), *gl = mt_slice(q.Lx, B, k, q.gg);
    int64_t lb = B * sla_dist_layout_local_size(q.Lb) * k, lx = B * sla_dist_layout_local_size(q.Lx) * k;
    double *xl = malloc((size_t)lx * sizeof *xl + 8), *dbl = malloc((size_t)lb * sizeof *dbl + 8);
    double *dvl = malloc((size_t)(B * nl + 1) * sizeof *dvl), *dvc = malloc((size_t)(B * q.n + 1) * sizeof *dvc);
    sla_dist_solver *s = dist_lsqr(&q, SLA_METHOD_LSQR);
    sla_solve_info info;
    memset(&info, 0, sizeof info);
    if (s) {
        MT_OK(sla_dist_solver_solve(s, op, k, bl, xl, NULL));
        MT_OK(sla_dist_solver_lstsq_vjp(s, op, k, bl, xl, gl, dbl, dvl, &info));
    }
    sla_dist_solver_free(&s);
    MT_CHECK(info.converged && info.iterations > 0, "%s: info converged %d, iterations %lld",
             what, info.converged, (long long)info.iterations);
    MT_OK(sla_dist_values_scatter(q.P, SLA_FLOAT64, B, dvl, dvc));
    double ex = mt_error(q.Lx, B, k, xl, xs, mt_amax(xs, tx));
    double eb = mt_error(q.Lb, B, k, dbl, dbs, mt_amax(dbs, tb)), ev = 0;
    double sv = mt_amax(dvs, B * A->nnz) + 1e-300;
    for (int64_t b = 0; b < B; b++)
        for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++)
            ev = fmax(ev, fabs(dvc[b * q.n + i] - dvs[b * A->nnz + e]) / sv);
    ev = mt_max(ev);
    MT_CHECK(ex <= 1e-10 && eb <= 1e-10 && ev <= 1e-10, "%s: vs serial: X %.3g, dB %.3g, "
             "dvalues %.3g", what, ex, eb, ev);
    worst_serial = fmax(worst_serial, fmax(ex, fmax(eb, ev)));
    /* central differences in single values of the last batch element */
    double efd = 0, h = 1e-6;
    uint64_t st = seed + 9;
    for (int t = 0; t < nfd; t++) {
        int64_t e = (int64_t)((mt_rand(&st) + 1) / 2 * (double)A->nnz) % A->nnz;
        int owner = (int)(e % mt_size);
        int64_t i = e / mt_size, b = B - 1;
        double a = value(A, b, e), grad = 0;
        if (mt_rank == owner) { grad = dvc[b * q.n + i]; q.val[b * q.n + i] = a + h; }
        double Lp = loss(&q, bl, gl);
        if (mt_rank == owner) q.val[b * q.n + i] = a - h;
        double Lm = loss(&q, bl, gl);
        if (mt_rank == owner) q.val[b * q.n + i] = a;
        MPI_Bcast(&grad, 1, MPI_DOUBLE, owner, MPI_COMM_WORLD);
        efd = fmax(efd, fabs((Lp - Lm) / (2 * h) - grad) / sv);
    }
    MT_CHECK(efd <= 1e-6, "%s: dvalues vs central differences %.3g", what, efd);
    worst_fd = fmax(worst_fd, efd);
    if (mt_rank == 0)
        printf("%s: vs serial X %.3g, dB %.3g, dvalues %.3g; vs central differences %.3g "
               "(%lld iterations)\n", what, ex, eb, ev, efd, (long long)info.iterations);
    free(xs); free(dbs); free(dvs); free(bl); free(gl); free(xl); free(dbl); free(dvl); free(dvc);
    prob_free(&q);
}

/* gmres (square) and a bad op: refused on every rank */
static void refusals(void)
{
    mt_coo A;
    rand_rect(10, 10, 0.3, 7, &A);
    prob q;
    prob_make_as(&q, &A, SLA_OP_N, 1, 1, 3, 1);
    sla_dist_solver *s = dist_lsqr(&q, SLA_METHOD_GMRES);
    int64_t n = sla_dist_layout_local_size(q.Lr);
    double *v = calloc((size_t)n + 1, sizeof *v), *d = calloc((size_t)n + 1, sizeof *d);
    for (int64_t i = 0; i < n; i++) v[i] = 1;
    sla_status st = sla_dist_solver_lstsq_vjp(s, SLA_OP_N, 1, v, v, v, d, NULL, NULL);
    MT_CHECK(mt_sum(st == SLA_EUNSUPPORTED) == mt_size, "gmres: status %d (%s)", (int)st,
             sla_last_error());
    sla_dist_solver_free(&s);
    s = dist_lsqr(&q, SLA_METHOD_LSQR);
    st = sla_dist_solver_lstsq_vjp(s, (sla_op)7, 1, v, v, v, d, NULL, NULL);
    MT_CHECK(mt_sum(st == SLA_EINVAL) == mt_size, "op 7: status %d (%s)", (int)st, sla_last_error());
    /* G = 0: zeros, no solve */
    memset(v, 0, (size_t)(n + 1) * sizeof *v);
    sla_solve_info info;
    st = sla_dist_solver_lstsq_vjp(s, SLA_OP_N, 1, NULL, NULL, v, d, NULL, &info);
    MT_CHECK(st == SLA_OK && info.iterations == 0, "G = 0: status %d, %lld iterations", (int)st,
             (long long)info.iterations);
    sla_dist_solver_free(&s);
    free(v); free(d);
    prob_free(&q);
    mt_coo_free(&A);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo A;
    rand_rect(30, 12, 0.3, 81, &A);
    check("tall 30x12, op N, batch 2, 2 rhs", &A, SLA_OP_N, 2, 2, 4, 11);
    check("tall 30x12, op T (wide op(A)), batch 2, 2 rhs", &A, SLA_OP_T, 2, 2, 4, 12);
    mt_coo_free(&A);
    rand_rect(11, 26, 0.3, 83, &A);
    check("wide 11x26, op N (minimum norm), batch 2, 2 rhs", &A, SLA_OP_N, 2, 2, 4, 13);
    check("wide 11x26, op T, batch 1", &A, SLA_OP_T, 1, 1, 3, 14);
    mt_coo_free(&A);
    if (mt_load("illc1850.mtx", &A)) {
        check("illc1850 (1850x712), op N", &A, SLA_OP_N, 1, 1, 0, 15);
        mt_coo_free(&A);
    }
    refusals();
    if (mt_rank == 0)
        printf("test_mpi_lstsq_vjp: worst vs serial %.3g, vs central differences %.3g\n",
               worst_serial, worst_fd);
    return mt_finish("test_mpi_lstsq_vjp");
}
