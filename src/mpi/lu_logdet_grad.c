/* Gradient of the distributed log-determinant: ∂ log|det A| / ∂a_s = (A⁻ᵀ)[r_s, c_s] on the
 * pattern, i.e. the entries of A⁻¹ at the transposed pattern positions. Two methods:
 *
 * - SLA_DIST_LOGDET_GRAD_MUMPS (auto's choice when parallel MUMPS loads): the factorization and
 *   the selected-inverse solve are distributed (lu_logdet_mumps.c); the slots' global (row,
 *   col) go to rank 0 a chunk at a time — MUMPS takes the requested entries and returns their
 *   values there — and each chunk's values go back to their owners before the next. Rank 0
 *   holds O(chunk + N) index and value vectors, no factors.
 * - SLA_DIST_LOGDET_GRAD_GATHER (auto's fallback: a build without parallel MUMPS, e.g. the
 *   sanitizer build): A is gathered to rank 0, which runs libsla's serial sparse inverse subset
 *   (sla_solver_logdet_grad with UMFPACK LU: Takahashi/Erisman–Tinney on the factors,
 *   src/direct/selinv_lu.c). Exact, but rank 0 must hold the whole serial LU and its closure.
 *
 * Both: global nnz ≤ 2^31 − 1 (MPI counts and displacements; else SLA_EUNSUPPORTED);
 * allocation failures SLA_ENOMEM on every rank. Not written: a selected inversion on
 * SuperLU_DIST's own distributed supernodes (PSelInv, Jacquelin, Lin & Yang 2014), which would
 * also drop the second factorization. Probing (columns of A⁻¹ from sums of unit vectors over a
 * colouring) is not exact: A⁻¹ is dense, so columns of one colour overlap in every row. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "core/kernels.h"
#include "mpi/lu.h"
#include "sla/mpi_config.h"
#include "sla/solver.h"

static const char *const FUNC = "sla_dist_lu_logdet_grad";

#if SLA_HAVE_SUPERLU_DIST

void dist_lu_values_double(const dist_lu_view *v, int64_t b, int64_t m, double *out)
{
    for (int64_t s = 0; s < m; s++)
        out[s] = v->dtype == SLA_FLOAT32 ? (double)((const float *)v->values)[b * m + s]
                                         : ((const double *)v->values)[b * m + s];
}

void dist_lu_grad_store(const dist_lu_view *v, int64_t b, int64_t m, double gb,
                        const double *buf, void *dvalues)
{
    for (int64_t s = 0; s < m; s++) {
        if (v->dtype == SLA_FLOAT32) ((float *)dvalues)[b * m + s] = (float)(gb * buf[s]);
        else ((double *)dvalues)[b * m + s] = gb * buf[s];
    }
}

/* this rank's side of the gather: counts and displacements (root), the global COO of its
 * slots, the values of one batch element in double */
typedef struct lg_work {
    int rank, size;
    int *cnt, *dsp;             /* [size] (every rank: cheap and keeps the code uniform) */
    int64_t total;              /* global nnz */
    int64_t *row, *col;         /* [m] this rank's slots */
    double *buf;                /* [m] */
    int64_t *grow, *gcol;       /* [total] root, gather method only */
    double *gval, *ggrad;       /* [batch][total] root, COO (= gathered) order, gather only */
} lg_work;

static void lg_free(lg_work *w)
{
    void *p[] = {w->cnt, w->dsp, w->row, w->col, w->buf, w->grow, w->gcol, w->gval, w->ggrad};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) sla_free(p[i]);
}

/* counts of every rank, the size limits, the buffers (rank 0's gathered A only for the gather
 * method); agreed */
