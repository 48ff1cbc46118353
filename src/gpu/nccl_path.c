/* nccl_path.c - `--nccl-path` to NCCL variables; NCCL version codes as text. */
#include "gpu/nccl_path.h"

#include <stdio.h>
#include <string.h>

#include "core/log.h"

const char *const cc_nccl_paths[] = {"auto", "nvlink", "shm", "net-ib", "net-socket", NULL};

struct path_def {
    const char *name;
    struct cc_nccl_var vars[CC_NCCL_PATH_MAX_VARS];
};

static const struct path_def defs[] = {
    {"auto", {{NULL, NULL}}},
    {"nvlink",
     {{"NCCL_P2P_DISABLE", "0"}, {"NCCL_P2P_LEVEL", "NVL"}, {"NCCL_SHM_DISABLE", "1"}}},
    {"shm",
     {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "0"}, {"NCCL_NVLS_ENABLE", "0"}}},
    {"net-ib",
     {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}, {"NCCL_NVLS_ENABLE", "0"},
      {"NCCL_NET", "IB"}, {"NCCL_IB_DISABLE", "0"}}},
    {"net-socket",
     {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}, {"NCCL_NVLS_ENABLE", "0"},
      {"NCCL_NET", "Socket"}, {"NCCL_IB_DISABLE", "1"}}},
};

cc_status cc_nccl_path_vars(const char *path, struct cc_nccl_var *vars, size_t *n, char *err,
                            size_t errlen)
{
    *n = 0;
    if (!path)
        path = "auto";
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        if (strcmp(defs[d].name, path) != 0)
            continue;
        for (size_t i = 0; i < CC_NCCL_PATH_MAX_VARS && defs[d].vars[i].name; i++)
            vars[(*n)++] = defs[d].vars[i];
        return CC_OK;
    }
    cc_errbuf(err, errlen, "unknown --nccl-path '%s' (one of nvlink, shm, net-ib, net-socket, auto)",
              path);
    return CC_EUSAGE;
}

const char *cc_nccl_version_text(int code, char *buf, size_t len)
{
    if (code >= 20900)
        snprintf(buf, len, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
    else
        snprintf(buf, len, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
    return buf;
}
