/* Unit tests of the GPU/RDMA logic that needs no hardware: --nccl-path mapping, device-list
 * (NCCL_IB_HCA syntax) parsing and matching, GID choice from in-memory and fake-sysfs
 * tables, and the queue-pair record encoding. */
#include <stdlib.h>
#include <string.h>

#include "gpu/ib_select.h"
#include "gpu/nccl_path.h"
#include "gpu/qp_wire.h"
#include "tap.h"

static const char *var(const struct cc_nccl_var *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return v[i].value;
    return NULL;
}

static void test_nccl_path(void)
{
    struct cc_nccl_var v[CC_NCCL_PATH_MAX_VARS];
    size_t n = 99;
    char err[256];
    is_int(cc_nccl_path_vars("auto", v, &n, err, sizeof err), CC_OK, "auto accepted");
    is_int(n, 0, "auto sets nothing");
    is_int(cc_nccl_path_vars(NULL, v, &n, err, sizeof err), CC_OK, "NULL is auto");
    is_int(n, 0, "NULL sets nothing");

    is_int(cc_nccl_path_vars("nvlink", v, &n, err, sizeof err), CC_OK, "nvlink accepted");
    is_str(var(v, n, "NCCL_P2P_DISABLE"), "0", "nvlink keeps P2P");
    is_str(var(v, n, "NCCL_P2P_LEVEL"), "NVL", "nvlink restricts P2P to NVLink");
    is_str(var(v, n, "NCCL_SHM_DISABLE"), "1", "nvlink disables SHM");
    ok(var(v, n, "NCCL_NET") == NULL, "nvlink does not pick a network");

    is_int(cc_nccl_path_vars("shm", v, &n, err, sizeof err), CC_OK, "shm accepted");
    is_str(var(v, n, "NCCL_P2P_DISABLE"), "1", "shm disables P2P");
    is_str(var(v, n, "NCCL_SHM_DISABLE"), "0", "shm keeps SHM");
    is_str(var(v, n, "NCCL_NVLS_ENABLE"), "0", "shm disables NVLS");

    is_int(cc_nccl_path_vars("net-ib", v, &n, err, sizeof err), CC_OK, "net-ib accepted");
    is_str(var(v, n, "NCCL_NET"), "IB", "net-ib selects the IB network");
    is_str(var(v, n, "NCCL_IB_DISABLE"), "0", "net-ib enables IB");
    is_str(var(v, n, "NCCL_P2P_DISABLE"), "1", "net-ib disables P2P");
    is_str(var(v, n, "NCCL_SHM_DISABLE"), "1", "net-ib disables SHM");

    is_int(cc_nccl_path_vars("net-socket", v, &n, err, sizeof err), CC_OK, "net-socket accepted");
    is_str(var(v, n, "NCCL_NET"), "Socket", "net-socket selects sockets");
    is_str(var(v, n, "NCCL_IB_DISABLE"), "1", "net-socket disables IB");
    is_str(var(v, n, "NCCL_SHM_DISABLE"), "1", "net-socket disables SHM");

    is_int(cc_nccl_path_vars("nvlnk", v, &n, err, sizeof err), CC_EUSAGE, "typo rejected");
    ok(strstr(err, "'nvlnk'") != NULL, "message quotes the bad path: %s", err);
    is_int(n, 0, "nothing set for a bad path");
}

