/* The toy backend library (toy_backend.c): what it counts, and its entry points. */
#ifndef SLA_TOY_BACKEND_H
#define SLA_TOY_BACKEND_H

#include <sla/backend.h>

typedef struct toy_counts {
    long reduces;                /* calls of the reduce hook */
    long values;                 /* doubles reduced */
    long max_reduces;            /* of them with SLA_REDUCE_MAX */
    long from_threads;           /* calls made inside a parallel region */
    long block_spaces;           /* block spaces handed to the generic layer */
    long fail_after;             /* the reduce hook fails when this reaches 0 (< 0: never) */
} toy_counts;

extern toy_counts toy_count;

/* V becomes a one-process "distributed" space: the counting reduce hook, not concurrent. */
void toy_make_distributed(sla_space *V);

/* Registers / removes the solver backend "toy". */
sla_status toy_register(void);
sla_status toy_unregister(void);

#endif
