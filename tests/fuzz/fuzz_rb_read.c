/* libFuzzer target: sla_rb_read on arbitrary bytes (through an in-memory file). Any input must
 * give SLA_OK with a consistent COO matrix (indices in range, the expanded count at most twice
 * the stored one, symmetric storage square), or an error with a NULL output and a message.
 * Crashes, sanitizer reports, leaks and broken invariants (__builtin_trap) are findings. */
#include "fuzz_file.h"           /* first: it defines _GNU_SOURCE */

#include <stdlib.h>

#include "sla/sla.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    if (!path) return 0;
    sla_coo *a = (sla_coo *)&size;          /* must be overwritten with NULL on error */
    sla_status st = sla_rb_read(path, &a);
    if (st != SLA_OK) {
        fuzz_check(a == NULL && st < 0 && sla_last_error()[0] != '\0');
        return 0;
    }
    fuzz_check(a->nrows >= 0 && a->ncols >= 0 && a->nnz_stored >= 0);
    fuzz_check(a->nnz >= a->nnz_stored && a->nnz <= 2 * a->nnz_stored);
    fuzz_check(a->symmetry == SLA_MM_GENERAL || a->nrows == a->ncols);
    for (int64_t k = 0; k < a->nnz; k++)
        fuzz_check(a->row[k] >= 0 && a->row[k] < a->nrows && a->col[k] >= 0 && a->col[k] < a->ncols);
    sla_coo_free(&a);
    return 0;
}
