/* Restarted GMRES(m) (Saad & Schultz 1986), right preconditioned, against the operator table.
 *
 * Each cycle starts from the true residual r = b − op(A)x, builds an orthonormal Krylov basis
 * V of op(A)M⁻¹ by Arnoldi with modified Gram–Schmidt, reduces the (m+1) × m Hessenberg matrix
 * to triangular form with Givens rotations (whose last entry |g_{j+1}| is the residual norm of
 * the least-squares solution), and at the end of the cycle updates x += M⁻¹ V y. Memory: m + 2
 * vectors plus O(m²) doubles. The preconditioned directions M⁻¹v_j are not stored (this is not
 * flexible GMRES): one more preconditioner application per cycle instead of m vectors.
 * Complex spaces: the Hessenberg entries, rotations and y are complex (h_ij = v_iᴴ w, rotations
 * [[c̄, s̄], [−s, c]] with c = h_jj/d, s = h_j+1,j/d, d = ‖(h_jj, h_j+1,j)‖ real); in a real space
 * every imaginary part is 0 and the arithmetic is the real one, bit for bit. */
#include <float.h>
#include <math.h>

#include "krylov/krylov.h"

typedef struct gmres_ws {
    int64_t m;
    double complex *H;       /* (m+1) × m, column j at H + j(m+1) */
    double complex *cs, *sn; /* [m] Givens rotations */
    double complex *g;       /* [m+1] rotated right-hand side β e₁ */
} gmres_ws;

/* Applies the previous rotations to column j, makes the one that zeroes H[j+1][j], and
 * rotates g; returns |g[j+1]|, the least-squares residual. */
static double givens_column(gmres_ws *W, int64_t j)
{
    double complex *h = W->H + j * (W->m + 1);
    for (int64_t i = 0; i < j; i++) {
        double complex t = conj(W->cs[i]) * h[i] + conj(W->sn[i]) * h[i + 1];
        h[i + 1] = -W->sn[i] * h[i] + W->cs[i] * h[i + 1];
        h[i] = t;
    }
    double d = hypot(cabs(h[j]), cabs(h[j + 1]));
    W->cs[j] = d == 0 ? 1 : sla_kzdiv(h[j], d);
    W->sn[j] = d == 0 ? 0 : sla_kzdiv(h[j + 1], d);
    h[j] = d;
    h[j + 1] = 0;
    W->g[j + 1] = -W->sn[j] * W->g[j];
    W->g[j] = conj(W->cs[j]) * W->g[j];
    return cabs(W->g[j + 1]);
}

/* Solves the k × k upper-triangular system R y = g in place of g (back substitution). */
static void back_substitute(const gmres_ws *W, int64_t k, double complex *y)
{
    for (int64_t i = k - 1; i >= 0; i--) {
        double complex s = W->g[i];
        for (int64_t l = i + 1; l < k; l++) s -= W->H[l * (W->m + 1) + i] * y[l];
        double d = creal(W->H[i * (W->m + 1) + i]);      /* the rotation made it real */
        y[i] = d != 0 ? sla_kzdiv(s, d) : 0;
    }
}

/* x += M⁻¹ (V[0..k) y), using u and w as workspace */
static sla_status update_solution(const sla_operator *A, sla_op op, void **Vb, int64_t k,
                                  const double complex *y, void *u, void *w, void *x)
{
    const sla_space *V = A->domain;
    if (k == 0) return SLA_OK;
    if (!A->precond) {
        for (int64_t i = 0; i < k; i++) SLA_TRY(sla_kzaxpby(V, y[i], Vb[i], 1.0, x));
        return SLA_OK;
    }
    SLA_TRY(sla_kzaxpby(V, y[0], Vb[0], 0.0, u));
    for (int64_t i = 1; i < k; i++) SLA_TRY(sla_kzaxpby(V, y[i], Vb[i], 1.0, u));
    SLA_TRY(A->precond(A, op, u, w));
    return V->axpby(V, 1.0, w, 1.0, x);
}

