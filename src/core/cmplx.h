/* C99 complex with the CMPLX/CMPLXF constructors on every compiler we build with: glibc
 * defines them for GCC ≥ 4.7 only; clang (the fuzz and sanitizer builds) has the same builtin.
 * Include this instead of <complex.h> wherever CMPLX is used. */
#ifndef SLA_CORE_CMPLX_H
#define SLA_CORE_CMPLX_H
#include <complex.h>
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#ifndef CMPLXF
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif
#endif
