/* bench_eigsh_gen: the 6 smallest eigenvalues of finite-element pairs K v = λ M v (P1 in 1D,
 * bilinear Q1 on the unit square, Dirichlet, n interior nodes), by sla_eigsh with options.M
 * (shift-invert Lanczos on (K − σM)⁻¹M in the M-inner product, Cholesky-verified σ = 0), and
 * for comparison the standard problem on K alone (same method) to show the cost of the mass
 * matrix. Closed forms: 1D μ_j = (6/h²)(1 − cos θ_j)/(2 + cos θ_j), θ_j = jπ/(m+1); 2D Q1 is
 * the tensor product K = K₁⊗M₁ + M₁⊗K₁, M = M₁⊗M₁, so λ = μ_i + μ_j.
 * Reports wall time (median and range over repeats), operator applications, factorizations,
 * and the max relative eigenvalue error; also ARPACK dsaupd in mode 3 (bmat = G) through
 * method arpack on the same factorization. bench/eigsh_gen.sh runs SciPy's eigsh(K, M=M, sigma=0)
 * (ARPACK mode 3 with SuperLU) on the same pairs and prints the ratios.
 * Usage: bench_eigsh_gen [m (256: 2D n = 65,536, 1D n = 65,536)] [repeats (3)]. One JSON object. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sla/sla.h"
#include "bench_util.h"

#define PI 3.14159265358979323846

static void die(void)
{
    fprintf(stderr, "%s\n", sla_last_error());
    exit(1);
}

/* 1D factors: K₁ = tridiag(−1, 2, −1)/h, M₁ = h/6·tridiag(1, 4, 1); entry (i, j), |i − j| ≤ 1. */
static double k1(int64_t i, int64_t j, double h) { return i == j ? 2 / h : -1 / h; }
static double m1(int64_t i, int64_t j, double h) { return i == j ? 4 * h / 6 : h / 6; }

/* The pair on m nodes per direction (dim 1 or 2) as two matrices on one pattern. */
static void fem_pair(int64_t m, int dim, sla_pattern **p, double **K, double **M)
{
    double h = 1.0 / (double)(m + 1);
    int64_t n = dim == 1 ? m : m * m, cap = (dim == 1 ? 3 : 9) * n, q = 0;
    int64_t *r = malloc(sizeof(int64_t) * cap), *c = malloc(sizeof(int64_t) * cap);
    double *kv = malloc(sizeof(double) * cap), *mv = malloc(sizeof(double) * cap);
    for (int64_t i = 0; i < n; i++) {
        int64_t ix = dim == 1 ? i : i % m, iy = dim == 1 ? 0 : i / m;
        for (int64_t dy = (dim == 1 ? 0 : -1); dy <= (dim == 1 ? 0 : 1); dy++)
            for (int64_t dx = -1; dx <= 1; dx++) {
                int64_t jx = ix + dx, jy = iy + dy;
                if (jx < 0 || jx >= m || jy < 0 || jy >= m) continue;
                r[q] = i;
                c[q] = dim == 1 ? jx : jy * m + jx;
                if (dim == 1) {
                    kv[q] = k1(ix, jx, h);
                    mv[q] = m1(ix, jx, h);
                } else {
                    kv[q] = k1(ix, jx, h) * m1(iy, jy, h) + m1(ix, jx, h) * k1(iy, jy, h);
                    mv[q] = m1(ix, jx, h) * m1(iy, jy, h);
                }
                q++;
            }
    }
    if (sla_pattern_from_coo(n, n, q, r, c, p) != SLA_OK) die();
    *K = malloc(sizeof(double) * q);
    *M = malloc(sizeof(double) * q);
    sla_values_gather(*p, SLA_FLOAT64, 1, kv, *K);
    sla_values_gather(*p, SLA_FLOAT64, 1, mv, *M);
    free(r); free(c); free(kv); free(mv);
}

