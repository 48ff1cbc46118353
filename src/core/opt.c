#include "core/opt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/size.h"
#include "core/text.h"

int cc_choice_index(const char *const *choices, const char *word)
{
    for (int i = 0; choices && choices[i]; i++)
        if (strcmp(choices[i], word) == 0)
            return i;
    return -1;
}

int cc_list_next(const char **cursor, const char *what, const char *text, char *word,
                 size_t wordlen, char *err, size_t errlen)
{
    const char *p = *cursor;
    if (!p)
        return 0;
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    if (n == 0 || n >= wordlen) {
        cc_errbuf(err, errlen, "invalid %s list '%s' (%s)", what, text,
                  n ? "an item is too long" : "an empty item");
        return -1;
    }
    memcpy(word, p, n);
    word[n] = 0;
    *cursor = comma ? comma + 1 : NULL;
    return 1;
}

unsigned cc_choice_mask(const char *const *choices, const char *what, const char *text,
                        char *err, size_t errlen)
{
    unsigned mask = 0;
    const char *p = text;
    char word[64];
    int more;
    if (!text || !*text) {
        cc_errbuf(err, errlen, "empty %s list", what);
        return 0;
    }
    while ((more = cc_list_next(&p, what, text, word, sizeof word, err, errlen)) > 0) {
        if (strcmp(word, "all") == 0) {
            for (int i = 0; choices[i]; i++)
                mask |= 1u << i;
            continue;
        }
        int i = cc_choice_index(choices, word);
        if (i < 0) {
            char list[256];
            cc_errbuf(err, errlen, "unknown %s '%s' (one of %s, or all)", what, word,
                      cc_choice_join(choices, list, sizeof list));
            return 0;
        }
        mask |= 1u << i;
    }
    if (more < 0)
        return 0;
    if (!mask)
        cc_errbuf(err, errlen, "empty %s list", what);
    return mask;
}

const char *cc_choice_join(const char *const *choices, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; choices && choices[i]; i++) {
        int w = snprintf(buf + n, len - n, "%s%s", i ? "|" : "", choices[i]);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    return buf;
}

int cc_opt_find(const struct cc_opt *tbl, const char *name)
{
    for (int i = 0; tbl[i].name; i++)
        if (strcmp(tbl[i].name, name) == 0)
            return i;
    return -1;
}

/* The visible options' long names, for a "did you mean". */
static const char *opt_name_at(int i, const void *ctx)
{
    const struct cc_opt *tbl = ctx;
    for (int k = 0; tbl[k].name; k++)
        if (!(tbl[k].flags & CC_OPT_HIDDEN) && i-- == 0)
            return tbl[k].name;
    return NULL;
}

static cc_status check_range(const struct cc_opt *o, double v, const char *text, char *err,
                             size_t errlen)
{
    if ((o->flags & CC_OPT_RANGE) && (v < o->min || v > o->max)) {
        char lo[32], hi[32];
        if (o->type == CC_OPT_SIZE)
            cc_errbuf(err, errlen, "--%s '%s' is out of range (%s to %s)", o->name, text,
                      cc_size_format((size_t)o->min, lo, sizeof lo),
                      cc_size_format((size_t)o->max, hi, sizeof hi));
        else if (o->type == CC_OPT_INT || o->type == CC_OPT_LONG)
            cc_errbuf(err, errlen, "--%s '%s' is out of range (%.0f to %.0f)", o->name, text,
                      o->min, o->max);
        else
            cc_errbuf(err, errlen, "--%s '%s' is out of range (%g to %g)", o->name, text,
                      o->min, o->max);
        return CC_EUSAGE;
    }
    return CC_OK;
}

/* A number as written on a command line: decimal digits with an optional sign, point and
 * exponent; not the blanks, hexadecimal, inf or nan that strtod would also take. */
