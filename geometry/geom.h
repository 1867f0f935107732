/* What every geometry rule shares: the status a refused geometry returns and the message buffer
 * it explains itself in. The rules (one header each in geometry/) are pure functions on plain
 * integers, compiled into libonyx and into the CUDA plugin alike, so that op inference, the CPU
 * kernels and the device kernels compute a shape one way. They know no graph node, tensor or
 * thread-local error: attribute parsing stays in ops/, and callers turn a refusal into their own
 * error (GEOM_TRY). */
#ifndef ONYX_GEOMETRY_GEOM_H
#define ONYX_GEOMETRY_GEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onyx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest rank a rule takes (ONYX_MAX_RANK of core/value.h; checked there). */
#define GEOM_MAX_RANK 16

/* Why a rule refused, in words that name the dims involved. */
typedef struct geom_msg {
    char text[256];
} geom_msg;

/* Writes the message (when msg is not NULL) and returns status: rules refuse with
 * `return geom_fail(msg, ONYX_ERR_SHAPE, "...", ...)`. */
onyx_status geom_fail(geom_msg *msg, onyx_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "[2,3,?]" (? an unknown dim; "?" an unknown rank) into buf (cap bytes), for messages; returns
 * buf. */
const char *geom_shape_str(int rank, const int64_t *dims, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

/* For callers that report through core/status.h: runs a rule that takes `&m` as its message and
 * turns a refusal into the thread's error (onyx_error) with the rule's words. */
#define GEOM_TRY(m, call)                                                                          \
    do {                                                                                           \
        onyx_status geom_status_ = (call);                                                         \
        if (geom_status_ != ONYX_OK) return onyx_error(geom_status_, "%s", (m).text);              \
    } while (0)

#endif
