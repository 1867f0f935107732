/* The message helpers the geometry rules share (geometry/geom.h). */
#include "geometry/geom.h"

#include <stdarg.h>
#include <stdio.h>

onyx_status geom_fail(geom_msg *msg, onyx_status status, const char *fmt, ...) {
    if (msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg->text, sizeof msg->text, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *geom_shape_str(int rank, const int64_t *dims, char *buf, size_t cap) {
    size_t n = 0;
    if (cap == 0) return buf;
    buf[0] = 0;
    if (rank < 0) {
        snprintf(buf, cap, "?");
        return buf;
    }
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (int i = 0; i < rank && n < cap; i++) {
        if (dims[i] < 0) n += (size_t)snprintf(buf + n, cap - n, "%s?", i ? "," : "");
        else n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)dims[i]);
    }
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}
