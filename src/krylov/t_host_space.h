/* Template (see core/instantiate.h; real and complex instances): kernels of the host vector
 * space (host_space.c), which also serves the distributed vector kernels of libsla_mpi
 * (src/mpi/vector.c: this rank's entries, a chunking of its own, the ranks' sum afterwards).
 * Each kernel runs chunk c of a fixed partition (static schedule on at most one thread per
 * chunk; all chunks on the calling thread when par = 0, see sla_host_par()) and keeps its
 * partial sums per chunk; the partials are added in chunk order, so a reduction depends only on
 * the partition, never on thread timing, thread count or par. The results are this process's
 * partial sums: host_space.c hands them to the space's reduce hook when it has one. Within a
 * chunk a fixed pattern of running sums keeps the adds pipelined without reordering them
 * between runs. A complex space runs the real kernels on its 2n real parts (dot = Re xᴴy, axpby
 * and CG's updates with real scalars) and the complex instances only where a complex product
 * is needed: xᴴy or xᵀy, complex axpby scalars, and CG's Jacobi scaling by a complex diagonal. */

#if !SLA_COMPLEX
static double FN(hs_dot)(int nc, int par, const int64_t *bd, const REAL *x, const REAL *y)
{
    double part[SLA_HOST_MAX_CHUNKS];
    #pragma omp parallel for schedule(static) num_threads(hs_team(nc)) if (par)
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
#else
/* xᴴy (conj_x) or xᵀy, summed in double complex */
static double complex FN(hz_dot)(int nc, int par, const int64_t *bd, int conj_x, const ENTRY *x,
                                 const ENTRY *y)
{
    double complex part[SLA_HOST_MAX_CHUNKS];
    #pragma omp parallel for schedule(static) num_threads(hs_team(nc)) if (par)
    for (int c = 0; c < nc; c++) {
        double complex s0 = 0, s1 = 0;
        int64_t i = bd[c], e = bd[c + 1];
        if (conj_x) {
            for (; i + 1 < e; i += 2) {
                s0 += (double complex)y[i] * conj((double complex)x[i]);
                s1 += (double complex)y[i + 1] * conj((double complex)x[i + 1]);
            }
            for (; i < e; i++) s0 += (double complex)y[i] * conj((double complex)x[i]);
        } else {
            for (; i + 1 < e; i += 2) {
                s0 += (double complex)y[i] * (double complex)x[i];
                s1 += (double complex)y[i + 1] * (double complex)x[i + 1];
            }
            for (; i < e; i++) s0 += (double complex)y[i] * (double complex)x[i];
        }
        part[c] = s0 + s1;
    }
    double complex s = 0;
    for (int c = 0; c < nc; c++) s += part[c];
    return s;
}
#endif

/* y = a·x + b·y, the scalars rounded to the dtype (a real instance takes their real parts);
 * a = b = 0 and b = 0 are decided on the unrounded scalars */
static void FN(hs_axpby)(int nc, int par, const int64_t *bd, double complex a, const ENTRY *x,
                         double complex b, ENTRY *y)
{
    ENTRY ca = TO_C(a), cb = TO_C(b);
    #pragma omp parallel for schedule(static) num_threads(hs_team(nc)) if (par)
    for (int c = 0; c < nc; c++) {
        if (a == 0 && b == 0)            /* y = 0 even where x holds garbage (NaN) */
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = 0;
        else if (b == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = MUL(ca, x[i]);
        else
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = MUL(ca, x[i]) + MUL(cb, y[i]);
    }
}

/* |r|² in double: a real entry is widened before the product, a complex one's |r|² is formed
 * in its precision (the sums of each kind of space as they have always been formed) */
static inline double FN(hs_abs2)(ENTRY r)
{
#if SLA_COMPLEX
    return (double)ABS2(r);
#else
    return (double)r * (double)r;
#endif
}

/* Re(r̄ d r) in double, the Jacobi-weighted |r|² of CG's rᵀ D⁻¹ r */
static inline double FN(hs_dabs2)(ENTRY d, ENTRY r)
{
#if SLA_COMPLEX
    return (double)RE(d) * (double)ABS2(r);
#else
    return (double)r * (double)(d * r);
#endif
}

/* x += α p; r −= α q (α real); rr = ‖r‖²; rz = Re(rᴴ diag(d) r) (d may be NULL: rz = rr) */
static void FN(hs_cg_update)(int nc, int par, const int64_t *bd, double alpha, const ENTRY *p,
                             const ENTRY *q, ENTRY *x, ENTRY *r, const ENTRY *d, double *rr,
                             double *rz)
{
    double prr[SLA_HOST_MAX_CHUNKS], prz[SLA_HOST_MAX_CHUNKS];
    REAL a = (REAL)alpha;
    #pragma omp parallel for schedule(static) num_threads(hs_team(nc)) if (par)
    for (int c = 0; c < nc; c++) {
        double s = 0, t = 0;
        if (d) {
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) {
                x[i] += a * p[i];
                ENTRY ri = r[i] - a * q[i];
                r[i] = ri;
                s += FN(hs_abs2)(ri);
                t += FN(hs_dabs2)(d[i], ri);
            }
        } else {
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) {
                x[i] += a * p[i];
                ENTRY ri = r[i] - a * q[i];
                r[i] = ri;
                s += FN(hs_abs2)(ri);
            }
            t = s;
        }
        prr[c] = s;
        prz[c] = t;
    }
    *rr = sla_ksum_parts(prr, nc);
    *rz = sla_ksum_parts(prz, nc);
}

/* p = diag(d) z + β p (β real; d may be NULL: p = z + β p). β = 0 (a first direction) writes p
 * without reading it: p may be uninitialised, and 0·NaN would poison it (on one rank only, for
 * a distributed vector). */
static void FN(hs_cg_direction)(int nc, int par, const int64_t *bd, double beta, const ENTRY *z,
                                const ENTRY *d, ENTRY *p)
{
    REAL be = (REAL)beta;
    #pragma omp parallel for schedule(static) num_threads(hs_team(nc)) if (par)
    for (int c = 0; c < nc; c++) {
        if (d && beta == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = MUL(d[i], z[i]);
        else if (d)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = MUL(d[i], z[i]) + be * p[i];
        else if (beta == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = z[i];
        else
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = z[i] + be * p[i];
    }
}
