/* Schema of Flatten: the dims before `axis` and from `axis` on become the two dims of a matrix
 * (negative axes from v11). */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status flatten_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    int64_t dims[2] = {-1, -1};
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, 2, dims);
        return ONYX_OK;
    }
    int64_t axis = attr_int(c->node, "axis", 1), r = x->rank;
    int64_t lo = c->node->version >= 11 ? -r : 0;
    if (axis < lo || axis > r)
        return onyx_error(ONYX_ERR_SHAPE,
                          "axis %" PRId64 " is out of range for rank %" PRId64 " (expected %" PRId64
                          "..%" PRId64 ")",
                          axis, r, lo, r);
    if (axis < 0) axis += r;
    if (!ops_dims_product(x->dims, 0, (int)axis, &dims[0]) ||
        !ops_dims_product(x->dims, (int)axis, (int)r, &dims[1]))
        return onyx_error(ONYX_ERR_SHAPE, "element count overflows");
    type_set_tensor(&c->out[0], x->dtype, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {NULL, 0}};

#define FLATTEN_V(v)                                                                               \
    { "", "Flatten", v, 1, 1, 1, 1, attrs, flatten_infer, 0 }
const op_schema op_Flatten[] = {FLATTEN_V(1),  FLATTEN_V(9),  FLATTEN_V(11),
                                FLATTEN_V(13), FLATTEN_V(21), FLATTEN_V(23),
                                FLATTEN_V(24), FLATTEN_V(25), OP_END};
