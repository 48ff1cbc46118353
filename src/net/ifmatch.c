#include "net/ifmatch.h"

#include <string.h>

#include "core/log.h"

#define IF_NAME_MAX 16 /* IFNAMSIZ, including the terminating NUL */

/* Skip the "^" and "=" markers; report them. */
static const char *parse_markers(const char *spec, int *exclude, int *exact)
{
    *exclude = spec[0] == '^';
    spec += *exclude;
    *exact = spec[0] == '=';
    return spec + *exact;
}

cc_status cc_if_spec_check(const char *spec, char *why, size_t whylen)
{
    int exclude, exact;
    const char *p = parse_markers(spec, &exclude, &exact);
    if (!*p) {
        cc_errbuf(why, whylen, "empty interface list '%s'", spec);
        return CC_EUSAGE;
    }
    for (;;) {
        size_t n = strcspn(p, ",");
        if (n == 0) {
            cc_errbuf(why, whylen, "empty item in interface list '%s'", spec);
            return CC_EUSAGE;
        }
        if (n >= IF_NAME_MAX) {
            cc_errbuf(why, whylen, "interface name '%.*s' in '%s' is longer than %d characters",
                      (int)n, p, spec, IF_NAME_MAX - 1);
            return CC_EUSAGE;
        }
        if (!p[n])
            return CC_OK;
        p += n + 1;
    }
}

int cc_if_match(const char *spec, const char *name)
{
    int exclude, exact, hit = 0;
    const char *p = parse_markers(spec, &exclude, &exact);
    while (*p && !hit) {
        size_t n = strcspn(p, ",");
        if (exact)
            hit = strlen(name) == n && strncmp(name, p, n) == 0;
        else
            hit = n > 0 && strncmp(name, p, n) == 0;
        p += n + (p[n] == ',');
    }
    return exclude ? !hit : hit;
}