static int plain_number(const char *t)
{
    return (isdigit((unsigned char)t[0]) || t[0] == '-' || t[0] == '+' || t[0] == '.') &&
           !strpbrk(t, "xXnNiI");
}

/* Store the textual value `text` into the field of option o. */
static cc_status set_value(const struct cc_opt *o, const char *text, void *cfg, char *err,
                           size_t errlen)
{
    char *field = (char *)cfg + o->offset;
    char *end;

    switch (o->type) {
    case CC_OPT_FLAG:
        *(int *)field = text ? (strcmp(text, "0") != 0) : 1;
        return CC_OK;
    case CC_OPT_INT:
    case CC_OPT_LONG: {
        errno = 0;
        long long v = strtoll(text, &end, 10); /* decimal: '010' is ten */
        if (errno || end == text || *end || !plain_number(text)) {
            cc_errbuf(err, errlen, "--%s needs an integer, got '%s'", o->name, text);
            return CC_EUSAGE;
        }
        if (o->type == CC_OPT_INT && (v < -2147483647LL || v > 2147483647LL)) {
            cc_errbuf(err, errlen, "--%s '%s' does not fit an int", o->name, text);
            return CC_EUSAGE;
        }
        if (check_range(o, (double)v, text, err, errlen) != CC_OK)
            return CC_EUSAGE;
        if (o->type == CC_OPT_INT)
            *(int *)field = (int)v;
        else
            *(long long *)field = v;
        return CC_OK;
    }
    case CC_OPT_DOUBLE: {
        errno = 0;
        double v = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(v) || !plain_number(text)) {
            cc_errbuf(err, errlen, "--%s needs a number, got '%s'", o->name, text);
            return CC_EUSAGE;
        }
        if (check_range(o, v, text, err, errlen) != CC_OK)
            return CC_EUSAGE;
        *(double *)field = v;
        return CC_OK;
    }
    case CC_OPT_SIZE: {
        size_t v;
        char why[128];
        if (cc_size_parse(text, &v, why, sizeof why) != CC_OK) {
            cc_errbuf(err, errlen, "--%s: %s", o->name, why);
            return CC_EUSAGE;
        }
        if (check_range(o, (double)v, text, err, errlen) != CC_OK)
            return CC_EUSAGE;
        *(size_t *)field = v;
        return CC_OK;
    }
    case CC_OPT_STR:
        *(const char **)field = text;
        return CC_OK;
    case CC_OPT_CHOICE: {
        int i = cc_choice_index(o->choices, text);
        if (i < 0) {
            char list[512];
            cc_errbuf(err, errlen, "unknown --%s '%s' (one of %s)", o->name, text,
                      cc_choice_join(o->choices, list, sizeof list));
            return CC_EUSAGE;
        }
        *(int *)field = i;
        return CC_OK;
    }
    }
    return CC_EINVAL;
}

cc_status cc_opt_defaults(const struct cc_opt *tbl, void *cfg, char *err, size_t errlen)
{
    for (int i = 0; tbl[i].name; i++) {
        const struct cc_opt *o = &tbl[i];
        char *field = (char *)cfg + o->offset;
        if (o->defval) {
            cc_status st = set_value(o, o->defval, cfg, err, errlen);
            if (st != CC_OK)
                return st;
            continue;
        }
        switch (o->type) {
        case CC_OPT_FLAG:
        case CC_OPT_INT:
        case CC_OPT_CHOICE: *(int *)field = 0; break;
        case CC_OPT_LONG: *(long long *)field = 0; break;
        case CC_OPT_DOUBLE: *(double *)field = 0; break;
        case CC_OPT_SIZE: *(size_t *)field = 0; break;
        case CC_OPT_STR: *(const char **)field = NULL; break;
        }
    }
    return CC_OK;
}

static int find_short(const struct cc_opt *tbl, char c)
{
    for (int i = 0; tbl[i].name; i++)
        if (tbl[i].short_name && tbl[i].short_name == c)
            return i;
    return -1;
}

