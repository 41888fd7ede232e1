/* Values of a distributed pattern: the caller's COO values into local slots (sent to the
 * owners along the pattern's COO map, summed in received order; for CSR input, copied on
 * this rank), gradients back, and the collective check of a view. */
#include <string.h>

#include "mpi/dist.h"
#include "core/kernels.h"

static sla_status check_dtype(const char *func, sla_dtype dtype)
{
    if (dtype != SLA_FLOAT64 && dtype != SLA_FLOAT32)
        return sla_error_set(SLA_EDTYPE, func, "dtype %d is not float64 or float32", (int)dtype);
    return SLA_OK;
}

sla_status dist_matrix_check_local(const char *func, const sla_dist_matrix *A)
{
    SLA_TRY(check_dtype(func, A->dtype));
    if (A->batch < 1)
        return sla_error_set(SLA_EINVAL, func, "A->batch = %lld < 1", (long long)A->batch);
    int64_t nnz = sla_dist_pattern_nnz(A->pattern), count;
    SLA_TRY(sla_check_block(func, "A->values", A->values, A->batch, nnz, 1, &count));
    if (count > INT64_MAX / 8)
        return sla_error_set(SLA_EINVAL, func, "A->batch = %lld: the values overflow int64 bytes",
                             (long long)A->batch);
    return SLA_OK;
}

/* Local checks shared by gather and scatter: in [batch][nin], out [batch][nout]. */
static sla_status check_values(const char *func, sla_dtype dtype, int64_t batch,
                               const char *in_name, const void *in, int64_t nin,
                               const char *out_name, const void *out, int64_t nout)
{
    SLA_TRY(check_dtype(func, dtype));
    if (batch < 1) return sla_error_set(SLA_EINVAL, func, "batch = %lld < 1", (long long)batch);
    int64_t ni, no;
    size_t es = sla_dtype_size(dtype);
    SLA_TRY(sla_check_block(func, in_name, in, batch, nin, 1, &ni));
    SLA_TRY(sla_check_block(func, out_name, out, batch, nout, 1, &no));
    if (ni > INT64_MAX / 8 || no > INT64_MAX / 8)
        return sla_error_set(SLA_EINVAL, func, "batch = %lld: the values overflow int64 bytes",
                             (long long)batch);
    return sla_check_overlap(func, out_name, out, (size_t)no * es, in_name, in, (size_t)ni * es);
}

/* CSR input in merge order (pattern_csr.c): the entries of each local row are the diagonal
 * and off-diagonal block's slots merged by global column; copies values between the entry
 * order (ent) and the slots (slots), to_slots choosing the direction. */
static void merge_copy(const sla_dist_pattern *P, size_t es, char *ent, char *slots,
                       int to_slots)
{
    const int64_t *dr = sla_pattern_rowptr(P->diag), *orp = sla_pattern_rowptr(P->offd);
    const int32_t *dc = sla_pattern_colind(P->diag), *oc = sla_pattern_colind(P->offd);
    const int64_t *cg = P->cols->global, *gg = P->ghost_global;
    for (int64_t i = 0, k = 0; i < P->rows->n; i++) {
        int64_t a = dr[i], ae = dr[i + 1], o = orp[i], oe = orp[i + 1];
        for (; a < ae || o < oe; k++) {
            int64_t s = o == oe || (a < ae && cg[dc[a]] < gg[oc[o]]) ? a++ : P->nnz_diag + o++;
            if (to_slots) memcpy(slots + (size_t)s * es, ent + (size_t)k * es, es);
            else memcpy(ent + (size_t)k * es, slots + (size_t)s * es, es);
        }
    }
}

/* CSR input: the entries are this rank's, so gather and scatter are local (no exchange). */
static void csr_values(const sla_dist_pattern *P, sla_dtype dtype, int64_t batch, char *ent,
                       char *slots, int to_slots)
{
    size_t es = sla_dtype_size(dtype);
    int64_t nin = P->nnz_in, nloc = sla_dist_pattern_nnz(P);
    for (int64_t b = 0; b < batch; b++) {
        char *e = ent + (size_t)b * (size_t)nin * es, *l = slots + (size_t)b * (size_t)nloc * es;
        if (!P->recv_slot) merge_copy(P, es, e, l, to_slots);
        else if (to_slots) dist_gather_slots(dtype, 1, nloc, nin, P->recv_slot, e, l);
        else
            for (int64_t k = 0; k < nin; k++)
                memcpy(e + (size_t)k * es, l + (size_t)P->recv_slot[k] * es, es);
    }
}

/* The two buffers of a value exchange: per entry, its batch values together. */
static sla_status value_buffers(const sla_dist_pattern *P, const char *func, size_t unit,
                                char **sendb, char **recvb)
{
    *sendb = sla_malloc((size_t)P->nnz_in, unit, "values to send");
    *recvb = sla_malloc((size_t)P->nrecv, unit, "received values");
    return *sendb && *recvb ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
}

