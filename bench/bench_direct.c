/* Benchmark of the symmetric direct solvers (one JSON object on stdout).
 *
 *   poisson2d      2D 5-point Poisson at 10⁴, 10⁵, 10⁶ unknowns: analysis, factorization and
 *                  solve times of method cholesky against the raw CHOLMOD calls
 *                  (cholmod_analyze / cholmod_factorize / cholmod_solve2 in the same program,
 *                  same settings), the overhead ratios, and the peak RSS of each (every variant
 *                  runs in its own child process so that ru_maxrss is its own).
 *   training_step  62 × 62 grid (3844 unknowns): refactor + solve + solve_vjp (one transposed
 *                  solve + the pattern outer product) per step, averaged over many steps, against
 *                  raw CHOLMOD (factorize + 2 solves); also without the dvalues outer product
 *                  (the numeric work of the raw loop plus sla's checks).
 *   logdet_grad    128 × 128 grid (16384 unknowns): gradient of log|det| (supernodal selected
 *                  inverse) as a multiple of the factorization time; the same through MUMPS's
 *                  ICNTL(30) selected inverse (method ldlt) for comparison.
 *   orderings      AMD against METIS (CHOLMOD) on 2D/3D Poisson and the shared matrices: ordering +
 *                  analysis time, nnz(L), flops, factorization time, and what AUTO picks.
 *
 * Usage: bench_direct [--quick] [--no-orderings] [--max-n N] [--clock cpu]. Times are medians over
 * repeats with [min, max] as the spread (the machine is shared: compare within one run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cholmod.h>
#include <omp.h>

#include "sla/sla.h"

/* private cost query (src/direct/direct.h), exported for tests and benchmarks */
sla_status sla_cholmod_analyze_cost(const sla_matrix *A, sla_ordering ordering, double *nnz_L,
                                    double *flops);

/* wall clock by default; --clock cpu: process CPU time, which on a loaded machine is far less
 * noisy for single-threaded runs (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1) */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now(void)
{
    struct timespec t;
    clock_gettime(bench_clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stat3 { double med, min, max; } stat3;

static stat3 summarize(double *t, int r)
{
    qsort(t, (size_t)r, sizeof(double), cmp_double);
    stat3 s = {t[r / 2], t[0], t[r - 1]};
    return s;
}

static void die(const char *what, sla_status st)
{
    fprintf(stderr, "bench_direct: %s failed: %s (%s)\n", what, sla_status_string(st), sla_last_error());
    exit(1);
}
#define CHECK(expr) do { sla_status st_ = (expr); if (st_ < 0) die(#expr, st_); } while (0)

/* A solver of method on (p, v), batch 1, float64 (exits on error). */
static sla_solver *make_solver(const sla_pattern *p, const double *v, sla_method method,
                               sla_ordering ordering)
{
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = method;
    o.ordering = ordering;
    sla_solver *s = NULL;
    CHECK(sla_solver_create(&A, &o, &s));
    return s;
}

/* ----------------------------------------------------------------------------------------- */
/* Matrices                                                                                   */
/* ----------------------------------------------------------------------------------------- */

/* d-dimensional (2 or 3) 2d+1-point Poisson on an m^d grid: CSR pattern and values. */
static void poisson(int d, int64_t m, sla_pattern **p, double **values)
{
    int64_t n = d == 2 ? m * m : m * m * m, cap = (2 * d + 1) * n, k = 0;
    int64_t *rp = malloc(sizeof(int64_t) * (size_t)(n + 1)), *ci = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    int64_t stride[3] = {1, m, m * m};
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c[3] = {i % m, (i / m) % m, i / (m * m)};
        for (int dir = d - 1; dir >= 0; dir--)
            if (c[dir] > 0) { ci[k] = i - stride[dir]; v[k++] = -1; }
        ci[k] = i; v[k++] = 2.0 * d;
        for (int dir = 0; dir < d; dir++)
            if (c[dir] < m - 1) { ci[k] = i + stride[dir]; v[k++] = -1; }
        rp[i + 1] = k;
    }
    CHECK(sla_pattern_from_csr(n, n, rp, ci, p));
    *values = v;    /* CSR order given = sorted per row: the pattern's order */
    free(rp);
    free(ci);
}

/* The upper CSC triangle (= lower CSR triangle) of a symmetric pattern, as raw CHOLMOD input. */
static cholmod_sparse *raw_upper(const sla_pattern *p, const double *v, cholmod_common *cm)
{
    int64_t n = sla_pattern_nrows(p), k = 0, nz = 0;
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) nz += ci[s] <= i;
    cholmod_sparse *A = cholmod_l_allocate_sparse((size_t)n, (size_t)n, (size_t)nz, 1, 1, 1,
                                                  CHOLMOD_REAL, cm);
    int64_t *Ap = A->p, *Ai = A->i;
    double *Ax = A->x;
    Ap[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t s = rp[i]; s < rp[i + 1]; s++)
            if (ci[s] <= i) { Ai[k] = ci[s]; Ax[k++] = v[s]; }
        Ap[i + 1] = k;
    }
    return A;
}

