/* What method = auto measures before it decides (see auto_facts.h; the rules are in auto.c). */
#include <math.h>

#include "direct/direct.h"
#include "solve/auto_facts.h"

#define SLA_TEMPLATE "solve/t_auto_facts.h"
#include "core/instantiate.h"

sla_status sla_auto_value_facts(const sla_matrix *A, double rtol, double eps, sla_value_facts *f,
                                unsigned char *strict)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    int64_t *cursor = sla_malloc((size_t)n, sizeof *cursor, "row cursors");
    if (!cursor) return SLA_ENOMEM;
    double worst = SLA_DISPATCH(A->dtype, value_facts,
                                (A->pattern, A->batch, A->values, rtol, cursor, f, strict));
    f->symmetric = worst <= eps * f->amax;
    sla_free(cursor);
    return SLA_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Breadth-first sweeps                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Workspace of the sweeps: queue [n] (nodes in the order reached) and mark [n]: −1 unvisited,
 * ≥ 0 the stamp of the last sweep that reached the node, ≤ −2 a position in a sampled ball. */
typedef struct sweeper {
    const sla_pattern *p;
    int64_t *queue, *mark;
} sweeper;

static sla_status sweeper_init(sweeper *w, const sla_pattern *p)
{
    int64_t n = sla_pattern_nrows(p);
    w->p = p;
    w->queue = sla_malloc((size_t)n, sizeof(int64_t), "breadth-first queue");
    w->mark = sla_malloc((size_t)n, sizeof(int64_t), "breadth-first marks");
    if (!w->queue || !w->mark) {
        sla_free(w->queue);
        sla_free(w->mark);
        return SLA_ENOMEM;
    }
    for (int64_t i = 0; i < n; i++) w->mark[i] = -1;
    return SLA_OK;
}

static void sweeper_free(sweeper *w)
{
    sla_free(w->queue);
    sla_free(w->mark);
}

typedef struct sweep_result {
    int64_t reached;     /* nodes queued (complete levels when stopped) */
    int64_t levels;      /* eccentricity of the start when not stopped, else levels completed */
    int stopped;         /* 1: stopped at level_limit or max_nodes before the end */
} sweep_result;

/* Level-by-level sweep from start with a fresh stamp, stopping at a level boundary once the next
 * level would exceed level_limit (≥ 0) or once max_nodes (≥ 1) nodes are queued. levstart (or
 * NULL, room for max_nodes + 2 entries) receives the queue position where each level begins. */
static sweep_result sweep(sweeper *w, int64_t start, int64_t stamp, int64_t level_limit,
                          int64_t max_nodes, int64_t *levstart)
{
    const int64_t *rp = sla_pattern_rowptr(w->p);
    const int32_t *ci = sla_pattern_colind(w->p);
    int64_t head = 0, tail = 0, level = 0, level_end = 1;
    sweep_result r = {0, 0, 0};
    w->queue[tail++] = start;
    w->mark[start] = stamp;
    if (levstart) levstart[0] = 0;
    while (head < tail) {
        if (head == level_end) {          /* level `level` expanded: the next one is complete */
            level++;
            level_end = tail;
            if (levstart) levstart[level] = head;
            if ((level_limit >= 0 && level > level_limit) || tail >= max_nodes) {
                r.stopped = 1;
                break;
            }
        }
        int64_t u = w->queue[head++];
        for (int64_t k = rp[u]; k < rp[u + 1]; k++)
            if (w->mark[ci[k]] != stamp) {
                w->mark[ci[k]] = stamp;
                w->queue[tail++] = ci[k];
            }
    }
    if (levstart) levstart[level + 1] = tail;
    r.reached = tail;
    r.levels = level;
    return r;
}

