/* Template (see core/instantiate.h; complex instances only): the kernels of a complex host
 * space (host_space.c) that the real ones on the 2n real parts cannot give: the complex dot xᴴy
 * or xᵀy, axpby with complex scalars, and CG's Jacobi-fused updates, whose diagonal scaling is
 * a complex product. Chunks and their order as in t_host_space.h (sums in double complex,
 * partials added in chunk order), so the results depend only on the partition. */
#if SLA_COMPLEX

static double complex FN(hz_dot)(int nc, int par, const int64_t *bd, int conj_x, const ENTRY *x,
                                 const ENTRY *y)
{
    double complex part[SLA_HOST_MAX_CHUNKS];
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
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

static void FN(hz_axpby)(int nc, int par, const int64_t *bd, double complex a, const ENTRY *x,
                         double complex b, ENTRY *y)
{
    ENTRY ca = TO_C(a), cb = TO_C(b);
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        if (a == 0 && b == 0)            /* y = 0 even where x holds garbage (NaN) */
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = 0;
        else if (b == 0)
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = MUL(ca, x[i]);
        else
            for (int64_t i = bd[c]; i < bd[c + 1]; i++) y[i] = MUL(ca, x[i]) + MUL(cb, y[i]);
    }
}

/* x += α p; r −= α q (α real); rr = ‖r‖²; rz = Re(rᴴ diag(d) r) = Σ Re(d_i)|r_i|² */
static void FN(hz_cg_update)(int nc, int par, const int64_t *bd, double alpha, const ENTRY *p,
                             const ENTRY *q, ENTRY *x, ENTRY *r, const ENTRY *d, double *rr,
                             double *rz)
{
    double prr[SLA_HOST_MAX_CHUNKS], prz[SLA_HOST_MAX_CHUNKS];
    REAL a = (REAL)alpha;
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++) {
        double s = 0, t = 0;
        for (int64_t i = bd[c]; i < bd[c + 1]; i++) {
            x[i] += a * p[i];
            ENTRY ri = r[i] - a * q[i];
            r[i] = ri;
            double m = (double)ABS2(ri);
            s += m;
            t += (double)RE(d[i]) * m;
        }
        prr[c] = s;
        prz[c] = t;
    }
    *rr = 0;
    *rz = 0;
    for (int c = 0; c < nc; c++) {
        *rr += prr[c];
        *rz += prz[c];
    }
}

/* p = diag(d) z + β p (β real) */
static void FN(hz_cg_direction)(int nc, int par, const int64_t *bd, double beta, const ENTRY *z,
                                const ENTRY *d, ENTRY *p)
{
    REAL be = (REAL)beta;
    #pragma omp parallel for schedule(static) num_threads(nc) if (par)
    for (int c = 0; c < nc; c++)
        for (int64_t i = bd[c]; i < bd[c + 1]; i++) p[i] = MUL(d[i], z[i]) + be * p[i];
}

#endif
