/* method = auto when values change (sla_solver_refactor): the choice is kept only while the
 * facts it rests on hold (rule 9 of auto.c).
 *
 * Every rule records the facts of the values it used (symmetry, positive diagonal, the M-matrix
 * sign pattern, diagonal dominance, a strictly dominant row in every component) and, implicitly,
 * the definiteness evidence of the backend (a Cholesky that succeeds, an IC(0) that exists). At
 * a refactor the facts are measured again (one O(nnz) pass, sla_auto_value_facts, the pass auto
 * made at create; a graph sweep only if a row that proved rule 2's strict dominance lost it):
 *   - facts as recorded: the backend's numeric refactor (the fast path). If that fails for a
 *     reason the values explain (Cholesky not SPD, an incomplete factorization breaking down),
 *     auto decides again;
 *   - a fact changed (an SPD Stieltjes matrix that became unsymmetric, an unsymmetric one that
 *     became symmetric positive diagonal, ...): auto decides again from the new values, exactly
 *     as a create would (the symbolic analysis included), and says so in describe().
 * A decision that fails leaves a solver that refuses to solve (SLA_EINVAL naming why) until a
 * refactor succeeds. describe() keeps "<backend>; auto: <why>" in both cases (backends rewrite
 * their own part at refactor). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solve/auto.h"
#include "solve/backend.h"

/* descriptions are one line of bounded length: a long trace is cut on purpose */
#pragma GCC diagnostic ignored "-Wformat-truncation"

unsigned sla_auto_fact_bits(const sla_value_facts *f, int strict_everywhere)
{
    return (f->symmetric ? SLA_FACT_SYM : 0u) | (f->posdiag ? SLA_FACT_POSDIAG : 0u) |
           (f->msign ? SLA_FACT_MSIGN : 0u) | (f->diagdom ? SLA_FACT_DIAGDOM : 0u) |
           (strict_everywhere ? SLA_FACT_STRICT : 0u);
}

void sla_auto_cut_suffix(sla_solver *s)
{
    sla_auto_state *a = s->auto_state;
    if (a && a->suffix_at < sizeof s->description) s->description[a->suffix_at] = '\0';
}

void sla_auto_append_suffix(sla_solver *s)
{
    sla_auto_state *a = s->auto_state;
    a->suffix_at = strlen(s->description);
    sla_text_append(s->description, sizeof s->description, "; auto: ", s->why);
}

void sla_auto_free(sla_solver *s)
{
    sla_auto_state *a = s->auto_state;
    if (!a) return;
    sla_free(a->strict);
    sla_free(a->anorm);
    sla_free(a);
    s->auto_state = NULL;
}

/* The backend of a solver whose last decision failed: every call refuses, naming why. */
static sla_status refuse(const sla_solver *s, const char *func)
{
    return sla_error_set(SLA_EINVAL, func, "method auto could not choose a method for the values "
                         "of the last refactor (%s); refactor with other values",
                         s->auto_state->failed);
}

static sla_status none_solve(sla_solver *s, sla_op op, int64_t nrhs, const void *B, void *X,
                             const sla_solve_params *p, sla_solve_info *info)
{
    (void)op; (void)nrhs; (void)B; (void)X; (void)p; (void)info;
    return refuse(s, "sla_solver_solve");
}

static sla_status none_logdet(sla_solver *s, double *sign, double *logabsdet)
{
    (void)sign; (void)logabsdet;
    return refuse(s, "sla_solver_logdet");
}

static sla_status none_grad(sla_solver *s, const double *g, void *dvalues)
{
    (void)g; (void)dvalues;
    return refuse(s, "sla_solver_logdet_grad");
}

static const sla_backend backend_none = {
    .info = {.name = "none", .description = "no method: the last decision of method auto failed"},
    .solve = none_solve,
    .logdet = none_logdet,
    .logdet_grad = none_grad,
};

