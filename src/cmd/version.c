#include "config.h"

#include <stdio.h>

#include "backend/backend.h"
#include "cmd/cmd.h"
#include "gpu/cuda_dl.h"
#include "gpu/nccl_dl.h"
#include "gpu/nccl_path.h"
#include "gpu/verbs_dl.h"

void cc_print_version(void)
{
    char err[1024];
    printf("ccbench %s\n", PACKAGE_VERSION);
    printf("backends:");
    for (int i = 0; cc_backends[i]; i++)
        printf(" %s%s", cc_backends[i]->name, cc_backends[i]->built ? "" : "(not built)");
    printf("\n");
#ifdef CC_HAVE_CUDA
    printf("cuda: built with headers from %s (runtime opened at run time)\n", CC_CUDA_DIR);
    const struct cc_cuda *cu = cc_cuda_load(err, sizeof err);
    if (cu)
        printf("  here: %d GPU(s), %s (CUDA %d.%d), driver supports CUDA %d.%d\n", cu->ndev,
               cu->rt_name, cu->rt_version / 1000, cu->rt_version % 1000 / 10,
               cu->drv_version / 1000, cu->drv_version % 1000 / 10);
    else
        printf("  here: unavailable: %s\n", err);
#else
    printf("cuda: not built\n");
#endif
#ifdef CC_HAVE_NCCL
    printf("nccl: built (library opened at run time)\n");
    const struct cc_nccl *nc = cc_nccl_load(err, sizeof err);
    char v[32];
    if (nc)
        printf("  here: NCCL %s from %s\n", cc_nccl_version_text(nc->version, v, sizeof v),
               nc->path);
    else
        printf("  here: unavailable: %s\n", err);
#else
    printf("nccl: not built\n");
#endif
#ifdef CC_HAVE_VERBS
    printf("verbs: built (libibverbs opened at run time)\n");
    const struct cc_verbs *vb = cc_verbs_load(err, sizeof err);
    if (vb) {
        int n = 0;
        struct ibv_device **l = vb->get_device_list(&n);
        printf("  here: libibverbs loaded, %d RDMA device(s)%s", n, n ? ":" : "");
        for (int i = 0; l && i < n; i++)
            printf(" %s", vb->get_device_name(l[i]));
        printf("\n");
        if (l)
            vb->free_device_list(l);
    } else {
        printf("  here: unavailable: %s\n", err);
    }
#else
    printf("verbs: not built\n");
#endif
    (void)err; /* unused when nothing optional is built */
}
