/* test_gather.c - the gather of the node descriptions (cc_rte_gather_str): its layout refuses
 * a total past 2 GiB (MPI's int displacements wrapped), and the gather itself works. Runs as an
 * MPI singleton, or under mpirun. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "rte/rte.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

int main(int argc, char **argv)
{
    struct cc_rte r;
    int lens[3] = {5, 7, 1}, displ[3] = {-1, -1, -1};
    size_t total = 0;
    ok(cc_rte_gather_layout(lens, 3, displ, &total) == CC_OK && total == 13 && displ[0] == 0 &&
       displ[1] == 5 && displ[2] == 12, "layout: displacements and total");
    int big[3] = {INT_MAX / 2, INT_MAX / 2, 3};
    ok(cc_rte_gather_layout(big, 3, displ, &total) == CC_ETOOBIG,
       "layout: a total past INT_MAX is refused, not wrapped");
    int cut[2] = {4, -1}; /* a string of INT_MAX bytes or more: its rank sends -1 */
    ok(cc_rte_gather_layout(cut, 2, displ, &total) == CC_ETOOBIG, "layout: a string too long to count is refused");

#ifdef __SANITIZE_ADDRESS__
    /* leaks are checked here, before MPI: Open MPI's memory cannot be told from ours at exit
     * (tests/tap.sh, uses_mpi) */
    __lsan_do_leak_check();
#endif
    if (cc_rte_init(&r, &argc, &argv) != CC_OK) {
        ok(0, "MPI starts");
        return tap_done();
    }
    char mine[32], **all = NULL;
    snprintf(mine, sizeof mine, "rank %d", r.rank);
    cc_status st = cc_rte_gather_str(&r, r.rank % 2 ? "" : mine, &all);
    int good = st == CC_OK && (r.rank != 0 || all);
    for (int i = 0; r.rank == 0 && all && i < r.size; i++) {
        char want[32];
        snprintf(want, sizeof want, "rank %d", i);
        good &= strcmp(all[i], i % 2 ? "" : want) == 0;
        free(all[i]);
    }
    free(all);
    ok(good, "gather: every rank's string at rank 0, in rank order (%d ranks)", r.size);
    cc_rte_fini(&r);
    return tap_done();
}
