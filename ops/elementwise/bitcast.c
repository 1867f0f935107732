/* Schema of BitCast: the same bits read as another type of the same width (strings excluded). */
#include "ops/schema.h"

static onyx_status bitcast_infer(infer_ctx *c) {
    dtype_mask m = DT_ALL_TENSOR & ~DT_BIT(ONYX_STRING);
    TRY(infer_dtype_in(c, 0, m));
    const graph_attr *a = node_attr(c->node, "to");
    if (!a) return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'to' is required");
    if (a->i != (int)a->i || !dtype_valid((int)a->i) || !dtype_in((onyx_dtype)a->i, m))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "to is %lld, expected a non-string tensor type",
                          (long long)a->i);
    onyx_dtype from = c->in[0]->dtype, to = (onyx_dtype)a->i;
    if (onyx_dtype_bits(from) != onyx_dtype_bits(to))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "input %s has %zu bits but %s has %zu: BitCast needs equal widths",
                          onyx_dtype_name(from), onyx_dtype_bits(from), onyx_dtype_name(to),
                          onyx_dtype_bits(to));
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], to, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"to", ATTR_INT}, {NULL, 0}};

const op_schema op_BitCast[] = {{"", "BitCast", 26, 1, 1, 1, 1, attrs, bitcast_infer, 0}, OP_END};
