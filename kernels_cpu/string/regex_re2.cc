// The RE2 shim behind regex_re2.h: no C++ exception or RE2 log line escapes into the C library.
#include "kernels_cpu/string/regex_re2.h"

#include <re2/re2.h>

#include <cstdio>
#include <new>

struct cpu_re2 {
    RE2 re;
    cpu_re2(const char *p, size_t n, const RE2::Options &o) : re(re2::StringPiece(p, n), o) {}
};

extern "C" cpu_re2 *cpu_re2_compile(const char *pattern, size_t len, char *err, size_t cap) {
    try {
        // Quiet: RE2 would otherwise log a bad pattern to stderr.
        RE2::Options opt(RE2::Quiet);
        cpu_re2 *r = new cpu_re2(pattern, len, opt);
        if (r->re.ok()) return r;
        if (cap) std::snprintf(err, cap, "%s", r->re.error().c_str());
        delete r;
    } catch (...) {
        if (cap) std::snprintf(err, cap, "out of memory");
    }
    return nullptr;
}

extern "C" bool cpu_re2_full_match(const cpu_re2 *re, const char *s, size_t len) {
    try {
        return RE2::FullMatch(re2::StringPiece(s, len), re->re);
    } catch (...) {
        return false;
    }
}

extern "C" void cpu_re2_free(cpu_re2 *re) { delete re; }
