/* Schema of DequantizeLinear: y = (x - zero_point) * scale per tensor, per axis or per block,
 * from an integer, float8, float6 or float4 type. */
#include "ops/quant/quant_common.h"

#define DQ_X_TYPES_10 (DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8) | DT_BIT(ONYX_INT32))
#define DQ_X_TYPES_19 (DQ_X_TYPES_10 | DT_BIT(ONYX_FLOAT8E4M3FN) | DT_BIT(ONYX_FLOAT8E4M3FNUZ) |  \
                       DT_BIT(ONYX_FLOAT8E5M2) | DT_BIT(ONYX_FLOAT8E5M2FNUZ))
#define DQ_X_TYPES_21 (DQ_X_TYPES_19 | DT_BIT(ONYX_INT16) | DT_BIT(ONYX_UINT16) |                  \
                       DT_BIT(ONYX_INT4) | DT_BIT(ONYX_UINT4))
#define DQ_X_TYPES_23 (DQ_X_TYPES_21 | DT_BIT(ONYX_FLOAT4E2M1))
#define DQ_X_TYPES_25 (DQ_X_TYPES_23 | DT_BIT(ONYX_INT2) | DT_BIT(ONYX_UINT2))
#define DQ_X_TYPES_28 (DQ_X_TYPES_25 | DT_FLOAT6S)
#define DQ_Y_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

static onyx_status dq_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask xm = v >= 28 ? DQ_X_TYPES_28 : v >= 25 ? DQ_X_TYPES_25 : v >= 23 ? DQ_X_TYPES_23
                  : v >= 21 ? DQ_X_TYPES_21 : v >= 19 ? DQ_X_TYPES_19 : DQ_X_TYPES_10;
    dtype_mask sm = v >= 19 ? DQ_Y_TYPES : DT_BIT(ONYX_FLOAT);
    if (v >= 24) sm |= DT_BIT(ONYX_FLOAT8E8M0);
    TRY(infer_dtype_in(c, 0, xm));
    TRY(infer_dtype_in(c, 1, sm));
    if (c->n_in > 2 && c->in[2]) {
        TRY(infer_need_tensor(c, 2));
        if (c->in[2]->dtype != c->in[0]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "zero point has type %s, expected x's type %s",
                              onyx_dtype_name(c->in[2]->dtype), onyx_dtype_name(c->in[0]->dtype));
    }
    int64_t odt = attr_int(c->node, "output_dtype", 0);
    onyx_dtype y = odt ? (onyx_dtype)odt : c->in[1]->dtype;
    if (!dtype_valid((int)y) || !dtype_in(y, DQ_Y_TYPES))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "output type %s is not float, float16 or "
                          "bfloat16 (set output_dtype)", dtype_valid((int)y) ?
                          onyx_dtype_name(y) : "(invalid)");
    TRY(quant_infer_check(c, attr_int(c->node, "axis", 1), attr_int(c->node, "block_size", 0)));
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], y, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs_10[] = {{NULL, 0}};
static const attr_spec attrs_13[] = {{"axis", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_21[] = {{"axis", ATTR_INT}, {"block_size", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_23[] = {{"axis", ATTR_INT}, {"block_size", ATTR_INT},
                                     {"output_dtype", ATTR_INT}, {NULL, 0}};

const op_schema op_DequantizeLinear[] = {
    {"", "DequantizeLinear", 10, 2, 3, 1, 1, attrs_10, dq_infer, 0},
    {"", "DequantizeLinear", 13, 2, 3, 1, 1, attrs_13, dq_infer, 0},
    {"", "DequantizeLinear", 19, 2, 3, 1, 1, attrs_13, dq_infer, 0},
    {"", "DequantizeLinear", 21, 2, 3, 1, 1, attrs_21, dq_infer, 0},
    {"", "DequantizeLinear", 23, 2, 3, 1, 1, attrs_23, dq_infer, 0},
    {"", "DequantizeLinear", 24, 2, 3, 1, 1, attrs_23, dq_infer, 0},
    {"", "DequantizeLinear", 25, 2, 3, 1, 1, attrs_23, dq_infer, 0},
    {"", "DequantizeLinear", 28, 2, 3, 1, 1, attrs_23, dq_infer, 0},
    OP_END,
};
