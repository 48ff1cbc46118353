/* The option table: defaults, long/short forms, values, errors, help. */
#include <stddef.h>
#include <stdlib.h>

#include "../tap.h"
#include "core/opt.h"

struct cfg {
    size_t minb;
    int iters, flag, choice, hidden;
    double prec;
    long long seed;
    const char *name;
};

static const char *const colors[] = {"red", "green", "blue", NULL};

#define F(x) offsetof(struct cfg, x)
static const struct cc_opt opts[] = {
    {"minbytes", 'b', CC_OPT_SIZE, F(minb), "8", "SIZE", "min"},
    {"iters", 'n', CC_OPT_INT, F(iters), "20", "N", "iters", NULL, CC_OPT_RANGE, 1, 1000},
    {"flag", 0, CC_OPT_FLAG, F(flag), NULL, NULL, "a flag"},
    {"color", 'c', CC_OPT_CHOICE, F(choice), "green", NULL, "color", colors},
    {"precision", 0, CC_OPT_DOUBLE, F(prec), "2.5", "PCT", "precision"},
    {"seed", 0, CC_OPT_LONG, F(seed), "42", "N", "seed"},
    {"name", 0, CC_OPT_STR, F(name), NULL, "X", "name"},
    {"secret", 0, CC_OPT_INT, F(hidden), NULL, NULL, "hidden", NULL, CC_OPT_HIDDEN},
    CC_OPT_END,
};

static cc_status parse(struct cfg *c, char *err, int argc, char **argv, struct cc_opt_result *r)
{
    static char *pos[32];
    r->pos = pos;
    return cc_opt_parse(opts, argc, argv, c, r, err, 256);
}

