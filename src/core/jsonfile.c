/* jsonfile.c - read one JSON document from a file (core/jsonfile.h). */
#include "core/jsonfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/log.h"

cc_status cc_json_read_file(const char *path, const char *what, json_t **out, char *err,
                            size_t errlen)
{
    json_error_t je;
    struct stat sb;
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f || fstat(fileno(f), &sb) != 0 || S_ISDIR(sb.st_mode)) {
        cc_errbuf(err, errlen, "cannot read %s '%s': %s", what, path,
                  f ? "is a directory" : strerror(errno));
        if (f)
            fclose(f);
        return CC_EIO;
    }
    *out = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!*out) {
        /* jansson names its own flag for a \u0000; say what is wrong instead */
        const char *why = strstr(je.text, "JSON_ALLOW_NUL") ? "a NUL character (\\u0000) in a "
                                                              "string"
                                                            : je.text;
        cc_errbuf(err, errlen, "cannot read %s '%s': line %d column %d: %s", what, path, je.line,
                  je.column, why);
        return CC_EPARSE;
    }
    return CC_OK;
}
