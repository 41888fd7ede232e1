#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "testutil.h"

const char *tu_matrix_path(const char *name)
{
    static char buf[4096];
    const char *dir = getenv("SLA_MATRIX_DIR");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : "../shared/matrices", name);
    return buf;
}

int tu_have_matrices(void)
{
    struct stat sb;
    return stat(tu_matrix_path("README.md"), &sb) == 0;
}

double tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

void tu_fill_random(double *x, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) x[i] = tu_rand(&seed);
}

void tu_poisson2d(int64_t nx, int64_t ny, sla_pattern **p, double **values)
{
    int64_t n = nx * ny, cap = 5 * n, k = 0;
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    assert_non_null(r);
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int64_t i = y * nx + x;
            if (y > 0) { r[k] = i; c[k] = i - nx; v[k++] = -1; }
            if (x > 0) { r[k] = i; c[k] = i - 1; v[k++] = -1; }
            r[k] = i; c[k] = i; v[k++] = 4;
            if (x < nx - 1) { r[k] = i; c[k] = i + 1; v[k++] = -1; }
            if (y < ny - 1) { r[k] = i; c[k] = i + nx; v[k++] = -1; }
        }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc(sizeof(double) * (size_t)(k ? k : 1));
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

void tu_poisson3d(int64_t m, sla_pattern **p, double **values)
{
    int64_t n = m * m * m, cap = 7 * n, k = 0, st[3] = {1, m, m * m};
    int64_t *r = malloc(sizeof(int64_t) * (size_t)cap), *c = malloc(sizeof(int64_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    assert_true(r && c && v);
    for (int64_t i = 0; i < n; i++) {
        int64_t x[3] = {i % m, (i / m) % m, i / (m * m)};
        r[k] = i; c[k] = i; v[k++] = 6;
        for (int d = 0; d < 3; d++) {
            if (x[d] > 0) { r[k] = i; c[k] = i - st[d]; v[k++] = -1; }
            if (x[d] < m - 1) { r[k] = i; c[k] = i + st[d]; v[k++] = -1; }
        }
    }
    TU_OK(sla_pattern_from_coo(n, n, k, r, c, p));
    *values = malloc(sizeof(double) * (size_t)(k ? k : 1));
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

void tu_load(const char *name, sla_pattern **p, double **values)
{
    TU_OK(sla_mm_read_matrix(tu_matrix_path(name), SLA_FLOAT64, p, (void **)values, NULL, NULL));
}

double tu_norm2(const double *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}
