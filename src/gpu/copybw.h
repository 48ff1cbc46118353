/* copybw.h - GPU copy bandwidth: host<->device, within a device, and between every pair of
 * GPUs of this node, by copy engine (cudaMemcpyAsync) and by kernel (SM loads and stores),
 * in one direction and in both at once - the figures nvbandwidth gives, so a dead NVLink or a
 * GPU on a degraded PCIe link shows up as an outlier in the matrix.
 *
 * The kernel is a 16-byte-vector grid-stride copy shipped as PTX text (ISA 7.0, sm_70) and
 * JIT-compiled by the driver for the GPU at hand (cuModuleLoadData), so no nvcc is needed at
 * build time (CUDA 13 drivers JIT it for Turing and later; its ptxas no longer targets Volta).
 *
 * Method: for each figure, `warmup` untimed copies (repeated until 50 ms went by), then
 * `reps` repetitions each timing `iters` back-to-back copies with CUDA events on the issuing
 * stream; bandwidth of a repetition = bytes moved / time, with GB = 1e9 bytes. Bidirectional
 * figures start both directions together on two streams, time each on its own stream and add
 * the two rates (nvbandwidth's total); two kernels on one GPU take half the SMs each, so they
 * run side by side. After the timed runs the destination is sampled to check the copy
 * really happened.
 * Host memory is pinned and mapped (cudaHostAlloc), so kernels can read and write it.
 */
#ifndef CC_COPYBW_H
#define CC_COPYBW_H

#include <stddef.h>

#include "core/status.h"

enum cc_copy_test {
    CC_COPY_H2D,        /* host -> device */
    CC_COPY_D2H,        /* device -> host */
    CC_COPY_HBIDIR,     /* host -> device and device -> host at once */
    CC_COPY_D2D,        /* within one device (a device-local copy) */
    CC_COPY_P2P_WRITE,  /* src GPU pushes into dst GPU (issued on src) */
    CC_COPY_P2P_READ,   /* dst GPU pulls from src GPU (issued on dst) */
    CC_COPY_P2P_BIDIR,  /* src -> dst and dst -> src at once */
    CC_COPY_TEST_COUNT
};

enum cc_copy_engine { CC_ENGINE_CE, CC_ENGINE_SM, CC_ENGINE_COUNT };

/* "h2d", "d2h", "h-bidir", "d2d", "p2p-write", "p2p-read", "p2p-bidir" / "ce", "sm" */
extern const char *const cc_copy_test_names[];
extern const char *const cc_copy_engine_names[];

struct cc_copy_params {
    size_t bytes;          /* bytes per copy (per direction); multiple of 16 */
    int iters;             /* copies per timed repetition */
    int reps;              /* timed repetitions */
    int warmup;            /* untimed copies first */
    unsigned tests;        /* bitmask of 1 << enum cc_copy_test */
    unsigned engines;      /* bitmask of 1 << enum cc_copy_engine */
    const int *devs;       /* devices to use; NULL: all */
    int ndevs;
};

struct cc_copy_result {
    enum cc_copy_test test;
    enum cc_copy_engine engine;
    int src, dst;          /* device indices; -1 is host memory */
    size_t bytes;          /* bytes moved per copy, both directions together */
    double gbps_med, gbps_min, gbps_max; /* over repetitions, GB/s (1e9 bytes/s) */
    int peer;              /* p2p: 1 direct peer access, 0 staged by the driver via host,
                              2 (bidir) one direction direct, the other staged */
    int host_numa;         /* h2d, d2h, h-bidir: NUMA node of the host buffers (the GPU's), -1
                              not known (no sysfs numa_node, or the CPUs could not be bound) */
    const char *na;        /* not measured: why (the figures are then 0) */
};

struct cc_gpu_info {
    int index;
    char name[128];
    char busid[32];
    int sms;               /* multiprocessors */
    int l2_bytes;          /* L2 cache, 0 unknown */
};

typedef void (*cc_copy_cb)(const struct cc_copy_result *r, void *user);

/* List the visible GPUs (*info malloc'd). Fails with the one-line reason of cc_cuda_load. */
cc_status cc_gpu_list(struct cc_gpu_info **info, int *n, char *err, size_t errlen);

/* Run the selected figures, calling cb for each as it is measured. */
cc_status cc_copy_run(const struct cc_copy_params *p, cc_copy_cb cb, void *user, char *err,
                      size_t errlen);

/* CUDA runtime and driver versions as "13.0" strings (after a successful cc_gpu_list). */
void cc_gpu_versions(char *rt, char *drv, size_t len);

#endif
