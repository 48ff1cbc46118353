/* layout: placeholder until the layout issue lands. */
#include "cmd/cmd.h"
#include "core/log.h"

int cc_cmd_layout(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cc_err("layout is not implemented yet");
    return 2;
}
