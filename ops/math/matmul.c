/* Schemas of MatMul and MatMulInteger: numpy matmul semantics (1-D operands promoted and their
 * dim dropped again, batch dims broadcast); MatMulInteger subtracts zero points and gives int32. */
#include "ops/schema.h"

#define MM_TYPES_1 (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))
#define MM_TYPES_9 (MM_TYPES_1 | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64) | DT_BIT(ONYX_UINT32) |  \
                    DT_BIT(ONYX_UINT64))
#define MM_TYPES_13 (MM_TYPES_9 | DT_BIT(ONYX_BFLOAT16))

/* Output 0 of type `dtype` with the matmul shape of inputs 0 and 1. */
static onyx_status matmul_shape(infer_ctx *c, onyx_dtype dtype) {
    const type_info *a = c->in[0], *b = c->in[1];
    if (a->rank < 0 || b->rank < 0) {
        type_set_tensor(&c->out[0], dtype, -1, NULL);
        return ONYX_OK;
    }
    if (a->rank == 0 || b->rank == 0)
        return onyx_error(ONYX_ERR_SHAPE, "input %d is a scalar, expected rank >= 1",
                          a->rank == 0 ? 0 : 1);
    int64_t ka = a->dims[a->rank - 1], kb = b->dims[b->rank == 1 ? 0 : b->rank - 2];
    if (ka >= 0 && kb >= 0 && ka != kb) {
        char sa[160], sb[160];
        return onyx_error(ONYX_ERR_SHAPE, "inputs have shapes %s and %s: inner dims %lld and "
                          "%lld differ", shape_str(a->rank, a->dims, sa, sizeof sa),
                          shape_str(b->rank, b->dims, sb, sizeof sb), (long long)ka,
                          (long long)kb);
    }
    int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    int nb = ba > bb ? ba : bb;
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - ba), ib = i - (nb - bb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == 1) dims[i] = db;
        else if (db == 1) dims[i] = da;
        else if (da < 0 || db < 0) dims[i] = da < 0 ? db : da;
        else if (da == db) dims[i] = da;
        else
            return onyx_error(ONYX_ERR_SHAPE, "batch dim %d: %lld and %lld do not broadcast", i,
                              (long long)da, (long long)db);
    }
    int r = nb;
    if (a->rank > 1) dims[r++] = a->dims[a->rank - 2];
    if (b->rank > 1) dims[r++] = b->dims[b->rank - 1];
    type_set_tensor(&c->out[0], dtype, r, dims);
    return ONYX_OK;
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
    {"", "MatMul", 1, 2, 2, 1, 1, NULL, matmul_infer, 0},
    {"", "MatMul", 9, 2, 2, 1, 1, NULL, matmul_infer, 0},
    {"", "MatMul", 13, 2, 2, 1, 1, NULL, matmul_infer, 0},
    OP_END,
};

const op_schema op_MatMulInteger[] = {
    {"", "MatMulInteger", 10, 2, 4, 1, 1, NULL, matmul_integer_infer, 0},
    OP_END,
};
