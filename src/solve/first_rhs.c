/* sla_solver_create_for / sla_solver_refactor_for (solver.h): the right-hand side of the
 * coming solve, handed to the backend during its factorization. The hint lives in a
 * thread-local for the length of the call, so that every path of the create (method auto's
 * tries, complex auto's classes) reaches the backend unchanged; a backend takes it only for the
 * solver of the matrix the caller named (the same values pointer, pattern, dtype and batch),
 * so that solvers created on the way for other matrices (AMG coarse levels, shift-invert)
 * never see it. */
#include "core/kernels.h"
#include "solve/backend.h"

static _Thread_local sla_first_rhs pending;

const sla_first_rhs *sla_solver_first_rhs(const sla_solver *s)
{
    const sla_first_rhs *h = &pending;
    if (!h->B || !s->pattern || s->pattern != h->pattern || s->A.values != h->values ||
        s->dtype != h->dtype || s->batch != h->batch || s->n != h->n)
        return NULL;
    return h;
}

/* The hint for A, checked: op, nrhs, B's size. hint->B stays NULL (no hint) for an empty or
 * non-finite B: the solve itself reports the latter. */
static sla_status make_hint(const char *func, const sla_matrix *A, const void *values, sla_op op,
                            int64_t nrhs, const void *B, sla_first_rhs *hint)
{
    ARG_CHECK(op == SLA_OP_N || op == SLA_OP_T || op == SLA_OP_C, "op = %d is not N, T or C",
              (int)op);
    ARG_CHECK(nrhs >= 1, "nrhs = %lld < 1", (long long)nrhs);
    int64_t n = sla_pattern_ncols(A->pattern), total, bad;
    SLA_TRY(sla_check_block(func, "B", B, A->batch, n, nrhs, &total));
    *hint = (sla_first_rhs){.pattern = A->pattern, .values = values, .dtype = A->dtype,
                            .batch = A->batch, .n = n, .op = op, .nrhs = nrhs, .B = NULL};
    /* device memory is not read from the host: no hint (device backends ignore it anyway) */
    if (sla_pattern_nrows(A->pattern) != n || total == 0 || A->space != SLA_MEM_HOST) return SLA_OK;
    if (!sla_all_finite(A->dtype, B, total, &bad)) return SLA_OK;
    if (op == SLA_OP_C && !sla_dtype_is_complex(A->dtype)) hint->op = SLA_OP_T;
    hint->B = B;
    return SLA_OK;
}

sla_status sla_solver_create_for(const sla_matrix *A, const sla_solver_options *opt, sla_op op,
                                 int64_t nrhs, const void *B, sla_solver **out)
{
    const char *func = "sla_solver_create_for";
    SLA_CHECK_ARG(out, "out is NULL");
    *out = NULL;
    SLA_TRY(sla_matrix_check_space(func, "A", A, 1 | SLA_CHECK_COMPLEX_OK));
    sla_first_rhs hint;
    SLA_TRY(make_hint(func, A, A->values, op, nrhs, B, &hint));
    pending = hint;
    sla_status st = sla_solver_create(A, opt, out);
    pending.B = NULL;
    return st;
}

sla_status sla_solver_refactor_for(sla_solver *s, const void *values, sla_op op, int64_t nrhs,
                                   const void *B)
{
    const char *func = "sla_solver_refactor_for";
    SLA_CHECK_ARG(s && s->backend, "solver is NULL");
    SLA_CHECK_ARG(s->pattern, "a matrix-free solver has no values to refactor");
    sla_matrix A = s->A;
    A.pattern = s->pattern;
    sla_first_rhs hint;
    SLA_TRY(make_hint(func, &A, values, op, nrhs, B, &hint));
    pending = hint;
    sla_status st = sla_solver_refactor(s, values);
    pending.B = NULL;
    return st;
}
