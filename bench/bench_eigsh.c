/* bench_eigsh: the 6 smallest eigenvalues of the 2D Poisson matrix on a 256 × 256 grid
 * (n = 65,536), by
 *   - sla's thick-restart block Lanczos in shift-invert mode (Cholesky-verified shift σ = 0),
 *   - ARPACK dsaupd (mode 3) on the same factorization (same sla_eigsh call, method arpack),
 *   - LOBPCG without and with preconditioners (the exact inverse from the Cholesky factor as the
 *     ideal case; CG with AMG or IC(0), one iteration, when those are in the build),
 * reporting operator applications, wall time (median and range over repeats, same run),
 * accuracy against the closed form, and the ratios Lanczos/ARPACK.
 * Usage: bench_eigsh [grid (256)] [repeats (3)] [lobpcg: 1 = run the unpreconditioned LOBPCG
 * (minutes), 0 = skip]. Prints one JSON object. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sla/sla.h"
#include "bench_util.h"

static void poisson(int64_t m, sla_pattern **p, double **values)
{
    int64_t n = m * m, cap = 5 * n, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * cap), *c = malloc(sizeof(int64_t) * cap);
    double *v = malloc(sizeof(double) * cap);
    for (int64_t y = 0; y < m; y++)
        for (int64_t x = 0; x < m; x++) {
            int64_t i = y * m + x;
            if (y > 0) { r[k] = i; c[k] = i - m; v[k++] = -1; }
            if (x > 0) { r[k] = i; c[k] = i - 1; v[k++] = -1; }
            r[k] = i; c[k] = i; v[k++] = 4;
            if (x < m - 1) { r[k] = i; c[k] = i + 1; v[k++] = -1; }
            if (y < m - 1) { r[k] = i; c[k] = i + m; v[k++] = -1; }
        }
    if (sla_pattern_from_coo(n, n, k, r, c, p) != SLA_OK) { fprintf(stderr, "%s\n", sla_last_error()); exit(1); }
    *values = malloc(sizeof(double) * k);
    sla_values_gather(*p, SLA_FLOAT64, 1, v, *values);
    free(r); free(c); free(v);
}

typedef struct result {
    const char *name;
    int ok;                     /* 1 if the run could be made */
    char note[200];
    double t_med, t_min, t_max; /* seconds */
    int64_t ops, prec, iters, restarts, converged;
    double max_residual, max_rel_err;
} result;

enum { K = 6 };

