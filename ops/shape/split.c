/* Schema of Split: parts along `axis` sized by the split attribute (v1, v2, v11), the split
 * input (v1, v13+), num_outputs (v18) or equally. */
#include <stdlib.h>

#include "ops/shape_common.h"

static onyx_status split_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    bool split_input = ops_has_input(c, 1);
    if (split_input) TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    if (x->rank < 0 || (split_input && !ops_value(c, 1))) {
        for (int o = 0; o < c->n_out; o++) {
            type_set_tensor(&c->out[o], x->dtype, x->rank, x->rank >= 0 ? x->dims : NULL);
            if (x->rank >= 0) {
                int axis;
                TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
                c->out[o].dims[axis] = -1;
            }
        }
        return ONYX_OK;
    }
    int axis;
    TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
    int64_t *sizes = malloc(((size_t)c->n_out + 1) * sizeof *sizes);
    if (!sizes) return onyx_oom("split sizes");
    onyx_status st = ops_split_sizes(c->node, c->n_out, x->dims[axis], ops_value(c, 1), sizes);
    for (int o = 0; o < c->n_out && st == ONYX_OK; o++) {
        type_set_tensor(&c->out[o], x->dtype, x->rank, x->dims);
        c->out[o].dims[axis] = sizes[o];
    }
    free(sizes);
    return st;
}

static const attr_spec attrs_1[] = {{"axis", ATTR_INT}, {"split", ATTR_INTS}, {NULL, 0}};
static const attr_spec attrs_13[] = {{"axis", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_18[] = {{"axis", ATTR_INT}, {"num_outputs", ATTR_INT}, {NULL, 0}};

const op_schema op_Split[] = {{"", "Split", 1, 1, 2, 1, ONYX_VARIADIC, attrs_1, split_infer, 0},
                              {"", "Split", 2, 1, 1, 1, ONYX_VARIADIC, attrs_1, split_infer, 0},
                              {"", "Split", 11, 1, 1, 1, ONYX_VARIADIC, attrs_1, split_infer, 0},
                              {"", "Split", 13, 1, 2, 1, ONYX_VARIADIC, attrs_13, split_infer, 0},
                              {"", "Split", 18, 1, 2, 1, ONYX_VARIADIC, attrs_18, split_infer, 0},
                              OP_END};
