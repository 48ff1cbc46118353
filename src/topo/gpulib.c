/* gpulib.c - see gpulib.h. The NVML and CUDA runtime entry points are declared here with
 * the few types they use, so no NVIDIA header is needed at build time either. */
#include "topo/gpulib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"

typedef void *nvml_dev;
struct nvml_pci { /* nvmlPciInfo_t (v2 and later) */
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct nvml_mem { unsigned long long total, free, used; };

static struct {
    int tried, mask;
    void *nvml, *cudart;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_bus)(const char *, nvml_dev *);
    int (*name)(nvml_dev, char *, unsigned);
    int (*mem)(nvml_dev, struct nvml_mem *);
    int (*gen)(nvml_dev, unsigned *);
    int (*width)(nvml_dev, unsigned *);
    int (*max_gen)(nvml_dev, unsigned *);
    int (*max_width)(nvml_dev, unsigned *);
    int (*cc)(nvml_dev, int *, int *);
    int (*link_state)(nvml_dev, unsigned, int *);
    int (*link_pci)(nvml_dev, unsigned, struct nvml_pci *);
    int (*link_type)(nvml_dev, unsigned, int *); /* optional (newer drivers) */
    int (*nvml_count)(unsigned *);
    int (*count)(int *);
    int (*pci_id)(char *, int, int);
    int ncuda;
} L;

static void *sym(void *h, const char *name)
{
    return h ? dlsym(h, name) : NULL;
}

int cc_gpulib_count(void)
{
    unsigned n = 0;
    if ((L.mask & 1) && L.nvml_count && L.nvml_count(&n) == 0)
        return (int)n;
    return (L.mask & 2) ? L.ncuda : -1;
}

