/* Thread-local error messages behind onyx_last_error(). */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MESSAGE_CAP 1024

static _Thread_local char message[MESSAGE_CAP];

const char *onyx_last_error(void) { return message; }

void onyx_error_clear(void) { message[0] = '\0'; }

onyx_status onyx_error(onyx_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    onyx_verror(status, fmt, ap);
    va_end(ap);
    return status;
}

onyx_status onyx_verror(onyx_status status, const char *fmt, va_list ap) {
    vsnprintf(message, sizeof message, fmt, ap);
    return status;
}

onyx_status onyx_error_prefix(onyx_status status, const char *fmt, ...) {
    char prefix[MESSAGE_CAP];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0) return status;
    /* prefix + ": " + old message, truncated to the buffer */
    size_t plen = (size_t)n < MESSAGE_CAP - 3 ? (size_t)n : MESSAGE_CAP - 3;
    size_t olen = strnlen(message, MESSAGE_CAP - 1);
    if (plen + 2 + olen > MESSAGE_CAP - 1) olen = MESSAGE_CAP - 1 - plen - 2;
    memmove(message + plen + 2, message, olen);
    memcpy(message, prefix, plen);
    message[plen] = ':';
    message[plen + 1] = ' ';
    message[plen + 2 + olen] = '\0';
    return status;
}

onyx_status onyx_oom(const char *what) {
    return onyx_error(ONYX_ERR_NO_MEMORY, "out of memory allocating %s", what);
}

const char *onyx_status_name(onyx_status status) {
    switch (status) {
    case ONYX_OK: return "ONYX_OK";
    case ONYX_ERR_INVALID_ARGUMENT: return "ONYX_ERR_INVALID_ARGUMENT";
    case ONYX_ERR_INVALID_MODEL: return "ONYX_ERR_INVALID_MODEL";
    case ONYX_ERR_UNSUPPORTED: return "ONYX_ERR_UNSUPPORTED";
    case ONYX_ERR_NO_MEMORY: return "ONYX_ERR_NO_MEMORY";
    case ONYX_ERR_IO: return "ONYX_ERR_IO";
    case ONYX_ERR_SHAPE: return "ONYX_ERR_SHAPE";
    case ONYX_ERR_RUNTIME: return "ONYX_ERR_RUNTIME";
    case ONYX_ERR_DEVICE: return "ONYX_ERR_DEVICE";
    case ONYX_ERR_TERMINATED: return "ONYX_ERR_TERMINATED";
    case ONYX_ERR_TIMEOUT: return "ONYX_ERR_TIMEOUT";
    case ONYX_ERR_LIMIT: return "ONYX_ERR_LIMIT";
    }
    return "ONYX_ERR_UNKNOWN";
}
