/* Sparse matrices in safetensors files with torch-sla's layout (tensors values, row_indices,
 * col_indices, shape). Format: 8-byte little-endian header length N, N bytes of JSON
 * {"name": {"dtype": "F64", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}},
 * then the byte buffer the offsets point into (https://github.com/huggingface/safetensors). */
#define _POSIX_C_SOURCE 200809L      /* fdopen */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "io/io_file.h"

/* errors of the reader's helpers are reported in the name of the public function */
#define ST_FAIL(status, ...) sla_error_set((status), "sla_safetensors_read", __VA_ARGS__)

#define ST_MAX_HEADER ((uint64_t)100 << 20)

typedef struct {
    const char *name;
    const char *dtype;       /* "F64", "F32", "I64", "I32", "C128", "C64" */
    int64_t dims[SLA_SAFETENSORS_MAX_DIMS];
    int ndim;
    const unsigned char *data;
    size_t bytes;
} st_tensor;

/* C64 is safetensors' complex64 (two F32: re, im); C128 is the same for two F64 (the name
 * follows torch's complex128, which safetensors itself does not list) */
static size_t st_elem_size(const char *dtype)
{
    if (!strcmp(dtype, "C128")) return 16;
    if (!strcmp(dtype, "F64") || !strcmp(dtype, "I64") || !strcmp(dtype, "C64")) return 8;
    if (!strcmp(dtype, "F32") || !strcmp(dtype, "I32")) return 4;
    return 0;
}

static int st_is_complex(const char *dtype)
{
    return dtype[0] == 'C';
}

