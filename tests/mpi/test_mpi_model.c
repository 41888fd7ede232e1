/* The scaling model's halo counter (bench/mpi/halo_model.h, used by bench_mpi_model) against
 * closed forms and against libsla_mpi's real halo plans:
 *   - contiguous strips of an nx × ny grid into P parts, each holding at least one grid line:
 *     2·(P − 1)·nx ghosts in all, as many values sent, 2·(P − 1) messages; in 3D the plane
 *     nx·ny takes the place of nx;
 *   - RCB of a 2^a-sided square into q × q boxes: 4·(q − 1)·side ghosts, at most 4 neighbours;
 *     a cube into 8 octants: 3 planes, 6·side² ghosts, 3 neighbours each;
 *   - the extrapolation rule of the model: doubling every side of a box partition doubles
 *     (2D) or quadruples (3D) every part's ghosts and leaves its neighbours alone;
 *   - at np ranks: the counter on the library's own partition (contiguous layout and
 *     sla_dist_partition RCB) equals every rank's halo plan (ghosts, values sent, receive
 *     neighbours) and sla_dist_partition_info's totals; for np a power of two the model's
 *     RCB cuts where the library's does. */
#include <stdio.h>
#include <stdlib.h>

#include "mpitest.h"
#include "../../bench/mpi/halo_real.h"

typedef struct totals { int64_t ghosts, sends, messages, neighbours_max, rows_min; } totals;

static totals count(const hm_grid *g, int P, int rcb)
{
    int *part = calloc((size_t)hm_size(g), sizeof *part);
    hm_part_stats *st = malloc(sizeof *st * (size_t)P);
    if (rcb) hm_part_rcb(g, P, part);
    else hm_part_contiguous(g, P, part);
    totals t = {0, 0, 0, 0, INT64_MAX};
    MT_CHECK(hm_halo(g, P, part, st) == 0, "hm_halo failed");
    for (int p = 0; p < P; p++) {
        t.ghosts += st[p].ghosts, t.sends += st[p].sends, t.messages += st[p].neighbours;
        if (st[p].neighbours > t.neighbours_max) t.neighbours_max = st[p].neighbours;
        if (st[p].rows < t.rows_min) t.rows_min = st[p].rows;
    }
    free(part), free(st);
    return t;
}

static void closed_forms(void)
{
    /* strips, 2D: boundaries fall inside grid lines (37 does not divide the counts) */
    hm_grid g2 = {2, {37, 29, 1}};
    for (int P = 1; P <= 29; P++) {
        totals t = count(&g2, P, 0);
        MT_CHECK(t.rows_min >= 37, "P = %d: a strip thinner than a line", P);
        MT_CHECK(t.ghosts == 2 * (P - 1) * 37 && t.sends == t.ghosts && t.messages == 2 * (P - 1),
                 "2D strips P = %d: ghosts %lld sends %lld messages %lld, expected %d, %d", P,
                 (long long)t.ghosts, (long long)t.sends, (long long)t.messages, 2 * (P - 1) * 37,
                 2 * (P - 1));
    }
    hm_grid g3 = {3, {7, 5, 9}};
    for (int P = 1; P <= 9; P++) {
        totals t = count(&g3, P, 0);
        MT_CHECK(t.ghosts == 2 * (P - 1) * 35 && t.messages == 2 * (P - 1),
                 "3D strips P = %d: ghosts %lld, expected %d", P, (long long)t.ghosts,
                 2 * (P - 1) * 35);
    }
    /* RCB boxes */
    for (int q = 1; q <= 8; q *= 2) {
        hm_grid s = {2, {64, 64, 1}};
        totals t = count(&s, q * q, 1);
        MT_CHECK(t.ghosts == 4 * (q - 1) * 64 && t.neighbours_max == (q >= 3 ? 4 : 2 * (q - 1)),
                 "RCB %d x %d boxes of 64^2: ghosts %lld (expected %d), neighbours %lld", q, q,
                 (long long)t.ghosts, 4 * (q - 1) * 64, (long long)t.neighbours_max);
    }
    hm_grid c = {3, {16, 16, 16}};
    totals t8 = count(&c, 8, 1);
    MT_CHECK(t8.ghosts == 6 * 256 && t8.neighbours_max == 3 && t8.messages == 24,
             "RCB octants of 16^3: ghosts %lld neighbours %lld messages %lld", (long long)t8.ghosts,
             (long long)t8.neighbours_max, (long long)t8.messages);
    /* the extrapolation: every side × 2 → ghosts × 2^(d−1) per part, neighbours equal */
    for (int dim = 2; dim <= 3; dim++)
        for (int P = 2; P <= 64; P *= 2) {
            hm_grid a = {dim, {16, 16, dim == 3 ? 16 : 1}}, b = {dim, {32, 32, dim == 3 ? 32 : 1}};
            int *pa = malloc(sizeof *pa * (size_t)hm_size(&a)), *pb = malloc(sizeof *pb * (size_t)hm_size(&b));
            hm_part_stats *sa = malloc(sizeof *sa * (size_t)P), *sb = malloc(sizeof *sb * (size_t)P);
            hm_part_rcb(&a, P, pa), hm_part_rcb(&b, P, pb);
            hm_halo(&a, P, pa, sa), hm_halo(&b, P, pb, sb);
            int64_t fh = dim == 2 ? 2 : 4, fr = 2 * fh;
            for (int p = 0; p < P; p++)
                MT_CHECK(sb[p].ghosts == fh * sa[p].ghosts && sb[p].sends == fh * sa[p].sends &&
                         sb[p].rows == fr * sa[p].rows && sb[p].neighbours == sa[p].neighbours,
                         "%dD P = %d part %d: ghosts %lld -> %lld, rows %lld -> %lld", dim, P, p,
                         (long long)sa[p].ghosts, (long long)sb[p].ghosts, (long long)sa[p].rows,
                         (long long)sb[p].rows);
            free(pa), free(pb), free(sa), free(sb);
        }
}

