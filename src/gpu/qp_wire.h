/* qp_wire.h - what ranks tell each other to connect RC queue pairs (pure logic, tested).
 *
 * Every rank publishes one record through cc_rte_allgather: its port address (LID, GID),
 * the queue pair numbers of the QPs it writes on (towards its right neighbour) and of the QPs
 * it is written on (from its left neighbour), their starting PSN, and the receive region its
 * left neighbour writes into (address, length, rkey). The record is serialized field by field
 * in big-endian order to a fixed size, so ranks on different hosts, compilers or builds agree
 * on it and a stale or foreign buffer is rejected rather than misread:
 *
 *   off  size  field
 *     0     4  magic "CCQP"
 *     4     2  version (CC_QP_WIRE_VERSION)
 *     6     2  nqp: QPs in each direction (1..CC_QP_WIRE_MAX)
 *     8     2  lid
 *    10     1  port
 *    11     1  active MTU (enum ibv_mtu value 1..5)
 *    12    16  gid
 *    28     4  psn (24 bits)
 *    32     4  rkey of the receive region
 *    36     8  address of the receive region
 *    44     8  length of the receive region
 *    52  4*64  qpn_out[64] (24 bits each; unused slots 0)
 *   308  4*64  qpn_in[64]
 *   564     1  link layer: 1 InfiniBand, 2 Ethernet (RoCE)
 *   565     3  zero
 *   568        total (CC_QP_WIRE_BYTES)
 *
 * Memory regions registered later (benchmark buffers) travel as a smaller record:
 *   "CCMR", version u16, pad u16, rkey u32, addr u64, len u64: 28 bytes (CC_MR_WIRE_BYTES).
 */
#ifndef CC_QP_WIRE_H
#define CC_QP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define CC_QP_WIRE_VERSION 2
#define CC_QP_WIRE_MAX 64
#define CC_QP_WIRE_BYTES 568
#define CC_MR_WIRE_BYTES 28

enum { CC_QP_LINK_IB = 1, CC_QP_LINK_ETH = 2 };

struct cc_qp_info {
    uint16_t nqp;
    uint16_t lid;
    uint8_t port;
    uint8_t mtu;
    uint8_t link;        /* CC_QP_LINK_IB or CC_QP_LINK_ETH */
    uint8_t gid[16];
    uint32_t psn;
    uint32_t rkey;
    uint64_t addr, len;
    uint32_t qpn_out[CC_QP_WIRE_MAX];
    uint32_t qpn_in[CC_QP_WIRE_MAX];
};

struct cc_mr_info {
    uint32_t rkey;
    uint64_t addr, len;
};

/* Serialize into buf[CC_QP_WIRE_BYTES]. CC_EINVAL if a field is out of range. */
cc_status cc_qp_encode(const struct cc_qp_info *q, uint8_t *buf);
/* Parse `len` bytes. CC_EPARSE with a one-line reason on a short buffer, a wrong magic or
 * version, or an out-of-range field. */
cc_status cc_qp_decode(const uint8_t *buf, size_t len, struct cc_qp_info *q, char *err,
                       size_t errlen);

void cc_mr_encode(const struct cc_mr_info *m, uint8_t *buf);
cc_status cc_mr_decode(const uint8_t *buf, size_t len, struct cc_mr_info *m, char *err,
                       size_t errlen);

#endif
