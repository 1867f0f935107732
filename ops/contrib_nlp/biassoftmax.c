/* Schema of com.microsoft.BiasSoftmax: softmax(data + bias) over the axes from `axis` on (one
 * flattened row each), the bias broadcast over data's leading axes. Its inference hands the axis
 * to the kernels (core/op_params.h). */
#include "ops/contrib_nlp/contrib_nlp.h"

static onyx_status bsm_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16)));
    TRY(infer_need_tensor(c, 1));
    TRY(cnlp_same_dtype(c, 0, 1));
    if (!node_attr(c->node, "is_inner_broadcast"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute is_inner_broadcast is required");
    const type_info *x = c->in[0], *b = c->in[1];
    if (x->rank >= 0 && b->rank >= 0) {
        int axis;
        TRY(infer_kernel_axis(c, attr_int(c->node, "axis", 1), x->rank, &axis));
        char s1[160], s2[160];
        bool ok = b->rank <= x->rank;
        for (int i = 0; ok && i < b->rank; i++) {
            int xi = x->rank - b->rank + i;
            int64_t bd = b->dims[i], xd = x->dims[xi];
            ok = cnlp_agree(bd, xd) || (xi < axis && bd == 1);
        }
        if (ok && b->rank < x->rank - axis) ok = false;
        if (!ok)
            return onyx_error(ONYX_ERR_SHAPE,
                              "bias has shape %s, expected data's %s from axis "
                              "on, broadcast (1) only before it",
                              shape_str(b->rank, b->dims, s1, sizeof s1),
                              shape_str(x->rank, x->dims, s2, sizeof s2));
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {"is_inner_broadcast", ATTR_INT}, {NULL, 0}};

const op_schema op_MsBiasSoftmax[] = {
    {CNLP_MS, "BiasSoftmax", 1, 2, 2, 1, 1, attrs, bsm_infer, OP_GEOMETRY},
    OP_END,
};
