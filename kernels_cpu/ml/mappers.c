/* CPU kernels of the ai.onnx.ml mapping ops: CategoryMapper (string ↔ int64 through two parallel
 * lists), DictVectorizer (map → dense vector by vocabulary) and FeatureVectorizer (inputs cut or
 * padded and concatenated into float rows). Prepare sorts the lookup lists once; run binary-searches. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"

typedef struct entry {
    const char *s; /* borrowed from the node's attributes (they live as long as the rep) */
    int64_t i;
    int64_t at;    /* position in the attribute list */
} entry;

static int cmp_str(const void *a, const void *b) {
    const entry *x = a, *y = b;
    int r = strcmp(x->s, y->s);
    return r ? r : (x->at > y->at) - (x->at < y->at);
}

static int cmp_int(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->i != y->i) return (x->i > y->i) - (x->i < y->i);
    return (x->at > y->at) - (x->at < y->at);
}

static bool same_key(const entry *a, const entry *b, bool strings) {
    return strings ? !strcmp(a->s, b->s) : a->i == b->i;
}

/* The first entry (lowest list position) whose key equals the probe's, or -1. */
static int64_t find(const entry *e, int64_t n, const entry *probe, bool strings) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int r = strings ? strcmp(e[mid].s, probe->s) : (e[mid].i > probe->i) - (e[mid].i < probe->i);
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && same_key(&e[lo], probe, strings) ? lo : -1;
}

/* Entries of a string list (or, with ints, an int list) sorted by key then position. */
static onyx_status sorted_entries(const graph_node *n, const char *strs, const char *ints, entry **out,
                                  int64_t *count) {
    const graph_attr *s = strs ? node_attr(n, strs) : NULL;
    const int64_t *iv = NULL;
    size_t ni = ints ? attr_ints(n, ints, &iv) : 0, ns = s ? s->n : 0;
    size_t cnt = ns > ni ? ns : ni;
    *out = NULL;
    *count = (int64_t)cnt;
    if (!cnt) return ONYX_OK;
    entry *e = calloc(cnt, sizeof *e);
    if (!e) return onyx_oom("lookup list");
    for (size_t k = 0; k < cnt; k++) {
        e[k].s = k < ns ? s->strings[k] : "";
        e[k].i = k < ni ? iv[k] : 0;
        e[k].at = (int64_t)k;
    }
    *out = e;
    return ONYX_OK;
}

/* ---- CategoryMapper */

typedef struct catmap_state {
    entry *by_string, *by_int; /* the same (string, int) pairs, sorted each way */
    int64_t n;
} catmap_state;

void cpu_category_mapper_release(void *state) {
    catmap_state *s = state;
    if (!s) return;
    free(s->by_string);
    free(s->by_int);
    free(s);
}

onyx_status cpu_category_mapper_prepare(const kernel_prep *p, void **state) {
    catmap_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("CategoryMapper");
    size_t ni = attr_ints(p->node, "cats_int64s", NULL);
    const graph_attr *cs = node_attr(p->node, "cats_strings");
    onyx_status st = ONYX_OK;
    if (ni != (cs ? cs->n : 0))
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "cats_int64s has %zu entries but cats_strings has %zu", ni,
                        cs ? cs->n : 0);
    if (st == ONYX_OK) st = sorted_entries(p->node, "cats_strings", "cats_int64s", &s->by_string, &s->n);
    if (st == ONYX_OK) st = sorted_entries(p->node, "cats_strings", "cats_int64s", &s->by_int, &s->n);
    if (st != ONYX_OK) {
        cpu_category_mapper_release(s);
        return st;
    }
    if (s->n) {
        qsort(s->by_string, (size_t)s->n, sizeof *s->by_string, cmp_str);
        qsort(s->by_int, (size_t)s->n, sizeof *s->by_int, cmp_int);
    }
    *state = s;
    return ONYX_OK;
}

onyx_status cpu_category_mapper_run(const kernel_call *c) {
    const catmap_state *s = c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->dtype == ONYX_STRING) {
        int64_t dflt = attr_int(c->node, "default_int64", -1);
        for (int64_t k = 0; k < x->numel; k++) {
            entry probe = {((char *const *)x->data)[k], 0, 0};
            int64_t at = find(s->by_string, s->n, &probe, true);
            ((int64_t *)y->data)[k] = at < 0 ? dflt : s->by_string[at].i;
        }
        return ONYX_OK;
    }
    const char *dflt = attr_string(c->node, "default_string", "_Unused");
    for (int64_t k = 0; k < x->numel; k++) {
        entry probe = {NULL, ((const int64_t *)x->data)[k], 0};
        int64_t at = find(s->by_int, s->n, &probe, false);
        const char *v = at < 0 ? dflt : s->by_int[at].s;
        TRY(tensor_set_string(y, k, v, strlen(v)));
    }
    return ONYX_OK;
}

/* ---- DictVectorizer */

typedef struct dictvec_state {
    entry *vocab; /* sorted by word, then position */
    int64_t n;
    bool strings;
} dictvec_state;

void cpu_dict_vectorizer_release(void *state) {
    dictvec_state *s = state;
    if (!s) return;
    free(s->vocab);
    free(s);
}

