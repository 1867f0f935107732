/* CPU kernel of ai.onnx.ml LabelEncoder. Prepare sorts the keys once (the last of repeated keys
 * wins, NaN keys match NaN) and lays out the values and the default as a tensor of the output type;
 * run is a binary search per element. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/move.h"

typedef enum key_kind { KEY_STRING, KEY_INT, KEY_REAL } key_kind;

typedef struct le_key {
    const char *s; /* borrowed from the node's attributes */
    int64_t i;
    double d;
    int64_t value; /* index into values */
} le_key;

typedef struct le_state {
    key_kind kind;
    le_key *keys;
    int64_t n;          /* distinct keys */
    int64_t default_at; /* index of the default in values */
    tensor values;      /* the values, then the default, in the output type */
} le_state;

static int cmp_key(const le_key *a, const le_key *b, key_kind k) {
    switch (k) {
    case KEY_STRING: return strcmp(a->s, b->s);
    case KEY_INT: return (a->i > b->i) - (a->i < b->i);
    default:
        /* NaN sorts last and equals NaN. */
        if (isnan(a->d) || isnan(b->d)) return isnan(a->d) - isnan(b->d);
        return (a->d > b->d) - (a->d < b->d);
    }
}

static int cmp_sort(const void *a, const void *b, void *kind) {
    int r = cmp_key(a, b, *(const key_kind *)kind);
    if (r) return r;
    /* equal keys: later entries last, so the dedupe below keeps the last one */
    const le_key *x = a, *y = b;
    return (x->value > y->value) - (x->value < y->value);
}

void cpu_label_encoder_release(void *state) {
    le_state *s = state;
    if (!s) return;
    free(s->keys);
    tensor_release(&s->values);
    free(s);
}

/* Value i (or the default when i == n) of a values_* attribute written into s->values. */
static onyx_status set_value(le_state *s, int64_t at, const graph_attr *a, int64_t i) {
    tensor *t = &s->values;
    switch (a->type) {
    case ATTR_STRINGS: return tensor_set_string(t, at, a->strings[i], strlen(a->strings[i]));
    case ATTR_INTS: ((int64_t *)t->data)[at] = a->ints[i]; return ONYX_OK;
    case ATTR_FLOATS: ((float *)t->data)[at] = a->floats[i]; return ONYX_OK;
    default: {
        const tensor *v = a->t;
        if (v->dtype == ONYX_STRING) {
            const char *str = ((char *const *)v->data)[i];
            return tensor_set_string(t, at, str, strlen(str));
        }
        size_t es = cpu_move_esize(v);
        memcpy((char *)t->data + (size_t)at * es, (const char *)v->data + (size_t)i * es, es);
        return ONYX_OK;
    }
    }
}

static onyx_status set_default(le_state *s, const graph_node *n, onyx_dtype dt) {
    tensor *t = &s->values;
    int64_t at = s->n;
    const tensor *d = attr_tensor(n, "default_tensor");
    if (d) {
        graph_attr a = {.type = ATTR_TENSOR, .t = (tensor *)d};
        return set_value(s, at, &a, 0);
    }
    switch (dt) {
    case ONYX_STRING: {
        const char *str = attr_string(n, "default_string", "_Unused");
        return tensor_set_string(t, at, str, strlen(str));
    }
    case ONYX_FLOAT: ((float *)t->data)[at] = attr_float(n, "default_float", -0.0f); return ONYX_OK;
    case ONYX_DOUBLE: ((double *)t->data)[at] = attr_float(n, "default_float", -0.0f); return ONYX_OK;
    case ONYX_INT64: ((int64_t *)t->data)[at] = attr_int(n, "default_int64", -1); return ONYX_OK;
    case ONYX_INT32: ((int32_t *)t->data)[at] = (int32_t)attr_int(n, "default_int64", -1); return ONYX_OK;
    case ONYX_INT16: ((int16_t *)t->data)[at] = (int16_t)attr_int(n, "default_int64", -1); return ONYX_OK;
    default: return onyx_error(ONYX_ERR_UNSUPPORTED, "LabelEncoder output of %s", onyx_dtype_name(dt));
    }
}

static const graph_attr *first_attr(const graph_node *n, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (node_attr(n, names[i])) return node_attr(n, names[i]);
    return NULL;
}

