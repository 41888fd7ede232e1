/* sla/io.h: Matrix Market (plain or gzip-compressed), Rutherford–Boeing and safetensors files. */
#ifndef SLA_IO_H
#define SLA_IO_H

#include "sla/base.h"
#include "sla/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sla_mm_field {
    SLA_MM_REAL = 0, SLA_MM_INTEGER = 1, SLA_MM_PATTERN = 2, SLA_MM_COMPLEX = 3
} sla_mm_field;

typedef enum sla_mm_symmetry {
    SLA_MM_GENERAL = 0, SLA_MM_SYMMETRIC = 1, SLA_MM_SKEW_SYMMETRIC = 2, SLA_MM_HERMITIAN = 3
} sla_mm_symmetry;

/** A matrix read from a file, as 0-based COO entries in file order, with symmetric storage
 *  already expanded: an off-diagonal stored entry (i, j, v) is followed by its mirror (j, i, v),
 *  (j, i, −v) for skew-symmetric, (j, i, conj v) for Hermitian. Owned by the caller. */
typedef struct sla_coo {
    int64_t nrows, ncols;
    int64_t nnz;             /**< entries after expansion */
    int64_t nnz_stored;      /**< entries written in the file (array format: stored values) */
    int64_t *row, *col;      /**< [nnz] 0-based */
    double *values;          /**< [nnz] real (pattern: 1.0), or [nnz][2] (re, im) if complex */
    sla_mm_field field;
    sla_mm_symmetry symmetry;
    int is_array;            /**< 1 if the file used the dense "array" format */
} sla_coo;

/** Reads a Matrix Market file (coordinate or array; real, integer, pattern, complex; general,
 *  symmetric, skew-symmetric, hermitian; keywords case-insensitive; comments, blank lines and
 *  CRLF accepted). A gzip-compressed file is recognised by its magic bytes, whatever its name.
 *
 *  Layout of the result: one entry per line, in file order; array files column-major, their
 *  symmetric/Hermitian storage being the lower triangle with the diagonal and skew-symmetric
 *  storage the strict lower triangle; every value of an array file becomes an entry, zeros
 *  included. Symmetric storage is expanded as described at sla_coo (a stored entry of either
 *  triangle is mirrored). Values: real and integer fields as double (integers beyond 2^53
 *  rounded), pattern as 1.0, complex as (re, im) pairs; "inf", "infinity" and "nan" (any case,
 *  optional sign) are numbers; a value below the double range reads as 0 or a subnormal.
 *  The whole file is read into memory and parsed in one pass; the arrays are sized by the
 *  declared count capped by what the file's length can hold. Decompressed gzip text is capped
 *  by what its header declares: at most 16 MiB up to the end of the size line, then the header
 *  + 1 MiB + 64 bytes for each number the size line declares (2 indices and 0-2 values per
 *  entry; any writer's numbers take 1-25 characters), so a small file of compressed blanks
 *  cannot make the reader hold gigabytes; beyond the cap it is SLA_EIO (decompress the file to
 *  read it: plain text has no cap).
 *  @param[out] out  new COO matrix; free with sla_coo_free(). NULL on error.
 *  @return SLA_OK; SLA_EIO (cannot open or read, a directory, corrupt/truncated gzip data or
 *          beyond the gzip cap: the message names the file and the reason); SLA_EPARSE with a
 *          message "FILE:LINE: what"
 *          (bad banner or illegal keyword, missing or short size line, index 0 or out of range,
 *          symmetric/skew/Hermitian but not square, fewer entries than declared (the line where
 *          the file ended), more entries than declared, an index or integer beyond int64, a
 *          finite value beyond the double range such as 1e999, an integer-field value that is not
 *          an integer, a number longer than 500 characters, anything after the numbers of a line,
 *          a non-zero diagonal entry in a skew-symmetric file, a non-real diagonal entry in a
 *          Hermitian file); SLA_ENOMEM "sla_mm_read: FILE: cannot allocate N bytes for WHAT"
 *          (every reader's allocation failures name the function and the file); SLA_EINVAL
 *          (NULL argument). */
SLA_API sla_status sla_mm_read(const char *path, sla_coo **out);

