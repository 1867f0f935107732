/* Schema of Unique: the distinct elements (or slices along `axis`) of the input with optional
 * first-occurrence indices, inverse indices and counts; how many is known only at run time. */
#include "ops/shape_common.h"

/* The types the kernel orders (numeric, bool, string, complex); float8 is not among them. */
#define UNIQUE_TYPES (DT_NUMERIC | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_STRING) |                       \
                      DT_BIT(ONYX_COMPLEX64) | DT_BIT(ONYX_COMPLEX128))

static onyx_status unique_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, UNIQUE_TYPES));
    const type_info *x = c->in[0];
    int64_t n = -1;
    if (!node_attr(c->node, "axis")) {
        type_set_tensor(&c->out[0], x->dtype, 1, &n);
    } else if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
    } else {
        int axis;
        TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
        type_set_tensor(&c->out[0], x->dtype, x->rank, x->dims);
        c->out[0].dims[axis] = -1;
    }
    /* inverse_indices has one entry per element (or slice) of the input */
    int64_t items = -1;
    if (x->rank >= 0 && !node_attr(c->node, "axis")) {
        if (!ops_dims_product(x->dims, 0, x->rank, &items))
            return onyx_error(ONYX_ERR_SHAPE, "element count overflows");
    } else if (x->rank >= 0) {
        int axis;
        TRY(infer_axis(c, attr_int(c->node, "axis", 0), x->rank, &axis));
        items = x->dims[axis];
    }
    for (int o = 1; o < c->n_out; o++)
        type_set_tensor(&c->out[o], ONYX_INT64, 1, o == 2 ? &items : &n);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {"sorted", ATTR_INT}, {NULL, 0}};

/* 28 only adds bfloat16 to the input types (the doc is unchanged: sorting, NaN as before),
 * which every version here already orders. */
const op_schema op_Unique[] = {{"", "Unique", 11, 1, 1, 1, 4, attrs, unique_infer, 0},
                               {"", "Unique", 28, 1, 1, 1, 4, attrs, unique_infer, 0}, OP_END};
