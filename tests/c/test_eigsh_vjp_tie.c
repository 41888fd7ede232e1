/* Eigenvector VJPs at a multiplet split by k: an eigenvalue of the block tied with one outside
 * it (6 × 6 grid Laplacian, λ_2 = λ_3, k = 2). Every method and end, standard and generalized,
 * batches and float32: a loss that depends on the uncomputed partner is SLA_EINVAL, eigenvalue
 * losses and cotangents orthogonal to the partners are fine (closed forms), and a near-tie of
 * relative gap 1e-6 keeps finite-difference-exact gradients. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eig_alloc_fail.h"
#include "testutil.h"

#define PI 3.14159265358979323846
#define PARTNER "whose partner is not among"

static void *xmalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    assert_non_null(p);
    return p;
}

static int have_method(sla_method m)
{
    for (int64_t i = 0; i < sla_backend_count(); i++) {
        sla_backend_info bi;
        if (sla_backend_get(i, &bi) == SLA_OK && bi.available && (bi.methods & (1u << m))) return 1;
    }
    return 0;
}

/* The eigenvector VJP and shift-invert Lanczos need Cholesky and LDLᵀ (or LU). */
#define NEED_DIRECT() do { if (!have_method(SLA_METHOD_CHOLESKY) || \
    (!have_method(SLA_METHOD_LDLT) && !have_method(SLA_METHOD_LU))) skip(); } while (0)

static const sla_eigsh_method methods[] = {SLA_EIGSH_DENSE, SLA_EIGSH_LOBPCG, SLA_EIGSH_LANCZOS,
                                           SLA_EIGSH_ARPACK};
#define NMETHODS (SLA_HAVE_ARPACK ? 4 : 3)

/* 5-point Laplacian of an m × m grid with couplings −(1 + ex) along x and −1 along y (node
 * i·m + j, x index i): λ_ij = (1 + ex)(2 − 2cos(iπ/(m+1))) + 2 − 2cos(jπ/(m+1)). ex = 0 ties
 * (i, j) with (j, i); ex > 0 splits (1, 2) below (2, 1) by 2ex(cos(π/7) − cos(2π/7)) at m = 6. */
static void grid(int64_t m, double ex, sla_pattern **p, double **values)
{
    int64_t n = m * m, q = 0;
    int64_t *r = xmalloc(sizeof(int64_t) * 5 * n), *c = xmalloc(sizeof(int64_t) * 5 * n);
    double *v = xmalloc(sizeof(double) * 5 * n);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) {
            int64_t s = i * m + j;
            r[q] = s; c[q] = s; v[q++] = 2 * (1 + ex) + 2;
            if (i > 0) { r[q] = s; c[q] = s - m; v[q++] = -(1 + ex); }
            if (i < m - 1) { r[q] = s; c[q] = s + m; v[q++] = -(1 + ex); }
            if (j > 0) { r[q] = s; c[q] = s - 1; v[q++] = -1; }
            if (j < m - 1) { r[q] = s; c[q] = s + 1; v[q++] = -1; }
        }
    TU_OK(sla_pattern_from_coo(n, n, q, r, c, p));
    *values = xmalloc(sizeof(double) * q);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(r); free(c); free(v);
}

/* ex of the relative gap rel = (λ_21 − λ_12)/‖A‖₁ at m = 6 (‖A‖₁ ≈ 8). */
static double ex_of_gap(double rel)
{
    return rel * 8.0 / (2 * (cos(PI / 7) - cos(2 * PI / 7)));
}

/* A diagonal mass matrix invariant under the symmetries of the square, 1 + r²/2 (r the distance
 * to the centre in units of the half-width): the pencil keeps the grid's ties. */
static void mass(int64_t m, sla_pattern **p, double **values)
{
    int64_t n = m * m;
    int64_t *r = xmalloc(sizeof(int64_t) * n);
    double *v = xmalloc(sizeof(double) * n), h = 0.5 * (double)(m - 1);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) {
            r[i * m + j] = i * m + j;
            v[i * m + j] = 1 + 0.5 * ((i - h) * (i - h) + (j - h) * (j - h)) / (h * h);
        }
    TU_OK(sla_pattern_from_coo(n, n, n, r, r, p));
    *values = v;
    free(r);
}

