/* Distributed SpMV (op N and T) against serial sla_spmv: 2D/3D Poisson and real matrices, on
 * contiguous, uneven (empty ranks), random non-contiguous and distinct row/column layouts,
 * batches, blocks of k columns, broadcast x; the adjoint identity ⟨Ax, w⟩ = ⟨x, Aᵀw⟩; bit-
 * identical reruns. Every rank hands in a scattered share of the COO entries (entry e goes to
 * rank e mod p), so most entries travel to their owner. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define TOL 1e-14

static double worst_n, worst_t, worst_adj;

/* This rank's share of the entries of A and their values for a batch: value set b is
 * val·(1 + b/4) + b/8 (distinct matrices on one pattern). */
static void share(const mt_coo *A, int64_t batch, int64_t *n, int64_t **row, int64_t **col,
                  double **val)
{
    *n = 0;
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size) (*n)++;
    *row = malloc((size_t)(*n + 1) * sizeof **row);
    *col = malloc((size_t)(*n + 1) * sizeof **col);
    *val = malloc((size_t)(*n * batch + 1) * sizeof **val);
    int64_t i = 0;
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size, i++) {
        (*row)[i] = A->row[e];
        (*col)[i] = A->col[e];
        for (int64_t b = 0; b < batch; b++) (*val)[b * *n + i] = A->val[e] * (1 + 0.25 * b) + 0.125 * b;
    }
}

/* Serial values of the same batch, CSR order, and their absolute values. */
static double *serial_values(const mt_coo *A, const sla_pattern *p, int64_t batch, int absval)
{
    double *coo = malloc((size_t)(A->nnz * batch + 1) * sizeof *coo);
    double *csr = malloc((size_t)(sla_pattern_nnz(p) * batch + 1) * sizeof *csr);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t e = 0; e < A->nnz; e++) {
            double v = A->val[e] * (1 + 0.25 * b) + 0.125 * b;
            coo[b * A->nnz + e] = absval ? fabs(v) : v;
        }
    MT_OK(sla_values_gather(p, SLA_FLOAT64, batch, coo, csr));
    if (absval)
        for (int64_t s = 0; s < sla_pattern_nnz(p) * batch; s++) csr[s] = fabs(csr[s]);
    free(coo);
    return csr;
}

/* ‖ |op(A)|·|x| ‖∞, the scale of the rounding differences between summation orders. */
static double scale_of(sla_op op, const sla_matrix *Aabs, const double *x, int x_batched,
                       int64_t nx, int64_t ny, int64_t k)
{
    int64_t nb = x_batched ? Aabs->batch : 1;
    double *ax = malloc((size_t)(nb * nx * k + 1) * sizeof *ax);
    double *y = malloc((size_t)(Aabs->batch * ny * k + 1) * sizeof *y);
    for (int64_t i = 0; i < nb * nx * k; i++) ax[i] = fabs(x[i]);
    MT_OK(sla_spmv(op, 1.0, Aabs, ax, x_batched, k, 0.0, y));
    double s = mt_amax(y, Aabs->batch * ny * k);
    free(ax);
    free(y);
    return s;
}

/* One product: op, layouts of x and y, reference from the serial matrix. */
static void one_op(const char *what, sla_op op, const sla_matrix *S, const sla_matrix *Sabs,
                   const sla_dist_matrix *D, const sla_dist_layout *ly, const sla_dist_layout *lx,
                   int64_t k, int x_batched)
{
    int64_t B = S->batch, nb = x_batched ? B : 1;
    int64_t NX = sla_dist_layout_size(lx), NY = sla_dist_layout_size(ly);
    int64_t ny = sla_dist_layout_local_size(ly);
    double *xg = malloc((size_t)(nb * NX * k + 1) * sizeof *xg);
    double *yg = malloc((size_t)(B * NY * k + 1) * sizeof *yg);
    mt_fill(xg, nb * NX * k, 11 + (uint64_t)op);
    mt_fill(yg, B * NY * k, 23);
    double *xl = mt_slice(lx, nb, k, xg), *yl = mt_slice(ly, B, k, yg);
    double *y2 = malloc((size_t)(B * ny * k + 1) * sizeof *y2);
    memcpy(y2, yl, (size_t)(B * ny * k) * sizeof *y2);
    const double alpha = 0.7, beta = -0.3;
    MT_OK(sla_spmv(op, alpha, S, xg, x_batched, k, beta, yg));
    MT_OK(sla_dist_spmv(op, alpha, D, xl, x_batched, k, beta, yl));
    double scale = fabs(alpha) * scale_of(op, Sabs, xg, x_batched, NX, NY, k) + 0.3;
    double err = mt_error(ly, B, k, yl, yg, scale);
    MT_CHECK(err <= TOL, "%s op %c: distributed vs serial error %.3g > %g", what,
             op == SLA_OP_N ? 'N' : 'T', err, TOL);
    if (op == SLA_OP_N) worst_n = fmax(worst_n, err); else worst_t = fmax(worst_t, err);
    /* a rerun gives the same bits */
    MT_OK(sla_dist_spmv(op, alpha, D, xl, x_batched, k, beta, y2));
    int same = memcmp(y2, yl, (size_t)(B * ny * k) * sizeof *y2) == 0, all;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MT_CHECK(all, "%s op %c: a rerun differs in its bits", what, op == SLA_OP_N ? 'N' : 'T');
    free(xg);
    free(yg);
    free(xl);
    free(yl);
    free(y2);
}

