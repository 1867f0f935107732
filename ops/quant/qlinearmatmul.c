/* Schema of QLinearMatMul: matmul of two quantized tensors (numpy matmul shapes) requantized
 * with y's scale and zero point; float8 operands from version 21. */
#include "ops/schema.h"

#include "geometry/matmul.h"

#define QMM_INT (DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8))
#define QMM_F8 (DT_BIT(ONYX_FLOAT8E4M3FN) | DT_BIT(ONYX_FLOAT8E4M3FNUZ) |                        \
                DT_BIT(ONYX_FLOAT8E5M2) | DT_BIT(ONYX_FLOAT8E5M2FNUZ))
#define QMM_SCALES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

static onyx_status qmm_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask q = QMM_INT | (v >= 21 ? QMM_F8 : 0);
    dtype_mask s = v >= 21 ? QMM_SCALES : DT_BIT(ONYX_FLOAT);
    static const char *names[8] = {"a", "a_scale", "a_zero_point", "b", "b_scale",
                                   "b_zero_point", "y_scale", "y_zero_point"};
    /* inputs 1, 4, 6 are scales; 2, 5, 7 the zero points of inputs 0, 3 and the output */
    static const bool is_scale[8] = {false, true, false, false, true, false, true, false};
    for (int i = 0; i < 8; i++) TRY(infer_dtype_in(c, i, is_scale[i] ? s : q));
    for (int i = 2; i < 6; i += 3)
        if (c->in[i]->dtype != c->in[i - 2]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "%s has type %s, expected %s's type %s", names[i],
                              onyx_dtype_name(c->in[i]->dtype), names[i - 2],
                              onyx_dtype_name(c->in[i - 2]->dtype));
    if (c->in[4]->dtype != c->in[1]->dtype || c->in[6]->dtype != c->in[1]->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "scales have types %s, %s, %s; expected one type",
                          onyx_dtype_name(c->in[1]->dtype), onyx_dtype_name(c->in[4]->dtype),
                          onyx_dtype_name(c->in[6]->dtype));
    onyx_dtype yd = c->in[7]->dtype;
    const type_info *a = c->in[0], *b = c->in[3];
    if (a->rank < 0 || b->rank < 0) {
        type_set_tensor(&c->out[0], yd, -1, NULL);
        return ONYX_OK;
    }
    int r;
    int64_t dims[ONYX_MAX_RANK];
    geom_msg m;
    GEOM_TRY(m, geom_matmul_dims(a->rank, a->dims, b->rank, b->dims, &r, dims, &m));
    type_set_tensor(&c->out[0], yd, r, dims);
    return infer_set_matmul(c, a->rank, a->dims, b->rank, b->dims);
}

const op_schema op_QLinearMatMul[] = {
    {"", "QLinearMatMul", 10, 8, 8, 1, 1, NULL, qmm_infer, OP_GEOMETRY},
    {"", "QLinearMatMul", 21, 8, 8, 1, 1, NULL, qmm_infer, OP_GEOMETRY},
    OP_END,
};
