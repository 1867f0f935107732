/* Schema of Slice: bounds from attributes (v1) or the starts/ends/axes/steps inputs (v10+),
 * clamped per the spec; negative steps walk backwards. The bounds are resolved here once per plan
 * and handed to every device's kernel (core/op_params.h); where the inputs holding them are not
 * constant, each run resolves them from its own (OP_GEOMETRY). */
#include "ops/shape_common.h"

static onyx_status slice_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    bool known = x->rank >= 0;
    if (c->node->version >= 10) {
        for (int i = 1; i < 5; i++) {
            if (!ops_has_input(c, i)) {
                if (i < 3) return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d is missing", i);
                continue;
            }
            TRY(infer_dtype_in(c, i, OPS_DT_INDEX));
            if (!ops_value(c, i)) known = false;
        }
    }
    if (!known) {
        type_set_tensor(&c->out[0], x->dtype, x->rank, NULL);
        return ONYX_OK;
    }
    geom_slice s;
    TRY(ops_slice_resolve(c->node, x->rank, x->dims, ops_value(c, 1), ops_value(c, 2),
                          ops_value(c, 3), ops_value(c, 4), &s));
    type_set_tensor(&c->out[0], x->dtype, x->rank, s.len);
    ops_set_slice(c, &s);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {
    {"starts", ATTR_INTS}, {"ends", ATTR_INTS}, {"axes", ATTR_INTS}, {NULL, 0}};

/* v10 on: bounds from inputs 1..4 */
#define SLICE_V(v) {"", "Slice", v, 3, 5, 1, 1, NULL, slice_infer, OP_GEOMETRY}
const op_schema op_Slice[] = {{"", "Slice", 1, 1, 1, 1, 1, attrs_1, slice_infer, OP_GEOMETRY},
                              SLICE_V(10), SLICE_V(11), SLICE_V(13), OP_END};
