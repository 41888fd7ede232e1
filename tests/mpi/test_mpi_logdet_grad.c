/* The distributed log-determinant gradient (sla_dist_lu_logdet_grad), both methods (parallel
 * MUMPS and the gather to rank 0), against serial libsla's sla_solver_logdet_grad (taken to
 * every rank's COO order) and against central finite differences of L = Σ_b g_b log|det A_b|
 * through the distributed LU's own logdet: a nonsymmetric perturbed Poisson, pores_1 (real
 * nonsymmetric), nos6 − 200·I (symmetric indefinite), 2D Poisson, batches with weights, random
 * and contiguous ownership, a rank with no rows, float32; a singular matrix refused on every
 * rank by both; the method not agreed refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"
#include "sla/mpi_config.h"
#include "sla/solver.h"

/* libsla_mpi's test hook (src/mpi/lu.h): entries per MUMPS selected-inverse call */
int64_t dist_test_pmumps_chunk(int64_t entries);

static double worst_serial, worst_fd;

/* the methods this build can run: the gather always, MUMPS where parallel MUMPS loads */
static int nmethods;
static sla_dist_logdet_grad_method methods[2];
static const char *const method_name[3] = {"auto", "MUMPS", "gather"};

typedef struct setup {
    const mt_coo *A;
    int64_t B, n;               /* batch, entries handed in here */
    int64_t *row, *col;
    double *val;                /* [B][n] this rank's COO values */
    sla_dist_pattern *P;
    double *lv;                 /* [B][nnz_local] */
} setup;

static double value(const mt_coo *A, int64_t b, int64_t e)
{
    return A->val[e] * (1 + 0.25 * b) + (A->row[e] == A->col[e] ? 0.5 * b * fabs(A->val[e]) : 0);
}

static void make(setup *S, const mt_coo *A, sla_dist_layout *L, int64_t B)
{
    memset(S, 0, sizeof *S);
    S->A = A; S->B = B;
    int64_t cap = A->nnz / mt_size + 1;
    S->row = malloc((size_t)cap * sizeof *S->row);
    S->col = malloc((size_t)cap * sizeof *S->col);
    S->val = malloc((size_t)(cap * B) * sizeof *S->val);
    for (int64_t e = mt_rank; e < A->nnz; e += mt_size) S->n++;
    for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++) {
        S->row[i] = A->row[e];
        S->col[i] = A->col[e];
        for (int64_t b = 0; b < B; b++) S->val[b * S->n + i] = value(A, b, e);
    }
    MT_OK(sla_dist_pattern_from_coo(L, L, S->n, S->row, S->col, &S->P));
    S->lv = malloc((size_t)(B * sla_dist_pattern_nnz(S->P) + 1) * sizeof *S->lv);
    MT_OK(sla_dist_values_gather(S->P, SLA_FLOAT64, B, S->val, S->lv));
}

static void unmake(setup *S)
{
    sla_dist_pattern_free(&S->P);
    free(S->row); free(S->col); free(S->val); free(S->lv);
}

/* the serial gradient of the same batch in the global COO order [B][A->nnz] */
static void serial_grad(const mt_coo *A, int64_t B, const double *g, double *dcoo)
{
    sla_pattern *p = NULL;
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, &p));
    int64_t nnz = sla_pattern_nnz(p);
    double *coo = malloc((size_t)(A->nnz * B + 1) * sizeof *coo);
    double *csr = malloc((size_t)(nnz * B + 1) * sizeof *csr);
    double *dcsr = malloc((size_t)(nnz * B + 1) * sizeof *dcsr);
    for (int64_t b = 0; b < B; b++)
        for (int64_t e = 0; e < A->nnz; e++) coo[b * A->nnz + e] = value(A, b, e);
    MT_OK(sla_values_gather(p, SLA_FLOAT64, B, coo, csr));
    sla_matrix M = sla_matrix_view(p, SLA_FLOAT64, B, csr);
    sla_solver_options o;
    sla_solver_options_init(&o);
    o.method = SLA_METHOD_LU;
    sla_solver *s = NULL;
    MT_OK(sla_solver_create(&M, &o, &s));
    MT_OK(sla_solver_logdet_grad(s, g, dcsr));
    MT_OK(sla_values_scatter(p, SLA_FLOAT64, B, dcsr, dcoo));
    sla_solver_free(&s);
    sla_pattern_free(&p);
    free(coo); free(csr); free(dcsr);
}