/* ⟨A x, w⟩ = ⟨x, Aᵀ w⟩ for batch element 0, with the distributed dot products. */
static void adjoint_identity(const char *what, const sla_dist_matrix *D0,
                             const sla_dist_layout *rows, const sla_dist_layout *cols)
{
    int64_t nr = sla_dist_layout_local_size(rows), nc = sla_dist_layout_local_size(cols);
    double *x = malloc((size_t)(nc + 1) * sizeof *x), *ax = malloc((size_t)(nr + 1) * sizeof *ax);
    double *w = malloc((size_t)(nr + 1) * sizeof *w), *atw = malloc((size_t)(nc + 1) * sizeof *atw);
    mt_fill(x, nc, 100 + (uint64_t)mt_rank);
    mt_fill(w, nr, 200 + (uint64_t)mt_rank);
    MT_OK(sla_dist_spmv(SLA_OP_N, 1.0, D0, x, 0, 1, 0.0, ax));
    MT_OK(sla_dist_spmv(SLA_OP_T, 1.0, D0, w, 0, 1, 0.0, atw));
    MPI_Comm comm = sla_dist_layout_comm(rows);
    double l = 0, r = 0, nax, nx, nw, natw;
    MT_OK(sla_dist_vec_dot(comm, SLA_FLOAT64, nr, ax, w, &l));
    MT_OK(sla_dist_vec_dot(comm, SLA_FLOAT64, nc, x, atw, &r));
    MT_OK(sla_dist_vec_norm2(comm, SLA_FLOAT64, nr, ax, &nax));
    MT_OK(sla_dist_vec_norm2(comm, SLA_FLOAT64, nr, w, &nw));
    MT_OK(sla_dist_vec_norm2(comm, SLA_FLOAT64, nc, x, &nx));
    MT_OK(sla_dist_vec_norm2(comm, SLA_FLOAT64, nc, atw, &natw));
    double rel = fabs(l - r) / fmax(nax * nw + nx * natw, 1e-300);
    MT_CHECK(rel <= 1e-14, "%s: <Ax,w> = %.17g, <x,A^T w> = %.17g (rel %.3g)", what, l, r, rel);
    worst_adj = fmax(worst_adj, rel);
    free(x);
    free(ax);
    free(w);
    free(atw);
}

/* Every product of A on the layouts given, for a batch of 2, k = 1 and 3, x batched or not. */
static void check_matrix(const char *what, const mt_coo *A, sla_dist_layout *rows,
                         sla_dist_layout *cols)
{
    const int64_t B = 2;
    sla_pattern *p;
    double *tmp;
    mt_serial(A, &p, &tmp);
    free(tmp);
    double *sv = serial_values(A, p, B, 0), *sa = serial_values(A, p, B, 1);
    sla_matrix S = sla_matrix_view(p, SLA_FLOAT64, B, sv), Sabs = sla_matrix_view(p, SLA_FLOAT64, B, sa);
    int64_t n, *row, *col;
    double *val;
    share(A, B, &n, &row, &col, &val);
    sla_dist_pattern *P = NULL;
    MT_OK(sla_dist_pattern_from_coo(rows, cols, n, row, col, &P));
    double *lv = malloc((size_t)(B * sla_dist_pattern_nnz(P) + 1) * sizeof *lv);
    MT_OK(sla_dist_values_gather(P, SLA_FLOAT64, B, val, lv));
    sla_dist_matrix D = sla_dist_matrix_view(P, SLA_FLOAT64, B, lv);
    for (int64_t k = 1; k <= 3; k += 2)
        for (int xb = 0; xb <= 1; xb++) {
            char name[256];
            snprintf(name, sizeof name, "%s (k = %lld, x_batched = %d)", what, (long long)k, xb);
            one_op(name, SLA_OP_N, &S, &Sabs, &D, rows, cols, k, xb);
            one_op(name, SLA_OP_T, &S, &Sabs, &D, cols, rows, k, xb);
        }
    sla_dist_matrix D0 = sla_dist_matrix_view(P, SLA_FLOAT64, 1, lv);
    adjoint_identity(what, &D0, rows, cols);
    sla_dist_pattern_free(&P);
    sla_pattern_free(&p);
    free(sv);
    free(sa);
    free(lv);
    free(row);
    free(col);
    free(val);
}

