/* ifmatch.h - interface selection lists in NCCL_SOCKET_IFNAME syntax.
 *
 *   "eth,ib"      names starting with "eth" or "ib"
 *   "^docker,lo"  names starting with neither "docker" nor "lo"
 *   "=eth0"       exactly "eth0" (also "^=eth0": anything but exactly "eth0")
 *
 * Pure string logic (no sockets), so it is unit-tested without a network. */
#ifndef CC_NET_IFMATCH_H
#define CC_NET_IFMATCH_H

#include <stddef.h>
#include "core/status.h"

/* The list used when the user gives none: every interface but loopback and docker bridges. */
#define CC_IF_DEFAULT "^docker,lo"

/* Is `spec` well formed (non-empty, no empty item, items shorter than an interface name)?
 * CC_EUSAGE with a one-line reason in why otherwise. */
cc_status cc_if_spec_check(const char *spec, char *why, size_t whylen);
/* Does interface `name` match `spec`? (spec assumed checked) */
int cc_if_match(const char *spec, const char *name);

#endif
