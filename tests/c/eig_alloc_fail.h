/* Shared by the eigsh tests: every allocation failing in turn. */
#ifndef SLA_EIG_ALLOC_FAIL_H
#define SLA_EIG_ALLOC_FAIL_H

#include "testutil.h"

/* Runs run(ctx) with allocation t failing for t = 0, 1, ... until it succeeds: each failing run
 * must return SLA_ENOMEM, and the first success must have used at most t allocations (none
 * failed silently). what names the case in the messages. */
static void eig_every_allocation_fails(const char *what, sla_status (*run)(void *ctx), void *ctx)
{
    for (int64_t t = 0;; t++) {
        sla_test_fail_alloc_after(t);
        sla_status st = run(ctx);
        int64_t used = sla_test_fail_alloc_after(-1);
        if (st == SLA_OK) {
            if (t < used) fail_msg("%s: allocation %lld of %lld failed silently (%s)", what,
                                   (long long)t, (long long)used, sla_last_error());
            return;
        }
        if (st != SLA_ENOMEM) fail_msg("%s, allocation %lld: %s", what, (long long)t, sla_last_error());
    }
}

#endif
