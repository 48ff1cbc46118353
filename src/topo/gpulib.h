/* gpulib.h - what the NVIDIA libraries know about a GPU, asked at run time: NVML
 * (libnvidia-ml.so.1) and the CUDA runtime (libcudart.so.13/.12) are opened with dlopen, so
 * the binary runs where they are absent; then nothing is filled in. Internal to src/topo. */
#ifndef CC_TOPO_GPULIB_H
#define CC_TOPO_GPULIB_H

#define CC_GPU_MAX_LINKS 18

struct cc_gpu_link {
    char busid[16];  /* peer PCI bus id "0000:07:00.0" (a GPU or an NVSwitch) */
    int count;       /* active links to that peer */
    int is_switch;   /* 1 the peer is an NVSwitch, 0 a GPU, 2 something else (a POWER CPU,
                        NVML does not know), -1 not said (probe.c guesses from the peer) */
};

struct cc_gpu_info {
    char model[96];          /* "" unknown */
    long long memory_bytes;  /* -1 unknown */
    int cuda_index;          /* CUDA runtime device number, -1 unknown */
    int sm;                  /* compute capability x10 (90 for 9.0), -1 unknown */
    int pcie_gen, pcie_width;/* current link, -1 unknown */
    int pcie_max_gen, pcie_max_width; /* most the device supports, -1 unknown */
    int nvlinks, nvlinks_up; /* links present / active, -1 unknown */
    int npeers;
    struct cc_gpu_link peers[CC_GPU_MAX_LINKS];
    double link_GBps;        /* GB/s per NVLink and direction as counted from hwloc's matrix;
                              * 0: by compute capability */
};

/* Open the libraries (once). Returns a bit mask: 1 NVML usable, 2 CUDA runtime usable. */
int cc_gpulib_open(void);
/* Fill gi for the GPU at PCI bus id `busid` from whatever is usable; fields stay -1 / "". */
void cc_gpulib_query(const char *busid, struct cc_gpu_info *gi);
void cc_gpulib_close(void);
/* GPUs the driver has on this node (NVML's count, else the CUDA runtime's, which
 * CUDA_VISIBLE_DEVICES narrows), -1 when neither is usable. After cc_gpulib_open. */
int cc_gpulib_count(void);

/* Reset gi to "unknown" everywhere. */
void cc_gpu_info_init(struct cc_gpu_info *gi);

#endif
