/* sla/base.h: status codes, dtypes, errors and the export macro shared by every sla header.
 * Include <sla/sla.h> instead of this file; the conventions are documented there. */
#ifndef SLA_BASE_H
#define SLA_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "sla/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SLA_BUILDING_LIBRARY)
#define SLA_API __attribute__((visibility("default")))
#else
#define SLA_API
#endif

/** Length of the one-line descriptions in info structs (method, backend, ordering and why). */
#define SLA_DESCRIPTION_LEN 1024

/** Status of every sla call. 0 is success, negative values are errors (outputs untouched or
 *  freed), positive values are warnings (outputs valid, read the info). */
typedef enum sla_status {
    SLA_OK = 0,
    SLA_NOT_CONVERGED = 1,   /**< warning: an iterative method stopped before its tolerance */
    SLA_EINVAL = -1,         /**< an argument is invalid (NULL, negative size, bad enum, ...) */
    SLA_ENOMEM = -2,         /**< an allocation failed */
    SLA_EINDEX = -3,         /**< an index is negative, out of range or does not fit in int32 */
    SLA_ESHAPE = -4,         /**< shapes do not agree, or a square matrix was required */
    SLA_EDTYPE = -5,         /**< dtype not supported by this operation */
    SLA_EPARSE = -6,         /**< a file could not be parsed (the message names the line) */
    SLA_EIO = -7,            /**< a file could not be opened, read or written */
    SLA_ENONFINITE = -8,     /**< NaN or Inf in input values or right-hand sides */
    SLA_ESINGULAR = -9,      /**< the matrix is structurally or numerically singular */
    SLA_ENOTSPD = -10,       /**< Cholesky (or CG) found the matrix not symmetric positive definite */
    SLA_EBREAKDOWN = -11,    /**< an iterative method broke down */
    SLA_EUNSUPPORTED = -12,  /**< method/backend not available in this build, or not implemented */
    SLA_EBACKEND = -13,      /**< an external library (SuiteSparse, MUMPS, ...) reported an error */
    SLA_EINTERNAL = -14,     /**< a bug in sla: please report it */
    SLA_ECALLBACK = -15      /**< a user callback returned nonzero */
} sla_status;

/** Element type of values and dense blocks, chosen at run time. */
typedef enum sla_dtype {
    SLA_FLOAT64 = 0,         /**< double */
    SLA_FLOAT32 = 1,         /**< float */
    SLA_COMPLEX128 = 2,      /**< double complex: (re, im) interleaved, as C99 and torch */
    SLA_COMPLEX64 = 3        /**< float complex: (re, im) interleaved */
} sla_dtype;

/** 1 for SLA_COMPLEX128 and SLA_COMPLEX64, else 0. */
static inline int sla_dtype_is_complex(sla_dtype dtype)
{
    return dtype == SLA_COMPLEX128 || dtype == SLA_COMPLEX64;
}

/** The real dtype of the same precision (complex128 → float64, complex64 → float32; a real
 *  dtype is its own). */
static inline sla_dtype sla_dtype_real(sla_dtype dtype)
{
    return dtype == SLA_COMPLEX128 ? SLA_FLOAT64 : dtype == SLA_COMPLEX64 ? SLA_FLOAT32 : dtype;
}

/** Which operator to apply: A itself or its transpose. */
typedef enum sla_op {
    SLA_OP_N = 0,            /**< op(A) = A */
    SLA_OP_T = 1,            /**< op(A) = Aᵀ (not conjugated, also for complex A) */
    SLA_OP_C = 2             /**< op(A) = Aᴴ = conj(A)ᵀ (the same as Aᵀ for a real dtype) */
} sla_op;

/** Short English name of a status code ("invalid argument", ...). Never NULL. */
SLA_API const char *sla_status_string(sla_status status);

/** Message of the last error raised in the calling thread: function, argument and what was
 *  wrong, e.g. "sla_pattern_from_coo: row[17] = -3 is negative". Empty string if none.
 *  The buffer is thread-local and overwritten by the next failing call of this thread. */
SLA_API const char *sla_last_error(void);

/** Clears the calling thread's error message. */
SLA_API void sla_clear_error(void);

/** Size in bytes of one element of the dtype (8, 4, 16 or 8); 0 for an invalid dtype. */
SLA_API size_t sla_dtype_size(sla_dtype dtype);

/** Name of the dtype ("float64", "float32", "complex128", "complex64"); "invalid" otherwise. */
SLA_API const char *sla_dtype_name(sla_dtype dtype);

/** Releases a buffer that libsla allocated and handed to the caller (the values of
 *  sla_gallery_grid(), sla_gallery_graph_laplacian(), sla_dist_pattern_scatter(), ...). NULL is a
 *  no-op. Use it rather than free() from another runtime (ctypes, a sanitizer-preloaded process):
 *  it frees with the allocator libsla allocated with. */
SLA_API void sla_free(void *p);

/** Version string of the library, e.g. "0.1.0". */
SLA_API const char *sla_version(void);

#ifdef __cplusplus
}
#endif
#endif