onyx_status cpu_dict_vectorizer_prepare(const kernel_prep *p, void **state) {
    dictvec_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("DictVectorizer");
    const graph_attr *sv = node_attr(p->node, "string_vocabulary");
    s->strings = sv && sv->n;
    onyx_status st = s->strings ? sorted_entries(p->node, "string_vocabulary", NULL, &s->vocab, &s->n)
                                : sorted_entries(p->node, NULL, "int64_vocabulary", &s->vocab, &s->n);
    if (st == ONYX_OK && s->n == 0)
        st = onyx_error(ONYX_ERR_INVALID_MODEL, "needs int64_vocabulary or string_vocabulary");
    if (st != ONYX_OK) {
        cpu_dict_vectorizer_release(s);
        return st;
    }
    qsort(s->vocab, (size_t)s->n, sizeof *s->vocab, s->strings ? cmp_str : cmp_int);
    *state = s;
    return ONYX_OK;
}

/* Writes one map into row `row` of y (already zeroed): every vocabulary position of each key. */
static onyx_status vectorize_map(const dictvec_state *s, const onyx_value *m, tensor *y, int64_t row) {
    if (m->kind != ONYX_VALUE_MAP) return onyx_error(ONYX_ERR_SHAPE, "expected a map, got value kind %d", (int)m->kind);
    const tensor *keys = &m->map.keys->t, *values = &m->map.values->t;
    if ((keys->dtype == ONYX_STRING) != s->strings)
        return onyx_error(ONYX_ERR_SHAPE, "map keys of type %s do not match the %s vocabulary",
                          onyx_dtype_name(keys->dtype), s->strings ? "string" : "int64");
    if (values->dtype != y->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "map values of type %s, expected %s like the first map",
                          onyx_dtype_name(values->dtype), onyx_dtype_name(y->dtype));
    size_t es = dtype_size(y->dtype);
    for (int64_t k = 0; k < keys->numel; k++) {
        entry probe = {s->strings ? ((char *const *)keys->data)[k] : NULL,
                       s->strings ? 0 : tensor_get_i64(keys, k), 0};
        /* a word repeated in the vocabulary fills each of its positions */
        for (int64_t at = find(s->vocab, s->n, &probe, s->strings);
             at >= 0 && at < s->n && same_key(&s->vocab[at], &probe, s->strings); at++) {
            int64_t dst = row * s->n + s->vocab[at].at;
            if (y->dtype == ONYX_STRING) {
                const char *v = ((char *const *)values->data)[k];
                TRY(tensor_set_string(y, dst, v, strlen(v)));
            } else {
                memcpy((char *)y->data + (size_t)dst * es, (const char *)values->data + (size_t)k * es, es);
            }
        }
    }
    return ONYX_OK;
}

onyx_status cpu_dict_vectorizer_run(const kernel_call *c) {
    const dictvec_state *s = c->state;
    const onyx_value *x = c->in[0];
    onyx_value *y = c->out[0];
    bool seq = x->kind == ONYX_VALUE_SEQUENCE;
    int64_t rows = seq ? (int64_t)x->seq.count : 1;
    const onyx_value *first = seq ? (rows ? x->seq.items[0] : NULL) : x;
    onyx_dtype dt = ONYX_FLOAT;
    if (first) {
        if (first->kind != ONYX_VALUE_MAP)
            return onyx_error(ONYX_ERR_SHAPE, "input is not a map or a sequence of maps");
        dt = first->map.values->t.dtype;
    }
    if (dt != ONYX_INT64 && dt != ONYX_FLOAT && dt != ONYX_DOUBLE && dt != ONYX_STRING)
        return onyx_error(ONYX_ERR_SHAPE, "map values of type %s, expected int64, float, double or string",
                          onyx_dtype_name(dt));
    int64_t dims[2] = {rows, s->n};
    TRY(seq ? value_alloc_tensor(y, dt, 2, dims) : value_alloc_tensor(y, dt, 1, &dims[1]));
    for (int64_t r = 0; r < rows; r++) TRY(vectorize_map(s, seq ? x->seq.items[r] : x, &y->t, r));
    return ONYX_OK;
}

/* ---- FeatureVectorizer */

onyx_status cpu_feature_vectorizer_run(const kernel_call *c) {
    const int64_t *dims;
    size_t nd = attr_ints(c->node, "inputdimensions", &dims);
    tensor *y = kernel_output(c, 0);
    int64_t rows = y->dims[0], total = y->dims[1], offset = 0;
    float *out = y->data;
    if ((int)nd != c->n_in)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "inputdimensions has %zu entries for %d inputs", nd, c->n_in);
    memset(out, 0, (size_t)(rows * total) * sizeof *out);
    for (int i = 0; i < c->n_in; i++) {
        const tensor *x = kernel_input(c, i);
        if (!x) return onyx_error(ONYX_ERR_SHAPE, "input %d is missing or not a tensor", i);
        int64_t xr = x->rank <= 1 ? 1 : x->dims[0], xc = xr ? x->numel / xr : 0;
        if (x->rank == 0 || xr != rows)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has %" PRId64 " rows (rank %d), expected %" PRId64, i, xr,
                              x->rank, rows);
        int64_t take = xc < dims[i] ? xc : dims[i];
        switch (x->dtype) {
#define COPY(DT, T)                                                                                \
    case DT:                                                                                       \
        for (int64_t r = 0; r < rows; r++)                                                         \
            for (int64_t k = 0; k < take; k++)                                                     \
                out[r * total + offset + k] = (float)((const T *)x->data)[r * xc + k];             \
        break;
            COPY(ONYX_FLOAT, float)
            COPY(ONYX_DOUBLE, double)
            COPY(ONYX_INT64, int64_t)
            COPY(ONYX_INT32, int32_t)
#undef COPY
        default:
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected float, double, int64 or int32", i,
                              onyx_dtype_name(x->dtype));
        }
        offset += dims[i];
    }
    return ONYX_OK;
}