int cc_gpulib_open(void)
{
    if (L.tried)
        return L.mask;
    L.tried = 1;
    L.nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    *(void **)&L.init = sym(L.nvml, "nvmlInit_v2");
    *(void **)&L.shutdown = sym(L.nvml, "nvmlShutdown");
    *(void **)&L.by_bus = sym(L.nvml, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&L.name = sym(L.nvml, "nvmlDeviceGetName");
    *(void **)&L.mem = sym(L.nvml, "nvmlDeviceGetMemoryInfo");
    *(void **)&L.gen = sym(L.nvml, "nvmlDeviceGetCurrPcieLinkGeneration");
    *(void **)&L.width = sym(L.nvml, "nvmlDeviceGetCurrPcieLinkWidth");
    *(void **)&L.max_gen = sym(L.nvml, "nvmlDeviceGetMaxPcieLinkGeneration");
    *(void **)&L.max_width = sym(L.nvml, "nvmlDeviceGetMaxPcieLinkWidth");
    *(void **)&L.cc = sym(L.nvml, "nvmlDeviceGetCudaComputeCapability");
    *(void **)&L.link_state = sym(L.nvml, "nvmlDeviceGetNvLinkState");
    *(void **)&L.link_pci = sym(L.nvml, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    *(void **)&L.link_type = sym(L.nvml, "nvmlDeviceGetNvLinkRemoteDeviceType");
    *(void **)&L.nvml_count = sym(L.nvml, "nvmlDeviceGetCount_v2");
    if (L.init && L.by_bus && L.init() == 0)
        L.mask |= 1;
    else if (L.nvml)
        cc_debug("NVML found but not usable (no driver?)");

    static const char *const cudart[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    for (size_t i = 0; i < sizeof cudart / sizeof cudart[0] && !L.cudart; i++)
        L.cudart = dlopen(cudart[i], RTLD_NOW | RTLD_LOCAL);
    *(void **)&L.count = sym(L.cudart, "cudaGetDeviceCount");
    *(void **)&L.pci_id = sym(L.cudart, "cudaDeviceGetPCIBusId");
    if (L.count && L.pci_id && L.count(&L.ncuda) == 0 && L.ncuda > 0)
        L.mask |= 2;
    else if (L.cudart)
        cc_debug("CUDA runtime found but reports no device");
    return L.mask;
}

void cc_gpulib_close(void)
{
    if (L.mask & 1)
        L.shutdown();
    if (L.nvml)
        dlclose(L.nvml);
    /* the CUDA runtime is left loaded: unloading it with a live context is unsafe */
    memset(&L, 0, sizeof L);
}

void cc_gpu_info_init(struct cc_gpu_info *gi)
{
    memset(gi, 0, sizeof *gi);
    gi->memory_bytes = -1;
    gi->cuda_index = gi->sm = gi->pcie_gen = gi->pcie_width = -1;
    gi->pcie_max_gen = gi->pcie_max_width = -1;
    gi->nvlinks = gi->nvlinks_up = -1;
}

/* "00000000:07:00.0" or "0000:07:00.0", any case -> "0000:07:00.0" */
static int same_bus(const char *a, const char *b)
{
    unsigned d1, b1, s1, f1, d2, b2, s2, f2;
    if (sscanf(a, "%x:%x:%x.%x", &d1, &b1, &s1, &f1) != 4 ||
        sscanf(b, "%x:%x:%x.%x", &d2, &b2, &s2, &f2) != 4)
        return 0;
    return d1 == d2 && b1 == b2 && s1 == s2 && f1 == f2;
}

/* NVML's answers for a link that is not there: NVML_ERROR_INVALID_ARGUMENT (past the last
 * link), NVML_ERROR_NOT_SUPPORTED (no NVLink on this GPU). */
#define NVML_NO_SUCH_LINK(rc) ((rc) == 2 || (rc) == 3)

/* Every link whose state NVML gives, as NCCL does (topo/xml.cc): a link NVML cannot say
 * anything of is skipped, the links after it are still asked. When no link answered and some
 * failed otherwise than "no such link", the NVLinks stay unknown (-1). */
static void query_nvlinks(nvml_dev d, struct cc_gpu_info *gi)
{
    int failed = 0;
    gi->nvlinks = gi->nvlinks_up = 0;
    for (unsigned l = 0; l < CC_GPU_MAX_LINKS; l++) {
        int on = 0, rc = L.link_state(d, l, &on);
        if (rc != 0) {
            failed |= !NVML_NO_SUCH_LINK(rc);
            continue;
        }
        gi->nvlinks++;
        if (!on)
            continue;
        gi->nvlinks_up++;
        struct nvml_pci pci;
        if (!L.link_pci || L.link_pci(d, l, &pci) != 0)
            continue;
        char bus[16];
        snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", pci.domain & 0xffff, pci.bus & 0xff,
                 pci.device & 0x1f);
        int type = -1, is_switch = -1;
        /* NVML_NVLINK_DEVICE_TYPE_GPU 0, _IBMNPU 1 (a POWER CPU), _SWITCH 2, _UNKNOWN 0xff:
         * 1 switch, 0 GPU, 2 something else (never guessed to be either) */
        if (L.link_type && L.link_type(d, l, &type) == 0)
            is_switch = type == 2 ? 1 : type == 0 ? 0 : 2;
        int k;
        for (k = 0; k < gi->npeers; k++)
            if (strcmp(gi->peers[k].busid, bus) == 0)
                break;
        if (k == gi->npeers) {
            snprintf(gi->peers[k].busid, sizeof gi->peers[k].busid, "%s", bus);
            gi->peers[k].is_switch = is_switch;
            gi->npeers++;
        }
        gi->peers[k].count++;
    }
    if (gi->nvlinks == 0 && failed)
        gi->nvlinks = gi->nvlinks_up = -1;
}

void cc_gpulib_query(const char *busid, struct cc_gpu_info *gi)
{
    if (L.mask & 2) {
        for (int i = 0; i < L.ncuda; i++) {
            char b[32];
            if (L.pci_id(b, (int)sizeof b, i) == 0 && same_bus(b, busid)) {
                gi->cuda_index = i;
                break;
            }
        }
    }
    nvml_dev d;
    if (!(L.mask & 1) || L.by_bus(busid, &d) != 0)
        return;
    unsigned u;
    int maj, min;
    struct nvml_mem m;
    if (L.name && L.name(d, gi->model, sizeof gi->model) != 0)
        gi->model[0] = 0;
    if (L.mem && L.mem(d, &m) == 0)
        gi->memory_bytes = (long long)m.total;
    if (L.gen && L.gen(d, &u) == 0)
        gi->pcie_gen = (int)u;
    if (L.width && L.width(d, &u) == 0)
        gi->pcie_width = (int)u;
    if (L.max_gen && L.max_gen(d, &u) == 0)
        gi->pcie_max_gen = (int)u;
    if (L.max_width && L.max_width(d, &u) == 0)
        gi->pcie_max_width = (int)u;
    if (L.cc && L.cc(d, &maj, &min) == 0)
        gi->sm = maj * 10 + min;
    if (L.link_state)
        query_nvlinks(d, gi);
}
