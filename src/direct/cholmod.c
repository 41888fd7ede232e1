/* Placeholder for the cholmod backend (replaced by the direct-solver work). */
#include "solve/backend.h"

const sla_backend sla_backend_cholmod = {
    .info = {.name = "cholmod", .description = "not implemented yet", .available = 0,
             .unavailable_reason = "not implemented yet"},
};
