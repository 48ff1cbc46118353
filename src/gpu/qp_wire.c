/* qp_wire.c - fixed-layout, big-endian encoding of queue-pair parameters (see qp_wire.h). */
#include "gpu/qp_wire.h"

#include <string.h>

#include "core/log.h"
#include "net/be.h"

cc_status cc_qp_encode(const struct cc_qp_info *q, uint8_t *buf)
{
    if (q->nqp < 1 || q->nqp > CC_QP_WIRE_MAX || q->psn > 0xffffff ||
        (q->link != CC_QP_LINK_IB && q->link != CC_QP_LINK_ETH))
        return CC_EINVAL;
    memset(buf, 0, CC_QP_WIRE_BYTES);
    memcpy(buf, "CCQP", 4);
    cc_put16(buf + 4, CC_QP_WIRE_VERSION);
    cc_put16(buf + 6, q->nqp);
    cc_put16(buf + 8, q->lid);
    buf[10] = q->port;
    buf[11] = q->mtu;
    memcpy(buf + 12, q->gid, 16);
    cc_put32(buf + 28, q->psn);
    cc_put32(buf + 32, q->rkey);
    cc_put64(buf + 36, q->addr);
    cc_put64(buf + 44, q->len);
    for (int i = 0; i < CC_QP_WIRE_MAX; i++) {
        uint32_t o = i < q->nqp ? q->qpn_out[i] : 0, n = i < q->nqp ? q->qpn_in[i] : 0;
        if (o > 0xffffff || n > 0xffffff)
            return CC_EINVAL;
        cc_put32(buf + 52 + 4 * i, o);
        cc_put32(buf + 308 + 4 * i, n);
    }
    buf[564] = q->link;
    return CC_OK;
}

cc_status cc_qp_decode(const uint8_t *buf, size_t len, struct cc_qp_info *q, char *err,
                       size_t errlen)
{
    memset(q, 0, sizeof *q);
    if (len < CC_QP_WIRE_BYTES) {
        cc_errbuf(err, errlen, "queue-pair record of %zu bytes is too short (%d expected)", len,
                  CC_QP_WIRE_BYTES);
        return CC_EPARSE;
    }
    if (memcmp(buf, "CCQP", 4) != 0) {
        cc_errbuf(err, errlen, "queue-pair record has a wrong magic (not from ccbench?)");
        return CC_EPARSE;
    }
    uint16_t ver = cc_get16(buf + 4);
    if (ver != CC_QP_WIRE_VERSION) {
        cc_errbuf(err, errlen, "queue-pair record version %u, this ccbench speaks %d (mixed "
                  "ccbench versions?)", ver, CC_QP_WIRE_VERSION);
        return CC_EPARSE;
    }
    q->nqp = cc_get16(buf + 6);
    q->lid = cc_get16(buf + 8);
    q->port = buf[10];
    q->mtu = buf[11];
    memcpy(q->gid, buf + 12, 16);
    q->psn = cc_get32(buf + 28);
    q->rkey = cc_get32(buf + 32);
    q->addr = cc_get64(buf + 36);
    q->len = cc_get64(buf + 44);
    q->link = buf[564];
    if (q->nqp < 1 || q->nqp > CC_QP_WIRE_MAX) {
        cc_errbuf(err, errlen, "queue-pair record announces %u QPs (1 to %d allowed)", q->nqp,
                  CC_QP_WIRE_MAX);
        return CC_EPARSE;
    }
    if (q->mtu < 1 || q->mtu > 5 || q->port < 1 || q->psn > 0xffffff ||
        (q->link != CC_QP_LINK_IB && q->link != CC_QP_LINK_ETH)) {
        cc_errbuf(err, errlen, "queue-pair record has an invalid mtu %u, port %u, psn %u or "
                  "link layer %u", q->mtu, q->port, q->psn, q->link);
        return CC_EPARSE;
    }
    for (int i = 0; i < CC_QP_WIRE_MAX; i++) {
        q->qpn_out[i] = cc_get32(buf + 52 + 4 * i);
        q->qpn_in[i] = cc_get32(buf + 308 + 4 * i);
        int used = i < q->nqp;
        if ((used && (!q->qpn_out[i] || !q->qpn_in[i])) || q->qpn_out[i] > 0xffffff ||
            q->qpn_in[i] > 0xffffff || (!used && (q->qpn_out[i] || q->qpn_in[i]))) {
            cc_errbuf(err, errlen, "queue-pair record has an invalid QP number in slot %d", i);
            return CC_EPARSE;
        }
    }
    return CC_OK;
}

void cc_mr_encode(const struct cc_mr_info *m, uint8_t *buf)
{
    memcpy(buf, "CCMR", 4);
    cc_put16(buf + 4, CC_QP_WIRE_VERSION);
    cc_put16(buf + 6, 0);
    cc_put32(buf + 8, m->rkey);
    cc_put64(buf + 12, m->addr);
    cc_put64(buf + 20, m->len);
}

cc_status cc_mr_decode(const uint8_t *buf, size_t len, struct cc_mr_info *m, char *err,
                       size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (len < CC_MR_WIRE_BYTES || memcmp(buf, "CCMR", 4) != 0 ||
        cc_get16(buf + 4) != CC_QP_WIRE_VERSION) {
        cc_errbuf(err, errlen, "memory-region record is short or malformed (%zu bytes)", len);
        return CC_EPARSE;
    }
    m->rkey = cc_get32(buf + 8);
    m->addr = cc_get64(buf + 12);
    m->len = cc_get64(buf + 20);
    return CC_OK;
}
