/* The block and basis sizes of the iterative eigensolvers: defaults fitted to n, and the
 * values a caller gives (options.block_size, options.ncv) used as given or refused, never
 * changed silently. The rules are those of include/sla/eig.h (sla_eigsh_options):
 *   LOBPCG   block m: default max(2k, k + 4), lowered to ⌊n/3⌋ when 3m > n (not below k);
 *            given: k ≤ m and 3m ≤ n (the basis [X | P | W] has 3m columns).
 *   Lanczos  block p: default 2, given ≥ 1; basis ncv: default max(2k + 2, 20), raised to
 *            k + p and lowered to n − p; given: k + p ≤ ncv ≤ n − p (the kept Ritz vectors and
 *            one new block must fit, and the basis plus a block must fit in n).
 *   ARPACK   one vector (block_size is not read); ncv: the Lanczos default, given: ARPACK's
 *            own k < ncv ≤ n.
 *   dense    reads neither. */
#include "eig/eig_internal.h"

void eig_default_sizes(int64_t n, int64_t k, eig_sizes *s)
{
    s->m = 2 * k > k + 4 ? 2 * k : k + 4;
    if (3 * s->m > n && 3 * k <= n) s->m = n / 3;
    s->p = 2;
    s->ncv = 2 * k + 2 > 20 ? 2 * k + 2 : 20;
    if (s->ncv < k + s->p) s->ncv = k + s->p;
    if (s->ncv + s->p > n) s->ncv = n - s->p;
}

int eig_sizes_fit(int64_t n, int64_t k, const eig_sizes *s, sla_eigsh_method m)
{
    if (m == SLA_EIGSH_LOBPCG) return 3 * s->m <= n && s->m >= k;
    return s->ncv >= k + s->p && s->ncv + s->p <= n && s->ncv > k;
}

sla_status eig_sizes_for(const sla_eigsh_options *o, int64_t n, int64_t k, sla_eigsh_method m,
                         eig_sizes *s)
{
    eig_default_sizes(n, k, s);
    if (m == SLA_EIGSH_LOBPCG && o->block_size > 0) {
        EIG_CHECK_ARG(o->block_size >= k, "options.block_size = %lld < k = %lld: LOBPCG's block "
                      "holds the k wanted vectors (≤ 0: the default max(2k, k + 4))",
                      (long long)o->block_size, (long long)k);
        EIG_CHECK_ARG(3 * o->block_size <= n, "options.block_size = %lld: LOBPCG needs "
                      "3·block_size ≤ n = %lld (its basis [X | P | W])", (long long)o->block_size,
                      (long long)n);
        s->m = o->block_size;
    }
    if (m == SLA_EIGSH_ARPACK && o->ncv > 0) {
        EIG_CHECK_ARG(o->ncv > k && o->ncv <= n, "options.ncv = %lld: ARPACK needs k < ncv ≤ n "
                      "(k = %lld, n = %lld)", (long long)o->ncv, (long long)k, (long long)n);
        s->ncv = o->ncv;
    }
    if (m != SLA_EIGSH_LANCZOS || (o->block_size <= 0 && o->ncv <= 0)) return SLA_OK;
    int64_t p = o->block_size > 0 ? o->block_size : 2;
    if (o->ncv <= 0) {
        /* the default basis, fitted to the block given */
        int64_t ncv = 2 * k + 2 > 20 ? 2 * k + 2 : 20;
        if (ncv < k + p) ncv = k + p;
        if (ncv + p > n) ncv = n - p;
        EIG_CHECK_ARG(k + p <= ncv, "options.block_size = %lld: Lanczos needs k + block_size ≤ "
                      "n − block_size (k = %lld, n = %lld)", (long long)p, (long long)k,
                      (long long)n);
        s->p = p;
        s->ncv = ncv;
        return SLA_OK;
    }
    EIG_CHECK_ARG(o->ncv >= k + p, "options.ncv = %lld < k + block = %lld: Lanczos keeps the k "
                  "wanted Ritz vectors and adds a block of %lld", (long long)o->ncv,
                  (long long)(k + p), (long long)p);
    EIG_CHECK_ARG(o->ncv + p <= n, "options.ncv = %lld > n − block = %lld: Lanczos needs the "
                  "basis and one more block within n = %lld", (long long)o->ncv,
                  (long long)(n - p), (long long)n);
    s->p = p;
    s->ncv = o->ncv;
    return SLA_OK;
}