/* ----------------------------------------------------------------------------------------- */
/* Poisson: sla against raw CHOLMOD, interleaved in one process (the machine is shared: drift  */
/* hits both alike); peak memory from separate child processes                                 */
/* ----------------------------------------------------------------------------------------- */

/* create = analysis + first factorization (allocates the factor); factor = a refactorization on
 * the allocated factor (the training-loop path); solve = one right-hand side */
typedef struct times {
    double create[32], factor[32], solve[32];
} times;

typedef struct raw_state {
    cholmod_common cm;
    cholmod_sparse *A;
    cholmod_factor *L;
    cholmod_dense *B, *X, *Y, *E;
} raw_state;

static void raw_init(raw_state *r, const sla_pattern *p, const double *v)
{
    memset(r, 0, sizeof *r);
    cholmod_l_start(&r->cm);
    r->cm.print = 0;
    r->cm.final_ll = 1;                          /* the settings sla uses: CHOLMOD's */
                                                 /* simplicial/supernodal rule, LLᵀ */
    r->A = raw_upper(p, v, &r->cm);
    int64_t n = sla_pattern_nrows(p);
    r->B = cholmod_l_ones((size_t)n, 1, CHOLMOD_REAL, &r->cm);
    double *bx = r->B->x;
    for (int64_t i = 0; i < n; i++) bx[i] = 1.0 + (double)(i % 7);
}

static void raw_free(raw_state *r)
{
    cholmod_l_free_factor(&r->L, &r->cm);
    cholmod_l_free_dense(&r->X, &r->cm);
    cholmod_l_free_dense(&r->Y, &r->cm);
    cholmod_l_free_dense(&r->E, &r->cm);
    cholmod_l_free_dense(&r->B, &r->cm);
    cholmod_l_free_sparse(&r->A, &r->cm);
    cholmod_l_finish(&r->cm);
}

/* one round of the raw calls: analyze + factorize, factorize again, solve */
static void raw_round(raw_state *r, times *t, int k)
{
    cholmod_l_free_factor(&r->L, &r->cm);
    double t0 = now();
    r->L = cholmod_l_analyze(r->A, &r->cm);
    cholmod_l_factorize(r->A, r->L, &r->cm);
    t->create[k] = now() - t0;
    t0 = now();
    cholmod_l_factorize(r->A, r->L, &r->cm);
    t->factor[k] = now() - t0;
    t0 = now();
    cholmod_l_solve2(CHOLMOD_A, r->L, r->B, NULL, &r->X, NULL, &r->Y, &r->E, &r->cm);
    t->solve[k] = now() - t0;
}

