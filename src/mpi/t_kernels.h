/* Template (see core/instantiate.h): the element-wise kernels of the distributed layer that
 * need the dtype's arithmetic (the rest moves bytes). Each output element is summed in a fixed
 * order, so results never depend on timing. */

/* dist_offd_add (dist.h): the listed rows of y += alpha·A_offd·g, batch elements apart. */
static void FN(offd_add)(int64_t batch, int64_t k, int64_t nr, int64_t ng, int64_t nnz,
                         const int64_t *rp, const int32_t *ci, int64_t n_rows,
                         const int64_t *rows, double alpha, const ENTRY *va, const ENTRY *g,
                         ENTRY *y)
{
    ENTRY al = (ENTRY)alpha;
    for (int64_t b = 0; b < batch; b++) {
        const ENTRY *vb = va + b * nnz, *gb = g + b * ng * k;
        ENTRY *yb = y + b * nr * k;
#pragma omp parallel for schedule(static) if (n_rows > 20000)
        for (int64_t i = 0; i < n_rows; i++) {
            int64_t r = rows[i];
            for (int64_t j = 0; j < k; j++) {
                ENTRY sum = 0;
                for (int64_t s = rp[r]; s < rp[r + 1]; s++) sum += vb[s] * gb[(int64_t)ci[s] * k + j];
                yb[r * k + j] = al * sum + yb[r * k + j];
            }
        }
    }
}

/* y[b][idx[i]][j] += buf[b][i][j]: one neighbour's contributions of a reverse exchange. */
static void FN(add_rows)(int64_t nb, int64_t k, int64_t ny, int64_t n, const int64_t *idx,
                         const REAL *buf, REAL *y)
{
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < n; i++) {
            REAL *yi = y + (b * ny + idx[i]) * k;
            const REAL *bi = buf + (b * n + i) * k;
            for (int64_t j = 0; j < k; j++) yi[j] += bi[j];
        }
}

/* local[b][slot[e]] = Σ recv[e][b] over the entries e of each slot, in e order, starting from
 * −0 (the additive identity, as sla_values_gather). */
static void FN(gather_slots)(int64_t batch, int64_t nloc, int64_t nrecv, const int64_t *slot,
                             const REAL *recv, REAL *local)
{
    for (int64_t i = 0; i < batch * nloc; i++) local[i] = (REAL)-0.0;
    for (int64_t e = 0; e < nrecv; e++)
        for (int64_t b = 0; b < batch; b++) local[b * nloc + slot[e]] += recv[e * batch + b];
}