static void test_hca(void)
{
    struct cc_hca_filter f;
    char err[256];
    is_int(cc_hca_parse(NULL, &f, err, sizeof err), CC_OK, "NULL list");
    ok(cc_hca_match(&f, "mlx5_0", 1), "empty list matches all");

    is_int(cc_hca_parse("mlx5_0:1,mlx5_1", &f, err, sizeof err), CC_OK, "two entries");
    is_int(f.n, 2, "two parsed");
    ok(cc_hca_match(&f, "mlx5_0", 1), "mlx5_0:1 matches");
    ok(!cc_hca_match(&f, "mlx5_0", 2), "mlx5_0:2 does not (port given)");
    ok(cc_hca_match(&f, "mlx5_1", 2), "mlx5_1 any port");
    ok(cc_hca_match(&f, "mlx5_10", 1), "prefix match: mlx5_1 matches mlx5_10");
    ok(!cc_hca_match(&f, "mlx5_2", 1), "mlx5_2 not listed");

    is_int(cc_hca_parse("=mlx5_1", &f, err, sizeof err), CC_OK, "exact");
    ok(f.exact && !f.exclude, "exact flag");
    ok(cc_hca_match(&f, "mlx5_1", 1), "exact name matches");
    ok(!cc_hca_match(&f, "mlx5_10", 1), "exact: mlx5_10 does not match mlx5_1");

    is_int(cc_hca_parse("^mlx5_3", &f, err, sizeof err), CC_OK, "exclude");
    ok(!cc_hca_match(&f, "mlx5_3", 1), "excluded device");
    ok(cc_hca_match(&f, "mlx5_0", 1), "other devices pass");

    is_int(cc_hca_parse("^=mlx5_1:1", &f, err, sizeof err), CC_OK, "exclude exact with port");
    ok(!cc_hca_match(&f, "mlx5_1", 1), "mlx5_1:1 excluded");
    ok(cc_hca_match(&f, "mlx5_1", 2), "mlx5_1:2 kept");
    ok(cc_hca_match(&f, "mlx5_10", 1), "mlx5_10 kept (exact)");

    is_int(cc_hca_parse("mlx5_0:x", &f, err, sizeof err), CC_EUSAGE, "bad port rejected");
    ok(strstr(err, "'x'") != NULL, "message quotes the port: %s", err);
    is_int(cc_hca_parse("mlx5_0:0", &f, err, sizeof err), CC_EUSAGE, "port 0 rejected");
    is_int(cc_hca_parse("mlx5_0,,mlx5_1", &f, err, sizeof err), CC_EUSAGE, "empty entry rejected");
    is_int(cc_hca_parse("mlx5_0:", &f, err, sizeof err), CC_EUSAGE, "missing port rejected");
}

static struct cc_gid_entry gid(int index, const char *text, enum cc_gid_type t)
{
    struct cc_gid_entry e = {.index = index, .type = t};
    if (cc_gid_parse(text, e.raw) != 0)
        memset(e.raw, 0xee, sizeof e.raw);
    return e;
}

