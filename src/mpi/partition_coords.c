/* Coordinate partitioners: recursive coordinate bisection (Berger & Bokhari, "A partitioning
 * strategy for nonuniform problems on multiprocessors", IEEE Trans. Computers 1987) and cuts
 * of a Hilbert-curve order (curve index by J. Skilling, "Programming the Hilbert curve", AIP
 * Conf. Proc. 707, 2004). Both balance the weights exactly up to one row, by the quantiles of
 * partition_quantile.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/partition.h"

/* Local checks: finite coordinates. */
static sla_status check_coords(const dist_graph *g, const char *func, int dim, const double *x)
{
    for (int64_t i = 0; i < g->n * dim; i++)
        if (!isfinite(x[i]))
            return sla_error_set(SLA_ENONFINITE, func, "coords[%lld][%d] (row %lld) is not "
                                 "finite", (long long)(i / dim), (int)(i % dim),
                                 (long long)g->A->rows->global[i / dim]);
    return SLA_OK;
}

/* ---- RCB ---- */

typedef struct rcb_ctx {
    const dist_graph *g;
    const dist_key *key;     /* [n] this level's key of each row */
    const int *grp;          /* [n] the search (group) of each row, −1 when not splitting */
} rcb_ctx;

static void rcb_below(const void *arg, int m, const dist_key *mid, int64_t *w)
{
    const rcb_ctx *c = arg;
    memset(w, 0, (size_t)m * sizeof *w);
    for (int64_t i = 0; i < c->g->n; i++)
        if (c->grp[i] >= 0 && c->key[i] < mid[c->grp[i]]) w[c->grp[i]] += c->g->w[i];
}

/* One level: every interval of parts [p0, p1) with p1 − p0 > 1 splits its rows at the weighted
 * quantile nleft/(p1 − p0) along its longest axis. part[i] holds the row's interval start,
 * plen[p0] its length (the same on every rank). */
static sla_status rcb_level(const dist_graph *g, const char *func, int p, int dim,
                            const double *x, int *part, int *plen, int *grp, dist_key *key,
                            int *nsplit)
{
    const sla_dist_layout *L = g->A->rows;
    int m = 0;
    int *sid = sla_malloc((size_t)p, sizeof *sid, "RCB groups");
    double *box = sla_malloc((size_t)p * 6, sizeof *box, "RCB boxes");
    int64_t *wt = sla_malloc((size_t)p * 2, sizeof *wt, "RCB weights");
    dist_key *cut = sla_malloc((size_t)p, sizeof *cut, "RCB cuts");
    sla_status st = sid && box && wt && cut ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(L->comm, func, st);
    if (st == SLA_OK) {
        for (int q = 0; q < p; q++) sid[q] = q + plen[q] <= p && plen[q] > 1 ? m++ : -1;
        for (int s = 0; s < m * 2 * dim; s++) box[s] = INFINITY;     /* min, then −max */
        memset(wt, 0, (size_t)m * sizeof *wt);
        for (int64_t i = 0; i < g->n; i++) {
            int s = grp[i] = sid[part[i]];
            if (s < 0) continue;
            wt[s] += g->w[i];
            for (int d = 0; d < dim; d++) {
                box[(2 * s) * dim + d] = fmin(box[(2 * s) * dim + d], x[i * dim + d]);
                box[(2 * s + 1) * dim + d] = fmin(box[(2 * s + 1) * dim + d], -x[i * dim + d]);
            }
        }
        int rc = MPI_Allreduce(MPI_IN_PLACE, box, m * 2 * dim, MPI_DOUBLE, MPI_MIN, L->comm);
        if (rc == MPI_SUCCESS) rc = MPI_Allreduce(MPI_IN_PLACE, wt, m, MPI_INT64_T, MPI_SUM, L->comm);
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Allreduce", rc);
    }
    int *axis = (int *)(wt + p);               /* second half of wt: axis, then left parts */
    if (st == SLA_OK && m > 0) {
        for (int q = 0, s; q < p; q++) {
            if ((s = sid[q]) < 0) continue;
            int best = 0;
            for (int d = 1; d < dim; d++)
                if (-box[(2 * s + 1) * dim + d] - box[2 * s * dim + d] >
                    -box[(2 * s + 1) * dim + best] - box[2 * s * dim + best]) best = d;
            axis[s] = best;
            int nl = plen[q] / 2;
            wt[s] = (int64_t)((__int128)wt[s] * nl / plen[q]);      /* the left target */
        }
        for (int64_t i = 0; i < g->n; i++)
            if (grp[i] >= 0)
                key[i] = (dist_key)dist_ordered_bits(x[i * dim + axis[grp[i]]]) * (dist_key)L->N
                         + (dist_key)L->global[i];
        rcb_ctx c = {g, key, grp};
        st = dist_quantiles(L->comm, func, m, wt, ((dist_key)1 << 64) * (dist_key)L->N,
                            rcb_below, &c, cut);
    }
    if (st == SLA_OK && m > 0) {
        for (int64_t i = 0; i < g->n; i++)
            if (grp[i] >= 0 && key[i] >= cut[grp[i]]) part[i] += plen[part[i]] / 2;
        for (int q = p - 1; q >= 0; q--)
            if (sid[q] >= 0) {
                int nl = plen[q] / 2;
                plen[q + nl] = plen[q] - nl;
                plen[q] = nl;
            }
    }
    *nsplit = m;
    sla_free(sid);
    sla_free(box);
    sla_free(wt);
    sla_free(cut);
    return st;
}