/* The k smallest closed-form eigenvalues. */
static void exact(int64_t m, int dim, int64_t k, double *out)
{
    double h = 1.0 / (double)(m + 1);
    int64_t cnt = dim == 1 ? k : k * k;
    double *mu = malloc(sizeof(double) * k), *all = malloc(sizeof(double) * cnt);
    for (int64_t j = 0; j < k; j++) {
        double t = (double)(j + 1) * PI / (double)(m + 1);
        mu[j] = 6 / (h * h) * (1 - cos(t)) / (2 + cos(t));
    }
    for (int64_t q = 0; q < cnt; q++) all[q] = dim == 1 ? mu[q] : mu[q / k] + mu[q % k];
    qsort(all, (size_t)cnt, sizeof(double), cmp);
    memcpy(out, all, sizeof(double) * k);
    free(mu); free(all);
}

static void run(const char *name, int64_t m, int dim, int with_mass, sla_eigsh_method method,
                int repeats, int last)
{
    sla_pattern *p;
    double *K, *M;
    fem_pair(m, dim, &p, &K, &M);
    int64_t n = sla_pattern_nrows(p), k = 6;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, K), Mm = sla_matrix_view(p, SLA_FLOAT64, 1, M);
    double ex[6], lam[6], *V = malloc(sizeof(double) * n * k), t[16];
    exact(m, dim, k, ex);
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.tol = 1e-10;
    o.M = with_mass ? &Mm : NULL;
    o.method = method;
    sla_eigsh_info info;
    if (repeats > 16) repeats = 16;
    for (int r = 0; r < repeats; r++) {
        double t0 = now();
        sla_status st = sla_eigsh(&A, k, &o, lam, V, &info);
        t[r] = now() - t0;
        if (st < 0) {
            /* e.g. ARPACK not in this build: reported, not fatal */
            printf("    \"%s\": {\"error\": \"%s\"}%s\n", name, sla_status_string(st), last ? "" : ",");
            free(K); free(M); free(V);
            sla_pattern_free(&p);
            return;
        }
    }
    qsort(t, (size_t)repeats, sizeof(double), cmp);
    double err = 0;
    /* without M, the standard problem has other eigenvalues: no closed form compared */
    for (int64_t j = 0; with_mass && j < k; j++) err = fmax(err, fabs(lam[j] - ex[j]) / ex[j]);
    printf("    \"%s\": {\"n\": %lld, \"nnz\": %lld, \"time_s_median\": %.4f, \"time_s_min\": %.4f, "
           "\"time_s_max\": %.4f, \"operator_applications\": %lld, \"factorizations\": %lld, "
           "\"restarts\": %lld, \"converged\": %lld, \"max_residual\": %.3g, ",
           name, (long long)n, (long long)sla_pattern_nnz(p), t[repeats / 2], t[0], t[repeats - 1],
           (long long)info.operator_applications, (long long)info.factorizations,
           (long long)info.restarts, (long long)info.converged, info.max_residual);
    if (with_mass) printf("\"max_rel_err_closed_form\": %.3g, ", err);
    printf("\"lambda\": [");
    for (int64_t j = 0; j < k; j++) printf("%.12g%s", lam[j], j + 1 < k ? ", " : "");
    printf("], \"description\": \"");
    for (const char *c = info.description; *c; c++) {
        if (*c == '"' || *c == '\\') putchar('\\');
        putchar(*c);
    }
    printf("\"}%s\n", last ? "" : ",");
    free(K); free(M); free(V);
    sla_pattern_free(&p);
}

int main(int argc, char **argv)
{
    int64_t m = argc > 1 ? atoll(argv[1]) : 256;
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    if (m < 8 || repeats < 1) { fprintf(stderr, "usage: bench_eigsh_gen [m ≥ 8] [repeats ≥ 1]\n"); return 2; }
    printf("{\n  \"bench\": \"eigsh_gen\", \"k\": 6, \"which\": \"SA\", \"tol\": 1e-10, \"repeats\": %d,\n"
           "  \"problems\": {\n", repeats);
    run("fem1d_p1", m * m, 1, 1, SLA_EIGSH_AUTO, repeats, 0);
    run("fem2d_q1", m, 2, 1, SLA_EIGSH_AUTO, repeats, 0);
    run("fem2d_q1_arpack_mode3", m, 2, 1, SLA_EIGSH_ARPACK, repeats, 0);
    run("fem2d_q1_stiffness_only", m, 2, 0, SLA_EIGSH_AUTO, repeats, 1);
    printf("  }\n}\n");
    return 0;
}
