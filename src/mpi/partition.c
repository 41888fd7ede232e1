/* Partitioning: the graph of A + Aᵀ as a distributed pattern, the dispatch to the methods
 * (partition_*.c), and the figures of a distribution (edge cut, halo, balance) computed from
 * the partition vector before anything is moved. */
#include <stdlib.h>
#include <string.h>

#include "mpi/partition.h"

const char *sla_dist_partitioner_name(sla_dist_partitioner method)
{
    switch (method) {
    case SLA_DIST_PART_CONTIGUOUS: return "contiguous";
    case SLA_DIST_PART_METIS: return "metis";
    case SLA_DIST_PART_PTSCOTCH: return "ptscotch";
    case SLA_DIST_PART_RCB: return "rcb";
    case SLA_DIST_PART_HILBERT: return "hilbert";
    }
    return "invalid";
}

void dist_graph_free(dist_graph *g)
{
    sla_dist_pattern_free(&g->G);
    sla_free(g->w);
    g->w = NULL;
}

/* Square, with rows and columns distributed alike (agreed). */
static sla_status check_square(const sla_dist_pattern *A, const char *func)
{
    int same = 0;
    SLA_TRY(dist_layouts_same(A->rows, A->cols, func, &same));
    if (!same)
        return sla_error_set(SLA_ESHAPE, func, "partitioning needs a square matrix whose rows "
                             "and columns are distributed alike (%lld x %lld%s)",
                             (long long)A->rows->N, (long long)A->cols->N,
                             A->rows->N == A->cols->N ? ", distributed differently" : "");
    return SLA_OK;
}

sla_status dist_graph_build(const sla_dist_pattern *A, const char *func, dist_graph *g)
{
    memset(g, 0, sizeof *g);
    g->A = A;
    g->n = A->rows->n;
    int64_t nloc = sla_dist_pattern_nnz(A), m = 0;
    int64_t *row = sla_malloc((size_t)nloc, sizeof *row, "graph rows");
    int64_t *col = sla_malloc((size_t)nloc, sizeof *col, "graph columns");
    int64_t *er = sla_malloc((size_t)nloc * 2, sizeof *er, "graph edges");
    int64_t *ec = sla_malloc((size_t)nloc * 2, sizeof *ec, "graph edges");
    g->w = sla_malloc((size_t)g->n, sizeof *g->w, "vertex weights");
    sla_status st = row && col && er && ec && g->w ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(A->comm, func, st);
    if (st == SLA_OK) {
        sla_dist_pattern_global_coo(A, row, col);
        for (int64_t s = 0; s < nloc; s++)
            if (row[s] != col[s]) {          /* both directions: the graph of A + Aᵀ */
                er[m] = row[s]; ec[m++] = col[s];
                er[m] = col[s]; ec[m++] = row[s];
            }
        const int64_t *rd = sla_pattern_rowptr(A->diag), *ro = sla_pattern_rowptr(A->offd);
        for (int64_t i = 0; i < g->n; i++) g->w[i] = rd[i + 1] - rd[i] + ro[i + 1] - ro[i] + 1;
        st = sla_dist_pattern_from_coo(A->rows, A->rows, m, er, ec, &g->G);
    }
    sla_free(row);
    sla_free(col);
    sla_free(er);
    sla_free(ec);
    if (st < 0) dist_graph_free(g);
    return st;
}

sla_status dist_ghost_ints(const sla_dist_pattern *P, const char *func, const int *owned,
                           int *ghost)
{
    dist_halo_buf B;
    sla_status st = dist_agree(P->comm, func, dist_halo_buf_init(&B, P, sizeof(int), 1, 1, func));
    if (st < 0) {
        dist_halo_buf_free(&B);                 /* allocated here if another rank failed */
        return st;
    }
    st = dist_halo_start(P, &B, owned, ghost);
    sla_status sf = dist_halo_finish(P, &B, ghost);
    dist_halo_buf_free(&B);
    return st < 0 ? st : sf;
}

static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The entries (i, j) of A with part(j) ≠ part(i): counted per destination part(i) into
 * X->scount (send NULL), or written as pairs (global j, part(j)) at pos[part(i)]++. */
