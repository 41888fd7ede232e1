/* Template (see core/instantiate.h): kernels of the host vector space (host_space.c).
 * Each kernel runs chunk c of a fixed partition on one thread (static schedule; all chunks on
 * the calling thread when par = 0, see sla_host_par()) and keeps its partial sums per chunk; the
 * partials are added in chunk order, so a reduction depends only on the partition, never on
 * thread timing or on par. The results are this process's partial sums: host_space.c hands them
 * to the space's reduce hook when it has one. Within a chunk four running sums in a fixed pattern keep the adds
 * pipelined without reordering them between runs. */

static double FN(hs_dot)(int nc, int par, const int64_t *bd, const REAL *x, const REAL *y)
{
    double part[SLA_HOST_MAX_CHUNKS];
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int64_t i = bd[c], e = bd[c + 1];
        for (; i + 3 < e; i += 4) {
            s0 += (double)x[i] * (double)y[i];
            s1 += (double)x[i + 1] * (double)y[i + 1];
            s2 += (double)x[i + 2] * (double)y[i + 2];
            s3 += (double)x[i + 3] * (double)y[i + 3];
        }
        for (; i < e; i++) s0 += (double)x[i] * (double)y[i];
        part[c] = (s0 + s1) + (s2 + s3);
    }
    return sla_ksum_parts(part, nc);
}

static void FN(hs_axpby)(int nc, int par, const int64_t *bd, double a, const REAL *x, double b,
                         REAL *y)
{
    REAL ra = (REAL)a, rb = (REAL)b;
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        if (a == 0 && b == 0)            /* y = 0 even where x holds garbage (NaN) */
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = 0;
        else if (b == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = ra * x[i];
        else
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = ra * x[i] + rb * y[i];
    }
}

/* x += α p; r −= α q; rr = rᵀr; rz = rᵀ diag(d) r (d may be NULL: rz = rr) */
static void FN(hs_cg_update)(int nc, int par, const int64_t *bd, double alpha, const REAL *p,
                             const REAL *q, REAL *x, REAL *r, const REAL *d, double *rr,
                             double *rz)
{
    double prr[SLA_HOST_MAX_CHUNKS], prz[SLA_HOST_MAX_CHUNKS];
    REAL a = (REAL)alpha;
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        double s = 0, t = 0;
        if (d) {
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) {
                x[i] += a * p[i];
                REAL ri = r[i] - a * q[i];
                r[i] = ri;
                s += (double)ri * (double)ri;
                t += (double)ri * (double)(d[i] * ri);
            }
        } else {
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) {
                x[i] += a * p[i];
                REAL ri = r[i] - a * q[i];
                r[i] = ri;
                s += (double)ri * (double)ri;
            }
            t = s;
        }
        prr[c] = s;
        prz[c] = t;
    }
    *rr = sla_ksum_parts(prr, nc);
    *rz = sla_ksum_parts(prz, nc);
}

/* p = diag(d) z + β p (d may be NULL: p = z + β p) */
static void FN(hs_cg_direction)(int nc, int par, const int64_t *bd, double beta, const REAL *z,
                                const REAL *d, REAL *p)
{
    REAL be = (REAL)beta;
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        if (d)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = d[i] * z[i] + be * p[i];
        else
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = z[i] + be * p[i];
    }
}

/* max |x_i| (NaN entries are skipped: callers check finiteness first) */
static double FN(hs_amax)(int64_t n, const REAL *x)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)x[i]));
    return m;
}

/* y = x · 2^e entrywise (exact unless the result leaves the dtype's range); y may be x */
static void FN(hs_scale_pow2)(int64_t n, int e, const REAL *x, REAL *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = (REAL)ldexp((double)x[i], e);
}
