/* The public preconditioner object (sla/precond.h): the preconditioners of the Krylov layer
 * (precond/precond.h) with argument checks at the boundary, for matrix-free operators whose
 * preconditioner comes from an approximate matrix. */
#include <stdio.h>

#include "core/kernels.h"
#include "precond/precond.h"

struct sla_preconditioner {
    sla_pc *pc;
    sla_matrix P;                /* borrowed values */
    sla_pattern *pattern;        /* retained */
    int64_t n;
    int broken;                  /* the last update failed: refuse to apply */
    char error[256];
};

sla_status sla_preconditioner_create(const sla_matrix *P, sla_precond kind,
                                     sla_preconditioner **out)
{
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_CHECK_ARG(kind == SLA_PRECOND_JACOBI || kind == SLA_PRECOND_IC0 ||
                  kind == SLA_PRECOND_ILU0 || kind == SLA_PRECOND_AMG,
                  "kind %s is not a preconditioner built from a matrix (jacobi, ic0, ilu0, amg)",
                  sla_precond_name(kind));
    SLA_TRY(sla_matrix_check_for(__func__, "P", P, 1 | SLA_CHECK_COMPLEX_OK));
    int64_t m = sla_pattern_nrows(P->pattern), n = sla_pattern_ncols(P->pattern);
    if (m != n)
        return SLA_FAIL(SLA_ESHAPE, "P is %lld × %lld; a preconditioner needs a square matrix",
                        (long long)m, (long long)n);
    sla_preconditioner *M = sla_calloc(1, sizeof *M, "preconditioner object");
    if (!M) return sla_error_attribute(SLA_ENOMEM, __func__);
    sla_pc_options o = {.kind = kind};
    sla_status st = sla_pc_create(P, &o, &M->pc, NULL);
    if (st < 0) {
        sla_free(M);
        return sla_error_attribute(st, __func__);
    }
    M->pattern = sla_pattern_retain((sla_pattern *)P->pattern);
    M->P = *P;
    M->n = n;
    *out = M;
    return SLA_OK;
}

sla_status sla_preconditioner_update(sla_preconditioner *M, const void *values)
{
    SLA_CHECK_ARG(M, "M is NULL");
    sla_matrix P = M->P;
    P.values = values;
    SLA_TRY(sla_matrix_check_for(__func__, "values", &P, 1 | SLA_CHECK_COMPLEX_OK));
    sla_status st = sla_pc_update(M->pc, &P, NULL);
    M->broken = st < 0;
    if (st < 0) {
        snprintf(M->error, sizeof M->error, "%s", sla_last_error());
        return sla_error_attribute(st, __func__);
    }
    M->P = P;
    return SLA_OK;
}

sla_status sla_preconditioner_apply(sla_preconditioner *M, sla_op op, int64_t batch_index,
                                    const void *r, void *z)
{
    SLA_CHECK_ARG(M, "M is NULL");
    SLA_CHECK_ARG(op == SLA_OP_N || op == SLA_OP_T ||
                  (op == SLA_OP_C && sla_dtype_is_complex(M->P.dtype)),
                  "op = %d is not N or T (or C, complex)", (int)op);
    SLA_CHECK_ARG(batch_index >= 0 && batch_index < M->P.batch,
                  "batch_index = %lld is not in [0, %lld)", (long long)batch_index,
                  (long long)M->P.batch);
    SLA_CHECK_ARG((r && z) || M->n == 0, "r or z is NULL");
    size_t bytes = (size_t)M->n * sla_dtype_size(M->P.dtype);
    const sla_buf o[] = {{"z", z, bytes}}, i[] = {{"r", r, bytes}};
    SLA_TRY(sla_check_aliasing(__func__, o, 1, i, 1));
    if (M->broken)
        return SLA_FAIL(SLA_EINVAL, "the last update failed (%s); update with values it "
                        "accepts first", M->error);
    sla_status st = sla_pc_prepare(M->pc, op);
    if (st >= 0) st = sla_pc_apply(M->pc, op, batch_index, r, z);
    return sla_error_attribute(st, __func__);
}

const char *sla_preconditioner_describe(const sla_preconditioner *M)
{
    return M ? sla_pc_describe(M->pc) : "";
}

void sla_preconditioner_free(sla_preconditioner **pM)
{
    if (!pM || !*pM) return;
    sla_preconditioner *M = *pM;
    *pM = NULL;
    sla_pc_free(&M->pc);
    sla_pattern_free(&M->pattern);
    sla_free(M);
}