static result run(const char *name, const sla_matrix *A, const double *exact, sla_eigsh_options *o,
                  int repeats)
{
    result r = {name, 1, "", 0, INFINITY, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t n = sla_pattern_nrows(A->pattern);
    double lam[K], *V = malloc(sizeof(double) * n * K), t[16];
    if (repeats > 16) repeats = 16;
    for (int q = 0; q < repeats; q++) {
        sla_eigsh_info info;
        double t0 = now();
        sla_status st = sla_eigsh(A, K, o, lam, V, &info);
        t[q] = now() - t0;
        if (st < 0) {
            r.ok = 0;
            snprintf(r.note, sizeof r.note, "%s", sla_last_error());
            break;
        }
        r.ops = info.operator_applications;
        r.prec = info.precond_applications;
        r.iters = info.iterations;
        r.restarts = info.restarts;
        r.converged = info.converged;
        r.max_residual = info.max_residual;
        r.max_rel_err = 0;
        for (int i = 0; i < K; i++) r.max_rel_err = fmax(r.max_rel_err, fabs(lam[i] - exact[i]) / exact[i]);
        snprintf(r.note, sizeof r.note, "%.199s", info.description);
    }
    if (r.ok) {
        qsort(t, (size_t)repeats, sizeof(double), cmp);
        r.t_med = t[repeats / 2];
        r.t_min = t[0];
        r.t_max = t[repeats - 1];
    }
    free(V);
    return r;
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void print(const result *r, int last)
{
    printf("    {\"name\": \"%s\", \"available\": %s, ", r->name, r->ok ? "true" : "false");
    if (r->ok)
        printf("\"operator_applications\": %lld, \"precond_applications\": %lld, \"iterations\": %lld, "
               "\"restarts\": %lld, \"converged\": %lld, \"max_residual\": %.3e, "
               "\"max_rel_err_vs_closed_form\": %.3e, \"time_s\": {\"median\": %.4f, \"min\": %.4f, "
               "\"max\": %.4f}, ", (long long)r->ops, (long long)r->prec, (long long)r->iters,
               (long long)r->restarts, (long long)r->converged, r->max_residual, r->max_rel_err,
               r->t_med, r->t_min, r->t_max);
    printf("\"note\": ");
    print_json_string(r->note);
    printf("}%s\n", last ? "" : ",");
}

/* LOBPCG preconditioned by a solver of the given method/preconditioner (one iteration). */
static result run_prec(const char *name, const sla_matrix *A, const double *exact, sla_method m,
                       sla_precond pc, int repeats)
{
    sla_solver_options so;
    sla_solver_options_init(&so);
    so.method = m;
    so.precond = pc;
    so.maxiter = 1;
    so.rtol = 0;
    sla_solver *s = NULL;
    if (sla_solver_create(A, &so, &s) != SLA_OK) {
        result r = {name, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        snprintf(r.note, sizeof r.note, "%s", sla_last_error());
        return r;
    }
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.which = SLA_EIGSH_SA;
    o.method = SLA_EIGSH_LOBPCG;
    o.precond_solver = s;
    o.maxiter = 3000;
    result r = run(name, A, exact, &o, repeats);
    sla_solver_free(&s);
    return r;
}

int main(int argc, char **argv)
{
    int64_t m = argc > 1 ? atoll(argv[1]) : 256;
    int repeats = argc > 2 ? atoi(argv[2]) : 3;
    int with_lobpcg = argc > 3 ? atoi(argv[3]) : 1;
    sla_pattern *p;
    double *v;
    poisson(m, &p, &v);
    int64_t n = m * m;
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double *ev = malloc(sizeof(double) * m * m);
    for (int64_t i = 1; i <= m; i++)
        for (int64_t j = 1; j <= m; j++)
            ev[(i - 1) * m + j - 1] = 4 - 2 * cos(i * 3.14159265358979323846 / (m + 1)) - 2 * cos(j * 3.14159265358979323846 / (m + 1));
    qsort(ev, (size_t)(m * m), sizeof(double), cmp);

    /* the factorization alone, for reference */
    double tf[16];
    for (int q = 0; q < repeats && q < 16; q++) {
        sla_solver_options so;
        sla_solver_options_init(&so);
        so.method = SLA_METHOD_CHOLESKY;
        sla_solver *s = NULL;
        double t0 = now();
        if (sla_solver_create(&A, &so, &s) != SLA_OK) { fprintf(stderr, "%s\n", sla_last_error()); return 1; }
        tf[q] = now() - t0;
        sla_solver_free(&s);
    }
    qsort(tf, (size_t)repeats, sizeof(double), cmp);

    result R[8];
    int nr = 0;
    /* the three shift-invert runs interleaved (A B C A B C ...), so that the load of the shared
     * machine falls on all of them alike; the ratio is the median of the per-round ratios */
    sla_eigsh_options oi[3];
    const char *names[3] = {"lanczos_shift_invert", "lanczos_shift_invert_block1", "arpack_shift_invert"};
    for (int i = 0; i < 3; i++) {
        sla_eigsh_options_init(&oi[i]);
        oi[i].which = SLA_EIGSH_SA;
        oi[i].method = i == 2 ? SLA_EIGSH_ARPACK : SLA_EIGSH_LANCZOS;
        oi[i].block_size = i == 1 ? 1 : 0;
    }
    double tr[3][16], ratio[16];
    for (int q = 0; q < repeats && q < 16; q++)
        for (int i = 0; i < 3; i++) {
            result r = run(names[i], &A, ev, &oi[i], 1);
            tr[i][q] = r.t_med;
            if (q == 0) R[i] = r;
        }
    for (int i = 0; i < 3; i++) {
        for (int q = 0; q < repeats; q++) if (i == 0) ratio[q] = tr[0][q] / tr[2][q];
        qsort(tr[i], (size_t)repeats, sizeof(double), cmp);
        R[i].t_med = tr[i][repeats / 2];
        R[i].t_min = tr[i][0];
        R[i].t_max = tr[i][repeats - 1];
    }
    qsort(ratio, (size_t)repeats, sizeof(double), cmp);
    nr = 3;
    R[nr++] = run_prec("lobpcg_exact_inverse_precond", &A, ev, SLA_METHOD_CHOLESKY, SLA_PRECOND_AUTO, repeats);
    R[nr++] = run_prec("lobpcg_cg1_amg_precond", &A, ev, SLA_METHOD_CG, SLA_PRECOND_AMG, 1);
    R[nr++] = run_prec("lobpcg_cg1_ic0_precond", &A, ev, SLA_METHOD_CG, SLA_PRECOND_IC0, 1);
    if (with_lobpcg) {
        sla_eigsh_options o;
        sla_eigsh_options_init(&o);
        o.which = SLA_EIGSH_SA;
        o.method = SLA_EIGSH_LOBPCG;
        o.maxiter = 3000;
        R[nr++] = run("lobpcg_no_precond", &A, ev, &o, 1);
    }

    printf("{\n  \"benchmark\": \"eigsh\",\n  \"problem\": \"2D Poisson 5-point, %lld x %lld grid, "
           "n = %lld, k = %d smallest (SA), tol 1e-10 on |Av - lv|/|A|_1\",\n", (long long)m,
           (long long)m, (long long)n, K);
    printf("  \"repeats\": %d,\n  \"cholesky_factorization_s\": {\"median\": %.4f, \"min\": %.4f, "
           "\"max\": %.4f},\n", repeats, tf[repeats / 2], tf[0], tf[repeats - 1]);
    printf("  \"runs\": [\n");
    for (int i = 0; i < nr; i++) print(&R[i], i == nr - 1);
    printf("  ],\n");
    if (R[0].ok && R[2].ok)
        printf("  \"ratios\": {\"lanczos_over_arpack_time_median_of_rounds\": %.3f, \"min\": %.3f, "
               "\"max\": %.3f, \"lanczos_over_arpack_ops\": %.3f, \"lanczos_minus_factorization_s\": %.4f, "
               "\"arpack_minus_factorization_s\": %.4f}\n", ratio[repeats / 2], ratio[0],
               ratio[repeats - 1], (double)R[0].ops / (double)R[2].ops, R[0].t_med - tf[repeats / 2],
               R[2].t_med - tf[repeats / 2]);
    else
        printf("  \"ratios\": {}\n");
    printf("}\n");
    free(v);
    free(ev);
    sla_pattern_free(&p);
    return 0;
}
