#include "core/status.h"

static const char *const cc_status_msgs[] = {
#define CC_X_MSG(name, msg) [name] = msg,
    CC_STATUS_LIST(CC_X_MSG)
#undef CC_X_MSG
};

static const char *const cc_status_names[] = {
#define CC_X_NAME(name, msg) [name] = #name,
    CC_STATUS_LIST(CC_X_NAME)
#undef CC_X_NAME
};

const char *cc_status_str(cc_status st)
{
    if ((unsigned)st >= CC_STATUS_COUNT)
        return "unknown status";
    return cc_status_msgs[st];
}

const char *cc_status_name(cc_status st)
{
    if ((unsigned)st >= CC_STATUS_COUNT)
        return "CC_UNKNOWN";
    return cc_status_names[st];
}

int cc_status_exit(cc_status st)
{
    switch (st) {
    case CC_OK:
        return 0;
    case CC_EWRONG:
    case CC_EFAIL:
        return 1;
    case CC_EINVAL:
    case CC_EUSAGE:
    case CC_EPARSE:
    case CC_ENOTSUP:
    case CC_ENOTBUILT:
    case CC_ENODEV:
    case CC_EMISMATCH:
    case CC_EINFEASIBLE:
    case CC_ETOOBIG:
        return 2;
    case CC_EINTR:
        return 130;
    default:
        return 3;
    }
}