/* one round through sla: create (analysis + factorization), refactor, solve */
static sla_solver *sla_round(const sla_pattern *p, const double *v, sla_solver *old, times *t,
                             int k, const double *b, double *x)
{
    sla_solver_free(&old);
    double t0 = now();
    sla_solver *s = make_solver(p, v, SLA_METHOD_CHOLESKY, SLA_ORDERING_AUTO);
    t->create[k] = now() - t0;
    t0 = now();
    CHECK(sla_solver_refactor(s, v));
    t->factor[k] = now() - t0;
    t0 = now();
    CHECK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
    t->solve[k] = now() - t0;
    return s;
}

typedef struct result {
    stat3 create, factor, solve;
    double nnz_L, first_create, peak_mb;
    char ordering[32];
} result;

/* "simplicial, AMD" from "cholesky (CHOLMOD 3.0.14 simplicial, AMD): ..." */
static void describe_ordering(const sla_solver *s, char *out, size_t len)
{
    const char *d = sla_solver_describe(s), *c = strstr(d, "CHOLMOD ");
    c = c ? strchr(c + 8, ' ') : NULL;
    snprintf(out, len, "%.*s", c ? (int)strcspn(c + 1, ")") : 0, c ? c + 1 : "");
}

/* Timings of both, interleaved: reps rounds of (sla, raw). */
static void time_both(int64_t m, int reps, result *rs, result *rr)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    poisson(2, m, &p, &v);
    int64_t n = sla_pattern_nrows(p);
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 7);
    times ts, tr;
    raw_state raw;
    raw_init(&raw, p, v);
    double t0 = now();
    sla_solver *s = sla_round(p, v, NULL, &ts, 0, b, x);   /* first create: builds caches */
    rs->first_create = now() - t0;
    for (int k = 0; k < reps; k++) {
        s = sla_round(p, v, s, &ts, k, b, x);
        raw_round(&raw, &tr, k);
    }
    rs->create = summarize(ts.create, reps);
    rs->factor = summarize(ts.factor, reps);
    rs->solve = summarize(ts.solve, reps);
    rr->create = summarize(tr.create, reps);
    rr->factor = summarize(tr.factor, reps);
    rr->solve = summarize(tr.solve, reps);
    rs->nnz_L = rr->nnz_L = raw.cm.lnz;
    describe_ordering(s, rs->ordering, sizeof rs->ordering);
    snprintf(rr->ordering, sizeof rr->ordering, "%s, %s", raw.L->is_super ? "supernodal" : "simplicial",
             raw.L->ordering == CHOLMOD_METIS ? "METIS" : raw.L->ordering == CHOLMOD_AMD ? "AMD" : "other");
    sla_solver_free(&s);
    raw_free(&raw);
    sla_pattern_free(&p);
    free(v); free(b); free(x);
}

/* Peak RSS (MB) of a child that builds the matrix and runs one create + solve (sla = 1) or one
 * analyze + factorize + solve (raw). */
static double peak_in_child(int64_t m, int sla)
{
    int fd[2];
    double mb = 0;
    if (pipe(fd) != 0) { perror("pipe"); exit(1); }
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        sla_pattern *p = NULL;
        double *v = NULL;
        poisson(2, m, &p, &v);
        int64_t n = sla_pattern_nrows(p);
        double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < n; i++) b[i] = 1;
        times t;
        if (sla) {
            sla_solver *s = sla_round(p, v, NULL, &t, 0, b, x);
            sla_solver_free(&s);
        } else {
            raw_state r;
            raw_init(&r, p, v);
            raw_round(&r, &t, 0);
            raw_free(&r);
        }
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        mb = (double)ru.ru_maxrss / 1024.0;
        if (write(fd[1], &mb, sizeof mb) != (ssize_t)sizeof mb) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (read(fd[0], &mb, sizeof mb) != (ssize_t)sizeof mb) { fprintf(stderr, "child failed\n"); exit(1); }
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return mb;
}