cc_status cc_opt_parse(const struct cc_opt *tbl, int argc, char **argv, void *cfg,
                       struct cc_opt_result *res, char *err, size_t errlen)
{
    cc_status st = cc_opt_defaults(tbl, cfg, err, errlen);
    int only_pos = 0;

    res->help = 0;
    res->npos = 0;
    if (st != CC_OK)
        return st;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        const char *val = NULL;
        int idx;
        char namebuf[64];

        if (only_pos || a[0] != '-' || a[1] == 0) {
            res->pos[res->npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            res->help = 1;
            continue;
        }
        if (strncmp(a, "--help=", 7) == 0) {
            cc_errbuf(err, errlen, "option '--help' takes no value");
            return CC_EUSAGE;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
            if (n >= sizeof namebuf) {
                cc_errbuf(err, errlen, "unknown option '%s' (see --help)", a);
                return CC_EUSAGE;
            }
            memcpy(namebuf, a + 2, n);
            namebuf[n] = 0;
            idx = cc_opt_find(tbl, namebuf);
            if (idx < 0) {
                char dym[96];
                cc_errbuf(err, errlen, "unknown option '--%s' (%ssee --help)", namebuf,
                          cc_did_you_mean(dym, sizeof dym, "--", namebuf, opt_name_at, tbl));
                return CC_EUSAGE;
            }
            if (eq)
                val = eq + 1;
        } else {
            idx = find_short(tbl, a[1]);
            if (idx < 0) {
                cc_errbuf(err, errlen, "unknown option '-%c' (see --help)", a[1]);
                return CC_EUSAGE;
            }
            if (a[2])
                val = a + 2;
        }
        const struct cc_opt *o = &tbl[idx];
        if (o->type == CC_OPT_FLAG) {
            /* a switch is on when given: --quiet=no or --quiet=0 would read as off */
            if (val && a[1] == '-') {
                cc_errbuf(err, errlen, "option '--%s' takes no value", o->name);
                return CC_EUSAGE;
            }
            if (val) {
                cc_errbuf(err, errlen, "option '-%c' takes no value", o->short_name);
                return CC_EUSAGE;
            }
        } else if (!val) {
            if (i + 1 >= argc) {
                if (a[1] == '-')
                    cc_errbuf(err, errlen, "option '--%s' needs a value (%s)", o->name,
                              o->metavar ? o->metavar : "VALUE");
                else
                    cc_errbuf(err, errlen, "option '-%c' (--%s) needs a value (%s)",
                              o->short_name, o->name, o->metavar ? o->metavar : "VALUE");
                return CC_EUSAGE;
            }
            val = argv[++i];
        }
        st = set_value(o, val, cfg, err, errlen);
        if (st != CC_OK)
            return st;
        if (res->given)
            res->given[idx] = 1;
    }
    return CC_OK;
}

void cc_opt_help(FILE *out, const struct cc_opt *tbl)
{
    for (int i = 0; tbl[i].name; i++) {
        const struct cc_opt *o = &tbl[i];
        char left[96], list[256];
        const char *mv = o->metavar;
        if (o->flags & CC_OPT_HIDDEN)
            continue;
        if (o->type == CC_OPT_CHOICE && !mv)
            mv = cc_choice_join(o->choices, list, sizeof list);
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name,
                     o->type == CC_OPT_FLAG ? "" : " ", o->type == CC_OPT_FLAG ? "" : (mv ? mv : "X"));
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->name, o->type == CC_OPT_FLAG ? "" : " ",
                     o->type == CC_OPT_FLAG ? "" : (mv ? mv : "X"));
        fprintf(out, "  %-30s %s", left, o->help ? o->help : "");
        if (o->defval && o->type != CC_OPT_FLAG)
            fprintf(out, " (default: %s)", o->defval);
        fputc('\n', out);
    }
    fprintf(out, "  %-30s %s\n", "-h, --help", "show this help");
}
