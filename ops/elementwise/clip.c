/* Schema of Clip: bounds are float attributes before opset 11, optional scalar inputs of the
 * input's type since. */
#include "ops/elementwise/infer_elementwise.h"

static onyx_status clip_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, c->node->version >= 12 ? DT_NUMERIC : DT_FLOATS));
    for (int i = 1; i < c->n_in; i++) {
        if (!c->in[i]) continue;
        TRY(infer_need_tensor(c, i));
        if (c->in[i]->dtype != c->in[0]->dtype && c->in[i]->dtype != ONYX_UNDEFINED &&
            c->in[0]->dtype != ONYX_UNDEFINED)
            return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has type %s, expected %s", i,
                              i == 1 ? "min" : "max", onyx_dtype_name(c->in[i]->dtype),
                              onyx_dtype_name(c->in[0]->dtype));
        const type_info *t = c->in[i];
        for (int d = 0; d < t->rank; d++)
            if (t->dims[d] > 1)
                return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has dim %d of size %lld, "
                                  "expected a scalar", i, i == 1 ? "min" : "max", d,
                                  (long long)t->dims[d]);
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs_1[] = {
    {"consumed_inputs", ATTR_INTS}, {"max", ATTR_FLOAT}, {"min", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_6[] = {{"max", ATTR_FLOAT}, {"min", ATTR_FLOAT}, {NULL, 0}};

const op_schema op_Clip[] = {{"", "Clip", 1, 1, 1, 1, 1, attrs_1, clip_infer, 0},
                             {"", "Clip", 6, 1, 1, 1, 1, attrs_6, clip_infer, 0},
                             {"", "Clip", 11, 1, 3, 1, 1, NULL, clip_infer, 0},
                             {"", "Clip", 12, 1, 3, 1, 1, NULL, clip_infer, 0},
                             {"", "Clip", 13, 1, 3, 1, 1, NULL, clip_infer, 0},
                             OP_END};
