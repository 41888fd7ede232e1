/* Template (see core/instantiate.h): the local parts of the distributed vector kernels.
 * Reductions run over fixed chunks of the local range [bd[c], bd[c + 1]) (a function of n
 * only, see chunks() in vector.c), each with four running sums in a fixed pattern, and the
 * chunk partials are added in chunk order: the same bits whether the chunks run on one thread
 * or on many. Sums are accumulated in double. */

static inline double FN(dot_range)(int64_t i, int64_t e, const REAL *x, const REAL *y)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; i + 3 < e; i += 4) {
        s0 += (double)x[i] * (double)y[i];
        s1 += (double)x[i + 1] * (double)y[i + 1];
        s2 += (double)x[i + 2] * (double)y[i + 2];
        s3 += (double)x[i + 3] * (double)y[i + 3];
    }
    for (; i < e; i++) s0 += (double)x[i] * (double)y[i];
    return (s0 + s1) + (s2 + s3);
}

/* out[v] = Σ_i x_v[i]·y[i] for v < m (local partial sums). */
static void FN(mdot)(int nc, int par, const int64_t *bd, int m, const void *const *x,
                     const REAL *y, double *out)
{
    double part[DIST_VEC_CHUNKS];
    for (int v = 0; v < m; v++) {
        const REAL *xv = x[v];
        #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (par)
        for (int c = 0; c < nc; c++) part[c] = FN(dot_range)(bd[c], bd[c + 1], xv, y);
        double s = 0;
        for (int c = 0; c < nc; c++) s += part[c];
        out[v] = s;
    }
}

static void FN(axpby)(int nc, int par, const int64_t *bd, double a, const REAL *x, double b,
                      REAL *y)
{
    REAL ra = (REAL)a, rb = (REAL)b;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (par)
    for (int c = 0; c < nc; c++) {
        if (a == 0 && b == 0)            /* y = 0 even where x holds garbage (NaN) */
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = 0;
        else if (b == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = ra * x[i];
        else
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = ra * x[i] + rb * y[i];
    }
}

/* x += α p; r −= α q; out[0] = rᵀr, out[1] = rᵀ diag(d) r (d NULL: = out[0]), local parts */
static void FN(cg_update)(int nc, int par, const int64_t *bd, double alpha, const REAL *p,
                          const REAL *q, REAL *x, REAL *r, const REAL *d, double *out)
{
    double prr[DIST_VEC_CHUNKS], prz[DIST_VEC_CHUNKS];
    REAL a = (REAL)alpha;
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (par)
    for (int c = 0; c < nc; c++) {
        double s = 0, t = 0;
        for (int64_t i = bd[c]; i < bd[c + 1]; i++) {
            x[i] += a * p[i];
            REAL ri = r[i] - a * q[i];
            r[i] = ri;
            s += (double)ri * (double)ri;
            if (d) t += (double)ri * (double)(d[i] * ri);
        }
        prr[c] = s;
        prz[c] = d ? t : s;
    }
    out[0] = out[1] = 0;
    for (int c = 0; c < nc; c++) {
        out[0] += prr[c];
        out[1] += prz[c];
    }
}

/* p = diag(d) z + β p (d NULL: p = z + β p) */
static void FN(cg_direction)(int nc, int par, const int64_t *bd, double beta, const REAL *z,
                             const REAL *d, REAL *p)
{
    REAL be = (REAL)beta;
    /* β = 0 (the first direction) writes p without reading it: p may be uninitialised, and
     * 0·NaN would poison it on one rank only */
    #pragma omp parallel for num_threads(sla_threads()) schedule(static) if (par)
    for (int c = 0; c < nc; c++) {
        if (d && beta == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = d[i] * z[i];
        else if (d)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = d[i] * z[i] + be * p[i];
        else if (beta == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = z[i];
        else
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = z[i] + be * p[i];
    }
}
