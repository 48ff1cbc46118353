/* ib_select.h - choosing an RDMA device, port and GID (pure logic, unit-tested).
 *
 * Device list syntax is NCCL_IB_HCA's: comma-separated `name[:port]` entries matched as name
 * prefixes; a leading `^` excludes the listed devices instead, a leading `=` (after any `^`)
 * makes names match exactly. "mlx5_0:1,mlx5_1" / "^mlx5_3" / "=mlx5_1" / "^=mlx5_10:1".
 *
 * GID choice follows what RoCE needs to cross a router: on an Ethernet (RoCE) port the first
 * RoCE v2 GID holding an IPv4-mapped address, else the first RoCE v2 GID with a global IPv6
 * address (not fe80::/10); RoCE v1 and link-local GIDs are never chosen automatically. On an
 * InfiniBand port GID index 0 (the port GID) is used.
 */
#ifndef CC_IB_SELECT_H
#define CC_IB_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define CC_HCA_MAX 32
#define CC_HCA_NAME 64

struct cc_hca_filter {
    int exclude;  /* leading '^' */
    int exact;    /* leading '=' */
    int n;        /* entries; 0: every device matches */
    struct {
        char name[CC_HCA_NAME];
        int port; /* -1: any port */
    } e[CC_HCA_MAX];
};

/* Parse a device list (NULL or "" matches everything). CC_EUSAGE with a message on an
 * empty entry, a bad port, a name too long or too many entries. */
cc_status cc_hca_parse(const char *spec, struct cc_hca_filter *f, char *err, size_t errlen);
/* Does device `dev`, port `port` pass the filter? */
int cc_hca_match(const struct cc_hca_filter *f, const char *dev, int port);

/* An ACTIVE port a rank could take. */
struct cc_port_cand {
    int ethernet; /* link layer Ethernet (RoCE); else InfiniBand */
    int usable;   /* InfiniBand, or RoCE with a routable RoCE v2 GID (or a GID index given) */
};

/* The ports ranks may take, their indexes in keep[] (in order); returns how many. InfiniBand
 * ports where a host has any (its Ethernet RDMA ports beside them serve storage or management
 * networks), else the usable Ethernet ones: a RoCE port without a routable GID cannot carry
 * traffic between hosts. */
int cc_port_keep(const struct cc_port_cand *c, int n, int *keep);

enum cc_gid_type { CC_GID_IB_ROCE_V1, CC_GID_ROCE_V2 };

struct cc_gid_entry {
    int index;              /* index in the port's GID table */
    uint8_t raw[16];        /* network byte order */
    enum cc_gid_type type;  /* from gid_attrs/types: "IB/RoCE v1" or "RoCE v2" */
};

/* Index of the GID to use, or -1 with a reason in why. is_ethernet: the port's link layer is
 * Ethernet (RoCE); otherwise InfiniBand. Entries with an all-zero GID are unused slots. */
int cc_gid_choose(const struct cc_gid_entry *t, size_t n, int is_ethernet, char *why,
                  size_t whylen);

/* Read the GID table of `dev` port `port` from sysfs below `root` ("/sys" on a real
 * machine): root/class/infiniband/DEV/ports/PORT/gids/I and .../gid_attrs/types/I. Unused
 * and unreadable slots are left out. *t is malloc'd (free it). CC_ENODEV if the port
 * directory does not exist. */
cc_status cc_gid_read_sysfs(const char *root, const char *dev, int port,
                            struct cc_gid_entry **t, size_t *n, char *err, size_t errlen);

/* "fe80:0000:...:0001" (8 groups of 4 hex digits) to 16 bytes; 0 on success. */
int cc_gid_parse(const char *text, uint8_t raw[16]);
/* 16 bytes to the same text form; buf needs 40 bytes. */
const char *cc_gid_format(const uint8_t raw[16], char *buf, size_t len);

#endif
