/* method = auto's accuracy when no tolerance is given (rule 10 of auto.c): every column's
 * normwise backward error
 *     η = ‖b − A x‖₂ / (‖A‖_F ‖x‖₂ + ‖b‖₂) ≤ SLA_AUTO_BACKWARD_ERROR (float32: ..._F32),
 * what a backward-stable direct solve (torch.linalg.solve) gives. Direct methods meet it by
 * construction (backward stable; KLU and UMFPACK refine). An iterative method cannot test η
 * while it runs (‖x‖ changes), so it runs first with the classic default rtol 1e-10 (never
 * less accurate than before the target existed), then η is measured (one SpMV over all
 * columns) and, when above the target, the solve is continued from X with atol =
 * ½·target·min_j (‖A‖_F ‖x_j‖ + ‖b_j‖), at most SLA_AUTO_ACCURACY_ROUNDS times. η decides
 * convergence: a first solve that stagnated short of rtol 1e-10 (‖A‖‖x‖ ≫ ‖b‖, κ ≳ 1e6) but
 * meets η has converged; a well-conditioned one (‖A‖‖x‖ ≈ ‖b‖) needs ‖r‖ ≈ 1e-12‖b‖, a few
 * more iterations than rtol 1e-10. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solve/auto.h"
#include "solve/backend.h"

/* continuations of the solve after the first one, at most */
#define SLA_AUTO_ACCURACY_ROUNDS 3

static double target_of(const sla_solver *s)
{
    return s->dtype == SLA_FLOAT64 ? SLA_AUTO_BACKWARD_ERROR : SLA_AUTO_BACKWARD_ERROR_F32;
}

int sla_auto_accuracy_applies(const sla_solver *s)
{
    return s->is_auto && s->default_tol && s->pattern && s->m == s->n &&
           sla_method_is_iterative(s->opt.method) && s->opt.method != SLA_METHOD_LSQR;
}

void sla_auto_accuracy_note(sla_solver *s)
{
    if (!sla_auto_accuracy_applies(s)) return;
    char note[160];
    snprintf(note, sizeof note, "no tolerance given: rtol %.0e and backward error ≤ %.0e",
             s->opt.rtol, target_of(s));
    sla_text_append(s->why, sizeof s->why, "; ", note);
    sla_auto_cut_suffix(s);
    sla_auto_append_suffix(s);
}

sla_status sla_auto_norms(sla_solver *s)
{
    sla_auto_state *a = s->auto_state;
    if (!sla_auto_accuracy_applies(s)) return SLA_OK;
    if (!a->anorm && !(a->anorm = sla_malloc((size_t)s->batch, sizeof(double), "matrix norms")))
        return SLA_ENOMEM;
    sla_matrix A = s->A;
    A.pattern = s->pattern;
    return sla_matrix_norm(&A, 'F', a->anorm);
}

static double entry(sla_dtype dt, const void *x, int64_t i)
{
    return dt == SLA_FLOAT64 ? ((const double *)x)[i] : (double)((const float *)x)[i];
}

/* η of every column of R = B − op(A) X: its maximum, and the atol that meets the target in every
 * column (min over the columns of target·(‖A‖_F‖x‖ + ‖b‖)); info's residual fields. R [total]
 * and sums [3·nrhs] are workspace. */
static sla_status measure(sla_solver *s, sla_op op, int64_t nrhs, const void *B, const void *X,
                          int64_t total, void *R, double *sums, double *eta, double *atol,
                          sla_solve_info *info)
{
    const sla_auto_state *a = s->auto_state;
    size_t es = sla_dtype_size(s->dtype);
    memcpy(R, B, (size_t)total * es);
    sla_matrix A = s->A;
    A.pattern = s->pattern;
    SLA_TRY(sla_spmv(op, -1.0, &A, X, 1, nrhs, 1.0, R));
    double target = target_of(s);
    int64_t n = s->n;
    *eta = 0;
    *atol = INFINITY;
    info->residual_norm = info->relative_residual = 0;
    for (int64_t b = 0; b < s->batch; b++) {
        memset(sums, 0, (size_t)(3 * nrhs) * sizeof *sums);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < nrhs; j++) {
                int64_t q = (b * n + i) * nrhs + j;
                double r = entry(s->dtype, R, q), x = entry(s->dtype, X, q),
                       y = entry(s->dtype, B, q);
                sums[3 * j] += r * r;
                sums[3 * j + 1] += x * x;
                sums[3 * j + 2] += y * y;
            }
        for (int64_t j = 0; j < nrhs; j++) {
            double rn = sqrt(sums[3 * j]), scale = a->anorm[b] * sqrt(sums[3 * j + 1]) +
                                                   sqrt(sums[3 * j + 2]);
            double e = scale > 0 ? rn / scale : (rn > 0 ? INFINITY : 0);
            *eta = isnan(e) || e > *eta ? e : *eta;
            if (scale > 0) *atol = fmin(*atol, target * scale);
            info->residual_norm = fmax(info->residual_norm, rn);
            double bn = sqrt(sums[3 * j + 2]);
            info->relative_residual = fmax(info->relative_residual, bn > 0 ? rn / bn
                                                                  : rn > 0 ? INFINITY : 0);
        }
    }
    return SLA_OK;
}

/* One more solve from X to ‖r‖ ≤ atol (per-solve parameters; the options stay as they are). */
static sla_status continue_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                                 double atol, int64_t maxiter, sla_solve_info *info)
{
    sla_solve_params p = {.rtol = 0, .atol = atol, .maxiter = maxiter, .x0_nonzero = 1};
    sla_solve_info step = *info;
    step.converged = 1;
    step.reason = SLA_REASON_CONVERGED;
    step.iterations = 0;
    step.residual_norm = step.relative_residual = -1;
    sla_status st = s->backend->solve(s, op, nrhs, B, X, &p, &step);
    if (st < 0) return st;
    info->iterations += step.iterations;
    info->converged = step.converged;
    info->reason = step.reason;
    return SLA_OK;
}

sla_status sla_auto_accuracy(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             int64_t total, const sla_solve_params *p, sla_solve_info *info)
{
    if (!sla_auto_accuracy_applies(s) || !s->auto_state->anorm) return SLA_OK;
    void *R = sla_malloc((size_t)total, sla_dtype_size(s->dtype), "residual");
    double *sums = sla_malloc((size_t)nrhs, 3 * sizeof(double), "column norms");
    sla_status st = R && sums ? SLA_OK : SLA_ENOMEM;
    double target = target_of(s), eta = INFINITY, atol = 0;
    for (int round = 0; st == SLA_OK; round++) {
        st = measure(s, op, nrhs, B, X, total, R, sums, &eta, &atol, info);
        if (st != SLA_OK || eta <= target || round == SLA_AUTO_ACCURACY_ROUNDS) break;
        /* a method that stopped for another reason than its tolerance will not progress */
        if (!info->converged && info->reason != SLA_REASON_MAXITER) break;
        int64_t left = p->maxiter - info->iterations;
        if (left < 1) { info->reason = SLA_REASON_MAXITER; break; }
        st = continue_solve(s, op, nrhs, B, X, 0.5 * atol, left, info);
    }
    sla_free(R);
    sla_free(sums);
    if (st != SLA_OK) return st;
    info->converged = eta <= target;
    if (info->converged) info->reason = SLA_REASON_CONVERGED;
    else if (info->reason == SLA_REASON_CONVERGED) info->reason = SLA_REASON_STAGNATION;
    return SLA_OK;
}