/* number k of the tensor: for a complex dtype, k = 2e + c is part c (0 re, 1 im) of entry e */
static double st_get(const st_tensor *t, int64_t k)
{
    if (!strcmp(t->dtype, "C128")) { double v; memcpy(&v, t->data + (size_t)k * 8, 8); return v; }
    if (!strcmp(t->dtype, "C64")) { float v; memcpy(&v, t->data + (size_t)k * 4, 4); return v; }
    const unsigned char *p = t->data + (size_t)k * st_elem_size(t->dtype);
    if (!strcmp(t->dtype, "F64")) { double v; memcpy(&v, p, 8); return v; }
    if (!strcmp(t->dtype, "F32")) { float v; memcpy(&v, p, 4); return v; }
    if (!strcmp(t->dtype, "I64")) { int64_t v; memcpy(&v, p, 8); return (double)v; }
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int64_t st_get_int(const st_tensor *t, int64_t k)
{
    const unsigned char *p = t->data + (size_t)k * st_elem_size(t->dtype);
    if (!strcmp(t->dtype, "I64")) { int64_t v; memcpy(&v, p, 8); return v; }
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* a JSON number that is a non-negative integer below 2^53 (exact in a double) */
static int st_is_count(const cJSON *x)
{
    return cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble <= 9007199254740992.0 &&
           x->valuedouble == floor(x->valuedouble);
}

/* cJSON keeps every member of an object, duplicates included, and looks names up first match:
 * a header naming a tensor (or a field of one) twice is ambiguous, so it is refused. */
static sla_status st_no_duplicates(const char *path, const cJSON *obj, const char *where,
                                   int top)
{
    for (const cJSON *a = obj->child; a; a = a->next) {
        for (const cJSON *b = a->next; b; b = b->next)
            if (a->string && b->string && !strcmp(a->string, b->string))
                return ST_FAIL(SLA_EPARSE, "%s: duplicate key \"%s\" in %s", path, a->string,
                                where);
        if (top && cJSON_IsObject(a)) {           /* the fields of each tensor entry */
            char inner[128];
            snprintf(inner, sizeof inner, "tensor \"%s\"", a->string ? a->string : "?");
            SLA_TRY(st_no_duplicates(path, a, inner, 0));
        }
    }
    return SLA_OK;
}

static sla_status st_find(const char *path, const cJSON *hdr, const unsigned char *buf,
                          size_t buflen, const char *name, int is_index, st_tensor *t)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(hdr, name);
    if (!cJSON_IsObject(e))
        return ST_FAIL(SLA_EPARSE, "%s: no tensor \"%s\" (torch-sla layout: values, row_indices, "
                        "col_indices, shape)", path, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2)
        return ST_FAIL(SLA_EPARSE, "%s: tensor \"%s\" lacks dtype, shape or data_offsets", path, name);
    t->name = name;
    t->dtype = dt->valuestring;
    size_t es = st_elem_size(t->dtype);
    if (!es || (is_index && t->dtype[0] != 'I'))
        return ST_FAIL(SLA_EPARSE, "%s: tensor \"%s\" has dtype %s (expected %s)", path, name,
                        t->dtype, is_index ? "I64 or I32" : "F64, F32, I64, I32, C128 or C64");
    t->ndim = cJSON_GetArraySize(sh);
    if (t->ndim < 1 || t->ndim > SLA_SAFETENSORS_MAX_DIMS)
        return ST_FAIL(SLA_EPARSE, "%s: tensor \"%s\" has %d dimensions", path, name, t->ndim);
    uint64_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        const cJSON *x = cJSON_GetArrayItem(sh, d);
        if (!st_is_count(x))
            return ST_FAIL(SLA_EPARSE, "%s: tensor \"%s\": shape[%d] is not a non-negative integer",
                            path, name, d);
        t->dims[d] = (int64_t)x->valuedouble;
        if (t->dims[d] && count > UINT64_MAX / 16 / (uint64_t)t->dims[d])
            return ST_FAIL(SLA_EPARSE, "%s: tensor \"%s\" shape overflows", path, name);
        count *= (uint64_t)t->dims[d];
    }
    if (!st_is_count(cJSON_GetArrayItem(off, 0)) || !st_is_count(cJSON_GetArrayItem(off, 1)))
        return ST_FAIL(SLA_EPARSE, "%s: tensor \"%s\": data_offsets are not non-negative integers",
                        path, name);
    double b = cJSON_GetArrayItem(off, 0)->valuedouble, en = cJSON_GetArrayItem(off, 1)->valuedouble;
    if (!(b >= 0 && en >= b && en <= (double)buflen) || (uint64_t)(en - b) != count * es)
        return ST_FAIL(SLA_EPARSE, "%s: tensor \"%s\" data_offsets [%.0f, %.0f] do not match its "
                        "shape or lie outside the %zu-byte buffer", path, name, b, en, buflen);
    t->data = buf + (size_t)b;
    t->bytes = (size_t)(en - b);
    return SLA_OK;
}

