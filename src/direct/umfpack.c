/* Placeholder for the umfpack backend (replaced by the direct-solver work). */
#include "solve/backend.h"

const sla_backend sla_backend_umfpack = {
    .info = {.name = "umfpack", .description = "not implemented yet", .available = 0,
             .unavailable_reason = "not implemented yet"},
};
