/* log.h - messages to stderr, prefixed with "ccbench" and, once the run-time environment is
 * up, "host:rank". Error messages follow one style: lowercase, what is wrong first, the
 * offending value quoted: "ccbench: error: unknown collective 'allreduc' (see --coll help)".
 * A message is always one line: control characters in it (quoted from a file) print as '?'.
 */
#ifndef CC_LOG_H
#define CC_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include "core/status.h"

enum cc_log_level { CC_LOG_ERROR = 0, CC_LOG_WARN = 1, CC_LOG_INFO = 2, CC_LOG_DEBUG = 3 };

/* Set the identity printed in front of messages (host and rank); rank < 0 prints none. */
void cc_log_set_identity(const char *host, int rank);
/* Messages above this level are dropped. Default CC_LOG_INFO (env CCBENCH_DEBUG=1: DEBUG). */
void cc_log_set_level(enum cc_log_level lvl);
enum cc_log_level cc_log_get_level(void);
/* When quiet, only errors are printed (non-zero ranks are usually quiet). */
void cc_log_set_quiet(int quiet);

void cc_log(enum cc_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cc_vlog(enum cc_log_level lvl, const char *fmt, va_list ap);

#define cc_err(...)   cc_log(CC_LOG_ERROR, __VA_ARGS__)
#define cc_warn(...)  cc_log(CC_LOG_WARN, __VA_ARGS__)
#define cc_info(...)  cc_log(CC_LOG_INFO, __VA_ARGS__)
#define cc_debug(...) cc_log(CC_LOG_DEBUG, __VA_ARGS__)

/* Say "cannot write standard output: REASON" (strerror(e); EIO for 0) once per process:
 * whichever of a command and main() notices first gives the reason, later calls say nothing. */
void cc_err_stdout(int e);

/* Write an error message into a caller's buffer (used by parsers that must not print). */
void cc_errbuf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Check macros: log "file:line" with the failing expression's status and jump to cleanup.
 * Use inside functions that declare `cc_status st` and a `done:` label. */
#define CC_TRY(expr)                                                                 \
    do {                                                                             \
        st = (expr);                                                                 \
        if (st != CC_OK) {                                                           \
            cc_debug("%s:%d: %s -> %s", __FILE__, __LINE__, #expr, cc_status_str(st)); \
            goto done;                                                               \
        }                                                                            \
    } while (0)

#endif
