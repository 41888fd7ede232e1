/* The entries of A⁻¹ that the log-determinant gradient needs, by parallel MUMPS (Amestoy, Duff,
 * L'Excellent & Koster, SIAM J. Matrix Anal. Appl. 23(1), 2001; Debian's libmumps-dev 5.5): the
 * matrix is handed in distributed (ICNTL(18) = 3: each rank its own slots, global indices), the
 * factorization is distributed over the ranks, and the selected-inverse solve (ICNTL(30) = 1,
 * Amestoy, Buttari, L'Excellent & Mary, SIAM J. Sci. Comput. 34(4), 2012) computes the
 * requested entries from the distributed factors, exploiting the sparsity of the unit
 * right-hand sides and of the requested entries (no dense column of A⁻¹ is ever formed).
 *
 * What stays on the host (rank 0): MUMPS takes the list of requested entries and returns their
 * values centralized (IRHS_PTR / IRHS_SPARSE / RHS_SPARSE). They are therefore requested in
 * chunks of the gathered slot order (max(2^20, N) entries): rank 0 gathers one chunk's (row,
 * col), MUMPS computes it, and its values go back to their owners before the next, so rank 0
 * holds ≈ 40 B per chunk entry and 4 B per row (IRHS_PTR spans every column: NRHS = N), O(N),
 * not O(nnz). This Debian MUMPS has no parallel ordering (built without PT-Scotch/ParMETIS), so
 * its analysis still gathers the graph on the host, inside MUMPS. The factors — the part that
 * grows superlinearly — are distributed.
 *
 * Why dlopen and RTLD_DEEPBIND: libsla links sequential MUMPS (libdmumps_seq), whose symbols
 * (dmumps_c, every Fortran routine, mumps_common's, even a fake MPI's C and Fortran entry
 * points) have the names of parallel MUMPS's. Linked normally, one of the two would bind to the
 * other's routines. Loaded with RTLD_LOCAL | RTLD_DEEPBIND, libdmumps and its dependencies
 * (libmumps_common, Open MPI's Fortran bindings, ScaLAPACK) resolve their symbols in their own
 * tree first, so both MUMPS coexist in one process (checked: the sequential solver gives the
 * same bits after the parallel one ran). The library is never closed (Fortran runtimes do not
 * unload cleanly). The loader is pmumps.c. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/kernels.h"
#include "direct/direct.h"
#include "mpi/lu.h"
#include "sla/mpi_config.h"

#include "mpi/pmumps.h"

/* Requested entries per selected-inverse call: max(2^20, N) by default, so that rank 0 holds
 * ≈ 40 B for each of at most max(2^20, N) entries (O(N), like IRHS_PTR itself) and a matrix
 * with nnz entries takes at most ⌈nnz / N⌉ calls, each of which costs MUMPS O(N) besides its
 * entries; dist_test_pmumps_chunk sets an exact size instead (tests, bench). */
#define PM_CHUNK_MIN ((int64_t)1 << 20)
static _Atomic int64_t pm_chunk_set = 0;

int64_t dist_test_pmumps_chunk(int64_t entries)
{
    return atomic_exchange(&pm_chunk_set, entries > 0 ? entries : 0);
}

#if SLA_HAVE_PMUMPS && SLA_HAVE_SUPERLU_DIST
#define ICNTL(I) PMUMPS_ICNTL(I)
#define INFOG(I) PMUMPS_INFOG(I)
#define pm_run dist_pmumps_run
#define pm_call dist_pmumps_call

typedef struct pm_work {
    MPI_Comm comm;              /* the pattern's (the gathers and scatters) */
    int rank, size;
    int64_t chunk;              /* requested entries per call, the same on every rank */
    MUMPS_INT *irn, *jcn;       /* [m] this rank's slots, 1-based global */
    double *a;                  /* [m] one batch element */
    int *ccnt, *cdsp;           /* [size] each rank's share of the current chunk */
    /* root only, [N + 2] and [chunk] */
    MUMPS_INT *ip, *is;         /* the chunk's requested entries by column of A⁻¹ */
    int64_t *grow, *gcol;       /* the chunk's slots, gathered */
    int *perm;                  /* gathered position of each requested entry */
    double *rhs, *cval;         /* their values: MUMPS's order, gathered order */
} pm_work;

static void pm_free(pm_work *w)
{
    void *p[] = {w->irn, w->jcn, w->a, w->ccnt, w->cdsp, w->ip, w->is, w->grow, w->gcol,
                 w->perm, w->rhs, w->cval};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) sla_free(p[i]);
}

