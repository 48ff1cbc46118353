/* Unit tests of the tcp backend's pure parts: interface lists (NCCL_SOCKET_IFNAME syntax)
 * and the handshake and frame formats with their validation. No sockets needed. */
#include <stdint.h>
#include <string.h>

#include "../tap.h"
#include "core/status.h"
#include "net/ifmatch.h"
#include "net/wire.h"

static void test_ifmatch(void)
{
    char why[160];
    ok(cc_if_match("eth", "eth0"), "prefix matches eth0");
    ok(!cc_if_match("eth", "ens3"), "prefix does not match ens3");
    ok(cc_if_match("ib,eth", "eth1"), "second item of a list matches");
    ok(!cc_if_match("=eth0", "eth0.5"), "exact does not match a longer name");
    ok(cc_if_match("=eth0", "eth0"), "exact matches");
    ok(!cc_if_match("=eth", "eth0"), "exact is not a prefix");
    ok(!cc_if_match(CC_IF_DEFAULT, "lo"), "default excludes lo");
    ok(!cc_if_match(CC_IF_DEFAULT, "docker0"), "default excludes docker0");
    ok(cc_if_match(CC_IF_DEFAULT, "eth0"), "default keeps eth0");
    ok(cc_if_match("^=eth0", "eth01"), "^= excludes only the exact name");
    ok(!cc_if_match("^=eth0", "eth0"), "^= excludes the exact name");
    is_int(cc_if_spec_check("eth,ib", why, sizeof why), CC_OK, "good list accepted");
    is_int(cc_if_spec_check("", why, sizeof why), CC_EUSAGE, "empty list refused");
    is_int(cc_if_spec_check("^", why, sizeof why), CC_EUSAGE, "bare ^ refused");
    is_int(cc_if_spec_check("eth,,ib", why, sizeof why), CC_EUSAGE, "empty item refused");
    ok(strstr(why, "'eth,,ib'") != NULL, "message quotes the list: %s", why);
    is_int(cc_if_spec_check("averyveryverylongname", why, sizeof why), CC_EUSAGE,
           "name longer than IFNAMSIZ refused");
}

static void test_hello(void)
{
    struct cc_wire_hello want = {.job = 0x1122334455667788ull, .rank = 0, .nranks = 4,
                                 .stream = 0, .nstreams = 2}, h = want, got;
    uint8_t buf[CC_WIRE_HELLO_BYTES];
    char why[160];
    for (int i = 0; i < CC_WIRE_TOKEN_BYTES; i++)
        want.token[i] = h.token[i] = (uint8_t)(i * 37 + 1);
    h.rank = 3;
    h.stream = 1;
    cc_wire_hello_pack(&h, buf);
    ok(memcmp(buf, "CCBT", 4) == 0, "hello starts with its magic");
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_OK, "good hello accepted");
    is_int(got.rank, 3, "rank decoded");
    is_int(got.stream, 1, "stream decoded");
    ok(got.job == want.job, "job id decoded");

    buf[8 + 15] ^= 1;
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPEER, "bad token refused");
    is_str(why, "bad token", "reason says bad token");
    buf[8 + 15] ^= 1;

    h.job++;
    cc_wire_hello_pack(&h, buf);
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPEER, "other job refused");
    h.job--;

    h.rank = 4;
    cc_wire_hello_pack(&h, buf);
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPARSE, "rank out of range refused");
    h.rank = 3;
    h.stream = 2;
    cc_wire_hello_pack(&h, buf);
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPARSE, "stream out of range refused");
    h.stream = 0xffffffffu;
    cc_wire_hello_pack(&h, buf);
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPARSE, "huge stream refused");
    h.stream = 1;
    h.nranks = 5;
    cc_wire_hello_pack(&h, buf);
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPARSE, "other job size refused");
    h.nranks = 4;

    cc_wire_hello_pack(&h, buf);
    buf[0] = 'X';
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPARSE, "bad magic refused");
    ok(strstr(why, "malformed") != NULL, "reason says malformed: %s", why);
    cc_wire_hello_pack(&h, buf);
    buf[5] = 9;
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPARSE, "other version refused");
    memset(buf, 0, sizeof buf);
    is_int(cc_wire_hello_check(buf, &want, &got, why, sizeof why), CC_EPARSE, "zeros refused");
}

static void test_frame(void)
{
    uint8_t f[CC_WIRE_FRAME_BYTES];
    char why[160];
    cc_wire_frame_pack(7, 1ull << 40, f);
    is_int(cc_wire_frame_check(f, 7, 1ull << 40, why, sizeof why), CC_OK, "frame accepted");
    is_int(cc_wire_frame_check(f, 8, 1ull << 40, why, sizeof why), CC_EPARSE, "wrong sequence refused");
    is_int(cc_wire_frame_check(f, 7, 4096, why, sizeof why), CC_EPARSE, "longer than expected refused");
    ok(strstr(why, "1099511627776") != NULL, "reason quotes the announced length: %s", why);
    cc_wire_frame_pack(7, 0, f);
    is_int(cc_wire_frame_check(f, 7, 4096, why, sizeof why), CC_EPARSE, "shorter than expected refused");
    f[2] = 0;
    is_int(cc_wire_frame_check(f, 7, 0, why, sizeof why), CC_EPARSE, "bad frame magic refused");
}

int main(void)
{
    test_ifmatch();
    test_hello();
    test_frame();
    return tap_done();
}