sla_status sla_auto_graph_sweep(const sla_pattern *p, const unsigned char *strict,
                                int64_t level_limit, sla_graph_facts *g)
{
    int64_t n = sla_pattern_nrows(p), stamp = 0;
    sweeper w;
    SLA_TRY(sweeper_init(&w, p));
    *g = (sla_graph_facts){.diameter = 0, .components = 0, .strict_everywhere = 1};
    for (int64_t start = 0; start < n; start++) {
        if (w.mark[start] != -1) continue;
        g->components++;
        sweep_result r = sweep(&w, start, stamp++, level_limit, INT64_MAX, NULL);
        if (r.stopped) { g->diameter = -1; break; }
        int has_strict = !strict;
        for (int64_t k = 0; k < r.reached && !has_strict; k++) has_strict = strict[w.queue[k]];
        if (!has_strict) g->strict_everywhere = 0;
        /* the last node reached is (nearly) peripheral: its eccentricity estimates the diameter */
        r = sweep(&w, w.queue[r.reached - 1], stamp++, level_limit, INT64_MAX, NULL);
        if (r.stopped) { g->diameter = -1; break; }
        if (r.levels > g->diameter) g->diameter = r.levels;
    }
    sweeper_free(&w);
    return SLA_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Sampled analysis                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* d with |B(r)| ∝ r^d from the ball sizes at radius R and R/2 (levstart[r + 1] = |B(r)|) of the
 * complete levels among the first m nodes; 3 (the largest considered) when the ball has fewer
 * than 2 complete levels (a graph whose balls explode: expander-like). */
static double growth_dimension(const int64_t *levstart, int64_t levels, int64_t m)
{
    int64_t R = levels;
    while (R > 0 && levstart[R + 1] > m) R--;
    if (R < 2) return 3;
    int64_t H = R / 2;
    double d = log((double)levstart[R + 1] / (double)levstart[H + 1]) /
               log((double)(R + 1) / (double)(H + 1));
    return fmin(3, fmax(1, d));
}

/* The principal submatrix on the first m nodes of the queue (marked with their positions), as a
 * CSR pattern for AMD; its entry count in *nnz. */
static sla_status ball_pattern(sweeper *w, int64_t m, int64_t **rowptr, int64_t **colind,
                               double *nnz)
{
    const int64_t *rp = sla_pattern_rowptr(w->p);
    const int32_t *ci = sla_pattern_colind(w->p);
    for (int64_t k = 0; k < m; k++) w->mark[w->queue[k]] = -2 - k;
    int64_t cap = 0;
    for (int64_t k = 0; k < m; k++) cap += rp[w->queue[k] + 1] - rp[w->queue[k]];
    *rowptr = sla_malloc((size_t)m + 1, sizeof(int64_t), "sample row pointers");
    *colind = sla_malloc((size_t)cap, sizeof(int64_t), "sample columns");
    if (!*rowptr || !*colind) return SLA_ENOMEM;
    int64_t q = 0;
    for (int64_t k = 0; k < m; k++) {
        (*rowptr)[k] = q;
        int64_t u = w->queue[k];
        for (int64_t s = rp[u]; s < rp[u + 1]; s++)
            if (w->mark[ci[s]] <= -2) (*colind)[q++] = -2 - w->mark[ci[s]];
    }
    (*rowptr)[m] = q;
    *nnz = (double)q;
    return SLA_OK;
}

sla_status sla_auto_sample(const sla_pattern *p, int64_t size, sla_sample_facts *s)
{
    *s = (sla_sample_facts){0};
    int64_t n = sla_pattern_nrows(p);
    if (size < 1 || n < size) return SLA_OK;
    sweeper w;
    SLA_TRY(sweeper_init(&w, p));
    int64_t *levstart = sla_malloc((size_t)size + 2, sizeof(int64_t), "level starts");
    int64_t *rowptr = NULL, *colind = NULL;
    sla_status st = levstart ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) {
        sweep_result r = sweep(&w, 0, 0, -1, size, levstart);
        if (r.reached >= size) {
            /* the middle node of the last complete level: about as deep inside the graph as the
             * ball is wide */
            int64_t L = r.levels;
            while (L > 0 && levstart[L + 1] > size) L--;
            int64_t center = w.queue[(levstart[L] + levstart[L + 1]) / 2];
            r = sweep(&w, center, 1, -1, size, levstart);
            s->dimension = growth_dimension(levstart, r.levels, size);
            st = ball_pattern(&w, size, &rowptr, &colind, &s->nnz);
            if (st == SLA_OK) st = sla_amd_cost(size, rowptr, colind, NULL, &s->flops);
            if (st == SLA_OK) s->n = size;
        }
    }
    sla_free(rowptr);
    sla_free(colind);
    sla_free(levstart);
    sweeper_free(&w);
    return st;
}
