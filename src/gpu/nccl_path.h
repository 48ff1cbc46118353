/* nccl_path.h - `--nccl-path`: which NCCL transport a run may use, as NCCL variables.
 *
 * NCCL picks its transport itself; to measure one path at a time ccbench sets NCCL's own
 * documented switches before ncclCommInitRank:
 *   auto        nothing (NCCL chooses)
 *   nvlink      NCCL_P2P_DISABLE=0 NCCL_P2P_LEVEL=NVL NCCL_SHM_DISABLE=1
 *               (peer-to-peer only where GPUs share NVLink)
 *   shm         NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 NCCL_NVLS_ENABLE=0 (host shared memory)
 *   net-ib      NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_NET=IB
 *               NCCL_IB_DISABLE=0 (every byte through the InfiniBand/RoCE plugin)
 *   net-socket  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_NET=Socket
 *               NCCL_IB_DISABLE=1 (every byte through TCP sockets)
 * Also the text of NCCL's version codes. Pure logic: no NCCL needed (unit-tested).
 */
#ifndef CC_NCCL_PATH_H
#define CC_NCCL_PATH_H

#include <stddef.h>

#include "core/status.h"

#define CC_NCCL_PATH_MAX_VARS 8

struct cc_nccl_var {
    const char *name;  /* "NCCL_P2P_DISABLE" */
    const char *value; /* "1" */
};

/* NULL-terminated list of path names: auto, nvlink, shm, net-ib, net-socket. */
extern const char *const cc_nccl_paths[];

/* The variables for `path` (NULL means auto) into vars[CC_NCCL_PATH_MAX_VARS]; *n gets the
 * count. CC_EUSAGE with a one-line message on an unknown path. */
cc_status cc_nccl_path_vars(const char *path, struct cc_nccl_var *vars, size_t *n, char *err,
                            size_t errlen);

/* "2.28.9" from an ncclGetVersion code: major*10000+minor*100+patch from NCCL 2.9,
 * major*1000+minor*100+patch before. Returns buf. */
const char *cc_nccl_version_text(int code, char *buf, size_t len);

#endif
