/* PT-Scotch partition of the distributed graph (SCOTCH_dgraphPart; Chevalier & Pellegrini,
 * "PT-Scotch: a tool for efficient parallel graph ordering", Parallel Computing 2008).
 * PT-Scotch numbers vertices contiguously by rank, so vertex (rank r, local i) is
 * offset_r + i and the ghosts' numbers come by one halo exchange. The graph is bound to a
 * Scotch context with the deterministic option, a fixed random seed and one thread per rank
 * (Scotch 7's threads made reruns differ, and may call MPI from threads that an
 * MPI_THREAD_SINGLE program does not allow), so a run repeats. Its error messages are
 * captured here (our own SCOTCH_errorPrint), never printed. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpi/partition.h"

#if SLA_HAVE_PTSCOTCH
#include <limits.h>
#include <stdint.h>
#include <scotch/ptscotch.h>

static _Thread_local char scotch_message[512];

/* PT-Scotch's error hooks (normally in libptscotcherr, which prints): keep the message. */
SLA_API void SCOTCH_errorPrint(const char *const fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(scotch_message, sizeof scotch_message, fmt, ap);
    va_end(ap);
}

SLA_API void SCOTCH_errorPrintW(const char *const fmt, ...)
{
    (void)fmt;                                 /* warnings are not errors: dropped */
}

SLA_API void SCOTCH_errorProg(const char *const name) { (void)name; }

static sla_status scotch_error(const char *func, const char *call)
{
    return sla_error_set(SLA_EBACKEND, func, "%s failed%s%s", call,
                         scotch_message[0] ? ": " : "", scotch_message);
}

/* vertloctab [n + 1] and edgeloctab [edges] in PT-Scotch's numbering. */
static sla_status build_arrays(const dist_graph *g, const char *func, SCOTCH_Num *vert,
                               SCOTCH_Num *edge, SCOTCH_Num *velo)
{
    const sla_dist_pattern *G = g->G;
    int64_t n = g->n, off = 0, ids_n = n > 0 ? n : 1;
    int rc = MPI_Exscan(&n, &off, 1, MPI_INT64_T, MPI_SUM, G->comm);
    if (G->rows->rank == 0) off = 0;
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Exscan", rc);
    int *ids = sla_malloc((size_t)ids_n, sizeof *ids, "vertex numbers");
    int *gids = sla_malloc((size_t)G->nghost, sizeof *gids, "ghost numbers");
    sla_status st = ids && gids ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(G->comm, func, st);
    for (int64_t i = 0; st == SLA_OK && i < n; i++) ids[i] = (int)(off + i);
    if (st == SLA_OK) st = dist_ghost_ints(G, func, ids, gids);
    if (st == SLA_OK) {
        const int64_t *rd = sla_pattern_rowptr(G->diag), *ro = sla_pattern_rowptr(G->offd);
        const int32_t *cd = sla_pattern_colind(G->diag), *co = sla_pattern_colind(G->offd);
        SCOTCH_Num e = 0;
        for (int64_t i = 0; i < n; i++) {
            vert[i] = e;
            velo[i] = (SCOTCH_Num)g->w[i];
            for (int64_t s = rd[i]; s < rd[i + 1]; s++) edge[e++] = (SCOTCH_Num)(off + cd[s]);
            for (int64_t s = ro[i]; s < ro[i + 1]; s++) edge[e++] = gids[co[s]];
        }
        vert[n] = e;
    }
    sla_free(ids);
    sla_free(gids);
    return st;
}