/* L = Σ_b g_b log|det A_b| of the current COO values, by a fresh distributed LU */
static double loss(setup *S, const double *g)
{
    MT_OK(sla_dist_values_gather(S->P, SLA_FLOAT64, S->B, S->val, S->lv));
    sla_dist_matrix D = sla_dist_matrix_view(S->P, SLA_FLOAT64, S->B, S->lv);
    sla_dist_lu *F = NULL;
    double sg[4] = {0}, l[4] = {0}, L = 0;
    MT_OK(sla_dist_lu_create(&D, &F));
    if (F) MT_OK(sla_dist_lu_logdet(F, sg, l));
    sla_dist_lu_free(&F);
    for (int64_t b = 0; b < S->B; b++) L += g[b] * l[b];
    return L;
}

/* gradient vs serial (all entries) and vs central differences (nfd entries of batch element
 * B − 1, relative steps) */
static void check(const char *what, const mt_coo *A, sla_dist_layout *L, int64_t B, int nfd)
{
    setup S;
    make(&S, A, L, B);
    double g[4] = {0.7, -1.3, 2.1, 0.4};
    int64_t nl = sla_dist_pattern_nnz(S.P);
    double *dv = malloc((size_t)(B * nl + 1) * sizeof *dv), *dvc = malloc((size_t)(B * S.n + 1) * sizeof *dvc);
    double *ds = malloc((size_t)(B * A->nnz) * sizeof *ds);
    serial_grad(A, B, g, ds);
    sla_dist_matrix D = sla_dist_matrix_view(S.P, SLA_FLOAT64, B, S.lv);
    sla_dist_lu *F = NULL;
    MT_OK(sla_dist_lu_create(&D, &F));
    double sv = mt_amax(ds, B * A->nnz) + 1e-300, es = 0;
    for (int k = 0; k < nmethods; k++) {     /* the last one (auto's choice) stays in dvc */
        for (int64_t t = 0; t < B * nl; t++) dv[t] = NAN;
        if (F) MT_OK(sla_dist_lu_logdet_grad_with(F, methods[k], g, dv));
        MT_OK(sla_dist_values_scatter(S.P, SLA_FLOAT64, B, dv, dvc));
        double ek = 0;
        for (int64_t b = 0; b < B; b++)
            for (int64_t e = mt_rank, i = 0; e < A->nnz; e += mt_size, i++) {
                double d = fabs(dvc[b * S.n + i] - ds[b * A->nnz + e]) / sv;
                if (!(d <= ek)) ek = isnan(d) ? INFINITY : d;   /* a slot not written fails */
            }
        ek = mt_max(ek);
        MT_CHECK(ek <= 1e-10, "%s, method %s: gradient vs serial %.3g", what,
                 method_name[methods[k]], ek);
        if (mt_rank == 0) printf("%s: method %s vs serial %.3g\n", what, method_name[methods[k]], ek);
        es = fmax(es, ek);
    }
    sla_dist_lu_free(&F);
    /* central differences in single values of the last batch element */
    double efd = 0;
    uint64_t seed = 17;
    for (int t = 0; t < nfd; t++) {
        int64_t e = (int64_t)((mt_rand(&seed) + 1) / 2 * (double)A->nnz) % A->nnz;
        int owner = (int)(e % mt_size);
        int64_t i = e / mt_size, b = B - 1;
        double a = value(A, b, e), h = 1e-5 * fmax(fabs(a), 1e-3), grad = 0;
        if (mt_rank == owner) { grad = dvc[b * S.n + i]; S.val[b * S.n + i] = a + h; }
        double Lp = loss(&S, g);
        if (mt_rank == owner) S.val[b * S.n + i] = a - h;
        double Lm = loss(&S, g);
        if (mt_rank == owner) S.val[b * S.n + i] = a;
        MPI_Bcast(&grad, 1, MPI_DOUBLE, owner, MPI_COMM_WORLD);
        double fd = (Lp - Lm) / (2 * h), err = fabs(fd - grad) / sv;
        efd = fmax(efd, err);
    }
    MT_CHECK(efd <= 1e-6, "%s: gradient vs central differences %.3g", what, efd);
    worst_serial = fmax(worst_serial, es);
    worst_fd = fmax(worst_fd, efd);
    if (mt_rank == 0) printf("%s: vs central differences %.3g\n", what, efd);
    free(dv); free(dvc); free(ds);
    unmake(&S);
}