static void print_stat(const char *name, stat3 s, int comma)
{
    printf("\"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}%s", name, s.med, s.min, s.max,
           comma ? ", " : "");
}

static void print_result(const char *name, const result *r, int with_first)
{
    printf("      \"%s\": {", name);
    print_stat("analysis_plus_factor_s", r->create, 1);
    print_stat("refactor_s", r->factor, 1);
    print_stat("solve_s", r->solve, 1);
    if (with_first) printf("\"first_create_s\": %.6g, ", r->first_create);
    printf("\"ordering\": \"%s\", \"peak_rss_mb\": %.1f}", r->ordering, r->peak_mb);
}

static void bench_poisson(int64_t max_n)
{
    int64_t sizes[] = {100, 316, 1000};
    int reps_of[] = {31, 11, 5};
    /* memory first, in children forked before this process starts any OpenMP or BLAS threads
     * (a child of a multithreaded OpenMP process may not use OpenMP) */
    double peak_sla[3] = {0}, peak_raw[3] = {0};
    for (int k = 0; k < 3; k++) {
        if (sizes[k] * sizes[k] > max_n) continue;
        peak_sla[k] = peak_in_child(sizes[k], 1);
        peak_raw[k] = peak_in_child(sizes[k], 0);
    }
    printf("  \"poisson2d\": [\n");
    int first = 1;
    for (int k = 0; k < 3; k++) {
        int64_t m = sizes[k];
        if (m * m > max_n) continue;
        result s, raw;
        memset(&s, 0, sizeof s);
        memset(&raw, 0, sizeof raw);
        s.peak_mb = peak_sla[k];
        raw.peak_mb = peak_raw[k];
        time_both(m, reps_of[k], &s, &raw);
        printf("%s    {\"grid\": \"%lldx%lld\", \"n\": %lld, \"nnz_L\": %.0f, \"rounds\": %d,\n",
               first ? "" : ",\n", (long long)m, (long long)m, (long long)(m * m), raw.nnz_L,
               reps_of[k]);
        first = 0;
        print_result("sla", &s, 1);
        printf(",\n");
        print_result("raw_cholmod", &raw, 0);
        printf(",\n      \"overhead_median\": {\"analysis_plus_factor\": %.4f, \"refactor\": %.4f, \"solve\": %.4f},"
               "\n      \"overhead_min\": {\"analysis_plus_factor\": %.4f, \"refactor\": %.4f, \"solve\": %.4f},"
               " \"overhead_peak_rss\": %.4f}",
               s.create.med / raw.create.med - 1, s.factor.med / raw.factor.med - 1,
               s.solve.med / raw.solve.med - 1, s.create.min / raw.create.min - 1,
               s.factor.min / raw.factor.min - 1, s.solve.min / raw.solve.min - 1,
               s.peak_mb / raw.peak_mb - 1);
        fflush(stdout);
    }
    printf("\n  ],\n");
}

/* ----------------------------------------------------------------------------------------- */
/* Training step: refactor + solve + solve_vjp                                                 */
/* ----------------------------------------------------------------------------------------- */

