/* libFuzzer target: sla_mm_read_buffer on arbitrary bytes (plain or gzip). Any input must give
 * either SLA_OK with a consistent COO matrix, or an error with a NULL output; a successful read
 * then goes through sla_pattern_from_coo and the value gather. Crashes, sanitizer reports,
 * leaks and broken invariants (__builtin_trap) are findings. */
#include <stdint.h>
#include <stdlib.h>

#include "sla/sla.h"

/* Patterns allocate nrows + 1 row pointers: skip the pattern step for shapes that a tiny
 * input can declare but that would only measure the machine's memory. */
#define PATTERN_MAX_DIM (1 << 20)

static void check(int ok)
{
    if (!ok) __builtin_trap();
}

static void check_coo(const sla_coo *a)
{
    check(a->nrows >= 0 && a->ncols >= 0 && a->nnz >= a->nnz_stored && a->nnz_stored >= 0);
    check(a->nnz <= 2 * a->nnz_stored);
    for (int64_t k = 0; k < a->nnz; k++)
        check(a->row[k] >= 0 && a->row[k] < a->nrows && a->col[k] >= 0 && a->col[k] < a->ncols);
}

static void build_pattern(const sla_coo *a)
{
    if (a->nrows > PATTERN_MAX_DIM || a->ncols > PATTERN_MAX_DIM) return;
    sla_pattern *p = NULL;
    check(sla_pattern_from_coo(a->nrows, a->ncols, a->nnz, a->row, a->col, &p) == SLA_OK);
    if (a->field != SLA_MM_COMPLEX) {
        double *v = malloc(sizeof(double) * (size_t)(sla_pattern_nnz(p) + 1));
        check(v && sla_values_gather(p, SLA_FLOAT64, 1, a->values, v) == SLA_OK);
        free(v);
    }
    sla_pattern_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sla_coo *a = (sla_coo *)&size;          /* must be overwritten with NULL on error */
    sla_status st = sla_mm_read_buffer((const char *)data, size, "fuzz", &a);
    if (st != SLA_OK) {
        check(a == NULL && st < 0 && sla_last_error()[0] != '\0');
        return 0;
    }
    check_coo(a);
    build_pattern(a);
    sla_coo_free(&a);
    return 0;
}
