/* wire.h - the tcp backend's two message formats, packed big-endian with explicit offsets
 * (never a C struct on the wire), and their validation. docs/tcp.md describes the protocol.
 *
 * hello (48 bytes), sent by the connecting rank and answered by the accepting rank:
 *    0 magic "CCBT"   4 version u16   6 reserved u16 (0)   8 token[16]   24 job id u64
 *   32 rank u32      36 nranks u32   40 stream u32        44 nstreams u32
 * data frame header (16 bytes), once per collective on every socket and direction that the
 * collective uses, followed by exactly `bytes` payload bytes:
 *    0 magic "CCBD"   4 sequence number u32   8 bytes u64
 *
 * Pure logic, no sockets: unit-tested without a network. */
#ifndef CC_NET_WIRE_H
#define CC_NET_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

#define CC_WIRE_VERSION 1
#define CC_WIRE_TOKEN_BYTES 16
#define CC_WIRE_HELLO_BYTES 48
#define CC_WIRE_FRAME_BYTES 16

struct cc_wire_hello {
    uint8_t token[CC_WIRE_TOKEN_BYTES]; /* per-job secret shared over MPI */
    uint64_t job;                       /* per-job random id */
    uint32_t rank, nranks;              /* sender's rank, job size */
    uint32_t stream, nstreams;          /* socket index within the peer pair, sockets per pair */
};

void cc_wire_hello_pack(const struct cc_wire_hello *h, uint8_t out[CC_WIRE_HELLO_BYTES]);
/* Decode and check a hello against this job: magic, version, token (compared in constant
 * time), job id, nranks and nstreams equal to `want`'s, rank < nranks, stream < nstreams.
 * CC_EPARSE (malformed) or CC_EPEER (well formed but not of this job) with a reason in why. */
cc_status cc_wire_hello_check(const uint8_t in[CC_WIRE_HELLO_BYTES], const struct cc_wire_hello *want,
                              struct cc_wire_hello *got, char *why, size_t whylen);

void cc_wire_frame_pack(uint32_t seq, uint64_t bytes, uint8_t out[CC_WIRE_FRAME_BYTES]);
/* Check a data frame header: magic, sequence number `seq` and exactly `bytes` bytes (the
 * receiver always knows how much it expects; anything else is refused before any payload
 * is read). CC_EPARSE with a reason in why otherwise. */
cc_status cc_wire_frame_check(const uint8_t in[CC_WIRE_FRAME_BYTES], uint32_t seq, uint64_t bytes,
                              char *why, size_t whylen);

#endif