static void bench_training(int steps)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    poisson(2, 62, &p, &v);
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    double *w = malloc(sizeof(double) * (size_t)nnz), *b = malloc(sizeof(double) * (size_t)n);
    double *x = malloc(sizeof(double) * (size_t)n), *g = malloc(sizeof(double) * (size_t)n);
    double *db = malloc(sizeof(double) * (size_t)n), *dv = malloc(sizeof(double) * (size_t)nnz);
    int64_t *diag = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        b[i] = 1.0 + (double)(i % 5);
        g[i] = 0.5 - (double)(i % 3);
        diag[i] = sla_pattern_find(p, i, i);
    }
    sla_solver *s = make_solver(p, v, SLA_METHOD_CHOLESKY, SLA_ORDERING_AUTO);
    /* raw CHOLMOD: factorize + solve + transposed solve (the same numeric work, without the
     * gradient assembly), values refilled the same way */
    cholmod_common cm;
    cholmod_l_start(&cm);
    cm.print = 0;
    cm.final_ll = 1;
    cholmod_sparse *R = raw_upper(p, v, &cm);
    cholmod_factor *L = cholmod_l_analyze(R, &cm);
    cholmod_dense *B = cholmod_l_ones((size_t)n, 1, CHOLMOD_REAL, &cm), *G = cholmod_l_ones((size_t)n, 1, CHOLMOD_REAL, &cm);
    cholmod_dense *X = NULL, *Y = NULL, *E = NULL, *Lam = NULL;
    memcpy(B->x, b, sizeof(double) * (size_t)n);
    memcpy(G->x, g, sizeof(double) * (size_t)n);
    double *rx = R->x;
    int64_t *Rp = R->p;
    double ts[9], tr[9], tn[9];
    for (int rep = 0; rep < 9; rep++) {
        for (int with_dv = 1; with_dv >= 0; with_dv--) {
            double t0 = now();
            for (int it = 0; it < steps; it++) {
                double shift = 1e-3 * (double)(it % 10);   /* new values every step */
                memcpy(w, v, sizeof(double) * (size_t)nnz);
                for (int64_t i = 0; i < n; i++) w[diag[i]] += shift;
                CHECK(sla_solver_refactor(s, w));
                CHECK(sla_solver_solve(s, SLA_OP_N, 1, b, x, NULL));
                CHECK(sla_solver_solve_vjp(s, SLA_OP_N, 1, x, g, db, with_dv ? dv : NULL, NULL));
            }
            (with_dv ? ts : tn)[rep] = (now() - t0) / steps;
        }
        double t0 = now();
        for (int it = 0; it < steps; it++) {
            double shift = 1e-3 * (double)(it % 10);
            for (int64_t j = 0; j < n; j++) rx[Rp[j + 1] - 1] = 4.0 + shift;  /* diagonal last */
            cholmod_l_factorize(R, L, &cm);
            cholmod_l_solve2(CHOLMOD_A, L, B, NULL, &X, NULL, &Y, &E, &cm);
            cholmod_l_solve2(CHOLMOD_A, L, G, NULL, &Lam, NULL, &Y, &E, &cm);
        }
        tr[rep] = (now() - t0) / steps;
    }
    stat3 a = summarize(ts, 9), r = summarize(tr, 9), an = summarize(tn, 9);
    printf("  \"training_step_62x62\": {\"n\": %lld, \"steps\": %d, \"rounds\": 9, ", (long long)n, steps);
    printf("\"sla_ms\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}, ", 1e3 * a.med, 1e3 * a.min, 1e3 * a.max);
    printf("\"sla_without_dvalues_ms\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}, ", 1e3 * an.med, 1e3 * an.min, 1e3 * an.max);
    printf("\"raw_cholmod_ms\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}, ", 1e3 * r.med, 1e3 * r.min, 1e3 * r.max);
    printf("\"overhead_median\": %.4f, \"overhead_min\": %.4f, \"overhead_without_dvalues_median\": %.4f},\n",
           a.med / r.med - 1, a.min / r.min - 1, an.med / r.med - 1);
    cholmod_l_free_factor(&L, &cm);
    cholmod_l_free_dense(&X, &cm); cholmod_l_free_dense(&Y, &cm); cholmod_l_free_dense(&E, &cm);
    cholmod_l_free_dense(&Lam, &cm); cholmod_l_free_dense(&B, &cm); cholmod_l_free_dense(&G, &cm);
    cholmod_l_free_sparse(&R, &cm);
    cholmod_l_finish(&cm);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(v); free(w); free(b); free(x); free(g); free(db); free(dv); free(diag);
}

/* ----------------------------------------------------------------------------------------- */
/* log|det| gradient                                                                           */
/* ----------------------------------------------------------------------------------------- */

