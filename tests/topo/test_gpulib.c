/* test_gpulib.c - what src/topo/gpulib.c makes of NVML's answers, against the stand-in
 * library tests/topo/fake_nvml.c (run by tests/topo/gpulib.sh with it as libnvidia-ml.so.1). */
#include <string.h>

#include "../tap.h"
#include "topo/gpulib.h"

int main(void)
{
    struct cc_gpu_info gi;
    ok(cc_gpulib_open() & 1, "the stand-in NVML opens");
    cc_gpu_info_init(&gi);
    cc_gpulib_query("0000:03:00.0", &gi);
    ok(gi.nvlinks == 4 && gi.nvlinks_up == 3,
       "a link NVML cannot say anything of is skipped, the others counted (%d links, %d up; want 4, 3)",
       gi.nvlinks, gi.nvlinks_up);
    ok(gi.npeers == 1 && !strcmp(gi.peers[0].busid, "0000:07:00.0") && gi.peers[0].count == 3,
       "the 3 active links go to 0000:07:00.0 (%d peers)", gi.npeers);
    is_int(cc_gpulib_count(), 2, "the driver's GPU count is NVML's");
    cc_gpulib_close();
    return tap_done();
}
