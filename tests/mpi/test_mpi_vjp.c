/* The distributed SpMV VJP against serial sla_spmv_vjp (dx, and dvalues taken back to every
 * rank's COO order by sla_dist_values_scatter) and against central finite differences of
 * L = ⟨g, alpha·op(A)·x⟩ in single values and single entries of x, for op N and T, batches
 * with x batched or broadcast, k = 1 and 2, on random ownership. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static double worst_serial, worst_fd;

typedef struct setup {
    const mt_coo *A;
    sla_dist_layout *rows, *cols;
    int64_t B, k, n;             /* batch, columns, entries handed in here */
    int64_t *row, *col;
    double *val;                 /* [B][n] this rank's COO values */
    sla_dist_pattern *P;
} setup;

/* Value set b of global entry e. */
static double value(const mt_coo *A, int64_t b, int64_t e) { return A->val[e] * (1 + 0.5 * b) - 0.01 * b; }

static void make(setup *S, const mt_coo *A, sla_dist_layout *rows, sla_dist_layout *cols,
                 int64_t B, int64_t k)
{
    memset(S, 0, sizeof *S);
    S->A = A; S->rows = rows; S->cols = cols; S->B = B; S->k = k;
    int64_t cap = A->nnz / mt_size + 1;
    S->row = malloc((size_t)cap * sizeof *S->row);
    S->col = malloc((size_t)cap * sizeof *S->col);
    S->val = malloc((size_t)(cap * B) * sizeof *S->val);
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size) S->n++;
    for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++) {
        S->row[i] = A->row[e];
        S->col[i] = A->col[e];
        for (int64_t b = 0; b < B; b++) S->val[b * S->n + i] = value(A, b, e);
    }
    MT_OK(sla_dist_pattern_from_coo(rows, cols, S->n, S->row, S->col, &S->P));
}

static void unmake(setup *S)
{
    sla_dist_pattern_free(&S->P);
    free(S->row);
    free(S->col);
    free(S->val);
}

/* L = Σ g·(alpha·op(A)·x) with this rank's COO values coo [B][n] and slices x, g. */
static double loss(const setup *S, sla_op op, double alpha, const double *coo, const double *x,
                   int xb, const double *g)
{
    double *lv = malloc((size_t)(S->B * sla_dist_pattern_nnz(S->P) + 1) * sizeof *lv);
    MT_OK(sla_dist_values_gather(S->P, SLA_FLOAT64, S->B, coo, lv));
    sla_dist_matrix D = sla_dist_matrix_view(S->P, SLA_FLOAT64, S->B, lv);
    const sla_dist_layout *ly = op == SLA_OP_N ? S->rows : S->cols;
    int64_t ny = sla_dist_layout_local_size(ly) * S->k * S->B;
    double *y = malloc((size_t)(ny + 1) * sizeof *y), l = 0;
    MT_OK(sla_dist_spmv(op, alpha, &D, x, xb, S->k, 0.0, y));
    MT_OK(sla_dist_vec_dot(sla_dist_layout_comm(ly), SLA_FLOAT64, ny, g, y, &l));
    free(lv);
    free(y);
    return l;
}

