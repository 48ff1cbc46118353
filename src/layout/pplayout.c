/* pplayout.c - Megatron-Core's explicit pipeline layout notation, parsed and checked. */
#include "layout/pplayout.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define EXPANDED_MAX (1 << 20) /* characters after unrolling the repetitions */

/* Read a repeat count after '*' at s; its end in *end. -1 if there is none. */
static long repeat_count(const char *s, const char **end)
{
    if (*s != '*' || !isdigit((unsigned char)s[1]))
        return -1;
    char *e;
    long n = strtol(s + 1, &e, 10);
    *end = e;
    return n > EXPANDED_MAX ? EXPANDED_MAX + 1L : n;
}

/* Append n copies of the len bytes at src to the buffer (cap EXPANDED_MAX). */
static int append(char *buf, size_t *at, const char *src, size_t len, long n)
{
    if (n > 0 && len > 0 && (size_t)n > (EXPANDED_MAX - *at) / len)
        return -1;
    for (long i = 0; i < n; i++, *at += len)
        memcpy(buf + *at, src, len);
    return 0;
}

/* One pass: unroll "(...)*n" groups (groups = 1) or "x*n" characters (groups = 0). */
static int unroll(const char *in, char *out, int groups, char *err, size_t errlen,
                  const char *text)
{
    size_t at = 0;
    for (const char *s = in; *s;) {
        const char *end;
        if (groups && *s == '(') {
            const char *close = strpbrk(s + 1, "()");
            if (!close || *close == '(') {
                cc_errbuf(err, errlen, "pipeline layout '%s': %s", text,
                          close ? "groups do not nest" : "a '(' without its ')'");
                return -1;
            }
            long n = repeat_count(close + 1, &end);
            if (n < 0) {
                cc_errbuf(err, errlen, "pipeline layout '%s': a group '(...)' needs '*N' after it",
                          text);
                return -1;
            }
            if (append(out, &at, s + 1, (size_t)(close - s - 1), n)) {
                cc_errbuf(err, errlen, "pipeline layout '%s': more than %d characters unrolled",
                          text, EXPANDED_MAX);
                return -1;
            }
            s = end;
        } else if (!groups && s[1] == '*' && *s != ')' && *s != '*') {
            long n = repeat_count(s + 1, &end);
            if (n < 0) {
                cc_errbuf(err, errlen, "pipeline layout '%s': '*' needs a count after it", text);
                return -1;
            }
            if (append(out, &at, s, 1, n)) {
                cc_errbuf(err, errlen, "pipeline layout '%s': more than %d characters unrolled",
                          text, EXPANDED_MAX);
                return -1;
            }
            s = end;
        } else {
            if (at >= EXPANDED_MAX) {
                cc_errbuf(err, errlen, "pipeline layout '%s': more than %d characters unrolled",
                          text, EXPANDED_MAX);
                return -1;
            }
            out[at++] = *s++;
        }
    }
    out[at] = '\0';
    return 0;
}

