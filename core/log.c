/* Formats a log line and hands it to the session's callback. */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>

void log_write(const exec_log *log, onyx_log_level level, const char *fmt, ...) {
    if (!log_enabled(log, level)) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log->fn(log->user, level, line);
}