/* The counter on the library's distribution against its halo plan, on this many ranks. */
static void real_plans(void)
{
    const hm_grid grids[4] = {{2, {20, 15, 1}}, {3, {8, 6, 5}}, {2, {24, 16, 1}}, {3, {8, 8, 8}}};
    for (int gi = 0; gi < 4; gi++)
        for (int k = 0; k < 2; k++) {
            const hm_grid *g = &grids[gi];
            int method = k ? SLA_DIST_PART_RCB : -1;
            hr_result res;
            sla_status st = hr_build(MPI_COMM_WORLD, g, method, &res);
            MT_CHECK(st == SLA_OK, "hr_build: %s", sla_last_error());
            if (st) continue;
            hm_part_stats *cnt = malloc(sizeof *cnt * (size_t)mt_size);
            hm_halo(g, mt_size, res.part, cnt);
            hm_part_stats me = cnt[mt_rank];
            MT_CHECK(me.rows == res.mine.rows && me.ghosts == res.mine.ghosts &&
                     me.sends == res.mine.sends && me.neighbours == res.mine.neighbours,
                     "%dD %s rank %d: counter rows %lld ghosts %lld sends %lld neighbours %lld; "
                     "halo plan %lld %lld %lld %lld", g->dim, k ? "rcb" : "contiguous", mt_rank,
                     (long long)me.rows, (long long)me.ghosts, (long long)me.sends,
                     (long long)me.neighbours, (long long)res.mine.rows, (long long)res.mine.ghosts,
                     (long long)res.mine.sends, (long long)res.mine.neighbours);
            int64_t gt = 0, mt = 0;
            for (int p = 0; p < mt_size; p++) gt += cnt[p].ghosts, mt += cnt[p].neighbours;
            MT_CHECK(gt == res.info.halo_total && mt == res.info.neighbours_total,
                     "%dD %s: counter ghosts %lld messages %lld, partition info %lld %lld", g->dim,
                     k ? "rcb" : "contiguous", (long long)gt, (long long)mt,
                     (long long)res.info.halo_total, (long long)res.info.neighbours_total);
            int64_t plane = g->dim == 2 ? g->n[0] : g->n[0] * g->n[1];
            if (!k && hm_size(g) / mt_size >= plane)
                MT_CHECK(gt == 2 * (mt_size - 1) * plane, "%dD strips at %d ranks: %lld ghosts, expected %lld",
                         g->dim, mt_size, (long long)gt, (long long)(2 * (mt_size - 1) * plane));
            if (k && (mt_size & (mt_size - 1)) == 0) {
                totals t = count(g, mt_size, 1);
                MT_CHECK(t.ghosts == gt, "%dD RCB at %d ranks: model %lld ghosts, library %lld",
                         g->dim, mt_size, (long long)t.ghosts, (long long)gt);
            }
            free(cnt), free(res.part);
        }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    closed_forms();
    real_plans();
    return mt_finish("model");
}
