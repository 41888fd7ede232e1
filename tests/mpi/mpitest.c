/* Helpers of the MPI tests: failure bookkeeping, test matrices, references. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"
#include "testutil.h"

int mt_rank, mt_size;
static int failures;

void mt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
}

void mt_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d/%d] %s:%d: FAILED: %s\n", mt_rank, mt_size, file, line, msg);
    failures++;
}

int mt_failures(void) { return failures; }

int mt_finish(const char *name)
{
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (mt_rank == 0)
        printf("%s at %d ranks: %s (%d failed checks)\n", name, mt_size,
               total ? "FAILED" : "passed", total);
    MPI_Finalize();
    return total ? 1 : 0;
}

void mt_coo_free(mt_coo *A)
{
    free(A->row);
    free(A->col);
    free(A->val);
    memset(A, 0, sizeof *A);
}

static void coo_alloc(mt_coo *A, int64_t m, int64_t n, int64_t cap)
{
    A->m = m;
    A->n = n;
    A->nnz = 0;
    A->row = malloc((size_t)(cap ? cap : 1) * sizeof *A->row);
    A->col = malloc((size_t)(cap ? cap : 1) * sizeof *A->col);
    A->val = malloc((size_t)(cap ? cap : 1) * sizeof *A->val);
}

static void coo_add(mt_coo *A, int64_t i, int64_t j, double v)
{
    A->row[A->nnz] = i;
    A->col[A->nnz] = j;
    A->val[A->nnz++] = v;
}

void mt_poisson2d(int64_t nx, int64_t ny, mt_coo *A)
{
    coo_alloc(A, nx * ny, nx * ny, 5 * nx * ny);
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int64_t i = y * nx + x;
            coo_add(A, i, i, 4.0);
            if (x > 0) coo_add(A, i, i - 1, -1.0);
            if (x < nx - 1) coo_add(A, i, i + 1, -1.0);
            if (y > 0) coo_add(A, i, i - nx, -1.0);
            if (y < ny - 1) coo_add(A, i, i + nx, -1.0);
        }
}

void mt_poisson3d(int64_t nx, int64_t ny, int64_t nz, mt_coo *A)
{
    int64_t n = nx * ny * nz;
    coo_alloc(A, n, n, 7 * n);
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t i = (z * ny + y) * nx + x;
                coo_add(A, i, i, 6.0);
                if (x > 0) coo_add(A, i, i - 1, -1.0);
                if (x < nx - 1) coo_add(A, i, i + 1, -1.0);
                if (y > 0) coo_add(A, i, i - nx, -1.0);
                if (y < ny - 1) coo_add(A, i, i + nx, -1.0);
                if (z > 0) coo_add(A, i, i - nx * ny, -1.0);
                if (z < nz - 1) coo_add(A, i, i + nx * ny, -1.0);
            }
}

int mt_load(const char *name, mt_coo *A)
{
    const char *dir = getenv("SLA_MATRIX_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/work/shared/matrices", name);
    sla_coo *c = NULL;
    sla_status st = sla_mm_read(path, &c);
    if (st != SLA_OK) {
        if (mt_rank == 0) printf("note: %s not read (%s): skipped\n", path, sla_last_error());
        memset(A, 0, sizeof *A);
        return 0;
    }
    coo_alloc(A, c->nrows, c->ncols, c->nnz);
    for (int64_t k = 0; k < c->nnz; k++) coo_add(A, c->row[k], c->col[k], c->values[k]);
    sla_coo_free(&c);
    return 1;
}

void mt_serial(const mt_coo *A, sla_pattern **p, double **csr)
{
    MT_OK(sla_pattern_from_coo(A->m, A->n, A->nnz, A->row, A->col, p));
    *csr = malloc((size_t)(sla_pattern_nnz(*p) + 1) * sizeof **csr);
    MT_OK(sla_values_gather(*p, SLA_FLOAT64, 1, A->val, *csr));
}

double mt_rand(uint64_t *state) { return tu_rand(state); }

void mt_fill(double *x, int64_t n, uint64_t seed) { tu_fill_random(x, n, seed); }

void mt_random_part(int64_t N, int p, uint64_t seed, int *part)
{
    for (int64_t g = 0; g < N; g++) {
        int r = (int)((mt_rand(&seed) + 1.0) * 0.5 * p);
        part[g] = r >= p ? p - 1 : r;
    }
}

int64_t *mt_owned(const int *part, int64_t N, int rank, int64_t *n)
{
    int64_t *o = malloc((size_t)(N ? N : 1) * sizeof *o);
    *n = 0;
    for (int64_t g = N - 1; g >= 0; g--)      /* descending: the layout must sort them */
        if (part[g] == rank) o[(*n)++] = g;
    return o;
}

sla_dist_layout *mt_random_layout(int64_t N, uint64_t seed)
{
    int *part = malloc((size_t)(N + 1) * sizeof *part);
    mt_random_part(N, mt_size, seed, part);
    int64_t n, *own = mt_owned(part, N, mt_rank, &n);
    sla_dist_layout *L = NULL;
    MT_OK(sla_dist_layout_create_owned(MPI_COMM_WORLD, N, n, own, &L));
    free(part);
    free(own);
    return L;
}

double mt_max(double v)
{
    double r;
    MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

int64_t mt_sum(int64_t v)
{
    int64_t r;
    MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return r;
}

double mt_amax(const double *v, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
    return m;
}

double mt_error(const sla_dist_layout *L, int64_t batch, int64_t k, const double *local,
                const double *global, double scale)
{
    int64_t n = sla_dist_layout_local_size(L), N = sla_dist_layout_size(L);
    const int64_t *g = sla_dist_layout_global(L);
    double e = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++) {
                double d = local[(b * n + i) * k + j], s = global[(b * N + g[i]) * k + j];
                e = fmax(e, isnan(d) || isnan(s) ? INFINITY : fabs(d - s));
            }
    return mt_max(e) / (scale > 1e-300 ? scale : 1e-300);
}

double *mt_slice(const sla_dist_layout *L, int64_t batch, int64_t k, const double *global)
{
    int64_t n = sla_dist_layout_local_size(L), N = sla_dist_layout_size(L);
    const int64_t *g = sla_dist_layout_global(L);
    double *x = malloc((size_t)(batch * n * k + 1) * sizeof *x);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < k; j++) x[(b * n + i) * k + j] = global[(b * N + g[i]) * k + j];
    return x;
}
