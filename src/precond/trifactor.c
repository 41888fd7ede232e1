/* Sparse triangular factors: extraction from a pattern, transposition, level schedules and
 * the solves (see precond/trifactor.h). */
#include <omp.h>
#include <string.h>

#include "precond/trifactor.h"

#define SLA_TEMPLATE "precond/t_trisolve.h"
#define SLA_TEMPLATE_COMPLEX
#include "core/instantiate.h"

/* A level schedule pays off only with several threads and wide levels: each level ends in a
 * barrier, and the rows of a level are scattered in memory (stride nx − 1 on a grid in natural
 * order) where the serial substitution streams. Measured on the 2-core development machine
 * (docs/krylov.md): with levels of 500 (2D Poisson 1000²) or 3 355 rows (3D Poisson 100³),
 * CG + IC(0) ran 1.7–2× slower per iteration with level-scheduled substitutions than with
 * serial ones (30× slower while other jobs held the cores), so levels are used only when the
 * mean level is a parallel region worth its barrier by the library's rule (sla_par_parts(),
 * core/internal.h): at least SLA_PAR_MIN_BYTES of substitution, i.e. ≈ 100 000 rows of a
 * factor with 3 entries per row. */
static double tri_bytes(const sla_tri *T, int64_t rows)
{
    /* values and column indices of the rows' entries, row pointer, rhs, out, inverse diagonal */
    return 12.0 * (double)T->nnz * ((double)rows / (double)T->n) + 32.0 * (double)rows;
}

void sla_tri_free(sla_tri *T)
{
    sla_free(T->rowptr);
    sla_free(T->colind);
    sla_free(T->levptr);
    sla_free(T->levrows);
    memset(T, 0, sizeof *T);
}

static sla_status tri_alloc(sla_tri *T, int64_t n, int64_t nnz, int upper)
{
    memset(T, 0, sizeof *T);
    T->n = n;
    T->nnz = nnz;
    T->upper = upper;
    T->rowptr = sla_malloc((size_t)n + 1, sizeof(int64_t), "triangular factor row pointers");
    T->colind = sla_malloc((size_t)nnz, sizeof(int32_t), "triangular factor column indices");
    if (!T->rowptr || !T->colind) {
        sla_tri_free(T);
        return SLA_ENOMEM;
    }
    return SLA_OK;
}

sla_status sla_tri_from_pattern(const sla_pattern *p, int upper, sla_tri *T, int64_t **slot,
                                int64_t *diag)
{
    int64_t n = sla_pattern_nrows(p), nnz = 0;
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) nnz += upper ? ci[s] > i : ci[s] < i;
    SLA_TRY(tri_alloc(T, n, nnz, upper));
    *slot = sla_malloc((size_t)nnz, sizeof(int64_t), "triangular factor slots");
    if (!*slot) {
        sla_tri_free(T);
        return SLA_ENOMEM;
    }
    int64_t k = 0;
    T->rowptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (diag) diag[i] = -1;
        for (int64_t s = rp[i]; s < rp[i + 1]; s++) {
            if (ci[s] == i && diag) diag[i] = s;
            if (upper ? ci[s] > i : ci[s] < i) {
                T->colind[k] = ci[s];
                (*slot)[k++] = s;
            }
        }
        T->rowptr[i + 1] = k;
    }
    return SLA_OK;
}

sla_status sla_tri_transpose(const sla_tri *T, sla_tri *Tt, int64_t **perm)
{
    int64_t n = T->n, nnz = T->nnz;
    SLA_TRY(tri_alloc(Tt, n, nnz, !T->upper));
    *perm = sla_malloc((size_t)nnz, sizeof(int64_t), "triangular factor transpose");
    int64_t *next = sla_calloc((size_t)n + 1, sizeof(int64_t), "transpose counts");
    if (!*perm || !next) {
        sla_free(*perm);
        *perm = NULL;
        sla_free(next);
        sla_tri_free(Tt);
        return SLA_ENOMEM;
    }
    /* counting sort by column; rows visited in order keep columns of Tt sorted */
    for (int64_t k = 0; k < nnz; k++) next[T->colind[k] + 1]++;
    for (int64_t i = 0; i < n; i++) next[i + 1] += next[i];
    memcpy(Tt->rowptr, next, sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = T->rowptr[i]; k < T->rowptr[i + 1]; k++) {
            int64_t q = next[T->colind[k]]++;
            Tt->colind[q] = (int32_t)i;
            (*perm)[q] = k;
        }
    sla_free(next);
    return SLA_OK;
}

