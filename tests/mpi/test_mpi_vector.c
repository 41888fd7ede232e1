/* Distributed vectors: scatter from / gather to a root on non-contiguous layouts (batches,
 * blocks); the vector-space kernels (dot, mdot over two rounds, norm, axpby, CG's fused update
 * and direction) against serial arithmetic; the sum has the same bits on every rank, in every
 * run and for 1 or 2 threads per rank; sla_dist_allsum of integers is exact. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

/* 1 on every rank if every rank holds the same bits of v. */
static int same_everywhere(double v)
{
    double lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return memcmp(&lo, &v, sizeof v) == 0 && memcmp(&hi, &v, sizeof v) == 0;
}

static sla_dist_layout *random_layout(int64_t N, uint64_t seed)
{
    int *part = malloc((size_t)(N + 1) * sizeof *part);
    mt_random_part(N, mt_size, seed, part);
    sla_dist_layout *L = NULL;
    MT_OK(sla_dist_layout_create_partition(MPI_COMM_WORLD, N, mt_rank == 0 ? part : NULL, 0, &L));
    free(part);
    return L;
}

static void scatter_gather(void)
{
    const int64_t N = 37, B = 2, k = 3;
    sla_dist_layout *L = random_layout(N, 12);
    int root = mt_size - 1;
    double *g = malloc((size_t)(B * N * k) * sizeof *g), *back = malloc((size_t)(B * N * k) * sizeof *back);
    mt_fill(g, B * N * k, 1);
    int64_t n = sla_dist_layout_local_size(L);
    double *loc = malloc((size_t)(B * n * k + 1) * sizeof *loc);
    MT_OK(sla_dist_vec_scatter(L, SLA_FLOAT64, B, k, root, mt_rank == root ? g : NULL, loc));
    double *want = mt_slice(L, B, k, g);
    MT_CHECK(memcmp(want, loc, (size_t)(B * n * k) * sizeof *loc) == 0, "scatter: wrong slice");
    memset(back, 0, (size_t)(B * N * k) * sizeof *back);
    MT_OK(sla_dist_vec_gather(L, SLA_FLOAT64, B, k, root, loc, mt_rank == root ? back : NULL));
    if (mt_rank == root)
        MT_CHECK(memcmp(back, g, (size_t)(B * N * k) * sizeof *g) == 0, "gather: not the vector scattered");
    /* contiguous layout, float32, root 0 */
    sla_dist_layout *C = NULL;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, N, -1, &C));
    float gf[37], lf[37], bf[37];
    for (int i = 0; i < N; i++) gf[i] = (float)i;
    MT_OK(sla_dist_vec_scatter(C, SLA_FLOAT32, 1, 1, 0, gf, lf));
    for (int64_t i = 0; i < sla_dist_layout_local_size(C); i++)
        MT_CHECK(lf[i] == (float)sla_dist_layout_global(C)[i], "float32 scatter: lf[%lld] = %g", (long long)i, lf[i]);
    MT_OK(sla_dist_vec_gather(C, SLA_FLOAT32, 1, 1, 0, lf, bf));
    if (mt_rank == 0) MT_CHECK(memcmp(bf, gf, sizeof gf) == 0, "float32 gather");
    sla_dist_layout_free(&L);
    sla_dist_layout_free(&C);
    free(g); free(back); free(loc); free(want);
}

/* Serial sums over the global vectors (compensated, as the reference). */
static double ref_dot(const double *x, const double *y, int64_t N)
{
    long double s = 0;
    for (int64_t i = 0; i < N; i++) s += (long double)x[i] * y[i];
    return (double)s;
}