sla_status dist_part_scotch(const dist_graph *g, const char *func, int nparts, int *part)
{
    const sla_dist_pattern *G = g->G;
    int64_t ne = sla_dist_pattern_nnz(G), big = ne;
    MPI_Allreduce(MPI_IN_PLACE, &big, 1, MPI_INT64_T, MPI_SUM, G->comm);
    if (G->rows->N > INT_MAX || big > INT_MAX)
        return sla_error_set(SLA_EUNSUPPORTED, func, "PT-Scotch (int SCOTCH_Num in this build) "
                             "cannot take %lld vertices and %lld edge ends",
                             (long long)G->rows->N, (long long)big);
    SCOTCH_Num *vert = sla_malloc((size_t)g->n + 1, sizeof *vert, "PT-Scotch vertices");
    SCOTCH_Num *edge = sla_malloc((size_t)(ne > 0 ? ne : 1), sizeof *edge, "PT-Scotch edges");
    SCOTCH_Num *velo = sla_malloc((size_t)g->n + 1, sizeof *velo, "PT-Scotch weights");
    SCOTCH_Num *parts = sla_malloc((size_t)g->n + 1, sizeof *parts, "PT-Scotch parts");
    sla_status st = vert && edge && velo && parts ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(G->comm, func, st);
    if (st == SLA_OK) st = build_arrays(g, func, vert, edge, velo);
    SCOTCH_Dgraph graph, bound;
    SCOTCH_Strat strat;
    SCOTCH_Context ctx;
    int have_graph = 0, have_strat = 0, have_ctx = 0, have_bound = 0;
    scotch_message[0] = '\0';
    if (st == SLA_OK) {
        have_graph = SCOTCH_dgraphInit(&graph, G->comm) == 0;
        st = dist_agree(G->comm, func, have_graph ? SLA_OK : scotch_error(func, "SCOTCH_dgraphInit"));
    }
    if (st == SLA_OK) {
        have_ctx = SCOTCH_contextInit(&ctx) == 0;
        int rc = !have_ctx || SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1)
                 || SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1)
                 || SCOTCH_contextThreadSpawn(&ctx, 1, NULL);
        st = dist_agree(G->comm, func, rc == 0 ? SLA_OK : scotch_error(func, "SCOTCH_context"));
    }
    if (st == SLA_OK) {
        SCOTCH_Num n = (SCOTCH_Num)g->n, m = (SCOTCH_Num)ne;
        int rc = SCOTCH_dgraphBuild(&graph, 0, n, n, vert, vert + 1, velo, NULL, m, m, edge,
                                    NULL, NULL);
        st = dist_agree(G->comm, func, rc == 0 ? SLA_OK : scotch_error(func, "SCOTCH_dgraphBuild"));
    }
    if (st == SLA_OK) {
        have_strat = SCOTCH_stratInit(&strat) == 0;
        int rc = have_strat ? SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATDEFAULT,
                                                         nparts, nparts, 0.05)
                            : 1;
        st = dist_agree(G->comm, func, rc == 0 ? SLA_OK : scotch_error(func, "SCOTCH_stratInit"));
    }
    if (st == SLA_OK) {
        have_bound = SCOTCH_contextBindDgraph(&ctx, &graph, &bound) == 0;
        st = dist_agree(G->comm, func, have_bound ? SLA_OK
                                                  : scotch_error(func, "SCOTCH_contextBindDgraph"));
    }
    if (st == SLA_OK) {
        SCOTCH_contextRandomReset(&ctx);
        int rc = SCOTCH_dgraphPart(&bound, nparts, &strat, parts);
        st = dist_agree(G->comm, func, rc == 0 ? SLA_OK : scotch_error(func, "SCOTCH_dgraphPart"));
    }
    for (int64_t i = 0; st == SLA_OK && i < g->n; i++) part[i] = (int)parts[i];
    if (have_bound) SCOTCH_dgraphExit(&bound);
    if (have_strat) SCOTCH_stratExit(&strat);
    if (have_graph) SCOTCH_dgraphExit(&graph);
    if (have_ctx) SCOTCH_contextExit(&ctx);
    sla_free(vert);
    sla_free(edge);
    sla_free(velo);
    sla_free(parts);
    return st;
}

#else

sla_status dist_part_scotch(const dist_graph *g, const char *func, int nparts, int *part)
{
    (void)part;
    return dist_agree(g->A->comm, func, sla_error_set(SLA_EUNSUPPORTED, func, "the PT-Scotch "
                      "partitioner is not compiled in (install libptscotch-dev and reconfigure)"));
}

#endif
