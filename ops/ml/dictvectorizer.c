/* Schema of ai.onnx.ml DictVectorizer: a map (string or int64 keys) → a dense 1-D tensor of the
 * map's value type, one entry per vocabulary word (0 / "" where the map lacks it). A sequence of
 * maps (which onnx's reference also takes) gives one row per map. Sized by the kernel at run time. */
#include "ops/ml/common.h"

#define DV_VALUES (DT_BIT(ONYX_INT64) | DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_STRING))

static onyx_status dictvectorizer_infer(infer_ctx *c) {
    size_t ni = attr_ints(c->node, "int64_vocabulary", NULL);
    const graph_attr *sv = node_attr(c->node, "string_vocabulary");
    size_t ns = sv ? sv->n : 0;
    if ((ni > 0) == (ns > 0))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "needs exactly one of int64_vocabulary and string_vocabulary "
                          "(got %zu and %zu entries)", ni, ns);
    int64_t words = (int64_t)(ni ? ni : ns);
    const type_info *x = c->in[0];
    type_init(&c->out[0]);
    c->out[0].kind = ONYX_VALUE_TENSOR;
    c->out[0].rank = -1;
    if (!x || x->kind == ONYX_VALUE_NONE) return ONYX_OK;
    bool seq = x->kind == ONYX_VALUE_SEQUENCE;
    const type_info *map = seq ? x->elem : x;
    if (seq && !map) return ONYX_OK;
    if (map->kind != ONYX_VALUE_MAP)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 is not a map (or a sequence of maps)");
    if (map->dtype != ONYX_UNDEFINED) {
        bool string_keys = map->dtype == ONYX_STRING;
        if (string_keys != (ns > 0) || (!string_keys && map->dtype != ONYX_INT64 && map->dtype != ONYX_INT32))
            return onyx_error(ONYX_ERR_SHAPE, "map keys of type %s do not match %s", onyx_dtype_name(map->dtype),
                              ns ? "string_vocabulary" : "int64_vocabulary");
    }
    if (map->elem && map->elem->dtype != ONYX_UNDEFINED) {
        if (!dtype_in(map->elem->dtype, DV_VALUES))
            return onyx_error(ONYX_ERR_SHAPE, "map values of type %s, expected int64, float, double or string",
                              onyx_dtype_name(map->elem->dtype));
        c->out[0].dtype = map->elem->dtype;
    }
    if (seq) {
        int64_t dims[2] = {-1, words};
        type_set_tensor(&c->out[0], c->out[0].dtype, 2, dims);
    } else {
        type_set_tensor(&c->out[0], c->out[0].dtype, 1, &words);
    }
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"int64_vocabulary", ATTR_INTS}, {"string_vocabulary", ATTR_STRINGS}, {NULL, 0}};

const op_schema op_DictVectorizer[] = {
    {ML_DOMAIN, "DictVectorizer", 1, 1, 1, 1, 1, attrs, dictvectorizer_infer, 0}, OP_END};