/* values [*batch, nnz]: batch = NULL refuses a batch (sla_safetensors_read) */
static sla_status st_build(const char *path, const st_tensor *v, const st_tensor *r,
                           const st_tensor *c, const st_tensor *shape, sla_coo **out,
                           int *batch_ndim, int64_t *batch_shape)
{
    if (v->ndim != 1 && !batch_ndim)
        return ST_FAIL(SLA_EPARSE, "%s: \"values\" has %d dimensions: a batch of matrices "
                        "(read it with sla_safetensors_read_batch)", path, v->ndim);
    int64_t nnz = v->dims[v->ndim - 1], nb = 1;
    for (int d = 0; d + 1 < v->ndim; d++) nb *= v->dims[d];   /* bounded by st_find's check */
    if (r->ndim != 1 || c->ndim != 1 || r->dims[0] != nnz || c->dims[0] != nnz)
        return ST_FAIL(SLA_EPARSE, "%s: row_indices and col_indices must have shape [%lld]", path,
                        (long long)nnz);
    if (shape->ndim != 1 || shape->dims[0] != 2)
        return ST_FAIL(SLA_EPARSE, "%s: \"shape\" must have 2 entries", path);
    int64_t m = st_get_int(shape, 0), n = st_get_int(shape, 1);
    if (m < 0 || n < 0) return ST_FAIL(SLA_EPARSE, "%s: negative shape %lld × %lld", path, (long long)m, (long long)n);
    sla_coo *coo = sla_calloc(1, sizeof *coo, "coo");
    if (!coo) return SLA_ENOMEM;
    coo->row = sla_malloc((size_t)nnz, sizeof(int64_t), "rows");
    coo->col = sla_malloc((size_t)nnz, sizeof(int64_t), "cols");
    int nv = st_is_complex(v->dtype) ? 2 : 1;          /* doubles per value */
    coo->values = sla_malloc((size_t)(nnz * nb), (size_t)nv * sizeof(double), "values");
    if (!coo->row || !coo->col || !coo->values) { sla_coo_free(&coo); return SLA_ENOMEM; }
    coo->nrows = m;
    coo->ncols = n;
    coo->nnz = coo->nnz_stored = nnz;
    coo->field = v->dtype[0] == 'I' ? SLA_MM_INTEGER : nv == 2 ? SLA_MM_COMPLEX : SLA_MM_REAL;
    for (int64_t k = 0; k < nnz; k++) {
        coo->row[k] = st_get_int(r, k);
        coo->col[k] = st_get_int(c, k);
        if (coo->row[k] < 0 || coo->row[k] >= m || coo->col[k] < 0 || coo->col[k] >= n) {
            sla_status st = ST_FAIL(SLA_EPARSE, "%s: entry %lld at (%lld, %lld) is outside the "
                                     "%lld × %lld shape", path, (long long)k, (long long)coo->row[k],
                                     (long long)coo->col[k], (long long)m, (long long)n);
            sla_coo_free(&coo);
            return st;
        }
    }
    for (int64_t k = 0; k < nnz * nb * nv; k++) coo->values[k] = st_get(v, k);
    if (batch_ndim) {
        *batch_ndim = v->ndim - 1;
        for (int d = 0; d + 1 < v->ndim; d++) batch_shape[d] = v->dims[d];
    }
    *out = coo;
    return SLA_OK;
}

/* The 8-byte little-endian header length, checked against the file before any pointer into
 * the buffer is formed from it (2^63 would otherwise point far outside). */
static sla_status st_header(const char *path, const unsigned char *buf, size_t len, cJSON **hdr,
                            const unsigned char **data, size_t *dlen)
{
    if (len < 8)
        return ST_FAIL(SLA_EPARSE, "%s: not a safetensors file (%zu bytes, shorter than the "
                       "8-byte header length)", path, len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | buf[i];
    if (hlen > ST_MAX_HEADER || hlen > len - 8)
        return ST_FAIL(SLA_EPARSE, "%s: not a safetensors file (header length %llu, file %zu "
                       "bytes, at most %llu allowed)", path, (unsigned long long)hlen, len,
                       (unsigned long long)ST_MAX_HEADER);
    *hdr = cJSON_ParseWithLength((const char *)buf + 8, (size_t)hlen);
    if (!cJSON_IsObject(*hdr))
        return ST_FAIL(SLA_EPARSE, "%s: the safetensors header is not a JSON object", path);
    *data = buf + 8 + (size_t)hlen;
    *dlen = len - 8 - (size_t)hlen;
    return SLA_OK;
}

/* The metadata dtype (torch's name, "torch.complex128") against the values tensor's: a complex
 * name over real values is a complex matrix stored as (re, im) pairs by another writer, or a
 * corrupt file, and a real name over complex values a corrupt one; either is refused rather
 * than read as what it is not. Other names (integers, unknown) and a missing entry pass. */
static sla_status st_check_metadata(const char *path, const cJSON *hdr, const st_tensor *v)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(hdr, "__metadata__");
    const cJSON *dt = cJSON_IsObject(meta) ? cJSON_GetObjectItemCaseSensitive(meta, "dtype") : NULL;
    if (!cJSON_IsString(dt) || strncmp(dt->valuestring, "torch.", 6) != 0) return SLA_OK;
    const char *t = dt->valuestring + 6;
    int named_complex = strncmp(t, "complex", 7) == 0 || strcmp(t, "cfloat") == 0 ||
                        strcmp(t, "cdouble") == 0;
    int named_real = strncmp(t, "float", 5) == 0 || strcmp(t, "double") == 0 ||
                     strcmp(t, "half") == 0 || strcmp(t, "bfloat16") == 0;
    int vc = st_is_complex(v->dtype);
    if ((named_complex && !vc) || (named_real && vc))
        return ST_FAIL(SLA_EPARSE, "%s: __metadata__ dtype \"%s\" disagrees with \"values\" "
                       "dtype %s (%s)", path, dt->valuestring, v->dtype,
                       vc ? "complex values under a real name" : "real values under a complex "
                       "name: complex stored as (re, im) pairs? write C128 / C64 values");
    return SLA_OK;
}

