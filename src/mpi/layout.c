/* Layouts: which rank owns which global index. Contiguous layouts keep the offsets of every
 * rank (O(p)); others keep their owned list and answer, as a directory, for one even block of
 * the index range (directory.c), so that no rank holds O(N) data. */
#include <stdlib.h>
#include <string.h>

#include "mpi/dist.h"

int64_t dist_block_lo(int64_t N, int p, int r)
{
    int64_t q = N / p, rem = N % p;
    return (int64_t)r * q + (r < rem ? r : rem);
}

int dist_block_of(int64_t N, int p, int64_t g)
{
    int64_t q = N / p, rem = N % p;
    if (g < rem * (q + 1)) return (int)(g / (q + 1));
    return (int)(rem + (g - rem * (q + 1)) / q);
}

sla_status dist_comm_dup(MPI_Comm comm, const char *func, MPI_Comm *out)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return sla_error_set(SLA_EINVAL, func, "MPI is not initialized (call MPI_Init first)");
    if (comm == MPI_COMM_NULL) return sla_error_set(SLA_EINVAL, func, "comm is MPI_COMM_NULL");
    int rc = MPI_Comm_dup(comm, out);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Comm_dup", rc);
    MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return SLA_OK;
}

/* The start of every constructor: *out cleared, the communicator duplicated, rank and size. */
static sla_status begin(MPI_Comm comm, const char *func, sla_dist_layout **out, MPI_Comm *dup,
                        int *rank, int *size)
{
    if (out) *out = NULL;
    SLA_TRY(dist_comm_dup(comm, func, dup));
    MPI_Comm_rank(*dup, rank);
    MPI_Comm_size(*dup, size);
    return SLA_OK;
}

static void layout_destroy(sla_dist_layout *L)
{
    if (!L) return;
    if (L->comm != MPI_COMM_NULL) MPI_Comm_free(&L->comm);
    sla_free(L->global);
    sla_free(L->offsets);
    sla_free(L->dir_owner);
    sla_free(L->dir_local);
    sla_free(L);
}

/* A layout shell on dupcomm (NULL and SLA_ENOMEM on failure; comm not freed). */
static sla_dist_layout *layout_new(MPI_Comm dupcomm, int64_t N, int64_t n)
{
    sla_dist_layout *L = sla_calloc(1, sizeof *L, "layout");
    if (!L) return NULL;
    atomic_init(&L->refcount, 1);
    L->comm = dupcomm;
    MPI_Comm_rank(dupcomm, &L->rank);
    MPI_Comm_size(dupcomm, &L->size);
    L->N = N;
    L->n = n;
    return L;
}