static void check(const char *what, setup *S, sla_op op, int xb)
{
    const mt_coo *A = S->A;
    int64_t B = S->B, k = S->k, nb = xb ? B : 1;
    const double alpha = 1.5;
    const sla_dist_layout *lx = op == SLA_OP_N ? S->cols : S->rows, *ly = op == SLA_OP_N ? S->rows : S->cols;
    int64_t NX = sla_dist_layout_size(lx), NY = sla_dist_layout_size(ly);
    int64_t nx = sla_dist_layout_local_size(lx);
    /* serial reference */
    sla_pattern *p;
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, &p));
    int64_t nnz = sla_pattern_nnz(p);
    double *coo = malloc((size_t)(A->nnz * B + 1) * sizeof *coo), *csr = malloc((size_t)(nnz * B + 1) * sizeof *csr);
    for (int64_t b = 0; b < B; b++)
        for (int64_t e = 0; e < A->nnz; e++) coo[b * A->nnz + e] = value(A, b, e);
    MT_OK(sla_values_gather(p, SLA_FLOAT64, B, coo, csr));
    sla_matrix Sm = sla_matrix_view(p, SLA_FLOAT64, B, csr);
    double *xg = malloc((size_t)(nb * NX * k + 1) * sizeof *xg), *gg = malloc((size_t)(B * NY * k + 1) * sizeof *gg);
    mt_fill(xg, nb * NX * k, 31);
    mt_fill(gg, B * NY * k, 37);
    double *dxs = malloc((size_t)(nb * NX * k + 1) * sizeof *dxs), *dvs = malloc((size_t)(nnz * B + 1) * sizeof *dvs);
    double *dvc = malloc((size_t)(A->nnz * B + 1) * sizeof *dvc);
    MT_OK(sla_spmv_vjp(op, alpha, &Sm, xg, xb, k, gg, dxs, dvs));
    MT_OK(sla_values_scatter(p, SLA_FLOAT64, B, dvs, dvc));
    /* distributed */
    double *lv = malloc((size_t)(B * sla_dist_pattern_nnz(S->P) + 1) * sizeof *lv);
    MT_OK(sla_dist_values_gather(S->P, SLA_FLOAT64, B, S->val, lv));
    sla_dist_matrix D = sla_dist_matrix_view(S->P, SLA_FLOAT64, B, lv);
    double *xl = mt_slice(lx, nb, k, xg), *gl = mt_slice(ly, B, k, gg);
    double *dxl = malloc((size_t)(nb * nx * k + 1) * sizeof *dxl);
    double *dvl = malloc((size_t)(B * sla_dist_pattern_nnz(S->P) + 1) * sizeof *dvl);
    double *dvcl = malloc((size_t)(B * S->n + 1) * sizeof *dvcl);
    MT_OK(sla_dist_spmv_vjp(op, alpha, &D, xl, xb, k, gl, dxl, dvl));
    MT_OK(sla_dist_values_scatter(S->P, SLA_FLOAT64, B, dvl, dvcl));
    double ex = mt_error(lx, nb, k, dxl, dxs, mt_amax(dxs, nb * NX * k) + 1e-300);
    double ev = 0, sv = mt_amax(dvc, A->nnz * B) + 1e-300;
    for (int64_t b = 0; b < B; b++)
        for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++)
            ev = fmax(ev, fabs(dvcl[b * S->n + i] - dvc[b * A->nnz + e]) / sv);
    ev = mt_max(ev);
    MT_CHECK(ex <= 1e-14 && ev <= 1e-14, "%s op %c xb %d: dx error %.3g, dvalues error %.3g vs serial",
             what, op == SLA_OP_N ? 'N' : 'T', xb, ex, ev);
    worst_serial = fmax(worst_serial, fmax(ex, ev));
    /* central differences: L is linear in each value and each entry of x, so the difference
     * quotient has no truncation error and large steps keep the rounding of L small */
    double mv = mt_amax(dvc, A->nnz * B), mx = mt_amax(dxs, nb * NX * k);
    for (int t = 0; t < 3; t++) {
        int64_t e = (int64_t)(t * 7 + 1) * A->nnz / 23, b = t % B;   /* global entry, batch */
        int mine = e % mt_size == mt_rank;
        int64_t i = e / mt_size;
        double save = mine ? S->val[b * S->n + i] : 0, h = 0.25 * (fabs(value(A, b, e)) + 1);
        if (mine) S->val[b * S->n + i] = save + h;
        double lp = loss(S, op, alpha, S->val, xl, xb, gl);
        if (mine) S->val[b * S->n + i] = save - h;
        double lm = loss(S, op, alpha, S->val, xl, xb, gl);
        if (mine) S->val[b * S->n + i] = save;
        double fd = (lp - lm) / (2 * h), an = dvc[b * A->nnz + e];
        double scale = fabs(an) + mv;
        MT_CHECK(fabs(fd - an) <= 1e-9 * scale, "%s op %c: d/dvalue[%lld][%lld]: FD %.15g, VJP %.15g",
                 what, op == SLA_OP_N ? 'N' : 'T', (long long)b, (long long)e, fd, an);
        worst_fd = fmax(worst_fd, fabs(fd - an) / scale);
        /* an entry of x: the owner perturbs it */
        int64_t gx = (int64_t)(t * 5 + 2) * NX / 17, j = t % k, bx = t % nb;
        int64_t li = sla_dist_layout_local_index(lx, gx);
        double *xe = li >= 0 ? &xl[(bx * nx + li) * k + j] : NULL, xs = xe ? *xe : 0;
        h = 0.5;
        if (xe) *xe = xs + h;
        lp = loss(S, op, alpha, S->val, xl, xb, gl);
        if (xe) *xe = xs - h;
        lm = loss(S, op, alpha, S->val, xl, xb, gl);
        if (xe) *xe = xs;
        fd = (lp - lm) / (2 * h);
        an = dxs[(bx * NX + gx) * k + j];
        scale = fabs(an) + mx;
        MT_CHECK(fabs(fd - an) <= 1e-9 * scale, "%s op %c: d/dx[%lld][%lld][%lld]: FD %.15g, VJP %.15g",
                 what, op == SLA_OP_N ? 'N' : 'T', (long long)bx, (long long)gx, (long long)j, fd, an);
        worst_fd = fmax(worst_fd, fabs(fd - an) / scale);
    }
    /* outputs skipped: dvalues only (x needed), dx only (x may be NULL) */
    MT_OK(sla_dist_spmv_vjp(op, alpha, &D, xl, xb, k, gl, NULL, dvl));
    MT_OK(sla_dist_spmv_vjp(op, alpha, &D, NULL, xb, k, gl, dxl, NULL));
    double ex2 = mt_error(lx, nb, k, dxl, dxs, mt_amax(dxs, nb * NX * k) + 1e-300);
    MT_CHECK(ex2 <= 1e-14, "%s: dx alone differs (%.3g)", what, ex2);
    sla_pattern_free(&p);
    free(coo); free(csr); free(xg); free(gg); free(dxs); free(dvs); free(dvc);
    free(lv); free(xl); free(gl); free(dxl); free(dvl); free(dvcl);
}

