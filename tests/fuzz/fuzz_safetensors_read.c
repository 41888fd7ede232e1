/* libFuzzer target: sla_safetensors_read on arbitrary bytes (through an in-memory file). Any
 * input must give SLA_OK with a consistent COO matrix (indices inside the shape), or an error
 * with a NULL output and a message; small results also go through sla_coo_to_matrix. Crashes,
 * sanitizer reports, leaks and broken invariants (__builtin_trap) are findings. */
#include "fuzz_file.h"           /* first: it defines _GNU_SOURCE */

#include <stdlib.h>

#include "sla/sla.h"

#define PATTERN_MAX_DIM (1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    if (!path) return 0;
    sla_coo *a = (sla_coo *)&size;
    sla_status st = sla_safetensors_read(path, &a);
    if (st != SLA_OK) {
        fuzz_check(a == NULL && st < 0 && sla_last_error()[0] != '\0');
        return 0;
    }
    fuzz_check(a->nrows >= 0 && a->ncols >= 0 && a->nnz == a->nnz_stored && a->nnz >= 0);
    for (int64_t k = 0; k < a->nnz; k++)
        fuzz_check(a->row[k] >= 0 && a->row[k] < a->nrows && a->col[k] >= 0 && a->col[k] < a->ncols);
    if (a->nrows <= PATTERN_MAX_DIM && a->ncols <= PATTERN_MAX_DIM) {
        sla_pattern *p = NULL;
        void *v = NULL;
        /* complex files (C128/C64 values) convert to complex128, real ones to float64 */
        sla_dtype dt = a->field == SLA_MM_COMPLEX ? SLA_COMPLEX128 : SLA_FLOAT64;
        fuzz_check(sla_coo_to_matrix(a, dt, &p, &v) == SLA_OK);
        sla_pattern_free(&p);
        free(v);
    }
    sla_coo_free(&a);
    return 0;
}