static void kernels(int64_t N, uint64_t seed)
{
    sla_dist_layout *L = random_layout(N, seed);
    MPI_Comm comm = sla_dist_layout_comm(L);
    int64_t n = sla_dist_layout_local_size(L);
    double *xg = malloc((size_t)N * sizeof *xg), *yg = malloc((size_t)N * sizeof *yg);
    double *dg = malloc((size_t)N * sizeof *dg);
    mt_fill(xg, N, seed + 1);
    mt_fill(yg, N, seed + 2);
    for (int64_t i = 0; i < N; i++) dg[i] = 1.0 + 0.5 * fabs(xg[i]);
    double *x = mt_slice(L, 1, 1, xg), *y = mt_slice(L, 1, 1, yg), *d = mt_slice(L, 1, 1, dg);
    double dot, nrm, scale = 0;
    for (int64_t i = 0; i < N; i++) scale += fabs(xg[i] * yg[i]);
    MT_OK(sla_dist_vec_dot(comm, SLA_FLOAT64, n, x, y, &dot));
    MT_CHECK(fabs(dot - ref_dot(xg, yg, N)) <= 1e-15 * scale, "N = %lld: dot %.17g, serial %.17g",
             (long long)N, dot, ref_dot(xg, yg, N));
    MT_CHECK(same_everywhere(dot), "N = %lld: the dot differs between ranks", (long long)N);
    MT_OK(sla_dist_vec_norm2(comm, SLA_FLOAT64, n, x, &nrm));
    MT_CHECK(fabs(nrm - sqrt(ref_dot(xg, xg, N))) <= 1e-15 * nrm, "norm %.17g", nrm);
    /* bit-identical reruns, and with two threads per rank */
    double again, threads;
    MT_OK(sla_dist_vec_dot(comm, SLA_FLOAT64, n, x, y, &again));
    (void)sla_set_num_threads(2);
    MT_OK(sla_dist_vec_dot(comm, SLA_FLOAT64, n, x, y, &threads));
    (void)sla_set_num_threads(1);
    MT_CHECK(memcmp(&again, &dot, sizeof dot) == 0 && memcmp(&threads, &dot, sizeof dot) == 0,
             "N = %lld: dot %.17g, rerun %.17g, two threads %.17g", (long long)N, dot, again, threads);
    /* mdot: 40 vectors (two rounds of the sum) */
    enum { M = 40 };
    const void *xs[M];
    double md[M], *vecs = malloc((size_t)(M * n + 1) * sizeof *vecs);
    for (int v = 0; v < M; v++) {
        for (int64_t i = 0; i < n; i++) vecs[v * n + i] = x[i] * (v + 1) - y[i];
        xs[v] = vecs + v * n;
    }
    MT_OK(sla_dist_vec_mdot(comm, SLA_FLOAT64, n, M, xs, y, md));
    double bad = 0;
    for (int v = 0; v < M; v++) {
        double r = (v + 1) * ref_dot(xg, yg, N) - ref_dot(yg, yg, N);
        bad = fmax(bad, fabs(md[v] - r) / ((v + 2) * (scale + ref_dot(yg, yg, N))));
    }
    MT_CHECK(bad <= 1e-15, "mdot: error %.3g", bad);
    /* axpby and the CG kernels: element-wise as serial, sums as serial */
    double *xc = malloc((size_t)(n + 1) * sizeof *xc), *rc = malloc((size_t)(n + 1) * sizeof *rc);
    memcpy(xc, x, (size_t)n * sizeof *x);
    memcpy(rc, y, (size_t)n * sizeof *y);
    const double alpha = 0.37, beta = -1.25;
    double rr, rz, rr0, rz0;
    MT_OK(sla_dist_vec_cg_update(comm, SLA_FLOAT64, n, alpha, d, x, xc, rc, d, &rr, &rz));
    MT_OK(sla_dist_vec_cg_update(comm, SLA_FLOAT64, 0, alpha, NULL, NULL, NULL, NULL, NULL, &rr0, &rz0));
    MT_CHECK(rr0 == 0 && rz0 == 0, "cg_update on empty slices: %g %g", rr0, rz0);
    int wrong = 0;
    double *rg = malloc((size_t)N * sizeof *rg);
    for (int64_t i = 0; i < N; i++) rg[i] = yg[i] - alpha * xg[i];
    for (int64_t i = 0; i < n; i++) {
        int64_t g = sla_dist_layout_global(L)[i];
        wrong += xc[i] != xg[g] + alpha * dg[g] || rc[i] != yg[g] - alpha * xg[g];
    }
    long double rzl = 0;
    for (int64_t i = 0; i < N; i++) rzl += (long double)rg[i] * (dg[i] * rg[i]);
    double rzr = (double)rzl;
    MT_CHECK(mt_sum(wrong) == 0, "cg_update: %lld entries differ from x + αp, r − αq", (long long)mt_sum(wrong));
    MT_CHECK(fabs(rr - ref_dot(rg, rg, N)) <= 1e-14 * rr && fabs(rz - rzr) <= 1e-14 * rz,
             "cg_update sums %.17g %.17g, serial %.17g %.17g", rr, rz, ref_dot(rg, rg, N), rzr);
    MT_OK(sla_dist_vec_axpby(SLA_FLOAT64, n, alpha, x, beta, xc));
    MT_OK(sla_dist_vec_cg_direction(SLA_FLOAT64, n, beta, y, d, rc));
    wrong = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = sla_dist_layout_global(L)[i];
        double xu = xg[g] + alpha * dg[g], ru = yg[g] - alpha * xg[g];
        wrong += xc[i] != alpha * xg[g] + beta * xu || rc[i] != dg[g] * yg[g] + beta * ru;
    }
    MT_CHECK(mt_sum(wrong) == 0, "axpby / cg_direction: %lld entries wrong", (long long)mt_sum(wrong));
    sla_dist_layout_free(&L);
    free(xg); free(yg); free(dg); free(x); free(y); free(d); free(vecs); free(xc); free(rc); free(rg);
}

static void allsum(void)
{
    double v[70], s[70];
    for (int i = 0; i < 70; i++) v[i] = (double)(mt_rank + 1) * (i + 1);
    MT_OK(sla_dist_allsum(MPI_COMM_WORLD, 70, v, s));
    int wrong = 0;
    for (int i = 0; i < 70; i++) wrong += s[i] != (double)(i + 1) * mt_size * (mt_size + 1) / 2;
    MT_CHECK(wrong == 0, "allsum: %d of 70 sums wrong", wrong);
    MT_OK(sla_dist_allsum(MPI_COMM_WORLD, 70, v, v));           /* in place */
    MT_CHECK(memcmp(v, s, sizeof s) == 0, "allsum in place differs");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    scatter_gather();
    kernels(101, 40);
    kernels(400000, 41);       /* several chunks per rank: the threaded path */
    allsum();
    return mt_finish("test_mpi_vector");
}
