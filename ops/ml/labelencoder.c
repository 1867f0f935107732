/* Schema of ai.onnx.ml LabelEncoder: maps each element through parallel keys/values lists (v1:
 * classes_strings ↔ their indices; v2: keys_* / values_* lists; v4: also 1-D tensors of any of
 * its types), unknown elements to the default. Same shape as X. */
#include "ops/ml/common.h"

#define LE_TYPES (DT_BIT(ONYX_STRING) | DT_BIT(ONYX_INT64) | DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_INT32) | \
                  DT_BIT(ONYX_INT16) | DT_BIT(ONYX_DOUBLE))

/* The one attribute of `names` that is set (NULL if none); fails if several are. */
static onyx_status only_one(const graph_node *n, const char *const *names, int count, const char *what,
                            const graph_attr **out) {
    *out = NULL;
    for (int i = 0; i < count; i++) {
        const graph_attr *a = node_attr(n, names[i]);
        if (!a) continue;
        if (*out)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "both %s and %s are set: one %s only", (*out)->name,
                              a->name, what);
        *out = a;
    }
    return ONYX_OK;
}

/* Element type and count of a keys_* / values_* attribute. */
static void list_type(const graph_attr *a, onyx_dtype *dt, int64_t *n) {
    switch (a->type) {
    case ATTR_FLOATS: *dt = ONYX_FLOAT; *n = (int64_t)a->n; break;
    case ATTR_INTS: *dt = ONYX_INT64; *n = (int64_t)a->n; break;
    case ATTR_STRINGS: *dt = ONYX_STRING; *n = (int64_t)a->n; break;
    default: *dt = a->t ? a->t->dtype : ONYX_UNDEFINED; *n = a->t ? a->t->numel : 0; break;
    }
}

static onyx_status labelencoder_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    onyx_dtype in_dt = c->in[0] ? c->in[0]->dtype : ONYX_UNDEFINED, out_dt;
    if (n->version < 2) {
        TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_STRING) | DT_BIT(ONYX_INT64)));
        out_dt = in_dt == ONYX_STRING ? ONYX_INT64 : ONYX_STRING;
    } else {
        TRY(infer_dtype_in(c, 0, n->version < 4 ? (DT_BIT(ONYX_STRING) | DT_BIT(ONYX_INT64) |
                                                   DT_BIT(ONYX_FLOAT)) : LE_TYPES));
        static const char *const keys[] = {"keys_strings", "keys_int64s", "keys_floats", "keys_tensor"};
        static const char *const values[] = {"values_strings", "values_int64s", "values_floats",
                                             "values_tensor"};
        const graph_attr *k, *v;
        TRY(only_one(n, keys, n->version < 4 ? 3 : 4, "keys_* attribute", &k));
        TRY(only_one(n, values, n->version < 4 ? 3 : 4, "values_* attribute", &v));
        if (!k || !v) return onyx_error(ONYX_ERR_INVALID_MODEL, "needs one keys_* and one values_* attribute");
        onyx_dtype key_dt;
        int64_t nk, nv;
        list_type(k, &key_dt, &nk);
        list_type(v, &out_dt, &nv);
        if (nk != nv)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "%s has %lld entries but %s has %lld", k->name,
                              (long long)nk, v->name, (long long)nv);
        if (!dtype_in(out_dt, LE_TYPES))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "%s of type %s", v->name, onyx_dtype_name(out_dt));
        bool key_int = key_dt == ONYX_INT64 || key_dt == ONYX_INT32 || key_dt == ONYX_INT16;
        bool in_int = in_dt == ONYX_INT64 || in_dt == ONYX_INT32 || in_dt == ONYX_INT16;
        bool key_real = key_dt == ONYX_FLOAT || key_dt == ONYX_DOUBLE;
        bool in_real = in_dt == ONYX_FLOAT || in_dt == ONYX_DOUBLE;
        if (in_dt != ONYX_UNDEFINED && key_dt != in_dt && !(key_int && in_int) && !(key_real && in_real))
            return onyx_error(ONYX_ERR_SHAPE, "input of type %s, but %s are %s", onyx_dtype_name(in_dt),
                              k->name, onyx_dtype_name(key_dt));
        const tensor *d = attr_tensor(n, "default_tensor");
        if (d && (d->dtype != out_dt || d->numel != 1))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "default_tensor must hold one %s (got %lld of %s)",
                              onyx_dtype_name(out_dt), (long long)d->numel, onyx_dtype_name(d->dtype));
    }
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], out_dt, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs_v1[] = {{"classes_strings", ATTR_STRINGS}, {"default_int64", ATTR_INT},
                                     {"default_string", ATTR_STRING}, {NULL, 0}};
static const attr_spec attrs_v2[] = {
    {"keys_strings", ATTR_STRINGS}, {"keys_int64s", ATTR_INTS},     {"keys_floats", ATTR_FLOATS},
    {"values_strings", ATTR_STRINGS}, {"values_int64s", ATTR_INTS}, {"values_floats", ATTR_FLOATS},
    {"default_string", ATTR_STRING}, {"default_int64", ATTR_INT},   {"default_float", ATTR_FLOAT},
    {NULL, 0}};
static const attr_spec attrs_v4[] = {
    {"keys_strings", ATTR_STRINGS}, {"keys_int64s", ATTR_INTS},     {"keys_floats", ATTR_FLOATS},
    {"values_strings", ATTR_STRINGS}, {"values_int64s", ATTR_INTS}, {"values_floats", ATTR_FLOATS},
    {"default_string", ATTR_STRING}, {"default_int64", ATTR_INT},   {"default_float", ATTR_FLOAT},
    {"keys_tensor", ATTR_TENSOR},   {"values_tensor", ATTR_TENSOR}, {"default_tensor", ATTR_TENSOR},
    {NULL, 0}};

const op_schema op_LabelEncoder[] = {
    {ML_DOMAIN, "LabelEncoder", 1, 1, 1, 1, 1, attrs_v1, labelencoder_infer, 0},
    {ML_DOMAIN, "LabelEncoder", 2, 1, 1, 1, 1, attrs_v2, labelencoder_infer, 0},
    {ML_DOMAIN, "LabelEncoder", 4, 1, 1, 1, 1, attrs_v4, labelencoder_infer, 0},
    OP_END};
