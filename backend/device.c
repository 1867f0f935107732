/* Device strings and whether a device is usable here. */
#include "backend/backend.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#ifdef ONYX_WITH_CUDA
int cuda_device_count(void);
#endif

onyx_status device_parse(const char *text, device_kind *kind, int *index) {
    if (!text || !*text || strcasecmp(text, "CPU") == 0) {
        *kind = DEVICE_CPU;
        *index = 0;
        return ONYX_OK;
    }
    if (strncasecmp(text, "CUDA", 4) == 0) {
        const char *rest = text + 4;
        long n = 0;
        if (*rest == ':') {
            char *end;
            errno = 0;
            if (!isdigit((unsigned char)rest[1])) goto bad;
            n = strtol(rest + 1, &end, 10);
            if (errno || *end || n > 1024) goto bad;
        } else if (*rest) {
            goto bad;
        }
        *kind = DEVICE_CUDA;
        *index = (int)n;
        return ONYX_OK;
    }
bad:
    return onyx_error(ONYX_ERR_DEVICE, "unknown device '%s' (expected CPU, CUDA or CUDA:N)", text);
}

bool device_usable(device_kind kind, int index) {
    if (kind == DEVICE_CPU) return index == 0;
#ifdef ONYX_WITH_CUDA
    return index >= 0 && index < cuda_device_count();
#else
    return false;
#endif
}

bool onyx_supports_device(const char *device) {
    device_kind kind;
    int index;
    if (device_parse(device, &kind, &index) != ONYX_OK) {
        onyx_error_clear();
        return false;
    }
    return device_usable(kind, index);
}