/* float32 values: factored in float64, the gradient returned in float32 */
static void check_f32(const mt_coo *A, sla_dist_layout *L)
{
    setup S;
    make(&S, A, L, 1);
    int64_t nl = sla_dist_pattern_nnz(S.P);
    float *lv = malloc((size_t)(nl + 1) * sizeof *lv), *dv = malloc((size_t)(nl + 1) * sizeof *dv);
    double *dd = malloc((size_t)(nl + 1) * sizeof *dd), one = 1;
    for (int64_t s = 0; s < nl; s++) { lv[s] = (float)S.lv[s]; S.lv[s] = lv[s]; }
    sla_dist_matrix D = sla_dist_matrix_view(S.P, SLA_FLOAT32, 1, lv);
    sla_dist_matrix D64 = sla_dist_matrix_view(S.P, SLA_FLOAT64, 1, S.lv);
    sla_dist_lu *F = NULL, *F64 = NULL;
    MT_OK(sla_dist_lu_create(&D, &F));
    if (F) MT_OK(sla_dist_lu_logdet_grad(F, &one, dv));
    sla_dist_lu_free(&F);
    MT_OK(sla_dist_lu_create(&D64, &F64));
    if (F64) MT_OK(sla_dist_lu_logdet_grad(F64, NULL, dd));
    double e = 0, sc = 0;
    for (int64_t s = 0; s < nl; s++) { e = fmax(e, fabs(dv[s] - dd[s])); sc = fmax(sc, fabs(dd[s])); }
    e = mt_max(e) / (mt_max(sc) + 1e-300);
    MT_CHECK(e <= 1e-6, "float32: gradient vs float64 %.3g", e);
    if (mt_rank == 0) printf("float32: vs float64 %.3g\n", e);
    sla_dist_lu_free(&F);
    sla_dist_lu_free(&F64);
    free(lv); free(dv); free(dd);
    unmake(&S);
}

/* a Neumann Laplacian (rows sum to zero): SLA_ESINGULAR on every rank, never a gradient */
static void singular(void)
{
    mt_coo A;
    mt_poisson2d(8, 6, &A);
    for (int64_t e = 0; e < A.nnz; e++)
        if (A.row[e] == A.col[e]) {
            double s = 0;
            for (int64_t f = 0; f < A.nnz; f++) if (A.row[f] == A.row[e] && f != e) s += A.val[f];
            A.val[e] = -s;
        }
    sla_dist_layout *L = mt_random_layout(A.m, 3);
    setup S;
    make(&S, &A, L, 1);
    sla_dist_matrix D = sla_dist_matrix_view(S.P, SLA_FLOAT64, 1, S.lv);
    sla_dist_lu *F = NULL;
    MT_OK(sla_dist_lu_create(&D, &F));
    double *dv = malloc((size_t)(sla_dist_pattern_nnz(S.P) + 1) * sizeof *dv);
    for (int k = 0; k < nmethods; k++) {
        sla_status st = F ? sla_dist_lu_logdet_grad_with(F, methods[k], NULL, dv) : SLA_OK;
        int64_t agree = mt_sum(st == SLA_ESINGULAR);
        MT_CHECK(agree == mt_size, "singular, method %s: status %d on this rank (%s), %lld ranks "
                 "say ESINGULAR", method_name[methods[k]], (int)st, sla_last_error(),
                 (long long)agree);
        if (mt_rank == 0) printf("singular, method %s: %s\n", method_name[methods[k]], sla_last_error());
    }
    /* the method must be the same on every rank: refused everywhere, naming it */
    if (mt_size > 1 && F) {
        sla_status st = sla_dist_lu_logdet_grad_with(F, mt_rank == 1 ? SLA_DIST_LOGDET_GRAD_GATHER
                                                                     : SLA_DIST_LOGDET_GRAD_AUTO,
                                                     NULL, dv);
        int64_t agree = mt_sum(st == SLA_ESHAPE && strstr(sla_last_error(), "method = 2 on rank 1"));
        MT_CHECK(agree == mt_size, "method not agreed: status %d (%s)", (int)st, sla_last_error());
        if (mt_rank == 0) printf("method not agreed: %s\n", sla_last_error());
    }
    sla_dist_lu_free(&F);
    free(dv);
    unmake(&S);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
}