static void cut_entries(const dist_graph *g, const int *part, const int *gpart, dist_xchg *X,
                        int64_t *pos, int64_t *send)
{
    const sla_dist_pattern *A = g->A;
    for (int blk = 0; blk < 2; blk++) {
        const sla_pattern *p = blk ? A->offd : A->diag;
        const int64_t *rp = sla_pattern_rowptr(p);
        const int32_t *ci = sla_pattern_colind(p);
        for (int64_t i = 0; i < g->n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
                int pj = blk ? gpart[ci[s]] : part[ci[s]];
                if (pj == part[i]) continue;
                if (!send) {
                    X->scount[part[i]]++;
                    continue;
                }
                int64_t at = pos[part[i]]++;
                send[2 * at] = dist_pattern_global_col(A, blk, ci[s]);
                send[2 * at + 1] = pj;
            }
    }
}

/* Distinct ghosts (first members) of nr sorted pairs, and distinct parts among them. */
static void count_distinct(int64_t *pairs, int64_t nr, int64_t *halo, int64_t *neigh)
{
    int64_t h = 0, prev = -1;
    for (int64_t e = 0; e < nr; e++)
        if (e == 0 || pairs[2 * e] != prev) {
            prev = pairs[2 * e];
            pairs[2 * h] = pairs[2 * e + 1];        /* its owner, then a dummy */
            pairs[2 * h + 1] = 0;
            h++;
        }
    qsort(pairs, (size_t)h, 2 * sizeof *pairs, cmp_pair);
    *halo = h;
    *neigh = 0;
    for (int64_t e = 0; e < h; e++) *neigh += e == 0 || pairs[2 * e] != pairs[2 * e - 2];
}

/* Per part: ghost columns and receive neighbours of A redistributed by part. Every entry (i, j)
 * of A with part(j) ≠ part(i) makes j a ghost of part(i), received from part(j): the pairs
 * (j, part(j)) go to rank part(i), which counts the distinct ones. */
