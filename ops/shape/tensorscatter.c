/* Schema of TensorScatter: a KV-cache update; the output has the past cache's type and shape,
 * and the update differs from it only along `axis` (the sequence axis). */
#include "ops/shape_common.h"

#include <inttypes.h>
#include <string.h>

static onyx_status tensor_scatter_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_same_dtypes(c, 0, 2));
    if (ops_has_input(c, 2)) TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_INT64)));
    const char *mode = attr_string(c->node, "mode", "linear");
    if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "mode '%s' is not linear or circular", mode);
    const type_info *past = c->in[0], *upd = c->in[1];
    if (past->rank >= 0 && upd->rank >= 0) {
        if (past->rank != upd->rank)
            return onyx_error(ONYX_ERR_SHAPE, "update has rank %d, expected %d like past_cache",
                              upd->rank, past->rank);
        int axis;
        TRY(infer_axis(c, attr_int(c->node, "axis", -2), past->rank, &axis));
        if (axis == 0) return onyx_error(ONYX_ERR_SHAPE, "axis may not be the batch axis 0");
        for (int k = 0; k < past->rank; k++) {
            int64_t p = past->dims[k], u = upd->dims[k];
            if (p < 0 || u < 0) continue;
            if (k == axis ? u > p : u != p)
                return onyx_error(ONYX_ERR_SHAPE,
                                  "update dim %d is %" PRId64 ", past_cache's is %" PRId64, k, u,
                                  p);
        }
    }
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"axis", ATTR_INT}, {"mode", ATTR_STRING}, {NULL, 0}};

const op_schema op_TensorScatter[] = {
    {"", "TensorScatter", 24, 2, 3, 1, 1, attrs, tensor_scatter_infer, 0}, OP_END};
