/* probe: placeholder until the topology issue lands. */
#include "cmd/cmd.h"
#include "core/log.h"

int cc_cmd_probe(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cc_err("probe is not implemented yet");
    return 2;
}
