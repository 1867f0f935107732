/* Schema of SwiGLU (opset 28): Y = A * sigmoid(alpha * A) * B, the gate A and the value B of one
 * type and one shape. Unlike the arithmetic ops it does not broadcast: B matches A dim by dim. */
#include "ops/schema.h"

#define SWIGLU_TYPES                                                                               \
    (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16))

static onyx_status swiglu_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, SWIGLU_TYPES));
    TRY(infer_dtype_in(c, 1, SWIGLU_TYPES));
    TRY(infer_same_dtypes(c, 0, 2));
    const type_info *a = c->in[0], *b = c->in[1];
    onyx_dtype dt = a->dtype != ONYX_UNDEFINED ? a->dtype : b->dtype;
    if (a->rank < 0 && b->rank < 0) {
        type_set_tensor(&c->out[0], dt, -1, NULL);
        return ONYX_OK;
    }
    if (a->rank >= 0 && b->rank >= 0 && a->rank != b->rank) {
        char sa[160], sb[160];
        return onyx_error(ONYX_ERR_SHAPE, "inputs have shapes %s and %s, expected identical "
                          "shapes (SwiGLU does not broadcast)",
                          shape_str(a->rank, a->dims, sa, sizeof sa),
                          shape_str(b->rank, b->dims, sb, sizeof sb));
    }
    /* one known rank: the output has it; each dim is whichever input knows it */
    int rank = a->rank >= 0 ? a->rank : b->rank;
    int64_t dims[ONYX_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        int64_t da = a->rank >= 0 ? a->dims[k] : -1, db = b->rank >= 0 ? b->dims[k] : -1;
        if (da >= 0 && db >= 0 && da != db) {
            char sa[160], sb[160];
            return onyx_error(ONYX_ERR_SHAPE, "inputs have shapes %s and %s, expected identical "
                              "shapes (SwiGLU does not broadcast; dim %d: %lld vs %lld)",
                              shape_str(a->rank, a->dims, sa, sizeof sa),
                              shape_str(b->rank, b->dims, sb, sizeof sb), k, (long long)da,
                              (long long)db);
        }
        dims[k] = da >= 0 ? da : db;
    }
    type_set_tensor(&c->out[0], dt, rank, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"alpha", ATTR_FLOAT}, {NULL, 0}};

const op_schema op_SwiGLU[] = {{"", "SwiGLU", 28, 2, 2, 1, 1, attrs, swiglu_infer, 0}, OP_END};
