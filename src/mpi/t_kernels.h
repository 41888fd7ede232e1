/* Template (see core/instantiate.h): the element-wise kernels of the distributed layer that
 * need the dtype's arithmetic (the rest moves bytes). Each output element is summed in a fixed
 * order, so results never depend on timing. */

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
