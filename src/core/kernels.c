/* The rule for entering parallel regions (see core/internal.h), the static row-parallel driver
 * shared by the CSR kernels, and their common argument checks. */
#include <omp.h>

#include "core/kernels.h"

#define SLA_ROWS_MAX_PARTS 256

/* the threshold of sla_par_parts() and sla_par(); changed only by the test hook */
static double par_min_bytes = SLA_PAR_MIN_BYTES;

double sla_test_par_min_bytes(double bytes)
{
    double old = par_min_bytes;
    par_min_bytes = bytes < 0 ? SLA_PAR_MIN_BYTES : bytes;
    return old;
}

int sla_par_parts(double bytes, int threads)
{
    if (threads <= 1 || !(bytes >= par_min_bytes)) return 1;
    if (par_min_bytes <= 0) return threads;
    double parts = 2 * bytes / par_min_bytes;
    return parts < (double)threads ? (int)parts : threads;
}

int sla_par(double bytes)
{
    return !omp_in_parallel() && bytes >= par_min_bytes && sla_threads() > 1;
}

void sla_rows_parallel(const int64_t *rowptr, int64_t nrows, int64_t batch, int64_t width,
                       sla_rows_fn fn, const void *ctx)
{
    if (nrows == 0 || batch == 0) return;
    /* bytes moved, counting 12 per (nonzero + row) × width (a float64 value and an int32 column
     * index per nonzero, a row pointer and an output per row); in double: nonzeros × width ×
     * batch may exceed int64 even when every array fits */
    double bytes = 12.0 * (double)(rowptr[nrows] + nrows) * (double)width * (double)batch;
    int64_t nparts = omp_in_parallel() ? 1 : sla_par_parts(bytes, sla_threads());
    if (nparts > SLA_ROWS_MAX_PARTS) nparts = SLA_ROWS_MAX_PARTS;
    int64_t bounds[SLA_ROWS_MAX_PARTS + 1];
    sla_partition_rows(rowptr, nrows, (int)nparts, bounds);
    #pragma omp parallel num_threads((int)nparts) if (nparts > 1)
    {
        /* the runtime may grant fewer threads than parts: each thread then takes several */
        int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int64_t b = 0; b < batch; b++)
            for (int64_t q = t; q < nparts; q += nt)
                if (bounds[q] < bounds[q + 1]) fn(ctx, b, bounds[q], bounds[q + 1]);
    }
}

sla_status sla_check_block(const char *func, const char *name, const void *ptr, int64_t nbatch,
                           int64_t rows, int64_t k, int64_t *count)
{
    int64_t c = 0;
    if (__builtin_mul_overflow(nbatch, rows, &c) || __builtin_mul_overflow(c, k, &c))
        return sla_error_set(SLA_EINVAL, func, "%s: [%lld][%lld][%lld] elements overflow int64",
                             name, (long long)nbatch, (long long)rows, (long long)k);
    if (!ptr && c > 0)
        return sla_error_set(SLA_EINVAL, func, "%s is NULL (expected [%lld][%lld][%lld] elements)",
                             name, (long long)nbatch, (long long)rows, (long long)k);
    if (count) *count = c;
    return SLA_OK;
}

sla_status sla_check_flag(const char *func, const char *name, int value)
{
    if (value != 0 && value != 1)
        return sla_error_set(SLA_EINVAL, func, "%s = %d is not 0 or 1", name, value);
    return SLA_OK;
}

sla_status sla_check_overlap(const char *func, const char *out_name, const void *out,
                             size_t out_bytes, const char *in_name, const void *in,
                             size_t in_bytes)
{
    uintptr_t o = (uintptr_t)out, i = (uintptr_t)in;
    if (out && in && out_bytes && in_bytes && o < i + in_bytes && i < o + out_bytes)
        return sla_error_set(SLA_EINVAL, func, "%s overlaps %s (outputs must not alias inputs)",
                             out_name, in_name);
    return SLA_OK;
}

sla_status sla_check_aliasing(const char *func, const sla_buf *out, int nout, const sla_buf *in,
                              int nin)
{
    for (int i = 0; i < nout; i++) {
        for (int j = 0; j < nin; j++)
            SLA_TRY(sla_check_overlap(func, out[i].name, out[i].p, out[i].bytes, in[j].name,
                                      in[j].p, in[j].bytes));
        for (int j = 0; j < i; j++)
            SLA_TRY(sla_check_overlap(func, out[i].name, out[i].p, out[i].bytes, out[j].name,
                                      out[j].p, out[j].bytes));
    }
    return SLA_OK;
}