static void forward(const sla_matrix *A, const sla_matrix *M, int64_t k, sla_eigsh_method method,
                    sla_eigsh_which which, void *lam, void *V)
{
    sla_eigsh_options o;
    sla_eigsh_options_init(&o);
    o.method = method;
    o.which = which;
    o.M = M;
    o.tol = 1e-12;
    TU_OK(sla_eigsh(A, k, &o, lam, V, NULL));
}

static sla_status vjp(const sla_matrix *A, const sla_matrix *M, int64_t k, const void *lam,
                      const void *V, const void *gl, const void *G, void *dA, void *dM)
{
    sla_clear_error();      /* a message in a failure report is this call's, not a stale one */
    if (M) return sla_eigsh_generalized_vjp(A, M, k, lam, V, gl, G, dA, dM);
    return sla_eigsh_vjp(A, k, lam, V, gl, G, dA);
}

/* The column of the k = 2 block of `which` whose eigenvalue is tied with the next one outside
 * it (from a dense k = 3 solve): SA/SM the second, LA/LM the first (ascending order). */
static int64_t tied_column(const sla_matrix *A, const sla_matrix *M, sla_eigsh_which which)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double lam[3], *V = xmalloc(sizeof(double) * n * 3);
    forward(A, M, 3, SLA_EIGSH_DENSE, which, lam, V);
    free(V);
    int low = which == SLA_EIGSH_SA || which == SLA_EIGSH_SM;
    double d = low ? lam[2] - lam[1] : lam[1] - lam[0];
    if (!(fabs(d) <= 1e-12 * fabs(lam[1]))) fail_msg("no tie split by k = 2 (gap %g)", d);
    return low ? 1 : 0;
}

/* A random cotangent in column `col` of [n][k] (the rest zero). */
static void column_cotangent(int64_t n, int64_t k, int64_t col, uint64_t seed, double *G)
{
    memset(G, 0, sizeof(double) * n * k);
    uint64_t s = seed;
    for (int64_t q = 0; q < n; q++) G[q * k + col] = tu_rand(&s);
}

static void expect_partner_error(sla_status st, const char *what)
{
    /* the callers clear the message first: a missed tie shows an empty one */
    if (st != SLA_EINVAL || !strstr(sla_last_error(), PARTNER))
        fail_msg("%s: status %d, message '%s'", what, (int)st, sla_last_error());
    assert_non_null(strstr(sla_last_error(), "repeated eigenvalue"));
}

/* Every method and end, with and without M: the tied column's cotangent is refused, eigenvalue
 * cotangents and the simple column's cotangent (the same gradient from every method) are not. */