sla_status dist_part_rcb(const dist_graph *g, const char *func, int nparts, int dim,
                         const double *coords, int *part)
{
    const sla_dist_layout *L = g->A->rows;
    int *plen = sla_calloc((size_t)nparts, sizeof *plen, "RCB intervals");
    int *grp = sla_malloc((size_t)g->n, sizeof *grp, "RCB groups");
    dist_key *key = sla_malloc((size_t)g->n, sizeof *key, "RCB keys");
    sla_status st = plen && grp && key ? check_coords(g, func, dim, coords)
                                       : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(L->comm, func, st);
    if (st == SLA_OK) {
        plen[0] = nparts;
        for (int64_t i = 0; i < g->n; i++) part[i] = 0;
    }
    for (int nsplit = 1; st == SLA_OK && nsplit > 0;)
        st = rcb_level(g, func, nparts, dim, coords, part, plen, grp, key, &nsplit);
    sla_free(plen);
    sla_free(grp);
    sla_free(key);
    return st;
}

/* ---- Hilbert ---- */

/* Skilling's AxestoTranspose for b bits in n ≤ 3 dimensions, then the bits interleaved, most
 * significant first, into the curve index (n·b ≤ 63 bits). */
static uint64_t hilbert_index(uint32_t *X, int b, int n)
{
    uint32_t M = 1u << (b - 1), t;
    for (uint32_t Q = M; Q > 1; Q >>= 1) {    /* inverse undo */
        uint32_t P = Q - 1;
        for (int i = 0; i < n; i++)
            if (X[i] & Q) {
                X[0] ^= P;                      /* invert */
            } else {
                t = (X[0] ^ X[i]) & P;          /* exchange */
                X[0] ^= t;
                X[i] ^= t;
            }
    }
    for (int i = 1; i < n; i++) X[i] ^= X[i - 1];   /* Gray encode */
    t = 0;
    for (uint32_t Q = M; Q > 1; Q >>= 1)
        if (X[n - 1] & Q) t ^= Q - 1;
    for (int i = 0; i < n; i++) X[i] ^= t;
    uint64_t h = 0;
    for (int j = b - 1; j >= 0; j--)
        for (int i = 0; i < n; i++) h = (h << 1) | ((X[i] >> j) & 1u);
    return h;
}

typedef struct hil_ctx {
    int64_t n;
    const dist_key *key;     /* [n] sorted */
    const int64_t *cw;       /* [n + 1] prefix weights in key order */
} hil_ctx;

static void hil_below(const void *arg, int m, const dist_key *mid, int64_t *w)
{
    const hil_ctx *c = arg;
    for (int s = 0; s < m; s++) {
        int64_t a = 0, b = c->n;               /* number of keys < mid[s] */
        while (a < b) {
            int64_t k = a + (b - a) / 2;
            if (c->key[k] < mid[s]) a = k + 1; else b = k;
        }
        w[s] = c->cw[a];
    }
}

typedef struct hil_row { dist_key key; int64_t w; int64_t i; } hil_row;

