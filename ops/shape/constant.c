/* Schema of Constant: a tensor from exactly one attribute (value; sparse_value from v11, which
 * the loader densifies; the scalar and list forms from v12). */
#include "ops/shape_common.h"

static onyx_status constant_infer(infer_ctx *c) {
    static const char *const names[] = {"value",        "sparse_value", "value_float",
                                        "value_floats", "value_int",    "value_ints",
                                        "value_string", "value_strings"};
    const graph_attr *a = NULL;
    int which = -1, count = 0;
    /* Only the forms this version defines: the loader checks the types of those alone, and
     * others (value_floats given as ints to a Constant-9) would be read as what they are not. */
    int forms = c->node->version >= 12 ? 8 : c->node->version >= 11 ? 2 : 1;
    for (int i = 0; i < forms; i++) {
        const graph_attr *x = node_attr(c->node, names[i]);
        if (!x) continue;
        count++;
        a = x;
        which = i;
    }
    if (count != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "expected exactly one value attribute, got %d",
                          count);
    int64_t n = (int64_t)a->n;
    switch (which) {
    case 0:
    case 1:
        if (!a->t)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s holds no tensor", a->name);
        type_set_tensor(&c->out[0], a->t->dtype, a->t->rank, a->t->dims);
        break;
    case 2: type_set_tensor(&c->out[0], ONYX_FLOAT, 0, NULL); break;
    case 3: type_set_tensor(&c->out[0], ONYX_FLOAT, 1, &n); break;
    case 4: type_set_tensor(&c->out[0], ONYX_INT64, 0, NULL); break;
    case 5: type_set_tensor(&c->out[0], ONYX_INT64, 1, &n); break;
    case 6: type_set_tensor(&c->out[0], ONYX_STRING, 0, NULL); break;
    default: type_set_tensor(&c->out[0], ONYX_STRING, 1, &n); break;
    }
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {{"value", ATTR_TENSOR}, {NULL, 0}};
static const attr_spec attrs_11[] = {
    {"value", ATTR_TENSOR}, {"sparse_value", ATTR_SPARSE_TENSOR}, {NULL, 0}};
static const attr_spec attrs_12[] = {{"value", ATTR_TENSOR},
                                     {"sparse_value", ATTR_SPARSE_TENSOR},
                                     {"value_float", ATTR_FLOAT},
                                     {"value_floats", ATTR_FLOATS},
                                     {"value_int", ATTR_INT},
                                     {"value_ints", ATTR_INTS},
                                     {"value_string", ATTR_STRING},
                                     {"value_strings", ATTR_STRINGS},
                                     {NULL, 0}};

#define CONSTANT_V(v, attrs)                                                                       \
    { "", "Constant", v, 0, 0, 1, 1, attrs, constant_infer, 0 }
const op_schema op_Constant[] = {CONSTANT_V(1, attrs_1),
                                 CONSTANT_V(9, attrs_1),
                                 CONSTANT_V(11, attrs_11),
                                 CONSTANT_V(12, attrs_12),
                                 CONSTANT_V(13, attrs_12),
                                 CONSTANT_V(19, attrs_12),
                                 CONSTANT_V(21, attrs_12),
                                 CONSTANT_V(23, attrs_12),
                                 CONSTANT_V(24, attrs_12),
                                 CONSTANT_V(25, attrs_12),
                                 OP_END};