static sla_status lg_setup(lg_work *w, const dist_lu_view *v, MPI_Comm comm, int gather)
{
    MPI_Comm_rank(comm, &w->rank);
    MPI_Comm_size(comm, &w->size);
    int64_t m = sla_dist_pattern_nnz(v->P), *all = sla_malloc((size_t)w->size, sizeof *all, "counts");
    w->cnt = sla_malloc((size_t)w->size, sizeof *w->cnt, "counts");
    w->dsp = sla_malloc((size_t)w->size, sizeof *w->dsp, "displacements");
    w->row = sla_malloc((size_t)m + 1, sizeof *w->row, "rows");
    w->col = sla_malloc((size_t)m + 1, sizeof *w->col, "columns");
    w->buf = sla_malloc((size_t)m + 1, sizeof *w->buf, "values");
    sla_status st = all && w->cnt && w->dsp && w->row && w->col && w->buf ? SLA_OK : SLA_ENOMEM;
    st = dist_agree(comm, FUNC, st);
    if (st != SLA_OK) { sla_free(all); return st; }
    int rc = MPI_Allgather(&m, 1, MPI_INT64_T, all, 1, MPI_INT64_T, comm);
    if (rc != MPI_SUCCESS) st = dist_mpi_error(FUNC, "MPI_Allgather", rc);
    w->total = 0;
    for (int r = 0; st == SLA_OK && r < w->size; r++) w->total += all[r];
    int64_t N = sla_dist_layout_size(v->P->rows);
    if (st == SLA_OK && (w->total > INT_MAX || N > INT32_MAX))     /* the same on every rank */
        st = sla_error_set(SLA_EUNSUPPORTED, FUNC, "the gradient indexes the gathered slots "
                           "with int: %lld entries, %lld rows exceed its limit of 2^31 - 1",
                           (long long)w->total, (long long)N);
    for (int r = 0, off = 0; st == SLA_OK && r < w->size; r++) {
        w->cnt[r] = (int)all[r];
        w->dsp[r] = off;
        off += (int)all[r];
    }
    sla_free(all);
    if (st != SLA_OK) return st;
    if (w->rank == 0 && gather) {
        size_t t = (size_t)w->total + 1, tb = (size_t)(w->total * v->batch) + 1;
        w->grow = sla_malloc(t, sizeof *w->grow, "gathered rows");
        w->gcol = sla_malloc(t, sizeof *w->gcol, "gathered columns");
        w->gval = sla_malloc(tb, sizeof *w->gval, "gathered values");
        w->ggrad = sla_malloc(tb, sizeof *w->ggrad, "gathered gradient");
        if (!w->grow || !w->gcol || !w->gval || !w->ggrad) st = SLA_ENOMEM;
    }
    if (st == SLA_OK) st = sla_dist_pattern_global_coo(v->P, w->row, w->col);
    return dist_agree(comm, FUNC, st);
}

/* rows, columns and every batch element's values (as double) to rank 0 */
static sla_status lg_gather(lg_work *w, const dist_lu_view *v, MPI_Comm comm)
{
    int m = w->cnt[w->rank];
    int rc = MPI_Gatherv(w->row, m, MPI_INT64_T, w->grow, w->cnt, w->dsp, MPI_INT64_T, 0, comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Gatherv(w->col, m, MPI_INT64_T, w->gcol, w->cnt, w->dsp, MPI_INT64_T, 0, comm);
    for (int64_t b = 0; rc == MPI_SUCCESS && b < v->batch; b++) {
        dist_lu_values_double(v, b, m, w->buf);
        rc = MPI_Gatherv(w->buf, m, MPI_DOUBLE, w->gval ? w->gval + b * w->total : NULL, w->cnt,
                         w->dsp, MPI_DOUBLE, 0, comm);
    }
    return dist_agree(comm, FUNC, rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error(FUNC, "MPI_Gatherv", rc));
}

/* on rank 0: the serial gradient of log|det A_b| (weights 1) of the gathered batch, into ggrad
 * in the gathered order */
static sla_status lg_serial(lg_work *w, const dist_lu_view *v)
{
    int64_t N = sla_dist_layout_size(v->P->rows);
    sla_pattern *p = NULL;
    sla_solver *s = NULL;
    double *csr = NULL, *dcsr = NULL;
    sla_status st = sla_pattern_from_coo(N, N, w->total, w->grow, w->gcol, &p);
    if (st == SLA_OK) {
        size_t nb = (size_t)(sla_pattern_nnz(p) * v->batch) + 1;
        csr = sla_malloc(nb, sizeof *csr, "CSR values");
        dcsr = sla_malloc(nb, sizeof *dcsr, "CSR gradient");
        st = csr && dcsr ? SLA_OK : SLA_ENOMEM;
    }
    if (st == SLA_OK) st = sla_values_gather(p, SLA_FLOAT64, v->batch, w->gval, csr);
    if (st == SLA_OK) {
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, v->batch, csr);
        sla_solver_options o;
        sla_solver_options_init(&o);
        o.method = SLA_METHOD_LU;
        o.need_determinant = 1;
        st = sla_solver_create(&A, &o, &s);
    }
    if (st == SLA_OK) st = sla_solver_logdet_grad(s, NULL, dcsr);
    if (st == SLA_OK) st = sla_values_scatter(p, SLA_FLOAT64, v->batch, dcsr, w->ggrad);
    sla_solver_free(&s);
    sla_pattern_free(&p);
    sla_free(csr);
    sla_free(dcsr);
    return st;
}

/* the gradient back to the owners of the slots, times this rank's weights g, in A's dtype */
static sla_status lg_scatter(lg_work *w, const dist_lu_view *v, MPI_Comm comm, const double *g,
                             void *dvalues)
{
    int m = w->cnt[w->rank], rc = MPI_SUCCESS;
    for (int64_t b = 0; rc == MPI_SUCCESS && b < v->batch; b++) {
        rc = MPI_Scatterv(w->ggrad ? w->ggrad + b * w->total : NULL, w->cnt, w->dsp, MPI_DOUBLE,
                          w->buf, m, MPI_DOUBLE, 0, comm);
        if (rc == MPI_SUCCESS) dist_lu_grad_store(v, b, m, g ? g[b] : 1, w->buf, dvalues);
    }
    return dist_agree(comm, FUNC, rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error(FUNC, "MPI_Scatterv", rc));
}