static sla_status pm_alloc(pm_work *w, int64_t m, const int64_t *row, const int64_t *col,
                           int64_t N, int64_t chunk)
{
    w->irn = sla_malloc((size_t)m + 1, sizeof *w->irn, "IRN_loc");
    w->jcn = sla_malloc((size_t)m + 1, sizeof *w->jcn, "JCN_loc");
    w->a = sla_malloc((size_t)m + 1, sizeof *w->a, "A_loc");
    w->ccnt = sla_malloc((size_t)w->size, sizeof *w->ccnt, "chunk counts");
    w->cdsp = sla_malloc((size_t)w->size, sizeof *w->cdsp, "chunk displacements");
    if (!w->irn || !w->jcn || !w->a || !w->ccnt || !w->cdsp) return SLA_ENOMEM;
    for (int64_t s = 0; s < m; s++) {
        w->irn[s] = (MUMPS_INT)(row[s] + 1);
        w->jcn[s] = (MUMPS_INT)(col[s] + 1);
    }
    if (w->rank != 0) return SLA_OK;
    size_t c = (size_t)chunk + 1;
    w->ip = sla_malloc((size_t)N + 2, sizeof *w->ip, "IRHS_PTR");
    w->is = sla_malloc(c, sizeof *w->is, "IRHS_SPARSE");
    w->grow = sla_malloc(c, sizeof *w->grow, "gathered rows");
    w->gcol = sla_malloc(c, sizeof *w->gcol, "gathered columns");
    w->perm = sla_malloc(c, sizeof *w->perm, "request order");
    w->rhs = sla_malloc(c, sizeof *w->rhs, "RHS_SPARSE");
    w->cval = sla_malloc(c, sizeof *w->cval, "chunk values");
    return w->ip && w->is && w->grow && w->gcol && w->perm && w->rhs && w->cval ? SLA_OK
                                                                                : SLA_ENOMEM;
}

/* each rank's share of [c0, c1) of the gathered order (rank r holds [dsp[r], dsp[r] + cnt[r]));
 * returns this rank's first slot in it */
static int64_t pm_share(pm_work *w, const int *cnt, const int *dsp, int64_t c0, int64_t c1)
{
    int64_t mine = 0;
    for (int r = 0; r < w->size; r++) {
        int64_t lo = dsp[r] > c0 ? dsp[r] : c0, hi = (int64_t)dsp[r] + cnt[r];
        if (hi > c1) hi = c1;
        w->ccnt[r] = hi > lo ? (int)(hi - lo) : 0;
        w->cdsp[r] = hi > lo ? (int)(lo - c0) : 0;
        if (r == w->rank) mine = hi > lo ? lo - dsp[r] : 0;
    }
    return mine;
}

/* The request of one chunk on the root: entry q of the gradient is (A⁻¹)[gcol[q], grow[q]],
 * i.e. column grow[q] of A⁻¹, row gcol[q] — a counting sort of the chunk by global row. */
static void pm_request(pm_work *w, int64_t N, int64_t n)
{
    memset(w->ip, 0, ((size_t)N + 2) * sizeof *w->ip);
    for (int64_t q = 0; q < n; q++) w->ip[w->grow[q] + 2]++;
    for (int64_t j = 0; j < N; j++) w->ip[j + 2] += w->ip[j + 1];
    for (int64_t q = 0; q < n; q++) {              /* ip[j + 1]: cursor of column j */
        MUMPS_INT at = w->ip[w->grow[q] + 1]++;
        w->is[at] = (MUMPS_INT)(w->gcol[q] + 1);
        w->perm[at] = (int)q;
    }
    for (int64_t j = 0; j <= N; j++) w->ip[j]++;   /* 1-based, ip[0] = 1 */
}

/* the entries of chunk [c0, c1) from the factors of the current batch element into this rank's
 * buf (its slots there); collective */
