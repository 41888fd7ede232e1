/* The shift-invert operator of sla_dist_eigsh with options.sigma (the driver is eigsh.c).
 *
 * S_b = A_b − σ M_b (M = I without M) on A's pattern is factored once per batch element by the
 * distributed LU (sla_dist_lu, SuperLU_DIST); LOBPCG then runs on K_b = S_b⁻¹ (standard) or
 * K_b = M_b S_b⁻¹ M_b with mass M_b (generalized: K x = θ M x ⇔ S⁻¹ M x = θ x, and K is
 * symmetric, which LOBPCG needs; S⁻¹M is only M-symmetric). θ = 1/(λ − σ).
 * S is formed on A's pattern, so M's entries must lie in it: M on A's pattern itself (the same
 * pattern object), or M with entries in the diagonal blocks only (a diagonal M, the common
 * lumped mass) each present in A; without M, A's diagonal must be stored. */
#include <math.h>
#include <string.h>

#include "mpi/deig.h"

#define FUNC "sla_dist_eigsh"

struct dist_sinv {
    const sla_dist_matrix *M;
    MPI_Comm comm;
    int64_t batch, nnz, nnzm, n;
    double *S;                  /* [batch][nnz]: the shifted values, borrowed by F */
    sla_dist_lu **F;            /* [batch] */
    double *xr, *yr;            /* row-major n × m copies */
    int64_t cap;
};

/* slot of (local row i, local column c) in A's diagonal block, or −1 */
static int64_t diag_slot(const sla_dist_pattern *P, int64_t i, int64_t c)
{
    const int64_t *rp = sla_pattern_rowptr(P->diag);
    const int32_t *ci = sla_pattern_colind(P->diag);
    for (int64_t q = rp[i]; q < rp[i + 1]; q++)
        if (ci[q] == c) return q;
    return -1;
}

/* S = A − σM on A's slots (local; the error names the global row). */
static sla_status shift_values(const sla_dist_matrix *A, const sla_dist_matrix *M, double sigma,
                               int64_t nnz, double *S)
{
    const sla_dist_pattern *P = A->pattern;
    int64_t n = P->rows->n;
    memcpy(S, A->values, sizeof(double) * (size_t)(A->batch * nnz));
    for (int64_t b = 0; b < A->batch; b++) {
        double *s = S + b * nnz;
        if (!M) {
            for (int64_t i = 0; i < n; i++) {
                int64_t q = diag_slot(P, i, i);
                if (q < 0)
                    return sla_error_set(SLA_EUNSUPPORTED, FUNC, "options.sigma: A has no stored "
                                         "diagonal entry in row %lld (A − σI is formed on A's "
                                         "pattern)", (long long)P->rows->global[i]);
                s[q] -= sigma;
            }
            continue;
        }
        const sla_dist_pattern *Q = M->pattern;
        int64_t nnzm = Q->nnz_diag + Q->nnz_offd;
        const double *mv = (const double *)M->values + (M->batch == 1 ? 0 : b) * nnzm;
        if (Q == P) {
            for (int64_t q = 0; q < nnz; q++) s[q] -= sigma * mv[q];
            continue;
        }
        if (Q->nnz_offd > 0)
            return sla_error_set(SLA_EUNSUPPORTED, FUNC, "options.sigma: options.M has entries "
                                 "outside this rank's diagonal block on a pattern other than "
                                 "A's (A − σM is formed on A's pattern: pass M on A's pattern)");
        const int64_t *rp = sla_pattern_rowptr(Q->diag);
        const int32_t *ci = sla_pattern_colind(Q->diag);
        for (int64_t i = 0; i < n; i++)
            for (int64_t t = rp[i]; t < rp[i + 1]; t++) {
                int64_t q = diag_slot(P, i, ci[t]);
                if (q < 0 && mv[t] != 0)
                    return sla_error_set(SLA_EUNSUPPORTED, FUNC, "options.sigma: options.M's "
                                         "entry (%lld, %lld) is not stored in A (A − σM is "
                                         "formed on A's pattern)",
                                         (long long)P->rows->global[i],
                                         (long long)P->rows->global[ci[t]]);
                if (q >= 0) s[q] -= sigma * mv[t];
            }
    }
    return SLA_OK;
}

void dist_sinv_free(dist_sinv **ps)
{
    if (!ps || !*ps) return;
    dist_sinv *s = *ps;
    for (int64_t b = 0; s->F && b < s->batch; b++) sla_dist_lu_free(&s->F[b]);
    sla_free(s->F);
    sla_free(s->S);
    sla_free(s->xr);
    sla_free(s->yr);
    sla_free(s);
    *ps = NULL;
}