/* auto: parallel MUMPS when every rank can load it; an explicit MUMPS that some rank cannot
 * load is refused (agreed) */
static sla_status lg_method(MPI_Comm comm, sla_dist_logdet_grad_method method, int *mumps)
{
    const char *why = dist_pmumps_unavailable();
    int mine = why == NULL, all = 0;
    int rc = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(FUNC, "MPI_Allreduce", rc);
    *mumps = method == SLA_DIST_LOGDET_GRAD_GATHER ? 0 : all;
    sla_status st = SLA_OK;
    if (method == SLA_DIST_LOGDET_GRAD_MUMPS && !mine)
        st = sla_error_set(SLA_EUNSUPPORTED, FUNC, "method MUMPS: %s", why);
    return dist_agree(comm, FUNC, st);
}

sla_status sla_dist_lu_logdet_grad_with(sla_dist_lu *F, sla_dist_logdet_grad_method method,
                                        const double *g, void *dvalues)
{
    SLA_CHECK_ARG(F, "F is NULL");
    dist_lu_view v = dist_lu_parts(F);
    MPI_Comm comm = v.P->comm;
    int64_t m = sla_dist_pattern_nnz(v.P);
    sla_status st = SLA_OK;
    if (method != SLA_DIST_LOGDET_GRAD_AUTO && method != SLA_DIST_LOGDET_GRAD_MUMPS &&
        method != SLA_DIST_LOGDET_GRAD_GATHER)
        st = sla_error_set(SLA_EINVAL, FUNC, "method = %d is not AUTO, MUMPS or GATHER", (int)method);
    if (st == SLA_OK && !dvalues && m > 0) st = sla_error_set(SLA_EINVAL, FUNC, "dvalues is NULL");
    for (int64_t b = 0; st == SLA_OK && g && b < v.batch; b++)
        if (!isfinite(g[b])) st = sla_error_set(SLA_ENONFINITE, FUNC, "g[%lld] is not finite",
                                                (long long)b);
    int64_t mv = method;
    static const char *const names[1] = {"method"};
    SLA_TRY(dist_agree_same(comm, FUNC, st, 1, &mv, names));
    /* the factorization's singularity rule first, so that logdet's (0, −inf) and this refusal
     * always go together; rcond is the same on every rank */
    for (int64_t b = 0; b < v.batch; b++)
        if (!(v.rcond[b] >= SLA_RCOND_SINGULAR))
            return sla_error_set(SLA_ESINGULAR, FUNC, "A[%lld] is numerically singular (rcond "
                                 "%.3g < %.3g): log|det A| has no gradient there",
                                 (long long)b, v.rcond[b], SLA_RCOND_SINGULAR);
    int mumps = 0;
    SLA_TRY(lg_method(comm, method, &mumps));
    lg_work w;
    memset(&w, 0, sizeof w);
    st = lg_setup(&w, &v, comm, !mumps);
    if (st == SLA_OK && mumps) {
        dist_logdet_slots r = {&v, comm, FUNC, m, w.total, w.row, w.col, w.cnt, w.dsp, g,
                               w.buf, dvalues};
        st = dist_pmumps_logdet_grad(&r);
    } else if (st == SLA_OK) {
        st = lg_gather(&w, &v, comm);
        if (st == SLA_OK) st = dist_agree(comm, FUNC, w.rank == 0 ? lg_serial(&w, &v) : SLA_OK);
        if (st == SLA_OK) st = lg_scatter(&w, &v, comm, g, dvalues);
    }
    lg_free(&w);
    return st;
}

sla_status sla_dist_lu_logdet_grad(sla_dist_lu *F, const double *g, void *dvalues)
{
    return sla_dist_lu_logdet_grad_with(F, SLA_DIST_LOGDET_GRAD_AUTO, g, dvalues);
}

#else

sla_status sla_dist_lu_logdet_grad_with(sla_dist_lu *F, sla_dist_logdet_grad_method method,
                                        const double *g, void *dvalues)
{
    (void)F; (void)method; (void)g; (void)dvalues;
    return sla_error_set(SLA_EUNSUPPORTED, FUNC, "libsla_mpi was built without SuperLU_DIST");
}

sla_status sla_dist_lu_logdet_grad(sla_dist_lu *F, const double *g, void *dvalues)
{
    return sla_dist_lu_logdet_grad_with(F, SLA_DIST_LOGDET_GRAD_AUTO, g, dvalues);
}

#endif
