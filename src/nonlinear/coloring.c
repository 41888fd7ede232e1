/* Distance-2 colouring of the columns of a sparse pattern, for Jacobians by compressed column
 * products (Curtis, Powell & Reid, "On the estimation of sparse Jacobian matrices", J. Inst.
 * Maths Applics 13, 1974): columns that share a row get different colours, so one product
 * J·s_c per colour c recovers every entry. Greedy in the largest-first order of Coleman & Moré
 * ("Estimation of sparse Jacobian matrices and graph coloring problems", SIAM J. Numer. Anal.
 * 20, 1983), degree = Σ over the column's rows of (row length − 1), ties by column index, so
 * the colouring is deterministic. Cost O(Σ_i nnz(row i)²). */
#include <stdlib.h>

#include "nonlinear/nl_internal.h"

typedef struct col_degree { int64_t degree, col; } col_degree;

static int by_degree(const void *a, const void *b)
{
    const col_degree *x = a, *y = b;
    if (x->degree != y->degree) return x->degree > y->degree ? -1 : 1;
    return (x->col > y->col) - (x->col < y->col);
}

sla_status sla_pattern_color_columns(const sla_pattern *p, int32_t *color, int64_t *ncolors)
{
    SLA_CHECK_ARG(p && ncolors, "p or ncolors is NULL");
    int64_t n = sla_pattern_ncols(p);
    SLA_CHECK_ARG(color || n == 0, "color is NULL");
    *ncolors = 0;
    if (n == 0) return SLA_OK;
    const sla_pattern *pt;
    const int64_t *perm;
    SLA_TRY(sla_error_attribute(sla_pattern_cached_transpose(p, &pt, &perm), __func__));
    const int64_t *rp = sla_pattern_rowptr(p), *cp = sla_pattern_rowptr(pt);
    const int32_t *ci = sla_pattern_colind(p), *ri = sla_pattern_colind(pt);
    col_degree *order = sla_malloc((size_t)n, sizeof *order, "column order");
    int64_t *mark = sla_malloc((size_t)n + 1, sizeof *mark, "colour marks");
    if (!order || !mark) {
        sla_free(order);
        sla_free(mark);
        return sla_error_attribute(SLA_ENOMEM, __func__);
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t d = 0;
        for (int64_t q = cp[j]; q < cp[j + 1]; q++) d += rp[ri[q] + 1] - rp[ri[q]] - 1;
        order[j] = (col_degree){d, j};
        color[j] = -1;
    }
    qsort(order, (size_t)n, sizeof *order, by_degree);
    for (int64_t c = 0; c <= n; c++) mark[c] = -1;
    int64_t used = 0;
    for (int64_t t = 0; t < n; t++) {
        int64_t j = order[t].col;
        for (int64_t q = cp[j]; q < cp[j + 1]; q++) {       /* colours of the columns sharing a row */
            int64_t i = ri[q];
            for (int64_t s = rp[i]; s < rp[i + 1]; s++)
                if (color[ci[s]] >= 0) mark[color[ci[s]]] = j;
        }
        int64_t c = 0;
        while (mark[c] == j) c++;
        color[j] = (int32_t)c;
        if (c + 1 > used) used = c + 1;
    }
    sla_free(order);
    sla_free(mark);
    *ncolors = used;
    return SLA_OK;
}
