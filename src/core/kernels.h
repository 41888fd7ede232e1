/* Private interface of the row-parallel CSR kernels (SpMV, the restricted outer product and the
 * adjoints built on them): the parallel driver, argument checks shared by their entry points,
 * and the outer product with an overwrite switch. Not installed. */
#ifndef SLA_KERNELS_H
#define SLA_KERNELS_H

#include "core/internal.h"

/** Work on rows [r0, r1) of batch element b; ctx carries the kernel's arguments. */
typedef void (*sla_rows_fn)(const void *ctx, int64_t b, int64_t r0, int64_t r1);

/** Calls fn once for every batch element and every part of a static split of rows [0, nrows)
 *  into parts of about equal nonzero count, one part per OpenMP thread (fewer parts, down to a
 *  single one on the calling thread, by sla_par_parts() on the bytes moved: 12 per (nonzero +
 *  row) × width × batch). Each row belongs to exactly one call, so a kernel that sums each row
 *  in a fixed order gives results independent of the thread count. */
void sla_rows_parallel(const int64_t *rowptr, int64_t nrows, int64_t batch, int64_t width,
                       sla_rows_fn fn, const void *ctx);

/** Number of elements of a dense block [nbatch][rows][k] in *count, or SLA_EINVAL naming `name`
 *  if that overflows int64, or if ptr is NULL while the block is not empty. */
SLA_API sla_status sla_check_block(const char *func, const char *name, const void *ptr, int64_t nbatch,
                           int64_t rows, int64_t k, int64_t *count);

/** SLA_EINVAL naming `name` unless value is 0 or 1. */
SLA_API sla_status sla_check_flag(const char *func, const char *name, int value);

/** SLA_EINVAL naming both arrays if out (written) overlaps in (read): a kernel would then read
 *  entries it has already overwritten, and an input would be modified. Sizes in bytes. */
SLA_API sla_status sla_check_overlap(const char *func, const char *out_name, const void *out,
                             size_t out_bytes, const char *in_name, const void *in,
                             size_t in_bytes);

/** A caller's array for sla_check_aliasing (p NULL or bytes 0: absent). */
typedef struct sla_buf { const char *name; const void *p; size_t bytes; } sla_buf;

/** sla_check_overlap for every output against every input, then against every earlier output
 *  (named "out[i] overlaps out[j]", j < i): all checked before anything is written, so that no
 *  input is modified. */
SLA_API sla_status sla_check_aliasing(const char *func, const sla_buf *out, int nout, const sla_buf *in,
                              int nin);

/** Flag of sla_pattern_outer_run: conjugate each term (complex dtypes; ignored for real ones). */
#define SLA_OUTER_CONJ 2

/** The kernel of sla_pattern_outer_add() (arguments already checked), with flags
 *  bit 0 (overwrite) = 1: dvalues = alpha · Σ_j u[r_s][j]·conj(v[c_s][j]), dvalues not read
 *  (gradients that are returned rather than accumulated save one pass over [batch][nnz]);
 *  bit 0 = 0: dvalues += the same, as the public function;
 *  SLA_OUTER_CONJ: each term is conj(u·conj(v)) = conj(u)·v instead (complex dtypes). */
void sla_pattern_outer_run(const sla_pattern *p, sla_dtype dtype, int64_t batch, double alpha,
                           const void *u, int u_batched, const void *v, int v_batched,
                           int64_t k, int flags, void *dvalues);

#endif