static void test_gid_choose(void)
{
    char why[256];
    uint8_t raw[16];
    char buf[48];
    ok(cc_gid_parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001", raw) == 0, "gid parses");
    is_str(cc_gid_format(raw, buf, sizeof buf), "fe80:0000:0000:0000:0202:c9ff:fe00:0001",
           "gid formats back");
    ok(cc_gid_parse("fe80:0000:0000", raw) != 0, "short gid rejected");
    ok(cc_gid_parse("fe80:0000:0000:0000:0202:c9ff:fe00:00zz", raw) != 0, "non-hex rejected");

    struct cc_gid_entry t[] = {
        gid(0, "fe80:0000:0000:0000:0202:c9ff:fe00:0001", CC_GID_IB_ROCE_V1),
        gid(1, "fe80:0000:0000:0000:0202:c9ff:fe00:0001", CC_GID_ROCE_V2),
        gid(2, "2001:0db8:0000:0000:0000:0000:0000:0001", CC_GID_ROCE_V2),
        gid(3, "0000:0000:0000:0000:0000:ffff:0a00:0001", CC_GID_IB_ROCE_V1),
        gid(4, "0000:0000:0000:0000:0000:ffff:0a00:0001", CC_GID_ROCE_V2),
    };
    is_int(cc_gid_choose(t, 5, 1, why, sizeof why), 4, "RoCE v2 IPv4 preferred over IPv6");
    is_int(cc_gid_choose(t, 4, 1, why, sizeof why), 2, "else RoCE v2 global IPv6");
    is_int(cc_gid_choose(t, 2, 1, why, sizeof why), -1, "v1 and link-local never chosen");
    ok(strstr(why, "RoCE v2") != NULL, "reason given: %s", why);
    is_int(cc_gid_choose(t, 5, 0, why, sizeof why), 0, "InfiniBand: index 0");
    is_int(cc_gid_choose(t + 1, 4, 0, why, sizeof why), -1, "InfiniBand without index 0 fails");
}

/* Which ports ranks take: InfiniBand where there is any, else RoCE with a routable GID. */
static void test_port_keep(void)
{
    int keep[8];
    /* a DGX: an Ethernet storage port first, then two InfiniBand ports, a second Ethernet */
    struct cc_port_cand dgx[] = {{1, 1}, {0, 1}, {0, 1}, {1, 0}};
    is_int(cc_port_keep(dgx, 4, keep), 2, "InfiniBand and Ethernet: the two InfiniBand ports");
    ok(keep[0] == 1 && keep[1] == 2, "... in their order (%d, %d)", keep[0], keep[1]);
    /* RoCE only: the ports without a routable GID are left out */
    struct cc_port_cand roce[] = {{1, 0}, {1, 1}, {1, 1}};
    is_int(cc_port_keep(roce, 3, keep), 2, "RoCE: the routable ports only");
    ok(keep[0] == 1 && keep[1] == 2, "... the second and third (%d, %d)", keep[0], keep[1]);
    struct cc_port_cand none[] = {{1, 0}, {1, 0}};
    is_int(cc_port_keep(none, 2, keep), 0, "RoCE without a routable GID: none");
}

static void test_gid_sysfs(void)
{
    const char *src = getenv("CC_SRCDIR");
    char root[1024], err[512], why[256];
    struct cc_gid_entry *t;
    size_t n;
    snprintf(root, sizeof root, "%s/tests/gpu/fake-sysfs", src ? src : ".");

    is_int(cc_gid_read_sysfs(root, "roce0", 1, &t, &n, err, sizeof err), CC_OK, "read roce0:1");
    is_int(n, 4, "four used slots (the zero GID is skipped)");
    if (n == 4) {
        is_int(t[3].index, 3, "index kept");
        is_int(t[3].type, CC_GID_ROCE_V2, "type read");
        is_int(t[0].type, CC_GID_IB_ROCE_V1, "v1 type read");
    }
    is_int(cc_gid_choose(t, n, 1, why, sizeof why), 3, "roce0: RoCE v2 IPv4 GID at index 3");
    free(t);

    is_int(cc_gid_read_sysfs(root, "roce6", 1, &t, &n, err, sizeof err), CC_OK, "read roce6:1");
    is_int(cc_gid_choose(t, n, 1, why, sizeof why), 2, "roce6: RoCE v2 global IPv6 at index 2");
    free(t);

    is_int(cc_gid_read_sysfs(root, "ll0", 1, &t, &n, err, sizeof err), CC_OK, "read ll0:1");
    is_int(cc_gid_choose(t, n, 1, why, sizeof why), -1, "ll0: only link-local, none chosen");
    free(t);

    is_int(cc_gid_read_sysfs(root, "ib0", 1, &t, &n, err, sizeof err), CC_OK, "read ib0:1");
    is_int(cc_gid_choose(t, n, 0, why, sizeof why), 0, "ib0: InfiniBand port GID 0");
    free(t);

    is_int(cc_gid_read_sysfs(root, "nosuch", 1, &t, &n, err, sizeof err), CC_ENODEV,
           "missing device");
    ok(strstr(err, "nosuch:1") != NULL, "message names device and port: %s", err);
}

static void test_qp_wire(void)
{
    struct cc_qp_info q = {.nqp = 3, .lid = 0x1234, .port = 1, .mtu = 5, .link = CC_QP_LINK_ETH, .psn = 0xabcdef,
                           .rkey = 0xdeadbeef, .addr = 0x7f0012345678ull, .len = 1ull << 33};
    for (int i = 0; i < 16; i++)
        q.gid[i] = (uint8_t)(0xf0 + i);
    for (int i = 0; i < 3; i++) {
        q.qpn_out[i] = 0x100 + (uint32_t)i;
        q.qpn_in[i] = 0xfff000 + (uint32_t)i;
    }
    uint8_t buf[CC_QP_WIRE_BYTES + 8];
    struct cc_qp_info r;
    char err[256];
    is_int(cc_qp_encode(&q, buf), CC_OK, "encode");
    ok(memcmp(buf, "CCQP", 4) == 0, "magic first");
    is_int(buf[4] << 8 | buf[5], CC_QP_WIRE_VERSION, "version big-endian at offset 4");
    ok(buf[28] == 0x00 && buf[29] == 0xab && buf[30] == 0xcd && buf[31] == 0xef,
       "psn big-endian at offset 28");
    ok(buf[32] == 0xde && buf[35] == 0xef, "rkey big-endian at offset 32");
    is_int(cc_qp_decode(buf, CC_QP_WIRE_BYTES, &r, err, sizeof err), CC_OK, "decode");
    ok(r.nqp == q.nqp && r.lid == q.lid && r.port == q.port && r.mtu == q.mtu && r.link == q.link &&
       r.psn == q.psn && r.rkey == q.rkey && r.addr == q.addr && r.len == q.len,
       "scalar fields round-trip");
    ok(memcmp(r.gid, q.gid, 16) == 0, "gid round-trips");
    ok(memcmp(r.qpn_out, q.qpn_out, sizeof q.qpn_out) == 0 &&
       memcmp(r.qpn_in, q.qpn_in, sizeof q.qpn_in) == 0, "QP numbers round-trip");

    is_int(cc_qp_decode(buf, CC_QP_WIRE_BYTES - 1, &r, err, sizeof err), CC_EPARSE,
           "short buffer rejected");
    ok(strstr(err, "too short") != NULL, "says too short: %s", err);
    is_int(cc_qp_decode(buf, 0, &r, err, sizeof err), CC_EPARSE, "empty buffer rejected");

    uint8_t bad[CC_QP_WIRE_BYTES];
    memcpy(bad, buf, sizeof bad);
    bad[0] = 'X';
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "bad magic rejected");
    memcpy(bad, buf, sizeof bad);
    bad[5] = 9;
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "other version rejected");
    ok(strstr(err, "version 9") != NULL, "names the version: %s", err);
    memcpy(bad, buf, sizeof bad);
    bad[6] = 0, bad[7] = 65;
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "65 QPs rejected");
    memcpy(bad, buf, sizeof bad);
    bad[6] = 0, bad[7] = 0;
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "0 QPs rejected");
    memcpy(bad, buf, sizeof bad);
    bad[11] = 7;
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "mtu 7 rejected");
    ok(buf[564] == CC_QP_LINK_ETH, "link layer at offset 564");
    memcpy(bad, buf, sizeof bad);
    bad[564] = 3;
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "link layer 3 rejected");
    ok(strstr(err, "link layer 3") != NULL, "names the link layer: %s", err);
    memcpy(bad, buf, sizeof bad);
    bad[52] = 1; /* qpn_out[0] > 24 bits */
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "QPN over 24 bits rejected");
    memcpy(bad, buf, sizeof bad);
    bad[52 + 4 * 5 + 3] = 1; /* a slot beyond nqp in use */
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "stray QPN rejected");
    memcpy(bad, buf, sizeof bad);
    memset(bad + 308, 0, 4); /* qpn_in[0] zero */
    is_int(cc_qp_decode(bad, sizeof bad, &r, err, sizeof err), CC_EPARSE, "zero QPN rejected");

    struct cc_qp_info big = q;
    big.psn = 0x1000000;
    is_int(cc_qp_encode(&big, buf), CC_EINVAL, "encode refuses a 25-bit psn");
    big = q;
    big.nqp = 0;
    is_int(cc_qp_encode(&big, buf), CC_EINVAL, "encode refuses 0 QPs");

    struct cc_mr_info m = {.rkey = 0x01020304, .addr = 0x1122334455667788ull, .len = 4096}, m2;
    uint8_t mb[CC_MR_WIRE_BYTES];
    cc_mr_encode(&m, mb);
    is_int(cc_mr_decode(mb, sizeof mb, &m2, err, sizeof err), CC_OK, "mr decode");
    ok(m2.rkey == m.rkey && m2.addr == m.addr && m2.len == m.len, "mr round-trips");
    is_int(cc_mr_decode(mb, sizeof mb - 1, &m2, err, sizeof err), CC_EPARSE, "short mr rejected");
    mb[1] = 'X';
    is_int(cc_mr_decode(mb, sizeof mb, &m2, err, sizeof err), CC_EPARSE, "bad mr magic rejected");
}

/* ncclGetVersion's codes: major*10000+minor*100+patch from 2.9, major*1000+... before */
static void test_nccl_version(void)
{
    char b[32];
    is_str(cc_nccl_version_text(22809, b, sizeof b), "2.28.9", "NCCL 2.28.9");
    is_str(cc_nccl_version_text(20903, b, sizeof b), "2.9.3", "NCCL 2.9.3 (first five-digit code)");
    is_str(cc_nccl_version_text(2804, b, sizeof b), "2.8.4", "NCCL 2.8.4 (four-digit code)");
}

int main(void)
{
    test_nccl_version();
    test_nccl_path();
    test_hca();
    test_gid_choose();
    test_port_keep();
    test_gid_sysfs();
    test_qp_wire();
    return tap_done();
}
