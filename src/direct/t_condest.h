/* Template (see core/instantiate.h): the row-equilibrated 1-norm and Higham's estimator of
 * condest.c. row_scaled_norm1 runs on the values of every dtype; the estimator runs on the
 * backends' double-precision solves, so condest.c calls its f64 and c128 instances only (the
 * float ones are made by instantiate.h and unused). */

/* ‖RA‖₁ = max_j Σ_i w_i |a_ij| with w_i = 1 / max_j |a_ij| (w [n]) for one matrix a of the CSR
 * pattern p; colsum [n] is workspace. 0 if some row has no nonzero value (A is singular). */
static double FN(row_scaled_norm1)(const sla_pattern *p, const ENTRY *a, double *w, double *colsum)
{
    int64_t n = sla_pattern_nrows(p);
    const int64_t *rp = sla_pattern_rowptr(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t j = 0; j < n; j++) colsum[j] = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = 0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            double t = (double)ABS(a[k]);
            m = t > m ? t : m;                   /* not fmax: a library call per entry */
        }
        if (!(m > 0)) return 0;
        w[i] = 1 / m;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) colsum[ci[k]] += (double)ABS(a[k]) * w[i];
    }
    double norm = 0;
    for (int64_t j = 0; j < n; j++) norm = colsum[j] > norm ? colsum[j] : norm;
    return norm;
}

/* y = (RA)⁻¹ y = A⁻¹ (R⁻¹ y) (trans = 0) or (RA)⁻ᴴ y = R⁻¹ (A⁻ᴴ y) (trans = 1; op T for a real
 * ENTRY, C for a complex one), in place, for the k columns of the column-major n × k block y */
static __attribute__((unused)) sla_status FN(apply)(const scaled_op *o, int trans, int64_t k,
                                                    ENTRY *y)
{
    int64_t n = o->s->n;
    if (!trans)
        for (int64_t j = 0; j < k; j++)
            for (int64_t i = 0; i < n; i++) y[j * n + i] /= (REAL)o->w[i];
    sla_op op = trans ? (SLA_COMPLEX ? SLA_OP_C : SLA_OP_T) : SLA_OP_N;
    SLA_TRY(o->fn(o->ctx, o->b, op, k, (double *)y));
    if (trans)
        for (int64_t i = 0; i < n; i++) y[i] /= (REAL)o->w[i];      /* k = 1 */
    return SLA_OK;
}

/* The estimator's first call: the k start columns of y as apply(o, 0, k, y) and, when kx > 0,
 * the caller's kx columns x (n × kx, unscaled: x = A⁻¹ x) in the same call of o->fn, so that a
 * backend whose solve reads its factors once per call (MUMPS) solves the caller's right-hand
 * sides for free (sla_direct_rcond_first). */
static __attribute__((unused)) sla_status FN(apply_first)(const scaled_op *o, int64_t k, ENTRY *y,
                                                          int64_t kx, ENTRY *x)
{
    if (kx == 0) return FN(apply)(o, 0, k, y);
    int64_t n = o->s->n;
    ENTRY *blk = sla_malloc((size_t)(k + kx), (size_t)n * sizeof *blk, "condition estimate");
    if (!blk) return SLA_ENOMEM;
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = 0; i < n; i++) blk[j * n + i] = y[j * n + i] / (REAL)o->w[i];
    memcpy(blk + k * n, x, (size_t)(kx * n) * sizeof *blk);
    sla_status st = o->fn(o->ctx, o->b, SLA_OP_N, k + kx, (double *)blk);
    if (st == SLA_OK) {
        memcpy(y, blk, (size_t)(k * n) * sizeof *blk);
        memcpy(x, blk + k * n, (size_t)(kx * n) * sizeof *blk);
    }
    sla_free(blk);
    return st;
}

static __attribute__((unused)) double FN(norm1)(const ENTRY *y, int64_t n)
{
    double t = 0;
    for (int64_t i = 0; i < n; i++) t += (double)ABS(y[i]);
    return t;
}

/* index of max |y_i| (NaN counts as the largest; zlacn2's IZMAX1 for complex) */
static __attribute__((unused)) int64_t FN(argmax_abs)(const ENTRY *y, int64_t n)
{
    int64_t j = 0;
    for (int64_t i = 0; i < n; i++) {
        REAL a = ABS(y[i]);
        if (isnan(a) || a > ABS(y[j])) { j = i; if (isnan(a)) break; }
    }
    return j;
}

