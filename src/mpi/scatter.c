/* A global matrix on one rank scattered into a distributed pattern and local values: the root
 * hands in its CSR slots as COO entries (nobody else hands in any), and the pattern's COO map
 * sends them to their owners; the values follow the same map. */
#include <string.h>

#include "mpi/dist.h"

/* Root's CSR slots as COO (row, col) arrays. */
static sla_status csr_entries(const char *func, const sla_matrix *A, int64_t **row,
                              int64_t **col)
{
    const sla_pattern *p = A->pattern;
    int64_t nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    *row = sla_malloc((size_t)nnz, sizeof **row, "global rows");
    *col = sla_malloc((size_t)nnz, sizeof **col, "global columns");
    if (!*row || !*col) return sla_error_attribute(SLA_ENOMEM, func);
    for (int64_t i = 0; i < sla_pattern_nrows(p); i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            (*row)[s] = i;
            (*col)[s] = ci[s];
        }
    return SLA_OK;
}

/* Root's checks of A against the layouts. */
static sla_status check_root(const char *func, const sla_dist_layout *rows,
                             const sla_dist_layout *cols, const sla_matrix *A)
{
    SLA_TRY(sla_matrix_check_for(func, "A", A, 0));
    int64_t m = sla_pattern_nrows(A->pattern), n = sla_pattern_ncols(A->pattern);
    if (m != rows->N || n != cols->N)
        return sla_error_set(SLA_ESHAPE, func, "A is %lld x %lld but the layouts are %lld x %lld",
                             (long long)m, (long long)n, (long long)rows->N, (long long)cols->N);
    return SLA_OK;
}

sla_status sla_dist_matrix_scatter(const sla_dist_layout *rows, const sla_dist_layout *cols,
                                   int root, const sla_matrix *A, sla_dist_pattern **P,
                                   void **values, sla_dtype *dtype_out, int64_t *batch_out)
{
    if (P) *P = NULL;
    if (values) *values = NULL;
    if (!rows || !cols) return SLA_FAIL(SLA_EINVAL, "%s is NULL", rows ? "cols" : "rows");
    MPI_Comm comm = rows->comm;
    int64_t r64 = root;
    static const char *const names[1] = {"root"};
    sla_status st = SLA_OK;
    if (!P || !values) st = SLA_FAIL(SLA_EINVAL, "%s is NULL", P ? "values" : "P");
    else if (root < 0 || root >= rows->size)
        st = SLA_FAIL(SLA_EINVAL, "root = %d is not a rank of the %d", root, rows->size);
    else if (rows->rank == root) st = check_root(__func__, rows, cols, A);
    int64_t *row = NULL, *col = NULL, nnz = 0;
    if (st == SLA_OK && rows->rank == root) {
        nnz = sla_pattern_nnz(A->pattern);
        st = csr_entries(__func__, A, &row, &col);
    }
    st = dist_agree_same(comm, __func__, st, 1, &r64, names);
    if (st < 0) {
        sla_free(row);
        sla_free(col);
        return st;
    }
    int64_t meta[2] = {0, 0};
    if (rows->rank == root) {
        meta[0] = A->dtype;
        meta[1] = A->batch;
    }
    int rc = MPI_Bcast(meta, 2, MPI_INT64_T, root, comm);
    st = rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error(__func__, "MPI_Bcast", rc);
    sla_dtype dtype = (sla_dtype)meta[0];
    int64_t batch = meta[1];
    sla_dist_pattern *D = NULL;
    void *v = NULL;
    if (st == SLA_OK) st = sla_dist_pattern_from_coo(rows, cols, nnz, row, col, &D);
    sla_free(row);
    sla_free(col);
    if (st == SLA_OK) {
        v = sla_malloc((size_t)(batch * sla_dist_pattern_nnz(D)), sla_dtype_size(dtype),
                       "local values");
        st = dist_agree(comm, __func__, v ? SLA_OK : sla_error_attribute(SLA_ENOMEM, __func__));
    }
    if (st == SLA_OK)
        st = sla_dist_values_gather(D, dtype, batch, rows->rank == root ? A->values : NULL, v);
    if (st < 0) {
        sla_free(v);
        sla_dist_pattern_free(&D);
        return st;
    }
    *P = D;
    *values = v;
    if (dtype_out) *dtype_out = dtype;
    if (batch_out) *batch_out = batch;
    return SLA_OK;
}
