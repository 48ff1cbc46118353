/* cuda_dl.h - the CUDA runtime and driver, opened with dlopen at run time.
 *
 * ccbench is compiled against the CUDA headers only, never linked with libcudart or libcuda,
 * so one binary runs on a laptop without a GPU and on a GPU node. cc_cuda_load() opens
 * libcuda.so.1 (the driver: its absence means "no GPU driver on this machine") and then the
 * first of libcudart.so.13, .12, .11, libcudart.so, and resolves every function ccbench uses
 * into one table. Only the functions below may be called; add them to the lists to use more.
 *
 * Without CUDA headers at build time (no CC_HAVE_CUDA) the loader still exists and always
 * fails with a message saying how to build with CUDA.
 */
#ifndef CC_CUDA_DL_H
#define CC_CUDA_DL_H

#include <stddef.h>

#include "config.h"
#include "core/status.h"

#ifdef CC_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

/* Runtime API functions used (names as exported by libcudart; none is a _v2/_ptsz alias). */
#define CC_CUDA_RT_FNS(X)                                                                    \
    X(cudaGetDeviceCount) X(cudaSetDevice) X(cudaGetDevice) X(cudaDeviceGetAttribute)        \
    X(cudaDeviceGetPCIBusId) X(cudaMalloc) X(cudaFree) X(cudaHostAlloc) X(cudaFreeHost)      \
    X(cudaMemcpy) X(cudaMemcpyAsync) X(cudaMemcpyPeerAsync) X(cudaMemset)                    \
    X(cudaStreamCreateWithFlags) X(cudaStreamDestroy) X(cudaStreamSynchronize)               \
    X(cudaStreamQuery)                                                                       \
    X(cudaStreamWaitEvent) X(cudaEventCreate) X(cudaEventDestroy) X(cudaEventRecord)         \
    X(cudaEventSynchronize) X(cudaEventElapsedTime) X(cudaGetErrorString)                    \
    X(cudaGetLastError) X(cudaRuntimeGetVersion) X(cudaDriverGetVersion)                     \
    X(cudaDeviceCanAccessPeer) X(cudaDeviceEnablePeerAccess) X(cudaDeviceSynchronize)        \
    X(cudaStreamBeginCapture) X(cudaStreamEndCapture) X(cudaGraphInstantiateWithFlags)       \
    X(cudaGraphLaunch) X(cudaGraphExecDestroy) X(cudaGraphDestroy)

/* Driver API functions used: the copy kernel (PTX loaded at run time), device names, and the
 * dma-buf export of device memory for GPUDirect RDMA. */
#define CC_CUDA_DRV_FNS(X)                                                                   \
    X(cuInit) X(cuDeviceGet) X(cuDeviceGetName) X(cuModuleLoadData) X(cuModuleUnload)       \
    X(cuModuleGetFunction) X(cuLaunchKernel) X(cuGetErrorString) X(cuCtxGetCurrent)            \
    X(cuCtxSetCurrent)

/* Optional driver functions (NULL when the driver is too old). */
#define CC_CUDA_DRV_OPT_FNS(X) X(cuMemGetHandleForAddressRange) X(cuFlushGPUDirectRDMAWrites)

#define CC_CUDA_FIELD(name) __typeof__(name) *name;

struct cc_cuda {
    void *rt, *drv;            /* dlopen handles */
    const char *rt_name;       /* the libcudart file that was opened */
    int rt_version;            /* cudaRuntimeGetVersion: 12040 = 12.4 */
    int drv_version;           /* cudaDriverGetVersion: newest CUDA the driver supports */
    int ndev;                  /* visible devices */
    CC_CUDA_RT_FNS(CC_CUDA_FIELD)
    CC_CUDA_DRV_FNS(CC_CUDA_FIELD)
    CC_CUDA_DRV_OPT_FNS(CC_CUDA_FIELD)
};
#undef CC_CUDA_FIELD
#else
struct cc_cuda;
#endif

/* Load (once per process) and return the table, or NULL with a one-line reason in err:
 *   "no CUDA driver found (libcuda.so.1 not loadable): ..."
 *   "no CUDA runtime found (tried libcudart.so.13, ...): ..."
 *   "no CUDA device: <driver's reason>" / "no CUDA device visible (CUDA_VISIBLE_DEVICES='')".
 * The table stays valid until exit. Thread-unsafe: call from the main thread. */
const struct cc_cuda *cc_cuda_load(char *err, size_t errlen);

#endif