/* "symmetric → not symmetric" for the facts of need_mask whose value changed, into buf */
static void changes_text(unsigned mask, unsigned was, unsigned now, char *buf, size_t len)
{
    static const char *const names[] = {"symmetric", "positive diagonal", "M-matrix sign pattern",
                                        "diagonally dominant", "strictly dominant row in every "
                                        "component"};
    buf[0] = '\0';
    for (unsigned k = 0; k < 5; k++) {
        unsigned bit = 1u << k;
        if (!(mask & bit) || (was & bit) == (now & bit)) continue;
        char one[96];
        snprintf(one, sizeof one, "%s%s → %s%s", was & bit ? "" : "not ", names[k],
                 now & bit ? "" : "not ", names[k]);
        sla_text_append(buf, len, buf[0] ? ", " : "", one);
    }
}

/* The facts of the new values, as bits (only those in need_mask are meaningful). */
static sla_status measure(sla_solver *s, unsigned *bits)
{
    sla_auto_state *a = s->auto_state;
    double eps = s->dtype == SLA_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
    unsigned char *strict = sla_malloc((size_t)s->n + 1, 1, "diagonally dominant rows");
    if (!strict) return SLA_ENOMEM;
    sla_value_facts f;
    sla_status st = sla_auto_value_facts(&s->A, 1000 * eps, eps, &f, strict);
    int everywhere = 0;
    if (st == SLA_OK && (a->need_mask & SLA_FACT_STRICT) && a->strict) {
        /* the rows that proved strict dominance at the decision still do: it holds */
        everywhere = 1;
        for (int64_t i = 0; i < s->n && everywhere; i++) everywhere = !a->strict[i] || strict[i];
        if (!everywhere) {
            sla_graph_facts g;
            st = sla_auto_graph_sweep(s->pattern, strict, -1, &g);
            everywhere = st == SLA_OK && g.strict_everywhere;
        }
    }
    *bits = sla_auto_fact_bits(&f, everywhere);
    sla_free(strict);
    return st;
}

/* A failure of the backend's refactor that the values explain: decide again. (Out of memory or
 * a broken library would fail again.) */
static int explained_by_values(sla_status st)
{
    return st == SLA_ENOTSPD || st == SLA_EINVAL || st == SLA_EBREAKDOWN || st == SLA_ESINGULAR;
}

/* Decides again for the new values: the old backend goes, a new choice comes (or the solver
 * refuses until the next refactor, if none can be made). */
static sla_status redecide(sla_solver *s, const char *reason)
{
    sla_auto_state *a = s->auto_state;
    if (s->backend && s->backend->destroy) s->backend->destroy(s);
    s->backend = NULL;
    s->impl = NULL;
    a->need_mask = a->need_value = 0;
    sla_free(a->strict);
    a->strict = NULL;
    sla_status st = sla_auto_decide(s);
    if (st < 0) {
        snprintf(a->failed, sizeof a->failed, "%s", sla_last_error());
        if (s->backend && s->backend->destroy) s->backend->destroy(s);
        s->impl = NULL;
        s->backend = &backend_none;
        snprintf(s->description, sizeof s->description, "no method (auto: %s; deciding again "
                 "failed: %s)", reason, a->failed);
        return st;
    }
    a->redecisions++;
    char why[sizeof s->why];
    snprintf(why, sizeof why, "decided again at refactor %lld (%s): %s", (long long)a->redecisions,
             reason, s->why);
    snprintf(s->why, sizeof s->why, "%s", why);
    sla_auto_cut_suffix(s);
    sla_auto_append_suffix(s);
    return SLA_OK;
}

sla_status sla_auto_refactor(sla_solver *s)
{
    sla_auto_state *a = s->auto_state;
    char reason[sizeof s->why];
    if (s->backend == &backend_none) return redecide(s, "the previous decision failed");
    if (a->need_mask) {
        unsigned now = 0;
        SLA_TRY(measure(s, &now));
        if ((now & a->need_mask) != a->need_value) {
            changes_text(a->need_mask, a->need_value, now, reason, sizeof reason);
            return redecide(s, reason);
        }
    }
    sla_auto_cut_suffix(s);
    sla_status st = s->backend->refactor(s);
    if (st >= 0) {
        sla_auto_append_suffix(s);
        return sla_auto_norms(s);
    }
    if (!explained_by_values(st) || !a->need_mask) {
        sla_auto_append_suffix(s);
        return st;
    }
    snprintf(reason, sizeof reason, "%s %s failed: %s", sla_method_name(s->opt.method),
             sla_status_string(st), sla_last_error());
    return redecide(s, reason);
}