/* ξ = sign(y) into xi: ±1 (sign 0 = +1) for a real ENTRY, y_i/|y_i| (1 where y_i = 0) for a
 * complex one; returns 1 if it equals the previous sign vector (real only: zlacn2 has no such
 * test, a repeated complex sign vector is caught by the estimate not growing) */
static __attribute__((unused)) int FN(sign_repeats)(const ENTRY *y, ENTRY *xi, int64_t n)
{
    int same = !SLA_COMPLEX;
    for (int64_t i = 0; i < n; i++) {
#if SLA_COMPLEX
        REAL a = ABS(y[i]);
        xi[i] = a > 0 ? y[i] / a : (ENTRY)1;
#else
        ENTRY g = y[i] >= 0 ? 1 : -1;
        same &= g == xi[i];
        xi[i] = g;
#endif
    }
    return same;
}

/* est ≤ ‖(RA)⁻¹‖₁ by Higham's Algorithm 4.1 (dlacn2's steps, zlacn2's for complex), with its
 * closing test vector (alternating signs, against the estimator's known worst cases) solved
 * together with the first one: the same estimate in one solve call fewer (3 in the common
 * case: the first with two columns). A hint *j ≥ 0 (the column that gave the estimate of the
 * previous factorization, e.g. before a refactor) is solved in that first call too, as a third
 * start vector: when it still gives the largest column, the iteration confirms it with one
 * transposed solve (2 calls). *j receives the column of the estimate. y [3n], xi [n]; the
 * caller's kx columns x [n × kx] are solved in the first call (apply_first). */
static __attribute__((unused)) sla_status FN(estimate_inverse_norm)(const scaled_op *o, ENTRY *y,
                                                                    ENTRY *xi, double *est,
                                                                    int64_t *hint, int64_t kx,
                                                                    ENTRY *x)
{
    int64_t n = o->s->n, j0 = *hint >= 0 && *hint < n ? *hint : -1;
    int64_t k = n == 1 ? 1 : j0 >= 0 ? 3 : 2;
    if (j0 >= 0) memset(y + 2 * n, 0, (size_t)n * sizeof *y);
    for (int64_t i = 0; i < n; i++) {
        y[i] = (REAL)(1.0 / (double)n);
        y[n + i] = (REAL)((i % 2 ? -1.0 : 1.0) * (1.0 + (double)i / (double)(n > 1 ? n - 1 : 1)));
    }
    if (j0 >= 0) y[2 * n + j0] = 1;
    SLA_TRY(FN(apply_first)(o, k, y, kx, x));
    *est = FN(norm1)(y, n);
    *hint = 0;
    if (n == 1 || !isfinite(*est)) return SLA_OK;
    double alt = 2 * FN(norm1)(y + n, n) / (3.0 * (double)n);
    double at_hint = j0 >= 0 ? FN(norm1)(y + 2 * n, n) : 0;
    int64_t best = -1;                      /* the column of *est, once one is solved */
    if (j0 >= 0 && !(at_hint < *est)) {     /* the hint leads: iterate from e_j0 */
        *est = at_hint;
        best = j0;
        memcpy(y, y + 2 * n, (size_t)n * sizeof *y);
    }
    for (int64_t i = 0; i < n; i++) xi[i] = 0;
    FN(sign_repeats)(y, xi, n);
    memcpy(y, xi, (size_t)n * sizeof *y);
    SLA_TRY(FN(apply)(o, 1, 1, y));
    int64_t j = FN(argmax_abs)(y, n);
    for (int iter = 2; iter <= SLA_CONDEST_ITMAX && j != best; iter++) {
        memset(y, 0, (size_t)n * sizeof *y);
        y[j] = 1;
        SLA_TRY(FN(apply)(o, 0, 1, y));
        double old = *est, now = FN(norm1)(y, n);
        if (!isfinite(now)) { *est = now; return SLA_OK; }
        if (now > old) { *est = now; best = j; }
        if (FN(sign_repeats)(y, xi, n) || !(now > old * SLA_CONDEST_MIN_GROWTH))
            break;                          /* converged, or too little progress (internal.h) */
        memcpy(y, xi, (size_t)n * sizeof *y);
        SLA_TRY(FN(apply)(o, 1, 1, y));
        int64_t last = j;
        j = FN(argmax_abs)(y, n);
        if (isnan(ABS(y[j]))) { *est = NAN; return SLA_OK; }   /* as a NaN solve of e_j */
        if (!(ABS(y[j]) > ABS(y[last]) * SLA_CONDEST_MIN_GROWTH))
            break;                          /* e_last is a local maximum, to 1 % (internal.h) */
    }
    *hint = best >= 0 ? best : j;
    if (!(alt <= *est)) *est = alt;
    return SLA_OK;
}