/* all rows on the ranks below the last one (the last has none) */
static sla_dist_layout *empty_last(int64_t N)
{
    int64_t q = mt_size > 1 ? mt_size - 1 : 1, n = 0;
    if (mt_rank < q) n = N / q + (mt_rank < N % q);
    sla_dist_layout *L = NULL;
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, N, n, &L));
    return L;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (!sla_dist_have_superlu()) {
        if (mt_rank == 0) printf("test_mpi_logdet_grad: no SuperLU_DIST: skipped\n");
        return mt_finish("test_mpi_logdet_grad");
    }
    methods[nmethods++] = SLA_DIST_LOGDET_GRAD_GATHER;
    if (sla_dist_have_parallel_mumps()) methods[nmethods++] = SLA_DIST_LOGDET_GRAD_MUMPS;
    /* a build configured with parallel MUMPS must use it: auto never falls back silently here */
    MT_CHECK(!SLA_HAVE_PMUMPS || sla_dist_have_parallel_mumps(), "parallel MUMPS was found at "
             "configure time but does not load");
    if (mt_rank == 0) printf("parallel MUMPS: %s\n", sla_dist_have_parallel_mumps() ? "yes" : "no");
    mt_coo A;
    mt_poisson2d(9, 7, &A);
    uint64_t seed = 5;
    for (int64_t e = 0; e < A.nnz; e++) A.val[e] += 0.3 * mt_rand(&seed);   /* nonsymmetric */
    sla_dist_layout *L = mt_random_layout(A.m, 4);
    check("perturbed Poisson 9x7, random ownership, batch 3", &A, L, 3, 6);
    check_f32(&A, L);
    /* MUMPS's entries requested in chunks of 5 (the default is 2^20): 57 calls per batch
     * element, chunks that straddle ranks and ranks with nothing in a chunk */
    if (sla_dist_have_parallel_mumps()) {
        dist_test_pmumps_chunk(5);
        check("perturbed Poisson 9x7, random ownership, batch 3, MUMPS in chunks of 5", &A, L, 3, 2);
        dist_test_pmumps_chunk(0);
    }
    sla_dist_layout_free(&L);
    L = empty_last(A.m);
    check("perturbed Poisson 9x7, last rank without rows, batch 2", &A, L, 2, 4);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
    mt_poisson2d(12, 10, &A);
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, A.m, -1, &L));
    check("Poisson 12x10, contiguous, batch 2", &A, L, 2, 4);
    sla_dist_layout_free(&L);
    mt_coo_free(&A);
    if (mt_load("pores_1.mtx", &A)) {
        L = mt_random_layout(A.m, 9);
        check("pores_1, random ownership, batch 2", &A, L, 2, 6);
        sla_dist_layout_free(&L);
        mt_coo_free(&A);
    }
    /* symmetric indefinite: nos6 − 200·I (nos6's spectrum spans 1 … 7.65e6). hangGlider_2
     * (the KKT matrix, 733 zero diagonals) is not usable here: SuperLU_DIST's static pivoting
     * meets tiny pivots on it, so F itself calls it singular (rcond ~ 4e-24). No central
     * differences: with entries up to 1e6 and eigenvalues near the shift, a relative step's
     * truncation error (~5e-4) exceeds any useful bound; the serial gradient is the oracle */
    if (mt_load("nos6.mtx", &A)) {
        for (int64_t e = 0; e < A.nnz; e++) if (A.row[e] == A.col[e]) A.val[e] -= 200;
        L = empty_last(A.m);
        check("nos6 - 200 I (symmetric indefinite), last rank without rows", &A, L, 1, 0);
        sla_dist_layout_free(&L);
        mt_coo_free(&A);
    }
    singular();
    if (mt_rank == 0)
        printf("test_mpi_logdet_grad: worst vs serial %.3g, vs central differences %.3g\n",
               worst_serial, worst_fd);
    return mt_finish("test_mpi_logdet_grad");
}