static void split_multiplet(void **state)
{
    NEED_DIRECT();
    int64_t m = 6, n = m * m, k = 2;
    sla_pattern *p, *pm; double *v, *mv;
    grid(m, 0.0, &p, &v);
    mass(m, &pm, &mv);
    int64_t nnz = sla_pattern_nnz(p);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v), Mm = sla_matrix_view(pm, SLA_FLOAT64, 1, mv);
    const sla_eigsh_which ws[] = {SLA_EIGSH_SA, SLA_EIGSH_LA, SLA_EIGSH_LM, SLA_EIGSH_SM};
    double lam[2], gl[2] = {1.0, -2.0}, *V = xmalloc(sizeof(double) * n * k);
    double *G = xmalloc(sizeof(double) * n * k), *dA = xmalloc(sizeof(double) * nnz);
    double *dM = xmalloc(sizeof(double) * n), *ref = xmalloc(sizeof(double) * nnz);
    double *vref = xmalloc(sizeof(double) * n);
    for (int gen = 0; gen < 2; gen++) {
        const sla_matrix *M = gen ? &Mm : NULL;
        for (int w = 0; w < 4; w++) {
            /* the pencil's SM/LM are SA/LA here (A and M SPD) */
            if (gen && (ws[w] == SLA_EIGSH_LM || ws[w] == SLA_EIGSH_SM)) continue;
            int64_t tied = tied_column(&A, M, ws[w]), simple = 1 - tied;
            for (int q = 0; q < NMETHODS; q++) {
                char what[96];
                snprintf(what, sizeof what, "%s %s %s", gen ? "A v = λ M v" : "A v = λ v",
                         sla_eigsh_method_name(methods[q]), sla_eigsh_which_name(ws[w]));
                forward(&A, M, k, methods[q], ws[w], lam, V);
                column_cotangent(n, k, tied, 7 + q, G);
                expect_partner_error(vjp(&A, M, k, lam, V, NULL, G, dA, dM), what);
                char idx[32];
                snprintf(idx, sizeof idx, "λ_%lld = ", (long long)tied);
                assert_non_null(strstr(sla_last_error(), idx));
                /* with an eigenvalue cotangent too: still refused */
                expect_partner_error(vjp(&A, M, k, lam, V, gl, G, dA, dM), what);
                /* eigenvalues alone: Hellmann–Feynman, v_i[r] v_i[c] summed with gλ */
                TU_OK(vjp(&A, M, k, lam, V, gl, NULL, dA, dM));
                const int64_t *ri = sla_pattern_rowind(p);
                const int32_t *ci = sla_pattern_colind(p);
                for (int64_t s = 0; s < nnz; s++) {
                    double e = gl[0] * V[ri[s] * k] * V[ci[s] * k] +
                               gl[1] * V[ri[s] * k + 1] * V[ci[s] * k + 1];
                    TU_CLOSE(dA[s], e, 1e-12);
                }
                /* the simple column: defined, and the same from every method (it does not
                 * depend on the basis the method chose for the tied pair) */
                column_cotangent(n, k, simple, 8, G);
                TU_OK(vjp(&A, M, k, lam, V, NULL, G, dA, dM));
                /* the vector's sign may differ between methods (components of equal magnitude),
                 * and the gradient of a loss linear in it with it */
                double sgn = 0;
                for (int64_t r = 0; r < n; r++) sgn += V[r * k + simple] * vref[r];
                if (q == 0) {
                    memcpy(ref, dA, sizeof(double) * nnz);
                    for (int64_t r = 0; r < n; r++) vref[r] = V[r * k + simple];
                    sgn = 1;
                }
                sgn = sgn < 0 ? -1 : 1;
                double dmax = 0, gmax = 0;
                for (int64_t s = 0; s < nnz; s++) {
                    gmax = fmax(gmax, fabs(ref[s]));
                    dmax = fmax(dmax, fabs(sgn * dA[s] - ref[s]));
                }
                if (!(dmax <= 1e-6 * gmax)) fail_msg("%s: simple column differs by %g (max %g)",
                                                     what, dmax, gmax);
            }
        }
    }
    free(v); free(mv); free(V); free(G); free(dA); free(dM); free(ref); free(vref);
    sla_pattern_free(&p);
    sla_pattern_free(&pm);
}

/* A batch of three (split, tied, split): the error names batch element 1; a batch of split
 * elements gives each element's own gradient. float32 ties are found as well. */
