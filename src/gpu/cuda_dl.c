/* cuda_dl.c - open the CUDA driver and runtime at run time (see cuda_dl.h). */
#include "gpu/cuda_dl.h"
#include "gpu/dl_once.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/log.h"

#ifdef CC_HAVE_CUDA

static struct cc_cuda cu;
static int loaded;        /* 1 ok, -1 failed (message kept) */
static char load_err[1024];

static const char *const cudart_names[] = {
    "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", NULL,
};

static int resolve(void *h, const char *lib, const char *name, void **slot, int optional)
{
    *slot = dlsym(h, name);
    if (!*slot && !optional) {
        snprintf(load_err, sizeof load_err, "%s lacks '%s' (too old?)", lib, name);
        return -1;
    }
    return 0;
}

static int do_load(void)
{
    cu.drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!cu.drv) {
        snprintf(load_err, sizeof load_err,
                 "no CUDA driver found (libcuda.so.1 not loadable): %s", dlerror());
        return -1;
    }
    /* the newest runtime the driver supports: a CUDA 13 runtime under a driver for CUDA 12
     * says "insufficient driver", and the next name is tried */
    const char *tried = NULL;
    char newer[256] = "";
    cudaError_t e = cudaSuccess;
    for (int i = 0; cudart_names[i] && !cu.rt; i++) {
        cu.rt = dlopen(cudart_names[i], RTLD_NOW | RTLD_GLOBAL);
        if (!cu.rt) {
            tried = dlerror();
            continue;
        }
        cu.rt_name = cudart_names[i];
#define CC_RESOLVE_RT(n) if (resolve(cu.rt, cu.rt_name, #n, (void **)&cu.n, 0)) return -1;
        CC_CUDA_RT_FNS(CC_RESOLVE_RT)
#undef CC_RESOLVE_RT
        e = cu.cudaGetDeviceCount(&cu.ndev);
        if (e == cudaErrorInsufficientDriver && cudart_names[i + 1]) {
            snprintf(newer, sizeof newer, "%s needs a newer driver; ", cu.rt_name);
            dlclose(cu.rt);
            cu.rt = NULL;
        }
    }
    if (!cu.rt) {
        snprintf(load_err, sizeof load_err,
                 "no CUDA runtime found (tried libcudart.so.13, .12, .11.0, libcudart.so): %s%s",
                 newer, tried ? tried : "?");
        return -1;
    }
#define CC_RESOLVE_DRV(n) if (resolve(cu.drv, "libcuda.so.1", #n, (void **)&cu.n, 0)) return -1;
#define CC_RESOLVE_OPT(n) resolve(cu.drv, "libcuda.so.1", #n, (void **)&cu.n, 1);
    CC_CUDA_DRV_FNS(CC_RESOLVE_DRV)
    CC_CUDA_DRV_OPT_FNS(CC_RESOLVE_OPT)
#undef CC_RESOLVE_DRV
#undef CC_RESOLVE_OPT
    cu.rt_version = 0;
    cu.cudaRuntimeGetVersion(&cu.rt_version);
    cu.cudaDriverGetVersion(&cu.drv_version);
    if (e != cudaSuccess) {
        snprintf(load_err, sizeof load_err, "no CUDA device: %s (driver supports CUDA %d.%d, %s)",
                 cu.cudaGetErrorString(e), cu.drv_version / 1000, cu.drv_version % 1000 / 10,
                 cu.rt_name);
        return -1;
    }
    if (cu.ndev <= 0) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        snprintf(load_err, sizeof load_err, "no CUDA device visible (CUDA_VISIBLE_DEVICES='%s')",
                 vis ? vis : "unset");
        return -1;
    }
    CUresult r = cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *s = NULL;
        cu.cuGetErrorString(r, &s);
        snprintf(load_err, sizeof load_err, "CUDA driver initialization failed: %s", s ? s : "?");
        return -1;
    }
    return 0;
}

const struct cc_cuda *cc_cuda_load(char *err, size_t errlen)
{
    return cc_dl_once(&loaded, do_load, load_err, err, errlen) == 0 ? &cu : NULL;
}

#else

const struct cc_cuda *cc_cuda_load(char *err, size_t errlen)
{
    cc_errbuf(err, errlen, "CUDA support is not built into this binary: install the CUDA toolkit "
                           "headers and run ./configure --with-cuda");
    return NULL;
}

#endif
