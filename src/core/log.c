#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char cc_log_host[72]; /* CC_HOST_MAX */
static int cc_log_rank = -1;
static int cc_log_quiet;
static int cc_log_level_set;
static enum cc_log_level cc_log_level = CC_LOG_INFO;

void cc_log_set_identity(const char *host, int rank)
{
    snprintf(cc_log_host, sizeof cc_log_host, "%s", host ? host : "");
    cc_log_rank = rank;
}

void cc_log_set_level(enum cc_log_level lvl)
{
    cc_log_level = lvl;
    cc_log_level_set = 1;
}

enum cc_log_level cc_log_get_level(void)
{
    if (!cc_log_level_set) {
        const char *e = getenv("CCBENCH_DEBUG");
        if (e && *e && strcmp(e, "0") != 0)
            cc_log_level = CC_LOG_DEBUG;
        cc_log_level_set = 1;
    }
    return cc_log_level;
}

void cc_log_set_quiet(int quiet) { cc_log_quiet = quiet; }

void cc_vlog(enum cc_log_level lvl, const char *fmt, va_list ap)
{
    static const char *const tag[] = {"error: ", "warning: ", "", "debug: "};
    char line[2048];
    int n;

    if (lvl > cc_log_get_level() || (cc_log_quiet && lvl != CC_LOG_ERROR))
        return;
    if (cc_log_rank >= 0)
        n = snprintf(line, sizeof line, "ccbench %s:%d: %s", cc_log_host, cc_log_rank, tag[lvl]);
    else
        n = snprintf(line, sizeof line, "ccbench: %s", tag[lvl]);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* a message quotes text from files and peers: a control character there (a newline, a
     * vertical tab, a terminal escape) would break the one-line form, so it prints as '?' */
    for (char *c = line + n; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    /* one write per message keeps lines from different ranks whole */
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void cc_log(enum cc_log_level lvl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_vlog(lvl, fmt, ap);
    va_end(ap);
}

void cc_err_stdout(int e)
{
    static int said;
    if (said)
        return;
    said = 1;
    cc_err("cannot write standard output: %s", strerror(e ? e : EIO));
}

void cc_errbuf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (!buf || !len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}
