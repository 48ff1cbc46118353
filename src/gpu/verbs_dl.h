/* verbs_dl.h - libibverbs.so.1 opened with dlopen at run time (see cuda_dl.h for why).
 *
 * verbs.h implements the data path (ibv_post_send, ibv_post_recv, ibv_poll_cq) as static
 * inline functions calling through the device context's ops: those are used directly. The
 * exported functions go through this table; its fields drop the "ibv_" prefix because verbs.h
 * defines some of those names as function-like macros (ibv_reg_mr, ibv_query_port) whose
 * inline bodies would reference the library at link time. */
#ifndef CC_VERBS_DL_H
#define CC_VERBS_DL_H

#include <stddef.h>

#include "config.h"

#ifdef CC_HAVE_VERBS
#include <infiniband/verbs.h>

/* field, exported symbol */
#define CC_VERBS_FNS(X)                                                                      \
    X(get_device_list, ibv_get_device_list) X(free_device_list, ibv_free_device_list)       \
    X(get_device_name, ibv_get_device_name) X(open_device, ibv_open_device)                 \
    X(close_device, ibv_close_device) X(query_device, ibv_query_device)                     \
    X(query_gid, ibv_query_gid) X(alloc_pd, ibv_alloc_pd) X(dealloc_pd, ibv_dealloc_pd)     \
    X(reg_mr, ibv_reg_mr) X(dereg_mr, ibv_dereg_mr) X(create_cq, ibv_create_cq)             \
    X(destroy_cq, ibv_destroy_cq) X(create_qp, ibv_create_qp) X(destroy_qp, ibv_destroy_qp) \
    X(modify_qp, ibv_modify_qp) X(wc_status_str, ibv_wc_status_str)

struct cc_verbs {
    void *lib;
#define CC_VERBS_FIELD(f, sym) __typeof__(sym) *f;
    CC_VERBS_FNS(CC_VERBS_FIELD)
#undef CC_VERBS_FIELD
    /* exported ibv_query_port fills the compatible (older) layout of the port attributes */
    int (*query_port)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
    /* optional (rdma-core 34+): registration of dma-buf memory, for GPUDirect RDMA */
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);
};
#else
struct cc_verbs;
#endif

/* Load once; NULL with "RDMA verbs library not found (libibverbs.so.1 not loadable): ..." */
const struct cc_verbs *cc_verbs_load(char *err, size_t errlen);

#endif
