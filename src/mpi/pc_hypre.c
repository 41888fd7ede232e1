/* hypre BoomerAMG as the preconditioner of a distributed solver: one V-cycle (MaxIter 1,
 * Tol 0) per application, on a ParCSR copy of A. hypre numbers rows contiguously by rank, so
 * global index g of our layout (which may be any partition) becomes h(g) = offset_r + local(g)
 * with offset_r the rows of the ranks before its owner r: the diagonal block's columns map by
 * the same rule on this rank, the ghost columns by their owner's offset and local index (one
 * directory look-up at create). The map is kept: a refactor only copies the new values into new
 * ParCSR matrices and runs BoomerAMG's set-up again (its set-up is numeric and structural at
 * once). hypre runs on a duplicate of the layout's communicator. Transposed applications use
 * the same V-cycle (symmetric for symmetric A with hypre's default symmetric smoothing; the
 * solver refuses op = T otherwise). */
#include <stdio.h>
#include <string.h>

#include "mpi/dsolver.h"

#if SLA_HAVE_HYPRE
#include "HYPRE.h"
#include "HYPRE_parcsr_ls.h"

struct dist_hypre {
    MPI_Comm comm;                 /* duplicate for hypre */
    int64_t batch, n;
    HYPRE_BigInt lo;               /* this rank's first hypre row */
    HYPRE_BigInt *rows;            /* [n] lo + i */
    HYPRE_BigInt *cols;            /* [nnz_local] hypre column of each local slot */
    HYPRE_Int *ncols;              /* [n] entries per row (diag + offd) */
    HYPRE_Real *rowvals;           /* [nnz_local] values in row order (diag then offd per row) */
    int64_t *slot;                 /* [nnz_local] local value slot of each row-order position */
    HYPRE_IJMatrix *ij;            /* [batch] */
    HYPRE_Solver *amg;             /* [batch] */
    HYPRE_IJVector ijb, ijx;
    HYPRE_ParVector b, x;
    char note[160];
};

int dist_hypre_available(void) { return 1; }

static sla_status hypre_fail(const char *func, const char *call, HYPRE_Int code)
{
    char msg[128] = "";
    HYPRE_DescribeError(code, msg);
    HYPRE_ClearAllErrors();
    return sla_error_set(SLA_EBACKEND, func, "hypre's %s failed (%d: %s)", call, (int)code, msg);
}

/* the hypre numbering of this rank's slots (collective: offsets and the ghosts' owners) */
static sla_status build_map(dist_hypre *h, const sla_dist_pattern *P, const char *func)
{
    int64_t n = P->rows->n, nloc = sla_dist_pattern_nnz(P);
    long long mine = n, before = 0;
    int rc = MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, P->comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Exscan", rc);
    if (P->rows->rank == 0) before = 0;
    int size = P->rows->size;
    long long *offs = sla_malloc((size_t)size, sizeof *offs, "hypre offsets");
    int *owner = sla_malloc((size_t)(P->nghost + 1), sizeof *owner, "ghost owners");
    int64_t *lidx = sla_malloc((size_t)(P->nghost + 1), sizeof *lidx, "ghost local indices");
    sla_status st = offs && owner && lidx ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(P->comm, func, st);
    if (st == SLA_OK) {
        rc = MPI_Allgather(&before, 1, MPI_LONG_LONG, offs, 1, MPI_LONG_LONG, P->comm);
        if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Allgather", rc);
    }
    if (st == SLA_OK) st = dist_layout_lookup(P->cols, func, P->nghost, P->ghost_global, owner, lidx);
    if (st == SLA_OK) {
        h->lo = (HYPRE_BigInt)before;
        const int64_t *drp = sla_pattern_rowptr(P->diag), *orp = sla_pattern_rowptr(P->offd);
        const int32_t *dci = sla_pattern_colind(P->diag), *oci = sla_pattern_colind(P->offd);
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            h->rows[i] = h->lo + (HYPRE_BigInt)i;
            h->ncols[i] = (HYPRE_Int)(drp[i + 1] - drp[i] + orp[i + 1] - orp[i]);
            for (int64_t s = drp[i]; s < drp[i + 1]; s++, k++) {
                h->cols[k] = h->lo + dci[s];
                h->slot[k] = s;
            }
            for (int64_t s = orp[i]; s < orp[i + 1]; s++, k++) {
                h->cols[k] = (HYPRE_BigInt)(offs[owner[oci[s]]] + lidx[oci[s]]);
                h->slot[k] = P->nnz_diag + s;
            }
        }
        (void)nloc;
    }
    sla_free(offs);
    sla_free(owner);
    sla_free(lidx);
    return st;
}