/** As sla_mm_read() on len bytes in memory (not NUL-terminated; gzip data is recognised by its
 *  magic bytes as for files). name is used in messages (NULL: "(buffer)"); text may be NULL
 *  when len = 0. */
SLA_API sla_status sla_mm_read_buffer(const char *text, size_t len, const char *name,
                                      sla_coo **out);

/** Frees a COO matrix and sets *coo to NULL (NULL allowed). */
SLA_API void sla_coo_free(sla_coo **coo);

/** Reads a file straight into a pattern and CSR-ordered values.
 *  @param[in]  dtype    SLA_FLOAT64 or SLA_FLOAT32 for real, integer and pattern files;
 *                       SLA_COMPLEX128 or SLA_COMPLEX64 for any file (a real one gets zero
 *                       imaginary parts). Duplicates are summed in double, then rounded; a
 *                       value beyond the float range becomes ±inf.
 *  @param[out] pattern  new pattern (its input order is the expanded file order);
 *  @param[out] values   new [nnz] values of dtype in CSR order (duplicates summed; sla_free());
 *  @param[out] field, symmetry  what the header said (may be NULL).
 *  @return as sla_mm_read(), and SLA_EDTYPE for a complex file read with a real dtype. */
SLA_API sla_status sla_mm_read_matrix(const char *path, sla_dtype dtype, sla_pattern **pattern,
                                      void **values, sla_mm_field *field,
                                      sla_mm_symmetry *symmetry);

/** Writes batch element `index` of A as a Matrix Market coordinate file, entries in CSR order
 *  (1-based); gzip-compressed if path ends in ".gz". Reading it back gives the same pattern and
 *  bit-identical values (every dtype).
 *  @param[in] index     batch element, 0 ≤ index < A->batch.
 *  @param[in] field     SLA_MM_REAL (%.17g for float64, %.9g for float32), SLA_MM_INTEGER
 *                       (values must be integers within int64), SLA_MM_PATTERN (values
 *                       ignored), or SLA_MM_COMPLEX ("re im" per entry; the field of a
 *                       complex A, which takes only it or SLA_MM_PATTERN).
 *  @param[in] symmetry  SLA_MM_GENERAL (every entry), or SLA_MM_SYMMETRIC (the lower triangle
 *                       with the diagonal; A must be square and exactly symmetric, a_ij = a_ji
 *                       bit for bit with a missing entry counting as 0 (for SLA_MM_PATTERN: the
 *                       pattern symmetric), else SLA_EINVAL naming the first mismatch), or
 *                       SLA_MM_HERMITIAN (SLA_MM_COMPLEX: the lower triangle, a_ij = conj(a_ji)
 *                       bit for bit).
 *  @param[in] comment   optional comment text without the leading '%' (may be NULL); each of
 *                       its lines becomes one '%' line.
 *
 *  Files (every writer of sla/io.h): the text goes to a new temporary file in the target's
 *  directory (".NAME.sla-XXXXXX") that is renamed over the target only once it was written
 *  completely, so that a failed write (disk full, file size limit, ...) leaves a file that was
 *  there before untouched and no partial file behind; an existing file keeps its permission
 *  bits; a symbolic link is followed (its target is replaced, the link stays). A device, FIFO
 *  or socket (/dev/null, /dev/stdout, a pipe) is written in place and never removed. The
 *  directory must be writable (for the temporary file), also when the file itself is.
 *  @return SLA_OK; SLA_EINVAL (NULL argument, bad index/field/symmetry, non-integer value for
 *          SLA_MM_INTEGER, not symmetric); SLA_EIO "sla_mm_write: cannot create|write|replace
 *          'PATH': reason" (a directory, no permission, disk full, ...); SLA_ENOMEM. */
SLA_API sla_status sla_mm_write(const char *path, const sla_matrix *A, int64_t index,
                                sla_mm_field field, sla_mm_symmetry symmetry,
                                const char *comment);

