/* Size parsing, formatting and sweeps. */
#include <stdint.h>
#include <stdlib.h>

#include "../tap.h"
#include "core/size.h"

static size_t parse(const char *s, int *okp)
{
    size_t v = 0;
    char why[128];
    *okp = cc_size_parse(s, &v, why, sizeof why) == CC_OK;
    return v;
}

int main(void)
{
    int good;
    is_int(parse("0", &good), 0, "0");
    ok(good, "0 accepted");
    is_int(parse("64", &good), 64, "plain bytes");
    is_int(parse("4K", &good), 4096, "K is 1024");
    is_int(parse("4k", &good), 4096, "lower-case k");
    is_int(parse("1M", &good), 1048576, "M");
    is_int(parse("2G", &good), 2147483648LL, "G");
    is_int(parse("1T", &good), 1099511627776LL, "T");
    is_int(parse("8MB", &good), 8 << 20, "MB suffix");
    is_int(parse("8MiB", &good), 8 << 20, "MiB suffix");
    is_int(parse("512B", &good), 512, "B suffix");
    const char *bad[] = {"", "1X", "-1", "K", "1.5M", "1MM", "12 ", " 12", "99999999999999999999",
                         "20000000T", NULL};
    for (int i = 0; bad[i]; i++) {
        parse(bad[i], &good);
        ok(!good, "rejects '%s'", bad[i]);
    }
    char why[128];
    size_t v;
    cc_size_parse("1X", &v, why, sizeof why);
    ok(strstr(why, "1X") != NULL, "message names the bad size: %s", why);

    char buf[32];
    is_str(cc_size_format(8, buf, sizeof buf), "8", "format 8");
    is_str(cc_size_format(4096, buf, sizeof buf), "4K", "format 4K");
    is_str(cc_size_format(64 << 20, buf, sizeof buf), "64M", "format 64M");
    is_str(cc_size_format(1536 * 1024, buf, sizeof buf), "1.5M", "format 1.5M");
    is_str(cc_size_format(1152, buf, sizeof buf), "1.125K", "format 1.125K");
    /* beyond 2^53 a double rounds: the exact size, not the nearest whole unit */
    is_str(cc_size_format(SIZE_MAX, buf, sizeof buf), "18446744073709551615", "format 2^64-1 exactly");
    is_str(cc_size_format(9007199254740993ull, buf, sizeof buf), "9007199254740993",
           "format 2^53+1 exactly");
    is_str(cc_size_format((size_t)1 << 60, buf, sizeof buf), "1048576T", "format 2^60 as 1048576T");
    is_str(cc_size_format(1049600, buf, sizeof buf), "1025K", "format 1025K, not 1M");
    is_str(cc_size_format(1000500, buf, sizeof buf), "1000500", "format 1000500: bytes, never rounded");

    /* sweeps */
    size_t *s, n;
    struct cc_sweep sw = {8, 64 << 20, 2, 0};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_OK, "8..64M x2");
    is_int(n, 24, "24 sizes from 8 B to 64 MiB");
    is_int(s[0], 8, "first 8");
    is_int(s[n - 1], 64 << 20, "last 64M");
    free(s);
    /* granule: allgather of float32 on 3 ranks needs multiples of 12 */
    sw = (struct cc_sweep){8, 1024, 2, 0};
    ok(cc_sweep_expand(&sw, 12, &s, &n, why, sizeof why) == CC_OK, "granule 12");
    int allmult = 1;
    for (size_t i = 0; i < n; i++)
        allmult &= s[i] % 12 == 0 && s[i] >= 8 && s[i] <= 1024;
    ok(allmult, "every size a multiple of 12 within range");
    is_int(s[0], 12, "min rounded up to 12");
    is_int(s[n - 1], 1020, "max rounded down to 1020");
    free(s);
    /* linear steps */
    sw = (struct cc_sweep){100, 500, 1, 100};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_OK, "linear sweep");
    is_int(n, 5, "100,200,...,500");
    is_int(s[2], 300, "third is 300");
    free(s);
    /* errors */
    sw = (struct cc_sweep){1024, 8, 2, 0};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_EUSAGE, "min > max rejected");
    ok(strstr(why, "larger") != NULL, "min > max message: %s", why);
    sw = (struct cc_sweep){5, 5, 2, 0};
    ok(cc_sweep_expand(&sw, 16, &s, &n, why, sizeof why) == CC_EINFEASIBLE,
       "a single size that does not divide is rejected");
    ok(strstr(why, "multiple of 16") != NULL, "divisibility message: %s", why);
    sw = (struct cc_sweep){8, 64, 1, 0};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_EUSAGE, "no step rejected");
    /* a factor below 1 is no sweep (it used to be read as linear steps), and a step with a
     * factor above 1 would be ignored (it used to be, silently) */
    sw = (struct cc_sweep){8, 64, -2, 0};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_EUSAGE && !s &&
           strstr(why, "step factor -2 is less than 1"), "-f -2 rejected: %s", why);
    sw = (struct cc_sweep){8, 64, 0.5, 8};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_EUSAGE && !s &&
           strstr(why, "step factor 0.5 is less than 1"), "-f 0.5 -i 8 rejected: %s", why);
    sw = (struct cc_sweep){8, 8, 0, 0};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_EUSAGE && !s,
       "-f 0 rejected for a single size too: %s", why);
    sw = (struct cc_sweep){8, 64, 2, 8};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_EUSAGE && !s &&
           strstr(why, "step bytes 8 apply only with step factor 1, not 2"),
       "-f 2 -i 8 rejected: %s", why);
    /* a factor barely above 1 advances one granule per step (it used to repeat the same
     * rounded size for ever), and ends */
    sw = (struct cc_sweep){8, 64, 1.000000000000001, 0};
    ok(cc_sweep_expand(&sw, 4, &s, &n, why, sizeof why) == CC_OK, "-f 1.000000000000001 ends");
    is_int(n, 15, "8..64 in steps of one granule (4): 15 sizes");
    is_int(s[1], 12, "the second size is one granule up");
    free(s);
    /* a step below the granule advances by a granule too */
    sw = (struct cc_sweep){8, 64, 1, 1};
    ok(cc_sweep_expand(&sw, 8, &s, &n, why, sizeof why) == CC_OK && n == 8 && s[1] == 16,
       "-i 1 with granule 8: 8, 16, ..., 64");
    free(s);
    /* too many sizes: refused before anything is allocated, with the numbers that explain it */
    sw = (struct cc_sweep){8, 64 << 20, 1.000000000000001, 0};
    ok(cc_sweep_expand(&sw, 4, &s, &n, why, sizeof why) == CC_EUSAGE && !s && !n,
       "-f 1.000000000000001 up to 64M: refused");
    ok(strstr(why, "step factor 1.000000000000001 gives more than 10000 sizes from 8 to 64M"),
       "the message names the factor, the cap and the range: %s", why);
    sw = (struct cc_sweep){4, (size_t)1 << 40, 1, 4};
    ok(cc_sweep_expand(&sw, 4, &s, &n, why, sizeof why) == CC_EUSAGE && !s,
       "-i 4 up to 1T: refused (it used to exhaust memory)");
    ok(strstr(why, "step of 4 bytes gives more than 10000 sizes from 4 to 1T"), "message: %s", why);
    sw = (struct cc_sweep){4, 4 * CC_SWEEP_MAX_SIZES, 1, 4};
    ok(cc_sweep_expand(&sw, 4, &s, &n, why, sizeof why) == CC_OK && n == CC_SWEEP_MAX_SIZES,
       "exactly %d sizes are accepted", CC_SWEEP_MAX_SIZES);
    free(s);
    sw = (struct cc_sweep){4, 4 * CC_SWEEP_MAX_SIZES + 4, 1, 4};
    ok(cc_sweep_expand(&sw, 4, &s, &n, why, sizeof why) == CC_EUSAGE, "one more is refused");
    /* the largest sizes do not overflow the walk */
    sw = (struct cc_sweep){(size_t)1 << 62, SIZE_MAX, 2, 0};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_OK && n == 3 &&
           s[1] == (size_t)1 << 63 && s[2] == SIZE_MAX,
       "2^62 .. SIZE_MAX: 2^62, 2^63, SIZE_MAX");
    free(s);
    /* above 2^53 a double cannot tell cur from cur + 1: the walk still advances */
    size_t big = (size_t)1 << 53;
    sw = (struct cc_sweep){big, big + 8, 1, 1};
    cc_status st = cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why);
    ok(st == CC_OK && n == 9 && s[3] == big + 3 && s[8] == big + 8,
       "2^53 .. 2^53+8 in steps of 1: all nine sizes (n=%zu)", n);
    free(s);
    sw = (struct cc_sweep){(size_t)8192 << 40, (size_t)8193 << 40, 1, 1};
    ok(cc_sweep_expand(&sw, 1, &s, &n, why, sizeof why) == CC_EUSAGE && !s,
       "8192T .. 8193T in steps of 1 byte: refused, not a loop for ever");
    sw = (struct cc_sweep){big, big + 64, 1.0000000000000002, 0};
    st = cc_sweep_expand(&sw, 4, &s, &n, why, sizeof why);
    ok(st == CC_OK && n == 17 && s[1] == big + 4 && s[16] == big + 64,
       "a factor that rounds to nothing at 2^53 advances one granule (n=%zu)", n);
    free(s);
    sw = (struct cc_sweep){4096, 4096, 2, 0};
    ok(cc_sweep_expand(&sw, 4, &s, &n, why, sizeof why) == CC_OK && n == 1 && s[0] == 4096,
       "single size");
    free(s);
    return tap_done();
}
