/* Private helpers shared by every layer of libsla: error raising, checked allocation,
 * OpenMP row partitioning. Not installed. Functions marked SLA_API are exported for the
 * libraries built from this tree on top of libsla (libsla_mpi), which include this header. */
#ifndef SLA_INTERNAL_H
#define SLA_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <pthread.h>
#endif

#include "sla/backend.h"

/* sla_error_set, sla_error_wrap, sla_error_attribute, SLA_FAIL and SLA_TRY are exported to
 * backends: sla/backend.h. */
/** SLA_FAIL naming the public function `func` (for helpers whose own name means nothing to the
 *  caller). */
#define SLA_FAIL_AS(func, status, ...) sla_error_set((status), (func), __VA_ARGS__)
#define SLA_CHECK_ARG_AS(func, cond, ...) \
    do { if (!(cond)) return SLA_FAIL_AS((func), SLA_EINVAL, __VA_ARGS__); } while (0)
#define SLA_CHECK_ARG(cond, ...) \
    do { if (!(cond)) return SLA_FAIL(SLA_EINVAL, __VA_ARGS__); } while (0)

/** malloc/calloc of count × size bytes with overflow check; NULL (and an SLA_ENOMEM message
 *  naming `what`) on failure. count = 0 returns a valid 1-byte allocation. The test hook
 *  sla_test_fail_alloc_after() makes the n-th later allocation fail. */
SLA_API void *sla_malloc(size_t count, size_t size, const char *what);
SLA_API void *sla_calloc(size_t count, size_t size, const char *what);
SLA_API void sla_free(void *p);
/** A large zero-filled work array of `bytes` bytes on transparent huge pages where Linux gives
 *  them (error.c says why); NULL and an SLA_ENOMEM message naming `what` on failure. Free it
 *  with sla_huge_free(p, bytes), the same bytes, never with sla_free. */
SLA_API void *sla_huge_alloc(size_t bytes, const char *what);
SLA_API void sla_huge_free(void *p, size_t bytes);
/** Prefaulting a fresh sla_huge_alloc block on a second thread while its owner works on it
 *  (error.c): the zero-filling of its pages at first touch, a fault per 2 MiB page that costs
 *  the hypervisor ~1 ms on this project's virtual machines (2.8 s of a 1.2 GB MUMPS work array),
 *  then overlaps the owner's computation instead of interrupting it. The contents are never
 *  written, so the owner may use the block at once. start never fails (without a thread the
 *  owner faults as before); join before sla_huge_free. Linux only; elsewhere a no-op. */
typedef struct sla_prefault {
    void *p;
    size_t bytes;
    int running;
#if defined(__linux__)
    pthread_t thread;
#endif
} sla_prefault;
SLA_API void sla_huge_prefault_start(sla_prefault *h, void *p, size_t bytes);
SLA_API void sla_huge_prefault_join(sla_prefault *h);

/** Test hook (exported for the test suite only): the n-th allocation from now fails
 *  (n = 0: the next one); n < 0 disables. Returns the number of allocations since the last call. */
SLA_API int64_t sla_test_fail_alloc_after(int64_t n);

/** Parallel regions. Entering an OpenMP region synchronises the team: about a microsecond on an
 *  idle machine, but up to a scheduler time slice (milliseconds) when another process holds a
 *  core and the team's threads spin (libgomp's default OMP_WAIT_POLICY). A kernel therefore runs
 *  on the team only when it moves at least SLA_PAR_MIN_BYTES bytes (100–170 µs of one thread's
 *  work for the CSR and vector kernels measured), in at most 2·bytes / SLA_PAR_MIN_BYTES parts.
 *  Measurements: docs/krylov.md, "Threads". */
#define SLA_PAR_MIN_BYTES (4.0 * 1024 * 1024)

/** Threads for a libsla parallel region started now: sla_get_num_threads(), or 1 inside an
 *  active parallel region (nested call). Every `#pragma omp parallel` in libsla passes it (or a
 *  count derived from it) as num_threads, never OpenMP's global nthreads-var (sla/base.h). */
SLA_API int sla_threads(void);

/** sla_get_num_threads() for internal callers (no nesting test). */
int sla_threads_configured(void);

/** A pattern that takes ownership of CSR arrays whose rows are strictly increasing (the
 *  caller guarantees it: generators that write rows in order): no copy, no sort, identity
 *  input order. rowptr [nrows + 1], colind [rowptr[nrows]], both from sla_malloc; freed here
 *  on failure (SLA_ENOMEM). */
sla_status sla_pattern_adopt_csr(int64_t nrows, int64_t ncols, int64_t *rowptr, int32_t *colind,
                                 sla_pattern **out);

/** The row pointers as int32 [nrows + 1], or NULL when nnz > INT32_MAX or the array cannot be
 *  allocated (the caller then reads sla_pattern_rowptr()). Built on first use under the
 *  pattern's lock and kept with it (4 bytes per row). The hot SpMV kernels read these: half
 *  the row-pointer traffic of int64, the layout PETSc's AIJ and hypre's CSR use. */
const int32_t *sla_pattern_rowptr32(const sla_pattern *p);

/** Test hook (exported for the test suite only): enable = 0 makes sla_pattern_rowptr32() return
 *  NULL, so that the kernels' int64 row-pointer path (nnz > INT32_MAX) runs on small test
 *  matrices; 1 restores it. Returns the previous setting. Not thread-safe: call between solves. */
SLA_API int sla_test_rowptr32(int enable);