static void batches_and_float32(void **state)
{
    NEED_DIRECT();
    int64_t m = 6, n = m * m, k = 2, B = 3;
    sla_pattern *p, *p2; double *v0, *v1;
    grid(m, 0.0, &p, &v0);
    grid(m, ex_of_gap(1e-4), &p2, &v1);
    int64_t nnz = sla_pattern_nnz(p);
    double *vb = xmalloc(sizeof(double) * B * nnz);
    memcpy(vb, v1, sizeof(double) * nnz);
    memcpy(vb + nnz, v0, sizeof(double) * nnz);
    for (int64_t s = 0; s < nnz; s++) vb[2 * nnz + s] = 2.0 * v1[s];
    double lam[6], *V = xmalloc(sizeof(double) * B * n * k), *G = xmalloc(sizeof(double) * B * n * k);
    double *dA = xmalloc(sizeof(double) * B * nnz), *d1 = xmalloc(sizeof(double) * nnz);
    for (int64_t b = 0; b < B; b++) column_cotangent(n, k, 1, 20 + b, G + b * n * k);
    for (int q = 0; q < NMETHODS; q++) {
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, B, vb);
        forward(&A, NULL, k, methods[q], SLA_EIGSH_SA, lam, V);
        expect_partner_error(vjp(&A, NULL, k, lam, V, NULL, G, dA, NULL), "batch");
        assert_non_null(strstr(sla_last_error(), "(batch 1)"));
        /* elements 0 and 2 alone, as a batch of two, against each one's own VJP */
        sla_matrix A2 = sla_matrix_view(p, SLA_FLOAT64, 2, vb);
        memcpy(vb + nnz, vb + 2 * nnz, sizeof(double) * nnz);
        forward(&A2, NULL, k, methods[q], SLA_EIGSH_SA, lam, V);
        TU_OK(sla_eigsh_vjp(&A2, k, lam, V, NULL, G, dA));
        for (int64_t b = 0; b < 2; b++) {
            sla_matrix Ab = sla_matrix_view(p, SLA_FLOAT64, 1, vb + b * nnz);
            TU_OK(sla_eigsh_vjp(&Ab, k, lam + b * k, V + b * n * k, NULL, G + b * n * k, d1));
            double dmax = 0, gmax = 0;
            for (int64_t s = 0; s < nnz; s++) {
                dmax = fmax(dmax, fabs(dA[b * nnz + s] - d1[s]));
                gmax = fmax(gmax, fabs(d1[s]));
            }
            if (!(dmax <= 1e-9 * gmax)) fail_msg("%s element %lld: batched VJP differs by %g (max %g)",
                                                 sla_eigsh_method_name(methods[q]), (long long)b, dmax, gmax);
        }
        memcpy(vb + nnz, v0, sizeof(double) * nnz);
    }
    /* float32: eigenpairs rounded to 1e-7 still show the tie (bound 1e-5·‖A‖₁) */
    float *vf = xmalloc(sizeof(float) * nnz), lf[2], *Vf = xmalloc(sizeof(float) * n * k);
    float *Gf = xmalloc(sizeof(float) * n * k), *df = xmalloc(sizeof(float) * nnz), glf[2] = {1, 1};
    for (int64_t s = 0; s < nnz; s++) vf[s] = (float)v0[s];
    for (int64_t q = 0; q < n * k; q++) Gf[q] = (float)G[q];
    sla_matrix Af = sla_matrix_view(p, SLA_FLOAT32, 1, vf);
    for (int q = 0; q < NMETHODS; q++) {
        forward(&Af, NULL, k, methods[q], SLA_EIGSH_SA, lf, Vf);
        expect_partner_error(vjp(&Af, NULL, k, lf, Vf, NULL, Gf, df, NULL), "float32");
        TU_OK(sla_eigsh_vjp(&Af, k, lf, Vf, glf, NULL, df));
    }
    free(v0); free(v1); free(vb); free(V); free(G); free(dA); free(d1);
    free(vf); free(Vf); free(Gf); free(df);
    sla_pattern_free(&p);
    sla_pattern_free(&p2);
}

/* A = Q diag(1, 1, 1, 2, 3, ...) Qᵀ dense (Q orthogonal, Householder), k = 1 (SA): λ = 1 has two
 * partners outside the block. A cotangent along the eigenvector q_3 of λ = 2 is orthogonal to
 * them: w = q_3/(2 − 1) and dA[r][c] = −q_3[r]·v[c] exactly (the solve's error along the
 * partners removed). A cotangent with a component along the eigenspace is refused; so is
 * anything when more than 8 partners are outside. */
