/* CPU kernel of StringNormalizer: drops stopword elements and changes case with the C library's
 * locale-aware wide-character mappings (towlower_l/towupper_l), decoding with mbrtowc in that
 * locale, so that non-ASCII letters change case too. */
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "kernels_cpu/cpu_kernels.h"

typedef enum case_action { CASE_NONE, CASE_LOWER, CASE_UPPER } case_action;

typedef struct normalizer {
    case_action action;
    case_action compare;  /* case both sides take before a case-insensitive comparison */
    bool case_sensitive;
    locale_t loc;
    size_t n_stop;
    char **stop;          /* stopwords, already in the compare case when case-insensitive */
} normalizer;

void cpu_string_normalizer_release(void *state) {
    normalizer *nz = state;
    if (!nz) return;
    for (size_t i = 0; i < nz->n_stop; i++) free(nz->stop[i]);
    free(nz->stop);
    if (nz->loc) freelocale(nz->loc);
    free(nz);
}

static bool is_utf8_locale(locale_t loc) {
    const char *cs = nl_langinfo_l(CODESET, loc);
    return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

/* The model's locale when it is installed (as named, or with ".UTF-8" added); ONNX strings are
 * UTF-8, so a locale of another codeset is not used. Where neither is installed (containers often
 * have only C.UTF-8) the case mappings of C.UTF-8 are used: glibc's C.UTF-8 knows the Unicode
 * case pairs, which is what a named locale would add for case changes. */
static locale_t open_locale(const char *name) {
    char buf[256];
    const char *tries[3] = {name, NULL, "C.UTF-8"};
    if (name[0] && !strchr(name, '.') && strlen(name) + 7 < sizeof buf) {
        snprintf(buf, sizeof buf, "%s.UTF-8", name);
        tries[1] = buf;
    }
    for (int k = 0; k < 3; k++) {
        if (!tries[k] || !tries[k][0]) continue;
        locale_t loc = newlocale(LC_CTYPE_MASK, tries[k], (locale_t)0);
        if (!loc) continue;
        if (is_utf8_locale(loc)) return loc;
        freelocale(loc);
    }
    return (locale_t)0;
}

/* Writes s with its case changed into a fresh string (*out, caller frees). Decodes and encodes in
 * the thread's current locale, which the caller has set to nz->loc. */
static onyx_status change_case(const normalizer *nz, case_action action, const char *s,
                               int64_t index, char **out) {
    size_t n = strlen(s);
    /* a character never takes more than MB_LEN_MAX bytes, and never fewer than one */
    if (n > (SIZE_MAX - 1) / MB_LEN_MAX) return onyx_oom("string element");
    char *d = malloc(n * MB_LEN_MAX + 1);
    if (!d) return onyx_oom("string element");
    mbstate_t in_state, out_state;
    memset(&in_state, 0, sizeof in_state);
    memset(&out_state, 0, sizeof out_state);
    size_t i = 0, o = 0;
    while (i < n) {
        wchar_t wc;
        size_t len = mbrtowc(&wc, s + i, n - i, &in_state);
        if (len == (size_t)-1 || len == (size_t)-2 || len == 0) {
            free(d);
            return onyx_error(ONYX_ERR_RUNTIME, "element %lld is not valid UTF-8 (at byte %zu)",
                              (long long)index, i);
        }
        i += len;
        wint_t m = action == CASE_LOWER   ? towlower_l((wint_t)wc, nz->loc)
                   : action == CASE_UPPER ? towupper_l((wint_t)wc, nz->loc)
                                          : (wint_t)wc;
        size_t w = wcrtomb(d + o, (wchar_t)m, &out_state);
        if (w == (size_t)-1) {
            free(d);
            return onyx_error(ONYX_ERR_RUNTIME, "element %lld: a case-changed character has no "
                              "UTF-8 form", (long long)index);
        }
        o += w;
    }
    d[o] = 0;
    *out = d;
    return ONYX_OK;
}

onyx_status cpu_string_normalizer_prepare(const kernel_prep *p, void **state) {
    const graph_node *node = p->node;
    onyx_status st = ONYX_OK;
    locale_t old = (locale_t)0;
    normalizer *nz = calloc(1, sizeof *nz);
    if (!nz) return onyx_oom("StringNormalizer state");
    const char *action = attr_string(node, "case_change_action", "NONE");
    if (strcmp(action, "LOWER") == 0) nz->action = CASE_LOWER;
    else if (strcmp(action, "UPPER") == 0) nz->action = CASE_UPPER;
    else if (strcmp(action, "NONE") == 0) nz->action = CASE_NONE;
    else {
        st = onyx_error(ONYX_ERR_INVALID_MODEL,
                        "case_change_action is '%s', expected NONE, LOWER or UPPER", action);
        goto done;
    }
    /* as onnxruntime: a case-insensitive comparison uses the case the output takes, lower case
     * when the case is kept */
    nz->compare = nz->action == CASE_UPPER ? CASE_UPPER : CASE_LOWER;
    nz->case_sensitive = attr_int(node, "is_case_sensitive", 0) != 0;
    const char *name = attr_string(node, "locale", "");
    nz->loc = open_locale(name);
    if (!nz->loc) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "no UTF-8 locale is usable (tried '%s' and "
                        "C.UTF-8)", name);
        goto done;
    }
    const graph_attr *sw = node_attr(node, "stopwords");
    if (sw && sw->type == ATTR_STRINGS && sw->n) {
        if (!(nz->stop = calloc(sw->n, sizeof *nz->stop))) {
            st = onyx_oom("stopwords");
            goto done;
        }
        old = uselocale(nz->loc);
        for (; nz->n_stop < sw->n; nz->n_stop++) {
            const char *w = sw->strings[nz->n_stop];
            if (nz->case_sensitive) {
                if (!(nz->stop[nz->n_stop] = strdup(w))) {
                    st = onyx_oom("stopword");
                    goto done;
                }
            } else if ((st = change_case(nz, nz->compare, w, (int64_t)nz->n_stop,
                                         &nz->stop[nz->n_stop])) != ONYX_OK) {
                onyx_error_prefix(st, "stopwords");
                goto done;
            }
        }
    }