cc_status cc_pplan_parse(const char *text, struct cc_pplan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->mtp_stage = -1;
    if (!text || !*text || strlen(text) >= sizeof p->text) {
        cc_errbuf(err, errlen, "pipeline layout: give 1 to %zu characters, e.g. 'Et*4|(t*4|)*14tmL'",
                  sizeof p->text - 1);
        return CC_EUSAGE;
    }
    snprintf(p->text, sizeof p->text, "%s", text);
    /* only the notation's characters, even where a repeat of 0 would drop them: the text is
     * passed on verbatim inside quotes */
    size_t bad = strspn(text, "ELtm|()*,0123456789");
    if (text[bad]) {
        cc_errbuf(err, errlen, "pipeline layout: '%c' is not E, t, m, L, '|', '(...)*N' or "
                  "'x*N'", isprint((unsigned char)text[bad]) ? text[bad] : '?');
        return CC_EUSAGE;
    }
    if (strstr(text, "()")) {
        cc_errbuf(err, errlen, "pipeline layout '%s': an empty group '()'", text);
        return CC_EUSAGE;
    }
    char *a = malloc(EXPANDED_MAX + 1), *b = malloc(EXPANDED_MAX + 1);
    cc_status st = CC_EUSAGE;
    if (!a || !b) {
        cc_errbuf(err, errlen, "out of memory");
        st = CC_ENOMEM;
        goto done;
    }
    size_t at = 0; /* commas are cosmetic */
    for (const char *s = text; *s; s++)
        if (*s != ',')
            a[at++] = *s;
    a[at] = '\0';
    if (unroll(a, b, 1, err, errlen, text) || unroll(b, a, 0, err, errlen, text))
        goto done;
    int embeds = 0, losses = 0, k = 0;
    for (const char *s = a;; s++) {
        if (*s == '|' || !*s) {
            if (++k > CC_PPLAN_MAX) {
                cc_errbuf(err, errlen, "pipeline layout '%s': more than %d stages", text,
                          CC_PPLAN_MAX);
                goto done;
            }
            if (!*s)
                break;
            continue;
        }
        if (k >= CC_PPLAN_MAX) { /* a stage past the last one kept */
            cc_errbuf(err, errlen, "pipeline layout '%s': more than %d stages", text,
                      CC_PPLAN_MAX);
            goto done;
        }
        switch (*s) {
        case 't':
            if (p->mtp) {
                cc_errbuf(err, errlen, "pipeline layout '%s': a transformer layer after an MTP "
                          "layer (the MTP layers come after all of them)", text);
                goto done;
            }
            p->layers[k]++, p->total++;
            break;
        case 'm':
            if (p->mtp && p->mtp_stage != k) {
                cc_errbuf(err, errlen, "pipeline layout '%s': the MTP layers must all be in one "
                          "stage", text);
                goto done;
            }
            p->mtp++, p->mtp_stage = k;
            break;
        case 'E':
            if (k != 0 || s != a) {
                cc_errbuf(err, errlen, "pipeline layout '%s': 'E' (the embedding) comes first, "
                          "once", text);
                goto done;
            }
            embeds++;
            break;
        case 'L':
            if (s[1] != '\0' || losses) {
                cc_errbuf(err, errlen, "pipeline layout '%s': 'L' (the loss) comes last, once",
                          text);
                goto done;
            }
            losses++;
            break;
        default:
            cc_errbuf(err, errlen, "pipeline layout '%s': '%c' is not E, t, m, L, '|', '(...)*N' "
                      "or 'x*N'", text, isprint((unsigned char)*s) ? *s : '?');
            goto done;
        }
    }
    if (!embeds || !losses) {
        cc_errbuf(err, errlen, "pipeline layout '%s': it must open with 'E' (the embedding) and "
                  "close with 'L' (the loss)", text);
        goto done;
    }
    p->n = k;
    st = CC_OK;
done:
    free(a);
    free(b);
    return st;
}

int cc_pplan_check(const struct cc_pplan *p, int layers, int mtp, int pp, char *why, size_t len)
{
    if (pp < 0 || (pp > 0 && p->n % pp)) {
        snprintf(why, len, "the pipeline layout's %d stages are not a multiple of pp %d", p->n, pp);
        return -1;
    }
    if (p->total != layers) {
        snprintf(why, len, "the pipeline layout holds %d transformer layers, the model %d",
                 p->total, layers);
        return -1;
    }
    if (p->mtp != (mtp > 0 ? mtp : 0)) {
        snprintf(why, len, "the pipeline layout holds %d MTP layers, the model trains %d (--mtp)",
                 p->mtp, mtp > 0 ? mtp : 0);
        return -1;
    }
    if (pp == 0 && p->mtp > 0 && p->mtp_stage == 0) { /* the first rank's, at every pp */
        snprintf(why, len, "the pipeline layout's MTP layers are in its first stage, on the "
                 "first pipeline rank at any pp (ccbench costs them on a later rank)");
        return -1;
    }
    if (pp == 0) /* the rest depends on pp */
        return 0;
    int v = p->n / pp;
    if (p->mtp > 0 && p->mtp_stage < (v - 1) * pp) {
        snprintf(why, len, "the pipeline layout's MTP layers are in chunk %d of rank %d, not in "
                 "a rank's last chunk (Megatron-Core's rule)", p->mtp_stage / pp,
                 p->mtp_stage % pp);
        return -1;
    }
    if (p->mtp > 0 && pp > 1 && p->mtp_stage == (v - 1) * pp) {
        snprintf(why, len, "the pipeline layout's MTP layers are on the first pipeline rank "
                 "(ccbench costs them on a later rank)");
        return -1;
    }
    return 0;
}

