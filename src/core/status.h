/* status.h - one status enum for the whole project, with a message per code.
 *
 * Functions that can fail return cc_status. CC_OK is 0. The list is an X-macro so the
 * enum, the names and the messages never drift apart. Exit codes: see cc_status_exit().
 */
#ifndef CC_STATUS_H
#define CC_STATUS_H

#define CC_STATUS_LIST(X)                                                        \
    X(CC_OK,            "ok")                                                    \
    X(CC_EINVAL,        "invalid argument")                                      \
    X(CC_EUSAGE,        "usage error")                                           \
    X(CC_ENOMEM,        "out of memory")                                         \
    X(CC_EIO,           "input/output error")                                    \
    X(CC_EPARSE,        "malformed input")                                       \
    X(CC_ENOTSUP,       "not supported")                                         \
    X(CC_ENOTBUILT,     "not built into this binary")                            \
    X(CC_ENODEV,        "no such device")                                        \
    X(CC_ETIMEOUT,      "timed out")                                             \
    X(CC_EPEER,         "peer failed")                                           \
    X(CC_ESYS,          "system call failed")                                    \
    X(CC_EBACKEND,      "backend error")                                         \
    X(CC_EWRONG,        "wrong results detected")                                \
    X(CC_EINTR,         "interrupted")                                           \
    X(CC_EMISMATCH,     "ranks disagree")                                        \
    X(CC_EINFEASIBLE,   "infeasible")                                            \
    X(CC_EFAIL,         "check failed")                                          \
    X(CC_ETOOBIG,       "too large for this machine's memory")

typedef enum {
#define CC_X_ENUM(name, msg) name,
    CC_STATUS_LIST(CC_X_ENUM)
#undef CC_X_ENUM
    CC_STATUS_COUNT
} cc_status;

/* Short human message for a status ("invalid argument"). Never NULL. */
const char *cc_status_str(cc_status st);
/* Symbolic name of a status ("CC_EINVAL"). Never NULL. */
const char *cc_status_name(cc_status st);

/* Process exit code for a status:
 *   0 ok; 1 a measurement or check failed (wrong results, validation failure);
 *   2 bad input or environment (usage, unsupported, not built, no device, a size too large
 *   for the memory); 3 runtime fault
 *   (timeout, peer died, system error); 130 interrupted. */
int cc_status_exit(cc_status st);

#endif
