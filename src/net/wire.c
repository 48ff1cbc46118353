#include "net/wire.h"

#include <string.h>

#include "core/log.h"
#include "net/be.h"

static const uint8_t hello_magic[4] = {'C', 'C', 'B', 'T'};
static const uint8_t frame_magic[4] = {'C', 'C', 'B', 'D'};

void cc_wire_hello_pack(const struct cc_wire_hello *h, uint8_t out[CC_WIRE_HELLO_BYTES])
{
    memcpy(out, hello_magic, 4);
    cc_put16(out + 4, CC_WIRE_VERSION);
    cc_put16(out + 6, 0);
    memcpy(out + 8, h->token, CC_WIRE_TOKEN_BYTES);
    cc_put64(out + 24, h->job);
    cc_put32(out + 32, h->rank);
    cc_put32(out + 36, h->nranks);
    cc_put32(out + 40, h->stream);
    cc_put32(out + 44, h->nstreams);
}

cc_status cc_wire_hello_check(const uint8_t in[CC_WIRE_HELLO_BYTES], const struct cc_wire_hello *want,
                              struct cc_wire_hello *got, char *why, size_t whylen)
{
    if (memcmp(in, hello_magic, 4) != 0) {
        cc_errbuf(why, whylen, "malformed handshake (bad magic 0x%08x)", (unsigned)cc_get32(in));
        return CC_EPARSE;
    }
    if (cc_get16(in + 4) != CC_WIRE_VERSION || cc_get16(in + 6) != 0) {
        cc_errbuf(why, whylen, "malformed handshake (protocol version %u, want %u)",
                  (unsigned)cc_get16(in + 4), CC_WIRE_VERSION);
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
    got->job = cc_get64(in + 24);
    got->rank = cc_get32(in + 32);
    got->nranks = cc_get32(in + 36);
    got->stream = cc_get32(in + 40);
    got->nstreams = cc_get32(in + 44);
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
    cc_put32(out + 4, seq);
    cc_put64(out + 8, bytes);
}

cc_status cc_wire_frame_check(const uint8_t in[CC_WIRE_FRAME_BYTES], uint32_t seq, uint64_t bytes,
                              char *why, size_t whylen)
{
    if (memcmp(in, frame_magic, 4) != 0) {
        cc_errbuf(why, whylen, "malformed data frame (bad magic 0x%08x)", (unsigned)cc_get32(in));
        return CC_EPARSE;
    }
    if (cc_get32(in + 4) != seq) {
        cc_errbuf(why, whylen, "data frame of operation %u arrived during operation %u",
                  (unsigned)cc_get32(in + 4), (unsigned)seq);
        return CC_EPARSE;
    }
    if (cc_get64(in + 8) != bytes) {
        cc_errbuf(why, whylen, "data frame announces %llu bytes, %llu expected",
                  (unsigned long long)cc_get64(in + 8), (unsigned long long)bytes);
        return CC_EPARSE;
    }
    return CC_OK;
}
