/* Method and preconditioner auto for distributed matrices: the serial rules (src/solve/auto.c,
 * src/krylov/backend.c) restricted to the iterative methods, on facts measured across the ranks
 * (facts.c), with the explanation describe() shows. Direct methods are not distributed here. */
#include <stdio.h>
#include <string.h>

#include "mpi/dsolver.h"

/* precond = auto for cg: BoomerAMG from this many unknowns (src/krylov/backend.c's AMG rule,
 * SLA_KRYLOV_AMG_MIN_N, measured on 2D Poisson) */
#define DIST_AMG_MIN_N 5000

/* buf += sep + text, cut to cap */
static void append(char *buf, size_t cap, const char *sep, const char *text)
{
    size_t l = strlen(buf);
    if (l + 1 < cap) snprintf(buf + l, cap - l, "%s%s", sep, text);
}

static int auto_candidates(const sla_dist_solver *s, int64_t N, sla_dist_precond *c)
{
    int k = 0;
    switch (s->opt.method) {
    case SLA_METHOD_CG:
        if (N >= DIST_AMG_MIN_N && s->A.dtype == SLA_FLOAT64 && dist_hypre_available())
            c[k++] = SLA_DIST_PC_BOOMERAMG;
        c[k++] = SLA_DIST_PC_JACOBI;
        break;
    case SLA_METHOD_MINRES: c[k++] = SLA_DIST_PC_JACOBI; break;
    case SLA_METHOD_LSQR: break;
    default: c[k++] = SLA_DIST_PC_BJACOBI_ILU0; c[k++] = SLA_DIST_PC_JACOBI; break;
    }
    c[k++] = SLA_DIST_PC_NONE;
    return k;
}

/* set-up failures of a reason of the values: precond auto tries the next candidate */
static int gives_way(sla_status st)
{
    return st == SLA_EBREAKDOWN || st == SLA_EUNSUPPORTED || st == SLA_ESINGULAR ||
           st == SLA_ENOTSPD;
}

static sla_status choose_method(sla_dist_solver *s, const char *func, char *why, size_t len)
{
    int64_t M = sla_dist_layout_size(s->pattern->rows), N = sla_dist_layout_size(s->pattern->cols);
    if (!s->square) {
        s->opt.method = SLA_METHOD_LSQR;
        snprintf(why, len, "auto: %s → lsqr", M != N ? "rectangular" :
                 "rows and columns distributed differently");
        return SLA_OK;
    }
    SLA_TRY(dist_facts_measure(&s->A, func, &s->facts));
    s->have_facts = 1;
    if (s->facts.symmetric && s->facts.posdiag) {
        s->opt.method = SLA_METHOD_CG;
        snprintf(why, len, "auto: symmetric, positive diagonal → cg");
    } else if (s->facts.symmetric) {
        s->opt.method = SLA_METHOD_MINRES;
        snprintf(why, len, "auto: symmetric, diagonal not positive → minres");
    } else {
        s->opt.method = SLA_METHOD_GMRES;
        snprintf(why, len, "auto: not symmetric → gmres");
    }
    return SLA_OK;
}

sla_status dist_solver_choose(sla_dist_solver *s, const char *func, char *why, size_t len)
{
    if (s->opt.method == SLA_METHOD_AUTO) SLA_TRY(choose_method(s, func, why, len));
    if (s->opt.method == SLA_METHOD_LSQR && s->opt.precond != SLA_DIST_PC_AUTO &&
        s->opt.precond != SLA_DIST_PC_NONE)
        return dist_agree(s->comm, func,
                          SLA_FAIL_AS(func, SLA_EINVAL, "method lsqr takes no preconditioner "
                                      "(precond = %s; use none or auto)",
                                      sla_dist_precond_name(s->opt.precond)));
    int absdiag = s->opt.method == SLA_METHOD_MINRES;
    if (s->opt.precond != SLA_DIST_PC_AUTO) {
        SLA_TRY(dist_pc_create(&s->pc, s->opt.precond, absdiag, &s->A, func));
        return SLA_OK;
    }
    sla_dist_precond cand[4];
    int nc = auto_candidates(s, sla_dist_layout_size(s->pattern->rows), cand);
    char failed[400] = "";
    for (int c = 0; c < nc; c++) {
        sla_status st = dist_pc_create(&s->pc, cand[c], absdiag, &s->A, func);
        if (st == SLA_OK) {
            s->opt.precond = cand[c];
            char note[520];
            snprintf(note, sizeof note, "precond auto → %s%s%s%s", sla_dist_precond_name(cand[c]),
                     failed[0] ? " (" : "", failed, failed[0] ? ")" : "");
            append(why, len, why[0] ? "; " : "", note);
            sla_clear_error();
            return SLA_OK;
        }
        if (!gives_way(st)) return st;
        char what[300];
        snprintf(what, sizeof what, "%s failed: %.200s", sla_dist_precond_name(cand[c]),
                 sla_last_error());
        append(failed, sizeof failed, failed[0] ? "; " : "", what);
    }
    return SLA_OK;                             /* not reached: none never fails */
}
