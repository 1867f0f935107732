/* Schema of ai.onnx.ml ArrayFeatureExtractor: picks the columns Y (int64 indices into the last
 * axis) of X. A 1-D X gives one row, [1, n], as onnxruntime and onnx's reference do. */
#include "ops/ml/common.h"

static onyx_status afe_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, ML_DT_NUMERIC | DT_BIT(ONYX_STRING)));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    const type_info *x = c->in[0], *y = c->in[1];
    if (x->rank == 0) return onyx_error(ONYX_ERR_SHAPE, "input 0 is a scalar, expected rank >= 1");
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        return ONYX_OK;
    }
    int64_t n;
    /* unknown while any index dim is (a declared shape's product may also overflow) */
    if (!shape_numel(y->rank, y->dims, &n)) n = -1;
    int64_t dims[ONYX_MAX_RANK];
    int rank = x->rank == 1 ? 2 : x->rank;
    if (x->rank == 1) dims[0] = 1;
    else for (int i = 0; i < x->rank - 1; i++) dims[i] = x->dims[i];
    dims[rank - 1] = n;
    type_set_tensor(&c->out[0], x->dtype, rank, dims);
    return ONYX_OK;
}

const op_schema op_ArrayFeatureExtractor[] = {
    {ML_DOMAIN, "ArrayFeatureExtractor", 1, 2, 2, 1, 1, NULL, afe_infer, 0}, OP_END};
