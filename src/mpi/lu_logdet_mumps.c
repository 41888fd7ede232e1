/* The entries of A⁻¹ that the log-determinant gradient needs, by parallel MUMPS (Amestoy, Duff,
 * L'Excellent & Koster, SIAM J. Matrix Anal. Appl. 23(1), 2001; Debian's libmumps-dev 5.5): the
 * matrix is handed in distributed (ICNTL(18) = 3: each rank its own slots, global indices), the
 * factorization is distributed over the ranks, and the selected-inverse solve (ICNTL(30) = 1,
 * Amestoy, Buttari, L'Excellent & Mary, SIAM J. Sci. Comput. 34(4), 2012) computes the
 * requested entries from the distributed factors, exploiting the sparsity of the unit
 * right-hand sides and of the requested entries (no dense column of A⁻¹ is ever formed).
 *
 * What stays on the host (rank 0): MUMPS takes the list of requested entries and returns their
 * values centralized (IRHS_PTR / IRHS_SPARSE / RHS_SPARSE), so rank 0 holds O(nnz) vectors
 * (the requested positions, their values and where each goes back); and this Debian MUMPS has
 * no parallel ordering (built without PT-Scotch/ParMETIS), so its analysis gathers the graph on
 * the host too. The factors — the part that grows superlinearly — are distributed.
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
#include <stdio.h>
#include <string.h>

#include "core/kernels.h"
#include "direct/direct.h"
#include "mpi/lu.h"
#include "sla/mpi_config.h"

#include "mpi/pmumps.h"

#if SLA_HAVE_PMUMPS && SLA_HAVE_SUPERLU_DIST
#define ICNTL(I) PMUMPS_ICNTL(I)
#define INFOG(I) PMUMPS_INFOG(I)
#define pm_run dist_pmumps_run
#define pm_call dist_pmumps_call

typedef struct pm_work {
    MUMPS_INT *irn, *jcn;       /* [m] this rank's slots, 1-based global */
    double *a;                  /* [m] one batch element */
    MUMPS_INT *ip, *is;         /* root: [N + 1], [total] requested entries by column */
    double *rhs;                /* root: [total] their values */
    int64_t *perm;              /* root: [total] gathered position of each requested entry */
} pm_work;

static void pm_free(pm_work *w)
{
    void *p[] = {w->irn, w->jcn, w->a, w->ip, w->is, w->rhs, w->perm};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) sla_free(p[i]);
}

/* The request on the root: entry q of the gradient is (A⁻¹)[gcol[q], grow[q]], i.e. column
 * grow[q] of A⁻¹, row gcol[q] — a counting sort of the gathered slots by global row. */
static sla_status pm_request(pm_work *w, int64_t N, int64_t total, const int64_t *grow,
                             const int64_t *gcol)
{
    w->ip = sla_calloc((size_t)N + 2, sizeof *w->ip, "IRHS_PTR");
    w->is = sla_malloc((size_t)total + 1, sizeof *w->is, "IRHS_SPARSE");
    w->rhs = sla_malloc((size_t)total + 1, sizeof *w->rhs, "RHS_SPARSE");
    w->perm = sla_malloc((size_t)total + 1, sizeof *w->perm, "request order");
    if (!w->ip || !w->is || !w->rhs || !w->perm) return SLA_ENOMEM;
    for (int64_t q = 0; q < total; q++) w->ip[grow[q] + 2]++;
    for (int64_t j = 0; j < N; j++) w->ip[j + 2] += w->ip[j + 1];
    for (int64_t q = 0; q < total; q++) {          /* ip[j + 1]: cursor of column j */
        MUMPS_INT at = w->ip[grow[q] + 1]++;
        w->is[at] = (MUMPS_INT)(gcol[q] + 1);
        w->perm[at] = q;
    }
    for (int64_t j = 0; j <= N; j++) w->ip[j]++;   /* 1-based, ip[0] = 1 */
    return SLA_OK;
}

static sla_status pm_local(pm_work *w, int64_t m, const int64_t *row, const int64_t *col)
{
    w->irn = sla_malloc((size_t)m + 1, sizeof *w->irn, "IRN_loc");
    w->jcn = sla_malloc((size_t)m + 1, sizeof *w->jcn, "JCN_loc");
    w->a = sla_malloc((size_t)m + 1, sizeof *w->a, "A_loc");
    if (!w->irn || !w->jcn || !w->a) return SLA_ENOMEM;
    for (int64_t s = 0; s < m; s++) {
        w->irn[s] = (MUMPS_INT)(row[s] + 1);
        w->jcn[s] = (MUMPS_INT)(col[s] + 1);
    }
    return SLA_OK;
}

