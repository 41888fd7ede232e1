/* Placeholder for the built-in Krylov backend (replaced by the iterative-solver work). */
#include "solve/backend.h"

const sla_backend sla_backend_krylov = {
    .info = {.name = "krylov", .description = "not implemented yet", .available = 0,
             .unavailable_reason = "not implemented yet"},
};