static void dense_rotated(int64_t n, int64_t mult, sla_pattern **p, double **values, double *Q)
{
    uint64_t seed = 3;
    double *u = xmalloc(sizeof(double) * n), nu = 0;
    for (int64_t i = 0; i < n; i++) { u[i] = tu_rand(&seed); nu += u[i] * u[i]; }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) Q[i * n + j] = (i == j) - 2 * u[i] * u[j] / nu;
    int64_t *r = xmalloc(sizeof(int64_t) * n * n), *c = xmalloc(sizeof(int64_t) * n * n);
    double *v = xmalloc(sizeof(double) * n * n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double a = 0;
            for (int64_t l = 0; l < n; l++) {
                double d = l < mult ? 1.0 : (double)(l - mult + 2);
                a += Q[i * n + l] * d * Q[j * n + l];
            }
            r[i * n + j] = i; c[i * n + j] = j; v[i * n + j] = a;
        }
    TU_OK(sla_pattern_from_coo(n, n, n * n, r, c, p));
    *values = xmalloc(sizeof(double) * n * n);
    TU_OK(sla_values_gather(*p, SLA_FLOAT64, 1, v, *values));
    free(u); free(r); free(c); free(v);
}

typedef struct tie_alloc {
    const sla_matrix *A;
    const double *lam, *V, *G;
    double *dA;
} tie_alloc;

static sla_status tie_vjp(void *ctx)
{
    tie_alloc *c = ctx;
    return sla_eigsh_vjp(c->A, 1, c->lam, c->V, NULL, c->G, c->dA);
}

static void orthogonal_cotangents(void **state)
{
    NEED_DIRECT();
    int64_t n = 12, k = 1;
    double *Q = xmalloc(sizeof(double) * n * n), lam, *V = xmalloc(sizeof(double) * n);
    double *G = xmalloc(sizeof(double) * n), *dA = xmalloc(sizeof(double) * n * n);
    sla_pattern *p; double *v;
    dense_rotated(n, 3, &p, &v, Q);
    sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int q = 0; q < NMETHODS; q++) {
        forward(&A, NULL, k, methods[q], SLA_EIGSH_SA, &lam, V);
        TU_CLOSE(lam, 1.0, 1e-10);
        for (int64_t i = 0; i < n; i++) G[i] = Q[i * n + 3];           /* q_3: λ = 2 */
        TU_OK(sla_eigsh_vjp(&A, k, &lam, V, NULL, G, dA));
        double err = 0;
        for (int64_t s = 0; s < n * n; s++) err = fmax(err, fabs(dA[s] + G[ri[s]] * V[ci[s]]));
        if (!(err <= 1e-8)) fail_msg("%s: |dA − closed form| = %g", sla_eigsh_method_name(methods[q]), err);
        /* every allocation failing in turn (the partners' blocks included): SLA_ENOMEM */
        if (q == 0) {
            tie_alloc c = {&A, &lam, V, G, dA};
            eig_every_allocation_fails("partners", tie_vjp, &c);
        }
        /* plus a little of the eigenspace of λ = 1 (q_0): the loss depends on the basis */
        for (int64_t i = 0; i < n; i++) G[i] += 1e-3 * Q[i * n];
        expect_partner_error(vjp(&A, NULL, k, &lam, V, NULL, G, dA, NULL), "rotated");
    }
    free(v);
    sla_pattern_free(&p);
    /* λ = 1 ten times, k = 1: nine partners, more than are checked one by one */
    n = 14;
    double *Q2 = xmalloc(sizeof(double) * n * n), *V2 = xmalloc(sizeof(double) * n);
    double *G2 = xmalloc(sizeof(double) * n), *dA2 = xmalloc(sizeof(double) * n * n);
    dense_rotated(n, 10, &p, &v, Q2);
    A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
    forward(&A, NULL, k, SLA_EIGSH_DENSE, SLA_EIGSH_SA, &lam, V2);
    for (int64_t i = 0; i < n; i++) G2[i] = Q2[i * n + 11];
    assert_int_equal(sla_eigsh_vjp(&A, k, &lam, V2, NULL, G2, dA2), SLA_EINVAL);
    assert_non_null(strstr(sla_last_error(), "more than 8 of its partners"));
    free(v); free(Q); free(V); free(G); free(dA); free(Q2); free(V2); free(G2); free(dA2);
    sla_pattern_free(&p);
}