/* factor A_b and compute the requested entries into ggrad[b·total + ·] (root); collective */
static sla_status pm_batch(DMUMPS_STRUC_C *id, pm_work *w, const dist_lu_view *v, int64_t b,
                           int64_t m, int64_t total, int root, double *ggrad)
{
    for (int64_t s = 0; s < m; s++)
        w->a[s] = v->dtype == SLA_FLOAT32 ? (double)((const float *)v->values)[b * m + s]
                                          : ((const double *)v->values)[b * m + s];
    sla_status st = pm_run(id, 2, "factorization");
    if (st != SLA_OK) return st;
    id->ICNTL(20) = 0;
    id->ICNTL(30) = 1;
    id->nrhs = id->n;
    id->lrhs = id->n;
    if (root) {
        id->nz_rhs = (MUMPS_INT)total;
        id->irhs_ptr = w->ip;
        id->irhs_sparse = w->is;
        id->rhs_sparse = w->rhs;
    }
    st = pm_run(id, 3, "selected inverse");
    id->irhs_ptr = id->irhs_sparse = NULL;
    id->rhs_sparse = NULL;
    if (st == SLA_OK && root)
        for (int64_t k = 0; k < total; k++) ggrad[b * total + w->perm[k]] = w->rhs[k];
    return st;
}

sla_status dist_pmumps_inverse_entries(const dist_lu_view *v, MPI_Comm comm, const char *func,
                                       int64_t m, const int64_t *row, const int64_t *col,
                                       int64_t total, int64_t **grow, int64_t **gcol,
                                       double *ggrad)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int64_t N = sla_dist_layout_size(v->P->rows);
    pm_work w;
    memset(&w, 0, sizeof w);
    sla_status st = pm_local(&w, m, row, col);
    if (st == SLA_OK && rank == 0) st = pm_request(&w, N, total, *grow, *gcol);
    sla_free(*grow);               /* rank 0's int64 copies are no longer needed: freed before */
    sla_free(*gcol);               /* MUMPS allocates its own */
    *grow = *gcol = NULL;
    MPI_Comm mc = MPI_COMM_NULL;
    st = dist_agree(comm, func, st);
    if (st == SLA_OK) {
        int rc = MPI_Comm_dup(comm, &mc);   /* MUMPS talks on its own communicator */
        st = dist_agree(comm, func, rc == MPI_SUCCESS ? SLA_OK : dist_mpi_error(func, "MPI_Comm_dup", rc));
    }
    if (st != SLA_OK || total == 0) {
        if (mc != MPI_COMM_NULL) MPI_Comm_free(&mc);
        pm_free(&w);
        return st;
    }
    DMUMPS_STRUC_C id;
    memset(&id, 0, sizeof id);
    id.par = 1;                    /* the host works too */
    id.sym = 0;                    /* general: A need not be symmetric */
    id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(mc);
    st = pm_run(&id, -1, "initialization");
    if (st == SLA_OK) {
        id.ICNTL(1) = id.ICNTL(2) = id.ICNTL(3) = -1;    /* never prints */
        id.ICNTL(4) = 0;
        id.ICNTL(18) = 3;          /* distributed assembled input, global indices */
        id.n = (MUMPS_INT)N;
        id.nnz_loc = m;
        id.irn_loc = w.irn;
        id.jcn_loc = w.jcn;
        id.a_loc = w.a;
        st = pm_run(&id, 1, "analysis");
        for (int64_t b = 0; st == SLA_OK && b < v->batch; b++)
            st = pm_batch(&id, &w, v, b, m, total, rank == 0, ggrad);
        pm_call(&id, -2);
    }
    MPI_Comm_free(&mc);
    pm_free(&w);
    return st;
}

#else

sla_status dist_pmumps_inverse_entries(const dist_lu_view *v, MPI_Comm comm, const char *func,
                                       int64_t m, const int64_t *row, const int64_t *col,
                                       int64_t total, int64_t **grow, int64_t **gcol,
                                       double *ggrad)
{
    (void)v; (void)comm; (void)m; (void)row; (void)col; (void)total; (void)grow; (void)gcol;
    (void)ggrad;
    const char *why = SLA_HAVE_PMUMPS ? "libsla_mpi was built without SuperLU_DIST"
                                      : dist_pmumps_unavailable();
    return sla_error_set(SLA_EUNSUPPORTED, func, "%s", why);
}

#endif
