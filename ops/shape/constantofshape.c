/* Schema of ConstantOfShape: a tensor of the shape given by an int64 input, filled with the one
 * element of the `value` attribute (default float 0). */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status cos_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_INT64)));
    const tensor *value = attr_tensor(c->node, "value");
    onyx_dtype dt = ONYX_FLOAT;
    if (value) {
        if (value->numel != 1)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "attribute value has %" PRId64 " elements, expected 1", value->numel);
        if (value->dtype == ONYX_STRING)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute value may not be a string");
        dt = value->dtype;
    }
    const tensor *shape = ops_value(c, 0);
    if (!shape) {
        const type_info *s = c->in[0];
        int r =
            s->rank == 1 && s->dims[0] >= 0 && s->dims[0] <= ONYX_MAX_RANK ? (int)s->dims[0] : -1;
        type_set_tensor(&c->out[0], dt, r, NULL);
        return ONYX_OK;
    }
    int64_t dims[ONYX_MAX_RANK];
    size_t n;
    TRY(ops_read_ints(shape, 0, dims, ONYX_MAX_RANK, &n));
    for (size_t i = 0; i < n; i++)
        if (dims[i] < 0)
            return onyx_error(ONYX_ERR_SHAPE, "shape[%zu] = %" PRId64 " is negative", i, dims[i]);
    type_set_tensor(&c->out[0], dt, (int)n, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"value", ATTR_TENSOR}, {NULL, 0}};

#define COS_V(v)                                                                                   \
    { "", "ConstantOfShape", v, 1, 1, 1, 1, attrs, cos_infer, 0 }
const op_schema op_ConstantOfShape[] = {COS_V(9),  COS_V(20), COS_V(21), COS_V(23),
                                        COS_V(24), COS_V(25), OP_END};
