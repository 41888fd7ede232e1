/* Helpers shared by the C tests (not part of libsla). */
#ifndef SLA_TESTUTIL_H
#define SLA_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sla/sla.h"

/** Path of a file in the shared matrix folder ($SLA_MATRIX_DIR); static buffer. */
const char *tu_matrix_path(const char *name);

/** 1 if the shared matrix folder exists (tests that need it call skip() otherwise). */
int tu_have_matrices(void);

/** Asserts st == SLA_OK and prints sla_last_error() on failure. */
#define TU_OK(expr) do { sla_status tu_st_ = (expr); \
    if (tu_st_ != SLA_OK) fail_msg("%s -> %d (%s): %s", #expr, (int)tu_st_, \
                                   sla_status_string(tu_st_), sla_last_error()); } while (0)

/** Asserts that |a − b| ≤ tol·max(1, |b|). */
#define TU_CLOSE(a, b, tol) do { double tu_a_ = (a), tu_b_ = (b); \
    double tu_s_ = fabs(tu_b_) > 1 ? fabs(tu_b_) : 1; \
    if (!(fabs(tu_a_ - tu_b_) <= (tol) * tu_s_)) \
        fail_msg("%s = %.17g, expected %.17g (tol %g)", #a, tu_a_, tu_b_, (double)(tol)); } while (0)

/** Deterministic uniform random numbers in [-1, 1) (splitmix64 state). */
double tu_rand(uint64_t *state);
void tu_fill_random(double *x, int64_t n, uint64_t seed);

/** 2D 5-point Poisson (Dirichlet) on an nx × ny grid: n = nx·ny, entries 4 on the diagonal and
 *  −1 to the neighbours. Returns the pattern and malloc'ed float64 CSR values. */
void tu_poisson2d(int64_t nx, int64_t ny, sla_pattern **p, double **values);

/** 3D 7-point Poisson (Dirichlet) on an m × m × m grid: n = m³, 6 on the diagonal, −1 to the
 *  neighbours (row i = x + m·y + m²·z). Pattern and malloc'ed float64 CSR values. */
void tu_poisson3d(int64_t m, sla_pattern **p, double **values);

/** Loads a shared matrix as float64 (asserts success). */
void tu_load(const char *name, sla_pattern **p, double **values);

/** Allocation-failure hook exported by libsla for tests (see src/core/internal.h). */
int64_t sla_test_fail_alloc_after(int64_t n);

/** Threshold (bytes) above which kernels run on the OpenMP team, exported by libsla for tests
 *  (see src/core/internal.h); bytes < 0 restores the default. Returns the previous value. */
double sla_test_par_min_bytes(double bytes);

/** enable = 0: the kernels read the int64 row pointers instead of the int32 copy (the path of
 *  nnz > INT32_MAX), exported by libsla for tests (see src/core/internal.h). Returns the
 *  previous setting. */
int sla_test_rowptr32(int enable);

/** ‖x‖₂ of n doubles. */
double tu_norm2(const double *x, int64_t n);

#endif