static void time_logdet_grad(sla_method method, const sla_pattern *p, const double *v, int reps,
                             stat3 *factor, stat3 *grad)
{
    sla_solver *s = make_solver(p, v, method, SLA_ORDERING_AUTO);
    double *dv = malloc(sizeof(double) * (size_t)sla_pattern_nnz(p)), tf[16], tg[16];
    for (int k = 0; k < reps; k++) {
        double t0 = now();
        CHECK(sla_solver_refactor(s, v));
        tf[k] = now() - t0;
        t0 = now();
        CHECK(sla_solver_logdet_grad(s, NULL, dv));
        tg[k] = now() - t0;
    }
    *factor = summarize(tf, reps);
    *grad = summarize(tg, reps);
    sla_solver_free(&s);
    free(dv);
}

static void bench_logdet_grad(void)
{
    sla_pattern *p = NULL;
    double *v = NULL;
    poisson(2, 128, &p, &v);
    stat3 f, g, mf, mg;
    time_logdet_grad(SLA_METHOD_CHOLESKY, p, v, 9, &f, &g);
    printf("  \"logdet_grad_128x128\": {\"n\": %lld, \"cholesky\": {", (long long)sla_pattern_nrows(p));
    print_stat("factor_s", f, 1);
    print_stat("logdet_grad_s", g, 0);
    printf(", \"multiple_of_factor\": %.3f}", g.med / f.med);
    int have_mumps = 0;
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        sla_backend_get(i, &bi);
        if (strcmp(bi.name, "mumps") == 0) have_mumps = bi.available;
    }
    if (have_mumps) {
        time_logdet_grad(SLA_METHOD_LDLT, p, v, 3, &mf, &mg);
        printf(", \"ldlt_mumps_icntl30\": {");
        print_stat("factor_s", mf, 1);
        print_stat("logdet_grad_s", mg, 0);
        printf(", \"multiple_of_factor\": %.3f, \"vs_cholesky_selinv\": %.3f}", mg.med / mf.med,
               mg.med / g.med);
    }
    printf("},\n");
    sla_pattern_free(&p);
    free(v);
}

/* ----------------------------------------------------------------------------------------- */
/* Orderings                                                                                   */
/* ----------------------------------------------------------------------------------------- */

static void order_one(const char *name, const sla_pattern *p, const double *v, int last)
{
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    double lnz[SLA_ORDERING_COUNT] = {0}, fl[SLA_ORDERING_COUNT] = {0};
    double tan[SLA_ORDERING_COUNT] = {0}, tfac[SLA_ORDERING_COUNT] = {0};
    char chosen[64] = "";
    sla_ordering ords[] = {SLA_ORDERING_AUTO, SLA_ORDERING_AMD, SLA_ORDERING_METIS};
    for (int k = 0; k < 3; k++) {
        sla_ordering o = ords[k];
        double t0 = now();
        CHECK(sla_cholmod_analyze_cost(&A, o, &lnz[o], &fl[o]));
        tan[o] = now() - t0;
        sla_solver *s = make_solver(p, v, SLA_METHOD_CHOLESKY, o);
        double t[3];
        for (int r = 0; r < 3; r++) {
            t0 = now();
            CHECK(sla_solver_refactor(s, v));
            t[r] = now() - t0;
        }
        tfac[o] = summarize(t, 3).med;
        if (o == SLA_ORDERING_AUTO) describe_ordering(s, chosen, sizeof chosen);
        sla_solver_free(&s);
    }
    printf("    {\"matrix\": \"%s\", \"n\": %lld, \"nnz\": %lld, \"auto_picks\": \"%s\",\n", name,
           (long long)sla_pattern_nrows(p), (long long)sla_pattern_nnz(p), chosen);
    const char *lab[] = {"auto", "", "amd", "metis"};
    for (int k = 0; k < 3; k++) {
        sla_ordering o = ords[k];
        printf("      \"%s\": {\"analysis_s\": %.4g, \"nnz_L\": %.4g, \"flops\": %.4g, \"factor_s\": %.4g, "
               "\"analysis_plus_factor_s\": %.4g}%s\n", lab[o], tan[o], lnz[o], fl[o], tfac[o],
               tan[o] + tfac[o], k < 2 ? "," : "");
    }
    printf("    }%s\n", last ? "" : ",");
}

