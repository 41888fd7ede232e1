/* The real form of a complex Hermitian matrix, on which complex eigsh runs (hermitian.c).
 * H = X + iY (X symmetric, Y antisymmetric) acts on z = x + iy as the real symmetric matrix
 * K = [[X, −Y], [Y, X]] acts on (x, y); we interleave the two halves, (Re z_0, Im z_0, Re z_1, …),
 * which is the memory layout of a complex vector itself: K R(z) = R(H z) with R the
 * reinterpretation of n complex numbers as 2n reals, an isometry (R(z)ᵀR(w) = Re zᴴw).
 * Each eigenvalue λ of H is an eigenvalue of K twice, eigenvectors R(v) and R(iv).
 * Entry (r, c) = a + ib of H becomes the 2 × 2 block [[a, −b], [b, a]] at (2r, 2c): 4 slots
 * per slot of H, in the CSR order of eig_real_slot (rows stay sorted). */
#include "core/cmplx.h"
#include <string.h>

#include "eig/eig_internal.h"

double complex eig_centry(sla_dtype dt, const void *v, int64_t q)
{
    if (dt == SLA_COMPLEX128) return ((const double complex *)v)[q];
    return (double complex)((const float complex *)v)[q];
}

void eig_cstore(sla_dtype dt, void *v, int64_t q, double complex z)
{
    if (dt == SLA_COMPLEX128) ((double complex *)v)[q] = z;
    else ((float complex *)v)[q] = (float complex)z;
}

int64_t eig_real_slot(const int64_t *rp, int64_t r, int64_t s, int u, int w)
{
    int64_t len = rp[r + 1] - rp[r];
    return 4 * rp[r] + u * 2 * len + 2 * (s - rp[r]) + w;
}

/* K's pattern: row 2r + u holds columns 2c, 2c + 1 for every column c of row r of H. */
static sla_status real_pattern(const sla_pattern *p, sla_pattern **out)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    int64_t *rk = sla_malloc((size_t)(2 * n + 1), sizeof(int64_t), "real form row pointers");
    int32_t *ck = sla_malloc((size_t)(4 * nnz), sizeof(int32_t), "real form columns");
    if (!rk || !ck) {
        sla_free(rk);
        sla_free(ck);
        return SLA_ENOMEM;
    }
    for (int64_t r = 0; r < n; r++)
        for (int u = 0; u < 2; u++) {
            rk[2 * r + u] = eig_real_slot(rp, r, rp[r], u, 0);
            for (int64_t s = rp[r]; s < rp[r + 1]; s++)
                for (int w = 0; w < 2; w++) ck[eig_real_slot(rp, r, s, u, w)] = 2 * ci[s] + w;
        }
    rk[2 * n] = 4 * nnz;
    return sla_pattern_adopt_csr(2 * n, 2 * n, rk, ck, out);
}

sla_status eig_real_form_init(const sla_matrix *A, eig_real_form *F)
{
    memset(F, 0, sizeof *F);
    const sla_pattern *p = A->pattern;
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    if (2 * n > INT32_MAX)
        return EIG_FAIL(SLA_EINDEX, "the real form of the complex A has 2n = %lld rows, more "
                        "than %d", (long long)(2 * n), INT32_MAX);
    SLA_TRY(real_pattern(p, &F->p));
    const int64_t *rp = sla_pattern_rowptr(p);
    int64_t nk = 4 * nnz;
    F->vd = sla_malloc((size_t)(A->batch * nk), sizeof(double), "real form values");
    if (A->dtype == SLA_COMPLEX64 && F->vd)
        F->vf = sla_malloc((size_t)(A->batch * nk), sizeof(float), "real form values");
    if (!F->vd || (A->dtype == SLA_COMPLEX64 && !F->vf)) {
        eig_real_form_free(F);
        return SLA_ENOMEM;
    }
    for (int64_t b = 0; b < A->batch; b++) {
        double *v = F->vd + b * nk;
        for (int64_t r = 0; r < n; r++)
            for (int64_t s = rp[r]; s < rp[r + 1]; s++) {
                double complex z = eig_centry(A->dtype, A->values, b * nnz + s);
                v[eig_real_slot(rp, r, s, 0, 0)] = creal(z);
                v[eig_real_slot(rp, r, s, 0, 1)] = -cimag(z);
                v[eig_real_slot(rp, r, s, 1, 0)] = cimag(z);
                v[eig_real_slot(rp, r, s, 1, 1)] = creal(z);
            }
    }
    /* complex64: the real call sees float32 values (its float32 tie bounds and outputs) */
    for (int64_t q = 0; F->vf && q < A->batch * nk; q++) F->vf[q] = (float)F->vd[q];
    F->batch = A->batch;
    F->Kd = sla_matrix_view(F->p, SLA_FLOAT64, A->batch, F->vd);
    F->K = F->vf ? sla_matrix_view(F->p, SLA_FLOAT32, A->batch, F->vf) : F->Kd;
    return SLA_OK;
}

sla_matrix eig_real_form_view(const eig_real_form *F, int64_t b)
{
    int64_t nk = sla_pattern_nnz(F->p);
    return sla_matrix_view(F->p, SLA_FLOAT64, 1, F->vd + (F->batch == 1 ? 0 : b) * nk);
}

void eig_real_form_free(eig_real_form *F)
{
    sla_pattern_free(&F->p);
    sla_free(F->vd);
    sla_free(F->vf);
    memset(F, 0, sizeof *F);
}

void eig_to_real_rows(int64_t n, int64_t k, const double complex *Z, double *X)
{
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < n; i++) {
            X[2 * i * k + j] = creal(Z[i + j * n]);
            X[(2 * i + 1) * k + j] = cimag(Z[i + j * n]);
        }
}

void eig_from_real_rows(int64_t n, int64_t k, const double *X, double complex *Z)
{
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < n; i++)
            Z[i + j * n] = CMPLX(X[2 * i * k + j], X[(2 * i + 1) * k + j]);
}

sla_status eig_real_form_apply(const eig_real_form *F, int64_t b, int64_t n, int64_t k,
                               const double complex *Z, double complex *Y, double *work)
{
    sla_matrix Kb = eig_real_form_view(F, b);
    double *x = work, *y = work + 2 * n * k;
    eig_to_real_rows(n, k, Z, x);
    SLA_TRY(sla_spmv(SLA_OP_N, 1.0, &Kb, x, 0, k, 0.0, y));
    eig_from_real_rows(n, k, y, Y);
    return SLA_OK;
}
