/* The distributed eigsh (libsla's LOBPCG through sla_lobpcg_run) against serial sla_eigsh
 * (method lobpcg, the same which, k, block size and tolerance): eigenvalues to 1e-10
 * relative, eigenvectors up to sign (|⟨v_dist, v_serial⟩| ≥ 1 − 1e-10), the eigenvalue VJP
 * (dA, and dM of the generalized problem) to 1e-10 against sla_eigsh_vjp /
 * sla_eigsh_generalized_vjp; 2D Poisson against its closed-form eigenvalues; nos6 (Jacobi);
 * a diagonal M; random ownership and a rank without rows; batches; bit-identical reruns;
 * non-finite values on one rank. The eigenvector VJP: test_mpi_eigsh_vjp.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eigsh_common.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double worst_lam, worst_vec, worst_vjp;

/* Jacobi of the serial run: z = r / a_ii (the distributed precond = jacobi) */
typedef struct jac { const double *d; int64_t n; } jac;
static int jacobi_cb(void *ctx, sla_op op, int64_t b, const void *r, void *z)
{
    (void)op;
    const jac *j = ctx;
    for (int64_t i = 0; i < j->n; i++) ((double *)z)[i] = ((const double *)r)[i] / j->d[b * j->n + i];
    return 0;
}

typedef struct spec {
    const char *name;
    const mt_coo *A, *M;        /* M NULL: standard */
    sla_dist_layout *L;
    int64_t B, k, block;
    sla_eigsh_which which;
    int jacobi;
    const double *exact;        /* [k] closed-form eigenvalues (batch 0) or NULL */
    int rerun;                  /* check a second run bit for bit (each run costs ~40 rounds of
                                 * reductions, slow on an oversubscribed machine) */
} spec;

