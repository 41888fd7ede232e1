/* METIS k-way partition of the graph gathered on rank 0 (METIS_PartGraphKway, Karypis & Kumar
 * 1998), for moderate sizes: rank 0 holds the whole graph (O(N + edges) memory). The vertex
 * weights are nnz(row) + 1; METIS's seed is fixed, so a run repeats. */
#include <string.h>

#include "mpi/partition.h"

#if SLA_HAVE_METIS
#include <limits.h>
#include <metis.h>

/* The adjacency of this rank's vertices in global indices, rows in owned order. */
static void local_adjacency(const dist_graph *g, int64_t *adj)
{
    const sla_dist_pattern *G = g->G;
    const int64_t *rd = sla_pattern_rowptr(G->diag), *ro = sla_pattern_rowptr(G->offd);
    const int32_t *cd = sla_pattern_colind(G->diag), *co = sla_pattern_colind(G->offd);
    int64_t e = 0;
    for (int64_t i = 0; i < g->n; i++) {
        for (int64_t s = rd[i]; s < rd[i + 1]; s++) adj[e++] = G->cols->global[cd[s]];
        for (int64_t s = ro[i]; s < ro[i + 1]; s++) adj[e++] = G->ghost_global[co[s]];
    }
}

/* Rank 0's METIS call on the gathered vertices (gid, weight, degree) and adjacency, in the
 * received order; parts written back in that order into vparts. */
static sla_status metis_root(const char *func, int64_t N, int nparts, int64_t nv,
                             const int64_t *verts, const int64_t *adj, int64_t ne,
                             int64_t *vparts)
{
    if (N > INT_MAX || ne > INT_MAX)
        return sla_error_set(SLA_EUNSUPPORTED, func, "METIS (32-bit idx_t) cannot take %lld "
                             "vertices and %lld edge ends", (long long)N, (long long)ne);
    idx_t *xadj = sla_calloc((size_t)N + 1, sizeof *xadj, "METIS graph");
    idx_t *adjncy = sla_malloc((size_t)ne, sizeof *adjncy, "METIS graph");
    idx_t *vwgt = sla_malloc((size_t)N, sizeof *vwgt, "METIS weights");
    idx_t *part = sla_malloc((size_t)N, sizeof *part, "METIS partition");
    sla_status st = xadj && adjncy && vwgt && part ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    if (st == SLA_OK) {
        for (int64_t v = 0; v < nv; v++) xadj[verts[3 * v] + 1] = (idx_t)verts[3 * v + 2];
        for (int64_t g = 0; g < N; g++) xadj[g + 1] += xadj[g];
        for (int64_t v = 0, e = 0; v < nv; e += verts[3 * v + 2], v++) {
            int64_t g = verts[3 * v];
            vwgt[g] = (idx_t)verts[3 * v + 1];
            for (int64_t j = 0; j < verts[3 * v + 2]; j++) adjncy[xadj[g] + j] = (idx_t)adj[e + j];
        }
        idx_t nvtxs = (idx_t)N, ncon = 1, np = nparts, objval = 0, options[METIS_NOPTIONS];
        METIS_SetDefaultOptions(options);
        options[METIS_OPTION_SEED] = 1;
        options[METIS_OPTION_NUMBERING] = 0;
        int rc = nparts == 1 ? METIS_OK
                 : METIS_PartGraphKway(&nvtxs, &ncon, xadj, adjncy, vwgt, NULL, NULL, &np, NULL,
                                       NULL, options, &objval, part);
        if (nparts == 1) memset(part, 0, (size_t)N * sizeof *part);
        if (rc != METIS_OK)
            st = sla_error_set(SLA_EBACKEND, func, "METIS_PartGraphKway returned %d (%s)", rc,
                               rc == METIS_ERROR_MEMORY ? "out of memory"
                               : rc == METIS_ERROR_INPUT ? "input error" : "error");
        for (int64_t v = 0; st == SLA_OK && v < nv; v++) vparts[v] = part[verts[3 * v]];
    }
    sla_free(xadj);
    sla_free(adjncy);
    sla_free(vwgt);
    sla_free(part);
    return st;
}

sla_status dist_part_metis(const dist_graph *g, const char *func, int nparts, int *part)
{
    const sla_dist_layout *L = g->A->rows;
    int size = L->size;
    int64_t ne = sla_dist_pattern_nnz(g->G);
    dist_xchg XV = {0}, XE = {0};
    int64_t *verts = NULL, *adj = NULL, *rverts = NULL, *radj = NULL, *vparts = NULL;
    sla_status st = dist_xchg_init(&XV, size, func);
    if (st == SLA_OK && (st = dist_xchg_init(&XE, size, func)) < 0) dist_xchg_free(&XV);
    if (st == SLA_OK) {
        verts = sla_malloc((size_t)g->n * 3, sizeof *verts, "graph vertices");
        adj = sla_malloc((size_t)ne, sizeof *adj, "graph edges");
        if (!verts || !adj) st = sla_error_attribute(SLA_ENOMEM, func);
    }
    st = dist_agree(L->comm, func, st);
    if (st == SLA_OK) {
        const int64_t *rd = sla_pattern_rowptr(g->G->diag), *ro = sla_pattern_rowptr(g->G->offd);
        for (int64_t i = 0; i < g->n; i++) {
            verts[3 * i] = L->global[i];
            verts[3 * i + 1] = g->w[i];
            verts[3 * i + 2] = rd[i + 1] - rd[i] + ro[i + 1] - ro[i];
        }
        local_adjacency(g, adj);
        XV.scount[0] = g->n;
        XE.scount[0] = ne;
        st = dist_xchg_counts(&XV, L->comm, func);
        if (st == SLA_OK) st = dist_xchg_counts(&XE, L->comm, func);
    }
    if (st == SLA_OK) {
        rverts = sla_malloc((size_t)XV.rdispl[size] * 3, sizeof *rverts, "gathered vertices");
        radj = sla_malloc((size_t)XE.rdispl[size], sizeof *radj, "gathered edges");
        vparts = sla_malloc((size_t)XV.rdispl[size], sizeof *vparts, "gathered parts");
        st = dist_agree(L->comm, func, rverts && radj && vparts ? SLA_OK
                                                                : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(&XV, L->comm, func, 3 * sizeof(int64_t), verts, rverts, 0);
    if (st == SLA_OK) st = dist_xchg_run(&XE, L->comm, func, sizeof(int64_t), adj, radj, 0);
    if (st == SLA_OK)
        st = dist_agree(L->comm, func, L->rank == 0 ? metis_root(func, L->N, nparts,
                                                                 XV.rdispl[size], rverts, radj,
                                                                 XE.rdispl[size], vparts)
                                                    : SLA_OK);
    /* the parts go back in each rank's owned order (verts is reused as the landing buffer) */
    if (st == SLA_OK) st = dist_xchg_run(&XV, L->comm, func, sizeof(int64_t), vparts, verts, 1);
    for (int64_t i = 0; st == SLA_OK && i < g->n; i++) part[i] = (int)verts[i];
    dist_xchg_free(&XV);
    dist_xchg_free(&XE);
    sla_free(verts);
    sla_free(adj);
    sla_free(rverts);
    sla_free(radj);
    sla_free(vparts);
    return st;
}

#else

sla_status dist_part_metis(const dist_graph *g, const char *func, int nparts, int *part)
{
    (void)part;
    return dist_agree(g->A->comm, func, sla_error_set(SLA_EUNSUPPORTED, func, "the METIS "
                      "partitioner is not compiled in (install libmetis-dev and reconfigure)"));
}

#endif
