/* gpu: placeholder until the GPU issue lands. */
#include "cmd/cmd.h"
#include "core/log.h"

int cc_cmd_gpu(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cc_err("gpu is not implemented yet");
    return 2;
}
