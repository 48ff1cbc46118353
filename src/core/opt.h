/* opt.h - one option table drives parsing, defaults, validation and --help.
 *
 * A subcommand declares its options as an array of struct cc_opt ending in CC_OPT_END, each
 * entry naming a field of the subcommand's config struct by offset. cc_opt_parse() fills the
 * struct from defaults, then from argv; cc_opt_help() prints the table.
 *
 *   struct cfg { size_t minbytes; int iters; const char *json; };
 *   static const struct cc_opt opts[] = {
 *       { "minbytes", 'b', CC_OPT_SIZE, offsetof(struct cfg, minbytes), "8", "SIZE",
 *         "smallest message size in bytes (K/M/G suffixes)" },
 *       CC_OPT_END
 *   };
 */
#ifndef CC_OPT_H
#define CC_OPT_H

#include <stddef.h>
#include <stdio.h>
#include "core/status.h"

enum cc_opt_type {
    CC_OPT_FLAG,   /* int, set to 1 when present; takes no value (--quiet=1 is an error) */
    CC_OPT_INT,    /* int */
    CC_OPT_LONG,   /* long long */
    CC_OPT_DOUBLE, /* double */
    CC_OPT_SIZE,   /* size_t, with K/M/G/T suffixes (powers of 1024) */
    CC_OPT_STR,    /* const char *, points into argv or the default string */
    CC_OPT_CHOICE, /* int: index into choices[] */
};

#define CC_OPT_HIDDEN 0x1u /* parsed, but left out of --help (debug switches) */
#define CC_OPT_RANGE  0x2u /* check min <= value <= max */

struct cc_opt {
    const char *name;              /* long name without "--"; NULL ends the table */
    char short_name;               /* single letter after "-", or 0 */
    enum cc_opt_type type;
    size_t offset;                 /* offsetof(config struct, field) */
    const char *defval;            /* default, parsed like user input; NULL: zero/NULL */
    const char *metavar;           /* value placeholder in --help */
    const char *help;              /* one line */
    const char *const *choices;    /* CC_OPT_CHOICE: NULL-terminated */
    unsigned flags;                /* CC_OPT_HIDDEN | CC_OPT_RANGE */
    double min, max;               /* with CC_OPT_RANGE */
};

#define CC_OPT_END { NULL, 0, CC_OPT_FLAG, 0, NULL, NULL, NULL, NULL, 0, 0, 0 }

/* Result of parsing besides the config struct. */
struct cc_opt_result {
    int help;             /* -h or --help seen */
    int npos;             /* positional arguments, in order */
    char **pos;           /* points into argv (caller's storage of argc entries) */
    unsigned char *given; /* per option: 1 if set on the command line (NULL: not tracked) */
};

/* Fill cfg from the defaults, then from argv[0..argc). "--" ends options. Returns CC_EUSAGE
 * with a one-line message in err on an unknown option, a missing or malformed value or a
 * value out of range. res->pos must have room for argc entries. */
cc_status cc_opt_parse(const struct cc_opt *tbl, int argc, char **argv, void *cfg,
                       struct cc_opt_result *res, char *err, size_t errlen);

/* Set every field to its default. */
cc_status cc_opt_defaults(const struct cc_opt *tbl, void *cfg, char *err, size_t errlen);

/* Print "  -b, --minbytes SIZE  help (default: 8)" lines for the table. */
void cc_opt_help(FILE *out, const struct cc_opt *tbl);

/* Index of the option named `name` in tbl, or -1. */
int cc_opt_find(const struct cc_opt *tbl, const char *name);

/* Index of `word` in a NULL-terminated list, or -1. */
int cc_choice_index(const char *const *choices, const char *word);

/* One rule for every comma-separated list on the command line: each call puts the next item
 * of `text` in word and returns 1; 0 after the last; -1 with "invalid WHAT list 'TEXT' (an
 * empty item)" (or "(an item is too long)": wordlen - 1 characters at most) in err. Start with
 * *cursor = text. Every item counts, the one after a trailing comma too: "", "a,", ",a" and
 * "a,,b" each have an empty item; nothing is cut short.
 *   const char *p = text; char w[64]; int k;
 *   while ((k = cc_list_next(&p, "op", text, w, sizeof w, err, len)) > 0) use(w);
 *   if (k < 0) fail; */
int cc_list_next(const char **cursor, const char *what, const char *text, char *word,
                 size_t wordlen, char *err, size_t errlen);

/* Parse a comma-separated list of words from `choices` (or "all") into a bitmask of their
 * indexes. Returns 0 with a message naming `what` and the bad word on error. */
unsigned cc_choice_mask(const char *const *choices, const char *what, const char *text,
                        char *err, size_t errlen);

/* Join a NULL-terminated list as "a|b|c" into buf. */
const char *cc_choice_join(const char *const *choices, char *buf, size_t len);

#endif
