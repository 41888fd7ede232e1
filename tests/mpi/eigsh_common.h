/* Helpers of the distributed eigsh tests (test_mpi_eigsh.c, test_mpi_eigsh_vjp.c): a COO
 * matrix handed in by every rank in turn (entries of rows owned elsewhere included), its serial
 * twin, and the comparison of distributed slots with serial ones. */
#ifndef SLA_TEST_EIGSH_COMMON_H
#define SLA_TEST_EIGSH_COMMON_H

#include <math.h>
#include <stdlib.h>

#include "mpitest.h"

typedef struct dist {
    sla_dist_pattern *P;
    double *lv;                 /* [B][nnz_local] */
    int64_t nnz;
} dist;

/* value of COO entry e in batch element b: A·(1 + b/4) */
static double value(const mt_coo *A, int64_t b, int64_t e) { return A->val[e] * (1 + 0.25 * b); }

/* this rank hands in every size-th entry (entries of rows owned elsewhere included) */
static void dist_make(dist *D, const mt_coo *A, sla_dist_layout *L, int64_t B)
{
    int64_t cap = A->nnz / mt_size + 1, n = 0;
    int64_t *row = malloc((size_t)cap * sizeof *row), *col = malloc((size_t)cap * sizeof *col);
    double *val = malloc((size_t)(cap * B) * sizeof *val);
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size) n++;
    for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++) {
        row[i] = A->row[e];
        col[i] = A->col[e];
        for (int64_t b = 0; b < B; b++) val[b * n + i] = value(A, b, e);
    }
    MT_OK(sla_dist_pattern_from_coo(L, L, n, row, col, &D->P));
    D->nnz = sla_dist_pattern_nnz(D->P);
    D->lv = malloc((size_t)(B * D->nnz + 1) * sizeof *D->lv);
    MT_OK(sla_dist_values_gather(D->P, SLA_FLOAT64, B, val, D->lv));
    free(row); free(col); free(val);
}

static void dist_free(dist *D)
{
    sla_dist_pattern_free(&D->P);
    free(D->lv);
}

typedef struct serial { sla_pattern *p; double *csr; int64_t nnz; } serial;

static void serial_make(serial *S, const mt_coo *A, int64_t B)
{
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, &S->p));
    S->nnz = sla_pattern_nnz(S->p);
    double *coo = malloc((size_t)(A->nnz * B + 1) * sizeof *coo);
    S->csr = malloc((size_t)(S->nnz * B + 1) * sizeof *S->csr);
    for (int64_t b = 0; b < B; b++)
        for (int64_t e = 0; e < A->nnz; e++) coo[b * A->nnz + e] = value(A, b, e);
    MT_OK(sla_values_gather(S->p, SLA_FLOAT64, B, coo, S->csr));
    free(coo);
}

static void serial_free(serial *S)
{
    sla_pattern_free(&S->p);
    free(S->csr);
}

/* the serial slot of (r, c), −1 if absent */
static int64_t slot_of(const sla_pattern *p, int64_t r, int64_t c)
{
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t q = rp[r]; q < rp[r + 1]; q++) if (ci[q] == c) return q;
    return -1;
}

/* max over the ranks of |dist slot − serial slot| / max|serial| */
static double slots_error(const dist *D, const serial *S, int64_t B, const double *dd,
                          const double *ds)
{
    int64_t *r = malloc((size_t)(D->nnz + 1) * sizeof *r), *c = malloc((size_t)(D->nnz + 1) * sizeof *c);
    MT_OK(sla_dist_pattern_global_coo(D->P, r, c));
    double scale = mt_amax(ds, B * S->nnz), e = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < D->nnz; s++) {
            int64_t q = slot_of(S->p, r[s], c[s]);
            double ref = q < 0 ? NAN : ds[b * S->nnz + q];
            double d = fabs(dd[b * D->nnz + s] - ref);
            if (!(d <= e)) e = d;
        }
    free(r); free(c);
    return mt_max(e) / (scale > 0 ? scale : 1);
}

/* a diagonal mass matrix 1 + (g mod 5)/4 */
static void diag_mass(int64_t N, mt_coo *M)
{
    M->m = M->n = M->nnz = N;
    M->row = malloc((size_t)N * sizeof *M->row);
    M->col = malloc((size_t)N * sizeof *M->col);
    M->val = malloc((size_t)N * sizeof *M->val);
    for (int64_t i = 0; i < N; i++) {
        M->row[i] = M->col[i] = i;
        M->val[i] = 1 + (double)(i % 5) / 4;
    }
}

/* a layout where rank 0 owns nothing (more than one rank) */
static sla_dist_layout *layout_empty0(int64_t N, uint64_t seed)
{
    int *part = malloc((size_t)N * sizeof *part);
    mt_random_part(N, mt_size > 1 ? mt_size - 1 : 1, seed, part);
    if (mt_size > 1) for (int64_t i = 0; i < N; i++) part[i] += 1;
    int64_t n;
    int64_t *own = mt_owned(part, N, mt_rank, &n);
    sla_dist_layout *L = NULL;
    MT_OK(sla_dist_layout_create_owned(MPI_COMM_WORLD, N, n, own, &L));
    free(own); free(part);
    return L;
}

#endif
