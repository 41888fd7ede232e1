/* Predicted cost of an UMFPACK LU factorization, from its symbolic analysis (for method = auto). */
#include <umfpack.h>

#include "direct/direct.h"
#include "direct/lu_util.h"

sla_status sla_umfpack_analyze_cost(const sla_matrix *A, double *nnz_LU, double *flops,
                                    double *bytes)
{
    SLA_TRY(sla_direct_check_square(A));
    int64_t n = sla_pattern_nrows(A->pattern);
    if (nnz_LU) *nnz_LU = (double)n;
    if (flops) *flops = 0;
    if (bytes) *bytes = 0;
    if (n == 0) return SLA_OK;
    /* the backend factors Aᵀ from our CSR arrays (its CSC); the analysis is pattern-only, so
     * NULL values are allowed */
    int64_t *ai = lu_colind64(A->pattern);
    if (!ai) return SLA_ENOMEM;
    double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
    umfpack_dl_defaults(control);
    void *symbolic = NULL;
    int64_t st = umfpack_dl_symbolic(n, n, sla_pattern_rowptr(A->pattern), ai, NULL, &symbolic,
                                     control, info);
    sla_free(ai);
    umfpack_dl_free_symbolic(&symbolic);
    if (st == UMFPACK_ERROR_out_of_memory)
        return SLA_FAIL(SLA_ENOMEM, "UMFPACK ran out of memory in the symbolic analysis");
    if (st < 0)
        return SLA_FAIL(SLA_EBACKEND, "umfpack_dl_symbolic failed with status %lld", (long long)st);
    if (nnz_LU) *nnz_LU = info[UMFPACK_LNZ_ESTIMATE] + info[UMFPACK_UNZ_ESTIMATE] - (double)n;
    if (flops) *flops = info[UMFPACK_FLOPS_ESTIMATE];
    if (bytes) *bytes = info[UMFPACK_NUMERIC_SIZE_ESTIMATE] * info[UMFPACK_SIZE_OF_UNIT];
    return SLA_OK;
}
