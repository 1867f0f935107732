/* Schema of Pad: pads from an attribute (v1 paddings, v2 pads) or an input (v11), optionally
 * for some axes only (v18); negative pads crop. Modes constant, reflect, edge, wrap (v19). The
 * pads and mode are resolved here once per plan and handed to every device's kernel
 * (core/op_params.h); where the inputs holding them are not constant, each run resolves them from
 * its own (OP_GEOMETRY). */
#include "ops/shape_common.h"

static onyx_status pad_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    int mode;
    TRY(ops_pad_mode(c->node, &mode));
    bool known = x->rank >= 0;
    if (c->node->version >= 11) {
        TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
        if (!ops_value(c, 1)) known = false;
        onyx_dtype dv = ops_has_input(c, 2) ? c->in[2]->dtype : ONYX_UNDEFINED;
        if (dv != ONYX_UNDEFINED && x->dtype != ONYX_UNDEFINED && dv != x->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "constant_value has type %s, expected %s",
                              onyx_dtype_name(c->in[2]->dtype), onyx_dtype_name(x->dtype));
        if (c->node->version >= 18 && ops_has_input(c, 3)) {
            TRY(infer_dtype_in(c, 3, OPS_DT_INDEX));
            if (!ops_value(c, 3)) known = false;
        }
    }
    if (!known) {
        type_set_tensor(&c->out[0], x->dtype, x->rank, NULL);
        return ONYX_OK;
    }
    geom_pads p;
    TRY(ops_pads_resolve(c->node, x->rank, x->dims, ops_value(c, 1),
                         c->node->version >= 18 ? ops_value(c, 3) : NULL, &p));
    type_set_tensor(&c->out[0], x->dtype, x->rank, p.out);
    ops_set_pads(c, &p);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {
    {"paddings", ATTR_INTS}, {"mode", ATTR_STRING}, {"value", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_2[] = {
    {"pads", ATTR_INTS}, {"mode", ATTR_STRING}, {"value", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_11[] = {{"mode", ATTR_STRING}, {NULL, 0}};

#define PAD_V(v, lo, hi)                                                                           \
    { "", "Pad", v, lo, hi, 1, 1, attrs_11, pad_infer, OP_GEOMETRY }
const op_schema op_Pad[] = {{"", "Pad", 1, 1, 1, 1, 1, attrs_1, pad_infer, OP_GEOMETRY},
                            {"", "Pad", 2, 1, 1, 1, 1, attrs_2, pad_infer, OP_GEOMETRY},
                            PAD_V(11, 2, 3),
                            PAD_V(13, 2, 3),
                            PAD_V(18, 2, 4),
                            PAD_V(19, 2, 4),
                            PAD_V(21, 2, 4),
                            PAD_V(23, 2, 4),
                            PAD_V(24, 2, 4),
                            PAD_V(25, 2, 4),
                            OP_END};
