#include "net/wire.h"

#include <string.h>

#include "core/log.h"

static const uint8_t hello_magic[4] = {'C', 'C', 'B', 'T'};
static const uint8_t frame_magic[4] = {'C', 'C', 'B', 'D'};

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

void cc_wire_hello_pack(const struct cc_wire_hello *h, uint8_t out[CC_WIRE_HELLO_BYTES])
{
    memcpy(out, hello_magic, 4);
    put16(out + 4, CC_WIRE_VERSION);
    put16(out + 6, 0);
    memcpy(out + 8, h->token, CC_WIRE_TOKEN_BYTES);
    put64(out + 24, h->job);
    put32(out + 32, h->rank);
    put32(out + 36, h->nranks);
    put32(out + 40, h->stream);
    put32(out + 44, h->nstreams);
}

cc_status cc_wire_hello_check(const uint8_t in[CC_WIRE_HELLO_BYTES], const struct cc_wire_hello *want,
                              struct cc_wire_hello *got, char *why, size_t whylen)
{
    if (memcmp(in, hello_magic, 4) != 0) {
        cc_errbuf(why, whylen, "malformed handshake (bad magic 0x%08x)", (unsigned)get32(in));
        return CC_EPARSE;
    }
    if (get16(in + 4) != CC_WIRE_VERSION || get16(in + 6) != 0) {
        cc_errbuf(why, whylen, "malformed handshake (protocol version %u, want %u)",
                  (unsigned)get16(in + 4), CC_WIRE_VERSION);
        return CC_EPARSE;
    }
    uint8_t diff = 0; /* constant time: no early exit that leaks how much of a guess matched */
    for (int i = 0; i < CC_WIRE_TOKEN_BYTES; i++)
        diff |= (uint8_t)(in[8 + i] ^ want->token[i]);
    if (diff) {
        cc_errbuf(why, whylen, "bad token");
        return CC_EPEER;
    }
    memcpy(got->token, in + 8, CC_WIRE_TOKEN_BYTES);
    got->job = get64(in + 24);
    got->rank = get32(in + 32);
    got->nranks = get32(in + 36);
    got->stream = get32(in + 40);
    got->nstreams = get32(in + 44);
    if (got->job != want->job) {
        cc_errbuf(why, whylen, "job id %016llx is not this job's", (unsigned long long)got->job);
        return CC_EPEER;
    }
    if (got->nranks != want->nranks || got->rank >= got->nranks) {
        cc_errbuf(why, whylen, "rank %u of %u does not fit this job of %u ranks",
                  (unsigned)got->rank, (unsigned)got->nranks, (unsigned)want->nranks);
        return CC_EPARSE;
    }
    if (got->nstreams != want->nstreams || got->stream >= got->nstreams) {
        cc_errbuf(why, whylen, "stream %u of %u does not fit this job's %u streams per peer",
                  (unsigned)got->stream, (unsigned)got->nstreams, (unsigned)want->nstreams);
        return CC_EPARSE;
    }
    return CC_OK;
}

void cc_wire_frame_pack(uint32_t seq, uint64_t bytes, uint8_t out[CC_WIRE_FRAME_BYTES])
{
    memcpy(out, frame_magic, 4);
    put32(out + 4, seq);
    put64(out + 8, bytes);
}

cc_status cc_wire_frame_check(const uint8_t in[CC_WIRE_FRAME_BYTES], uint32_t seq, uint64_t bytes,
                              char *why, size_t whylen)
{
    if (memcmp(in, frame_magic, 4) != 0) {
        cc_errbuf(why, whylen, "malformed data frame (bad magic 0x%08x)", (unsigned)get32(in));
        return CC_EPARSE;
    }
    if (get32(in + 4) != seq) {
        cc_errbuf(why, whylen, "data frame of operation %u arrived during operation %u",
                  (unsigned)get32(in + 4), (unsigned)seq);
        return CC_EPARSE;
    }
    if (get64(in + 8) != bytes) {
        cc_errbuf(why, whylen, "data frame announces %llu bytes, %llu expected",
                  (unsigned long long)get64(in + 8), (unsigned long long)bytes);
        return CC_EPARSE;
    }
    return CC_OK;
}