/* The tied grid plus t·diag(d), d pseudo-random in [0, 1), t chosen so that the pair λ_2 < λ_3
 * (SA, ascending from 1) splits by rel × the VJP's scale (‖A‖₁; with M, λ_2): the split is linear
 * in t to first order, so one rescaling from a trial t lands within a few per cent. Generic
 * eigenvectors (no components of equal magnitude that would make the sign convention jump). */
static void near_grid(int64_t m, double rel, const sla_matrix *M, sla_pattern **p, double **values)
{
    int64_t n = m * m;
    grid(m, 0.0, p, values);
    int64_t nnz = sla_pattern_nnz(*p);
    const int64_t *ri = sla_pattern_rowind(*p);
    const int32_t *ci = sla_pattern_colind(*p);
    double *base = xmalloc(sizeof(double) * nnz), *d = xmalloc(sizeof(double) * nnz);
    memcpy(base, *values, sizeof(double) * nnz);
    uint64_t seed = 77;
    for (int64_t s = 0; s < nnz; s++) d[s] = ri[s] == ci[s] ? 0.5 * (tu_rand(&seed) + 1) : 0.0;
    sla_matrix A = sla_matrix_view(*p, SLA_FLOAT64, 1, *values);
    double lam[3], *V = xmalloc(sizeof(double) * n * 3), t = 1e-4, rgap = 0;
    for (int pass = 0; pass < 3; pass++) {
        for (int64_t s = 0; s < nnz; s++) (*values)[s] = base[s] + t * d[s];
        forward(&A, M, 3, SLA_EIGSH_DENSE, SLA_EIGSH_SA, lam, V);
        double scale;
        TU_OK(sla_matrix_norm(&A, '1', &scale));
        if (M) scale = lam[1];
        rgap = (lam[2] - lam[1]) / scale;
        t *= rel / rgap;
    }
    if (!(fabs(rgap / rel - 1) < 0.05)) fail_msg("relative gap %g, wanted %g", rgap, rel);
    free(base); free(d); free(V);
}

/* Σ_q wts[q]·v_1[q] + Σ_q wts[n + q]·v_0[q], the loss of the near-tie checks (v from dense). */
static double near_loss(const sla_matrix *A, const sla_matrix *M, const double *wts)
{
    int64_t n = sla_pattern_nrows(A->pattern);
    double lam[2], *V = xmalloc(sizeof(double) * n * 2), L = 0;
    forward(A, M, 2, SLA_EIGSH_DENSE, SLA_EIGSH_SA, lam, V);
    for (int64_t q = 0; q < n; q++) L += wts[q] * V[q * 2 + 1] + wts[n + q] * V[q * 2];
    free(V);
    return L;
}

/* Five-point central difference of near_loss along a direction of A's values (dirA) or of M's (dirM). */
static double near_fd(sla_matrix *A, sla_matrix *M, const double *wts, const double *dir, int ofM,
                      double h)
{
    sla_matrix *X = ofM ? M : A;
    int64_t cnt = sla_pattern_nnz(X->pattern);
    double *x = (double *)X->values, *save = xmalloc(sizeof(double) * cnt);
    memcpy(save, x, sizeof(double) * cnt);
    double L[4];
    static const double at[4] = {2, 1, -1, -2};
    for (int j = 0; j < 4; j++) {
        for (int64_t s = 0; s < cnt; s++) x[s] = save[s] + at[j] * h * dir[s];
        L[j] = near_loss(A, M, wts);
    }
    memcpy(x, save, sizeof(double) * cnt);
    free(save);
    return (-L[0] + 8 * L[1] - 8 * L[2] + L[3]) / (12 * h);     /* fourth order */
}

/* A random direction on pattern p, symmetric (entries (r, c) and (c, r) equal). */
static void sym_direction(const sla_pattern *p, uint64_t seed, double *dir)
{
    int64_t nnz = sla_pattern_nnz(p);
    const int64_t *ri = sla_pattern_rowind(p);
    const int32_t *ci = sla_pattern_colind(p);
    for (int64_t s = 0; s < nnz; s++) {
        int64_t lo = ri[s] < ci[s] ? ri[s] : ci[s], hi = ri[s] + ci[s] - lo;
        uint64_t t = seed + (uint64_t)(lo * 7919 + hi);
        dir[s] = tu_rand(&t);
    }
}