done:
    if (old) uselocale(old);
    if (st != ONYX_OK) {
        cpu_string_normalizer_release(nz);
        return st;
    }
    *state = nz;
    return ONYX_OK;
}

static bool is_stopword(const normalizer *nz, const char *s) {
    for (size_t k = 0; k < nz->n_stop; k++)
        if (strcmp(nz->stop[k], s) == 0) return true;
    return false;
}

onyx_status cpu_string_normalizer_run(const kernel_call *c) {
    const normalizer *nz = c->state;
    const tensor *x = kernel_input(c, 0);
    if (!nz || !x || x->dtype != ONYX_STRING)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 is not a string tensor");
    if (x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1)) {
        char buf[64];
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has shape %s, expected [C] or [1, C]",
                          shape_str(x->rank, x->dims, buf, sizeof buf));
    }
    onyx_status st = ONYX_OK;
    char *const *s = x->data;
    int64_t n = x->numel, kept = 0;
    /* converted strings, owned here until they move into the output */
    char **res = calloc(n ? (size_t)n : 1, sizeof *res);
    if (!res) return onyx_oom("StringNormalizer results");
    locale_t old = uselocale(nz->loc);
    for (int64_t i = 0; i < n; i++) {
        char *folded = NULL;
        bool stop = false;
        if (nz->n_stop && nz->case_sensitive) {
            stop = is_stopword(nz, s[i]);
        } else if (nz->n_stop) {
            CHECK(change_case(nz, nz->compare, s[i], i, &folded));
            stop = is_stopword(nz, folded);
        }
        if (stop) {
            free(folded);
            continue;
        }
        if (folded && nz->action == nz->compare) {
            res[kept++] = folded;
            continue;
        }
        free(folded);
        if (nz->action == CASE_NONE) {
            if (!(res[kept] = strdup(s[i]))) {
                st = onyx_oom("string element");
                goto done;
            }
            kept++;
        } else {
            CHECK(change_case(nz, nz->action, s[i], i, &res[kept]));
            kept++;
        }
    }
    /* with every element dropped the output is one empty string, [1] or [1, 1] (spec) */
    int64_t dims[2] = {1, kept ? kept : 1};
    CHECK(value_alloc_tensor(c->out[0], ONYX_STRING, x->rank, x->rank == 1 ? dims + 1 : dims));
    char **y = c->out[0]->t.data;
    for (int64_t i = 0; i < kept; i++) {
        free(y[i]);
        y[i] = res[i];
        res[i] = NULL;
    }
done:
    uselocale(old);
    for (int64_t i = 0; i < kept; i++) free(res[i]);
    free(res);
    return st;
}