static sla_status pm_chunk(DMUMPS_STRUC_C *id, pm_work *w, const char *func, int64_t N,
                           const int64_t *row, const int64_t *col, const int *cnt,
                           const int *dsp, int64_t c0, int64_t c1, double *buf)
{
    int64_t lo = pm_share(w, cnt, dsp, c0, c1), n = c1 - c0;
    int k = w->ccnt[w->rank];
    int rc = MPI_Gatherv(row + lo, k, MPI_INT64_T, w->grow, w->ccnt, w->cdsp, MPI_INT64_T, 0, w->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Gatherv(col + lo, k, MPI_INT64_T, w->gcol, w->ccnt, w->cdsp, MPI_INT64_T, 0, w->comm);
    sla_status st = dist_agree(w->comm, func, rc == MPI_SUCCESS ? SLA_OK
                                                : dist_mpi_error(func, "MPI_Gatherv", rc));
    if (st != SLA_OK) return st;
    if (w->rank == 0) {
        pm_request(w, N, n);
        id->nz_rhs = (MUMPS_INT)n;
        id->irhs_ptr = w->ip;
        id->irhs_sparse = w->is;
        id->rhs_sparse = w->rhs;
    }
    st = pm_run(id, 3, "selected inverse");
    id->irhs_ptr = id->irhs_sparse = NULL;
    id->rhs_sparse = NULL;
    if (st != SLA_OK) return st;
    if (w->rank == 0)
        for (int64_t q = 0; q < n; q++) w->cval[w->perm[q]] = w->rhs[q];
    rc = MPI_Scatterv(w->cval, w->ccnt, w->cdsp, MPI_DOUBLE, buf + lo, k, MPI_DOUBLE, 0, w->comm);
    return dist_agree(w->comm, func, rc == MPI_SUCCESS ? SLA_OK
                                           : dist_mpi_error(func, "MPI_Scatterv", rc));
}

/* factor A_b, compute its entries chunk by chunk into buf and write g_b · buf into dvalues;
 * collective */
static sla_status pm_batch(DMUMPS_STRUC_C *id, pm_work *w, const dist_logdet_slots *r, int64_t b)
{
    dist_lu_values_double(r->v, b, r->m, w->a);
    sla_status st = pm_run(id, 2, "factorization");
    if (st != SLA_OK) return st;
    id->ICNTL(20) = 0;
    id->ICNTL(30) = 1;
    id->nrhs = id->n;
    id->lrhs = id->n;
    int64_t chunk = w->chunk;
    for (int64_t c0 = 0; st == SLA_OK && c0 < r->total; c0 += chunk)
        st = pm_chunk(id, w, r->func, id->n, r->row, r->col, r->cnt, r->dsp, c0,
                      c0 + chunk < r->total ? c0 + chunk : r->total, r->buf);
    if (st == SLA_OK) dist_lu_grad_store(r->v, b, r->m, r->g ? r->g[b] : 1, r->buf, r->dvalues);
    return st;
}

/* initialization, the distributed analysis, every batch element, the end; collective */
static sla_status pm_solve(pm_work *w, const dist_logdet_slots *r, int64_t N, MPI_Comm mc)
{
    DMUMPS_STRUC_C id;
    memset(&id, 0, sizeof id);
    id.par = 1;                    /* the host works too */
    id.sym = 0;                    /* general: A need not be symmetric */
    id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(mc);
    sla_status st = pm_run(&id, -1, "initialization");
    if (st != SLA_OK) return st;
    id.ICNTL(1) = id.ICNTL(2) = id.ICNTL(3) = -1;    /* never prints */
    id.ICNTL(4) = 0;
    id.ICNTL(18) = 3;              /* distributed assembled input, global indices */
    id.n = (MUMPS_INT)N;
    id.nnz_loc = r->m;
    id.irn_loc = w->irn;
    id.jcn_loc = w->jcn;
    id.a_loc = w->a;
    st = pm_run(&id, 1, "analysis");
    for (int64_t b = 0; st == SLA_OK && b < r->v->batch; b++) st = pm_batch(&id, w, r, b);
    pm_call(&id, -2);
    return st;
}

/* the chunk: the hook's size or max(2^20, N), at most total, ≥ 1; rank 0's on every rank (a
 * hook set differently on some rank cannot make the ranks' gathers disagree); collective */
static sla_status pm_chunk_size(pm_work *w, const dist_logdet_slots *r, int64_t N)
{
    int64_t c = atomic_load(&pm_chunk_set);
    if (c <= 0) c = N > PM_CHUNK_MIN ? N : PM_CHUNK_MIN;
    if (c > r->total) c = r->total;
    if (c < 1) c = 1;
    int rc = MPI_Bcast(&c, 1, MPI_INT64_T, 0, r->comm);
    w->chunk = c;
    return dist_agree(r->comm, r->func, rc == MPI_SUCCESS ? SLA_OK
                                        : dist_mpi_error(r->func, "MPI_Bcast", rc));
}

sla_status dist_pmumps_logdet_grad(const dist_logdet_slots *r)
{
    pm_work w;
    memset(&w, 0, sizeof w);
    w.comm = r->comm;
    MPI_Comm_rank(r->comm, &w.rank);
    MPI_Comm_size(r->comm, &w.size);
    int64_t N = sla_dist_layout_size(r->v->P->rows);
    sla_status st = pm_chunk_size(&w, r, N);
    if (st == SLA_OK)
        st = dist_agree(r->comm, r->func, pm_alloc(&w, r->m, r->row, r->col, N, w.chunk));
    MPI_Comm mc = MPI_COMM_NULL;
    if (st == SLA_OK) {
        int rc = MPI_Comm_dup(r->comm, &mc);   /* MUMPS talks on its own communicator */
        st = dist_agree(r->comm, r->func, rc == MPI_SUCCESS ? SLA_OK
                                          : dist_mpi_error(r->func, "MPI_Comm_dup", rc));
    }
    if (st == SLA_OK && r->total > 0) st = pm_solve(&w, r, N, mc);
    if (mc != MPI_COMM_NULL) MPI_Comm_free(&mc);
    pm_free(&w);
    return st;
}

#else

sla_status dist_pmumps_logdet_grad(const dist_logdet_slots *r)
{
    const char *why = SLA_HAVE_PMUMPS ? "libsla_mpi was built without SuperLU_DIST"
                                      : dist_pmumps_unavailable();
    return sla_error_set(SLA_EUNSUPPORTED, r->func, "%s", why);
}

#endif
