/* backend.h - one vtable per transport (mpi, tcp, verbs, nccl).
 *
 * A backend moves bytes; it knows nothing of sweeps, statistics or checking. The harness
 * (bench/harness.h) allocates buffers through it, copies inputs in and outputs out, and times
 * run()+sync(). Each backend lives in one file ending in a `const struct cc_backend`, listed
 * in backend.c's table; a backend that configure left out still appears with built = 0 and
 * says how to build it.
 *
 * Threading: all calls come from the rank's main thread. Errors: a failing call returns a
 * status and has already logged one line naming what failed (peer rank, host, address,
 * collective, size), so the caller only decides what to do next.
 */
#ifndef CC_BACKEND_H
#define CC_BACKEND_H

#include <stddef.h>
#include <jansson.h>

#include "coll/coll.h"
#include "core/status.h"
#include "rte/rte.h"

enum cc_mem { CC_MEM_HOST, CC_MEM_DEVICE };

/* Knobs of every backend, filled from the command line; a backend reads those it knows. */
struct cc_backend_conf {
    double timeout_s;        /* deadline for any blocking operation (--timeout) */
    uint64_t seed;           /* job-wide random seed (shared by rank 0) */
    size_t max_bytes;        /* largest buffer the run will ask for */
    void (*progress)(void);  /* NULL, or called (at most about once a second) while an
                                operation moves bytes: the harness's watchdog then counts a
                                long transfer that progresses as alive, not hung */
    /* tcp */
    const char *tcp_if;      /* --tcp-if, NCCL_SOCKET_IFNAME syntax; NULL: default */
    int tcp_family;          /* --tcp-family: 0 auto (NCCL_SOCKET_FAMILY, else IPv4 first), 4, 6 */
    int tcp_streams;         /* --tcp-streams, sockets per peer */
    size_t tcp_chunk;        /* --tcp-chunk, pipeline chunk bytes; 0: default */
    int tcp_stop;            /* tests (--debug-stop): 1 + the rank that stops itself (SIGSTOP)
                                at the start of its 50th tcp collective, as a hung peer would;
                                0 off (so a zeroed conf stops nobody) */
    int tcp_fail_startup;    /* tests (--debug-fail-startup): 1 + the rank that gives up (a local
                              * failure) 1 s after connecting to the lower ranks; 0 off */
    int tcp_stop_startup;    /* tests (--debug-stop-startup): 1 + the rank that stops itself
                                during start-up, before it connects to the lower ranks; 0 off */
    /* nccl / cuda */
    int gpu;                 /* --gpu, -1: local rank */
    const char *nccl_path;   /* --nccl-path nvlink|shm|net-ib|net-socket|auto */
    int cuda_graph;          /* -G: launches per CUDA graph; 0 off */
    /* verbs */
    const char *ib_dev;      /* --ib-dev, NCCL_IB_HCA syntax */
    int gid_index;           /* --gid-index, -1: auto */
    int ib_qps;              /* --ib-qps, queue pairs per peer */
};

/* The start of a reason that only passes on another rank's failure (cc_backend.init). */
#define CC_BACKEND_PEER_FAILED "another rank "

/* One collective call. Buffers are of the backend's memory kind. For in-place runs
 * sendbuf and recvbuf alias as coll.h describes. Counts are per rank, in elements. */
struct cc_coll_args {
    enum cc_coll_id coll;
    enum cc_dtype dtype;
    enum cc_op op;
    int root;
    const void *sendbuf;
    void *recvbuf;
    size_t sendcount, recvcount;
    int inplace;
    /* Device memory, warm-up and timed runs: the call may move both buffers on by
     * k * rot_stride bytes, any k < rot_slots, and should take the next k each launch, as
     * nccl-tests does, so that a size that fits in the GPU's cache (50-60 MB of L2 on an
     * H100/H200) is not timed from it when the buffers are well larger. Slots other than the
     * first hold zeros (a device backend's alloc zeroes) or earlier results. rot_slots 0 or 1:
     * the buffers as given (host backends, checked runs, the largest size). */
    size_t rot_stride;
    size_t rot_slots;
};

struct cc_backend {
    const char *name;        /* "mpi" */
    const char *summary;     /* one line for --help and `ccbench backends` */
    int built;               /* 0: configure left it out */
    const char *how_to_build;/* shown when !built */
    enum cc_mem mem;
    /* The most elements one call may pass (cc_coll_call_count): INT_MAX for an int-count API
     * such as MPI's; 0: no limit. A size beyond it is n/a in the results, not an error. */
    size_t max_call_count;
    /* Can this machine run it (driver, library, device present)? 1, or 0 with a one-line
     * reason in why. NULL: always (host backends). No communication; `ccbench backends`. */
    int (*usable)(char *why, size_t whylen);

    /* Set up on every rank (collective across ranks). On failure, ctx is untouched and a
     * one-line reason is in err; a rank that failed only because another did starts its
     * reason with CC_BACKEND_PEER_FAILED, and `bench` shows it only when no rank says more. */
    cc_status (*init)(const struct cc_backend_conf *conf, const struct cc_rte *rte, void **ctx,
                      char *err, size_t errlen);
    void (*fini)(void *ctx);
    /* May this combination run? If not, 0 and a short reason (shown as "n/a"). */
    int (*supports)(void *ctx, enum cc_coll_id coll, enum cc_dtype t, enum cc_op op,
                    int inplace, const char **why);
    /* `bytes` of the backend's memory; device memory comes zeroed (see rot_slots). */
    cc_status (*alloc)(void *ctx, size_t bytes, void **ptr);
    void (*free)(void *ctx, void *ptr);
    /* Host <-> buffer copies (memcpy for host backends). */
    cc_status (*copy_in)(void *ctx, void *dst, const void *host_src, size_t bytes);
    cc_status (*copy_out)(void *ctx, void *host_dst, const void *src, size_t bytes);
    /* Start (or perform) one collective. */
    cc_status (*run)(void *ctx, const struct cc_coll_args *a);
    /* Wait until everything started has completed on this rank. */
    cc_status (*sync)(void *ctx);
    /* Optional device timers: record a timestamp in stream order at `slot`, and read the
     * time between two recorded slots after sync(). NULL: the harness uses the host clock. */
    cc_status (*timer_record)(void *ctx, int slot);
    cc_status (*timer_elapsed_us)(void *ctx, int from, int to, double *us);
    /* Add backend facts (library versions, chosen interface, env) to the results header. */
    void (*describe)(void *ctx, json_t *obj);
};

/* NULL-terminated table of every backend, built or not. */
extern const struct cc_backend *const cc_backends[];

const struct cc_backend *cc_backend_find(const char *name);
/* "mpi|tcp|verbs|nccl" */
const char *cc_backend_list(char *buf, size_t len);

#endif
