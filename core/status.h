/* Error reporting: a status code plus a thread-local message that names what failed and where. */
#ifndef ONYX_CORE_STATUS_H
#define ONYX_CORE_STATUS_H

#include <stdarg.h>

#include "onyx.h"

#if defined(__GNUC__)
#define ONYX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ONYX_PRINTF(a, b)
#endif

/* Sets the thread's message and returns `status`, so that failures read
 * `return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected 4", i, r);` */
onyx_status onyx_error(onyx_status status, const char *fmt, ...) ONYX_PRINTF(2, 3);
onyx_status onyx_verror(onyx_status status, const char *fmt, va_list ap);

/* Puts "<prefix>: " in front of the current message (adds where an error happened as it travels
 * up: "prepare: node 'conv1' (Conv-11): " + the kernel's own words). Returns `status`. */
onyx_status onyx_error_prefix(onyx_status status, const char *fmt, ...) ONYX_PRINTF(2, 3);

/* Clears the thread's message. */
void onyx_error_clear(void);

/* Allocation failure helper: sets a message naming `what` and returns ONYX_ERR_NO_MEMORY. */
onyx_status onyx_oom(const char *what);

/* Propagate a failing status. */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        onyx_status try_status_ = (expr);                                                          \
        if (try_status_ != ONYX_OK) return try_status_;                                            \
    } while (0)

/* Set `st` and jump to the function's single cleanup label `done` on failure. */
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        st = (expr);                                                                               \
        if (st != ONYX_OK) goto done;                                                              \
    } while (0)

#endif
