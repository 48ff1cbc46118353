/* nccl_dl.c - open libnccl.so.2 at run time (see nccl_dl.h). */
#define _GNU_SOURCE /* dladdr */
#include "gpu/nccl_dl.h"
#include "gpu/dl_once.h"

#include <dlfcn.h>
#include <stdio.h>

#include "core/log.h"

#ifdef CC_HAVE_NCCL

static struct cc_nccl nc;
static int loaded;
static char load_err[1024];

static int do_load(void)
{
    nc.lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!nc.lib) {
        snprintf(load_err, sizeof load_err,
                 "NCCL library not found (libnccl.so.2 not loadable): %s", dlerror());
        return -1;
    }
#define CC_RESOLVE(n)                                                                        \
    if (!(*(void **)&nc.n = dlsym(nc.lib, #n))) {                                            \
        snprintf(load_err, sizeof load_err, "libnccl.so.2 lacks '%s' (NCCL too old?)", #n);  \
        return -1;                                                                           \
    }
    CC_NCCL_FNS(CC_RESOLVE)
    CC_RESOLVE(ncclGroupStart)
    CC_RESOLVE(ncclGroupEnd)
#undef CC_RESOLVE
    *(void **)&nc.ncclGetLastError = dlsym(nc.lib, "ncclGetLastError");
    Dl_info info;
    if (dladdr(*(void **)&nc.ncclGetVersion, &info) && info.dli_fname)
        snprintf(nc.path, sizeof nc.path, "%s", info.dli_fname);
    if (nc.ncclGetVersion(&nc.version) != ncclSuccess) {
        snprintf(load_err, sizeof load_err, "ncclGetVersion failed in '%s'", nc.path);
        return -1;
    }
    return 0;
}

const struct cc_nccl *cc_nccl_load(char *err, size_t errlen)
{
    return cc_dl_once(&loaded, do_load, load_err, err, errlen) == 0 ? &nc : NULL;
}

#else

const struct cc_nccl *cc_nccl_load(char *err, size_t errlen)
{
    cc_errbuf(err, errlen, "NCCL support is not built into this binary: install nccl.h (with "
                           "the CUDA headers) and run ./configure --with-nccl");
    return NULL;
}

#endif