/* The layouts a matrix is tried on: balanced, uneven with empty ranks, random. */
static void check_layouts(const char *what, const mt_coo *A, uint64_t seed)
{
    char name[256];
    sla_dist_layout *r = NULL, *c = NULL;
    /* balanced contiguous, one layout for rows and columns when square */
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A->m, -1, &r));
    if (A->m == A->n) c = sla_dist_layout_retain(r);
    else MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A->n, -1, &c));
    snprintf(name, sizeof name, "%s, contiguous", what);
    check_matrix(name, A, r, c);
    sla_dist_layout_free(&r);
    sla_dist_layout_free(&c);
    /* uneven: rank 0 owns nothing (with p > 1), the last rank the larger rest */
    int64_t mine = mt_size == 1 ? A->m : mt_rank == 0 ? 0
                 : mt_rank < mt_size - 1 ? A->m / (2 * mt_size) : A->m - (mt_size - 2) * (A->m / (2 * mt_size));
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A->m, mine, &r));
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A->n, -1, &c));
    snprintf(name, sizeof name, "%s, uneven rows with an empty rank", what);
    check_matrix(name, A, r, c);
    sla_dist_layout_free(&r);
    sla_dist_layout_free(&c);
    /* random ownership, rows and columns distributed differently */
    int *pr = malloc((size_t)A->m * sizeof *pr), *pc = malloc((size_t)A->n * sizeof *pc);
    mt_random_part(A->m, mt_size, seed, pr);
    mt_random_part(A->n, mt_size, seed + 1, pc);
    int64_t nr, nc, *orow = mt_owned(pr, A->m, mt_rank, &nr), *ocol = mt_owned(pc, A->n, mt_rank, &nc);
    MT_OK(sla_dist_layout_create_owned(MPI_COMM_WORLD, A->m, nr, orow, &r));
    MT_OK(sla_dist_layout_create_owned(MPI_COMM_WORLD, A->n, nc, ocol, &c));
    snprintf(name, sizeof name, "%s, random rows, random columns", what);
    check_matrix(name, A, r, c);
    sla_dist_layout_free(&c);
    if (A->m == A->n) {
        snprintf(name, sizeof name, "%s, random rows = columns", what);
        check_matrix(name, A, r, r);
    }
    sla_dist_layout_free(&r);
    free(pr);
    free(pc);
    free(orow);
    free(ocol);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo A;
    mt_poisson2d(13, 11, &A);
    check_layouts("2D Poisson 13x11", &A, 1);
    mt_coo_free(&A);
    mt_poisson3d(6, 5, 4, &A);
    check_layouts("3D Poisson 6x5x4", &A, 2);
    mt_coo_free(&A);
    /* more ranks than rows: a 2 x 3 matrix */
    mt_coo T = {2, 3, 4, (int64_t[]){0, 1, 1, 0}, (int64_t[]){0, 2, 1, 2}, (double[]){1, 2, 3, 4}};
    check_layouts("2 x 3", &T, 3);
    static const char *files[] = {"bcsstk13.mtx", "west0479.mtx", "illc1850.mtx", "rajat19.mtx"};
    for (int f = 0; f < 4; f++)
        if (mt_load(files[f], &A)) {
            check_layouts(files[f], &A, 10 + (uint64_t)f);
            mt_coo_free(&A);
        }
    if (mt_rank == 0)
        printf("worst normwise error vs serial: op N %.3g, op T %.3g; adjoint identity %.3g\n",
               worst_n, worst_t, worst_adj);
    return mt_finish("test_mpi_spmv");
}
