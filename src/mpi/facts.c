/* What method = auto measures on a distributed matrix: numerical symmetry and a positive
 * diagonal, the serial facts (src/solve/auto_facts.h) that decide between cg, minres and
 * gmres. Symmetry is the serial test, on every pair in every batch element,
 *     |a_ij − a_ji| ≤ rtol·max(|a_ij|, |a_ji|) + eps·max|a|,  rtol = 1000ε, eps = ε,
 * a missing entry being 0. A pair inside one rank's diagonal block is checked there; an entry
 * of the off-diagonal block (i, j) has its mirror in row j, owned by the owner of ghost column
 * j, so it is sent there (one sparse all-to-all of the off-diagonal entries) and checked
 * against the mirror, which is marked; an off-diagonal entry no one marked has no mirror. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/dsolver.h"

#define SYM_RTOL (1000 * DBL_EPSILON)

static double val(const sla_dist_matrix *A, int64_t b, int64_t s)
{
    int64_t i = b * sla_dist_pattern_nnz(A->pattern) + s;
    return A->dtype == SLA_FLOAT64 ? ((const double *)A->values)[i]
                                   : (double)((const float *)A->values)[i];
}

static int pair_ok(double x, double y, double floor_)
{
    double ax = fabs(x), ay = fabs(y);
    return fabs(x - y) <= SYM_RTOL * (ax > ay ? ax : ay) + floor_;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* the local facts: the diagonal, the diagonal block's pairs, amax */
static void local_facts(const sla_dist_matrix *A, int *sym, int *posdiag, double *amax)
{
    const sla_dist_pattern *P = A->pattern;
    const sla_pattern *D = P->diag;
    const int64_t *rp = sla_pattern_rowptr(D);
    const int32_t *ci = sla_pattern_colind(D);
    int64_t n = P->rows->n, nloc = sla_dist_pattern_nnz(P);
    *amax = 0;
    for (int64_t b = 0; b < A->batch; b++)
        for (int64_t s = 0; s < nloc; s++) *amax = fmax(*amax, fabs(val(A, b, s)));
    *posdiag = 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = sla_pattern_find(D, i, i);
        for (int64_t b = 0; b < A->batch; b++)
            if (s < 0 || !(val(A, b, s) > 0)) *posdiag = 0;
    }
    (void)rp;
    (void)ci;
    *sym = 1;                                  /* the floor needs the global amax: see below */
}

static int diag_block_symmetric(const sla_dist_matrix *A, double floor_)
{
    const sla_pattern *D = A->pattern->diag;
    const int64_t *rp = sla_pattern_rowptr(D);
    const int32_t *ci = sla_pattern_colind(D);
    int64_t n = A->pattern->rows->n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            int64_t j = ci[s];
            if (j <= i && sla_pattern_find(D, j, i) >= 0) continue;   /* pair seen from j < i */
            int64_t m = sla_pattern_find(D, j, i);
            for (int64_t b = 0; b < A->batch; b++)
                if (!pair_ok(val(A, b, s), m >= 0 ? val(A, b, m) : 0.0, floor_)) return 0;
        }
    return 1;
}

/* off-diagonal entries as records [row = ghost's global, col = row's global, values...] sent
 * to the ghost's owner; the receiver checks them against its mirrors */
