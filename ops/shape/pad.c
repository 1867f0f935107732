/* Schema of Pad: pads from an attribute (v1 paddings, v2 pads) or an input (v11), optionally
 * for some axes only (v18); negative pads crop. Modes constant, reflect, edge, wrap (v19). */
#include "ops/shape_common.h"

#include "geometry/pads.h"

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
    ops_pads p;
    TRY(ops_pads_resolve(c->node, x->rank, ops_value(c, 1),
                         c->node->version >= 18 ? ops_value(c, 3) : NULL, &p));
    int64_t dims[ONYX_MAX_RANK];
    for (int k = 0; k < x->rank; k++) {
        int64_t d = x->dims[k];
        if (d < 0) {
            dims[k] = -1;
            continue;
        }
        geom_msg m;
        if (geom_pad_dim(d, p.begin[k], p.end[k], &dims[k], &m) != ONYX_OK)
            return onyx_error(ONYX_ERR_SHAPE, "axis %d: %s", k, m.text);
    }
    type_set_tensor(&c->out[0], x->dtype, x->rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {
    {"paddings", ATTR_INTS}, {"mode", ATTR_STRING}, {"value", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_2[] = {
    {"pads", ATTR_INTS}, {"mode", ATTR_STRING}, {"value", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs_11[] = {{"mode", ATTR_STRING}, {NULL, 0}};

#define PAD_V(v, lo, hi)                                                                           \
    { "", "Pad", v, lo, hi, 1, 1, attrs_11, pad_infer, 0 }
const op_schema op_Pad[] = {{"", "Pad", 1, 1, 1, 1, 1, attrs_1, pad_infer, 0},
                            {"", "Pad", 2, 1, 1, 1, 1, attrs_2, pad_infer, 0},
                            PAD_V(11, 2, 3),
                            PAD_V(13, 2, 3),
                            PAD_V(18, 2, 4),
                            PAD_V(19, 2, 4),
                            PAD_V(21, 2, 4),
                            PAD_V(23, 2, 4),
                            PAD_V(24, 2, 4),
                            PAD_V(25, 2, 4),
                            OP_END};
