/* Collective errors: bad input on one rank, each rank in turn — a NaN in its values, an index
 * out of range, arguments that differ between ranks, a NULL array, every allocation failing in
 * turn in every collective function — gives every rank the same status and the same message,
 * naming the rank and the entry; outputs stay untouched; nothing hangs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

int64_t sla_test_fail_alloc_after(int64_t n);   /* libsla's test hook */

/* The same status and message on every rank, the message naming rank `bad` (≥ 0) and
 * containing `needle` (rank bad's version of it). */
static void expect(const char *what, sla_status st, sla_status want, int bad, const char *needle)
{
    int lo, hi;
    MPI_Allreduce(&st, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&st, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MT_CHECK(lo == hi && st == want, "%s: status %d here (%d..%d over the ranks), want %d: %s",
             what, (int)st, lo, hi, (int)want, sla_last_error());
    char msg0[1024], need[512];
    snprintf(msg0, sizeof msg0, "%s", sla_last_error());
    MPI_Bcast(msg0, sizeof msg0, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(need, sizeof need, "%s", needle ? needle : "");
    if (bad >= 0) MPI_Bcast(need, sizeof need, MPI_CHAR, bad, MPI_COMM_WORLD);
    MT_CHECK(strcmp(msg0, sla_last_error()) == 0, "%s: message differs from rank 0's:\n  here:   %s\n"
             "  rank 0: %s", what, sla_last_error(), msg0);
    if (getenv("MT_VERBOSE") && mt_rank == 0) printf("%s: %s\n", what, msg0);
    char rank[32];
    snprintf(rank, sizeof rank, "rank %d: ", bad);
    MT_CHECK((bad < 0 || strstr(msg0, rank)) && strstr(msg0, need), "%s: message '%s' does not "
             "name %s'%s'", what, msg0, bad >= 0 ? rank : "", need);
}

typedef struct fixture {
    mt_coo A;
    sla_dist_layout *L;          /* random ownership */
    int64_t n, *row, *col;
    double *val;
    sla_dist_pattern *P;
    double *lv;
    sla_pattern *sp;             /* the serial matrix, for the scatter from rank 0 */
    double *scsr;
    /* this rank's rows as CSR: in local order with ascending columns (rp, ci), and the row
     * list reversed with each row's columns reversed (grev, rprev, cirev) */
    int64_t *rp, *ci, *grev, *rprev, *cirev;
} fixture;

/* The owned rows of the serial pattern as CSR, in order or reversed (rows and columns). */
static void fixture_csr(fixture *F, int rev, int64_t **rp, int64_t **ci)
{
    int64_t n = sla_dist_layout_local_size(F->L), k = 0;
    const int64_t *own = sla_dist_layout_global(F->L), *srp = sla_pattern_rowptr(F->sp);
    const int32_t *sci = sla_pattern_colind(F->sp);
    *rp = malloc((size_t)(n + 1) * sizeof **rp);
    *ci = malloc((size_t)(sla_pattern_nnz(F->sp) + 1) * sizeof **ci);
    (*rp)[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = own[rev ? n - 1 - i : i];
        for (int64_t t = 0, len = srp[g + 1] - srp[g]; t < len; t++)
            (*ci)[k++] = sci[rev ? srp[g + 1] - 1 - t : srp[g] + t];
        (*rp)[i + 1] = k;
    }
    if (rev) {
        F->grev = malloc((size_t)(n + 1) * sizeof *F->grev);
        for (int64_t i = 0; i < n; i++) F->grev[i] = own[n - 1 - i];
    }
}

static void fixture_make(fixture *F)
{
    mt_poisson2d(6, 5, &F->A);
    int *part = malloc((size_t)F->A.m * sizeof *part);
    for (int64_t g = 0; g < F->A.m; g++) part[g] = (int)((g * 7) % mt_size);  /* every rank owns rows */
    int64_t no, *own = mt_owned(part, F->A.m, mt_rank, &no);
    MT_OK(sla_dist_layout_create_owned(MPI_COMM_WORLD, F->A.m, no, own, &F->L));
    free(part);
    free(own);
    F->n = 0;
    F->row = malloc((size_t)F->A.nnz * sizeof *F->row);
    F->col = malloc((size_t)F->A.nnz * sizeof *F->col);
    F->val = malloc((size_t)F->A.nnz * sizeof *F->val);
    for (int64_t e = mt_rank; e < F->A.nnz; e += mt_size, F->n++) {
        F->row[F->n] = F->A.row[e];
        F->col[F->n] = F->A.col[e];
        F->val[F->n] = F->A.val[e];
    }
    MT_OK(sla_dist_pattern_from_coo(F->L, F->L, F->n, F->row, F->col, &F->P));
    F->lv = malloc((size_t)(2 * sla_dist_pattern_nnz(F->P) + 1) * sizeof *F->lv);
    MT_OK(sla_dist_values_gather(F->P, SLA_FLOAT64, 1, F->val, F->lv));
    memcpy(F->lv + sla_dist_pattern_nnz(F->P), F->lv, (size_t)sla_dist_pattern_nnz(F->P) * sizeof *F->lv);
    mt_serial(&F->A, &F->sp, &F->scsr);
    fixture_csr(F, 0, &F->rp, &F->ci);
    fixture_csr(F, 1, &F->rprev, &F->cirev);
}

static void fixture_free(fixture *F)
{
    sla_dist_pattern_free(&F->P);
    sla_dist_layout_free(&F->L);
    mt_coo_free(&F->A);
    sla_pattern_free(&F->sp);
    free(F->row); free(F->col); free(F->val); free(F->lv); free(F->scsr);
    free(F->rp); free(F->ci); free(F->grev); free(F->rprev); free(F->cirev);
}

static void nan_values(const fixture *F, int bad)
{
    int64_t nl = sla_dist_pattern_nnz(F->P), s = nl / 2;
    double *v = malloc((size_t)(nl + 1) * sizeof *v);
    memcpy(v, F->lv, (size_t)nl * sizeof *v);
    char need[256] = "";
    if (mt_rank == bad) {
        int64_t *r = malloc((size_t)nl * sizeof *r), *c = malloc((size_t)nl * sizeof *c);
        sla_dist_pattern_global_coo(F->P, r, c);
        v[s] = NAN;
        snprintf(need, sizeof need, "A->values[0][%lld] (row %lld, col %lld) is not finite",
                 (long long)s, (long long)r[s], (long long)c[s]);
        free(r);
        free(c);
    }
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, 1, v);
    expect("NaN in values", sla_dist_matrix_check(&D, 1), SLA_ENONFINITE, bad, need);
    free(v);
}

static void index_out_of_range(const fixture *F, int bad)
{
    int64_t *row = malloc((size_t)(F->n + 1) * sizeof *row), *col = malloc((size_t)(F->n + 1) * sizeof *col);
    memcpy(row, F->row, (size_t)F->n * sizeof *row);
    memcpy(col, F->col, (size_t)F->n * sizeof *col);
    char need[256] = "";
    if (mt_rank == bad) {
        col[F->n - 1] = -1;
        snprintf(need, sizeof need, "col[%lld] = -1 is out of range [0, 30)", (long long)(F->n - 1));
    }
    sla_dist_pattern *P = (sla_dist_pattern *)1;
    expect("column out of range", sla_dist_pattern_from_coo(F->L, F->L, F->n, row, col, &P),
           SLA_EINDEX, bad, need);
    MT_CHECK(P == NULL, "out of range: *out not NULL");
    /* a layout whose owned lists overlap: rank bad also claims index 0 */
    int64_t n = sla_dist_layout_local_size(F->L);
    int64_t *own = malloc((size_t)(n + 1) * sizeof *own);
    memcpy(own, sla_dist_layout_global(F->L), (size_t)n * sizeof *own);
    int owner0 = (int)((0 * 7) % mt_size);
    if (mt_rank == bad && bad != owner0) own[n++] = 0;
    if (mt_rank == bad && bad == owner0) own[n - 1] = own[0];   /* owned twice here */
    sla_dist_layout *L = (sla_dist_layout *)1;
    sla_status st = sla_dist_layout_create_owned(MPI_COMM_WORLD, F->A.m, n, own, &L);
    int lo;
    MPI_Allreduce(&st, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MT_CHECK(st == SLA_EINDEX && lo == st && L == NULL && strstr(sla_last_error(), "own"),
             "overlapping owned lists: %d %s", (int)st, sla_last_error());
    free(own);
    free(row);
    free(col);
}

static void inconsistent(const fixture *F, int bad)
{
    if (mt_size == 1) return;
    int64_t nr = sla_dist_layout_local_size(F->L);
    double *x = calloc((size_t)(2 * nr + 1), sizeof *x), *y = malloc((size_t)(2 * nr + 1) * sizeof *y);
    for (int64_t i = 0; i < 2 * nr; i++) y[i] = 7.0;
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, 1, F->lv);
    int64_t k = mt_rank == bad ? 2 : 1;
    expect("k differs", sla_dist_spmv(SLA_OP_N, 1.0, &D, x, 0, k, 0.0, y), SLA_ESHAPE, -1,
           bad == 0 ? "k = 1 on rank 1 but 2 on rank 0" : "k = 2 on rank");
    int untouched = 1;
    for (int64_t i = 0; i < 2 * nr; i++) untouched &= y[i] == 7.0;
    MT_CHECK(untouched, "k differs: y was written");
    double *lv2 = malloc((size_t)(2 * sla_dist_pattern_nnz(F->P) + 1) * sizeof *lv2);
    expect("batch differs", sla_dist_values_gather(F->P, SLA_FLOAT64, mt_rank == bad ? 2 : 1,
                                                   F->val, lv2), SLA_ESHAPE, -1, "batch = ");
    sla_dist_layout *L = NULL;
    expect("N differs", sla_dist_layout_create(MPI_COMM_WORLD, mt_rank == bad ? 31 : 30, -1, &L),
           SLA_ESHAPE, -1, "N = ");
    double s[40] = {0};
    expect("m differs", sla_dist_allsum(MPI_COMM_WORLD, mt_rank == bad ? 40 : 3, s, s), SLA_EINVAL,
           -1, "differs between ranks");
    free(x);
    free(y);
    free(lv2);
}

static void null_array(const fixture *F, int bad)
{
    int64_t nr = sla_dist_layout_local_size(F->L);
    double *x = calloc((size_t)(nr + 1), sizeof *x), *y = malloc((size_t)(nr + 1) * sizeof *y);
    for (int64_t i = 0; i < nr; i++) y[i] = 7.0;
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, 1, F->lv);
    expect("NULL x", sla_dist_spmv(SLA_OP_T, 1.0, &D, mt_rank == bad ? NULL : x, 0, 1, 0.0, y),
           SLA_EINVAL, bad, "x is NULL");
    int untouched = 1;
    for (int64_t i = 0; i < nr; i++) untouched &= y[i] == 7.0;
    MT_CHECK(untouched, "NULL x: y was written");
    double d = 5;
    expect("NULL y in a dot", sla_dist_vec_dot(sla_dist_layout_comm(F->L), SLA_FLOAT64, nr, x,
                                               mt_rank == bad ? NULL : x, &d), SLA_EINVAL, bad,
           "y is NULL");
    MT_CHECK(d == 5, "NULL y: the dot was written");
    free(x);
    free(y);
}

