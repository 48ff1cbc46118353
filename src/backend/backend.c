#include "backend/backend.h"

#include <stdio.h>
#include <string.h>

extern const struct cc_backend cc_backend_mpi, cc_backend_tcp, cc_backend_verbs,
    cc_backend_nccl;

const struct cc_backend *const cc_backends[] = {
    &cc_backend_mpi, &cc_backend_tcp, &cc_backend_verbs, &cc_backend_nccl, NULL,
};

const struct cc_backend *cc_backend_find(const char *name)
{
    for (int i = 0; cc_backends[i]; i++)
        if (strcmp(cc_backends[i]->name, name) == 0)
            return cc_backends[i];
    return NULL;
}

const char *cc_backend_list(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; cc_backends[i]; i++) {
        int w = snprintf(buf + n, len - n, "%s%s", i ? "|" : "", cc_backends[i]->name);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    return buf;
}
