/* text.c - names made safe to print and to put in JSON. */
#include "core/text.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The bytes a UTF-8 lead byte announces (1 to 4), or 0 for a byte that leads none. */
static size_t lead_len(unsigned c)
{
    return c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                        : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
}

size_t cc_utf8_len(const unsigned char *s)
{
    size_t n = lead_len(s[0]);
    if (n <= 1)
        return n;
    unsigned cp = s[0] & (0x7fu >> n); /* the lead byte's payload: 5, 4 or 3 bits */
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; /* also stops at the terminating 0 */
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Whether s starts a lead byte and continuation bytes up to the end of the string, fewer
 * than the lead byte announces: a character cut by a buffer's end. */
static int cut_at_end(const unsigned char *s)
{
    size_t want = lead_len(s[0]), k = 1;
    while (k < want && (s[k] & 0xc0) == 0x80)
        k++;
    return want > 1 && k < want && !s[k];
}

void cc_text_line(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = cc_utf8_len(p);
        if (!n && cut_at_end(p)) {
            *p = 0;
            return;
        }
        /* C0 controls and DEL; C1 controls are U+0080-U+009F, encoded 0xc2 0x80-0x9f; the
         * line and paragraph separators and the bidirectional embeddings, overrides and
         * isolates (U+2028-U+202E, U+2066-U+2069), which break or reorder a line */
        if (!n || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) ||
            (n == 3 && p[0] == 0xe2 &&
             ((p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae) ||
              (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))) {
            size_t skip = n ? n : 1;
            *p = '?';
            if (skip > 1)
                memmove(p + 1, p + skip, strlen((char *)p + skip) + 1);
            p++;
            continue;
        }
        p += n;
    }
}

void cc_text_copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
    cc_text_line(dst);
}

/* Edits between a and b (optimal string alignment), ignoring case; beyond `cap`, cap + 1. */
static size_t edits(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64 || (la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int x = tolower((unsigned char)a[i - 1]), y = tolower((unsigned char)b[j - 1]);
            size_t v = d[i - 1][j - 1] + (x != y);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && x == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == y && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

const char *cc_closest(const char *word, const char *(*name_at)(int i, const void *ctx),
                       const void *ctx)
{
    size_t lw = strlen(word), cap = lw <= 4 ? 1 : lw / 3, best = cap + 1;
    const char *pick = NULL, *name;
    if (!lw)
        return NULL;
    int starts = 0; /* names that word starts: one is what it meant, several say nothing */
    for (int i = 0; (name = name_at(i, ctx)); i++)
        if (lw >= 2 && lw < strlen(name) && !strncasecmp(name, word, lw))
            starts++, pick = name;
    if (starts == 1)
        return pick;
    pick = NULL;
    for (int i = 0; (name = name_at(i, ctx)); i++) {
        size_t e = edits(word, name, cap);
        if (e < best)
            best = e, pick = name;
    }
    return pick;
}

const char *cc_did_you_mean(char *buf, size_t len, const char *dashes, const char *word,
                            const char *(*name_at)(int i, const void *ctx), const void *ctx)
{
    const char *near = cc_closest(word, name_at, ctx);
    if (near)
        snprintf(buf, len, "did you mean %s%s? ", dashes, near);
    else if (len)
        buf[0] = 0;
    return buf;
}