sla_status dist_layout_build_contiguous(MPI_Comm dupcomm, const char *func, int64_t N,
                                        const int64_t *counts, sla_dist_layout **out)
{
    int rank, size;
    MPI_Comm_rank(dupcomm, &rank);
    MPI_Comm_size(dupcomm, &size);
    sla_dist_layout *L = layout_new(dupcomm, N, counts[rank]);
    if (L) {
        L->contiguous = 1;
        L->offsets = sla_malloc((size_t)size + 1, sizeof(int64_t), "layout offsets");
        L->global = sla_malloc((size_t)counts[rank], sizeof(int64_t), "owned indices");
    }
    sla_status st = L && L->offsets && L->global ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(dupcomm, func, st);
    if (st < 0) {
        if (L) L->comm = MPI_COMM_NULL;
        layout_destroy(L);
        MPI_Comm_free(&dupcomm);
        return st;
    }
    L->offsets[0] = 0;
    for (int r = 0; r < size; r++) L->offsets[r + 1] = L->offsets[r] + counts[r];
    for (int64_t i = 0; i < L->n; i++) L->global[i] = L->offsets[rank] + i;
    *out = L;
    return SLA_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

sla_status dist_layout_build(MPI_Comm dupcomm, const char *func, int64_t N, int64_t n,
                             int64_t *owned, sla_dist_layout **out)
{
    int rank, size;
    MPI_Comm_rank(dupcomm, &rank);
    MPI_Comm_size(dupcomm, &size);
    qsort(owned, (size_t)n, sizeof *owned, cmp_i64);
    sla_status st = SLA_OK;
    for (int64_t i = 1; i < n && st == SLA_OK; i++)
        if (owned[i] == owned[i - 1])
            st = sla_error_set(SLA_EINDEX, func, "global index %lld is owned twice by this rank",
                               (long long)owned[i]);
    int64_t *counts = sla_malloc((size_t)size, sizeof *counts, "layout counts");
    if (!counts && st == SLA_OK) st = sla_error_attribute(SLA_ENOMEM, func);
    st = dist_agree(dupcomm, func, st);
    int rc = st < 0 ? MPI_SUCCESS : MPI_Allgather(&n, 1, MPI_INT64_T, counts, 1, MPI_INT64_T,
                                                   dupcomm);
    if (rc != MPI_SUCCESS) st = dist_mpi_error(func, "MPI_Allgather", rc);
    int64_t lo = 0, total = 0;
    for (int r = 0; st == SLA_OK && r < size; r++) {
        if (r < rank) lo += counts[r];
        total += counts[r];
    }
    if (st == SLA_OK && total != N)
        st = sla_error_set(SLA_EINDEX, func, "the ranks own %lld indices in all, but N = %lld",
                           (long long)total, (long long)N);
    if (st < 0) {
        sla_free(counts);
        sla_free(owned);
        MPI_Comm_free(&dupcomm);
        return st;
    }
    int contiguous = n == 0 || (owned[0] == lo && owned[n - 1] == lo + n - 1);
    rc = MPI_Allreduce(MPI_IN_PLACE, &contiguous, 1, MPI_INT, MPI_MIN, dupcomm);
    if (rc != MPI_SUCCESS || contiguous) {
        /* intervals in rank order covering N indices: a partition, no directory needed */
        st = rc != MPI_SUCCESS ? dist_mpi_error(func, "MPI_Allreduce", rc)
                               : dist_layout_build_contiguous(dupcomm, func, N, counts, out);
        if (rc != MPI_SUCCESS) MPI_Comm_free(&dupcomm);
        sla_free(counts);
        sla_free(owned);
        return st;
    }
    sla_free(counts);
    sla_dist_layout *L = layout_new(dupcomm, N, n);
    st = dist_agree(dupcomm, func, L ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    if (st < 0) {
        sla_free(L);
        sla_free(owned);
        MPI_Comm_free(&dupcomm);
        return st;
    }
    L->global = owned;
    st = dist_directory_build(L, func);
    if (st < 0) {
        layout_destroy(L);
        return st;
    }
    *out = L;
    return SLA_OK;
}

sla_status sla_dist_layout_create(MPI_Comm comm, int64_t N, int64_t n_local,
                                  sla_dist_layout **out)
{
    MPI_Comm dup;
    int rank, size;
    SLA_TRY(begin(comm, __func__, out, &dup, &rank, &size));
    sla_status st = SLA_OK;
    if (!out) st = SLA_FAIL(SLA_EINVAL, "out is NULL");
    else if (N < 0) st = SLA_FAIL(SLA_EINVAL, "N = %lld < 0", (long long)N);
    else if (n_local < -1) st = SLA_FAIL(SLA_EINVAL, "n_local = %lld < -1", (long long)n_local);
    int64_t *counts = sla_malloc((size_t)size, sizeof *counts, "layout counts");
    if (!counts && st == SLA_OK) st = sla_error_attribute(SLA_ENOMEM, __func__);
    int64_t same[2] = {N, n_local == -1};
    static const char *const names[2] = {"N", "(n_local = -1)"};
    st = dist_agree_same(dup, __func__, st, 2, same, names);
    int rc = st < 0 || n_local == -1 ? MPI_SUCCESS
             : MPI_Allgather(&n_local, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, dup);
    if (rc != MPI_SUCCESS) st = dist_mpi_error(__func__, "MPI_Allgather", rc);
    int64_t total = 0;
    for (int r = 0; st == SLA_OK && r < size; r++) {
        if (n_local == -1) counts[r] = dist_block_lo(N, size, r + 1) - dist_block_lo(N, size, r);
        total += counts[r];
    }
    if (st == SLA_OK && total != N)
        st = SLA_FAIL(SLA_EINVAL, "the local sizes sum to %lld, but N = %lld",
                      (long long)total, (long long)N);
    if (st < 0) {
        sla_free(counts);
        MPI_Comm_free(&dup);
        return st;
    }
    st = dist_layout_build_contiguous(dup, __func__, N, counts, out);
    sla_free(counts);
    return st;
}

/* Checks indices global[0..n) in [0, N) (and part[i] in [0, size) when part is given). */
static sla_status check_indices(const char *func, const char *name, int64_t N, int64_t n,
                                const int64_t *global, const int *part, int size)
{
    for (int64_t i = 0; i < n; i++) {
        if (global && (global[i] < 0 || global[i] >= N))
            return sla_error_set(SLA_EINDEX, func, "%s[%lld] = %lld is out of range [0, %lld)",
                                 name, (long long)i, (long long)global[i], (long long)N);
        if (part && (part[i] < 0 || part[i] >= size))
            return sla_error_set(SLA_EINDEX, func, "part[%lld] = %d is not a rank of the %d",
                                 (long long)i, part[i], size);
    }
    return SLA_OK;
}

sla_status sla_dist_layout_create_owned(MPI_Comm comm, int64_t N, int64_t n_local,
                                        const int64_t *owned, sla_dist_layout **out)
{
    MPI_Comm dup;
    int rank, size;
    SLA_TRY(begin(comm, __func__, out, &dup, &rank, &size));
    sla_status st = SLA_OK;
    int64_t *copy = NULL;
    if (!out) st = SLA_FAIL(SLA_EINVAL, "out is NULL");
    else if (N < 0 || n_local < 0)
        st = SLA_FAIL(SLA_EINVAL, "%s = %lld < 0", N < 0 ? "N" : "n_local",
                      (long long)(N < 0 ? N : n_local));
    else if (n_local > 0 && !owned) st = SLA_FAIL(SLA_EINVAL, "owned is NULL");
    else st = check_indices(__func__, "owned", N, n_local, owned, NULL, 0);
    if (st == SLA_OK && !(copy = sla_malloc((size_t)n_local, sizeof *copy, "owned indices")))
        st = sla_error_attribute(SLA_ENOMEM, __func__);
    static const char *const names[1] = {"N"};
    st = dist_agree_same(dup, __func__, st, 1, &N, names);
    if (st < 0) {
        sla_free(copy);
        MPI_Comm_free(&dup);
        return st;
    }
    memcpy(copy, owned, (size_t)n_local * sizeof *copy);
    return dist_layout_build(dup, __func__, N, n_local, copy, out);
}

/* The shared part of create_assigned and create_partition: indices global[i] go to part[i]. */
static sla_status assign(MPI_Comm dup, const char *func, sla_status st, int64_t N, int64_t n,
                         const int64_t *global, const int *part, sla_dist_layout **out)
{
    int size;
    MPI_Comm_size(dup, &size);
    dist_xchg X = {0};
    int64_t *send = NULL, *recv = NULL;
    if (st == SLA_OK) st = dist_xchg_init(&X, size, func);
    if (st == SLA_OK && !(send = sla_malloc((size_t)n, sizeof *send, "assigned indices")))
        st = sla_error_attribute(SLA_ENOMEM, func);
    static const char *const names[1] = {"N"};
    st = dist_agree_same(dup, func, st, 1, &N, names);
    if (st == SLA_OK) {
        /* counting sort by destination, stable */
        for (int64_t i = 0; i < n; i++) X.scount[part[i]]++;
        int64_t *pos = X.rdispl;               /* scratch until the counts are exchanged */
        pos[0] = 0;
        for (int r = 0; r < size; r++) pos[r + 1] = pos[r] + X.scount[r];
        for (int64_t i = 0; i < n; i++) send[pos[part[i]]++] = global[i];
        st = dist_xchg_counts(&X, dup, func);
    }
    int64_t nown = st == SLA_OK ? X.rdispl[size] : 0;
    if (st == SLA_OK) {
        recv = sla_malloc((size_t)nown, sizeof *recv, "owned indices");
        st = dist_agree(dup, func, recv ? SLA_OK : sla_error_attribute(SLA_ENOMEM, func));
    }
    if (st == SLA_OK) st = dist_xchg_run(&X, dup, func, sizeof(int64_t), send, recv, 0);
    dist_xchg_free(&X);
    sla_free(send);
    if (st < 0) {
        sla_free(recv);
        MPI_Comm_free(&dup);
        return st;
    }
    return dist_layout_build(dup, func, N, nown, recv, out);
}

sla_status sla_dist_layout_create_assigned(MPI_Comm comm, int64_t N, int64_t n,
                                           const int64_t *global, const int *part,
                                           sla_dist_layout **out)
{
    MPI_Comm dup;
    int rank, size;
    SLA_TRY(begin(comm, __func__, out, &dup, &rank, &size));
    sla_status st = SLA_OK;
    if (!out) st = SLA_FAIL(SLA_EINVAL, "out is NULL");
    else if (N < 0 || n < 0)
        st = SLA_FAIL(SLA_EINVAL, "%s = %lld < 0", N < 0 ? "N" : "n", (long long)(N < 0 ? N : n));
    else if (n > 0 && (!global || !part))
        st = SLA_FAIL(SLA_EINVAL, "%s is NULL", global ? "part" : "global");
    else st = check_indices(__func__, "global", N, n, global, part, size);
    return assign(dup, __func__, st, N, st == SLA_OK ? n : 0, global, part, out);
}

sla_status sla_dist_layout_create_partition(MPI_Comm comm, int64_t N, const int *part, int root,
                                            sla_dist_layout **out)
{
    MPI_Comm dup;
    int rank, size;
    SLA_TRY(begin(comm, __func__, out, &dup, &rank, &size));
    int64_t r64 = root;
    static const char *const names[1] = {"root"};
    sla_status st = dist_agree_same(dup, __func__, SLA_OK, 1, &r64, names);
    if (st == SLA_OK && (root < 0 || root >= size))
        st = SLA_FAIL(SLA_EINVAL, "root = %d is not a rank of the %d", root, size);
    if (st < 0) {
        MPI_Comm_free(&dup);
        return st;
    }
    int64_t n = rank == root ? N : 0, *iota = NULL;
    if (!out) st = SLA_FAIL(SLA_EINVAL, "out is NULL");
    else if (N < 0) st = SLA_FAIL(SLA_EINVAL, "N = %lld < 0", (long long)N);
    else if (n > 0 && !part) st = SLA_FAIL(SLA_EINVAL, "part is NULL on the root");
    else if (!(iota = sla_malloc((size_t)(n > 0 ? n : 0), sizeof *iota, "global indices")))
        st = sla_error_attribute(SLA_ENOMEM, __func__);
    if (st == SLA_OK) {
        for (int64_t g = 0; g < n; g++) iota[g] = g;
        st = check_indices(__func__, "part", N, n, NULL, part, size);
    }
    st = assign(dup, __func__, st, N, st == SLA_OK ? n : 0, iota, part, out);
    sla_free(iota);
    return st;
}

sla_dist_layout *sla_dist_layout_retain(sla_dist_layout *L)
{
    if (L) atomic_fetch_add(&L->refcount, 1);
    return L;
}

void sla_dist_layout_free(sla_dist_layout **L)
{
    if (!L || !*L) return;
    if (atomic_fetch_sub(&(*L)->refcount, 1) == 1) layout_destroy(*L);
    *L = NULL;
}

MPI_Comm sla_dist_layout_comm(const sla_dist_layout *L) { return L ? L->comm : MPI_COMM_NULL; }
int64_t sla_dist_layout_size(const sla_dist_layout *L) { return L ? L->N : 0; }
int64_t sla_dist_layout_local_size(const sla_dist_layout *L) { return L ? L->n : 0; }
const int64_t *sla_dist_layout_global(const sla_dist_layout *L) { return L ? L->global : NULL; }
int sla_dist_layout_is_contiguous(const sla_dist_layout *L) { return L ? L->contiguous : 0; }

int64_t sla_dist_layout_local_index(const sla_dist_layout *L, int64_t g)
{
    if (!L) return -1;
    if (L->contiguous) {
        int64_t lo = L->offsets[L->rank];
        return g >= lo && g < lo + L->n ? g - lo : -1;
    }
    int64_t a = 0, b = L->n;
    while (a < b) {
        int64_t mid = a + (b - a) / 2;
        if (L->global[mid] < g) a = mid + 1; else b = mid;
    }
    return a < L->n && L->global[a] == g ? a : -1;
}

sla_status dist_layouts_same(const sla_dist_layout *a, const sla_dist_layout *b,
                             const char *func, int *same)
{
    /* always reduced: a == b on some ranks only must not skip the collective there */
    int s = a->N == b->N && a->n == b->n;
    for (int64_t i = 0; s && a != b && i < a->n; i++) s = a->global[i] == b->global[i];
    int rc = MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_MIN, a->comm);
    if (rc != MPI_SUCCESS) return dist_mpi_error(func, "MPI_Allreduce", rc);
    *same = s;
    return SLA_OK;
}
