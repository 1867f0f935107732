/* Schema of QuantizeLinear: y = saturate(round(x / scale) + zero_point) per tensor, per axis or
 * per block, into an integer, float8, float6 or float4 type. */
#include "ops/quant/quant_common.h"

#define QL_X_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_INT32))
#define QL_Y_TYPES_10 (DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8))
#define QL_Y_TYPES_19 (QL_Y_TYPES_10 | DT_BIT(ONYX_FLOAT8E4M3FN) | DT_BIT(ONYX_FLOAT8E4M3FNUZ) |  \
                       DT_BIT(ONYX_FLOAT8E5M2) | DT_BIT(ONYX_FLOAT8E5M2FNUZ))
#define QL_Y_TYPES_21 (QL_Y_TYPES_19 | DT_BIT(ONYX_INT16) | DT_BIT(ONYX_UINT16) |                  \
                       DT_BIT(ONYX_INT4) | DT_BIT(ONYX_UINT4))
#define QL_Y_TYPES_23 (QL_Y_TYPES_21 | DT_BIT(ONYX_FLOAT4E2M1))
#define QL_Y_TYPES_25 (QL_Y_TYPES_23 | DT_BIT(ONYX_INT2) | DT_BIT(ONYX_UINT2))
#define QL_Y_TYPES_28 (QL_Y_TYPES_25 | DT_FLOAT6S)

static onyx_status ql_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask xm = QL_X_TYPES | (v >= 19 ? DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16) : 0);
    dtype_mask sm = xm | (v >= 24 ? DT_BIT(ONYX_FLOAT8E8M0) : 0);
    dtype_mask ym = v >= 28 ? QL_Y_TYPES_28 : v >= 25 ? QL_Y_TYPES_25 : v >= 23 ? QL_Y_TYPES_23
                  : v >= 21 ? QL_Y_TYPES_21 : v >= 19 ? QL_Y_TYPES_19 : QL_Y_TYPES_10;
    TRY(infer_dtype_in(c, 0, xm));
    TRY(infer_dtype_in(c, 1, sm));
    bool has_zp = c->n_in > 2 && c->in[2];
    int64_t odt = attr_int(c->node, "output_dtype", 0);
    onyx_dtype y = odt ? (onyx_dtype)odt : ONYX_UINT8;
    if (has_zp) {
        TRY(infer_dtype_in(c, 2, ym));
        if (odt && odt != (int64_t)c->in[2]->dtype)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "output_dtype is %lld but the zero point "
                              "has type %s", (long long)odt, onyx_dtype_name(c->in[2]->dtype));
        y = c->in[2]->dtype;
    }
    if (!dtype_valid((int)y) || !dtype_in(y, ym))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "output type %lld is not one QuantizeLinear-%d "
                          "produces", (long long)y, v);
    int64_t prec = attr_int(c->node, "precision", 0);
    if (prec && prec != ONYX_FLOAT && prec != ONYX_FLOAT16 && prec != ONYX_BFLOAT16 &&
        prec != ONYX_DOUBLE)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "precision is %lld, expected a float type",
                          (long long)prec);
    TRY(quant_infer_check(c, attr_int(c->node, "axis", 1), attr_int(c->node, "block_size", 0)));
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], y, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs_10[] = {{NULL, 0}};
static const attr_spec attrs_13[] = {{"axis", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_19[] = {{"axis", ATTR_INT}, {"saturate", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_21[] = {{"axis", ATTR_INT}, {"saturate", ATTR_INT},
                                     {"block_size", ATTR_INT}, {"output_dtype", ATTR_INT},
                                     {NULL, 0}};
static const attr_spec attrs_23[] = {{"axis", ATTR_INT}, {"saturate", ATTR_INT},
                                     {"block_size", ATTR_INT}, {"output_dtype", ATTR_INT},
                                     {"precision", ATTR_INT}, {NULL, 0}};

const op_schema op_QuantizeLinear[] = {
    {"", "QuantizeLinear", 10, 2, 3, 1, 1, attrs_10, ql_infer, 0},
    {"", "QuantizeLinear", 13, 2, 3, 1, 1, attrs_13, ql_infer, 0},
    {"", "QuantizeLinear", 19, 2, 3, 1, 1, attrs_19, ql_infer, 0},
    {"", "QuantizeLinear", 21, 2, 3, 1, 1, attrs_21, ql_infer, 0},
    {"", "QuantizeLinear", 23, 2, 3, 1, 1, attrs_23, ql_infer, 0},
    {"", "QuantizeLinear", 24, 2, 3, 1, 1, attrs_23, ql_infer, 0},
    {"", "QuantizeLinear", 25, 2, 3, 1, 1, attrs_23, ql_infer, 0},
    {"", "QuantizeLinear", 28, 2, 3, 1, 1, attrs_23, ql_infer, 0},
    OP_END,
};