/* ParCSR matrix and BoomerAMG set-up of batch element b (collective; local status) */
static sla_status setup_one(dist_hypre *h, const sla_dist_matrix *A, int64_t b, const char *func)
{
    const double *v = (const double *)A->values + b * sla_dist_pattern_nnz(A->pattern);
    int64_t nloc = sla_dist_pattern_nnz(A->pattern);
    for (int64_t k = 0; k < nloc; k++) h->rowvals[k] = v[h->slot[k]];
    HYPRE_BigInt hi = h->lo + (HYPRE_BigInt)h->n - 1;
    HYPRE_Int e;
    if ((e = HYPRE_IJMatrixCreate(h->comm, h->lo, hi, h->lo, hi, &h->ij[b])))
        return hypre_fail(func, "HYPRE_IJMatrixCreate", e);
    HYPRE_IJMatrixSetObjectType(h->ij[b], HYPRE_PARCSR);
    if ((e = HYPRE_IJMatrixInitialize(h->ij[b]))) return hypre_fail(func, "HYPRE_IJMatrixInitialize", e);
    if (h->n > 0 && (e = HYPRE_IJMatrixSetValues(h->ij[b], (HYPRE_Int)h->n, h->ncols, h->rows,
                                                 h->cols, h->rowvals)))
        return hypre_fail(func, "HYPRE_IJMatrixSetValues", e);
    if ((e = HYPRE_IJMatrixAssemble(h->ij[b]))) return hypre_fail(func, "HYPRE_IJMatrixAssemble", e);
    HYPRE_ParCSRMatrix par;
    HYPRE_IJMatrixGetObject(h->ij[b], (void **)&par);
    if ((e = HYPRE_BoomerAMGCreate(&h->amg[b]))) return hypre_fail(func, "HYPRE_BoomerAMGCreate", e);
    HYPRE_BoomerAMGSetMaxIter(h->amg[b], 1);
    HYPRE_BoomerAMGSetTol(h->amg[b], 0.0);
    HYPRE_BoomerAMGSetPrintLevel(h->amg[b], 0);
    e = HYPRE_BoomerAMGSetup(h->amg[b], par, h->b, h->x);
    if (e) return hypre_fail(func, "HYPRE_BoomerAMGSetup", e);
    return SLA_OK;
}

static void destroy_batch(dist_hypre *h)
{
    for (int64_t b = 0; b < h->batch; b++) {
        if (h->amg && h->amg[b]) HYPRE_BoomerAMGDestroy(h->amg[b]);
        if (h->ij && h->ij[b]) HYPRE_IJMatrixDestroy(h->ij[b]);
        if (h->amg) h->amg[b] = NULL;
        if (h->ij) h->ij[b] = NULL;
    }
}

static sla_status setup_all(dist_hypre *h, const sla_dist_matrix *A, const char *func)
{
    sla_status st = SLA_OK;
    for (int64_t b = 0; b < h->batch && st == SLA_OK; b++)
        st = dist_agree(h->comm, func, setup_one(h, A, b, func));
    return st;
}

static sla_status make_vector(dist_hypre *h, HYPRE_IJVector *ij, HYPRE_ParVector *par,
                              const char *func)
{
    HYPRE_Int e;
    if ((e = HYPRE_IJVectorCreate(h->comm, h->lo, h->lo + (HYPRE_BigInt)h->n - 1, ij)))
        return hypre_fail(func, "HYPRE_IJVectorCreate", e);
    HYPRE_IJVectorSetObjectType(*ij, HYPRE_PARCSR);
    if ((e = HYPRE_IJVectorInitialize(*ij))) return hypre_fail(func, "HYPRE_IJVectorInitialize", e);
    if ((e = HYPRE_IJVectorAssemble(*ij))) return hypre_fail(func, "HYPRE_IJVectorAssemble", e);
    HYPRE_IJVectorGetObject(*ij, (void **)par);
    return SLA_OK;
}

