/* dl_once.h - the step every run-time loader (CUDA, NCCL, verbs) shares: load the library
 * once, remember whether that worked, and on every later call give the same answer and the
 * same one-line reason. */
#ifndef CC_GPU_DL_ONCE_H
#define CC_GPU_DL_ONCE_H

#include <stddef.h>
#include "core/log.h"

/* *state: 0 not tried yet, 1 loaded, -1 failed. load() returns 0 on success and leaves its
 * reason in `why` otherwise. Returns 0 when loaded; else copies `why` into err and returns
 * -1. */
static inline int cc_dl_once(int *state, int (*load)(void), const char *why, char *err,
                             size_t errlen)
{
    if (!*state)
        *state = load() == 0 ? 1 : -1;
    if (*state < 0) {
        cc_errbuf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

#endif
