/* CPU kernel of RegexFullMatch: the pattern is compiled once with RE2 at prepare. */
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/string/regex_re2.h"

#if !ONYX_WITH_RE2
/* Built without RE2 (ONYX_WITH_RE2=0): the op stays known, prepare says what to install. */
cpu_re2 *cpu_re2_compile(const char *pattern, size_t len, char *err, size_t cap) {
    (void)pattern, (void)len, (void)err, (void)cap;
    return NULL;
}
bool cpu_re2_full_match(const cpu_re2 *re, const char *s, size_t len) {
    (void)re, (void)s, (void)len;
    return false;
}
void cpu_re2_free(cpu_re2 *re) { (void)re; }
#endif

onyx_status cpu_regex_full_match_prepare(const kernel_prep *p, void **state) {
#if !ONYX_WITH_RE2
    (void)p, (void)state;
    return onyx_error(ONYX_ERR_UNSUPPORTED, "RegexFullMatch: onyx was built without RE2 (install "
                      "libre2-dev and rebuild, or build with ONYX_WITH_RE2=1)");
#endif
    const graph_attr *a = node_attr(p->node, "pattern");
    if (!a || a->type != ATTR_STRING)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'pattern' is missing");
    char why[256];
    cpu_re2 *re = cpu_re2_compile(a->s, a->s_len, why, sizeof why);
    if (!re)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "pattern '%s' is not a valid RE2 regex: %s",
                          a->s, why);
    *state = re;
    return ONYX_OK;
}

void cpu_regex_full_match_release(void *state) { cpu_re2_free(state); }

typedef struct match_job {
    const cpu_re2 *re;
    char *const *s;
    uint8_t *y;
} match_job;

static void match_range(void *ctx, int64_t begin, int64_t end) {
    const match_job *j = ctx;
    for (int64_t i = begin; i < end; i++) j->y[i] = cpu_re2_full_match(j->re, j->s[i], strlen(j->s[i]));
}

onyx_status cpu_regex_full_match_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!c->state || !x || !y || x->dtype != ONYX_STRING || y->dtype != ONYX_BOOL ||
        y->numel != x->numel)
        return onyx_error(ONYX_ERR_SHAPE, "expected a string input and a bool output of its shape");
    match_job j = {c->state, x->data, y->data};
    parallel_for(x->numel, 256, match_range, &j);
    return ONYX_OK;
}