static sla_status halo_counts(const dist_graph *g, const char *func, const int *part,
                              const int *gpart, int64_t *halo, int64_t *neigh)
{
    const sla_dist_pattern *A = g->A;
    int size = A->rows->size;
    dist_xchg X;
    int64_t *send = NULL, *recv = NULL, cnt = 0;
    sla_status st = dist_xchg_init(&X, size, func);
    if (st == SLA_OK) {
        cut_entries(g, part, gpart, &X, NULL, NULL);
        for (int r = 0; r < size; r++) cnt += X.scount[r];
        if (!(send = sla_malloc((size_t)cnt * 2, sizeof *send, "halo pairs")))
            st = sla_error_attribute(SLA_ENOMEM, func);
    }
    st = dist_agree(A->comm, func, st);
    if (st == SLA_OK) {
        int64_t *pos = X.rdispl;               /* scratch until the counts are exchanged */
        pos[0] = 0;
        for (int r = 0; r < size; r++) pos[r + 1] = pos[r] + X.scount[r];
        cut_entries(g, part, gpart, &X, pos, send);
        st = dist_xchg_counts(&X, A->comm, func);
    }
    if (st == SLA_OK) {
        recv = sla_malloc((size_t)X.rdispl[size] * 2, sizeof *recv, "halo pairs");
        st = dist_agree(A->comm, func, recv ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(&X, A->comm, func, 2 * sizeof(int64_t), send, recv, 0);
    if (st == SLA_OK) {
        qsort(recv, (size_t)X.rdispl[size], 2 * sizeof *recv, cmp_pair);
        count_distinct(recv, X.rdispl[size], halo, neigh);
    }
    dist_xchg_free(&X);
    sla_free(send);
    sla_free(recv);
    return st;
}

/* Undirected edges of the graph between parts: each is seen from both ends, so halve. */
static int64_t cut_edges(const dist_graph *g, const int *part, const int *gpart)
{
    const sla_dist_pattern *G = g->G;
    int64_t c = 0;
    for (int blk = 0; blk < 2; blk++) {
        const sla_pattern *p = blk ? G->offd : G->diag;
        const int64_t *rp = sla_pattern_rowptr(p);
        const int32_t *ci = sla_pattern_colind(p);
        for (int64_t i = 0; i < g->n; i++)
            for (int64_t s = rp[i]; s < rp[i + 1]; s++)
                c += (blk ? gpart[ci[s]] : part[ci[s]]) != part[i];
    }
    return c;
}

sla_status dist_part_info(const dist_graph *g, const char *func, const int *part,
                          sla_dist_partition_info *info)
{
    const sla_dist_pattern *A = g->A;
    int size = A->rows->size;
    int *ga = sla_malloc((size_t)A->nghost, sizeof *ga, "ghost parts");
    int *gg = sla_malloc((size_t)g->G->nghost, sizeof *gg, "ghost parts");
    int64_t *per = sla_calloc((size_t)size * 2, sizeof *per, "part sizes"), mine[2];
    sla_status st = ga && gg && per ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(A->comm, func, st);
    if (st == SLA_OK) st = dist_ghost_ints(A, func, part, ga);
    if (st == SLA_OK) st = dist_ghost_ints(g->G, func, part, gg);
    int64_t halo = 0, neigh = 0;
    if (st == SLA_OK) st = halo_counts(g, func, part, ga, &halo, &neigh);
    if (st == SLA_OK) {
        /* rows and nonzeros of every part, reduced onto the part's rank */
        for (int64_t i = 0; i < g->n; i++) {
            per[2 * part[i]]++;
            per[2 * part[i] + 1] += g->w[i] - 1;
        }
        int rc = MPI_Reduce_scatter_block(per, mine, 2, MPI_INT64_T, MPI_SUM, A->comm);
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Reduce_scatter_block", rc);
    }
    if (st == SLA_OK) {
        /* minima of (rows, nnz, −rows, −nnz, −halo, −neighbours); sums of (cut edge ends,
         * halo, neighbours, nnz) */
        int64_t mn[6] = {mine[0], mine[1], -mine[0], -mine[1], -halo, -neigh};
        int64_t sm[4] = {cut_edges(g, part, gg), halo, neigh, mine[1]};
        int rc = MPI_Allreduce(MPI_IN_PLACE, mn, 6, MPI_INT64_T, MPI_MIN, A->comm);
        if (rc == MPI_SUCCESS) rc = MPI_Allreduce(MPI_IN_PLACE, sm, 4, MPI_INT64_T, MPI_SUM, A->comm);
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Allreduce", rc);
        double mean_rows = (double)A->rows->N / size, mean_nnz = (double)sm[3] / size;
        if (st == SLA_OK)
            *info = (sla_dist_partition_info){.nparts = size, .edge_cut = sm[0] / 2,
                .halo_total = sm[1], .halo_max = -mn[4], .neighbours_max = -mn[5],
                .neighbours_total = sm[2], .rows_min = mn[0], .rows_max = -mn[2],
                .rows_imbalance = mean_rows > 0 ? -mn[2] / mean_rows : 0,
                .nnz_min = mn[1], .nnz_max = -mn[3],
                .nnz_imbalance = mean_nnz > 0 ? -mn[3] / mean_nnz : 0};
    }
    sla_free(ga);
    sla_free(gg);
    sla_free(per);
    return st;
}

/* The partition vector of a method into nparts parts. */
static sla_status run_method(const dist_graph *g, const char *func, sla_dist_partitioner method,
                             int nparts, int dim, const double *coords, int *part)
{
    switch (method) {
    case SLA_DIST_PART_CONTIGUOUS: return dist_part_contiguous(g, func, nparts, part);
    case SLA_DIST_PART_METIS: return dist_part_metis(g, func, nparts, part);
    case SLA_DIST_PART_PTSCOTCH: return dist_part_scotch(g, func, nparts, part);
    case SLA_DIST_PART_RCB: return dist_part_rcb(g, func, nparts, dim, coords, part);
    case SLA_DIST_PART_HILBERT: return dist_part_hilbert(g, func, nparts, dim, coords, part);
    }
    return SLA_EINTERNAL;
}

/* the checks of both entry points (local; the caller agrees) */
static sla_status check_args(const sla_dist_pattern *P, sla_dist_partitioner method, int dim,
                             const double *coords, const void *out, const char *out_name)
{
    int coord = method == SLA_DIST_PART_RCB || method == SLA_DIST_PART_HILBERT;
    if (!out) return SLA_FAIL(SLA_EINVAL, "%s is NULL", out_name);
    if (method < SLA_DIST_PART_CONTIGUOUS || method > SLA_DIST_PART_HILBERT)
        return SLA_FAIL(SLA_EINVAL, "method = %d is not an sla_dist_partitioner", (int)method);
    if (coord && (dim < 1 || dim > 3)) return SLA_FAIL(SLA_EINVAL, "dim = %d is not 1, 2 or 3", dim);
    if (coord && P->rows->n > 0 && !coords) return SLA_FAIL(SLA_EINVAL, "coords is NULL");
    return SLA_OK;
}

sla_status sla_dist_partition(const sla_dist_pattern *P, sla_dist_partitioner method, int dim,
                              const double *coords, sla_dist_layout **out,
                              sla_dist_partition_info *info)
{
    if (out) *out = NULL;
    SLA_CHECK_ARG(P, "P is NULL");
    sla_status st = check_args(P, method, dim, coords, out, "out");
    int coord = method == SLA_DIST_PART_RCB || method == SLA_DIST_PART_HILBERT;
    int64_t same[2] = {method, coord ? dim : 0};
    static const char *const names[2] = {"method", "dim"};
    SLA_TRY(dist_agree_same(P->comm, __func__, st, 2, same, names));
    SLA_TRY(check_square(P, __func__));             /* the same verdict on every rank */
    dist_graph g;
    SLA_TRY(dist_graph_build(P, __func__, &g));
    int *part = sla_malloc((size_t)g.n, sizeof *part, "partition");
    st = dist_agree(P->comm, __func__, part ? SLA_OK : sla_error_attribute(SLA_ENOMEM, __func__));
    if (st == SLA_OK) st = run_method(&g, __func__, method, P->rows->size, dim, coords, part);
    if (st == SLA_OK && info) st = dist_part_info(&g, __func__, part, info);
    if (st == SLA_OK)
        st = sla_dist_layout_create_assigned(P->comm, P->rows->N, g.n, P->rows->global, part, out);
    sla_free(part);
    dist_graph_free(&g);
    return sla_error_attribute(st, __func__);
}

sla_status sla_dist_pattern_info(const sla_dist_pattern *P, sla_dist_partition_info *info)
{
    SLA_CHECK_ARG(P, "P is NULL");
    SLA_TRY(dist_agree(P->comm, __func__, info ? SLA_OK : SLA_FAIL(SLA_EINVAL, "info is NULL")));
    SLA_TRY(check_square(P, __func__));             /* the same verdict on every rank */
    dist_graph g;
    SLA_TRY(dist_graph_build(P, __func__, &g));
    int *part = sla_malloc((size_t)g.n, sizeof *part, "partition");
    sla_status st = dist_agree(P->comm, __func__, part ? SLA_OK
                                                       : sla_error_attribute(SLA_ENOMEM, __func__));
    for (int64_t i = 0; st == SLA_OK && i < g.n; i++) part[i] = P->rows->rank;
    if (st == SLA_OK) st = dist_part_info(&g, __func__, part, info);
    sla_free(part);
    dist_graph_free(&g);
    return st;
}

/* ---- any number of parts (mpi-logdet branch) ---- */

sla_status sla_dist_partition_parts(const sla_dist_pattern *P, sla_dist_partitioner method,
                                    int nparts, int dim, const double *coords, int *part)
{
    SLA_CHECK_ARG(P, "P is NULL");
    sla_status st = check_args(P, method, dim, coords, P->rows->n > 0 ? (const void *)part
                                                                       : (const void *)P, "part");
    if (st == SLA_OK && nparts < 1) st = SLA_FAIL(SLA_EINVAL, "nparts = %d < 1", nparts);
    int coord = method == SLA_DIST_PART_RCB || method == SLA_DIST_PART_HILBERT;
    int64_t same[3] = {method, coord ? dim : 0, nparts};
    static const char *const names[3] = {"method", "dim", "nparts"};
    SLA_TRY(dist_agree_same(P->comm, __func__, st, 3, same, names));
    SLA_TRY(check_square(P, __func__));
    dist_graph g;
    SLA_TRY(dist_graph_build(P, __func__, &g));
    int *tmp = sla_malloc((size_t)g.n + 1, sizeof *tmp, "partition");
    st = dist_agree(P->comm, __func__, tmp ? SLA_OK : sla_error_attribute(SLA_ENOMEM, __func__));
    if (st == SLA_OK) st = run_method(&g, __func__, method, nparts, dim, coords, tmp);
    if (st == SLA_OK && g.n > 0) memcpy(part, tmp, (size_t)g.n * sizeof *part);
    sla_free(tmp);
    dist_graph_free(&g);
    return sla_error_attribute(st, __func__);
}
