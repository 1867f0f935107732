/* Schema of Gemm: Y = alpha * A' * B' + beta * C with C broadcast to [M, N] (optional from 11). */
#include "ops/schema.h"

#define GEMM_TYPES_1 (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))
#define GEMM_TYPES_9 (GEMM_TYPES_1 | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64) |                    \
                      DT_BIT(ONYX_UINT32) | DT_BIT(ONYX_UINT64))
#define GEMM_TYPES_13 (GEMM_TYPES_9 | DT_BIT(ONYX_BFLOAT16))

static onyx_status gemm_infer(infer_ctx *c) {
    int v = c->node->version;
    dtype_mask m = v >= 13 ? GEMM_TYPES_13 : v >= 9 ? GEMM_TYPES_9 : GEMM_TYPES_1;
    TRY(infer_dtype_in(c, 0, m));
    TRY(infer_dtype_in(c, 1, m));
    bool has_c = c->n_in > 2 && c->in[2];
    if (has_c) TRY(infer_dtype_in(c, 2, m));
    TRY(infer_same_dtypes(c, 0, has_c ? 3 : 2));
    const type_info *a = c->in[0], *b = c->in[1];
    bool ta = attr_int(c->node, "transA", 0) != 0, tb = attr_int(c->node, "transB", 0) != 0;
    for (int i = 0; i < 2; i++) {
        int r = c->in[i]->rank;
        if (r >= 0 && r != 2)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected 2", i, r);
    }
    int64_t M = -1, N = -1;
    if (a->rank == 2) {
        M = a->dims[ta ? 1 : 0];
        int64_t ka = a->dims[ta ? 0 : 1];
        if (b->rank == 2) {
            int64_t kb = b->dims[tb ? 1 : 0];
            if (ka >= 0 && kb >= 0 && ka != kb)
                return onyx_error(ONYX_ERR_SHAPE, "inner dims differ: A' has %lld columns, B' "
                                  "has %lld rows", (long long)ka, (long long)kb);
        }
    }
    if (b->rank == 2) N = b->dims[tb ? 0 : 1];
    if (has_c && c->in[2]->rank >= 0) {
        const type_info *ct = c->in[2];
        if (ct->rank > 2)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (C) has rank %d, expected <= 2", ct->rank);
        int64_t want[2] = {M, N};
        for (int i = 0; i < ct->rank; i++) {
            int64_t d = ct->dims[i], w = want[2 - ct->rank + i];
            if (d >= 0 && w >= 0 && d != 1 && d != w)
                return onyx_error(ONYX_ERR_SHAPE, "input 2 (C) dim %d is %lld, which does not "
                                  "broadcast to %lld", i, (long long)d, (long long)w);
        }
    }
    int64_t dims[2] = {M, N};
    type_set_tensor(&c->out[0], a->dtype, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs_1[] = {{"alpha", ATTR_FLOAT}, {"beta", ATTR_FLOAT},
                                    {"transA", ATTR_INT},  {"transB", ATTR_INT},
                                    {"broadcast", ATTR_INT}, {NULL, 0}};
static const attr_spec attrs_7[] = {{"alpha", ATTR_FLOAT}, {"beta", ATTR_FLOAT},
                                    {"transA", ATTR_INT},  {"transB", ATTR_INT}, {NULL, 0}};

const op_schema op_Gemm[] = {
    {"", "Gemm", 1, 3, 3, 1, 1, attrs_1, gemm_infer, 0},
    {"", "Gemm", 6, 3, 3, 1, 1, attrs_1, gemm_infer, 0},
    {"", "Gemm", 7, 3, 3, 1, 1, attrs_7, gemm_infer, 0},
    {"", "Gemm", 9, 3, 3, 1, 1, attrs_7, gemm_infer, 0},
    {"", "Gemm", 11, 2, 3, 1, 1, attrs_7, gemm_infer, 0},
    {"", "Gemm", 13, 2, 3, 1, 1, attrs_7, gemm_infer, 0},
    OP_END,
};