/* ---- every allocation failing in turn on rank bad ---- */

typedef sla_status (*op_fn)(const fixture *F, void **out);

static sla_status op_layout(const fixture *F, void **out)
{
    return sla_dist_layout_create_owned(MPI_COMM_WORLD, F->A.m, sla_dist_layout_local_size(F->L),
                                        sla_dist_layout_global(F->L), (sla_dist_layout **)out);
}
static sla_status op_pattern(const fixture *F, void **out)
{
    return sla_dist_pattern_from_coo(F->L, F->L, F->n, F->row, F->col, (sla_dist_pattern **)out);
}
/* CSR rows in order (no entry map kept) and reversed (sorted by the library, map kept) */
static sla_status op_csr(const fixture *F, void **out)
{
    return sla_dist_pattern_from_csr(F->L, F->L, sla_dist_layout_local_size(F->L), NULL, F->rp,
                                     F->ci, NULL, (sla_dist_pattern **)out);
}
static sla_status op_csr_rev(const fixture *F, void **out)
{
    return sla_dist_pattern_from_csr(F->L, F->L, sla_dist_layout_local_size(F->L), F->grev,
                                     F->rprev, F->cirev, NULL, (sla_dist_pattern **)out);
}
static sla_status op_gather(const fixture *F, void **out)
{
    (void)out;
    double *v = malloc((size_t)(2 * sla_dist_pattern_nnz(F->P) + 1) * sizeof *v);
    sla_status st = sla_dist_values_gather(F->P, SLA_FLOAT64, 1, F->val, v);
    free(v);
    return st;
}
static sla_status spmv(const fixture *F, sla_op op, int vjp)
{
    int64_t nr = sla_dist_layout_local_size(F->L);
    double *x = calloc((size_t)(4 * nr + 1), sizeof *x), *y = calloc((size_t)(4 * nr + 1), sizeof *y);
    double *dv = malloc((size_t)(2 * sla_dist_pattern_nnz(F->P) + 1) * sizeof *dv);
    sla_dist_matrix D = sla_dist_matrix_view(F->P, SLA_FLOAT64, 2, F->lv);
    sla_status st = vjp ? sla_dist_spmv_vjp(op, 1.0, &D, x, 0, 2, y, x + 2 * nr, dv)
                        : sla_dist_spmv(op, 1.0, &D, x, 1, 2, 0.0, y);
    free(x);
    free(y);
    free(dv);
    return st;
}
static sla_status op_spmv_n(const fixture *F, void **out) { (void)out; return spmv(F, SLA_OP_N, 0); }
static sla_status op_spmv_t(const fixture *F, void **out) { (void)out; return spmv(F, SLA_OP_T, 0); }
static sla_status op_vjp_n(const fixture *F, void **out) { (void)out; return spmv(F, SLA_OP_N, 1); }
static sla_status op_vjp_t(const fixture *F, void **out) { (void)out; return spmv(F, SLA_OP_T, 1); }
static sla_status op_vec(const fixture *F, void **out)
{
    (void)out;
    double g[60] = {0}, l[60];
    sla_status st = sla_dist_vec_scatter(F->L, SLA_FLOAT64, 2, 1, 0, g, l);
    return st < 0 ? st : sla_dist_vec_gather(F->L, SLA_FLOAT64, 2, 1, 0, l, g);
}
static sla_status partition(const fixture *F, sla_dist_partitioner m, void **out)
{
    int64_t n = sla_dist_layout_local_size(F->L);
    double *xy = malloc((size_t)(2 * n + 1) * sizeof *xy);
    for (int64_t i = 0; i < n; i++) {
        xy[2 * i] = (double)(sla_dist_layout_global(F->L)[i] % 6);
        xy[2 * i + 1] = (double)(sla_dist_layout_global(F->L)[i] / 6);
    }
    sla_dist_partition_info info;
    sla_status st = sla_dist_partition(F->P, m, 2, xy, (sla_dist_layout **)out, &info);
    free(xy);
    return st;
}
static sla_status op_contig(const fixture *F, void **out) { return partition(F, SLA_DIST_PART_CONTIGUOUS, out); }
static sla_status op_metis(const fixture *F, void **out) { return partition(F, SLA_DIST_PART_METIS, out); }
static sla_status op_scotch(const fixture *F, void **out) { return partition(F, SLA_DIST_PART_PTSCOTCH, out); }
static sla_status op_rcb(const fixture *F, void **out) { return partition(F, SLA_DIST_PART_RCB, out); }
static sla_status op_hilbert(const fixture *F, void **out) { return partition(F, SLA_DIST_PART_HILBERT, out); }
static sla_status op_scatter(const fixture *F, void **out)
{
    sla_matrix S = sla_matrix_view(F->sp, SLA_FLOAT64, 1, F->scsr);
    void *v = NULL;
    sla_status st = sla_dist_matrix_scatter(F->L, F->L, 0, mt_rank == 0 ? &S : NULL,
                                            (sla_dist_pattern **)out, &v, NULL, NULL);
    MT_CHECK(st == SLA_OK || v == NULL, "matrix_scatter failed but returned values");
    free(v);
    return st;
}