static void bench_orderings(int64_t max_n)
{
    printf("  \"orderings\": [\n");
    int64_t m2[] = {50, 100, 200, 400, 1000}, m3[] = {10, 20, 30, 45};
    char name[64];
    for (int k = 0; k < 5; k++) {
        if (m2[k] * m2[k] > max_n) continue;
        sla_pattern *p = NULL;
        double *v = NULL;
        poisson(2, m2[k], &p, &v);
        snprintf(name, sizeof name, "poisson2d %lldx%lld", (long long)m2[k], (long long)m2[k]);
        order_one(name, p, v, 0);
        sla_pattern_free(&p);
        free(v);
    }
    for (int k = 0; k < 4; k++) {
        if (m3[k] * m3[k] * m3[k] > max_n) continue;
        sla_pattern *p = NULL;
        double *v = NULL;
        poisson(3, m3[k], &p, &v);
        snprintf(name, sizeof name, "poisson3d %lld^3", (long long)m3[k]);
        order_one(name, p, v, 0);
        sla_pattern_free(&p);
        free(v);
    }
    const char *dir = getenv("SLA_MATRIX_DIR");
    if (!dir || !*dir) dir = SLA_MATRIX_DIR_DEFAULT;
    const char *files[] = {"1138_bus.mtx", "494_bus.mtx", "nos6.mtx", "bcsstk13.mtx", "Laplace3D10.mtx"};
    int nf = 5, printed = 0;
    for (int k = 0; k < nf; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        sla_pattern *p = NULL;
        void *v = NULL;
        if (sla_mm_read_matrix(path, SLA_FLOAT64, &p, &v, NULL, NULL) != SLA_OK) continue;
        order_one(files[k], p, v, 0);
        printed++;
        sla_pattern_free(&p);
        free(v);
    }
    /* closing element: the rule in force */
    printf("    {\"rule\": \"AUTO = CHOLMOD default: AMD; METIS also tried when AMD gives flops/nnz(L) >= 500 "
           "and nnz(L)/nnz(tril A) >= 5; the ordering with smaller nnz(L) is kept\"}\n  ],\n");
    (void)printed;
}

int main(int argc, char **argv)
{
    int quick = 0, orderings = 1;
    int64_t max_n = 1000000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) { quick = 1; max_n = 100000; }
        else if (strcmp(argv[i], "--no-orderings") == 0) orderings = 0;
        else if (strcmp(argv[i], "--max-n") == 0 && i + 1 < argc) max_n = atoll(argv[++i]);
        else if (strcmp(argv[i], "--clock") == 0 && i + 1 < argc)
            bench_clock = strcmp(argv[++i], "cpu") == 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
    }
    const char *obt = getenv("OPENBLAS_NUM_THREADS");
    printf("{\n  \"benchmark\": \"direct\", \"omp_threads\": %d, \"openblas_threads\": \"%s\", "
           "\"clock\": \"%s\", \"cholmod\": \"%d.%d.%d\",\n", sla_get_num_threads(), obt ? obt : "default",
           bench_clock == CLOCK_MONOTONIC ? "wall" : "process cpu", CHOLMOD_MAIN_VERSION,
           CHOLMOD_SUB_VERSION, CHOLMOD_SUBSUB_VERSION);
    fflush(stdout);
    bench_poisson(max_n);
    fflush(stdout);
    bench_training(quick ? 100 : 400);
    bench_logdet_grad();
    if (orderings) bench_orderings(max_n);
    printf("  \"done\": true\n}\n");
    return 0;
}
