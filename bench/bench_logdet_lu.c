/* Cost of the log-determinant gradient of the LU methods (lu = UMFPACK, klu = KLU) against their
 * numeric factorization, on the 2D 5-point Poisson matrix (default 128 × 128 = 16384 unknowns).
 * The gradient is the sparse inverse subset of src/direct/selinv_lu.c; the target is at most 10×
 * the factorization time. Also reported: the time n single solves would take (the naive
 * alternative, extrapolated from a timed block of solves) and the largest relative error of the
 * gradient against columns of A⁻¹ computed by solves.
 * Usage: bench_logdet_lu [grid side] [repetitions]. Prints one JSON object. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sla/sla.h"
#include "bench_util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median, min and max of r samples (sorted in place) */
static void stats(double *t, int r, double out[3])
{
    qsort(t, (size_t)r, sizeof *t, cmp_double);
    out[0] = r % 2 ? t[r / 2] : 0.5 * (t[r / 2 - 1] + t[r / 2]);
    out[1] = t[0];
    out[2] = t[r - 1];
}

static void poisson2d(int64_t m, sla_pattern **p, double **v)
{
    int64_t n = m * m, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)(5 * n)), *c = malloc(sizeof(int64_t) * (size_t)(5 * n));
    double *x = malloc(sizeof(double) * (size_t)(5 * n));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) {
            int64_t row = i * m + j;
            int64_t nb[5][2] = {{i - 1, j}, {i, j - 1}, {i, j}, {i, j + 1}, {i + 1, j}};
            for (int e = 0; e < 5; e++) {
                if (nb[e][0] < 0 || nb[e][0] >= m || nb[e][1] < 0 || nb[e][1] >= m) continue;
                r[k] = row;
                c[k] = nb[e][0] * m + nb[e][1];
                x[k++] = e == 2 ? 4 : -1;
            }
        }
    sla_pattern_from_coo(n, n, k, r, c, p);
    *v = malloc(sizeof(double) * (size_t)k);
    sla_values_gather(*p, SLA_FLOAT64, 1, x, *v);
    free(r); free(c); free(x);
}

/* Largest |grad − (A⁻¹)[c][r]| / max|A⁻¹ column| over the rows r of a few sampled columns. */
static double check_gradient(sla_solver *s, const sla_pattern *p, const double *g)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double *e = calloc((size_t)n, sizeof *e), *x = malloc(sizeof *x * (size_t)n), worst = 0;
    for (int64_t r = 0; r < n; r += n / 7 + 1) {
        e[r] = 1;
        sla_solver_solve(s, SLA_OP_N, 1, e, x, NULL);        /* x = A⁻¹ e_r: column r of A⁻¹ */
        e[r] = 0;
        double xmax = 0;
        for (int64_t i = 0; i < n; i++) xmax = fmax(xmax, fabs(x[i]));
        for (int64_t t = rp[r]; t < rp[r + 1]; t++) worst = fmax(worst, fabs(g[t] - x[ci[t]]) / xmax);
    }
    free(e); free(x);
    return worst;
}

static int run(sla_method method, const sla_pattern *p, const double *v, int reps, int first)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p), nb = 32;
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = method;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver *s;
    double t0 = now();
    if (sla_solver_create(&A, &o, &s) != SLA_OK) {
        fprintf(stderr, "create: %s\n", sla_last_error());
        return 1;
    }
    double tcreate = now() - t0;
    double *g = malloc(sizeof *g * (size_t)nnz), *tf = malloc(sizeof *tf * (size_t)reps);
    double *tg = malloc(sizeof *tg * (size_t)reps), *ratio = malloc(sizeof *ratio * (size_t)reps);
    double *b = malloc(sizeof *b * (size_t)(n * nb)), *x = malloc(sizeof *x * (size_t)(n * nb));
    for (int64_t i = 0; i < n * nb; i++) b[i] = sin((double)i);
    for (int r = 0; r < reps; r++) {
        t0 = now();
        sla_solver_refactor(s, v);
        double t1 = now();
        sla_solver_logdet_grad(s, NULL, g);
        double t2 = now();
        tf[r] = t1 - t0;
        tg[r] = t2 - t1;
        ratio[r] = tg[r] / tf[r];
    }
    t0 = now();
    sla_solver_solve(s, SLA_OP_N, nb, b, x, NULL);
    double tsolve = (now() - t0) / (double)nb;
    double sf[3], sg[3], sr[3];
    stats(tf, reps, sf);
    stats(tg, reps, sg);
    stats(ratio, reps, sr);
    double err = check_gradient(s, p, g);
    printf("%s    \"%s\": {\"description\": \"%s\", \"create_s\": %.4g,\n"
           "      \"factor_s\": {\"median\": %.4g, \"min\": %.4g, \"max\": %.4g},\n"
           "      \"logdet_grad_s\": {\"median\": %.4g, \"min\": %.4g, \"max\": %.4g},\n"
           "      \"grad_over_factor\": {\"median\": %.3g, \"min\": %.3g, \"max\": %.3g},\n"
           "      \"one_solve_s\": %.4g, \"n_solves_over_grad\": %.3g, \"grad_max_rel_error\": %.2g}",
           first ? "" : ",\n", sla_method_name(method), sla_solver_describe(s), tcreate, sf[0], sf[1],
           sf[2], sg[0], sg[1], sg[2], sr[0], sr[1], sr[2], tsolve, tsolve * (double)n / sg[0], err);
    free(g); free(tf); free(tg); free(ratio); free(b); free(x);
    sla_solver_free(&s);
    return 0;
}

int main(int argc, char **argv)
{
    int64_t m = argc > 1 ? atoll(argv[1]) : 128;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (m < 2 || reps < 1) {
        fprintf(stderr, "usage: %s [grid side ≥ 2] [repetitions ≥ 1]\n", argv[0]);
        return 2;
    }
    sla_pattern *p;
    double *v;
    poisson2d(m, &p, &v);
    printf("{\"benchmark\": \"logdet_lu\", \"matrix\": \"2D Poisson %lldx%lld\", \"n\": %lld, "
           "\"nnz\": %lld, \"repetitions\": %d, \"target_grad_over_factor\": 10,\n  \"methods\": {\n",
           (long long)m, (long long)m, (long long)(m * m), (long long)sla_pattern_nnz(p), reps);
    int rc = run(SLA_METHOD_LU, p, v, reps, 1) || run(SLA_METHOD_KLU, p, v, reps, 0);
    printf("\n  }\n}\n");
    sla_pattern_free(&p);
    free(v);
    return rc;
}