/* Every allocation in turn when the last rank fails, every 5th (offset by the rank) for the
 * others, to keep the test fast at 4 ranks on 2 cores. */
static void alloc_failures(const fixture *F, int bad, const char *name, op_fn op, int kind)
{
    char what[128];
    int n = bad == mt_size - 1 ? 0 : bad, stride = bad == mt_size - 1 ? 1 : 5;
    for (; n < 2000; n += stride) {
        void *out = NULL;
        sla_test_fail_alloc_after(mt_rank == bad ? n : -1);
        sla_status st = op(F, &out);
        sla_test_fail_alloc_after(-1);
        int lo, hi;
        MPI_Allreduce(&st, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&st, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (lo == SLA_OK && hi == SLA_OK) {
            if (kind == 1) sla_dist_layout_free((sla_dist_layout **)&out);
            if (kind == 2) sla_dist_pattern_free((sla_dist_pattern **)&out);
            break;
        }
        snprintf(what, sizeof what, "%s, allocation %d failing on rank %d", name, n, bad);
        expect(what, st, SLA_ENOMEM, bad, "cannot allocate");
        MT_CHECK(out == NULL, "%s: *out set", what);
    }
    if (mt_rank == 0 && bad == mt_size - 1)
        printf("%-28s %4d allocations on the failing rank, each failure agreed\n", name, n);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    fixture F;
    fixture_make(&F);
    const char *only = getenv("MT_ONLY");
    static const struct { const char *name; op_fn op; int kind; } ops[] = {
        {"sla_dist_layout_create_owned", op_layout, 1}, {"sla_dist_pattern_from_coo", op_pattern, 2},
        {"sla_dist_values_gather", op_gather, 0}, {"sla_dist_spmv N", op_spmv_n, 0},
        {"sla_dist_spmv T", op_spmv_t, 0}, {"sla_dist_spmv_vjp N", op_vjp_n, 0},
        {"sla_dist_spmv_vjp T", op_vjp_t, 0}, {"sla_dist_vec_scatter/gather", op_vec, 0},
        {"partition contiguous", op_contig, 1}, {"partition metis", op_metis, 1},
        {"partition ptscotch", op_scotch, 1}, {"partition rcb", op_rcb, 1},
        {"partition hilbert", op_hilbert, 1}, {"sla_dist_matrix_scatter", op_scatter, 2},
        {"sla_dist_pattern_from_csr", op_csr, 2}, {"from_csr, rows reversed", op_csr_rev, 2}};
    for (int bad = 0; bad < mt_size; bad++) {
        nan_values(&F, bad);
        index_out_of_range(&F, bad);
        inconsistent(&F, bad);
        null_array(&F, bad);
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
            if (!only || strstr(ops[o].name, only))     /* MT_ONLY=name: one function only */
                alloc_failures(&F, bad, ops[o].name, ops[o].op, ops[o].kind);
    }
    fixture_free(&F);
    return mt_finish("test_mpi_errors");
}
