/* Cost of the true residual that sla_solver_solve computes for direct methods whose backend does
 * not report one (cholesky, ldlt): one copy of B, one SpMV over all right-hand sides and the
 * column norms, measured against the whole solve (which includes it) in the same run.
 *
 * For each problem, method and nrhs: the median over repeats (and [min, max]) of
 *   solve_s      sla_solver_solve (triangular solves + residual),
 *   residual_s   the residual's work alone (memcpy, sla_spmv(−A X + B), column norms),
 * and overhead = residual_s / (solve_s − residual_s): the added cost relative to the solve
 * without it. Usage: bench_residual [--quick]. One JSON object on stdout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sla/sla.h"
#include "bench_util.h"
#include "grid_laplacian.h"

#ifndef SLA_MATRIX_DIR_DEFAULT
#define SLA_MATRIX_DIR_DEFAULT ""
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    fprintf(stderr, "bench_residual: %s failed: %s\n", what, sla_last_error());
    exit(1);
}

/* the work of the generic layer's residual: R = B − A X, then ‖column‖₂ of R and B in one sweep
 * over the rows each (src/solve/solver.c: true_residual) */
static double residual_work(const sla_matrix *A, const double *B, const double *X, double *R,
                            int64_t n, int64_t k)
{
    memcpy(R, B, sizeof(double) * (size_t)(n * k));
    if (sla_spmv(SLA_OP_N, -1.0, A, X, 1, k, 1.0, R) != SLA_OK) die("sla_spmv");
    double rs[8] = {0}, bs[8] = {0}, rm[8] = {0}, bm[8] = {0}, worst = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) {
            double r = R[i * k + j], b = B[i * k + j];
            rs[j] += r * r;
            bs[j] += b * b;
            rm[j] = fmax(rm[j], fabs(r));
            bm[j] = fmax(bm[j], fabs(b));
        }
    for (int64_t j = 0; j < k; j++) worst = fmax(worst, sqrt(rs[j] / bs[j]));
    return worst;
}

static void run(const char *name, const sla_pattern *p, const double *v, int repeats, int first)
{
    int64_t n = sla_pattern_nrows(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_method ms[] = {SLA_METHOD_CHOLESKY, SLA_METHOD_LDLT};
    int64_t ks[] = {1, 8};
    printf("%s    \"%s\": {\"n\": %lld, \"nnz\": %lld", first ? "" : ",\n", name, (long long)n,
           (long long)sla_pattern_nnz(p));
    for (int mi = 0; mi < 2; mi++) {
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = ms[mi];
        sla_solver *s = NULL;
        if (sla_solver_create(&A, &o, &s) != SLA_OK) die("sla_solver_create");
        for (int ki = 0; ki < 2; ki++) {
            int64_t k = ks[ki];
            double *B = malloc(sizeof(double) * (size_t)(n * k)), *X = malloc(sizeof(double) * (size_t)(n * k));
            double *R = malloc(sizeof(double) * (size_t)(n * k));
            for (int64_t i = 0; i < n * k; i++) B[i] = sin(0.37 * (double)i) + 1.5;
            double *ts = malloc(sizeof(double) * (size_t)repeats), *tr = malloc(sizeof(double) * (size_t)repeats);
            sla_solve_info info;
            double rel = 0;
            for (int r = 0; r < repeats; r++) {
                double t0 = now();
                if (sla_solver_solve(s, SLA_OP_N, k, B, X, &info) != SLA_OK) die("sla_solver_solve");
                double t1 = now();
                rel = residual_work(&A, B, X, R, n, k);
                double t2 = now();
                ts[r] = t1 - t0;
                tr[r] = t2 - t1;
            }
            qsort(ts, (size_t)repeats, sizeof(double), cmp_double);
            qsort(tr, (size_t)repeats, sizeof(double), cmp_double);
            double sm = ts[repeats / 2], rm = tr[repeats / 2];
            printf(",\n      \"%s_nrhs%lld\": {\"solve_s\": {\"median\": %.4g, \"min\": %.4g, \"max\": %.4g}, "
                   "\"residual_s\": {\"median\": %.4g, \"min\": %.4g, \"max\": %.4g}, "
                   "\"overhead\": %.4f, \"info_relative_residual\": %.3g, \"check\": %.3g}",
                   sla_method_name(ms[mi]), (long long)k, sm, ts[0], ts[repeats - 1], rm, tr[0],
                   tr[repeats - 1], rm / fmax(sm - rm, 1e-12), info.relative_residual, rel);
            free(ts); free(tr); free(B); free(X); free(R);
        }
        sla_solver_free(&s);
    }
    printf("}");
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    int repeats = quick ? 5 : 21;
    printf("{\n  \"benchmark\": \"residual of direct solves\",\n  \"repeats\": %d,\n  \"problems\": {\n",
           repeats);
    int64_t dims[2][3] = {{300, 300, 1}, {40, 40, 40}};
    const char *gnames[2] = {"poisson2d_300x300", "poisson3d_40x40x40"};
    for (int g = 0; g < 2; g++) {
        if (quick && g == 1) continue;
        grid_csr c = grid_laplacian(dims[g][0], dims[g][1], dims[g][2]);
        sla_pattern *p;
        if (sla_pattern_from_csr(c.n, c.n, c.rp, c.ci, &p) != SLA_OK) die("sla_pattern_from_csr");
        run(gnames[g], p, c.v, repeats, g == 0);
        sla_pattern_free(&p);
        grid_free(&c);
    }
    const char *dir = getenv("SLA_MATRIX_DIR");
    if (!dir || !*dir) dir = SLA_MATRIX_DIR_DEFAULT;
    const char *files[] = {"bcsstk13.mtx", "Laplace3D10.mtx"};
    for (int f = 0; f < 2 && *dir; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        sla_pattern *p;
        double *v;
        if (sla_mm_read_matrix(path, SLA_FLOAT64, &p, (void **)&v, NULL, NULL) != SLA_OK) continue;
        run(files[f], p, v, repeats, 0);
        sla_pattern_free(&p);
        free(v);
    }
    printf("\n  }\n}\n");
    return 0;
}
