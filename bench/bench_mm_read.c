/* Matrix Market read/write speed, as JSON.
 *   bench_mm_read [FILE.mtx]      default: a generated 2,000,000-entry real general file
 * Reports sla_mm_read against two baselines measured in the same run: reading the raw bytes
 * (the I/O floor) and a plain fgets + sscanf reader (what the format invites), plus the time
 * of sla_mm_write on the matrix read. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sla/sla.h"
#include "bench_util.h"

static size_t raw_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    static char buf[1 << 20];
    size_t total = 0, n;
    if (!f) return 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) total += n;
    fclose(f);
    return total;
}

/* Coordinate real files only; enough to time the per-line approach. */
static long long sscanf_read(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    long long m = 0, n = 0, nnz = 0, k = 0, i, j;
    double v, sum = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f) && line[0] == '%') {}
    if (sscanf(line, "%lld %lld %lld", &m, &n, &nnz) != 3) nnz = 0;
    while (k < nnz && fgets(line, sizeof line, f))
        if (sscanf(line, "%lld %lld %lg", &i, &j, &v) == 3) { sum += v; k++; }
    fclose(f);
    return sum == 12345.678 ? -k : k;      /* keeps the loop from being optimised away */
}

static void generate(const char *path, long long n, long long nnz)
{
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); exit(1); }
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n", n, n, nnz);
    unsigned long long s = 42;
    for (long long k = 0; k < nnz; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        fprintf(f, "%lld %lld %.17g\n", (long long)(s >> 20) % n + 1, k % n + 1, v);
    }
    fclose(f);
}

static double best_of(int reps, int which, const char *path, long long *count)
{
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (which == 0) *count = (long long)raw_read(path);
        else if (which == 1) *count = sscanf_read(path);
        else {
            sla_coo *a = NULL;
            if (sla_mm_read(path, &a) != SLA_OK) {
                fprintf(stderr, "%s\n", sla_last_error());
                exit(1);
            }
            *count = a->nnz_stored;
            sla_coo_free(&a);
        }
        double t = now() - t0;
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    char gen[256] = "";
    const char *path = argc > 1 ? argv[1] : NULL;
    if (!path) {
        snprintf(gen, sizeof gen, "/tmp/sla_bench_mm_%ld.mtx", (long)getpid());
        generate(gen, 100000, 2000000);
        path = gen;
    }
    long long bytes, scanned, entries;
    double t_raw = best_of(3, 0, path, &bytes);
    double t_mm = best_of(3, 2, path, &entries);
    double t_scanf = best_of(1, 1, path, &scanned);
    /* the writer, on what was read */
    sla_pattern *p = NULL;
    void *v = NULL;
    double t_write = -1;
    char out[300];
    snprintf(out, sizeof out, "/tmp/sla_bench_mm_out_%ld.mtx", (long)getpid());
    if (sla_mm_read_matrix(path, SLA_FLOAT64, &p, &v, NULL, NULL) == SLA_OK) {
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        double t0 = now();
        if (sla_mm_write(out, &A, 0, SLA_MM_REAL, SLA_MM_GENERAL, NULL) == SLA_OK) t_write = now() - t0;
        remove(out);
        free(v);
        sla_pattern_free(&p);
    }
    printf("{\n  \"file\": \"%s\",\n  \"bytes\": %lld,\n  \"entries\": %lld,\n", path, bytes, entries);
    printf("  \"mm_read_s\": %.6f,\n  \"mm_read_MB_per_s\": %.1f,\n  \"mm_read_Mentries_per_s\": %.2f,\n",
           t_mm, (double)bytes / t_mm / 1e6, (double)entries / t_mm / 1e6);
    printf("  \"raw_read_s\": %.6f,\n  \"mm_read_over_raw_read\": %.2f,\n", t_raw, t_mm / t_raw);
    printf("  \"fgets_sscanf_s\": %.6f,\n  \"speedup_over_fgets_sscanf\": %.2f,\n", t_scanf,
           t_scanf / t_mm);
    printf("  \"mm_write_s\": %.6f,\n  \"mm_write_MB_per_s\": %.1f\n}\n", t_write,
           t_write > 0 ? (double)bytes / t_write / 1e6 : 0.0);
    if (gen[0]) remove(gen);
    return 0;
}