onyx_status cpu_label_encoder_prepare(const kernel_prep *p, void **state) {
    const graph_node *n = p->node;
    onyx_dtype out_dt = p->out_type[0].dtype;
    le_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("LabelEncoder state");
    onyx_status st = ONYX_OK;
    const graph_attr *keys, *values;
    /* v1 maps both ways: string inputs to their index, int64 inputs to the class name */
    bool v1_by_index = n->version < 2 && out_dt == ONYX_STRING;
    if (n->version < 2) {
        /* v1: classes_strings[i] ↔ i */
        keys = node_attr(n, "classes_strings");
        static const graph_attr none = {.type = ATTR_STRINGS};
        if (!keys) keys = &none;
        values = keys;
    } else {
        static const char *const kn[] = {"keys_strings", "keys_int64s", "keys_floats", "keys_tensor"};
        static const char *const vn[] = {"values_strings", "values_int64s", "values_floats", "values_tensor"};
        keys = first_attr(n, kn, 4);
        values = first_attr(n, vn, 4);
        if (!keys || !values) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "needs one keys_* and one values_* attribute");
            goto done;
        }
    }
    const tensor *kt = keys->type == ATTR_TENSOR ? keys->t : NULL;
    s->n = kt ? kt->numel : (int64_t)keys->n;
    onyx_dtype key_dt = kt ? kt->dtype : keys->type == ATTR_STRINGS ? ONYX_STRING
                                         : keys->type == ATTR_INTS  ? ONYX_INT64 : ONYX_FLOAT;
    if (v1_by_index) key_dt = ONYX_INT64;
    s->kind = key_dt == ONYX_STRING ? KEY_STRING : (key_dt == ONYX_FLOAT || key_dt == ONYX_DOUBLE) ? KEY_REAL : KEY_INT;
    s->keys = calloc((size_t)s->n + 1, sizeof *s->keys);
    int64_t vdim = s->n + 1;
    if (!s->keys) {
        st = onyx_oom("LabelEncoder keys");
        goto done;
    }
    CHECK(tensor_alloc(&s->values, out_dt, 1, &vdim));
    for (int64_t i = 0; i < s->n; i++) {
        le_key *k = &s->keys[i];
        k->value = i;
        if (v1_by_index) k->i = i;
        else if (kt) {
            if (s->kind == KEY_STRING) k->s = ((char *const *)kt->data)[i];
            else if (s->kind == KEY_INT) k->i = tensor_get_i64(kt, i);
            else k->d = tensor_get_f64(kt, i);
        } else if (keys->type == ATTR_STRINGS) k->s = keys->strings[i];
        else if (keys->type == ATTR_INTS) k->i = keys->ints[i];
        else k->d = keys->floats[i];
        if (n->version < 2 && !v1_by_index) ((int64_t *)s->values.data)[i] = i;
        else CHECK(set_value(s, i, values, i));
    }
    s->default_at = s->n;
    CHECK(set_default(s, n, out_dt));
    qsort_r(s->keys, (size_t)s->n, sizeof *s->keys, cmp_sort, &s->kind);
    /* keep the last of each run of equal keys */
    int64_t m = 0;
    for (int64_t i = 0; i < s->n; i++) {
        if (m > 0 && cmp_key(&s->keys[m - 1], &s->keys[i], s->kind) == 0) s->keys[m - 1] = s->keys[i];
        else s->keys[m++] = s->keys[i];
    }
    s->n = m;
    *state = s;
    return ONYX_OK;
done:
    cpu_label_encoder_release(s);
    return st;
}

onyx_status cpu_label_encoder_run(const kernel_call *c) {
    const le_state *s = c->state;
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    size_t es = cpu_move_esize(y);
    cpu_move_begin(y);
    for (int64_t i = 0; i < x->numel; i++) {
        le_key probe = {0};
        if (s->kind == KEY_STRING) probe.s = ((char *const *)x->data)[i];
        else if (s->kind == KEY_INT) probe.i = tensor_get_i64(x, i);
        else probe.d = tensor_get_f64(x, i);
        int64_t lo = 0, hi = s->n, at = s->default_at;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            int r = cmp_key(&s->keys[mid], &probe, s->kind);
            if (r == 0) {
                at = s->keys[mid].value;
                break;
            }
            if (r < 0) lo = mid + 1;
            else hi = mid;
        }
        memcpy((char *)y->data + (size_t)i * es, (const char *)s->values.data + (size_t)at * es, es);
    }
    return cpu_move_end(y);
}