static sla_status offd_symmetric(const sla_dist_matrix *A, const char *func, double floor_,
                                 int *sym)
{
    const sla_dist_pattern *P = A->pattern;
    const sla_pattern *O = P->offd;
    const int64_t *rp = sla_pattern_rowptr(O);
    const int32_t *ci = sla_pattern_colind(O);
    int64_t n = P->rows->n, B = A->batch, rec = 2 + B;
    int size = P->rows->size;
    const int64_t *gl = sla_dist_layout_global(P->rows);
    dist_xchg X;
    double *send = NULL, *recv = NULL;
    int64_t *ghost_sorted = NULL;
    unsigned char *marked = NULL;
    sla_status st = dist_xchg_init(&X, size, func);
    if (st == SLA_OK) {
        send = sla_malloc((size_t)(P->nnz_offd * rec + 1), sizeof *send, "symmetry records");
        ghost_sorted = sla_malloc((size_t)(2 * P->nghost + 1), sizeof *ghost_sorted, "ghosts");
        marked = sla_calloc((size_t)(P->nnz_offd + 1), 1, "mirror marks");
        if (!send || !ghost_sorted || !marked) st = sla_error_attribute(SLA_ENOMEM, func);
    }
    st = dist_agree(P->comm, func, st);
    if (st == SLA_OK) {
        /* ghost columns are ordered by owner, so records are too once packed by entry order
         * within each owner: count, then place */
        for (int64_t s = 0; s < P->nnz_offd; s++) X.scount[P->ghost_owner[ci[s]]]++;
        int64_t *pos = X.rdispl;               /* scratch until the counts are exchanged */
        pos[0] = 0;
        for (int r = 0; r < size; r++) pos[r + 1] = pos[r] + X.scount[r];
        for (int64_t i = 0; i < n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                double *q = send + pos[P->ghost_owner[ci[s]]]++ * rec;
                int64_t row = P->ghost_global[ci[s]], col = gl[i];
                memcpy(&q[0], &row, sizeof row);
                memcpy(&q[1], &col, sizeof col);
                for (int64_t b = 0; b < B; b++) q[2 + b] = val(A, b, P->nnz_diag + s);
            }
        st = dist_xchg_counts(&X, P->comm, func);
    }
    int64_t nr = st == SLA_OK ? X.rdispl[size] : 0;
    if (st == SLA_OK) {
        recv = sla_malloc((size_t)(nr * rec + 1), sizeof *recv, "symmetry records");
        st = dist_agree(P->comm, func, recv ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(&X, P->comm, func, (size_t)rec * sizeof(double), send, recv, 0);
    if (st == SLA_OK) {
        for (int64_t g = 0; g < P->nghost; g++) {
            ghost_sorted[2 * g] = P->ghost_global[g];
            ghost_sorted[2 * g + 1] = g;
        }
        qsort(ghost_sorted, (size_t)P->nghost, 2 * sizeof *ghost_sorted, cmp_i64);
        for (int64_t e = 0; e < nr && *sym; e++) {
            const double *q = recv + e * rec;
            int64_t row, col;
            memcpy(&row, &q[0], sizeof row);
            memcpy(&col, &q[1], sizeof col);
            int64_t il = sla_dist_layout_local_index(P->rows, row), m = -1;
            int64_t key[2] = {col, 0};
            const int64_t *hit = bsearch(key, ghost_sorted, (size_t)P->nghost,
                                         2 * sizeof *ghost_sorted, cmp_i64);
            if (il >= 0 && hit) m = sla_pattern_find(O, il, hit[1]);
            if (m >= 0) marked[m] = 1;
            for (int64_t b = 0; b < B; b++)
                if (!pair_ok(q[2 + b], m >= 0 ? val(A, b, P->nnz_diag + m) : 0.0, floor_)) *sym = 0;
        }
        for (int64_t s = 0; s < P->nnz_offd && *sym; s++)
            for (int64_t b = 0; b < B && !marked[s]; b++)
                if (!pair_ok(val(A, b, P->nnz_diag + s), 0.0, floor_)) *sym = 0;
    }
    dist_xchg_free(&X);
    sla_free(send);
    sla_free(recv);
    sla_free(ghost_sorted);
    sla_free(marked);
    return st;
}

sla_status dist_facts_measure(const sla_dist_matrix *A, const char *func, dist_facts *f)
{
    const sla_dist_pattern *P = A->pattern;
    int sym, posdiag;
    double amax;
    local_facts(A, &sym, &posdiag, &amax);
    int rc = MPI_Allreduce(MPI_IN_PLACE, &amax, 1, MPI_DOUBLE, MPI_MAX, P->comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Allreduce", rc);
    double floor_ = DBL_EPSILON * amax;
    sym = diag_block_symmetric(A, floor_);
    SLA_TRY(offd_symmetric(A, func, floor_, &sym));
    int both[2] = {sym, posdiag};
    rc = MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_INT, MPI_MIN, P->comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Allreduce", rc);
    f->symmetric = both[0];
    f->posdiag = both[1];
    return SLA_OK;
}
