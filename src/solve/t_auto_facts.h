/* Template (see core/instantiate.h): the one pass over the values of method = auto
 * (auto_facts.c). */

/* |x − y| − rtol·max(|x|, |y|): the part of a pair's difference the relative tolerance does not
 * cover (comparisons, not fmax: fmax is a library call without -ffinite-math-only) */
static inline double FN(excess)(const REAL *a, int64_t nnz, int64_t batch, int64_t s, int64_t m,
                                double rtol)
{
    double worst = -INFINITY;
    for (int64_t b = 0; b < batch; b++) {
        double x = (double)a[b * nnz + s], y = m >= 0 ? (double)a[b * nnz + m] : 0;
        double ax = fabs(x), ay = fabs(y), e = fabs(x - y) - rtol * (ax > ay ? ax : ay);
        worst = e > worst ? e : worst;
    }
    return worst;
}

/* Rows in increasing order i. For the symmetry test, cursor[j] walks the upper part (columns
 * > j) of row j: the mirror of a lower entry (i, j) must be the next unvisited upper entry of
 * row j; upper entries stepped over (columns < i: their row passed without a mirror) or left at
 * the end have none and are compared with 0. Returns the largest excess over all pairs. */
static double FN(value_facts)(const sla_pattern *p, int64_t batch, const REAL *v, double rtol,
                              int64_t *cursor, sla_value_facts *f, unsigned char *strict)
{
    int64_t n = sla_pattern_nrows(p), nnz = sla_pattern_nnz(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    double amax = 0, worst = 0;
    int posdiag = 1, msign = 1, diagdom = 1;
    for (int64_t j = 0; j < n; j++) {
        int64_t s = rp[j];
        while (s < rp[j + 1] && ci[s] <= j) s++;
        cursor[j] = s;
    }
    for (int64_t i = 0; i < n; i++) {
        int all_strict = 1;
        int64_t k0 = rp[i], k1 = rp[i + 1], kd = k0;
        while (kd < k1 && ci[kd] < i) kd++;        /* sorted columns: the diagonal's slot */
        int have = kd < k1 && ci[kd] == i;
        for (int64_t b = 0; b < batch; b++) {
            const REAL *a = v + b * nnz;
            double off = 0, d = have ? (double)a[kd] : 0;
            amax = fabs(d) > amax ? fabs(d) : amax;
            for (int64_t k = k0; k < k1; k++) {
                if (k == kd && have) continue;
                double x = (double)a[k], ax = fabs(x);
                amax = ax > amax ? ax : amax;
                off += ax;
                msign &= !(x > 0);
            }
            if (!have || !(d > 0)) posdiag = 0;
            if (!(d >= off)) diagdom = 0;
            if (!(d > off)) all_strict = 0;
        }
        if (strict) strict[i] = (unsigned char)all_strict;
        for (int64_t s = k0; s < kd; s++) {
            int64_t j = ci[s];
            while (cursor[j] < rp[j + 1] && ci[cursor[j]] < i) {
                double e = FN(excess)(v, nnz, batch, cursor[j]++, -1, rtol);
                worst = e > worst ? e : worst;
            }
            int64_t m = cursor[j] < rp[j + 1] && ci[cursor[j]] == i ? cursor[j]++ : -1;
            double e = FN(excess)(v, nnz, batch, s, m, rtol);
            worst = e > worst ? e : worst;
        }
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t s = cursor[j]; s < rp[j + 1]; s++) {
            double e = FN(excess)(v, nnz, batch, s, -1, rtol);
            worst = e > worst ? e : worst;
        }
    f->amax = amax;
    f->posdiag = posdiag;
    f->msign = msign;
    f->diagdom = diagdom;
    return worst;
}