static void run(const spec *c)
{
    int64_t N = c->A->n, k = c->k, B = c->B, n = sla_dist_layout_local_size(c->L);
    const int64_t *g = sla_dist_layout_global(c->L);
    serial SA, SM;
    dist DA, DM;
    serial_make(&SA, c->A, B);
    dist_make(&DA, c->A, c->L, B);
    if (c->M) {
        serial_make(&SM, c->M, 1);
        dist_make(&DM, c->M, c->L, 1);
    }
    /* serial reference */
    sla_matrix A = sla_matrix_view(SA.p, SLA_FLOAT64, B, SA.csr), M;
    if (c->M) M = sla_matrix_view(SM.p, SLA_FLOAT64, 1, SM.csr);
    double *diag = calloc((size_t)(B * N), sizeof *diag);
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < N; i++) {
            int64_t q = slot_of(SA.p, i, i);
            diag[b * N + i] = q < 0 ? 0 : SA.csr[b * SA.nnz + q];
        }
    jac jc = {diag, N};
    sla_eigsh_options so;
    sla_eigsh_options_init(&so);
    so.which = c->which;
    so.method = SLA_EIGSH_LOBPCG;
    so.block_size = c->block;
    so.tol = 1e-12;
    if (c->M) so.M = &M;
    if (c->jacobi) { so.precond = jacobi_cb; so.precond_ctx = &jc; }
    double *ls = malloc((size_t)(B * k) * sizeof *ls), *Vs = malloc((size_t)(B * N * k) * sizeof *Vs);
    MT_OK(sla_eigsh(&A, k, &so, ls, Vs, NULL));

    /* distributed, twice */
    sla_dist_matrix Ad = sla_dist_matrix_view(DA.P, SLA_FLOAT64, B, DA.lv), Md;
    if (c->M) Md = sla_dist_matrix_view(DM.P, SLA_FLOAT64, 1, DM.lv);
    sla_dist_eigsh_options o;
    sla_dist_eigsh_options_init(&o);
    o.which = c->which;
    o.block_size = c->block;
    o.tol = 1e-12;
    if (c->M) o.M = &Md;
    if (c->jacobi) o.precond = SLA_DIST_PC_JACOBI;
    double *ld = malloc((size_t)(B * k) * sizeof *ld), *Vd = malloc((size_t)(B * n * k + 1) * sizeof *Vd);
    double *ld2 = malloc((size_t)(B * k) * sizeof *ld2), *Vd2 = malloc((size_t)(B * n * k + 1) * sizeof *Vd2);
    sla_eigsh_info info;
    MT_OK(sla_dist_eigsh(&Ad, k, &o, ld, Vd, &info));
    if (c->rerun) {
        MT_OK(sla_dist_eigsh(&Ad, k, &o, ld2, Vd2, NULL));
        MT_CHECK(memcmp(ld, ld2, sizeof(double) * (size_t)(B * k)) == 0 &&
                 memcmp(Vd, Vd2, sizeof(double) * (size_t)(B * n * k)) == 0,
                 "%s: rerun not bit-identical", c->name);
    }
    MT_CHECK(info.converged == k, "%s: %lld of %lld converged", c->name, (long long)info.converged,
             (long long)k);

    /* eigenvalues and eigenvectors */
    double el = 0;
    for (int64_t i = 0; i < B * k; i++) el = fmax(el, fabs(ld[i] - ls[i]) / fabs(ls[i]));
    for (int64_t i = 0; c->exact && i < k; i++)
        MT_CHECK(fabs(ld[i] - c->exact[i]) <= 1e-10 * fabs(c->exact[i]),
                 "%s: λ%lld = %.15g, closed form %.15g", c->name, (long long)i, ld[i], c->exact[i]);
    MT_CHECK(el <= 1e-10, "%s: eigenvalues differ from serial by %.3g relative", c->name, el);
    double *loc = calloc((size_t)(3 * B * k), sizeof *loc);
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < k; j++)
            for (int64_t i = 0; i < n; i++) {
                double vd = Vd[(b * n + i) * k + j], vs = Vs[(b * N + g[i]) * k + j];
                loc[(b * k + j) * 3] += vd * vs;
                loc[(b * k + j) * 3 + 1] += vd * vd;
                loc[(b * k + j) * 3 + 2] += vs * vs;
            }
    MPI_Allreduce(MPI_IN_PLACE, loc, (int)(3 * B * k), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double ev = 0;
    for (int64_t q = 0; q < B * k; q++)
        ev = fmax(ev, 1 - fabs(loc[3 * q]) / sqrt(loc[3 * q + 1] * loc[3 * q + 2]));
    MT_CHECK(ev <= 1e-10, "%s: eigenvectors differ from serial: 1 − |cos| = %.3g", c->name, ev);

    /* eigenvalue VJP */
    double *gl = malloc((size_t)(B * k) * sizeof *gl);
    mt_fill(gl, B * k, 77);
    double *dAs = malloc((size_t)(B * SA.nnz + 1) * sizeof *dAs), *dAd = malloc((size_t)(B * DA.nnz + 1) * sizeof *dAd);
    double ej = 0;
    if (c->M) {
        double *dMs = malloc((size_t)(SM.nnz + 1) * sizeof *dMs), *dMd = malloc((size_t)(DM.nnz + 1) * sizeof *dMd);
        MT_OK(sla_eigsh_generalized_vjp(&A, &M, k, ls, Vs, gl, NULL, dAs, dMs));
        MT_OK(sla_dist_eigsh_vjp(&Ad, &Md, k, ld, Vd, gl, NULL, dAd, dMd));
        ej = fmax(slots_error(&DA, &SA, B, dAd, dAs), slots_error(&DM, &SM, 1, dMd, dMs));
        free(dMs); free(dMd);
    } else {
        MT_OK(sla_eigsh_vjp(&A, k, ls, Vs, gl, NULL, dAs));
        MT_OK(sla_dist_eigsh_vjp(&Ad, NULL, k, ld, Vd, gl, NULL, dAd, NULL));
        ej = slots_error(&DA, &SA, B, dAd, dAs);
    }
    MT_CHECK(ej <= 1e-10, "%s: eigenvalue VJP differs from serial by %.3g", c->name, ej);
    if (mt_rank == 0)
        printf("%-28s ranks %d: λ %.2e, vectors %.2e, VJP %.2e, %lld iterations\n", c->name,
               mt_size, el, ev, ej, (long long)info.iterations);
    worst_lam = fmax(worst_lam, el);
    worst_vec = fmax(worst_vec, ev);
    worst_vjp = fmax(worst_vjp, ej);
    free(gl); free(dAs); free(dAd); free(loc); free(ld); free(Vd); free(ld2); free(Vd2);
    free(ls); free(Vs); free(diag);
    if (c->M) { serial_free(&SM); dist_free(&DM); }
    serial_free(&SA);
    dist_free(&DA);
}

/* closed-form eigenvalues 4 − 2cos(iπ/(nx+1)) − 2cos(jπ/(ny+1)), the k smallest or largest */
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void poisson_exact(int64_t nx, int64_t ny, int64_t k, int largest, double *out)
{
    double *w = malloc((size_t)(nx * ny) * sizeof *w);
    for (int64_t i = 1; i <= nx; i++)
        for (int64_t j = 1; j <= ny; j++)
            w[(i - 1) * ny + j - 1] = 4 - 2 * cos(i * M_PI / (nx + 1)) - 2 * cos(j * M_PI / (ny + 1));
    qsort(w, (size_t)(nx * ny), sizeof *w, cmp);
    for (int64_t q = 0; q < k; q++) out[q] = largest ? w[nx * ny - k + q] : w[q];
    free(w);
}

