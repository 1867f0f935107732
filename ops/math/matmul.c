/* Schemas of MatMul and MatMulInteger: numpy matmul semantics (1-D operands promoted and their
 * dim dropped again, batch dims broadcast); MatMulInteger subtracts zero points and gives int32.
 * Their inference hands the product's geometry to every device's kernel (core/op_params.h). */
#include "ops/schema.h"

#include "geometry/matmul.h"

#define MM_TYPES_1 (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))
#define MM_TYPES_9 (MM_TYPES_1 | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64) | DT_BIT(ONYX_UINT32) |  \
                    DT_BIT(ONYX_UINT64))
#define MM_TYPES_13 (MM_TYPES_9 | DT_BIT(ONYX_BFLOAT16))

/* Output 0 of type `dtype` with the matmul shape of inputs 0 and 1, and the product's geometry
 * for the kernels. */
static onyx_status matmul_shape(infer_ctx *c, onyx_dtype dtype) {
    const type_info *a = c->in[0], *b = c->in[1];
    if (a->rank < 0 || b->rank < 0) {
        type_set_tensor(&c->out[0], dtype, -1, NULL);
        return ONYX_OK;
    }
    int r;
    int64_t dims[ONYX_MAX_RANK];
    geom_msg m;
    GEOM_TRY(m, geom_matmul_dims(a->rank, a->dims, b->rank, b->dims, &r, dims, &m));
    type_set_tensor(&c->out[0], dtype, r, dims);
    return infer_set_matmul(c, a->rank, a->dims, b->rank, b->dims);
}

static onyx_status matmul_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask m = v >= 13 ? MM_TYPES_13 : v >= 9 ? MM_TYPES_9 : MM_TYPES_1;
    TRY(infer_dtype_in(c, 0, m));
    TRY(infer_dtype_in(c, 1, m));
    TRY(infer_same_dtypes(c, 0, 2));
    return matmul_shape(c, c->in[0]->dtype);
}

static onyx_status matmul_integer_infer(infer_ctx *c) {
    const dtype_mask m = DT_BIT(ONYX_INT8) | DT_BIT(ONYX_UINT8);
    TRY(infer_dtype_in(c, 0, m));
    TRY(infer_dtype_in(c, 1, m));
    for (int i = 2; i < 4 && i < c->n_in; i++) {
        if (!c->in[i]) continue;
        TRY(infer_dtype_in(c, i, m));
        onyx_dtype dz = c->in[i]->dtype, dx = c->in[i - 2]->dtype;
        if (dz != dx && dz != ONYX_UNDEFINED && dx != ONYX_UNDEFINED)
            return onyx_error(ONYX_ERR_SHAPE, "input %d (zero point) has type %s, expected %s "
                              "like input %d", i, onyx_dtype_name(c->in[i]->dtype),
                              onyx_dtype_name(c->in[i - 2]->dtype), i - 2);
    }
    return matmul_shape(c, ONYX_INT32);
}

const op_schema op_MatMul[] = {
    {"", "MatMul", 1, 2, 2, 1, 1, NULL, matmul_infer, OP_GEOMETRY},
    {"", "MatMul", 9, 2, 2, 1, 1, NULL, matmul_infer, OP_GEOMETRY},
    {"", "MatMul", 13, 2, 2, 1, 1, NULL, matmul_infer, OP_GEOMETRY},
    OP_END,
};

const op_schema op_MatMulInteger[] = {
    {"", "MatMulInteger", 10, 2, 4, 1, 1, NULL, matmul_integer_infer, OP_GEOMETRY},
    OP_END,
};