/* Relative gap 1e-6 (λ_3 − λ_2 = 1e-6·‖A‖₁, with M 1e-6·λ_2): no partner; every method's VJP
 * matches five-point central differences (h = 1e-8: truncation (h/gap)⁴ ~ 1e-8; measured
 * 4e-8..7e-7 relative; the two-point quotient at h = 1e-9 was 1.3e-5 off, at the tolerance), for
 * A and, with M, for M. Relative gap 1e-10: below the bound, refused. */
static void near_tie(void **state)
{
    NEED_DIRECT();
    int64_t m = 6, n = m * m, k = 2;
    sla_pattern *pm; double *mv;
    mass(m, &pm, &mv);
    sla_matrix Mm = sla_matrix_view(pm, SLA_FLOAT64, 1, mv);
    double *wts = xmalloc(sizeof(double) * 2 * n), *G = xmalloc(sizeof(double) * n * k);
    double *dM = xmalloc(sizeof(double) * n), *dirM = xmalloc(sizeof(double) * n);
    double lam[2], *V = xmalloc(sizeof(double) * n * k);
    tu_fill_random(wts, 2 * n, 41);
    for (int64_t q = 0; q < n; q++) { G[q * k + 1] = wts[q]; G[q * k] = wts[n + q]; }
    tu_fill_random(dirM, n, 44);
    for (int gen = 0; gen < 2; gen++) {
        sla_matrix *M = gen ? &Mm : NULL;
        sla_pattern *p; double *v;
        near_grid(m, 1e-6, M, &p, &v);
        int64_t nnz = sla_pattern_nnz(p);
        sla_matrix A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        double *dirA = xmalloc(sizeof(double) * nnz), *dA = xmalloc(sizeof(double) * nnz);
        sym_direction(p, 43, dirA);
        double fdA = near_fd(&A, M, wts, dirA, 0, 1e-8);
        double fdM = gen ? near_fd(&A, M, wts, dirM, 1, 1e-8) : 0;
        for (int q = 0; q < NMETHODS; q++) {
            forward(&A, M, k, methods[q], SLA_EIGSH_SA, lam, V);
            TU_OK(vjp(&A, M, k, lam, V, NULL, G, dA, dM));
            double anA = 0, anM = 0;
            for (int64_t s = 0; s < nnz; s++) anA += dA[s] * dirA[s];
            for (int64_t s = 0; gen && s < n; s++) anM += dM[s] * dirM[s];
            if (!(fabs(anA - fdA) <= 1e-5 * fabs(fdA)) || !(fabs(anM - fdM) <= 1e-5 * fabs(fdM)))
                fail_msg("%s%s: VJP (%.10g, %.10g), finite differences (%.10g, %.10g)",
                         sla_eigsh_method_name(methods[q]), gen ? " with M" : "", anA, anM, fdA, fdM);
        }
        free(v); free(dirA); free(dA);
        sla_pattern_free(&p);
        /* relative gap 1e-10: the partner is found (its residual ≈ the gap, below 1e-8) */
        near_grid(m, 1e-10, M, &p, &v);
        A = sla_matrix_view(p, SLA_FLOAT64, 1, v);
        dA = xmalloc(sizeof(double) * nnz);
        for (int q = 0; q < NMETHODS; q++) {
            forward(&A, M, k, methods[q], SLA_EIGSH_SA, lam, V);
            expect_partner_error(vjp(&A, M, k, lam, V, NULL, G, dA, dM), "gap 1e-10");
        }
        free(v); free(dA);
        sla_pattern_free(&p);
    }
    free(mv); free(wts); free(G); free(dirM); free(dM); free(V);
    sla_pattern_free(&pm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_multiplet),
        cmocka_unit_test(batches_and_float32),
        cmocka_unit_test(orthogonal_cotangents),
        cmocka_unit_test(near_tie),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