/** Writes a dense nrows × ncols block x (row-major [nrows][ncols] of dtype, as torch tensors)
 *  as a Matrix Market array file ("array real general"; complex128 / complex64 (re, im) pairs:
 *  "array complex general", one "re im" line per entry), values column-major as the format
 *  defines, %.17g for float64 and %.9g for float32: read back bit for bit; NaN and inf as
 *  "nan", "inf"). Files are handled as by sla_mm_write() (a temporary file renamed into place;
 *  devices written in place); no gzip. comment as for sla_mm_write(). Used by `sla solve -o`.
 *  @return SLA_OK; SLA_EINVAL (NULL path, or x NULL with values to write, negative or
 *          overflowing sizes); SLA_EDTYPE; SLA_EIO naming the file; SLA_ENOMEM. */
SLA_API sla_status sla_mm_write_dense(const char *path, int64_t nrows, int64_t ncols,
                                      sla_dtype dtype, const void *x, const char *comment);


/** Builds a pattern (input order = the COO entry order) and CSR-ordered values of dtype from a
 *  COO matrix (duplicates summed): real, integer or pattern COO into any dtype (complex ones
 *  with zero imaginary parts), complex COO into complex128 or complex64.
 *  @param[out] values  new [nnz] array; the caller frees it with sla_free().
 *  @return SLA_OK; SLA_EDTYPE for complex values with a real dtype, or a bad dtype; SLA_EINVAL;
 *          SLA_ENOMEM. */
SLA_API sla_status sla_coo_to_matrix(const sla_coo *coo, sla_dtype dtype, sla_pattern **pattern,
                                     void **values);

/** Reads a Rutherford–Boeing / Harwell–Boeing file (.rua, .rsa, .psa, ...; Duff, Grimes,
 *  Lewis, RAL-TR-97-031): every number is read from the columns the header's Fortran format
 *  gives it ((16I5), (1P,5E15.8), (4D20.12), ...), as Fortran reads it: fields may touch
 *  ("1.0E+00-2.0E+00"), D and Q exponents and "1.0-100" are exponents, kP scales a field
 *  without exponent, and columns past count × width of a line are ignored. Refused, with
 *  "FILE:LINE: what": a blank field (Fortran would read 0), a field that is not a number of the
 *  format's kind or holds a blank, a real field without a decimal point under w.d with d > 0
 *  (Fortran's implied decimals), data beyond the count on a section's last line, line counts
 *  (PTRCRD, INDCRD, VALCRD) that the counts and formats do not take, anything but blank lines
 *  after the data (and the right-hand-side lines of a Harwell–Boeing file, which are skipped),
 *  column pointers not from 1 to NNZ + 1 or decreasing, row indices out of range or not
 *  increasing within a column (duplicates), entries above the diagonal of symmetric (S, H, Z)
 *  storage, a non-zero diagonal in skew (Z) storage, a non-real one in Hermitian storage.
 *  Symmetric storage is expanded as in sla_mm_read() (PZA mirrors are −1); explicit zeros are
 *  kept. Complex files (C**) are read with interleaved values; elemental (*E) files are
 *  refused (SLA_EUNSUPPORTED).
 *  @return SLA_OK; SLA_EIO (cannot open or read, a directory); SLA_EPARSE as above;
 *          SLA_EUNSUPPORTED; SLA_ENOMEM naming the file. */
SLA_API sla_status sla_rb_read(const char *path, sla_coo **out);

/** Writes batch element `index` of A (float64, float32, complex128 or complex64) as a
 *  Rutherford–Boeing file with RBio's RBwrite, which stores a symmetric matrix as its lower
 *  triangle (type RSA) and chooses the type (RUA, RSA, PSA, CUA, CSA, CHA, ...) itself: values
 *  that are all 1 are written as a pattern (P**), integral values within ±10⁸ as integers
 *  (I**), complex values whose imaginary parts are all 0 as real (R**), a complex symmetric
 *  matrix as CSA and a Hermitian one (a_ij = conj(a_ji) exactly) as CHA. field: SLA_MM_REAL or
 *  SLA_MM_INTEGER for real dtypes, SLA_MM_COMPLEX for complex ones (SLA_EINVAL otherwise), or
 *  SLA_MM_PATTERN for either (only the structure is written, values are ignored).
 *  A matrix without stored entries (0 × n, n × 0, or nnz = 0) cannot be written: RBwrite refuses
 *  it, and this function returns SLA_EUNSUPPORTED saying so (use Matrix Market or safetensors).
 *  Files as for sla_mm_write(); since RBwrite does not check its final fclose, what it wrote
 *  is read back (sla_rb_read) before it replaces anything, and a device target gets a copy of
 *  a checked temporary file (in $TMPDIR).
 *  @param[in] title  up to 72 characters (may be NULL).
 *  @return SLA_OK; SLA_EINVAL; SLA_EUNSUPPORTED (no entries); SLA_EIO naming the file (RBio's
 *          error, a write error, or a file that does not read back); SLA_ENOMEM. */
