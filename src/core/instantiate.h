/* One template per dtype family (the CHOLMOD t_*.c pattern): a file defines SLA_TEMPLATE as the
 * path of its template and includes this header, which instantiates the template once per
 * dtype with
 *   REAL       the element type (double, float)
 *   FN(name)   name suffixed by the dtype (name_f64, name_f32)
 * SLA_DISPATCH(dtype, name, args) calls the instance matching a run-time dtype. */
#ifndef SLA_TEMPLATE
#error "define SLA_TEMPLATE before including core/instantiate.h"
#endif

#define REAL double
#define FN(name) name##_f64
#include SLA_TEMPLATE
#undef REAL
#undef FN

#define REAL float
#define FN(name) name##_f32
#include SLA_TEMPLATE
#undef REAL
#undef FN

#undef SLA_TEMPLATE

#ifndef SLA_DISPATCH
#define SLA_DISPATCH(dtype, name, args) \
    ((dtype) == SLA_FLOAT64 ? name##_f64 args : name##_f32 args)
#endif