/* values [*batch, nnz]: batch_ndim = NULL refuses a batch (sla_safetensors_read) */
static sla_status st_parse_into(const char *buf, size_t len, const char *path, const char *func,
                                sla_coo **out, int *batch_ndim, int64_t *batch_shape)
{
    cJSON *hdr = NULL;
    const unsigned char *data = NULL;
    size_t dlen = 0;
    st_tensor v, r, c, shape;
    sla_status st = st_header(path, (const unsigned char *)buf, len, &hdr, &data, &dlen);
    if (st == SLA_OK) st = st_no_duplicates(path, hdr, "the safetensors header", 1);
    if (st == SLA_OK) st = st_find(path, hdr, data, dlen, "values", 0, &v);
    if (st == SLA_OK) st = st_check_metadata(path, hdr, &v);
    if (st == SLA_OK) st = st_find(path, hdr, data, dlen, "row_indices", 1, &r);
    if (st == SLA_OK) st = st_find(path, hdr, data, dlen, "col_indices", 1, &c);
    if (st == SLA_OK) st = st_find(path, hdr, data, dlen, "shape", 1, &shape);
    if (st == SLA_OK) st = st_build(path, &v, &r, &c, &shape, out, batch_ndim, batch_shape);
    cJSON_Delete(hdr);
    return st;
}

static sla_status st_parse(const char *buf, size_t len, const char *path, const char *func,
                           sla_coo **out)
{
    return st_parse_into(buf, len, path, func, out, NULL, NULL);
}

sla_status sla_safetensors_read(const char *path, sla_coo **out)
{
    return io_read_file(path, __func__, st_parse, out);
}

sla_status sla_safetensors_read_batch(const char *path, sla_coo **out, int *batch_ndim,
                                      int64_t batch_shape[SLA_SAFETENSORS_MAX_DIMS])
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(path, "path is NULL");
    SLA_CHECK_ARG(batch_ndim && batch_shape, "batch_ndim or batch_shape is NULL");
    char *buf = NULL;
    size_t len = 0;
    SLA_TRY(io_load_file(path, __func__, &buf, &len));
    sla_status st = st_parse_into(buf, len, path, __func__, out, batch_ndim, batch_shape);
    sla_free(buf);
    return io_name_error(st, __func__, path);
}

/* header entry for one tensor of shape [*lead, d0] laid out at *offset */
static int st_add(cJSON *hdr, const char *name, const char *dtype, int nlead,
                  const int64_t *lead, int64_t d0, size_t bytes, size_t *offset)
{
    cJSON *t = cJSON_AddObjectToObject(hdr, name);
    cJSON *sh = t ? cJSON_AddArrayToObject(t, "shape") : NULL;
    cJSON *off = t ? cJSON_AddArrayToObject(t, "data_offsets") : NULL;
    if (!t || !sh || !off || !cJSON_AddStringToObject(t, "dtype", dtype)) return 0;
    for (int d = 0; d < nlead; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)lead[d]));
    cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)d0));
    cJSON_AddItemToArray(off, cJSON_CreateNumber((double)*offset));
    cJSON_AddItemToArray(off, cJSON_CreateNumber((double)(*offset + bytes)));
    *offset += bytes;
    return 1;
}