SLA_API sla_status sla_rb_write(const char *path, const sla_matrix *A, int64_t index,
                                sla_mm_field field, const char *title);

/** Most dimensions of a safetensors tensor that the reader accepts (values [*batch, nnz]). */
#define SLA_SAFETENSORS_MAX_DIMS 8

/** Reads a sparse matrix stored in safetensors format with torch-sla's layout: tensors
 *  "values" (F64, F32, I64, I32, or complex C128 / C64 — pairs (re, im) of F64 / F32, read
 *  into out->values as (re, im) doubles with field SLA_MM_COMPLEX; shape [nnz] — a batch
 *  [*batch, nnz] is refused here: see
 *  sla_safetensors_read_batch), "row_indices" and
 *  "col_indices" (I64 or I32, [nnz]), "shape" (I64 or I32, [2]). The header is validated
 *  (length, checked against the file size before anything points into it; JSON; dtypes;
 *  shapes; offsets inside the file; indices in range).
 *  @return SLA_OK; SLA_EIO (cannot open or read, a directory); SLA_EPARSE naming the tensor and
 *          what is wrong; SLA_ENOMEM naming the file. */
SLA_API sla_status sla_safetensors_read(const char *path, sla_coo **out);

/** As sla_safetensors_read(), also for batched values (torch-sla saves a batched
 *  SparseTensor as values [*batch, nnz] with "shape" the matrix's [M, N]): out->values holds
 *  the batch's values [prod(batch)][nnz] (out->nnz is nnz, one matrix's), *batch_ndim is the
 *  number of batch dimensions (0 for values [nnz]) and batch_shape[0 .. *batch_ndim) their
 *  sizes. @return as sla_safetensors_read(); SLA_EINVAL (NULL argument). */
SLA_API sla_status sla_safetensors_read_batch(const char *path, sla_coo **out, int *batch_ndim,
                                              int64_t batch_shape[SLA_SAFETENSORS_MAX_DIMS]);

/** Writes a real, integer, pattern or complex COO matrix in safetensors format with torch-sla's
 *  layout (values in dtype F64, F32, or for complex values (field SLA_MM_COMPLEX, coo->values
 *  (re, im) pairs) C128 or C64: dtype complex128 or complex64; int64 indices and shape;
 *  metadata format = "sparse_tensor", dtype = "torch.<dtype>").
 *  Files as for sla_mm_write() (a temporary file renamed into place; devices in place).
 *  @return SLA_OK; SLA_EINVAL (NULL argument); SLA_EDTYPE (a dtype that is not one of the four,
 *          or complex values with a real dtype and the reverse); SLA_EIO
 *          naming the file; SLA_ENOMEM. */
SLA_API sla_status sla_safetensors_write(const char *path, const sla_coo *coo, sla_dtype dtype);

/** As sla_safetensors_write() for a batch: coo->values holds [prod(batch_shape)][nnz] values
 *  written as "values" of shape [*batch_shape, nnz] (batch_ndim = 0: [nnz], the plain layout);
 *  metadata: NULL or a NULL-terminated list of key, value strings added to "__metadata__"
 *  (a key given there replaces the writer's own entry of that name).
 *  @return SLA_OK; SLA_EINVAL (NULL argument, batch_ndim outside [0, SLA_SAFETENSORS_MAX_DIMS),
 *          a negative or overflowing batch size, a key without a value); SLA_EDTYPE; SLA_EIO. */
SLA_API sla_status sla_safetensors_write_batch(const char *path, const sla_coo *coo,
                                               sla_dtype dtype, int batch_ndim,
                                               const int64_t *batch_shape,
                                               const char *const *metadata);

#ifdef __cplusplus
}
#endif
#endif
