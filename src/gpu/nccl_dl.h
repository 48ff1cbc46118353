/* nccl_dl.h - libnccl.so.2 opened with dlopen at run time (see cuda_dl.h for why).
 * Compiled against nccl.h only; without it (no CC_HAVE_NCCL) the loader always fails and
 * says how to build. */
#ifndef CC_NCCL_DL_H
#define CC_NCCL_DL_H

#include <stddef.h>

#include "config.h"

#ifdef CC_HAVE_NCCL
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* nccl.h declares f() for f(void) */
#include <nccl.h>
#pragma GCC diagnostic pop

#define CC_NCCL_FNS(X)                                                                       \
    X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommDestroy)              \
    X(ncclCommAbort) X(ncclGetErrorString) X(ncclCommGetAsyncError) X(ncclAllReduce)         \
    X(ncclAllGather) X(ncclReduceScatter) X(ncclBroadcast) X(ncclReduce) X(ncclSend)         \
    X(ncclRecv)

struct cc_nccl {
    void *lib;
    char path[512];   /* file the library was loaded from */
    int version;      /* ncclGetVersion: 22809 = 2.28.9 */
#define CC_NCCL_FIELD(name) __typeof__(name) *name;
    CC_NCCL_FNS(CC_NCCL_FIELD)
#undef CC_NCCL_FIELD
    ncclResult_t (*ncclGroupStart)(void);
    ncclResult_t (*ncclGroupEnd)(void);
    const char *(*ncclGetLastError)(ncclComm_t); /* NULL before NCCL 2.13 */
};
#else
struct cc_nccl;
#endif

/* Load once; NULL with "NCCL library not found (libnccl.so.2 not loadable): ..." in err. */
const struct cc_nccl *cc_nccl_load(char *err, size_t errlen);

#endif
