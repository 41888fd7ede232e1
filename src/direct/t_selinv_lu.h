/* Template (see core/instantiate.h): the numeric passes of selinv_lu.c. ENTRY is the type the
 * factors are held in: selinv_lu.c calls the double (f64) and double complex (c128) instances;
 * the float ones exist only because instantiate.h makes every instance, hence `unused`. The
 * recurrences are the same algebra in both (no conjugation: Z = M⁻¹, not M⁻ᴴ); gather
 * conjugates at the end. */

/* The backward recurrences of selinv_lu.h. At step j the block Z[Uj][Lj] is read entry by entry
 * from the rows m ∈ Lj of U* (entries Z[i][m], i > m) and the columns m ∈ Uj of L* (entries
 * Z[m][i], i > m); each entry Z[r][c] of the block adds Z[r][c]·L[c][j] to w[r] and
 * Û[j][r]·Z[r][c] to v[c], so that Z[r][j] = −w[r] (r ∈ Uj) and Z[j][c] = −v[c] (c ∈ Lj).
 * The scanned rows and columns also hold entries outside the block; instead of testing
 * membership, lcoef and ucoef are 0 outside Lj and Uj, so those entries add nothing to the
 * needed sums and only scribble on w and v at indices that are reset before their next use. */
static __attribute__((unused)) void FN(takahashi)(selinv *w)
{
    const ENTRY *d = w->f->d, *Lsx = w->Lsx, *Urx = w->Urx;
    const int64_t *Lsp = w->Lsp, *Lsi = w->Lsi.a, *Urp = w->Urp, *Urj = w->Urj;
    ENTRY *lcoef = w->lcoef, *ucoef = w->ucoef, *wacc = w->wacc, *vacc = w->vacc;
    ENTRY *Zup = w->Zup, *Zlo = w->Zlo, *Zd = w->Zd;
    for (int64_t i = 0; i < w->n; i++) lcoef[i] = ucoef[i] = 0;
    for (int64_t j = w->n - 1; j >= 0; j--) {
        for (int64_t p = Lsp[j]; p < Lsp[j + 1]; p++) { lcoef[Lsi[p]] = Lsx[p]; vacc[Lsi[p]] = 0; }
        for (int64_t q = Urp[j]; q < Urp[j + 1]; q++) {
            ucoef[Urj[q]] = Urx[q] / d[j];
            wacc[Urj[q]] = 0;
        }
        for (int64_t p = Lsp[j]; p < Lsp[j + 1]; p++) {        /* m ∈ Lj: Z[i][m], i ≥ m */
            int64_t m = Lsi[p];
            ENTRY lm = lcoef[m], vm = MUL(ucoef[m], Zd[m]);
            wacc[m] += MUL(Zd[m], lm);
            for (int64_t q = Urp[m]; q < Urp[m + 1]; q++) {
                int64_t i = Urj[q];
                ENTRY z = Zlo[q];
                wacc[i] += MUL(z, lm);
                vm += MUL(ucoef[i], z);
            }
            vacc[m] += vm;
        }
        for (int64_t q = Urp[j]; q < Urp[j + 1]; q++) {        /* m ∈ Uj: Z[m][i], i > m */
            int64_t m = Urj[q];
            ENTRY um = ucoef[m], wm = 0;
            for (int64_t p = Lsp[m]; p < Lsp[m + 1]; p++) {
                int64_t i = Lsi[p];
                ENTRY z = Zup[p];
                wm += MUL(z, lcoef[i]);
                vacc[i] += MUL(um, z);
            }
            wacc[m] += wm;
        }
        ENTRY zjj = 1 / d[j];
        for (int64_t q = Urp[j]; q < Urp[j + 1]; q++) {
            Zlo[q] = -wacc[Urj[q]];
            zjj -= MUL(ucoef[Urj[q]], Zlo[q]);
            ucoef[Urj[q]] = 0;
        }
        for (int64_t p = Lsp[j]; p < Lsp[j + 1]; p++) { Zup[p] = -vacc[Lsi[p]]; lcoef[Lsi[p]] = 0; }
        Zd[j] = zjj;
    }
}

/* out[t] = alpha·conj((A⁻¹)[c][r]) = alpha·conj(Z[qinv[r]][pinv[c]])·s[c] for the slots
 * t = (r, c) of A: row r of A is column l = qinv[r] of M, whose Z entries live in column l of
 * L* and U*. out is of dtype: float64/float32 for the real instance, complex128/complex64 for
 * the complex one. */
static __attribute__((unused)) sla_status FN(gather)(selinv *w, const sla_pattern *A, double alpha,
                                                     sla_dtype dtype, void *out)
{
    const int64_t *rp = sla_pattern_rowptr(A);
    const int32_t *ci = sla_pattern_colind(A);
    const double *s = w->f->s;
    const ENTRY *Zup = w->Zup, *Zlo = w->Zlo, *Zd = w->Zd;
    for (int64_t i = 0; i < w->n; i++) w->mark[i] = -1;
    for (int64_t r = 0; r < w->n; r++) {
        int64_t l = w->qinv[r];
        for (int64_t p = w->Lsp[l]; p < w->Lsp[l + 1]; p++) {        /* Z[l][k], k > l */
            w->mark[w->Lsi.a[p]] = l; w->pos[w->Lsi.a[p]] = p;
        }
        for (int64_t p = w->Usp[l]; p < w->Usp[l + 1]; p++) {        /* Z[l][k], k < l */
            w->mark[w->Usi.a[p]] = l; w->pos[w->Usi.a[p]] = p;
        }
        for (int64_t t = rp[r]; t < rp[r + 1]; t++) {
            int64_t c = ci[t], k = w->pinv[c];
            ENTRY z = 0;
            if (w->blk[k] != w->blk[l]) z = 0;                      /* inverse of a BTF form */
            else if (k == l) z = Zd[l];
            else if (w->mark[k] != l) return SLA_EINTERNAL;        /* the closure seeded it */
            else z = k > l ? Zup[w->pos[k]] : Zlo[w->Ucsr[w->pos[k]]];
            z = CONJ(z) * (REAL)(alpha * (s ? s[c] : 1.0));
#if SLA_COMPLEX
            if (dtype == SLA_COMPLEX128) ((double complex *)out)[t] = (double complex)z;
            else ((float complex *)out)[t] = (float complex)z;
#else
            if (dtype == SLA_FLOAT64) ((double *)out)[t] = (double)z;
            else ((float *)out)[t] = (float)z;
#endif
        }
    }
    return SLA_OK;
}