/* NaN in one rank's values: every rank gets SLA_ENONFINITE naming that rank */
static void nonfinite(const mt_coo *A, sla_dist_layout *L)
{
    dist D;
    dist_make(&D, A, L, 1);
    for (int r = 0; r < mt_size; r++) {
        int64_t nl = sla_dist_layout_local_size(L);
        double save = 0;
        if (mt_rank == r && D.nnz > 0 && nl > 0) { save = D.lv[D.nnz / 2]; D.lv[D.nnz / 2] = NAN; }
        sla_dist_matrix Ad = sla_dist_matrix_view(D.P, SLA_FLOAT64, 1, D.lv);
        double lam[3], *V = malloc((size_t)(3 * nl + 1) * sizeof *V);
        sla_status st = sla_dist_eigsh(&Ad, 3, NULL, lam, V, NULL);
        int had = mt_rank == r && D.nnz > 0 && nl > 0;
        int any = 0;
        MPI_Allreduce(&had, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        char want[32];
        snprintf(want, sizeof want, "rank %d", r);
        if (any)
            MT_CHECK(st == SLA_ENONFINITE && strstr(sla_last_error(), want),
                     "NaN on rank %d -> %d: %s", r, (int)st, sla_last_error());
        else
            MT_CHECK(st == SLA_OK, "no NaN (rank %d owns nothing) -> %d: %s", r, (int)st,
                     sla_last_error());
        if (had) D.lv[D.nnz / 2] = save;
        free(V);
    }
    dist_free(&D);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_coo P2;
    int64_t nx = 12, ny = 10, N = nx * ny;
    mt_poisson2d(nx, ny, &P2);
    double ex[6];
    sla_dist_layout *Lc = NULL, *Lr = mt_random_layout(N, 11), *Le = layout_empty0(N, 5);
    MT_OK(sla_dist_layout_create(MPI_COMM_WORLD, N, N / mt_size + (mt_rank < N % mt_size), &Lc));

    /* each solve is ~40 iterations of ~16 collectives: latency-bound when oversubscribed, so
     * every case covers several features */
    poisson_exact(nx, ny, 4, 0, ex);
    run(&(spec){"poisson SA contiguous", &P2, NULL, Lc, 1, 4, 8, SLA_EIGSH_SA, 0, ex, 1});
    run(&(spec){"poisson SA rank 0 empty", &P2, NULL, Le, 1, 4, 8, SLA_EIGSH_SA, 0, ex, 0});
    poisson_exact(nx, ny, 3, 1, ex);
    run(&(spec){"poisson LA jacobi random b2", &P2, NULL, Lr, 2, 3, 7, SLA_EIGSH_LA, 1, ex, 0});

    mt_coo Md;
    diag_mass(N, &Md);
    run(&(spec){"poisson generalized SA jacobi", &P2, &Md, Lr, 1, 4, 8, SLA_EIGSH_SA, 1, NULL, 0});
    run(&(spec){"poisson generalized LA", &P2, &Md, Le, 2, 3, 7, SLA_EIGSH_LA, 0, NULL, 1});
    mt_coo_free(&Md);

    mt_coo nos6;
    if (mt_load("nos6.mtx", &nos6)) {
        sla_dist_layout *L6 = mt_random_layout(nos6.n, 23);
        run(&(spec){"nos6 LA random", &nos6, NULL, L6, 1, 3, 7, SLA_EIGSH_LA, 0, NULL, 1});
        sla_dist_layout_free(&L6);
        mt_coo_free(&nos6);
    }

    const char *more[] = {"1138_bus.mtx", "bcsstk13.mtx"};
    for (int q = 0; q < 2; q++) {
        mt_coo R;
        if (!mt_load(more[q], &R)) continue;
        sla_dist_layout *LR = mt_random_layout(R.n, 29 + q);
        char name[64];
        snprintf(name, sizeof name, "%s LA", more[q]);
        run(&(spec){name, &R, NULL, LR, 1, 3, 7, SLA_EIGSH_LA, 0, NULL, 0});
        sla_dist_layout_free(&LR);
        mt_coo_free(&R);
    }

    nonfinite(&P2, Lr);

    sla_dist_layout_free(&Lc);
    sla_dist_layout_free(&Lr);
    sla_dist_layout_free(&Le);
    mt_coo_free(&P2);
    if (mt_rank == 0)
        printf("worst: eigenvalues %.3g, eigenvectors %.3g, VJP %.3g\n", worst_lam, worst_vec,
               worst_vjp);
    return mt_finish("test_mpi_eigsh");
}