sla_status dist_sinv_create(const sla_dist_matrix *A, const sla_dist_matrix *M, double sigma,
                            dist_sinv **out)
{
    MPI_Comm comm = A->pattern->comm;
    *out = NULL;
    dist_sinv *s = sla_calloc(1, sizeof *s, "shift-invert operator");
    int64_t nnz = A->pattern->nnz_diag + A->pattern->nnz_offd;
    if (s) {
        s->M = M;
        s->comm = comm;
        s->batch = A->batch;
        s->nnz = nnz;
        s->nnzm = M ? M->pattern->nnz_diag + M->pattern->nnz_offd : 0;
        s->n = A->pattern->rows->n;
        s->S = sla_malloc((size_t)(A->batch * nnz + 1), sizeof(double), "A − σM");
        s->F = sla_calloc((size_t)A->batch, sizeof *s->F, "LU factors");
    }
    sla_status st = s && s->S && s->F ? SLA_OK : SLA_ENOMEM;
    if (st == SLA_OK) st = shift_values(A, M, sigma, nnz, s->S);
    st = dist_agree(comm, FUNC, st);
    for (int64_t b = 0; st == SLA_OK && b < A->batch; b++) {
        sla_dist_matrix v = sla_dist_matrix_view(A->pattern, SLA_FLOAT64, 1, s->S + b * nnz);
        st = sla_dist_lu_create(&v, &s->F[b]);
        if (st != SLA_OK) {
            st = sla_error_wrap(st, FUNC, "options.sigma: the LU of A[%lld] − σM", (long long)b);
            break;
        }
        /* rcond is the same on every rank: the status is agreed */
        double rc = sla_dist_lu_rcond(s->F[b]);
        if (rc < SLA_RCOND_SINGULAR)
            st = sla_error_set(SLA_ESINGULAR, FUNC, "options.sigma = %.17g: A[%lld] − σ%s is "
                               "numerically singular (rcond estimate %.1e < %.1e): σ is an "
                               "eigenvalue to working accuracy; shift it slightly (e.g. by "
                               "1e-8·‖A‖)", sigma, (long long)b, M ? "M" : "I", rc,
                               SLA_RCOND_SINGULAR);
    }
    if (st != SLA_OK) {
        dist_sinv_free(&s);
        return st;
    }
    *out = s;
    return SLA_OK;
}

/* row-major y = M_b x with m columns (one distributed SpMV) */
static sla_status mass(const dist_sinv *s, int64_t b, int64_t m, const double *x, double *y)
{
    const double *mv = (const double *)s->M->values + (s->M->batch == 1 ? 0 : b) * s->nnzm;
    sla_dist_matrix v = sla_dist_matrix_view(s->M->pattern, SLA_FLOAT64, 1, mv);
    return sla_dist_spmv(SLA_OP_N, 1.0, &v, x, 0, m, 0.0, y);
}

sla_status dist_sinv_block(void *ctx, int64_t b, int64_t n, int64_t m, const double *X,
                           double *Y)
{
    dist_sinv *s = ctx;
    sla_status st = SLA_OK;
    if (n * m + 1 > s->cap) {
        sla_free(s->xr);
        sla_free(s->yr);
        s->cap = n * m + 1;
        s->xr = sla_malloc((size_t)s->cap, sizeof(double), "shift-invert block copy");
        s->yr = sla_malloc((size_t)s->cap, sizeof(double), "shift-invert block copy");
        if (!s->xr || !s->yr) { s->cap = 0; st = SLA_ENOMEM; }
    }
    st = dist_agree(s->comm, FUNC, st);
    if (st != SLA_OK) return st;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) s->xr[i * m + j] = X[j * n + i];
    double *out = s->yr;
    if (s->M) {
        SLA_TRY(mass(s, b, m, s->xr, s->yr));
        SLA_TRY(sla_dist_lu_solve(s->F[b], SLA_OP_N, m, s->yr, s->xr, NULL));
        SLA_TRY(mass(s, b, m, s->xr, s->yr));
    } else {
        SLA_TRY(sla_dist_lu_solve(s->F[b], SLA_OP_N, m, s->xr, s->yr, NULL));
    }
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < n; i++) Y[j * n + i] = out[i * m + j];
    return SLA_OK;
}
