/* Connected components of the graph of a square pattern (an edge i — j for every stored
 * (i, j) or (j, i)): union–find with path halving and union by smaller root, then labels
 * numbered in order of each component's smallest node. O(nnz α(n)) time, O(n) memory. */
#include "core/internal.h"
#include "core/pattern_impl.h"

static int64_t find_root(int64_t *parent, int64_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];      /* path halving */
        i = parent[i];
    }
    return i;
}

sla_status sla_pattern_connected_components(const sla_pattern *p, int64_t *labels,
                                            int64_t *ncomponents)
{
    SLA_CHECK_ARG(p && ncomponents && (labels || p->nrows == 0),
                  "p, labels or ncomponents is NULL");
    if (p->nrows != p->ncols)
        return SLA_FAIL(SLA_ESHAPE, "the pattern is %lld × %lld: connected components need a "
                        "square matrix (a graph on its rows)", (long long)p->nrows,
                        (long long)p->ncols);
    int64_t n = p->nrows;
    int64_t *parent = sla_malloc((size_t)n, sizeof *parent, "union-find parents");
    if (!parent) return SLA_ENOMEM;
    for (int64_t i = 0; i < n; i++) parent[i] = i;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = p->rowptr[i]; k < p->rowptr[i + 1]; k++) {
            int64_t a = find_root(parent, i), b = find_root(parent, p->colind[k]);
            if (a != b) parent[a > b ? a : b] = a < b ? a : b;   /* the smaller node is root */
        }
    /* roots are their components' smallest nodes: numbering roots in node order numbers the
     * components in order of their smallest node */
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = find_root(parent, i);
        labels[i] = r == i ? count++ : labels[r];
    }
    *ncomponents = count;
    sla_free(parent);
    return SLA_OK;
}
