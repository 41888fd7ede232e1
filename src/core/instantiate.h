/* One template per dtype family (the CHOLMOD t_*.c / cholmod_template.h pattern): a file defines
 * SLA_TEMPLATE as the path of its template and includes this header, which instantiates the
 * template once per dtype with
 *   ENTRY        the element type (double, float, double complex, float complex)
 *   REAL         the real type of the same precision (double, float): magnitudes, norms
 *   FN(name)     name suffixed by the dtype (name_f64, name_f32, name_c128, name_c64)
 *   SLA_COMPLEX  1 in the complex instances, 0 in the real ones
 * and the scalar arithmetic, which reduces to the plain operators for the real instances:
 *   ADD(a, b) a + b     MUL(a, b) a·b     MULC(a, b) a·conj(b)     CONJ(a) conj(a)
 *   RE(a) Re a          IM(a) Im a (0)    ABS(a) |a|               ABS2(a) |a|²
 *   TO_C(x) the ENTRY of a double complex x (its real part for a real ENTRY)
 *   ENTRY_OF(re, im)   the ENTRY re + i·im (re alone for a real ENTRY)
 * A template written only with these instantiates for complex too: the including file defines
 * SLA_TEMPLATE_COMPLEX before including this header to get the complex instances, and calls
 * them through SLA_DISPATCH_ALL. Templates without it exist only for the real dtypes; their
 * callers dispatch with SLA_DISPATCH (float64 or float32) and must refuse complex dtypes at the
 * boundary (sla_matrix_check_for does so unless told SLA_CHECK_COMPLEX_OK).
 * Complex values are C99 _Complex, laid out as (re, im) pairs: the layout of torch's complex
 * tensors and of SuiteSparse's "packed complex" arrays. The library compiles with
 * -fcx-fortran-rules (plain complex products, scaled division), so MUL is a few flops. */
#ifndef SLA_TEMPLATE
#error "define SLA_TEMPLATE before including core/instantiate.h"
#endif

#include "core/cmplx.h"
#include <math.h>

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define MULC(a, b) ((a) * CONJ(b))

#define ENTRY double
#define REAL double
#define FN(name) name##_f64
#define SLA_COMPLEX 0
#define CONJ(a) (a)
#define RE(a) (a)
#define IM(a) ((REAL)0)
#define ABS(a) fabs(a)
#define ABS2(a) ((a) * (a))
#define TO_C(x) creal(x)
#define ENTRY_OF(re, im) ((ENTRY)(re))
#include SLA_TEMPLATE
#undef ENTRY
#undef REAL
#undef FN
#undef ABS

#define ENTRY float
#define REAL float
#define FN(name) name##_f32
#define ABS(a) fabsf(a)
#include SLA_TEMPLATE
#undef ENTRY
#undef REAL
#undef FN
#undef SLA_COMPLEX
#undef CONJ
#undef RE
#undef IM
#undef ABS
#undef ABS2
#undef TO_C
#undef ENTRY_OF

#ifdef SLA_TEMPLATE_COMPLEX
#define ENTRY double complex
#define REAL double
#define FN(name) name##_c128
#define SLA_COMPLEX 1
#define CONJ(a) conj(a)
#define RE(a) creal(a)
#define IM(a) cimag(a)
#define ABS(a) cabs(a)
#define ABS2(a) (creal(a) * creal(a) + cimag(a) * cimag(a))
#define TO_C(x) (x)
#define ENTRY_OF(re, im) CMPLX((double)(re), (double)(im))
#include SLA_TEMPLATE
#undef ENTRY
#undef REAL
#undef FN
#undef CONJ
#undef RE
#undef IM
#undef ABS
#undef ABS2
#undef TO_C
#undef ENTRY_OF

#define ENTRY float complex
#define REAL float
#define FN(name) name##_c64
#define CONJ(a) conjf(a)
#define RE(a) crealf(a)
#define IM(a) cimagf(a)
#define ABS(a) cabsf(a)
#define ABS2(a) (crealf(a) * crealf(a) + cimagf(a) * cimagf(a))
#define TO_C(x) ((float complex)(x))
#define ENTRY_OF(re, im) CMPLXF((float)(re), (float)(im))
#include SLA_TEMPLATE
#undef ENTRY
#undef REAL
#undef FN
#undef SLA_COMPLEX
#undef CONJ
#undef RE
#undef IM
#undef ABS
#undef ABS2
#undef TO_C
#undef ENTRY_OF
#undef SLA_TEMPLATE_COMPLEX
#endif

#undef ADD
#undef MUL
#undef MULC
#undef SLA_TEMPLATE

#ifndef SLA_DISPATCH
/* the real instances of any template */
#define SLA_DISPATCH(dtype, name, args) \
    ((dtype) == SLA_FLOAT64 ? name##_f64 args : name##_f32 args)
/* every instance of a template included with SLA_TEMPLATE_COMPLEX */
#define SLA_DISPATCH_ALL(dtype, name, args)                                                     \
    ((dtype) == SLA_FLOAT64 ? name##_f64 args : (dtype) == SLA_FLOAT32 ? name##_f32 args      \
     : (dtype) == SLA_COMPLEX128 ? name##_c128 args : name##_c64 args)
#endif