/* values (pairs for a complex dtype), then the indices and the shape */
static int st_write_all(FILE *f, const sla_coo *coo, sla_dtype dtype, int64_t nb)
{
    int64_t count = coo->nnz * nb * (sla_dtype_is_complex(dtype) ? 2 : 1);
    for (int64_t k = 0; k < count; k++) {
        int ok;
        if (dtype == SLA_FLOAT64 || dtype == SLA_COMPLEX128) ok = fwrite(&coo->values[k], 8, 1, f) == 1;
        else { float x = (float)coo->values[k]; ok = fwrite(&x, 4, 1, f) == 1; }
        if (!ok) return 0;
    }
    int64_t shape[2] = {coo->nrows, coo->ncols};
    return fwrite(coo->row, 8, (size_t)coo->nnz, f) == (size_t)coo->nnz &&
           fwrite(coo->col, 8, (size_t)coo->nnz, f) == (size_t)coo->nnz &&
           fwrite(shape, 8, 2, f) == 2;
}

/* user metadata pairs replace the fixed entries of the same key */
static int st_add_metadata(cJSON *meta, const char *const *pairs)
{
    for (size_t i = 0; pairs && pairs[i]; i += 2) {
        if (!pairs[i + 1]) return 0;
        cJSON_DeleteItemFromObjectCaseSensitive(meta, pairs[i]);
        if (!cJSON_AddStringToObject(meta, pairs[i], pairs[i + 1])) return 0;
    }
    return 1;
}

