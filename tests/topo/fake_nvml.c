/* fake_nvml.c - a stand-in for libnvidia-ml.so.1 (tests/topo/gpulib.sh): one GPU whose NVLink
 * 0 NVML cannot say anything of (NVML_ERROR_UNKNOWN), links 1-3 up to 0000:07:00.0, link 4
 * down, none past it (NVML_ERROR_INVALID_ARGUMENT). Only what src/topo/gpulib.c asks. */
#include <string.h>

struct nvml_pci {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev);
int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *on);
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, struct nvml_pci *pci);

int nvmlDeviceGetCount_v2(unsigned *n);

int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = 2; /* one more than the one it describes: a GPU hwloc would not see */
    return 0;
}
int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    static int gpu;
    *dev = &gpu;
    return strstr(bus, "03:00.0") ? 0 : 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *on)
{
    (void)dev;
    if (link == 0)
        return 999; /* NVML_ERROR_UNKNOWN */
    if (link > 4)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT: no such link */
    *on = link <= 3;
    return 0;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, struct nvml_pci *pci)
{
    (void)dev;
    (void)link;
    memset(pci, 0, sizeof *pci);
    pci->bus = 7;
    return 0;
}
