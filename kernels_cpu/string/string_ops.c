/* CPU kernels of StringConcat (broadcast join) and StringSplit (delimiter or whitespace split,
 * padded to the widest element), following Python's str.split, which the spec's examples use. */
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/common/broadcast.h"
#include "kernels_cpu/cpu_kernels.h"

/* ---- StringConcat */

typedef struct concat_ctx {
    onyx_status st;
} concat_ctx;

static void concat_strings(void *ctx, int64_t n, char *const *p, const int64_t *s) {
    concat_ctx *cc = ctx;
    char **o = (char **)p[0];
    char *const *a = (char *const *)p[1], *const *b = (char *const *)p[2];
    for (int64_t i = 0; i < n && cc->st == ONYX_OK; i++) {
        const char *x = a[i * s[1]], *y = b[i * s[2]];
        size_t lx = strlen(x), ly = strlen(y);
        char *d = malloc(lx + ly + 1);
        if (!d) {
            cc->st = onyx_oom("string tensor element");
            return;
        }
        memcpy(d, x, lx);
        memcpy(d + lx, y, ly + 1);
        free(o[i]);
        o[i] = d;
    }
}

onyx_status cpu_string_concat_run(const kernel_call *c) {
    const tensor *in[2] = {kernel_input(c, 0), kernel_input(c, 1)};
    tensor *out = kernel_output(c, 0);
    if (!in[0] || !in[1] || !out)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "StringConcat needs two inputs and an output");
    for (int k = 0; k < 2; k++)
        if (in[k]->dtype != ONYX_STRING)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected string", k,
                              onyx_dtype_name(in[k]->dtype));
    if (out->dtype != ONYX_STRING || (out->numel > 0 && !out->owns))
        return onyx_error(ONYX_ERR_RUNTIME, "output is not an owned string tensor");
    if (out->numel == 0) return ONYX_OK;
    cpu_bcast_iter it;
    TRY(cpu_bcast_init_tensors(&it, out, 2, in));
    const void *ptr[2] = {in[0]->data, in[1]->data};
    concat_ctx cc = {ONYX_OK};
    /* serial: the status is shared and allocation failure must stop the loop */
    cpu_bcast_run(&it, out->data, ptr, concat_strings, &cc, true);
    return cc.st;
}

/* ---- StringSplit */

/* Python's str.isspace set (Unicode White_Space plus the ASCII separators 0x1C-0x1F). */
static bool is_py_space(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 ||
           cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* Decodes the UTF-8 character at s[i] into *cp and returns its byte length; an invalid byte is
 * taken as one character of its own (it is never whitespace). */
static size_t utf8_char(const unsigned char *s, size_t i, size_t n, uint32_t *cp) {
    unsigned char b = s[i];
    size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3
                 : (b & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || i + len > n) {
        *cp = 0xFFFFFFFFu;
        return 1;
    }
    uint32_t v = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (size_t k = 1; k < len; k++) {
        if ((s[i + k] & 0xC0) != 0x80) {
            *cp = 0xFFFFFFFFu;
            return 1;
        }
        v = (v << 6) | (s[i + k] & 0x3Fu);
    }
    *cp = v;
    return len;
}

/* One split: where each part starts and how long it is (parts NULL when only counting). */
typedef struct split_sink {
    tensor *y;       /* NULL: count only */
    int64_t base;    /* index of this element's first slot in y */
    int64_t count;
    onyx_status st;
} split_sink;

static void emit(split_sink *k, const char *s, size_t len) {
    if (k->y && k->st == ONYX_OK) k->st = tensor_set_string(k->y, k->base + k->count, s, len);
    k->count++;
}

static size_t skip_space(const char *s, size_t i, size_t n, bool want_space) {
    while (i < n) {
        uint32_t cp;
        size_t len = utf8_char((const unsigned char *)s, i, n, &cp);
        if (is_py_space(cp) != want_space) break;
        i += len;
    }
    return i;
}

/* str.split(None, maxsplit): runs of whitespace separate, leading/trailing whitespace is dropped;
 * after maxsplit splits the rest (from its first non-space) is the last part. */
static void split_space(split_sink *k, const char *s, int64_t maxsplit) {
    size_t n = strlen(s), i = 0;
    uint64_t left = maxsplit < 0 ? UINT64_MAX : (uint64_t)maxsplit;
    while (left-- > 0) {
        i = skip_space(s, i, n, true);
        if (i == n) return;
        size_t j = i;
        i = skip_space(s, i, n, false);
        emit(k, s + j, i - j);
    }
    i = skip_space(s, i, n, true);
    if (i < n) emit(k, s + i, n - i);
}

/* str.split(delim, maxsplit): every delimiter separates, so empty parts are kept. */
static void split_delim(split_sink *k, const char *s, const char *delim, int64_t maxsplit) {
    size_t dl = strlen(delim);
    uint64_t left = maxsplit < 0 ? UINT64_MAX : (uint64_t)maxsplit;
    const char *q;
    while (left > 0 && (q = strstr(s, delim)) != NULL) {
        emit(k, s, (size_t)(q - s));
        s = q + dl;
        left--;
    }
    emit(k, s, strlen(s));
}

static void split_one(split_sink *k, const char *s, const char *delim, int64_t maxsplit) {
    if (delim[0]) split_delim(k, s, delim, maxsplit);
    else split_space(k, s, maxsplit);
}

onyx_status cpu_string_split_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    if (!x || x->dtype != ONYX_STRING)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has type %s, expected string",
                          x ? onyx_dtype_name(x->dtype) : "(none)");
    if (x->rank + 1 > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, the output would need more than "
                          "%d", x->rank, ONYX_MAX_RANK);
    /* an absent or empty delimiter means whitespace splitting, as in the spec */
    const char *delim = attr_string(c->node, "delimiter", "");
    int64_t maxsplit = attr_int(c->node, "maxsplit", -1);
    char *const *s = x->data;
    int64_t width = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        split_sink k = {NULL, 0, 0, ONYX_OK};
        split_one(&k, s[i], delim, maxsplit);
        if (k.count > width) width = k.count;
    }
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[x->rank] = width;
    TRY(value_alloc_tensor(c->out[0], ONYX_STRING, x->rank + 1, dims));
    int64_t *counts = NULL;
    if (c->n_out > 1 && c->out[1]) {
        TRY(value_alloc_tensor(c->out[1], ONYX_INT64, x->rank, x->dims));
        counts = c->out[1]->t.data;
    }
    tensor *y = &c->out[0]->t;
    for (int64_t i = 0; i < x->numel; i++) {
        split_sink k = {y, i * width, 0, ONYX_OK};
        split_one(&k, s[i], delim, maxsplit);
        TRY(k.st);
        if (counts) counts[i] = k.count;
    }
    return ONYX_OK;
}