sla_status sla_krylov_gmres(const sla_operator *A, sla_op op, const sla_krylov_params *P,
                            const void *b, void *x, sla_krylov_result *res)
{
    const sla_space *V = A->domain;
    int64_t m = P->restart < 1 ? 1 : P->restart;
    if (m > P->maxiter && P->maxiter >= 1) m = P->maxiter;
    gmres_ws W = {.m = m};
    int nv = (int)(m + 2);                 /* Vb[0..m] and one preconditioned vector */
    void **Vb = sla_calloc((size_t)nv, sizeof *Vb, "GMRES basis");
    double complex *dbl = sla_malloc((size_t)((m + 1) * m + 4 * m + 2), sizeof(double complex),
                                     "GMRES Hessenberg");
    sla_status st = Vb && dbl ? sla_kvecs_create(V, nv, Vb) : SLA_ENOMEM;
    if (st < 0) {
        sla_free(Vb);
        sla_free(dbl);
        return st;
    }
    W.H = dbl;
    W.cs = W.H + (m + 1) * m;
    W.sn = W.cs + m;
    W.g = W.sn + m;
    double complex *y = W.g + m + 1;
    void *z = Vb[m + 1];
    sla_kstate S = {0};
    double beta = 0, prev_beta = INFINITY;
    int done, action;
    int64_t it = 0;
    sla_reason stop = SLA_REASON_CONVERGED;
    double eps = sla_dtype_real(V->dtype) == SLA_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    SLA_KCALL(sla_kstart(&S, A, op, P, b, x, Vb[0], res, &beta, &done));
    if (done) goto out;
    for (;;) {                                 /* one restart cycle; Vb[0] = true residual */
        if (!(beta < prev_beta)) { stop = SLA_REASON_STAGNATION; break; }
        prev_beta = beta;
        SLA_KCALL(V->axpby(V, 0.0, Vb[0], 1.0 / beta, Vb[0]));
        W.g[0] = beta;
        int64_t k = 0;
        double est = beta;
        int claimed = 0;
        while (k < m && it < P->maxiter) {
            void *zk = Vb[k];
            if (A->precond) {
                SLA_KCALL(A->precond(A, op, Vb[k], z));
                zk = z;
            }
            void *w = Vb[k + 1];
            SLA_KCALL(A->apply(A, op, zk, w));
            double complex *h = W.H + k * (m + 1);
            for (int64_t i = 0; i <= k; i++) {          /* modified Gram–Schmidt */
                SLA_KCALL(sla_kzdot(V, 1, Vb[i], w, &h[i]));
                SLA_KCALL(sla_kzaxpby(V, -h[i], Vb[i], 1.0, w));
            }
            double hk1, colnorm = 0;
            SLA_KCALL(V->norm(V, w, &hk1));
            h[k + 1] = hk1;
            for (int64_t i = 0; i <= k + 1; i++)
                colnorm += creal(h[i]) * creal(h[i]) + cimag(h[i]) * cimag(h[i]);
            /* w has (numerically) no component outside the basis: an invariant subspace,
             * the least-squares solution is exact ("lucky" breakdown) */
            int lucky = hk1 <= 16 * eps * sqrt(colnorm);
            it++;
            res->iterations = it;
            est = givens_column(&W, k);
            k++;
            if (!isfinite(est) || !isfinite(hk1)) { stop = SLA_REASON_NONFINITE; goto finish; }
            SLA_KCALL(sla_kmonitor(&S, it, est));
            if (est <= S.tol || lucky) { claimed = 1; break; }
            SLA_KCALL(V->axpby(V, 0.0, w, 1.0 / hk1, w));
        }
        back_substitute(&W, k, y);
        SLA_KCALL(update_solution(A, op, Vb, k, y, z, Vb[k], x));
        sla_kmoved(&S);
        if (claimed) {
            SLA_KCALL(sla_kverify(&S, x, Vb[0], &action));
            if (action != 1) goto out;
            beta = res->residual;
            continue;
        }
        if (it >= P->maxiter) { stop = SLA_REASON_MAXITER; break; }
        SLA_KCALL(sla_ktrue_residual(&S, x, Vb[0]));
        beta = res->residual;
        if (!isfinite(beta)) { stop = SLA_REASON_NONFINITE; goto finish; }
        SLA_KCALL(sla_kcheckpoint(&S, beta, x));
        if (beta <= S.tol) { res->reason = SLA_REASON_CONVERGED; goto out; }
    }
finish:
    st = sla_kfinish(&S, stop, x, Vb[0]);
out:
    sla_kend(&S);
    sla_kvecs_free(V, nv, Vb);
    sla_free(Vb);
    sla_free(dbl);
    return st;
}