int main(void)
{
    struct cfg c;
    struct cc_opt_result r = {0};
    char err[256];

    ok(parse(&c, err, 0, NULL, &r) == CC_OK, "no arguments");
    is_int(c.minb, 8, "size default");
    is_int(c.iters, 20, "int default");
    is_int(c.choice, 1, "choice default green");
    is_near(c.prec, 2.5, 0, "double default");
    ok(c.name == NULL, "string default NULL");
    is_int(c.flag, 0, "flag default 0");

    char *a1[] = {"-b", "1M", "--iters=50", "--flag", "-cblue", "--precision", "0.5", "--name", "x",
                  "pos1", "--seed", "-7", "--", "--pos2"};
    ok(parse(&c, err, 14, a1, &r) == CC_OK, "mixed forms parse (%s)", err);
    is_int(c.minb, 1 << 20, "-b 1M");
    is_int(c.iters, 50, "--iters=50");
    is_int(c.flag, 1, "--flag");
    is_int(c.choice, 2, "-cblue");
    is_near(c.prec, 0.5, 0, "--precision 0.5");
    is_str(c.name, "x", "--name x");
    is_int(c.seed, -7, "negative long");
    is_int(r.npos, 2, "two positionals");
    is_str(r.pos[0], "pos1", "first positional");
    is_str(r.pos[1], "--pos2", "after -- everything is positional");

    struct {
        int argc;
        char *argv[3];
        const char *needle;
    } bad[] = {
        {1, {"--nope"}, "unknown option '--nope'"},
        {1, {"-z"}, "unknown option '-z'"},
        {1, {"--iters"}, "needs a value"},
        {1, {"-n"}, "option '-n' (--iters) needs a value (N)"}, /* as typed, and its long name */
        {1, {"--help=1"}, "option '--help' takes no value"},
        {1, {"--iter"}, "unknown option '--iter' (did you mean --iters? see --help)"},
        {1, {"--clor"}, "(did you mean --color? "},
        {1, {"--zzzzzz"}, "unknown option '--zzzzzz' (see --help)"}, /* nothing near */
        {1, {"--secre"}, "unknown option '--secre' (see --help)"}, /* hidden: not suggested */
        {2, {"--iters", "abc"}, "needs an integer"},
        {2, {"--iters", "0"}, "out of range"},
        {2, {"--iters", "5000"}, "out of range"},
        {2, {"--iters", "0x10"}, "needs an integer"}, /* decimal only */
        {2, {"-b", "1X"}, "unknown suffix"},
        {2, {"--color", "pink"}, "red|green|blue"},
        {2, {"--precision", "x1"}, "needs a number"},
        {2, {"--precision", "0x10"}, "needs a number"}, /* strtod would read 16 */
        {2, {"--precision", " 2"}, "needs a number"},   /* nor a leading blank */
        {2, {"--iters", " 8"}, "needs an integer"},
        /* a switch takes no value: '--flag=no' must not turn it on */
        {1, {"--flag=no"}, "option '--flag' takes no value"},
        {1, {"--flag=0"}, "option '--flag' takes no value"},
        {1, {"--flag=1"}, "option '--flag' takes no value"},
        {1, {"--flag="}, "option '--flag' takes no value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cc_status st = parse(&c, err, bad[i].argc, bad[i].argv, &r);
        ok(st == CC_EUSAGE && strstr(err, bad[i].needle), "rejects %s %s: %s", bad[i].argv[0],
           bad[i].argc > 1 ? bad[i].argv[1] : "", err);
    }
    /* lists: an empty item is an error wherever it is, a trailing comma included */
    static const char *const ops[] = {"sum", "prod", "min", NULL};
    ok(cc_choice_mask(ops, "op", "sum,min", err, sizeof err) == 5, "list 'sum,min'");
    ok(cc_choice_mask(ops, "op", "all", err, sizeof err) == 7, "list 'all'");
    const char *badlists[] = {"sum,", ",sum", "sum,,min", "", ",", NULL};
    for (int i = 0; badlists[i]; i++) {
        err[0] = 0;
        ok(cc_choice_mask(ops, "op", badlists[i], err, sizeof err) == 0 && strstr(err, "op"),
           "list '%s' rejected: %s", badlists[i], err);
    }
    ok(cc_choice_mask(ops, "op", "sum,", err, sizeof err) == 0 && strstr(err, "empty item"),
       "a trailing comma is an empty item: %s", err);
    /* the one list rule (gpu --tests, layout --results and --explain use it too): every
     * item, none cut short, an empty one an error */
    const char *cur = "a,bb,ccc";
    char w[4];
    int k1 = cc_list_next(&cur, "x", "a,bb,ccc", w, sizeof w, err, sizeof err);
    ok(k1 == 1 && strcmp(w, "a") == 0, "list_next: first item 'a'");
    int k2 = cc_list_next(&cur, "x", "a,bb,ccc", w, sizeof w, err, sizeof err);
    int k3 = cc_list_next(&cur, "x", "a,bb,ccc", w, sizeof w, err, sizeof err);
    ok(k2 == 1 && k3 == 1 && strcmp(w, "ccc") == 0, "list_next: then 'bb', 'ccc'");
    ok(cc_list_next(&cur, "x", "a,bb,ccc", w, sizeof w, err, sizeof err) == 0, "list_next: end");
    const char *empties[] = {"", "a,", ",a", "a,,b", NULL};
    for (int i = 0; empties[i]; i++) {
        int k;
        cur = empties[i];
        while ((k = cc_list_next(&cur, "x", empties[i], w, sizeof w, err, sizeof err)) > 0)
            ;
        ok(k < 0 && strstr(err, "an empty item"), "list_next '%s': %s", empties[i], err);
    }
    cur = "a,dddd";
    while ((k1 = cc_list_next(&cur, "x", "a,dddd", w, sizeof w, err, sizeof err)) > 0)
        ;
    ok(k1 < 0 && strstr(err, "invalid x list 'a,dddd' (an item is too long)"),
       "list_next: an item longer than the word is refused, not cut: %s", err);

    /* a size out of range says the range as sizes */
    static const struct cc_opt sized[] = {
        {"chunk", 0, CC_OPT_SIZE, F(minb), "0", "SIZE", "chunk", NULL, CC_OPT_RANGE, 0, 16 << 20},
        CC_OPT_END,
    };
    char *big[] = {"--chunk", "1T"};
    static char *spos[4];
    struct cc_opt_result sr = {.pos = spos};
    ok(cc_opt_parse(sized, 2, big, &c, &sr, err, sizeof err) == CC_EUSAGE &&
           strstr(err, "--chunk '1T' is out of range (0 to 16M)"),
       "size range: %s", err);
    char *fine[] = {"--chunk", "16M"};
    ok(cc_opt_parse(sized, 2, fine, &c, &sr, err, sizeof err) == CC_OK && c.minb == 16 << 20,
       "size at the top of its range accepted");

    char *oct[] = {"--iters", "010"};
    ok(parse(&c, err, 2, oct, &r) == CC_OK && c.iters == 10, "'010' is ten, not octal eight");
    char *h[] = {"--help"};
    ok(parse(&c, err, 1, h, &r) == CC_OK && r.help, "--help is reported");

    FILE *f = tmpfile();
    cc_opt_help(f, opts);
    rewind(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    ok(strstr(text, "-b, --minbytes SIZE") != NULL, "help shows short and long forms");
    ok(strstr(text, "(default: 8)") != NULL, "help shows defaults");
    ok(strstr(text, "red|green|blue") != NULL, "help lists choices");
    ok(strstr(text, "secret") == NULL, "hidden options stay out of help");
    return tap_done();
}