/** 1 if the pattern's input order is its CSR order (sla_pattern_map(p)[k] = k, which is then
 *  only built when asked for). */
int sla_pattern_identity_map(const sla_pattern *p);

/** Parts to split a kernel moving `bytes` bytes into, for `threads` threads:
 *  min(threads, 2·bytes / threshold), at least 1. A pure function of its arguments (and of the
 *  threshold), for partitions that results depend on (reduction chunks, smoother blocks). */
int sla_par_parts(double bytes, int threads);

/** 1 if a kernel moving `bytes` bytes should run on the OpenMP team now: more than one thread
 *  available, not inside a parallel region, and bytes ≥ the threshold. */
int sla_par(double bytes);

/** Test hook (exported for the test suite only): sets the threshold of sla_par_parts() and
 *  sla_par() (bytes < 0: back to SLA_PAR_MIN_BYTES) and returns the previous one, so that small
 *  test problems exercise the parallel kernels. Not thread-safe: call between solves. */
SLA_API double sla_test_par_min_bytes(double bytes);

/** The longest prefix of s, at most max bytes, that ends on a UTF-8 character boundary (so a
 *  message cut to fit a buffer never ends in half a "≤"). */
size_t sla_utf8_prefix(const char *s, size_t max);

/** Appends text to buf (capacity cap, NUL-terminated) after sep. If it does not fit whole, it
 *  is cut at the last UTF-8 boundary that leaves room for "…", and "…" is appended, so that a
 *  cut description says so. */
void sla_text_append(char *buf, size_t cap, const char *sep, const char *text);

/** Splits rows [0, nrows) into nparts ranges of about equal nonzero count (rowptr based).
 *  bounds has nparts + 1 entries; bounds[0] = 0, bounds[nparts] = nrows. */
void sla_partition_rows(const int64_t *rowptr, int64_t nrows, int nparts, int64_t *bounds);

/** Bit of sla_matrix_check_for's check_finite argument: the caller supports the complex dtypes.
 *  Without it a complex128/complex64 matrix is refused with SLA_EDTYPE naming the function, so
 *  that code written for real dtypes never reads complex values as real ones. */
#define SLA_CHECK_COMPLEX_OK 2

/** sla_matrix_check() on behalf of the public function func, naming the matrix argument
 *  `name` in messages ("sla_solver_create: A is NULL", "... A->values[0][17] (row 3, col 4)
 *  is not finite"). check_finite: bit 0 tests the values for NaN/Inf, bit 1
 *  (SLA_CHECK_COMPLEX_OK) admits complex dtypes. */
/* sla_matrix_is_symmetric (herm = 0) / _is_hermitian (herm = 1) that also says where the test
 * failed: where = {batch element, row, column} of the first entry whose mirror differs (−1s
 * when *ok or A is not square). For messages that name the entry. */
sla_status sla_matrix_symmetry_defect(const sla_matrix *A, double rtol, double atol, int herm,
                                      int *ok, int64_t where[3]);

SLA_API sla_status sla_matrix_check_for(const char *func, const char *name, const sla_matrix *A,
                                int check_finite);
/** The same checks for a caller that also takes device views (sla_solver_create): the space
 *  must be host or device; finiteness is checked for host values only (a device backend checks
 *  its own). */
SLA_API sla_status sla_matrix_check_space(const char *func, const char *name,
                                          const sla_matrix *A, int check_finite);

/** 1 if every one of n entries of dtype is finite (a complex entry: both parts); else 0 and
 *  *bad = first bad index (in entries). */
SLA_API int sla_all_finite(sla_dtype dtype, const void *x, int64_t n, int64_t *bad);

/** Iteration rule of Higham's 1-norm estimator (the serial one, src/direct/condest.c, and the
 *  distributed one, src/mpi/lu_condest.c): at most SLA_CONDEST_ITMAX iterations (dlacn2's
 *  ITMAX), and an iteration whose estimate exceeds the previous one by less than the factor
 *  SLA_CONDEST_MIN_GROWTH ends the iteration (its larger estimate kept). dlacn2 stops only on
 *  no growth at all; with complex sign vectors, which never repeat exactly, the estimate can
 *  creep up by a few 1e-4 an iteration to ITMAX (2D Helmholtz 1000²: 177454, 177517, 177592,
 *  177677, every iteration two solves at 0.7 s). A growth under 1 % cannot move the rcond
 *  that is reported to two digits, nor the decision against SLA_RCOND_SINGULAR except for an
 *  rcond within 1 % of it.
 *  The same factor serves Hager's local-maximum test (Higham 1988, §2; dlacn2's
 *  |x_jlast| = |x_j|): after the transposed solve z = (RA)⁻ᴴ ξ of the estimate's column
 *  e_last, |z_last| is the estimate itself and |z_j| = max |z_i| a lower bound of the next
 *  column's ‖(RA)⁻¹ e_j‖₁; when |z_j| < SLA_CONDEST_MIN_GROWTH·|z_last| the iteration stops
 *  without solving e_j (dlacn2 stops on equality only). On the Helmholtz 1000² that next solve
 *  had raised the estimate by 0.04 % (177454 → 177517) for 1 s; the estimate now ends after 4
 *  solve calls instead of 5 there. */
#define SLA_CONDEST_ITMAX 5
#define SLA_CONDEST_MIN_GROWTH 1.01

/** y = conj(x) for n entries of dtype, interleaved (re, im) for the complex dtypes; a copy for
 *  the real ones. y may be x. Never fails. */
SLA_API void sla_conj(sla_dtype dtype, int64_t n, const void *x, void *y);

#endif
