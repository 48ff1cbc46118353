/* be.h - big-endian field packing for the wire formats (net/wire, net/wdwire, gpu/qp_wire):
 * every format is packed with explicit offsets through these, never as a C struct. */
#ifndef CC_NET_BE_H
#define CC_NET_BE_H

#include <stdint.h>

static inline void cc_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void cc_put32(uint8_t *p, uint32_t v)
{
    cc_put16(p, (uint16_t)(v >> 16));
    cc_put16(p + 2, (uint16_t)v);
}

static inline void cc_put64(uint8_t *p, uint64_t v)
{
    cc_put32(p, (uint32_t)(v >> 32));
    cc_put32(p + 4, (uint32_t)v);
}

static inline uint16_t cc_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static inline uint32_t cc_get32(const uint8_t *p)
{
    return (uint32_t)cc_get16(p) << 16 | cc_get16(p + 2);
}

static inline uint64_t cc_get64(const uint8_t *p)
{
    return (uint64_t)cc_get32(p) << 32 | cc_get32(p + 4);
}

#endif
