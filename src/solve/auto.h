/* What method = auto keeps in a solver after choosing (s->auto_state), shared by auto.c (the
 * rules), auto_refactor.c (re-checking them when values change) and auto_accuracy.c (the
 * accuracy target when no tolerance is given). Private to libsla. */
#ifndef SLA_SOLVE_AUTO_H
#define SLA_SOLVE_AUTO_H

#include "solve/auto_facts.h"

/** Facts of the values a choice can rest on, as bits (sla_auto_fact_bits). */
enum {
    SLA_FACT_SYM = 1u,        /**< numerically symmetric */
    SLA_FACT_POSDIAG = 2u,    /**< every diagonal entry stored and positive */
    SLA_FACT_MSIGN = 4u,      /**< no positive off-diagonal value */
    SLA_FACT_DIAGDOM = 8u,    /**< every row weakly diagonally dominant */
    SLA_FACT_STRICT = 16u,    /**< a strictly dominant row in every connected component */
};

typedef struct sla_auto_state {
    unsigned need_mask;       /**< facts the choice rests on ... */
    unsigned need_value;      /**< ... and the values they had (bits of need_mask) */
    unsigned char *strict;    /**< [n] rows strictly dominant at the decision (rule 2), or NULL */
    uint32_t allowed;         /**< methods auto may choose: those of options.backend */
    double *anorm;            /**< [batch] ‖A_b‖_F for the accuracy target, or NULL */
    size_t suffix_at;         /**< where "; auto: <why>" starts in s->description */
    int64_t redecisions;      /**< times a refactor decided again */
    char failed[400];         /**< why the last decision failed (the solver then refuses) */
} sla_auto_state;

/** The bits of f (SLA_FACT_STRICT from strict_everywhere). */
unsigned sla_auto_fact_bits(const sla_value_facts *f, int strict_everywhere);

/** Decides for s->A (values current), as at create: every rule of auto.c, the chosen backend
 *  created, s->why and the description's suffix written, s->auto_state's need and strict
 *  recorded. s has no backend on entry. */
sla_status sla_auto_decide(sla_solver *s);

/** ‖A_b‖_F of every batch element into s->auto_state->anorm (allocated once) when the accuracy
 *  target applies (no tolerance given, an iterative method); else nothing. */
sla_status sla_auto_norms(sla_solver *s);

/** 1 if the accuracy target of auto_accuracy.c applies to s (method auto, no tolerance given,
 *  a square iterative solve on a matrix). */
int sla_auto_accuracy_applies(const sla_solver *s);
/** Appends "no tolerance given: ..." to s->why and the description when the target applies. */
void sla_auto_accuracy_note(sla_solver *s);

/** The description's "; auto: <why>" suffix, cut off (before a backend rewrites its part) and
 *  appended again (after). */
void sla_auto_cut_suffix(sla_solver *s);
void sla_auto_append_suffix(sla_solver *s);

#endif
