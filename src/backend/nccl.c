/* nccl backend: placeholder until implemented (see the open issue). */
#include "backend/backend.h"

const struct cc_backend cc_backend_nccl = {
    .name = "nccl",
    .summary = "not implemented yet",
    .built = 0,
    .how_to_build = "not implemented yet in this version",
    .mem = CC_MEM_HOST,
};