sla_status sla_dist_values_gather(const sla_dist_pattern *P, sla_dtype dtype, int64_t batch,
                                  const void *coo_values, void *local_values)
{
    SLA_CHECK_ARG(P, "P is NULL");
    char *sendb = NULL, *recvb = NULL;
    size_t es = sla_dtype_size(dtype), unit = es * (size_t)(batch > 0 ? batch : 1);
    sla_status st = check_values(__func__, dtype, batch, "coo_values", coo_values, P->nnz_in,
                                 "local_values", local_values, sla_dist_pattern_nnz(P));
    if (st == SLA_OK && !P->csr_input) st = value_buffers(P, __func__, unit, &sendb, &recvb);
    int64_t same[2] = {dtype, batch};
    static const char *const names[2] = {"dtype", "batch"};
    st = dist_agree_same(P->comm, __func__, st, 2, same, names);
    if (st == SLA_OK && P->csr_input) {
        csr_values(P, dtype, batch, (char *)coo_values, local_values, 1);
        return SLA_OK;
    }
    if (st == SLA_OK) {
        const char *coo = coo_values;
        for (int64_t k = 0; k < P->nnz_in; k++)
            for (int64_t b = 0; b < batch; b++)
                memcpy(sendb + (size_t)P->coo_pos[k] * unit + (size_t)b * es,
                       coo + ((size_t)b * (size_t)P->nnz_in + (size_t)k) * es, es);
        st = dist_xchg_run(&P->coo, P->comm, __func__, unit, sendb, recvb, 0);
    }
    if (st == SLA_OK)
        dist_gather_slots(dtype, batch, sla_dist_pattern_nnz(P), P->nrecv, P->recv_slot, recvb,
                          local_values);
    sla_free(sendb);
    sla_free(recvb);
    return st;
}

sla_status sla_dist_values_scatter(const sla_dist_pattern *P, sla_dtype dtype, int64_t batch,
                                   const void *local_values, void *coo_values)
{
    SLA_CHECK_ARG(P, "P is NULL");
    char *sendb = NULL, *recvb = NULL;
    size_t es = sla_dtype_size(dtype), unit = es * (size_t)(batch > 0 ? batch : 1);
    int64_t nloc = sla_dist_pattern_nnz(P);
    sla_status st = check_values(__func__, dtype, batch, "local_values", local_values, nloc,
                                 "coo_values", coo_values, P->nnz_in);
    if (st == SLA_OK && !P->csr_input) st = value_buffers(P, __func__, unit, &sendb, &recvb);
    int64_t same[2] = {dtype, batch};
    static const char *const names[2] = {"dtype", "batch"};
    st = dist_agree_same(P->comm, __func__, st, 2, same, names);
    if (st == SLA_OK && P->csr_input) {
        csr_values(P, dtype, batch, coo_values, (char *)local_values, 0);
        return SLA_OK;
    }
    if (st == SLA_OK) {
        const char *loc = local_values;
        for (int64_t e = 0; e < P->nrecv; e++)
            for (int64_t b = 0; b < batch; b++)
                memcpy(recvb + (size_t)e * unit + (size_t)b * es,
                       loc + ((size_t)b * (size_t)nloc + (size_t)P->recv_slot[e]) * es, es);
        st = dist_xchg_run(&P->coo, P->comm, __func__, unit, recvb, sendb, 1);
    }
    if (st == SLA_OK) {
        char *coo = coo_values;
        for (int64_t k = 0; k < P->nnz_in; k++)
            for (int64_t b = 0; b < batch; b++)
                memcpy(coo + ((size_t)b * (size_t)P->nnz_in + (size_t)k) * es,
                       sendb + (size_t)P->coo_pos[k] * unit + (size_t)b * es, es);
    }
    sla_free(sendb);
    sla_free(recvb);
    return st;
}

/* Local row of slot s of a block (binary search in its row pointers). */
static int64_t slot_row(const sla_pattern *p, int64_t s)
{
    const int64_t *rp = sla_pattern_rowptr(p);
    int64_t a = 0, b = sla_pattern_nrows(p);
    while (b - a > 1) {
        int64_t mid = a + (b - a) / 2;
        if (rp[mid] <= s) a = mid; else b = mid;
    }
    return a;
}

/* SLA_ENONFINITE naming the first non-finite local value, with its global row and column. */
static sla_status check_finite(const char *func, const sla_dist_matrix *A)
{
    const sla_dist_pattern *P = A->pattern;
    int64_t nloc = sla_dist_pattern_nnz(P), bad;
    size_t es = sla_dtype_size(A->dtype);
    for (int64_t b = 0; b < A->batch; b++) {
        const char *v = (const char *)A->values + (size_t)b * (size_t)nloc * es;
        if (sla_all_finite(A->dtype, v, nloc, &bad)) continue;
        int offd = bad >= P->nnz_diag;
        const sla_pattern *p = offd ? P->offd : P->diag;
        int64_t s = offd ? bad - P->nnz_diag : bad;
        int64_t i = slot_row(p, s);
        return sla_error_set(SLA_ENONFINITE, func, "A->values[%lld][%lld] (row %lld, col %lld) "
                             "is not finite", (long long)b, (long long)bad,
                             (long long)P->rows->global[i],
                             (long long)dist_pattern_global_col(P, offd,
                                                                sla_pattern_colind(p)[s]));
    }
    return SLA_OK;
}

sla_status sla_dist_matrix_check(const sla_dist_matrix *A, int check_finite_values)
{
    SLA_CHECK_ARG(A && A->pattern, "%s is NULL", A ? "A->pattern" : "A");
    sla_status st = dist_matrix_check_local(__func__, A);
    if (st == SLA_OK && check_finite_values) st = check_finite(__func__, A);
    int64_t same[2] = {A->dtype, A->batch};
    static const char *const names[2] = {"dtype", "batch"};
    return dist_agree_same(A->pattern->comm, __func__, st, 2, same, names);
}
