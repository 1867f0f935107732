/* A C interface to the RE2 library (which is C++), for RegexFullMatch. */
#ifndef ONYX_KERNELS_CPU_REGEX_RE2_H
#define ONYX_KERNELS_CPU_REGEX_RE2_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpu_re2 cpu_re2;

/* Compiles an RE2 pattern (len bytes, UTF-8). NULL on failure, with RE2's reason (or "out of
 * memory") written into err[cap]. Free with cpu_re2_free. */
cpu_re2 *cpu_re2_compile(const char *pattern, size_t len, char *err, size_t cap);

/* Whether the whole of s[0..len) matches. Thread-safe on one compiled pattern. */
bool cpu_re2_full_match(const cpu_re2 *re, const char *s, size_t len);

void cpu_re2_free(cpu_re2 *re);

#ifdef __cplusplus
}
#endif

#endif