int cc_pplan_mtp_rank(const struct cc_pplan *p, int pp)
{
    return p->mtp > 0 && pp > 0 ? p->mtp_stage % pp : -1;
}

/* Append text at buf + at (len in all), clamped to the buffer; the new end. */
static size_t put(char *buf, size_t at, size_t len, const char *text)
{
    size_t n = strlen(text);
    if (at >= len || n >= len - at)
        return at; /* no room: left as it is (the texts made here are far shorter) */
    memcpy(buf + at, text, n + 1);
    return at + n;
}

/* Append "t", "t*n" or nothing for n transformer layers. */
static size_t put_layers(char *buf, size_t at, size_t len, int n)
{
    char t[24];
    snprintf(t, sizeof t, n == 1 ? "t" : "t*%d", n);
    return n > 0 ? put(buf, at, len, t) : at;
}

cc_status cc_pplan_fill(struct cc_pplan *p, int layers, int mtp, int pp, int v, char *err,
                        size_t errlen)
{
    long long S = (long long)pp * (v > 0 ? v : 1);
    if (pp < 2) {
        cc_errbuf(err, errlen, "fill=1 (a filled pipeline layout) needs pp >= 2");
        return CC_EUSAGE;
    }
    if (layers < 1) {
        cc_errbuf(err, errlen, "fill=1: the model has no transformer layer to place");
        return CC_EUSAGE;
    }
    if (S > CC_PPLAN_MAX) {
        cc_errbuf(err, errlen, "fill=1: pp x v = %lld is more than %d stages", S, CC_PPLAN_MAX);
        return CC_EUSAGE;
    }
    int n = (int)S, each = (int)((layers + S - 1) / S);
    long long rest = layers - (S - 1) * each;
    if (S > layers) {
        cc_errbuf(err, errlen, "fill=1: pp x v = %d stages are more than the %d layers", n, layers);
        return CC_EUSAGE;
    }
    if (rest < 1) {
        cc_errbuf(err, errlen, "fill=1: %d stages of %d layers leave none of the %d for the last "
                  "(pp x v = %d)", n - 1, each, layers, n);
        return CC_EUSAGE;
    }
    if (rest == each) {
        cc_errbuf(err, errlen, "fill=1: pp x v = %d divides the %d layers; the even split is "
                  "the same layout (leave fill out)", n, layers);
        return CC_EUSAGE;
    }
    p->n = n, p->total = layers, p->mtp = mtp > 0 ? mtp : 0;
    p->mtp_stage = p->mtp ? n - 1 : -1;
    for (int k = 0; k < n; k++)
        p->layers[k] = k == n - 1 ? (int)rest : each;
    /* "E" + the first stage, "(t*each|)*k" for the middle ones, then the last */
    size_t at = 0, len = sizeof p->text;
    char rep[24];
    at = put(p->text, at, len, "E");
    at = put_layers(p->text, at, len, each);
    at = put(p->text, at, len, "|");
    if (n - 2 == 1) {
        at = put_layers(p->text, at, len, each);
        at = put(p->text, at, len, "|");
    } else if (n - 2 > 1) {
        at = put(p->text, at, len, "(");
        at = put_layers(p->text, at, len, each);
        snprintf(rep, sizeof rep, "|)*%d", n - 2);
        at = put(p->text, at, len, rep);
    }
    at = put_layers(p->text, at, len, (int)rest);
    snprintf(rep, sizeof rep, p->mtp == 1 ? "m" : "m*%d", p->mtp);
    at = p->mtp > 0 ? put(p->text, at, len, rep) : at;
    put(p->text, at, len, "L");
    return CC_OK;
}

int cc_pplan_chunk(const struct cc_pplan *p, int pp, int r, int c)
{
    int k = c * pp + r;
    return k >= 0 && k < p->n ? p->layers[k] : 0;
}

long long cc_pplan_offset(const struct cc_pplan *p, int pp, int r, int c)
{
    long long off = 0;
    for (int k = 0; k < c * pp + r && k < p->n; k++)
        off += p->layers[k];
    return off;
}

int cc_pplan_rank_layers(const struct cc_pplan *p, int pp, int r)
{
    int n = 0;
    for (int c = 0; c * pp + r < p->n; c++)
        n += p->layers[c * pp + r];
    return n;
}