/* the writer of both public entry points; messages start with func */
static sla_status st_write(const char *func, const char *path, const sla_coo *coo,
                           sla_dtype dtype, int batch_ndim, const int64_t *batch_shape,
                           const char *const *metadata)
{
    SLA_CHECK_ARG_AS(func, path && coo, "path or coo is NULL");
    SLA_CHECK_ARG_AS(func, batch_ndim >= 0 && batch_ndim < SLA_SAFETENSORS_MAX_DIMS &&
                  (batch_ndim == 0 || batch_shape), "batch_ndim = %d must be in [0, %d) "
                  "(batch_shape non-NULL when > 0)", batch_ndim, SLA_SAFETENSORS_MAX_DIMS);
    int64_t nb = 1;
    for (int d = 0; d < batch_ndim; d++) {
        SLA_CHECK_ARG_AS(func, batch_shape[d] >= 0 && (batch_shape[d] == 0 || nb <= INT64_MAX /
                      batch_shape[d]), "batch_shape[%d] = %lld is negative or overflows", d,
                      (long long)batch_shape[d]);
        nb *= batch_shape[d];
    }
    for (size_t i = 0; metadata && metadata[i]; i += 2) {
        SLA_CHECK_ARG_AS(func, metadata[i + 1], "metadata key \"%s\" has no value", metadata[i]);
        SLA_CHECK_ARG_AS(func, strcmp(metadata[i], "dtype") != 0, "metadata key \"dtype\" is "
                         "reserved: it names the values' dtype, written from the dtype argument "
                         "(a file with another would not read back)");
    }
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32 && dtype != SLA_COMPLEX128 &&
        dtype != SLA_COMPLEX64)
        return SLA_FAIL_AS(func, SLA_EDTYPE, "dtype %d is not float64, float32, complex128 or "
                           "complex64", (int)dtype);
    if ((coo->field == SLA_MM_COMPLEX) != sla_dtype_is_complex(dtype))
        return SLA_FAIL_AS(func, SLA_EDTYPE, "dtype %s does not match the %s values of the "
                           "matrix (complex values are written as complex128 or complex64, real "
                           "ones as float64 or float32)", sla_dtype_name(dtype),
                           coo->field == SLA_MM_COMPLEX ? "complex" : "real");
    static const char *const st_names[] = {[SLA_FLOAT64] = "F64", [SLA_FLOAT32] = "F32",
                                           [SLA_COMPLEX128] = "C128", [SLA_COMPLEX64] = "C64"};
    static const char *const torch_names[] = {
        [SLA_FLOAT64] = "torch.float64", [SLA_FLOAT32] = "torch.float32",
        [SLA_COMPLEX128] = "torch.complex128", [SLA_COMPLEX64] = "torch.complex64"};
    cJSON *hdr = cJSON_CreateObject();
    size_t off = 0, es = sla_dtype_size(dtype), n = (size_t)coo->nnz;
    int ok = hdr && st_add(hdr, "values", st_names[dtype], batch_ndim,
                           batch_shape, coo->nnz, n * (size_t)nb * es, &off) &&
             st_add(hdr, "row_indices", "I64", 0, NULL, coo->nnz, n * 8, &off) &&
             st_add(hdr, "col_indices", "I64", 0, NULL, coo->nnz, n * 8, &off) &&
             st_add(hdr, "shape", "I64", 0, NULL, 2, 16, &off);
    cJSON *meta = ok ? cJSON_AddObjectToObject(hdr, "__metadata__") : NULL;
    ok = ok && meta && cJSON_AddStringToObject(meta, "format", "sparse_tensor") &&
         cJSON_AddStringToObject(meta, "dtype", torch_names[dtype]) &&
         cJSON_AddStringToObject(meta, "version", "1.0") &&
         cJSON_AddStringToObject(meta, "writer", "sla " SLA_VERSION_STRING) &&
         st_add_metadata(meta, metadata);
    char *json = ok ? cJSON_PrintUnformatted(hdr) : NULL;
    cJSON_Delete(hdr);
    if (!json) return SLA_FAIL_AS(func, SLA_ENOMEM, "%s: cannot build the safetensors header", path);
    size_t hl = strlen(json), padded = (hl + 7) / 8 * 8;   /* buffer starts 8-byte aligned */
    io_out o;
    sla_status st = io_out_open(&o, path, func);
    FILE *f = st == SLA_OK ? fdopen(o.fd, "wb") : NULL;
    if (st == SLA_OK && !f) {
        st = SLA_FAIL_AS(func, SLA_EIO, "cannot create '%s': %s", path, strerror(errno));
        io_out_abort(&o);
    }
    if (f) {
        o.fd = -1;                                 /* the stream owns it now */
        unsigned char len8[8];
        for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
        int w = fwrite(len8, 1, 8, f) == 8 && fwrite(json, 1, hl, f) == hl;
        for (size_t i = hl; w && i < padded; i++) w = fputc(' ', f) != EOF;
        w = w && st_write_all(f, coo, dtype, nb);
        int e = w ? 0 : errno;
        if (fclose(f) != 0 && w) e = errno;
        if (!w || e) {
            st = SLA_FAIL_AS(func, SLA_EIO, "cannot write '%s': %s", path, strerror(e ? e : EIO));
            io_out_abort(&o);
        } else {
            st = io_out_commit(&o);
        }
    }
    cJSON_free(json);
    return st;
}

sla_status sla_safetensors_write(const char *path, const sla_coo *coo, sla_dtype dtype)
{
    return st_write(__func__, path, coo, dtype, 0, NULL, NULL);
}

sla_status sla_safetensors_write_batch(const char *path, const sla_coo *coo, sla_dtype dtype,
                                       int batch_ndim, const int64_t *batch_shape,
                                       const char *const *metadata)
{
    return st_write(__func__, path, coo, dtype, batch_ndim, batch_shape, metadata);
}