sla_status dist_hypre_create(const sla_dist_matrix *A, const char *func, dist_hypre **out)
{
    const sla_dist_pattern *P = A->pattern;
    *out = NULL;
    sla_status st = SLA_OK;
    if (A->dtype != SLA_FLOAT64)
        st = sla_error_set(SLA_EUNSUPPORTED, func, "precond boomeramg needs float64 values "
                           "(hypre's HYPRE_Real); use jacobi or a block-Jacobi kind for float32");
    else if (sla_dist_layout_size(P->rows) > 2147483647)
        st = sla_error_set(SLA_EUNSUPPORTED, func, "precond boomeramg: N = %lld exceeds this "
                           "hypre's 32-bit HYPRE_BigInt", (long long)sla_dist_layout_size(P->rows));
    SLA_TRY(dist_agree(P->comm, func, st));
    static int initialized;
    if (!initialized) {
        HYPRE_Init();
        initialized = 1;
    }
    dist_hypre *h = sla_calloc(1, sizeof *h, "BoomerAMG");
    int64_t n = P->rows->n, nloc = sla_dist_pattern_nnz(P);
    if (h) {
        h->comm = MPI_COMM_NULL;
        h->batch = A->batch;
        h->n = n;
        h->rows = sla_malloc((size_t)(n + 1), sizeof *h->rows, "hypre rows");
        h->ncols = sla_malloc((size_t)(n + 1), sizeof *h->ncols, "hypre row sizes");
        h->cols = sla_malloc((size_t)(nloc + 1), sizeof *h->cols, "hypre columns");
        h->rowvals = sla_malloc((size_t)(nloc + 1), sizeof *h->rowvals, "hypre values");
        h->slot = sla_malloc((size_t)(nloc + 1), sizeof *h->slot, "hypre slots");
        h->ij = sla_calloc((size_t)A->batch, sizeof *h->ij, "hypre matrices");
        h->amg = sla_calloc((size_t)A->batch, sizeof *h->amg, "BoomerAMG solvers");
    }
    st = h && h->rows && h->ncols && h->cols && h->rowvals && h->slot && h->ij && h->amg
             ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(P->comm, func, st);
    if (st == SLA_OK) st = dist_agree(P->comm, func, dist_comm_dup(P->comm, func, &h->comm));
    if (st == SLA_OK) st = build_map(h, P, func);
    if (st == SLA_OK) st = dist_agree(P->comm, func, make_vector(h, &h->ijb, &h->b, func));
    if (st == SLA_OK) st = dist_agree(P->comm, func, make_vector(h, &h->ijx, &h->x, func));
    if (st == SLA_OK) st = setup_all(h, A, func);
    if (st < 0) {
        dist_hypre_free(&h);
        return st;
    }
    snprintf(h->note, sizeof h->note, "boomeramg (hypre %s, one V-cycle)", HYPRE_RELEASE_VERSION);
    *out = h;
    return SLA_OK;
}

sla_status dist_hypre_update(dist_hypre *h, const sla_dist_matrix *A, const char *func)
{
    destroy_batch(h);
    return setup_all(h, A, func);
}

sla_status dist_hypre_apply(dist_hypre *h, int64_t b, const double *r, double *z)
{
    HYPRE_Int e = 0;
    if (h->n > 0) {
        e = HYPRE_IJVectorSetValues(h->ijb, (HYPRE_Int)h->n, h->rows, r);
        if (!e) e = HYPRE_ParVectorSetConstantValues(h->x, 0.0);
    } else {
        HYPRE_ParVectorSetConstantValues(h->x, 0.0);
    }
    if (e) return hypre_fail("BoomerAMG preconditioner", "HYPRE_IJVectorSetValues", e);
    HYPRE_ParCSRMatrix par;
    HYPRE_IJMatrixGetObject(h->ij[b], (void **)&par);
    e = HYPRE_BoomerAMGSolve(h->amg[b], par, h->b, h->x);
    /* one cycle with tol 0 "does not converge": not an error here */
    if (e && !HYPRE_CheckError(e, HYPRE_ERROR_CONV))
        return hypre_fail("BoomerAMG preconditioner", "HYPRE_BoomerAMGSolve", e);
    HYPRE_ClearAllErrors();
    if (h->n > 0 && (e = HYPRE_IJVectorGetValues(h->ijx, (HYPRE_Int)h->n, h->rows, z)))
        return hypre_fail("BoomerAMG preconditioner", "HYPRE_IJVectorGetValues", e);
    return SLA_OK;
}

const char *dist_hypre_describe(const dist_hypre *h) { return h->note; }

void dist_hypre_free(dist_hypre **ph)
{
    dist_hypre *h = *ph;
    if (!h) return;
    destroy_batch(h);
    if (h->ijb) HYPRE_IJVectorDestroy(h->ijb);
    if (h->ijx) HYPRE_IJVectorDestroy(h->ijx);
    if (h->comm != MPI_COMM_NULL) MPI_Comm_free(&h->comm);
    sla_free(h->rows);
    sla_free(h->ncols);
    sla_free(h->cols);
    sla_free(h->rowvals);
    sla_free(h->slot);
    sla_free(h->ij);
    sla_free(h->amg);
    sla_free(h);
    *ph = NULL;
}

#else /* no hypre */

struct dist_hypre { int unused; };

int dist_hypre_available(void) { return 0; }

sla_status dist_hypre_create(const sla_dist_matrix *A, const char *func, dist_hypre **out)
{
    *out = NULL;
    return dist_agree(A->pattern->comm, func,
                      sla_error_set(SLA_EUNSUPPORTED, func, "precond boomeramg: libsla_mpi was "
                                    "built without hypre (apt-get install libhypre-dev)"));
}

sla_status dist_hypre_update(dist_hypre *h, const sla_dist_matrix *A, const char *func)
{
    (void)h; (void)A;
    return SLA_FAIL_AS(func, SLA_EUNSUPPORTED, "no hypre in this build");
}

sla_status dist_hypre_apply(dist_hypre *h, int64_t b, const double *r, double *z)
{
    (void)h; (void)b; (void)r; (void)z;
    return SLA_FAIL(SLA_EUNSUPPORTED, "no hypre in this build");
}

const char *dist_hypre_describe(const dist_hypre *h) { (void)h; return "boomeramg"; }

void dist_hypre_free(dist_hypre **h) { *h = NULL; }

#endif
