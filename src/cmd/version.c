#include "config.h"

#include <stdio.h>

#include "backend/backend.h"
#include "cmd/cmd.h"

void cc_print_version(void)
{
    printf("ccbench %s\n", PACKAGE_VERSION);
    printf("backends:");
    for (int i = 0; cc_backends[i]; i++)
        printf(" %s%s", cc_backends[i]->name, cc_backends[i]->built ? "" : "(not built)");
    printf("\n");
#ifdef CC_HAVE_CUDA
    printf("cuda: built with headers from %s (runtime opened at run time)\n", CC_CUDA_DIR);
#else
    printf("cuda: not built\n");
#endif
#ifdef CC_HAVE_NCCL
    printf("nccl: built (library opened at run time)\n");
#else
    printf("nccl: not built\n");
#endif
#ifdef CC_HAVE_VERBS
    printf("verbs: built (libibverbs opened at run time)\n");
#else
    printf("verbs: not built\n");
#endif
}