sla_status sla_tri_schedule(sla_tri *T)
{
    int64_t n = T->n;
    sla_free(T->levptr);
    sla_free(T->levrows);
    T->levptr = NULL;
    T->levrows = NULL;
    T->nlevels = 0;
    int nt = sla_threads();
    if (n == 0 || sla_par_parts(tri_bytes(T, n), nt) < 2) return SLA_OK;   /* not even one level */
    int32_t *level = sla_malloc((size_t)n, sizeof(int32_t), "level of each row");
    if (!level) return SLA_ENOMEM;
    int64_t nlev = 0;
    for (int64_t q = 0; q < n; q++) {
        int64_t i = T->upper ? n - 1 - q : q;
        int32_t l = 0;
        for (int64_t k = T->rowptr[i]; k < T->rowptr[i + 1]; k++)
            if (level[T->colind[k]] + 1 > l) l = level[T->colind[k]] + 1;
        level[i] = l;
        if (l + 1 > nlev) nlev = l + 1;
    }
    if (sla_par_parts(tri_bytes(T, n / nlev), nt) < 2) {
        sla_free(level);
        return SLA_OK;
    }
    T->levptr = sla_calloc((size_t)nlev + 1, sizeof(int64_t), "level pointers");
    T->levrows = sla_malloc((size_t)n, sizeof(int32_t), "rows by level");
    int64_t *fill = sla_malloc((size_t)nlev, sizeof(int64_t), "level fill");
    if (!T->levptr || !T->levrows || !fill) {
        sla_free(level);
        sla_free(fill);
        sla_free(T->levptr);
        sla_free(T->levrows);
        T->levptr = NULL;
        T->levrows = NULL;
        return SLA_ENOMEM;
    }
    for (int64_t i = 0; i < n; i++) T->levptr[level[i] + 1]++;
    for (int64_t l = 0; l < nlev; l++) T->levptr[l + 1] += T->levptr[l];
    memcpy(fill, T->levptr, sizeof(int64_t) * (size_t)nlev);
    for (int64_t i = 0; i < n; i++) T->levrows[fill[level[i]]++] = (int32_t)i;
    sla_free(fill);
    sla_free(level);
    T->nlevels = nlev;
    return SLA_OK;
}

void sla_tri_solve(const sla_tri *T, sla_dtype dtype, const void *values, const void *inv_diag,
                   const void *rhs, void *out)
{
    SLA_DISPATCH_ALL(dtype, tri_solve, (T, values, inv_diag, rhs, out));
}

void *sla_tri_values(const sla_tri *T, sla_dtype dtype, const void *values, int64_t b)
{
    return (char *)values + (size_t)(b * T->nnz) * sla_dtype_size(dtype);
}

void sla_tri_mirror_free(sla_tri_mirror *M)
{
    sla_tri_free(&M->T);
    sla_free(M->perm);
    sla_free(M->values);
    M->perm = NULL;
    M->values = NULL;
}

sla_status sla_tri_mirror_create(const sla_tri *src, sla_dtype dtype, int64_t batch,
                                 sla_tri_mirror *M)
{
    memset(M, 0, sizeof *M);
    SLA_TRY(sla_tri_transpose(src, &M->T, &M->perm));
    sla_status st = sla_tri_schedule(&M->T);
    M->values = st == SLA_OK ? sla_malloc((size_t)(batch * src->nnz), sla_dtype_size(dtype),
                                          "transposed factor values") : NULL;
    if (!M->values) {
        sla_tri_mirror_free(M);
        return st == SLA_OK ? SLA_ENOMEM : st;
    }
    return SLA_OK;
}

void sla_tri_mirror_gather(sla_tri_mirror *M, sla_dtype dtype, int64_t batch, const void *src_values)
{
    for (int64_t b = 0; b < batch; b++)
        SLA_DISPATCH_ALL(dtype, tri_gather, (M->T.nnz, M->perm, sla_tri_values(&M->T, dtype, src_values, b),
                                         sla_tri_values(&M->T, dtype, M->values, b)));
}

/* smallest (b, i) failure so far, compared lexicographically */
static void note_failure(int64_t b, int64_t i, int64_t *fb, int64_t *fi)
{
    #pragma omp critical(sla_tri_factor_fail)
    if (*fb < 0 || b < *fb || (b == *fb && i < *fi)) {
        *fb = b;
        *fi = i;
    }
}

sla_status sla_tri_factor(const sla_tri *L, int64_t batch, sla_tri_row_fn row, void *ctx,
                          int64_t *fail_b, int64_t *fail_row)
{
    int64_t n = L->n;
    int nt = sla_threads();
    int by_batch = nt > 1 && batch >= nt;
    int by_level = !by_batch && nt > 1 && L->nlevels > 0;
    int nm = by_batch || by_level ? nt : 1;
    int64_t *marker = sla_malloc((size_t)nm * (size_t)n, sizeof(int64_t), "factorization markers");
    if (!marker) return SLA_ENOMEM;
    for (int64_t k = 0; k < (int64_t)nm * n; k++) marker[k] = -1;
    *fail_b = -1;
    *fail_row = -1;
    if (by_batch) {
        #pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
        for (int64_t b = 0; b < batch; b++) {
            int64_t *m = marker + (size_t)omp_get_thread_num() * (size_t)n;
            for (int64_t i = 0; i < n; i++)
                if (row(ctx, b, i, m)) note_failure(b, i, fail_b, fail_row);
        }
    } else if (by_level) {
        for (int64_t b = 0; b < batch; b++) {
            #pragma omp parallel num_threads(nt)
            {
                int64_t *m = marker + (size_t)omp_get_thread_num() * (size_t)n;
                for (int64_t l = 0; l < L->nlevels; l++) {
                    #pragma omp for schedule(static)
                    for (int64_t q = L->levptr[l]; q < L->levptr[l + 1]; q++)
                        if (row(ctx, b, L->levrows[q], m)) note_failure(b, L->levrows[q], fail_b, fail_row);
                }
            }
        }
    } else {
        for (int64_t b = 0; b < batch; b++)
            for (int64_t i = 0; i < n; i++)
                if (row(ctx, b, i, marker)) note_failure(b, i, fail_b, fail_row);
    }
    sla_free(marker);
    return SLA_OK;
}
