/* jsonfile.h - read one JSON document from a file, with a one-line reason when it cannot be. */
#ifndef CC_CORE_JSONFILE_H
#define CC_CORE_JSONFILE_H

#include <jansson.h>
#include <stddef.h>

#include "core/status.h"

/* Parse the file at `path` into *out (the caller decrefs it). `what` names the file's role in
 * messages ("topology", "model spec"). Errors, with "cannot read WHAT 'PATH': ...":
 * CC_EIO for a missing, unreadable or directory path (with the system's reason), CC_EPARSE
 * for malformed JSON (with line and column) or a key given twice. */
cc_status cc_json_read_file(const char *path, const char *what, json_t **out, char *err,
                            size_t errlen);

#endif
