/* COCG, the conjugate orthogonal conjugate gradient method (H. A. van der Vorst and
 * J. B. M. Melissen, "A Petrov–Galerkin type method for solving Ax = b, where A is symmetric
 * complex", IEEE Trans. Magnetics 26(2), 1990), against the operator table.
 *
 * For complex symmetric A = Aᵀ (Helmholtz and Maxwell with absorbing boundaries or lossy
 * media), CG's recurrences with the bilinear form xᵀy in place of the inner product xᴴy:
 *   α = rᵀz / pᵀAp,  x += αp,  r −= αAp,  z = M⁻¹r,  β = r'ᵀz' / rᵀz,  p = z + βp,
 * with M complex symmetric too (Jacobi; an incomplete LDLᵀ without conjugation). Work and memory
 * are CG's (one SpMV, 4–5 vectors), the residual is not minimised (it is quasi-minimal only in
 * exact arithmetic for the symmetric Lanczos process), and xᵀx can vanish for x ≠ 0, so the
 * scalars are tested against the norms of their vectors: |pᵀAp| ≤ 16 ε ‖p‖‖Ap‖ or
 * |rᵀz| ≤ 16 ε ‖r‖‖z‖ is a breakdown (reason breakdown), as BiCGStab tests its inner products.
 * In a real space the scalars are real and the method is CG without CG's definiteness tests. */
#include <float.h>
#include <math.h>

#include "krylov/krylov.h"

static int negligible(double complex xy, double xnorm, double ynorm, double eps)
{
    return !(cabs(xy) > 16 * eps * xnorm * ynorm);
}

/* z = M⁻¹r (z is r itself without a preconditioner), *rz = rᵀz, *znorm = ‖z‖ */
static sla_status precondition(const sla_operator *A, sla_op op, const void *r, double rnorm,
                               void *z, double complex *rz, double *znorm)
{
    const sla_space *V = A->domain;
    if (A->precond) {
        SLA_TRY(A->precond(A, op, r, z));
        SLA_TRY(V->norm(V, z, znorm));
    } else {
        *znorm = rnorm;
    }
    return sla_kzdot(V, 0, r, z, rz);
}

static int finite(double complex z) { return isfinite(creal(z)) && isfinite(cimag(z)); }

sla_status sla_krylov_cocg(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                           const void *b, void *x, sla_krylov_result *res)
{
    const sla_space *V = A->domain;
    void *v[4] = {0};
    int nv = A->precond ? 4 : 3;
    SLA_TRY(sla_kvecs_create(V, nv, v));
    void *r = v[0], *p = v[1], *q = v[2];
    void *z = A->precond ? v[3] : r;
    const double eps = sla_dtype_real(V->dtype) == SLA_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    sla_kstate S = {0};
    double rnorm = 0, znorm, pnorm, qnorm;
    double complex rz, pq;
    int done, action;
    int64_t it = 0;
    sla_reason stop = SLA_REASON_CONVERGED;
    sla_status st;
    SLA_KCALL(sla_kstart(&S, A, op, P, b, x, r, res, &rnorm, &done));
    if (done) goto out;
restart:
    SLA_KCALL(precondition(A, op, r, rnorm, z, &rz, &znorm));
    if (!finite(rz)) { stop = SLA_REASON_NONFINITE; goto finish; }
    if (negligible(rz, rnorm, znorm, eps)) { stop = SLA_REASON_BREAKDOWN; goto finish; }
    SLA_KCALL(V->axpby(V, 1.0, z, 0.0, p));
    pnorm = znorm;
    for (;;) {
        if (it >= P->maxiter) { stop = SLA_REASON_MAXITER; break; }
        SLA_KCALL(A->apply(A, op, p, q));
        SLA_KCALL(sla_kzdot(V, 0, p, q, &pq));
        SLA_KCALL(V->norm(V, q, &qnorm));
        res->iterations = ++it;
        if (!finite(pq) || !isfinite(qnorm)) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(pq, pnorm, qnorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        double complex alpha = sla_kzdiv(rz, pq), rz_new;
        SLA_KCALL(sla_kzaxpby(V, alpha, p, 1.0, x));
        SLA_KCALL(sla_kzaxpby(V, -alpha, q, 1.0, r));
        SLA_KCALL(V->norm(V, r, &rnorm));
        if (!isfinite(rnorm)) { stop = SLA_REASON_NONFINITE; break; }
        SLA_KCALL(sla_kcheckpoint(&S, rnorm, x));
        SLA_KCALL(sla_kmonitor(&S, it, rnorm));
        if (rnorm <= S.tol) {
            SLA_KCALL(sla_kverify(&S, x, q, &action));
            if (action != 1) goto out;
            SLA_KCALL(V->axpby(V, 1.0, q, 0.0, r));      /* residual replacement */
            rnorm = res->residual;
            goto restart;
        }
        SLA_KCALL(precondition(A, op, r, rnorm, z, &rz_new, &znorm));
        if (!finite(rz_new)) { stop = SLA_REASON_NONFINITE; break; }
        if (negligible(rz_new, rnorm, znorm, eps)) { stop = SLA_REASON_BREAKDOWN; break; }
        double complex beta = sla_kzdiv(rz_new, rz);
        rz = rz_new;
        SLA_KCALL(sla_kzaxpby(V, 1.0, z, beta, p));      /* p = z + βp */
        SLA_KCALL(V->norm(V, p, &pnorm));
    }
finish:
    st = sla_kfinish(&S, stop, x, q);
out:
    sla_kend(&S);
    sla_kvecs_free(V, nv, v);
    return st;
}