static int cmp_row(const void *a, const void *b)
{
    dist_key x = ((const hil_row *)a)->key, y = ((const hil_row *)b)->key;
    return (x > y) - (x < y);
}

/* The keys (curve index · N + global index) of this rank's rows, sorted, with prefix weights. */
static sla_status hilbert_keys(const dist_graph *g, const char *func, int dim, const double *x,
                               hil_row *rows, dist_key *key, int64_t *cw, int *bits)
{
    const sla_dist_layout *L = g->A->rows;
    double box[6];
    for (int d = 0; d < dim; d++) box[d] = box[dim + d] = INFINITY;
    for (int64_t i = 0; i < g->n; i++)
        for (int d = 0; d < dim; d++) {
            box[d] = fmin(box[d], x[i * dim + d]);
            box[dim + d] = fmin(box[dim + d], -x[i * dim + d]);
        }
    int rc = MPI_Allreduce(MPI_IN_PLACE, box, 2 * dim, MPI_DOUBLE, MPI_MIN, L->comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Allreduce", rc);
    int b = dim == 1 ? 0 : 63 / dim;
    *bits = dim == 1 ? 64 : b * dim;
    double top = b ? (double)((1u << (b - 1)) - 1) * 2 + 1 : 0;      /* 2^b − 1 */
    for (int64_t i = 0; i < g->n; i++) {
        uint64_t h;
        if (dim == 1) {
            h = dist_ordered_bits(x[i]);
        } else {
            uint32_t X[3];
            for (int d = 0; d < dim; d++) {
                double ext = -box[dim + d] - box[d];
                double q = ext > 0 ? (x[i * dim + d] - box[d]) / ext * top : 0;
                X[d] = q >= top ? (uint32_t)top : (uint32_t)q;
            }
            h = hilbert_index(X, b, dim);
        }
        rows[i] = (hil_row){(dist_key)h * (dist_key)L->N + (dist_key)L->global[i], g->w[i], i};
    }
    qsort(rows, (size_t)g->n, sizeof *rows, cmp_row);
    cw[0] = 0;
    for (int64_t j = 0; j < g->n; j++) {
        key[j] = rows[j].key;
        cw[j + 1] = cw[j] + rows[j].w;
    }
    return SLA_OK;
}

sla_status dist_part_hilbert(const dist_graph *g, const char *func, int nparts, int dim,
                             const double *coords, int *part)
{
    const sla_dist_layout *L = g->A->rows;
    int p = nparts, bits = 0;
    hil_row *rows = sla_malloc((size_t)g->n, sizeof *rows, "Hilbert keys");
    dist_key *key = sla_malloc((size_t)g->n, sizeof *key, "Hilbert keys");
    int64_t *cw = sla_malloc((size_t)g->n + 1, sizeof *cw, "Hilbert weights");
    int64_t *target = sla_malloc((size_t)p, sizeof *target, "Hilbert targets");
    dist_key *cut = sla_malloc((size_t)p, sizeof *cut, "Hilbert cuts");
    sla_status st = rows && key && cw && target && cut ? check_coords(g, func, dim, coords)
                                                       : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(L->comm, func, st);
    if (st == SLA_OK) st = hilbert_keys(g, func, dim, coords, rows, key, cw, &bits);
    int64_t W = cw ? cw[g->n] : 0;
    if (st == SLA_OK) {
        int rc = MPI_Allreduce(MPI_IN_PLACE, &W, 1, MPI_INT64_T, MPI_SUM, L->comm);
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Allreduce", rc);
    }
    if (st == SLA_OK) {
        for (int t = 1; t < p; t++) target[t - 1] = (int64_t)((__int128)W * t / p);
        hil_ctx c = {g->n, key, cw};
        st = dist_quantiles(L->comm, func, p - 1, target, ((dist_key)1 << bits) * (dist_key)L->N,
                            hil_below, &c, cut);
    }
    /* part = number of cuts at or below the key */
    for (int64_t j = 0, t = 0; st == SLA_OK && j < g->n; j++) {
        while (t < p - 1 && cut[t] <= key[j]) t++;
        part[rows[j].i] = (int)t;
    }
    sla_free(rows);
    sla_free(key);
    sla_free(cw);
    sla_free(target);
    sla_free(cut);
    return st;
}
