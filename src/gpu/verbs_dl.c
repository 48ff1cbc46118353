/* verbs_dl.c - open libibverbs.so.1 at run time (see verbs_dl.h). */
#include "gpu/verbs_dl.h"
#include "gpu/dl_once.h"

#include <dlfcn.h>
#include <stdio.h>

#include "core/log.h"

#ifdef CC_HAVE_VERBS

static struct cc_verbs vb;
static int loaded;
static char load_err[1024];

static int do_load(void)
{
    vb.lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!vb.lib) {
        snprintf(load_err, sizeof load_err,
                 "RDMA verbs library not found (libibverbs.so.1 not loadable): %s; install "
                 "rdma-core (libibverbs1)", dlerror());
        return -1;
    }
#define CC_RESOLVE(f, sym)                                                                   \
    if (!(*(void **)&vb.f = dlsym(vb.lib, #sym))) {                                          \
        snprintf(load_err, sizeof load_err, "libibverbs.so.1 lacks '%s'", #sym);             \
        return -1;                                                                           \
    }
    CC_VERBS_FNS(CC_RESOLVE)
    CC_RESOLVE(query_port, ibv_query_port)
#undef CC_RESOLVE
    *(void **)&vb.reg_dmabuf_mr = dlsym(vb.lib, "ibv_reg_dmabuf_mr");
    return 0;
}

const struct cc_verbs *cc_verbs_load(char *err, size_t errlen)
{
    return cc_dl_once(&loaded, do_load, load_err, err, errlen) == 0 ? &vb : NULL;
}

#else

const struct cc_verbs *cc_verbs_load(char *err, size_t errlen)
{
    cc_errbuf(err, errlen, "RDMA verbs support is not built into this binary: apt-get install "
                           "libibverbs-dev and run ./configure --with-verbs");
    return NULL;
}

#endif
