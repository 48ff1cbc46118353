/* `ccbench backends`: the backend table as users see it. */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "cmd/cmd.h"
#include "core/log.h"

int cc_cmd_backends(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: ccbench backends\n  list every transport, whether this binary has it, "
               "and what it measures\n  (whether this machine can use it: ccbench version)\n");
        return 0;
    }
    if (argc > 1) {
        if (argv[1][0] == '-')
            cc_err("unknown option '%s' (see ccbench backends --help)", argv[1]);
        else
            cc_err("unexpected argument '%s' (see ccbench backends --help)", argv[1]);
        return 2;
    }
    for (int i = 0; cc_backends[i]; i++) {
        const struct cc_backend *b = cc_backends[i];
        printf("%-6s %-9s %-6s %s\n", b->name, b->built ? "built" : "not built",
               b->mem == CC_MEM_DEVICE ? "device" : "host", b->summary);
        if (!b->built && b->how_to_build)
            printf("       to build: %s\n", b->how_to_build);
    }
    return 0;
}
