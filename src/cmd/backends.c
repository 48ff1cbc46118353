/* `ccbench backends`: the backend table as users see it, and whether this machine can run
 * each one. */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "cmd/cmd.h"
#include "core/log.h"

int cc_cmd_backends(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: ccbench backends\n  list every transport: whether this binary has it, "
               "whether this machine can\n  run it (driver, library and device found; the "
               "reason when not) and what it\n  measures. Exit status 0.\n");
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
        char why[512] = "";
        int here = b->built && (!b->usable || b->usable(why, sizeof why));
        printf("%-6s %-9s %-6s %-6s %s\n", b->name, b->built ? "built" : "not built",
               b->mem == CC_MEM_DEVICE ? "device" : "host", here ? "usable" : "no", b->summary);
        if (!b->built && b->how_to_build)
            printf("       to build: %s\n", b->how_to_build);
        else if (why[0])
            printf("       here: %s\n", why);
    }
    return 0;
}
