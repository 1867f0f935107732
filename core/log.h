/* Log lines to the session's callback (exec_env.log): placement and planning facts at verbose
 * and info level. Nothing is formatted when the level is filtered out. */
#ifndef ONYX_CORE_LOG_H
#define ONYX_CORE_LOG_H

#include "core/status.h"

/* Where log lines go: a session's callback and its level (exec_env.log). */
typedef struct exec_log {
    onyx_log_fn fn; /* NULL: off */
    void *user;
    onyx_log_level level;
} exec_log;

static inline bool log_enabled(const exec_log *log, onyx_log_level level) {
    return log->fn && level >= log->level;
}

void log_write(const exec_log *log, onyx_log_level level, const char *fmt, ...) ONYX_PRINTF(3, 4);

#endif