static void run(const char *what, const mt_coo *A, sla_dist_layout *rows, sla_dist_layout *cols)
{
    for (int64_t k = 1; k <= 2; k++) {
        setup S;
        make(&S, A, rows, cols, 2, k);
        for (int xb = 0; xb <= 1; xb++) {
            check(what, &S, SLA_OP_N, xb);
            check(what, &S, SLA_OP_T, xb);
        }
        unmake(&S);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo A;
    mt_poisson2d(8, 6, &A);
    uint64_t seed = 9;
    for (int64_t e = 0; e < A.nnz; e++) A.val[e] += 0.3 * mt_rand(&seed);   /* nonsymmetric */
    sla_dist_layout *L = mt_random_layout(A.m, 4);
    run("perturbed Poisson 8x6, random", &A, L, L);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
    if (mt_load("west0479.mtx", &A)) {
        sla_dist_layout *R = mt_random_layout(A.m, 5), *C = mt_random_layout(A.n, 6);
        run("west0479, random rows and columns", &A, R, C);
        sla_dist_layout_free(&R);
        sla_dist_layout_free(&C);
        mt_coo_free(&A);
    }
    if (mt_load("illc1850.mtx", &A)) {
        sla_dist_layout *R = NULL, *C = mt_random_layout(A.n, 7);
        MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A.m, -1, &R));
        run("illc1850 (rectangular)", &A, R, C);
        sla_dist_layout_free(&R);
        sla_dist_layout_free(&C);
        mt_coo_free(&A);
    }
    if (mt_rank == 0)
        printf("worst VJP error vs serial %.3g, vs central differences %.3g (scaled)\n",
               worst_serial, worst_fd);
    return mt_finish("test_mpi_vjp");
}
